#!/bin/bash
# test_compare_cold.sh -- `pgload compare` on file system images measures
# the disk, not memory:
#   - every loop device it attaches (ext4 and xfs images) reads and writes
#     its image with direct I/O (sysfs loop/dio, seen while the run is on),
#     and the report says so, as read back;
#   - every cached copy is dropped before a "cold" file read (none of the
#     file is in the page cache as its read begins), and no cold read that
#     came from a cache is printed as a result: each is at most 3 times the
#     device read of the same bytes, or marked "cached" in the table and
#     null in results.json (tests/pgload/test_verdict.c checks the marking
#     itself);
#   - nothing of the run is left behind.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
need_root
command -v mkfs.xfs >/dev/null || skip "no mkfs.xfs (xfsprogs)"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
W=$(mktempdir)

"$PGLOAD" compare --gen 0.002 --backends ext4,xfs --profiles native --runs 1 \
	--stream-mb 16 --size 320M --out "$W/out" >"$W/stdout" 2>"$W/stderr" &
pid=$!
on_exit "kill $pid 2>/dev/null"
# every loop device whose image is under this test's TMPDIR, while it runs:
# "DEVICE DIO" lines
while kill -0 "$pid" 2>/dev/null; do
	for f in /sys/block/loop*/loop/backing_file; do
		case $(cat "$f" 2>/dev/null) in
		"$TMPDIR"/pgload-compare.*)
			d=${f%/loop/backing_file}
			# (a device detached meanwhile has no dio to read)
			dio=$(cat "$d/loop/dio" 2>/dev/null) && echo "${d##*/} $dio" ;;
		esac
	done
	sleep 0.2
done | sort -u >"$W/loops"
wait "$pid" || { cat "$W/stderr"; fail "compare on ext4 and xfs failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"

[ -s "$W/loops" ] || fail "no loop device of the run seen"
if grep -v ' 1$' "$W/loops"; then
	fail "a loop device without direct I/O (above: DEVICE loop/dio)"
fi
for fs in ext4 xfs; do
	sed -n '/^Block queues/,/^$/p' "$W/stdout" | grep -q "^$fs/native .* loop.direct_io=1\$" ||
		{ cat "$W/stdout"; fail "the queue table does not say $fs's loop device used direct I/O"; }
done
python3 - "$W/out/results.json" "$W/stdout" <<'PY' || fail "a cold file read from memory reported as a result"
import json, re, sys
d = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read()
assert len(d["cells"]) == 2
for c in d["cells"]:
    assert c["queue"]["direct_io"] is True, c["queue"]
    s = c["stream"]
    dev, rd, cached = s["device_read_mb_s"], s["file_read_mb_s"], s["file_read_cached_mb_s"]
    assert dev and dev > 0, s
    assert s["file_resident_pct"] == 0, s
    row = re.search(r"^%s +([0-9.]+) +([0-9.]+) +(\S+)$" % re.escape(c["label"]), table, re.M)
    assert row, c["label"]
    if cached is None:
        assert rd <= 3 * dev, s
        assert abs(float(row[3]) - rd) < 0.1, (row[0], s)
    else:
        assert rd is None and cached > 3 * dev and row[3] == "cached", (row[0], s)
        print("note: %s's file read came from a cache below this machine's (%.0f MB/s "
              "against a device read of %.0f)" % (c["label"], cached, dev))
PY
echo "ok: every loop device used direct I/O; no cold read from memory counted as the disk's"
