#!/bin/bash
# test_drop_behind.sh -- files.drop_behind: what the kernel writes back
# through the backing page cache is written RWF_DONTCACHE, and what it
# reads ahead through it is read so, so it is not cached a second time: for
# relation files with yes, and with auto (the default) where the backing
# device does not say it is rotational; for other files past
# files.drop_behind_other_mb; for temporary files never.  Nothing about
# durability changes: the backing store filling up, or its device failing,
# part-way through such writes still reaches the writer or its fsync, and a
# read failing part-way reaches the reader.
#
# The backing directory is an ext4 on a loop device whose queue/rotational
# the test sets per round.  Each file is written and fsynced through the
# mount, or written on the backing store, dropped from its page cache and
# read through the mount; fincore then shows what the backing page cache
# kept of it, `pgiofs stat` what it does and how much it dropped, and every
# file's bytes are checked.  A tmpfs backing directory (which refuses
# RWF_DONTCACHE) gets the same bytes, written the usual way, and `pgiofs
# stat` counts the files refused.
#
# Failures part-way: (1) the ext4 fills up under a relation file written
# in 1 MiB chunks, each fsynced: ENOSPC reaches the writer or its fsync and
# every chunk whose fsync succeeded is on the backing store after the
# unmount; (2) the loop device's image lives on a tmpfs too small for it, so
# the device itself fails the writeback that RWF_DONTCACHE starts: an fsync
# through the mount must fail, not succeed with the data lost.
source "$(dirname "$0")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/fill.sh"
need_root
command -v fincore >/dev/null || fail "fincore (util-linux) is missing"
grep -q '^Linux version [0-9]' /proc/version || fail "cannot read the kernel's version"
kver=$(uname -r | awk -F'[.-]' '{ print $1 * 1000 + $2 }')
[ "$kver" -ge 6014 ] || skip "RWF_DONTCACHE needs Linux 6.14 or later (this is $(uname -r))"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 128
mkdir -p "$B/base/1/pgsql_tmp"
head -c $((16 << 20)) /dev/urandom >"$T/data"
cat "$T/data" "$T/data" >"$T/data32"

# cached FILE -- bytes of FILE in the backing page cache
cached() { fincore --bytes --noheadings --output RES "$1" || fail "fincore $1 failed"; }

# put NAME MB -- write the first MB MiB of $T/data to NAME through the mount, fsynced
put() {
	dd if="$T/data" of="$M/$1" bs=1M count="$2" conv=fsync status=none || fail "writing $1 failed"
}

# get NAME MB -- put the first MB MiB of $T/data32 in NAME on the backing
# store itself, out of its page cache, and read NAME through the mount
get() {
	dd if="$T/data32" of="$B/$1" bs=1M count="$2" conv=fsync status=none || fail "writing $B/$1 failed"
	dd if="$B/$1" iflag=nocache count=0 status=none || fail "cannot drop $B/$1 from the page cache"
	[ "$(cached "$B/$1")" -eq 0 ] || fail "$B/$1 stayed in the backing page cache"
	dd if="$M/$1" of="$T/back" bs=1M status=none || fail "$label: reading $1 through the mount failed"
	cmp -n $(($2 << 20)) "$T/data32" "$T/back" || fail "$label: $1 read through the mount differs"
}

# check NAME MB MIN MAX -- NAME's bytes on the backing store, and between MIN
# and MAX MiB of it in the backing page cache.  The floor is three quarters
# of MIN: a host may reclaim cold pages on its own (this machine runs DAMON's
# pageout of pages idle for a while), and a slow run (a sanitizer's) leaves
# time for it; what is dropped behind stays under MAX all the same.
check() {
	local c
	c=$(cached "$B/$1")
	echo "$label: $1 ($2 MiB): $((c >> 10)) KiB in the backing page cache"
	[ "$c" -ge $((($3 << 20) * 3 / 4)) ] && [ "$c" -le $(($4 << 20)) ] ||
		fail "$label: $1 has $c bytes in the backing page cache, want $3 (at least 3/4 of it) to $4 MiB"
	cmp -n $(($2 << 20)) "$T/data32" "$B/$1" || fail "$label: $1 differs from what was written"
}

