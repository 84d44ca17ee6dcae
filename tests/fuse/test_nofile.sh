#!/bin/bash
# test_nofile.sh -- pgiofs holds a descriptor for every open file, and for
# every file the kernel knows where inodes have no file handles
# (files.inode_handles), so it raises its open-files limit at start: to
# fs.nr_open where it may raise its hard limit (CAP_SYS_RESOURCE), else its
# soft limit to the hard one.  Started with a soft limit of 64 and a hard
# one of 256:
#   - able to raise the hard limit: its limit is fs.nr_open; else 256;
#   - with file handles (the default), 1000 files created through the mount
#     and all known to the kernel at once succeed either way, and the
#     daemon holds no more than a quarter of its limit for them;
#   - with files.inode_handles = no, able to raise the limit: the 1000
#     files succeed; not able: creating files with O_EXCL until one fails,
#     the failure is EMFILE, comes after more than 64 files, leaves no file
#     of that name in the backing directory (created there, then removed:
#     the caller was told it failed), and the daemon's log says that it ran
#     out of descriptors and what its limit is.
source "$(dirname "$0")/../lib.sh"
need_root

W=$(mktempdir)
nr_open=$(cat /proc/sys/fs/nr_open)
if prlimit --nofile="$nr_open:$nr_open" true 2>/dev/null; then can_raise=1; else can_raise=0; fi

# create_files NAME ARGS... -- mount a fresh backing directory NAME with
# pgiofs ARGS under a limit of 64:256, check the limit it took, and create
# up to 1000 files through it; sets created, err, left (see the Python), LOG
create_files() {
	local name=$1 i
	shift
	mkdir "$W/$name" "$W/$name.mnt"
	LOG=$W/$name.log
	PGIOFS_NOFILE=64:256 pgiofs_mount_fg "$LOG" "$W/$name" "$W/$name.mnt" "$@"
	limit=$(awk '/^Max open files/ {print $4}' "/proc/$PGIOFS_PID/limits")
	if [ "$can_raise" = 1 ]; then
		[ "$limit" = "$nr_open" ] || fail "open-files limit $limit, not fs.nr_open ($nr_open)"
	else
		[ "$limit" = 256 ] || fail "open-files limit $limit, not the hard limit 256"
	fi
	out=$(python3 - "$W/$name.mnt" "$W/$name" <<'PY'
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
    keep.append(os.open(os.path.join(mnt, name), os.O_PATH))  # known to the kernel
print(1000, "none", "-")
PY
	) || fail "the create loop failed: $out"
	read -r created err left <<<"$out"
	[ "$(ls "$W/$name" | wc -l)" = "$created" ] ||
		fail "$(ls "$W/$name" | wc -l) files in the backing directory, $created created"
}

# file handles: every file known at once, under any limit
create_files handles
[ "$created" = 1000 ] || fail "with file handles only $created files could be created ($err)"
nfd=$(find "/proc/$PGIOFS_PID/fd" -mindepth 1 | wc -l)
[ "$nfd" -le $((limit / 4 + 32)) ] ||
	fail "with file handles the daemon holds $nfd descriptors for 1000 files, limit $limit"
echo "ok: file handles, limit $limit, 1000 files created and known, $nfd descriptors held"

# a descriptor per known file
create_files held -s files.inode_handles=no
if [ "$can_raise" = 1 ]; then
	[ "$created" = 1000 ] || fail "with the limit raised only $created files could be created ($err)"
else
	[ "$err" = EMFILE ] || fail "after $created files: $err, not EMFILE"
	[ "$created" -gt 64 ] || fail "only $created files before EMFILE: the soft limit was not raised"
	[ "$left" = gone ] || fail "the create that failed left f$(printf %04d "$created") in the backing directory"
	for ((i = 0; i < 50; i++)); do
		grep -q "out of file descriptors: Too many open files (the daemon's limit is 256" "$LOG" && break
		sleep 0.1
	done
	grep -q "out of file descriptors: Too many open files (the daemon's limit is 256" "$LOG" ||
		{ cat "$LOG" >&2; fail "the log does not say the daemon ran out of descriptors"; }
fi
echo "ok: files.inode_handles = no, limit $limit, $created files created${err:+, then $err}"
