#!/bin/bash
# test_space_guard.sh -- files.space_guard_mb: when the backing file system
# runs out of space, an unprivileged writer (as PostgreSQL is) gets ENOSPC
# from the write(2) that has no room, as natively, not from a later fsync or
# close; every byte acknowledged is on the backing file system.  On a 1 GiB
# tmpfs, with a writer (user nobody) that writes 24 MiB into a file through
# the write-back cache, waits while another program fills the file system
# to 60 MiB free, then writes until an error:
#   - guard off (0): every write(2) succeeds and the error comes at fsync:
#     the behaviour the guard exists to change;
#   - guard on (64 MiB): the guard turns on (pgiofs stat), the mount shows
#     the file with S_ISUID and the backing file has none; a write(2) fails
#     with ENOSPC, fsync and close succeed, the backing file holds exactly
#     the pages acknowledged, with their contents; a write to another file,
#     closed when the guard turned on, fails in write(2) too; below eight guards the
#     mount's dirty limit (bdi max_bytes) is held at a quarter of the free
#     space; a chmod made from the mode shown adds no S_ISUID to the backing
#     file; once the space is back the guard turns off, the mode shows no
#     S_ISUID, the dirty limit is put back and writes are cached again;
#   - the guard in effect on a small file system is an eighth of it.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"
PY=$(command -v python3)
[ "${PY#/root/}" = "$PY" ] || PY=/usr/bin/python3 # nobody cannot run a shim under /root

T=$(mktempdir)
B=$T/b M=$T/m S=$T/sig
mkdir "$B" "$M" "$S"
chmod 777 "$S"
mount -t tmpfs -o size=1g tmpfs "$B" || fail "cannot mount a tmpfs on $B"
_cleanup_mounts+=("$B")
chmod 777 "$B"

# the writer: WRITER FILE -- 24 MiB of 8 KiB pages (page i holds i, as 8
# bytes, 1024 times), "cached" into $S, then, once $S/filled exists, up to
# 120 MiB more; prints what happened: "more N err ERRNO|none fsync
# 0|ERRNO close 0|ERRNO", N the pages written after the fill
cat >"$T/writer.py" <<'EOF'
import os, struct, sys, time
path, sig = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
page = lambda i: struct.pack("<Q", i) * 1024
i = 0
for _ in range(3072):
    os.write(fd, page(i)); i += 1
open(sig + "/cached", "w").close()
while not os.path.exists(sig + "/filled"):
    time.sleep(0.02)
more, err = 0, "none"
try:
    for _ in range(15360):
        n = os.write(fd, page(i))
        if n != 8192:
            err = "short"; break
        i += 1; more += 1
except OSError as e:
    err = str(e.errno)
res = []
for what, fn in (("fsync", os.fsync), ("close", os.close)):
    try:
        fn(fd); res.append(what + " 0")
    except OSError as e:
        res.append(what + " " + str(e.errno))
print("more", more, "err", err, " ".join(res), "pages", i)
EOF
chmod 644 "$T/writer.py"

guard() { space_guard "$M" "$1"; }
free_mb() { df -B1M --output=avail "$B" | tail -n 1 | xargs; }
bdi_knob() { cat "/sys/class/bdi/$(mountpoint -d "$M")/$1"; }

