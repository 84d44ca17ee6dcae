#!/bin/bash
# test_sync_chunks.sh -- files.sync_chunk_kb: through the backing page
# cache, the fsync of a data file writes its dirty pages in chunks, each
# waited for, so that the disk never has the whole file queued in front of
# a WAL flush.
#
# The backing directory is an ext4 on a loop device.  A 4 MiB heap file is
# written through the mount and fsynced; the loop device's own count of
# write requests (/sys/block/DEV/stat) shows how the fsync reached it: with
# 64 KiB chunks at least 64 requests (no request can span two chunks, each
# was waited for before the next), without chunks a few large ones.  A
# chunk is never smaller than one of the backing page cache's folios, which
# follow the size of pgiofs's writes: the mount is told to write 64 KiB at
# most (fuse.max_write_kb, iosched.max_request_kb).  WAL is
# never chunked (a commit's flush must not wait for itself), and the file's
# bytes are whole after the unmount either way.
#
# A write-back error of the backing file reaches the fsync: a wait of
# sync_file_range() reports it and moves the descriptor's error cursor
# past it, so the chunks' error is the fsync's answer.  The backing ext4
# is then on a loop device whose image lives on a full tmpfs: the image's
# blocks under the first MiB of a 2 MiB file are punched out, so
# rewriting that file in place fails in the write-back of its first MiB
# only (the tmpfs has no room to allocate them again), and the fsync must
# fail, as it does on the bare ext4 (the control), with chunks and
# without.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 64
mkdir -p "$B/base/1" "$B/pg_wal"
STAT=/sys/block/${LOOP#/dev/}/stat
head -c $((4 << 20)) /dev/urandom >"$T/data"
writes() { awk '{ print $5 }' "$STAT"; }

# fsync_requests FILE CHUNK_KB: write requests the device got for FILE's fsync
fsync_requests() {
	local before
	pgiofs_mount "$B" "$M" --set files.backing_direct=no --set files.sync_chunk_kb="$2" \
		--set fuse.max_write_kb=64 --set iosched.max_request_kb=64 # folios no larger than a chunk
	dd if="$T/data" of="$M/$1" bs=1M status=none || fail "writing $1 failed"
	before=$(writes)
	/usr/bin/env python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDWR); os.fsync(fd)' "$M/$1" ||
		fail "fsync of $1 failed"
	echo $(($(writes) - before))
	pgiofs_umount "$M" || fail "cannot unmount"
	cmp "$T/data" "$B/$1" || fail "$1 differs from what was written"
}

n=$(fsync_requests base/1/16384 64)
echo "heap file, 64 KiB chunks: the fsync made $n write requests"
[ "$n" -ge 64 ] || fail "with 64 KiB chunks the fsync of 4 MiB made only $n write requests (64 or more expected)"
n=$(fsync_requests base/1/16385 0)
echo "heap file, no chunks: the fsync made $n write requests"
[ "$n" -lt 40 ] || fail "without chunks the fsync of 4 MiB made $n write requests (fewer than 40 expected)"
n=$(fsync_requests pg_wal/000000010000000000000001 64)
echo "WAL segment, 64 KiB chunks: the fsync made $n write requests"
[ "$n" -lt 40 ] || fail "a WAL segment's fsync was written in chunks ($n write requests)"

# rewrite_fsync DIR FILE: rewrite FILE (2 MiB) of DIR in place, fsync it;
# prints the fsync's errno name, or "ok"
rewrite_fsync() {
	python3 - "$1/$2" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, os.urandom(2 << 20), 0)
try:
    os.fsync(fd)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
PY
}

# failing_ext4 NAME: an ext4 at $T/NAME whose file base/1/16384 (2 MiB, written and
# synced) can be rewritten in its second MiB only: the image's blocks
# under the first are punched out and the tmpfs holding it is full
failing_ext4() {
	local d=$T/$1 blk
	mkdir -p "$d/img" "$d/fs"
	mount -t tmpfs -o size=24m tmpfs "$d/img" || fail "cannot mount a tmpfs"
	on_exit "umount -l '$d/img'"
	truncate -s 16M "$d/img/fs.img"
	mkfs.ext4 -q -F -b 4096 -O ^has_journal -E nodiscard,lazy_itable_init=0 "$d/img/fs.img" ||
		fail "mkfs.ext4 failed"
	FLOOP=$(losetup --find --show "$d/img/fs.img") || fail "losetup failed"
	on_exit "loop_detach '$FLOOP' '$d/img/fs.img'"
	mount -o errors=continue "$FLOOP" "$d/fs" || fail "cannot mount $FLOOP"
	on_exit "umount -l '$d/fs'"
	mkdir -p "$d/fs/base/1"
	head -c $((2 << 20)) /dev/urandom >"$d/fs/base/1/16384" && sync "$d/fs/base/1/16384" ||
		fail "cannot write $d/fs/base/1/16384"
	# the file's first physical block, in 4 KiB blocks (one extent)
	blk=$(filefrag -v -b4096 "$d/fs/base/1/16384" | awk '$1 == "0:" { sub(/\.\..*/, "", $4); print $4 }')
	[ -n "$blk" ] || fail "cannot find where $d/fs/base/1/16384 lies"
	fallocate -p -o $((blk * 4096)) -l $((1 << 20)) "$d/img/fs.img" || fail "cannot punch the image"
	dd if=/dev/zero of="$d/img/fill" bs=1M status=none 2>/dev/null
	[ "$(df --output=avail "$d/img" | tail -1)" -eq 0 ] || fail "the tmpfs under $d is not full"
}

label="write-back error"
failing_ext4 native
rc=$(rewrite_fsync "$T/native/fs" base/1/16384)
echo "$label: natively the fsync says $rc"
[ "$rc" = EIO ] || [ "$rc" = ENOSPC ] ||
	fail "$label: the control failed: natively the fsync says $rc, want EIO or ENOSPC"
for kb in 64 0; do
	failing_ext4 "chunks$kb"
	pgiofs_mount "$T/chunks$kb/fs" "$M" --set files.backing_direct=no --set files.sync_chunk_kb=$kb
	rc=$(rewrite_fsync "$M" base/1/16384)
	echo "$label: through pgiofs with files.sync_chunk_kb = $kb the fsync says $rc"
	[ "$rc" = EIO ] || [ "$rc" = ENOSPC ] ||
		fail "$label: files.sync_chunk_kb = $kb: the fsync through pgiofs says $rc, want EIO or ENOSPC as natively"
	pgiofs_umount "$M" || fail "cannot unmount"
done
echo "PASS"
