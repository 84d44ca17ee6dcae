#!/bin/bash
# test_async_read.sh -- fuse.async_read: whether the writeback the daemon
# holds can hold up a read.
#
# The kernel sends writeback WRITEs and, with FUSE_ASYNC_READ, readahead
# READs as background requests, and once as many background requests as
# fuse.max_background are outstanding it makes every new one wait
# (fuse_get_req) until some complete.  Here every heap write is held back
# 10 s by an injected delay (fault.delay_ms) and max_background is 2: an
# fsync of a file with 2 MiB of dirty pages puts 2 WRITEs of 1 MiB in the
# daemon's hands, and 1 s later a reader reads 8 KiB of another heap file
# whose pages the kernel does not have.
#
#   async_read = yes: the read is a background request: it returns only
#   once the held writes have completed (at least 7 s after it started:
#   the writes were sent 1 s before it, and are held 10 s);
#   async_read = no: it is a request of its own: it returns while the
#   writes are still held, before the fsync returns (under 8 s, where
#   waiting for them takes 9 s at least), and reads the file's contents.
#
# Both follow from the 10 s delay, not from the machine's speed: a slower
# machine only makes the first later, and the second must be 1 s short of
# the delay to fail.
source "$(dirname "$0")/../lib.sh"
need_root
T=$(mktempdir)

# run ASYNC -- one mount; prints "READ_S FSYNC_DONE_BEFORE_READ"
run() {
	local mode=$1 b=$T/$1/backing m=$T/$1/mnt
	mkdir -p "$b/base/1" "$m"
	# the reader's file exists before the mount: the kernel has none of it
	python3 -c "import sys; open(sys.argv[1], 'wb').write(bytes(range(256)) * 4096)" "$b/base/1/16390"
	pgiofs_mount "$b" "$m" --allow-faults --set fuse.async_read="$mode" --set fuse.max_background=2 \
		--set files.backing_direct=yes --set fault.class=heap --set fault.direction=write \
		--set fault.nth=1 --set fault.count=0 --set fault.delay_ms=10000
	python3 - "$m/base/1" <<'PY' || fail "async_read=$mode: the reader or the writer failed"
import os, sys, threading, time
d = sys.argv[1]
fd = os.open(d + "/16384", os.O_RDWR | os.O_CREAT, 0o600)
for i in range(32):
    os.pwrite(fd, bytes([i]) * 65536, i * 65536)
done = []
def sync():
    os.fsync(fd)          # the 2 MiB written back, each WRITE held 10 s
    done.append(time.monotonic())
t = threading.Thread(target=sync)
t.start()
time.sleep(1)             # the WRITEs are the daemon's
r = os.open(d + "/16390", os.O_RDONLY)
t0 = time.monotonic()
data = os.pread(r, 8192, 0)
t1 = time.monotonic()
before = bool(done)       # the fsync returned before the read did
t.join()
os.close(r)
os.close(fd)
assert data == bytes(range(256)) * 32, "the read returned other bytes"
print("%.2f %d" % (t1 - t0, before))
PY
	pgiofs_umount "$m" || fail "async_read=$mode: unmount failed"
}

read -r s before <<<"$(run yes | tail -n 1)"
echo "async_read=yes: the read took $s s; the fsync had returned before it: $before"
awk -v s="$s" 'BEGIN { exit !(s >= 7) }' ||
	fail "async_read=yes: the read returned after $s s, while the writeback it waits behind was held 10 s"

read -r s before <<<"$(run no | tail -n 1)"
echo "async_read=no: the read took $s s; the fsync had returned before it: $before"
[ "$before" = 0 ] || fail "async_read=no: the read returned only after the held writeback"
awk -v s="$s" 'BEGIN { exit !(s < 8) }' ||
	fail "async_read=no: the read took $s s: it waited for the held writeback"
echo "all checks passed"
