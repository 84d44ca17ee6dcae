#!/bin/bash
# test_fill.sh -- the backing filesystem fills up in the middle of a write.
#
# The backing directory is a tmpfs of 4 MiB + 100 KiB.  A writer writes
# 1 MiB chunks of a pattern into one file through the mount, each followed
# by fsync, until something fails: the fifth chunk's WRITE reaches pgiofs
# whole (the write-back cache sends it at the fsync), and the backing store
# takes its first 100 KiB and then refuses the rest with ENOSPC.  That error
# must reach the writer or its fsync -- a short count answered as success
# would make the kernel mark the pages clean and the next fsync succeed
# with the tail lost -- and after the unmount every chunk whose fsync
# succeeded must be in the backing file, byte for byte.
#
# Rounds: the default configuration (dbaware, write-back cache) and every
# profile in config/profiles/, each with a heap file (queued, io_uring,
# O_DIRECT), a WAL file (inline) and a plain file (buffered; inline, queued
# in the profiles that reproduce kernel elevators: other_inline); the
# default configuration without the write-back cache (the writer's own
# write gets the error); and WAL write-behind (files.wal_mode = direct: the
# next fsync gets it); relation and WAL files written through the backing
# page cache (files.backing_direct = no), with and without the write-back
# cache, and with the fsync written in chunks (files.sync_chunk_kb).  Through
# the backing page cache a relation file's writes run at arrival
# (iosched.data_inline = auto); the same queued (no), and at arrival over
# O_DIRECT (yes), too.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
PROFILES=$(cd "$TOP/config/profiles" && ls ./*.conf | sed 's|^\./||; s|\.conf$||')
[ -n "$PROFILES" ] || fail "no profiles in config/profiles"

. "$(dirname "${BASH_SOURCE[0]}")/fill.sh"

# round LABEL FILE [PGIOFS ARGS...] -- fill FILE (relative to the mount) on a
# fresh small tmpfs; check the error and the acknowledged chunks.
round() {
	local label=$1 file=$2 out acked err
	shift 2
	mount -t tmpfs -o size=4196k tmpfs "$B" || fail "$label: cannot mount a tmpfs"
	on_exit "umount -l '$B'"
	mkdir -p "$B/base/1" "$B/pg_wal"
	pgiofs_mount "$B" "$M" "$@"
	out=$(fill "$M/$file") || fail "$label: the writer failed: $out"
	pgiofs_umount "$M" || fail "$label: cannot unmount"
	read -r _ acked _ err <<<"$out"
	echo "$label: $file: $out"
	[ "$err" = "$(python3 -c 'import errno; print(errno.ENOSPC)')" ] || [ "$err" = -1 ] ||
		fail "$label: $file: the writer saw \"$out\", not ENOSPC (28) or a short write"
	verify "$B/$file" "$acked" || fail "$label: $file: acknowledged data is missing"
	[ "$acked" -ge 3 ] && [ "$acked" -le 4 ] ||
		fail "$label: $file: $acked chunks acknowledged, want 3 or 4 in a 4.1 MiB filesystem"
	umount "$B" || fail "$label: cannot unmount the tmpfs"
}

for f in base/1/16384 pg_wal/000000010000000000000001 plain.dat; do
	round "defaults" "$f"
	for p in $PROFILES; do
		round "profile $p" "$f" --profile "$p"
	done
done
round "no write-back cache" base/1/16384 --set fuse.writeback_cache=no
round "no write-back cache" plain.dat --set fuse.writeback_cache=no
round "WAL write-behind" pg_wal/000000010000000000000001 --set files.wal_mode=direct
round "buffered backing" base/1/16384 --set files.backing_direct=no
round "buffered backing" pg_wal/000000010000000000000001 --set files.backing_direct=no
round "buffered backing, no write-back cache" base/1/16384 --set files.backing_direct=no \
	--set fuse.writeback_cache=no
round "buffered backing, data queued" base/1/16384 --set files.backing_direct=no \
	--set iosched.data_inline=no
round "data at arrival, O_DIRECT" base/1/16384 --set iosched.data_inline=yes
round "buffered backing, fsync in chunks" base/1/16384 --set files.backing_direct=no \
	--set files.sync_chunk_kb=64
echo ok
