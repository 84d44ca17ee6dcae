#!/bin/bash
# test_backing_direct.sh -- files.backing_direct: auto (the default) reaches
# relation files past the backing page cache (O_DIRECT) unless the backing
# directory's block device says it is rotational (or, a virtio disk, is
# timed as one), or it answers random reads as a capped volume does
# (test_seek_probe.sh); yes and no force it.
#
# The backing directory is an ext4 on a loop device whose queue/rotational
# the test sets.  Per round, `pgiofs stat` must say which way the files are
# reached and why (the device's name, rotational or not), and the backing
# page cache must show it: a heap file written and fsynced through the
# mount has its pages in the backing file system's cache when buffered, and
# none when O_DIRECT.  A tmpfs backing directory (no block device) is
# reached O_DIRECT under auto, as before auto existed.  Every file's bytes
# are checked after the unmount.  The disk the test's directory is on is
# described as its sysfs entry says.  iosched.data_inline = auto: the data
# files' requests run at arrival when buffered (stat says so, and dbaware
# then has no writeback throttle: nothing queued for it to hold), queued
# when O_DIRECT; data_inline = no queues them when buffered too.
source "$(dirname "$0")/../lib.sh"
need_root
command -v fincore >/dev/null || fail "fincore (util-linux) is missing"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 64
mkdir -p "$B/base/1"
DEV=${LOOP#/dev/}
head -c $((4 << 20)) /dev/urandom >"$T/data"

# round LABEL ROTATIONAL WANT(O_DIRECT|buffered) WHY INLINE(true|false) FILE [ARGS...]
round() {
	local label=$1 rot=$2 want=$3 why=$4 inline=$5 file=$6 line cached json
	shift 6
	echo "$rot" >"/sys/block/$DEV/queue/rotational" || fail "cannot set $DEV's queue/rotational"
	# files.drop_behind off: buffered, the file's pages stay in the backing
	# page cache, which is how the test tells (test_drop_behind.sh for it)
	pgiofs_mount "$B" "$M" --set files.drop_behind=no "$@"
	line=$("$BIN/pgiofs" stat "$M" | grep '^backing files') || fail "$label: pgiofs stat says nothing of the backing files"
	echo "$label: $line"
	[[ $line == "backing files $want ("*"$why"*")" ]] ||
		fail "$label: pgiofs stat says \"$line\", want \"backing files $want (...$why...)\""
	json=$("$BIN/pgiofs" stat "$M" --json) || fail "$label: pgiofs stat --json failed"
	grep -q "\"backing_direct\":$([ "$want" = O_DIRECT ] && echo true || echo false)," <<<"$json" ||
		fail "$label: pgiofs stat --json disagrees with its text"
	grep -q "\"data_inline\":$inline," <<<"$json" ||
		fail "$label: pgiofs stat --json does not say \"data_inline\":$inline"
	if [ "$inline" = true ]; then
		[[ $line == *"; data files' requests run at arrival (iosched.data_inline)" ]] ||
			fail "$label: pgiofs stat does not say the data files' requests run at arrival"
		grep -q '"throttle":{"target_ms":0\.0*,' <<<"$json" ||
			fail "$label: data at arrival, yet dbaware has a writeback throttle"
	else
		[[ $line != *"at arrival"* ]] || fail "$label: pgiofs stat says \"$line\""
		grep -q '"throttle":{"target_ms":2\.0*,' <<<"$json" ||
			fail "$label: data queued, yet dbaware has no writeback throttle"
	fi
	dd if="$T/data" of="$M/$file" bs=1M conv=fsync status=none || fail "$label: writing $file failed"
	cached=$(fincore --bytes --noheadings --output RES "$B/$file") || fail "fincore $B/$file failed"
	echo "$label: $file: $cached bytes in the backing page cache"
	if [ "$want" = O_DIRECT ]; then
		[ "$cached" -eq 0 ] || fail "$label: O_DIRECT, yet $cached bytes of $file are in the backing page cache"
	else
		[ "$cached" -ge $((4 << 20)) ] || fail "$label: buffered, yet only $cached bytes of $file are in the backing page cache"
	fi
	pgiofs_umount "$M" || fail "$label: cannot unmount"
	cmp "$T/data" "$B/$file" || fail "$label: $file differs from what was written"
}

round "auto, rotational" 1 buffered "auto: the backing device $DEV is rotational" true base/1/16384
round "auto, not rotational" 0 O_DIRECT "auto: the backing device $DEV is not rotational" false base/1/16385
round "yes, rotational" 1 O_DIRECT "files.backing_direct = yes" false base/1/16386 --set files.backing_direct=yes
round "no, not rotational" 0 buffered "files.backing_direct = no" true base/1/16387 --set files.backing_direct=no
round "auto, rotational, data queued" 1 buffered "auto: the backing device $DEV is rotational" false \
	base/1/16388 --set iosched.data_inline=no
round "yes, not rotational, data at arrival" 0 O_DIRECT "auto: the backing device $DEV is not rotational" \
	true base/1/16389 --set iosched.data_inline=yes

# no block device: O_DIRECT, and the note says why
mkdir "$T/tb"
mount -t tmpfs -o size=16m tmpfs "$T/tb" || fail "cannot mount a tmpfs"
on_exit "umount -l '$T/tb'"
pgiofs_mount "$T/tb" "$M"
line=$("$BIN/pgiofs" stat "$M" | grep '^backing files') || fail "tmpfs: pgiofs stat says nothing of the backing files"
echo "tmpfs: $line"
[[ $line == "backing files O_DIRECT ("*"no block device"*")" ]] || fail "tmpfs: pgiofs stat says \"$line\""
pgiofs_umount "$M" || fail "tmpfs: cannot unmount"

# the disk under the test's own directory, whatever it is: pgiofs says of
# it what its sysfs entry says.  A virtio disk's queue/rotational is the
# block layer's default, 1, because the virtio block protocol cannot say
# what the medium is: pgiofs says so and times 16 random reads of it
# (test_seek_probe.sh); auto takes it as rotating (backing files buffered,
# relation files' writes kept in the backing page cache) when their median
# is 2 ms or more, as not rotating when it is less or when the device could
# not be opened to time it.  A disk that says it does not rotate is timed
# the same way; either is taken as a capped or networked volume (buffered)
# when the median is 0.5 ms or more.
mkdir "$T/own"
pgiofs_mount "$T/own" "$M"
json=$("$BIN/pgiofs" stat "$M" --json) || fail "own disk: pgiofs stat --json failed"
# what pgiofs's probe found (0: a rotating disk or none, not timed)
seek_us=$(grep -o '"backing_seek_us":-\?[0-9]*' <<<"$json" | cut -d: -f2)
[ -n "$seek_us" ] || fail "own disk: pgiofs stat --json has no backing_seek_us"
sys=$(readlink -f "/sys/dev/block/$(stat -c '%Hd:%Ld' "$T")") || sys=
disk=$sys
[ -e "$sys/partition" ] && disk=$sys/..
# timed WHY LIMIT_US -- want, rels and why for a disk pgiofs timed: O_DIRECT
# under LIMIT_US or when it could not be timed, buffered at or above it
timed() {
	why=$1
	if [ "$seek_us" -lt 0 ]; then
		want=O_DIRECT rels=true why+="its read time could not be measured"
	else
		why+="the median of 16 random 4 KiB reads was"
		if [ "$seek_us" -lt "$2" ]; then want=O_DIRECT rels=true; else want=buffered rels=false; fi
	fi
}
if [ -z "$sys" ] || [ ! -r "$disk/queue/rotational" ]; then
	want=O_DIRECT why="no block device" rels=true
else
	name=$(basename "$sys") rot=$(cat "$disk/queue/rotational")
	drv=$(basename "$(readlink -f "$disk/device/driver" 2>/dev/null)")
	if [ "$rot" = 0 ]; then
		timed "the backing device $name is not rotational; " 500
	elif [ "$drv" = virtio_blk ]; then
		timed "the backing device $name is a virtio disk, which cannot say whether it is rotational; " 500
	else
		want=buffered why="the backing device $name is rotational" rels=false
	fi
fi
[ "${drv:-}" = virtio_blk ] || [ "${rot:-1}" = 0 ] || [ "$seek_us" = 0 ] ||
	fail "own disk: a rotating disk, yet pgiofs timed it (backing_seek_us $seek_us)"
line=$("$BIN/pgiofs" stat "$M" | grep '^backing files') || fail "own disk: pgiofs stat says nothing of the backing files"
echo "own disk (${sys:-none}, driver ${drv:-none}): $line"
[[ $line == "backing files $want ("*"$why"*")" ]] ||
	fail "own disk: pgiofs stat says \"$line\", want \"backing files $want (...$why...)\""
grep -q "\"drop_behind\":{\"mode\":\"auto\",\"relations\":$rels," <<<"$json" ||
	fail "own disk: pgiofs stat --json does not say \"relations\":$rels under files.drop_behind = auto"
pgiofs_umount "$M" || fail "own disk: cannot unmount"

"$BIN/pgiofs" --set files.backing_direct=sometimes "$B" "$M" 2>"$T/err" && fail "files.backing_direct=sometimes was taken"
grep -q "backing_direct" "$T/err" || fail "the refusal does not name files.backing_direct: $(cat "$T/err")"
assert_no_mount "$M"
echo ok
