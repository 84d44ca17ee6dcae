#!/bin/bash
# test_loop.sh -- a block device on pgdisk works like a disk:
#   - `losetup --direct-io=on` on MOUNTPOINT/disk gives a loop device using
#     direct I/O whose queue accepts every elevator the kernel has (none
#     and mq-deadline at least; kyber and bfq where built in);
#   - mkfs.ext4 and a mount on it work; a file written, synced, unmounted
#     and mounted again reads back the same; the file system's flushes and
#     mkfs's discards reach pgdisk;
#   - what the loop device reads after a flush is what the image holds
#     (acknowledged writes are on the image);
#   - write-zeroes (blkdiscard -z) zeroes the range, on an image in a tmpfs
#     too (no FALLOC_FL_ZERO_RANGE there);
#   - the disk's size is fixed: a truncate is refused (EPERM), a write past
#     its end fails (ENOSPC) and writes nothing.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m" "$D/fs"
disk_image "$D/img" 128M
disk_start "$D/img" "$D/m"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
[ "$(blockdev --getsize64 "$LOOP")" -eq $((128 << 20)) ] || fail "$LOOP has the wrong size"

# every elevator the kernel has (bfq and kyber are configuration options);
# none and mq-deadline at least
have=$(kernel_elevators)
for e in none mq-deadline; do
	grep -qw -- "$e" <<<"$have" || fail "the kernel lists no elevator $e: $have"
done
for e in $have; do
	set_scheduler "$LOOP" "$e"
done
echo "ok: the queue of $LOOP accepts every elevator of this kernel: $have"

mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" || fail "mkfs.ext4 on $LOOP failed"
[ "$(stat_of "$D/m" discard_ops)" -gt 0 ] || fail "mkfs's discard did not reach pgdisk"
fs_mount "$LOOP" "$D/fs"
head -c $((16 << 20)) /dev/urandom >"$D/data"
cp "$D/data" "$D/fs/data" && sync -f "$D/fs/data" || fail "cannot write to the file system"
umount "$D/fs" || fail "umount"
mount "$LOOP" "$D/fs" || fail "mount again"
cmp -s "$D/data" "$D/fs/data" || fail "the file read back differs"
umount "$D/fs"
[ "$(stat_of "$D/m" flush_ops)" -gt 0 ] || fail "no flush reached pgdisk"
echo "ok: ext4 on $LOOP: written, synced, remounted, read back"

# the image holds what the loop device reads
blockdev --flushbufs "$LOOP"
cmp -s <(dd if="$LOOP" bs=1M count=128 iflag=direct status=none) "$D/img" ||
	fail "the image differs from what $LOOP reads"
echo "ok: the image holds what the device reads"

# write-zeroes
dd if=/dev/urandom of="$LOOP" bs=1M count=1 seek=100 oflag=direct conv=fsync status=none
blkdiscard -f -z -o $((100 << 20)) -l $((1 << 20)) "$LOOP" || fail "blkdiscard -z failed"
cmp -s <(dd if="$LOOP" bs=1M count=1 skip=100 iflag=direct status=none) <(head -c 1M /dev/zero) ||
	fail "write-zeroes did not zero the range"
[ "$(stat_of "$D/m" zero_ops)" -gt 0 ] || fail "no write-zeroes reached pgdisk"
echo "ok: write-zeroes"

# a fixed size
out=$(truncate -s 1M "$D/m/disk" 2>&1) && fail "truncating the disk succeeded"
echo "$out" | grep -q "Operation not permitted" || fail "truncate: $out"
out=$(dd if=/dev/zero of="$D/m/disk" bs=512 count=2 seek=$((128 * 2048 - 1)) conv=notrunc \
	status=none 2>&1) && fail "a write past the end succeeded"
echo "$out" | grep -q "No space left on device" || fail "write past the end: $out"
[ "$(stat -c %s "$D/img")" -eq $((128 << 20)) ] || fail "the image changed size"
[ "$(stat_of "$D/m" errors)" -gt 0 ] || fail "the refused write was not counted"
echo "ok: the disk's size is fixed"

# an image on a tmpfs (as pgload compare keeps it), which has no
# FALLOC_FL_ZERO_RANGE: write-zeroes still zeroes the range, without an error
mkdir "$D/t" "$D/m2"
mount -t tmpfs -o size=80m tmpfs "$D/t" || fail "cannot mount a tmpfs"
on_exit "umount -l $D/t"
disk_image "$D/t/img" 64M
disk_start "$D/t/img" "$D/m2"
LOOP2=$(loop_attach "$D/m2/disk")
loop_registered "$LOOP2"
dd if=/dev/urandom of="$LOOP2" bs=1M count=2 seek=10 oflag=direct conv=fsync status=none ||
	fail "writing to $LOOP2 failed"
blkdiscard -f -z -o $((10 << 20)) -l $((1 << 20)) "$LOOP2" || fail "blkdiscard -z on a tmpfs image failed"
cmp -s <(dd if="$LOOP2" bs=1M count=1 skip=10 iflag=direct status=none) <(head -c 1M /dev/zero) ||
	fail "write-zeroes on a tmpfs image did not zero the range"
cmp -s <(dd if="$LOOP2" bs=1M count=1 skip=11 iflag=direct status=none) <(dd if="$D/t/img" bs=1M count=1 skip=11 status=none) ||
	fail "write-zeroes on a tmpfs image touched the next MiB"
[ "$(stat_of "$D/m2" zero_ops)" -gt 0 ] || fail "no write-zeroes reached pgdisk"
[ "$(stat_of "$D/m2" errors)" -eq 0 ] || fail "pgdisk counted $(stat_of "$D/m2" errors) errors on a tmpfs image"
[ "$(du -k "$D/t/img" | cut -f1)" -ge 2048 ] || fail "the zeroed range's space was not allocated again"
echo "ok: write-zeroes on an image in a tmpfs"
echo "ok"
