#!/bin/bash
# test_commit_bound.sh -- on a modelled rotating disk, a WAL write never
# finds more bulk bytes ahead of it at the device than pgiofs's device
# queue allows (files.device_queue = auto with files.device_write_depth):
# the bound is read from pgdisk's request log, by what the modelled disk
# held when each WAL write arrived, not from wall-clock time.
#
# ext4 on a loop device over pgdisk's 2004 hdd (54 MB/s, one request at a
# time, served in arrival order), pgiofs over it.  While a WAL segment
# on the mount is written and fdatasynced 8 KiB at a time, as a committing
# backend does, 192 MiB of bulk data in the backing page cache is written
# back at once (syncfs of the backing file system: the burst the kernel's
# writeback sends for an import's heap).  Every write request that reaches
# the disk inside the segment's extents (filefrag) is a WAL write; the
# bytes of the other write requests that arrived before it and were not
# yet complete when it arrived are what it waited behind.
#   - depth 8 (the default): at most 8 write requests of max_sectors_kb
#     each (256 KiB, files.device_request_kb) can be allocated at once, so
#     at most that many bytes are ahead of any WAL write, and some WAL
#     writes met bulk (the bound was tested);
#   - files.device_write_depth = 0 (the kernel's depth): the same load puts
#     more than that into the disk at once (up to the loop device's 128
#     requests), so a WAL write arriving then would fail the check: the
#     check can fail.  (Whether one of the 150 does arrive then is the
#     kernel's timing: with all 256 tags taken a WAL write waits for a tag
#     instead, out of pgdisk's sight, and reaches the disk when the burst
#     is nearly done.)
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../disk/disklib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"
command -v filefrag >/dev/null || fail "filefrag (e2fsprogs) is not installed"

T=$(mktempdir)
SEG=000000010000000000000001

# round NAME DEPTH -- one disk, one mount, one burst; sets AHEAD (the most
# bytes ahead of a WAL write), MET (WAL writes that had bulk ahead), NWAL,
# and PEAK (the most bulk bytes the disk held when any write arrived)
round() {
	local name=$1 depth=$2 W=$T/$1 loop q wal i
	mkdir -p "$W/dm" "$W/b" "$W/m"
	disk_image "$W/img" 1G
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$W/img" >"$W/mkfs.log" 2>&1 ||
		fail "$name: mkfs.ext4 failed: $(cat "$W/mkfs.log")"
	disk_start "$W/img" "$W/dm" --model hdd --requests "$W/requests.log"
	loop=$(loop_attach "$W/dm/disk")
	loop_registered "$loop"
	q=/sys/block/${loop#/dev/}/queue
	# as pgload compare has it: a rotating disk under none (through none
	# first: a loop device used again keeps its elevator's tunables)
	echo 1 >"$q/rotational" && echo none >"$q/scheduler" || fail "$name: cannot set $loop's queue"
	fs_mount "$loop" "$W/b"
	mkdir -p "$W/b/pg_wal" "$W/b/base/1"
	head -c $((192 << 20)) /dev/zero >"$W/b/base/1/16384" || fail "$name: cannot write the bulk file"
	pgiofs_mount "$W/b" "$W/m" --set files.wal_segments_ahead=0 \
		--set files.device_write_depth="$depth"
	"$BIN/pgiofs" stat "$W/m" | grep '^device queue' | sed "s/^/$name: /"
	wal=$W/m/pg_wal/$SEG
	dd if=/dev/zero of="$wal" bs=1M count=16 conv=fdatasync status=none ||
		fail "$name: cannot make the WAL segment"
	# WAL writes before, during and after the burst
	(for ((i = 0; i < 150; i++)); do
		dd if=/dev/urandom of="$wal" bs=8k count=1 seek=$i conv=notrunc,fdatasync status=none ||
			exit 1
	done) &
	local writer=$!
	sleep 0.3
	sync -f "$W/b/base/1/16384" || fail "$name: syncfs of the backing file system failed"
	wait $writer || fail "$name: a WAL write through the mount failed"
	filefrag -v -b4096 "$W/b/pg_wal/$SEG" >"$W/extents" || fail "$name: filefrag failed"
	MAXKB=$(cat "$q/max_sectors_kb")
	pgiofs_umount "$W/m" || fail "$name: cannot unmount pgiofs"
	umount "$W/b" || fail "$name: cannot unmount the backing ext4"
	losetup -d "$loop"
	disk_stop "$W/dm" "$DISK_PID"
	"$PGDISK" log --records "$W/requests.log" >"$W/records" || fail "$name: pgdisk log failed"
	read -r AHEAD MET NWAL PEAK < <(python3 - "$W/extents" "$W/records" "$TOP/tests/disk" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[3])
from reqlog import extents, writes, inside
ext = extents(sys.argv[1])
recs = writes(sys.argv[2])
wal = lambda r: inside(r, ext)
# bulk bytes that arrived before @w and were not yet complete when it did
ahead = lambda w: sum(r[4] for r in recs if r[0] < w[0] and r[2] > w[1] and not wal(r))
worst = met = n = 0
for w in filter(wal, recs):
    n += 1
    a = ahead(w)
    met += a > 0
    worst = max(worst, a)
peak = max((ahead(r) for r in recs), default=0)
print(worst, met, n, peak)
PY
	)
	[ -n "$NWAL" ] || fail "$name: the request log could not be read"
	echo "$name: $NWAL WAL writes at the disk, $MET with bulk ahead, at most $AHEAD bytes ahead; the disk held at most $PEAK bytes of bulk"
	[ "$NWAL" -ge 150 ] || fail "$name: only $NWAL WAL writes reached the disk, want 150 or more"
}

round bounded -1
bound=$((8 * MAXKB * 1024))
[ "$MET" -ge 5 ] || fail "bounded: only $MET WAL writes met the burst: the bound was not tested"
[ "$AHEAD" -le $bound ] ||
	fail "bounded: a WAL write had $AHEAD bytes ahead of it at the disk, more than 8 requests of $MAXKB KiB ($bound)"
round kernel 0
[ "$PEAK" -gt $bound ] ||
	fail "kernel's depth: the disk held at most $PEAK bytes of bulk, not more than the bound $bound: the check cannot tell"
echo "ok"
