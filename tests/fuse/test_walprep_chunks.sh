#!/bin/bash
# test_walprep_chunks.sh -- WAL segments made ahead (files.wal_segments_
# ahead) are written back in files.sync_chunk_kb chunks, at most two at the
# device at once, so that a commit's WAL write finds little of them ahead;
# the segment right after the one PostgreSQL reached, if it is not there
# yet, is written whole (PostgreSQL needs it next); and a write-back error
# part-way through makes no segment.
#
# ext4 on a loop device over pgdisk's 2004 hdd (one request at a time,
# served in arrival order), with its request log; pgiofs over it, two
# segments ahead, WAL segments of 1 MiB (PostgreSQL's smallest).  A lookup
# of segment 1 through the mount makes segments 2 and 3.  From the request
# log, by what the modelled disk held when each of a segment's write
# requests arrived (its extents from filefrag), not from wall-clock time:
#   - chunks of 64 KiB: never more than two chunks of segment 3 at the disk
#     at once, in 8 or more requests (16 chunks); segment 2, the next one,
#     more than that (whole);
#   - 0 (no chunks: the whole segment, then its fdatasync): more than two
#     chunks of segment 3 at once, so the check can fail;
#   - chunks, segment 2 already there, and the disk failing the 4th write
#     request of segment 3 (EIO): the segment is not made, no temporary
#     file is left, `pgiofs stat` counts the error and names it, and the
#     mount still works.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../disk/disklib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"
command -v filefrag >/dev/null || fail "filefrag (e2fsprogs) is not installed"

T=$(mktempdir)
SEGSIZE=$((1 << 20))
CHUNK_KB=64
W=pg/data/pg_wal
seg() { printf '%08X%08X%08X' 1 0 "$1"; }

# walprep M MEMBER -- a member of pgiofs stat --json's wal_segments_ahead
walprep() {
	"$BIN/pgiofs" stat "$1" --json |
		python3 -c "import json, sys; print(json.load(sys.stdin)['wal_segments_ahead']['$2'])"
}

# setup NAME -- a 256 MiB hdd with its request log, ext4 on its loop
# device (no reserved blocks), a cluster's pg_wal with segment 1 as
# PostgreSQL leaves one it wrote (its long page header, 1 MiB); sets D
# (the work directory) and LOOP
setup() {
	D=$T/$1
	mkdir -p "$D/dm" "$D/b" "$D/m"
	disk_image "$D/img" 256M
	mkfs.ext4 -q -F -m 0 -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$D/img" >"$D/mkfs.log" 2>&1 ||
		fail "$1: mkfs.ext4 failed: $(cat "$D/mkfs.log")"
	disk_start "$D/img" "$D/dm" --model hdd --requests "$D/requests.log"
	LOOP=$(loop_attach "$D/dm/disk")
	loop_registered "$LOOP"
	echo 1 >"/sys/block/${LOOP#/dev/}/queue/rotational" || fail "$1: cannot set $LOOP's queue"
	set_scheduler "$LOOP" none
	fs_mount "$LOOP" "$D/b"
	mkdir -p "$D/b/$W"
	echo 15 >"$D/b/pg/data/PG_VERSION"
	python3 -c '
import struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<HHIQI4xQII", 0xD110, 2, 1, 1 << 20, 0, 7716106820039943096, 1 << 20, 8192))
    f.truncate(1 << 20)' "$D/b/$W/$(seg 1)" || fail "$1: cannot write segment 1"
	sync -f "$D/b/$W/$(seg 1)"
}

# mount_ahead CHUNK_KB -- pgiofs over $D/b, two segments ahead
mount_ahead() {
	pgiofs_mount "$D/b" "$D/m" --set files.wal_segments_ahead=2 --set files.wal_segments_reserve=0 \
		--set files.sync_chunk_kb="$1" --set files.device_queue=no
}

# trigger N -- look segment 1 up through the mount and wait until N
# segments are made or a making failed; sets MADE, ERRORS
trigger() {
	local i
	stat "$D/m/$W/$(seg 1)" >/dev/null || fail "cannot stat $(seg 1) through the mount"
	for ((i = 0; i < 100; i++)); do
		MADE=$(walprep "$D/m" made) ERRORS=$(walprep "$D/m" errors)
		[ "$MADE" -ge "$1" ] || [ "$ERRORS" != 0 ] && break
		sleep 0.1
	done
}

