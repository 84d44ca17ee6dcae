#!/bin/bash
# test_seek_probe.sh -- the seek probe pgiofs runs at mount on a disk that
# does not say it rotates: files.backing_direct and files.drop_behind (auto)
# take a disk that cannot say (a virtio disk) as rotating when the median of
# 16 random 4 KiB reads is 2 ms or more, and one that says it does not
# rotate as a capped or networked volume (its data files written through
# the backing page cache) when the median is 0.5 ms or more.  Checked on
# pgdisk's models, whose service times are the model's, through
# helper_seek (the probe itself):
#   - hdd (the 2004 disk: 8.5 ms average seek, 7200 rpm): 2 ms or more,
#     and pgdisk's counters show the reads reached the disk (17 of them:
#     O_DIRECT, nothing from a page cache);
#   - ssd (100 us per request): under 0.5 ms; and pgiofs mounted over an
#     ext4 on it (the loop device saying it does not rotate) reaches the
#     data files O_DIRECT and says why;
#   - gp3 (a capped cloud volume: 1 ms median latency): 0.5 ms or more,
#     under 2 ms; and pgiofs over an ext4 on it writes them through the
#     backing page cache and says why;
#   - a device too small to seek on (128 KiB), and a file system with no
#     block device (tmpfs): an error, never a time.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root
HELPER_SEEK="$TESTBUILD/fuse/helper_seek"
[ -x "$HELPER_SEEK" ] || fail "$HELPER_SEEK is missing: run make"
SOLID_US=2000
DIRECT_US=500

D=$(mktempdir)

# probe MODEL -- US, the probe's median on a loop device over pgdisk MODEL
probe() {
	local model=$1 loop reads
	mkdir -p "$D/$model"
	disk_image "$D/$model.img" 2G
	disk_start "$D/$model.img" "$D/$model" --model "$model"
	loop=$(loop_attach "$D/$model/disk")
	loop_registered "$loop"
	LOOPDEV=$loop
	retime "$model"
}
# retime MODEL -- US, the probe's median on LOOPDEV again
retime() {
	local reads
	reads=$(stat_of "$D/$1" read_ops)
	US=$("$HELPER_SEEK" "$LOOPDEV") || fail "$1: helper_seek $LOOPDEV failed: $US"
	reads=$(($(stat_of "$D/$1" read_ops) - reads))
	echo "$1: median $US us over the reads, $reads reads reached pgdisk"
	[ "$reads" -ge 17 ] || fail "$1: only $reads of the probe's 17 reads reached the disk"
}

probe hdd
[ "$US" -ge $SOLID_US ] || fail "hdd: the probe measured $US us, a rotating disk's is at least $SOLID_US"
echo "ok: the modelled hdd is timed as rotating"

# auto_on MODEL WANT WHY [TRIES] -- pgiofs over an ext4 on LOOPDEV (said not
# to rotate): `pgiofs stat` says the data files are reached WANT, for WHY;
# mounted up to TRIES times (default 1) while it says otherwise (a busy
# machine only makes the timing at mount slower)
auto_on() {
	local model=$1 want=$2 why=$3 tries=${4:-1} line i
	echo 0 >"/sys/block/${LOOPDEV#/dev/}/queue/rotational" || fail "$model: cannot set queue/rotational"
	mkfs.ext4 -q -F "$LOOPDEV" || fail "$model: mkfs.ext4 $LOOPDEV failed"
	mkdir -p "$D/$model.fs" "$D/$model.mnt"
	fs_mount "$LOOPDEV" "$D/$model.fs"
	for ((i = 1; i <= tries; i++)); do
		pgiofs_mount "$D/$model.fs" "$D/$model.mnt"
		line=$("$BIN/pgiofs" stat "$D/$model.mnt" | grep '^backing files') ||
			fail "$model: pgiofs stat says nothing of the backing files"
		pgiofs_umount "$D/$model.mnt" || fail "$model: cannot unmount pgiofs"
		echo "$model: $line"
		[[ $line == "backing files $want ("*"$why"*")" ]] && return 0
	done
	fail "$model: pgiofs stat says \"$line\", want \"backing files $want (...$why...)\""
}

# the ssd model takes 100 us a request; the loop device and pgdisk's FUSE
# round trip add some 150 us on an idle machine, more on a busy one: timed
# up to 3 times to find it under the limit
probe ssd
for ((try = 2; try <= 3 && US >= DIRECT_US; try++)); do retime ssd; done
[ "$US" -lt $DIRECT_US ] || fail "ssd: the probe measured $US us 3 times, want under $DIRECT_US"
[ "$US" -ge 100 ] || fail "ssd: the probe measured $US us, below the model's 100 us per request"
echo "ok: the modelled ssd is timed as a local disk"
auto_on ssd O_DIRECT "is not rotational; the median of 16 random 4 KiB reads was" 3

probe gp3
[ "$US" -ge $DIRECT_US ] || fail "gp3: the probe measured $US us, a capped volume's is at least $DIRECT_US"
[ "$US" -lt $SOLID_US ] || fail "gp3: the probe measured $US us, want under $SOLID_US (not a rotating disk's)"
echo "ok: the modelled gp3 volume is timed as a capped volume"
auto_on gp3 buffered "taken as a capped or networked volume"

truncate -s 128K "$D/small.img"
SMALL=$(loop_attach "$D/small.img")
loop_registered "$SMALL"
out=$("$HELPER_SEEK" "$SMALL") && fail "a 128 KiB device was timed: $out"
[[ $out == "error "* ]] || fail "a 128 KiB device: helper_seek says \"$out\""
echo "ok: a 128 KiB device is not timed ($out)"

mkdir "$D/t"
mount -t tmpfs -o size=1m tmpfs "$D/t" || fail "cannot mount a tmpfs"
on_exit "umount -l '$D/t'"
out=$("$HELPER_SEEK" "$D/t") && fail "a tmpfs was timed: $out"
echo "ok: a tmpfs has no device to time ($out)"
echo ok