# round LABEL ROTATIONAL [ARGS...] -- mount with ARGS, the loop queue saying
# ROTATIONAL, write a relation file, a temporary file, a small and a large
# other file, and read a relation file and a large other file
round() {
	label=$1
	echo "$2" >"/sys/block/${LOOP#/dev/}/queue/rotational" || fail "cannot set $LOOP's queue/rotational"
	shift 2
	pgiofs_mount "$B" "$M" "$@"
	put base/1/16384 16
	put base/1/pgsql_tmp/pgsql_tmp99.0 8
	put small 4
	put large 16
	get base/1/16391 16
	get bigread 32
}
unround() {
	pgiofs_umount "$M" || fail "$label: cannot unmount"
	rm -f "$B/base/1/16384" "$B/large" "$B/small" "$B/base/1/pgsql_tmp/pgsql_tmp99.0" \
		"$B/base/1/16391" "$B/bigread"
}
# stat_line WANT -- `pgiofs stat`'s line on it is WANT and then the sizes
# written and read in MiB
stat_line() {
	local line
	line=$("$BIN/pgiofs" stat "$M" | grep '^cached once') ||
		fail "$label: pgiofs stat says nothing of files.drop_behind"
	echo "$label: $line"
	[[ $line == "$1"[0-9]*" MiB written, "[0-9]*" MiB read" ]] ||
		fail "$label: pgiofs stat says \"$line\", want \"$1... MiB written, ... MiB read\""
}
# dropped MIN MAX [RMIN RMAX] -- pgiofs stat --json counts MIN to MAX MiB
# written and RMIN to RMAX MiB read dropped behind
dropped() {
	local bytes rbytes
	read -r bytes rbytes < <("$BIN/pgiofs" stat "$M" --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["drop_behind"]; print(d["bytes"], d["read_bytes"]) if d["refused_files"] == 0 else print(-1, -1)') ||
		fail "$label: pgiofs stat --json failed"
	[ "$bytes" -ge $(($1 << 20)) ] && [ "$bytes" -le $(($2 << 20)) ] ||
		fail "$label: pgiofs stat --json: $bytes bytes written dropped behind, want $1 to $2 MiB"
	[ $# -lt 4 ] || { [ "$rbytes" -ge $(($3 << 20)) ] && [ "$rbytes" -le $(($4 << 20)) ]; } ||
		fail "$label: pgiofs stat --json: $rbytes bytes read dropped behind, want $3 to $4 MiB"
}

# the default (auto) on a device that says it is rotational: relation files
# stay in the backing page cache, the large other file is dropped past
# 8 MiB (files.drop_behind_other_mb): the write that crosses it and every
# one after it (the kernel's write-back sends at most 1 MiB at a time); the
# same for reads (those of the first 8 MiB, kept, read some way past it
# ahead: that stays too); relation files are read without staying on any
# disk
round "auto, rotational" 1
check base/1/16384 16 16 16
check base/1/pgsql_tmp/pgsql_tmp99.0 8 8 8
check small 4 4 4
check large 16 7 8
check base/1/16391 16 0 1
check bigread 32 8 16
stat_line "cached once (files.drop_behind = auto: relation files read, not written (rotational backing device), other files past 8 MiB): "
dropped 8 9 38 41
unround

# auto where the device does not say it is rotational, data files through
# the backing page cache all the same: relation files are dropped too
round "auto, not rotational" 0 --set files.backing_direct=no
check base/1/16384 16 0 1
check base/1/pgsql_tmp/pgsql_tmp99.0 8 8 8
check small 4 4 4
check large 16 7 8
check base/1/16391 16 0 1
check bigread 32 8 16
stat_line "cached once (files.drop_behind = auto: relation files, other files past 8 MiB): "
dropped 24 25 38 41
unround

round "yes, rotational" 1 --set files.drop_behind=yes
check base/1/16384 16 0 1
check base/1/pgsql_tmp/pgsql_tmp99.0 8 8 8
check large 16 7 8
unround

round "no" 0 --set files.backing_direct=no --set files.drop_behind=no
check base/1/16384 16 16 16
check large 16 16 16
check base/1/16391 16 16 16
check bigread 32 32 32
"$BIN/pgiofs" stat "$M" | grep -q '^cached once' &&
	fail "$label: pgiofs stat reports drop-behind"
unround

round "yes, other files never" 1 --set files.drop_behind=yes --set files.drop_behind_other_mb=-1
check base/1/16384 16 0 1
check large 16 16 16
check bigread 32 32 32
stat_line "cached once (files.drop_behind = yes: relation files, no other files): "
unround

# (1) the ext4 fills up: 160 MiB of chunks into what is left of it
label="ext4 full"
pgiofs_mount "$B" "$M" --set files.drop_behind=yes
out=$(fill "$M/base/1/16387" 160) || fail "$label: the writer failed: $out"
pgiofs_umount "$M" || fail "$label: cannot unmount"
read -r _ acked _ err <<<"$out"
[ "$err" = "$(python3 -c 'import errno; print(errno.ENOSPC)')" ] && [ "$acked" -gt 0 ] ||
	fail "$label: the writer saw \"$out\", want ENOSPC (28) after some chunks"
verify "$B/base/1/16387" "$acked" || fail "$label: acknowledged data is missing"
echo "$label: $acked chunks acknowledged and intact, then ENOSPC"
rm -f "$B/base/1/16387"

# (2) the device fails under the writeback: an ext4 of 64 MiB whose image
# has 24 MiB of tmpfs to live in
label="device error"
D=$T/d
mkdir "$D" "$T/img"
mount -t tmpfs -o size=24m tmpfs "$T/img" || fail "cannot mount a tmpfs"
on_exit "umount -l '$T/img'"
truncate -s 64M "$T/img/fs.img" && mkfs.ext4 -q -F -E nodiscard -O ^has_journal "$T/img/fs.img" ||
	fail "cannot make the image"
DLOOP=$(losetup --find --show "$T/img/fs.img") || fail "losetup failed"
on_exit "loop_detach '$DLOOP' '$T/img/fs.img'"
echo 1 >"/sys/block/${DLOOP#/dev/}/queue/rotational" || fail "cannot set $DLOOP's queue/rotational"
mount -o errors=continue "$DLOOP" "$D" || fail "cannot mount $DLOOP"
on_exit "umount -l '$D'"
mkdir -p "$D/base/1"
pgiofs_mount "$D" "$M" --set files.drop_behind=yes
rc=0
dd if=/dev/urandom of="$M/base/1/16388" bs=1M count=40 conv=fsync status=none 2>"$T/dd.err" || rc=$?
echo "$label: dd exited $rc: $(cat "$T/dd.err")"
[ "$rc" -ne 0 ] || fail "$label: 40 MiB written and fsynced on a device with room for 24, and no error"
grep -qE "Input/output error|No space left on device" "$T/dd.err" ||
	fail "$label: dd failed, but not with EIO or ENOSPC: $(cat "$T/dd.err")"
pgiofs_umount "$M" || fail "$label: cannot unmount"
assert_no_mount "$M"

# (3) reads fail part-way: from the fourth READ on, every one fails with
# EIO; the reader gets EIO, every byte it got before is right, and with
# the fault gone the file reads whole
label="read error"
mkdir -p "$B/base/1"
dd if="$T/data" of="$B/base/1/16392" bs=1M count=16 conv=fsync status=none || fail "$label: cannot write"
dd if="$B/base/1/16392" iflag=nocache count=0 status=none || fail "$label: cannot drop it from the cache"
pgiofs_mount "$B" "$M" --set files.drop_behind=yes --allow-faults \
	--set fault.direction=read --set fault.error=eio --set fault.nth=4 --set fault.count=100000
rc=0
dd if="$M/base/1/16392" of="$T/back" bs=1M status=none 2>"$T/dd.err" || rc=$?
echo "$label: dd exited $rc: $(cat "$T/dd.err"), $(stat -c %s "$T/back") bytes copied"
[ "$rc" -ne 0 ] && grep -q "Input/output error" "$T/dd.err" ||
	fail "$label: reading with every READ from the fourth on failing did not fail with EIO"
cmp -n "$(stat -c %s "$T/back")" "$T/data" "$T/back" || fail "$label: bytes read before the error differ"
pgiofs_umount "$M" || fail "$label: cannot unmount"
pgiofs_mount "$B" "$M" --set files.drop_behind=yes
dd if="$M/base/1/16392" of="$T/back" bs=1M status=none || fail "$label: the file does not read after the fault"
cmp -n $((16 << 20)) "$T/data" "$T/back" || fail "$label: the file differs after the fault"
pgiofs_umount "$M" || fail "$label: cannot unmount"
rm -f "$B/base/1/16392"

# a backing file system without RWF_DONTCACHE: the same bytes, the usual way
label=tmpfs
mkdir "$T/tb"
mount -t tmpfs -o size=32m tmpfs "$T/tb" || fail "cannot mount a tmpfs"
on_exit "umount -l '$T/tb'"
mkdir -p "$T/tb/base/1"
pgiofs_mount "$T/tb" "$M" --set files.backing_direct=no --set files.drop_behind=yes
put base/1/16389 16
put base/1/16390 4
cmp "$T/data" "$T/tb/base/1/16389" || fail "$label: base/1/16389 differs from what was written"
line=$("$BIN/pgiofs" stat "$M" | grep '^cached once') ||
	fail "$label: pgiofs stat says nothing of files.drop_behind"
echo "$label: $line"
[[ $line == *"): 0.0 MiB written, 0.0 MiB read; 2 files whose backing file system refused it" ]] ||
	fail "$label: pgiofs stat says \"$line\", want 0.0 MiB and 2 files refused"
pgiofs_umount "$M" || fail "$label: cannot unmount"
cmp -n $((4 << 20)) "$T/data" "$T/tb/base/1/16390" || fail "$label: base/1/16390 differs"
assert_no_mount "$M"
echo ok
