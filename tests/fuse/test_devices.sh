#!/bin/bash
# test_devices.sh -- a backing tree that spans two filesystems: a file on
# each with the same inode number (two fresh tmpfs number their inodes
# alike).  pgiofs's scheduler identifies files by device and inode, so its
# readahead keeps them apart: after O_DIRECT reads of the first file
# (windows read ahead and cached), reads of the second at the same offsets
# return the second file's bytes, not the first's; the trace records each
# file's own device.  The files have no PostgreSQL names (class other), so
# the mount queues class other (iosched.other_inline = no) for the
# scheduler's readahead to read them.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
mount -t tmpfs -o size=64m tmpfs "$B" || fail "cannot mount a tmpfs"
on_exit "umount -l '$B'"
mkdir "$B/sub"
mount -t tmpfs -o size=64m tmpfs "$B/sub" || fail "cannot mount a second tmpfs"
on_exit "umount -l '$B/sub'"
head -c $((2 << 20)) /dev/urandom >"$B/f"
want=$(stat -c %i "$B/f")
for i in 1 2 3 4 5 6 7 8; do
	head -c $((2 << 20)) /dev/urandom >"$B/sub/g$i"
	[ "$(stat -c %i "$B/sub/g$i")" = "$want" ] && break
done
[ "$(stat -c %i "$B/sub/g$i")" = "$want" ] ||
	fail "no file on the second tmpfs got inode number $want (tmpfs numbers inodes per filesystem since Linux 5.9)"
[ "$(stat -c %d "$B/f")" != "$(stat -c %d "$B/sub/g$i")" ] || fail "the two files are on one device"
echo "$B/f and $B/sub/g$i: inode $want on devices $(stat -c %d "$B/f") and $(stat -c %d "$B/sub/g$i")"

pgiofs_mount "$B" "$M" --trace "$T/io.trace" --set iosched.other_inline=no
python3 - "$M/f" "$B/f" "$M/sub/g$i" "$B/sub/g$i" <<'PY' || fail "one file was served the other's data"
import mmap, os, sys
CH = 64 << 10
buf = mmap.mmap(-1, CH)
def read(path, off):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    n = os.preadv(fd, [buf], off)
    os.close(fd)
    return bytes(buf[:n])
a, a_back, b, b_back = sys.argv[1:5]
fa = os.open(a, os.O_RDONLY | os.O_DIRECT)  # keep the first file's stream open
for off in (0, CH, 2 * CH):                 # sequential: windows read ahead
    n = os.preadv(fa, [buf], off)
    assert bytes(buf[:n]) == open(a_back, "rb").read()[off:off + CH], "first file, %d" % off
for off in (0, CH, 2 * CH, 3 * CH, 4 * CH):
    got = read(b, off)
    want = open(b_back, "rb").read()[off:off + CH]
    if got != want:
        other = open(a_back, "rb").read()[off:off + CH]
        sys.exit("second file at %d: %s" % (off, "the first file's bytes" if got == other
                                               else "wrong bytes"))
os.close(fa)
PY
pgiofs_umount "$M" || fail "cannot unmount"
"$BIN/pgiofs" trace "$T/io.trace" --csv >"$T/csv" || fail "pgiofs trace failed"
for d in "$B" "$B/sub"; do
	dev=$(python3 -c 'import os, sys; d = os.stat(sys.argv[1]).st_dev; print("%d:%d" % (os.major(d), os.minor(d)))' "$d")
	grep -q ",read,$dev,$want," "$T/csv" || fail "the trace has no read of inode $want on device $dev"
done
echo ok