# finish NAME -- unmount everything, stop pgdisk; prints the request log
# as records into $D/records
finish() {
	pgiofs_umount "$D/m" || fail "$1: cannot unmount pgiofs"
	umount "$D/b" || fail "$1: cannot unmount the backing ext4"
	losetup -d "$LOOP"
	disk_stop "$D/dm" "$DISK_PID"
	"$PGDISK" log --records "$D/requests.log" >"$D/records" || fail "$1: pgdisk log failed"
}

# held SEG -- the most bytes of segment SEG's write requests the disk held
# at once, and how many there were
held() {
	python3 - "$D/extents$1" "$D/records" "$TOP/tests/disk" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[3])
from reqlog import extents, writes, inside
ext = extents(sys.argv[1])
recs = [r for r in writes(sys.argv[2]) if inside(r, ext)]
held = max((sum(r[4] for r in recs if r[1] <= w[1] < r[2]) for w in recs), default=0)
print(held, len(recs))
PY
}

# round NAME CHUNK_KB -- segments 2 and 3 made with those chunks; sets
# HELD2 and HELD3 (the most bytes of each the disk held at once) and NREQ3
round() {
	local i
	setup "$1"
	mount_ahead "$2"
	trigger 2
	[ "$MADE" = 2 ] && [ "$ERRORS" = 0 ] ||
		fail "$1: pgiofs stat says made $MADE, errors $ERRORS, want 2 and 0 ($(walprep "$D/m" note))"
	for i in 2 3; do
		filefrag -v -b4096 "$D/b/$W/$(seg $i)" >"$D/extents$i" || fail "$1: filefrag failed"
	done
	finish "$1"
	read -r HELD2 _ < <(held 2)
	read -r HELD3 NREQ3 < <(held 3)
	[ -n "$NREQ3" ] || fail "$1: the request log could not be read"
	echo "$1: the disk held at most $HELD2 bytes of segment 2 at once; segment 3 reached it in $NREQ3 write requests, at most $HELD3 bytes of it at once"
}

TWO=$((2 * CHUNK_KB << 10))
round chunks "$CHUNK_KB"
[ "$NREQ3" -ge $((SEGSIZE / (CHUNK_KB << 10) / 2)) ] ||
	fail "chunks: $NREQ3 write requests of segment 3, want $((SEGSIZE / (CHUNK_KB << 10) / 2)) or more"
[ "$HELD3" -le $TWO ] ||
	fail "chunks: the disk held $HELD3 bytes of segment 3 at once, more than two chunks ($TWO)"
[ "$HELD2" -gt $TWO ] ||
	fail "chunks: the disk held at most $HELD2 bytes of segment 2, the next one, at once: it was not written whole"
round whole 0
[ "$HELD3" -gt $TWO ] ||
	fail "no chunks: the disk held at most $HELD3 bytes of segment 3 at once: the check cannot tell"

# The failing disk: once the file system is quiet (synced: its journal's
# next commit is 5 s after the next change), the disk fails the 4th write
# request it gets, which is the segment's 4th chunk.
label="a write-back error part-way"
setup fault
cp "$D/b/$W/$(seg 1)" "$D/b/$W/$(seg 2)" # there: only segment 3 is made
mount_ahead "$CHUNK_KB"
sync -f "$D/b"
echo "add op=write nth=4 count=1 error=eio" >"$D/dm/control" ||
	fail "$label: pgdisk refused the fault rule"
trigger 1
[ "$ERRORS" = 1 ] && [ "$MADE" = 0 ] ||
	fail "$label: pgiofs stat says made $MADE, errors $ERRORS, want 0 and 1 ($(grep "^rule 1" "$D/dm/control"))"
note=$(walprep "$D/m" note)
grep -q "Input/output error" <<<"$note" || fail "$label: the note does not name the I/O error: $note"
[ ! -e "$D/b/$W/$(seg 3)" ] || fail "$label: segment 3 was made from a failed write"
[ ! -e "$D/b/$W/.pgiofs-xlogtemp" ] || fail "$label: the temporary file was left in pg_wal"
faults=$(awk '/^rule 1 / { for (i = 1; i <= NF; i++) if ($i ~ /^faults=/) print substr($i, 8) }' "$D/dm/control")
[ "${faults:-0}" -ge 1 ] || fail "$label: pgdisk failed no request (rule: $(grep '^rule 1' "$D/dm/control"))"
echo "$label: $note; pgdisk failed $faults request(s)"
echo clear all >"$D/dm/control"
echo ok >"$D/m/pg/data/after" && [ "$(cat "$D/m/pg/data/after")" = ok ] ||
	fail "$label: the mount does not work after the error"
finish fault
echo "ok"
