#!/bin/bash
# test_nofile.sh -- pgiofs holds a descriptor for every file the kernel
# knows and every open file, so it raises its open-files limit at start:
# to fs.nr_open where it may raise its hard limit (CAP_SYS_RESOURCE), else
# its soft limit to the hard one.  Started with a soft limit of 64 and a
# hard one of 256:
#   - able to raise the hard limit: its limit is fs.nr_open and 1000 files
#     created through the mount (all known to the kernel at once) succeed;
#   - not able: its limit is 256; creating files with O_EXCL until one
#     fails, the failure is EMFILE, comes after more than 64 files, leaves
#     no file of that name in the backing directory (created there, then
#     removed: the caller was told it failed), and the daemon's log says
#     that it ran out of descriptors and what its limit is.
source "$(dirname "$0")/../lib.sh"
need_root

W=$(mktempdir)
mkdir "$W/backing" "$W/mnt"
log=$W/pgiofs.log
nr_open=$(cat /proc/sys/fs/nr_open)
if prlimit --nofile="$nr_open:$nr_open" true 2>/dev/null; then can_raise=1; else can_raise=0; fi

set -- ${PGIOFS_TEST_URING:+-o fuse.uring="$PGIOFS_TEST_URING"}
prlimit --nofile=64:256 "$BIN/pgiofs" -f "$@" "$W/backing" "$W/mnt" 2>>"$log" &
PGIOFS_PID=$!
on_exit "pgiofs_kill $PGIOFS_PID"
_cleanup_mounts+=("$W/mnt")
for ((i = 0; i < 100; i++)); do
	is_mounted "$W/mnt" && break
	sleep 0.1
done
is_mounted "$W/mnt" || { cat "$log" >&2; fail "pgiofs did not mount"; }

limit=$(awk '/^Max open files/ {print $4}' "/proc/$PGIOFS_PID/limits")
if [ "$can_raise" = 1 ]; then
	[ "$limit" = "$nr_open" ] || fail "open-files limit $limit, not fs.nr_open ($nr_open)"
else
	[ "$limit" = 256 ] || fail "open-files limit $limit, not the hard limit 256"
fi

out=$(python3 - "$W/mnt" "$W/backing" <<'PY'
import errno, os, sys
mnt, backing = sys.argv[1], sys.argv[2]
keep = []
for i in range(1000):
    name = "f%04d" % i
    try:
        fd = os.open(os.path.join(mnt, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except OSError as e:
        print(i, errno.errorcode.get(e.errno, e.errno),
              "left" if os.path.exists(os.path.join(backing, name)) else "gone")
        sys.exit(0)
    os.close(fd)
    keep.append(os.stat(os.path.join(mnt, name)))  # known to the kernel
print(1000, "none", "-")
PY
) || fail "the create loop failed: $out"
read -r created err left <<<"$out"
if [ "$can_raise" = 1 ]; then
	[ "$created" = 1000 ] || fail "with the limit raised only $created files could be created ($err)"
else
	[ "$err" = EMFILE ] || fail "after $created files: $err, not EMFILE"
	[ "$created" -gt 64 ] || fail "only $created files before EMFILE: the soft limit was not raised"
	[ "$left" = gone ] || fail "the create that failed left f$(printf %04d "$created") in the backing directory"
	for ((i = 0; i < 50; i++)); do
		grep -q "out of file descriptors: Too many open files (the daemon's limit is 256" "$log" && break
		sleep 0.1
	done
	grep -q "out of file descriptors: Too many open files (the daemon's limit is 256" "$log" ||
		{ cat "$log" >&2; fail "the log does not say the daemon ran out of descriptors"; }
fi
[ "$(ls "$W/backing" | wc -l)" = "$created" ] ||
	fail "$(ls "$W/backing" | wc -l) files in the backing directory, $created created"
echo "ok: limit $limit, $created files created${err:+, then $err}"
