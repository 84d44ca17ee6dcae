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
echo "PASS"
