#!/bin/bash
# test_defer_times.sh -- files.defer_times: the mtime the kernel sends with
# the write-back cache before an fsync is applied after it, so that fsyncs
# of files whose data reached the backing store earlier share the backing
# file system's journal commits as they do without pgiofs.
#
# The backing directory is an ext4 on a loop device, whose journal counts
# its commits (/proc/fs/jbd2/DEV-8/info).  100 files are written through
# the mount and pushed to pgiofs with sync_file_range (what PostgreSQL's
# checkpoint_flush_after does), the backing file system is synced, then
# every file is fsynced through the mount: the defaults must commit the
# journal a few times at most (on the bare file system: once), and
# files.defer_times = no once per file.  The kept mtime must reach the
# backing file after the fsync (the mount's and the backing file's
# nanoseconds equal), and an explicit utimensat or a chmod through the
# mount must not be undone by it.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 64
journal_info

# fsync_round DIR: 100 files written and pushed to the file system with
# sync_file_range, the backing file system synced, then each fsynced, all
# while they stay open (as PostgreSQL's checkpointer keeps them); prints
# the journal commits of the fsyncs
fsync_round() {
	/usr/bin/env python3 - "$1" "$B" "$INFO" <<-'PY' || fail "writing and fsyncing the files in $1 failed"
		import ctypes, os, sys
		libc = ctypes.CDLL(None, use_errno=True)
		def commits():
		    with open(sys.argv[3]) as f:
		        return int(f.read().split()[0])
		fds = [os.open("%s/f%d" % (sys.argv[1], i), os.O_RDWR | os.O_CREAT, 0o600) for i in range(100)]
		for fd in fds:
		    os.pwrite(fd, b"x" * 8192, 0)
		    if libc.sync_file_range(fd, ctypes.c_long(0), ctypes.c_long(0), 2) != 0:
		        sys.exit("sync_file_range: %s" % os.strerror(ctypes.get_errno()))
		b = os.open(sys.argv[2], os.O_RDONLY)
		if libc.syncfs(b) != 0:
		    sys.exit("syncfs: %s" % os.strerror(ctypes.get_errno()))
		before = commits()
		for fd in fds:
		    os.fsync(fd)
		print(commits() - before)
		for fd in fds:
		    os.close(fd)
	PY
}

mkdir "$B/native"
n=$(fsync_round "$B/native")
echo "the bare file system: $n journal commits for 100 fsyncs"

pgiofs_mount "$B" "$M"
mkdir "$M/d"
n=$(fsync_round "$M/d")
echo "pgiofs (defaults): $n journal commits for 100 fsyncs"
[ "$n" -le 5 ] || fail "pgiofs with the defaults committed the journal $n times for 100 fsyncs (at most 5 expected)"

# the kept mtime reaches the backing file after the fsync; an explicit
# time or a chmod through the mount is not undone by it
/usr/bin/env python3 - "$M/d/t" "$B/d/t" <<-'PY' || fail "timestamps through the mount are wrong"
	import os, sys, time
	m, b = sys.argv[1], sys.argv[2]
	fd = os.open(m, os.O_RDWR | os.O_CREAT, 0o600)
	time.sleep(0.05)
	os.pwrite(fd, b"y" * 4096, 0)
	os.fsync(fd)
	mt, bt = os.stat(m).st_mtime_ns, os.stat(b).st_mtime_ns
	if mt != bt:
	    sys.exit("after fsync: mtime %d through the mount, %d on the backing file" % (mt, bt))
	os.pwrite(fd, b"z" * 4096, 0)
	os.utime(m, ns=(10**18, 10**18))
	os.fsync(fd)
	os.close(fd)
	for p in (m, b):
	    if os.stat(p).st_mtime_ns != 10**18:
	        sys.exit("utime lost: %s has mtime %d" % (p, os.stat(p).st_mtime_ns))
	fd = os.open(m, os.O_RDWR)
	os.pwrite(fd, b"w" * 4096, 0)
	os.fchmod(fd, 0o640)
	os.close(fd)
	if os.stat(b).st_mode & 0o777 != 0o640:
	    sys.exit("chmod lost: %o" % (os.stat(b).st_mode & 0o777))
	print("timestamps: the fsync's, an explicit utime and a chmod reach the backing file")
PY
mt=$(stat -c %Y.%y "$M/d/t")
pgiofs_umount "$M" || fail "cannot unmount"
[ "$(stat -c %Y.%y "$B/d/t")" = "$mt" ] || fail "after the unmount the backing file's mtime is $(stat -c %y "$B/d/t"), the mount said $mt"

pgiofs_mount "$B" "$M" --set files.defer_times=no
n=$(fsync_round "$M/d")
echo "pgiofs (defer_times = no): $n journal commits for 100 fsyncs"
[ "$n" -ge 90 ] || fail "with files.defer_times = no only $n journal commits for 100 fsyncs: the test no longer sees what it guards against"
pgiofs_umount "$M" || fail "cannot unmount"
echo "PASS"
