#!/bin/bash
# test_flush.sh -- fuse.flush: with the default (no), closing a file sends
# no FLUSH to pgiofs after the first (answered ENOSYS), and no write error
# is lost for it; with fuse.flush = yes every close is a FLUSH.  Requests
# are counted from pgiofs -d's log.
#
# Where the errors go without FLUSH, on a backing tmpfs of 4 MiB + 100 KiB:
#   (1) the write-back cache (the default): 6 MiB written without fsync,
#       then close(): the kernel writes the dirty pages at close, before it
#       would have sent the FLUSH, and the backing store's ENOSPC (or a
#       short write's EIO) is close()'s error, with fuse.flush = no and yes;
#   (2) a write pgiofs acknowledged early (no write-back cache: pgiofs is
#       the write cache of a relation file) that fails on the backing store
#       (an injected EIO):
#       close() returns, and the next fsync of the file, through a new
#       descriptor, returns the EIO, once.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"

# count LOG OPCODE -- OPCODE requests in LOG so far
count() { grep -c "opcode: $2 " "$1"; }

# ---- the requests: 20 opens and closes --------------------------------------
for mode in no yes; do
	log=$T/log.$mode
	: >"$log"
	pgiofs_mount_fg "$log" "$B" "$M" -d -s "fuse.flush=$mode"
	python3 - "$M/f" <<'PY' || fail "fuse.flush=$mode: open and close failed"
import os, sys
for i in range(20):
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    os.pwrite(fd, b"x" * 100, i * 100)
    os.close(fd)
with open(sys.argv[1], "rb") as f:
    assert f.read() == b"x" * 2000, "the file does not hold what was written"
PY
	pgiofs_umount "$M" || fail "fuse.flush=$mode: cannot unmount"
	flushes=$(count "$log" FLUSH) releases=$(count "$log" RELEASE)
	echo "fuse.flush=$mode: 20 closes: $flushes FLUSH, $releases RELEASE"
	[ "$releases" -ge 20 ] || fail "fuse.flush=$mode: only $releases RELEASE for 20 closes"
	if [ $mode = no ]; then
		[ "$flushes" -le 1 ] || fail "fuse.flush=no: $flushes FLUSH requests for 20 closes"
		grep -A1 'opcode: FLUSH ' "$log" | grep -q 'error: -38' ||
			fail "fuse.flush=no: the FLUSH was not answered ENOSYS"
	else
		[ "$flushes" -ge 20 ] || fail "fuse.flush=yes: only $flushes FLUSH for 20 closes"
	fi
	rm -f "$B/f"
done

# ---- (1) the write-back cache: close() returns the backing store's error ----
for mode in no yes; do
	mount -t tmpfs -o size=4196k tmpfs "$B" || fail "cannot mount a tmpfs"
	on_exit "umount -l '$B'"
	pgiofs_mount "$B" "$M" -s "fuse.flush=$mode"
	out=$(python3 - "$M/big" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
for k in range(6):                  # 6 MiB into a 4.1 MiB filesystem
    os.pwrite(fd, bytes([65 + k]) * (1 << 20), k << 20)
try:
    os.close(fd)
    print("close 0")
except OSError as e:
    print("close %d" % e.errno)
PY
	) || fail "fuse.flush=$mode: the writer failed: $out"
	echo "fuse.flush=$mode: 6 MiB written, no fsync: $out"
	case $out in
	"close $(python3 -c 'import errno; print(errno.ENOSPC)')" | "close $(python3 -c 'import errno; print(errno.EIO)')") ;;
	*) fail "fuse.flush=$mode: close() after writes the backing store refused said \"$out\", want ENOSPC or EIO" ;;
	esac
	pgiofs_umount "$M" || fail "fuse.flush=$mode: cannot unmount"
	umount "$B" || fail "cannot unmount the tmpfs"
done

# ---- (2) an acknowledged write that fails behind: the next fsync ------------
# (a relation file: its writes queue, and a queued write is what pgiofs's
# write cache acknowledges early)
mkdir -p "$B/base/1"
pgiofs_mount "$B" "$M" --allow-faults --set fuse.writeback_cache=no \
	--set fault.direction=write --set fault.error=eio --set fault.nth=2 --set fault.count=1
python3 - "$M/base/1/16390" <<'PY' || fail "an acknowledged write's error after close"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"1" * 8192, 0)           # write 1: fine
os.pwrite(fd, b"2" * 8192, 8192)        # write 2: acknowledged, fails behind
os.close(fd)                            # no FLUSH: close does not report it
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.fsync(fd)
    sys.exit("the fsync after close succeeded, yet an acknowledged write failed")
except OSError as e:
    assert e.errno == errno.EIO, "fsync failed with %s, want EIO" % e
os.fsync(fd)                            # reported once
os.close(fd)
print("ok: the EIO of a write acknowledged before close went to the next fsync")
PY
pgiofs_umount "$M" || fail "cannot unmount"
echo ok