# run_writer FILE -- the writer as nobody in the background, the file
# system filled to 60 MiB free once it has cached its first pages; its
# line in $OUT
run_writer() {
	rm -f "$S"/*
	as_user nobody "$PY" "$T/writer.py" "$M/$1" "$S" >"$T/writer.out" 2>&1 &
	WPID=$!
	local i
	for i in $(seq 300); do
		[ -e "$S/cached" ] && break
		kill -0 $WPID 2>/dev/null || fail "$label: the writer ended early: $(cat "$T/writer.out")"
		sleep 0.1
	done
	[ -e "$S/cached" ] || fail "$label: the writer did not write its first 24 MiB in 30 s"
	fallocate -l $(($(free_mb) - 60))M "$B/filler" || fail "$label: cannot fill $B"
}
writer_go() {
	touch "$S/filled"
	wait $WPID || fail "$label: the writer failed: $(cat "$T/writer.out")"
	OUT=$(cat "$T/writer.out")
	echo "$label: $OUT"
}

label="guard off"
pgiofs_mount "$B" "$M" -o allow_other -s files.space_guard_mb=0
[ "$(guard on)" = false ] || fail "$label: pgiofs stat says the guard is on"
run_writer f0
writer_go
[[ $OUT == "more 15360 err none fsync 28 "* ]] ||
	fail "$label: want every write(2) to succeed and fsync to fail with ENOSPC, got: $OUT"
pgiofs_umount "$M" || fail "$label: cannot unmount"
rm -f "$B/filler" "$B/f0"

label="guard on"
pgiofs_mount "$B" "$M" -o allow_other -s files.space_guard_mb=64
[ "$(guard on)" = true ] && [ "$(guard guard_bytes)" = $((64 << 20)) ] ||
	fail "$label: pgiofs stat does not show a guard of 64 MiB: $(space_guard_json "$M")"
ratio_was=$(bdi_knob max_ratio_fine)
# a file the kernel knows, closed when the guard turns on
as_user nobody dd if=/dev/zero of="$M/f3" bs=8k count=1 status=none && stat "$M/f3" >/dev/null ||
	fail "$label: cannot write $M/f3"
run_writer f1
wait_space_guard "$M" true "$label"
# the limit is set at a quarter of what was free, and set again when that
# moves by more than an eighth; the kernel keeps it as a share of a
# threshold that moves with free memory: max_bytes within 5% of it.  The
# first 24 MiB may still be on their way to the backing file system, so
# free space can still fall: cap and free from one snapshot, until the
# three agree (5 s at most)
for i in $(seq 50); do
	read -r cap free < <("$BIN/pgiofs" stat "$M" --json | python3 -c \
		'import json, sys; g = json.load(sys.stdin)["space_guard"]; print(g["dirty_cap_bytes"], g["free_bytes"])')
	max=$(bdi_knob max_bytes)
	[ "$cap" -gt 0 ] && [ "$cap" -le $((free / 4 + cap / 8 + (4 << 20))) ] &&
		[ $((max * 100 / cap)) -ge 95 ] && [ $((max * 100 / cap)) -le 105 ] && break
	sleep 0.1
done
echo "$label: $((free >> 20)) MiB free, dirty limit $((cap >> 20)) MiB (max_bytes $max)"
[ "$cap" -gt 0 ] && [ "$cap" -le $((free / 4 + cap / 8 + (4 << 20))) ] ||
	fail "$label: the dirty limit pgiofs says it set ($cap) is not a quarter of $free bytes free"
[ $((max * 100 / cap)) -ge 95 ] && [ $((max * 100 / cap)) -le 105 ] ||
	fail "$label: the bdi's max_bytes is $max, pgiofs set $cap"
writer_go
[[ $OUT == "more "*" err 28 fsync 0 close 0 pages "* ]] ||
	fail "$label: want a write(2) to fail with ENOSPC, then fsync and close to succeed, got: $OUT"
pages=${OUT##* }
err=$(as_user nobody dd if=/dev/zero of="$M/f3" bs=8k count=10 conv=notrunc oflag=append status=none 2>&1) &&
	fail "$label: a file closed when the guard turned on took 80 KiB on a full file system"
[[ $err == *"error writing"*"No space left on device"* ]] ||
	fail "$label: a write to a file closed when the guard turned on did not fail in write(2): $err"
[ "$(guard written_through)" -gt 0 ] || fail "$label: no write went through the guard"
"$PY" - "$B/f1" "$pages" <<'EOF' || fail "$label: the backing file does not hold exactly the $pages pages acknowledged"
import struct, sys
data = open(sys.argv[1], "rb").read()
n = int(sys.argv[2])
assert len(data) == n * 8192, (len(data), n * 8192)
for i in range(n):
    assert data[i * 8192:(i + 1) * 8192] == struct.pack("<Q", i) * 1024, i
EOF
[ "$(stat -c %A "$M/f1")" = "-rwS------" ] || fail "$label: the mount shows $(stat -c %A "$M/f1"), want -rwS------"
[ "$(stat -c %A "$B/f1")" = "-rw-------" ] || fail "$label: the backing file is $(stat -c %A "$B/f1"), want -rw-------"
chmod g+r "$M/f1" || fail "$label: chmod g+r failed"
[ "$(stat -c %A "$B/f1")" = "-rw-r-----" ] ||
	fail "$label: after chmod g+r through the mount the backing file is $(stat -c %A "$B/f1"), want -rw-r-----"
"$BIN/pgiofs" stat "$M" | grep -q "^space guard (files.space_guard_mb = 64, 64 MiB on this file system): ON" ||
	fail "$label: pgiofs stat's text does not say the guard is on: $("$BIN/pgiofs" stat "$M" | grep '^space guard')"

label="space back"
rm -f "$B/filler"
wait_space_guard "$M" false "$label"
[ "$(stat -c %A "$M/f1")" = "-rw-r-----" ] || fail "$label: the mount shows $(stat -c %A "$M/f1"), want -rw-r-----"
[ "$(bdi_knob max_ratio_fine)" = "$ratio_was" ] && [ "$(guard dirty_cap_bytes)" = 0 ] ||
	fail "$label: the dirty limit is not put back: max_ratio_fine $(bdi_knob max_ratio_fine), was $ratio_was"
through=$(guard written_through)
as_user nobody dd if=/dev/zero of="$M/f2" bs=8k count=1000 status=none || fail "$label: dd failed"
[ "$(guard written_through)" = "$through" ] || fail "$label: writes still go through the guard"
pgiofs_umount "$M" || fail "$label: cannot unmount"

label="small file system"
umount "$B" && mount -t tmpfs -o size=200m tmpfs "$B" || fail "cannot remount $B at 200 MiB"
pgiofs_mount "$B" "$M" -o allow_other
[ "$(guard guard_bytes)" = $((25 << 20)) ] && [ "$(guard low)" = false ] ||
	fail "$label: want a guard of 25 MiB (an eighth of 200), off: $(space_guard_json "$M")"
pgiofs_umount "$M" || fail "$label: cannot unmount"
echo "all checks passed"
