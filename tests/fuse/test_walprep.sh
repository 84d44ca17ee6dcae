#!/bin/bash
# test_walprep.sh -- files.wal_segments_ahead: WAL segments made ahead of
# PostgreSQL, so that no backend makes one while commits wait.
#
# A: no server, a 600 MiB tmpfs as the backing store, 2 segments ahead.  A
#    16 MiB segment ...01 looked up through the mount makes ...02 and ...03
#    in the backing pg_wal: 16 MiB of zeros each, no temporary file left; a
#    segment that exists is never replaced (...05 keeps its content); a name
#    looked up before it was made ahead is found afterwards (no negative
#    entry kept in pg_wal); with less free than 8 times what the segments
#    ahead hold, none is made, and `pgiofs stat` counts it; a segment PostgreSQL installs itself (renamed from
#    xlogtemp.PID) is counted; 0 makes nothing, and auto makes nothing on a
#    backing store without a disk.  (These with no reserve.)
# R: files.wal_segments_reserve 4 with 2 ahead: once no segment has been
#    met for 5 s, the segments up to 4 after the last met are made (and
#    counted as the reserve's), not before; each segment met restarts the
#    5 s, and so does a WAL segment synced through the mount (an fsync
#    every second for 8 s keeps it off); a segment met inside the reserve
#    makes nothing at once, and the reserve is made up again after it once
#    WAL is quiet.
# B: PostgreSQL on the mount (3 segments ahead): after an initdb, pgbench
#    -i and 8 segments of WAL, PostgreSQL made none of them itself, the segments
#    after its current one exist, no more were made than the 3 after each
#    segment reached (none from the checkpointer's recycling; no reserve), one not yet
#    written has the first page header of a recycled segment at its own
#    address (pg_waldump takes the segment size from the first file it
#    finds), and after kill -9 and crash recovery every
#    row committed is there.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/pgcluster.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
mount -t tmpfs -o size=600m tmpfs "$B" || fail "cannot mount a tmpfs on $B"
on_exit "umount -l '$B'"
W=pg/data/pg_wal
mkdir -p "$B/$W"
echo 15 >"$B/pg/data/PG_VERSION"
seg() { printf '%08X%08X%08X' 1 0 "$1"; }

# walprep MEMBER -- a member of pgiofs stat --json's wal_segments_ahead
walprep() {
	"$BIN/pgiofs" stat "$M" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['wal_segments_ahead']['$1'])"
}
# wait_for MEMBER VALUE -- until that member is VALUE (10 s at most)
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(walprep "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$label: wal_segments_ahead.$1 is $(walprep "$1"), want $2"
}
# mkseg N -- segment N in the backing pg_wal as PostgreSQL leaves one it
# wrote: 16 MiB, its long page header first (magic, XLP_LONG_HEADER, the
# timeline, its address, a system id, the segment and block sizes)
mkseg() {
	python3 -c '
import struct, sys
n = int(sys.argv[2])
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<HHIQI4xQII", 0xD110, 2, 1, n << 24, 0, 7716106820039943096, 16 << 20, 8192))
    f.truncate(16 << 20)' "$B/$W/$(seg "$1")" "$1" || fail "cannot write segment $1"
	chown nobody "$B/$W/$(seg "$1")" && chmod 640 "$B/$W/$(seg "$1")" || fail "cannot give $(seg "$1") to nobody"
}
# zeroed N -- segment N was made ahead: 16 MiB, the owner and mode of the
# one it follows, the header of a segment at its own address, then zeros
zeroed() {
	local f=$B/$W/$(seg "$1")
	[ "$(stat -c "%s %U %a" "$f")" = "$((16 << 20)) nobody 640" ] || fail "$label: $(seg "$1") is $(stat -c "%s bytes, owner %U, mode %a" "$f"), want 16 MiB, nobody, 640"
	[ "$(od -An -tx1 -N40 "$f" | tr -d ' \n')" = "$(python3 -c 'import struct, sys; print(struct.pack("<HHIQI4xQII", 0xD110, 2, 1, int(sys.argv[1]) << 24, 0, 7716106820039943096, 16 << 20, 8192).hex())' "$1")" ] ||
		fail "$label: $(seg "$1") does not start with its page header"
	cmp -s -i 40 -n $(((16 << 20) - 40)) "$f" /dev/zero || fail "$label: $(seg "$1") is not zeros after its header"
}
no_temp() {
	[ ! -e "$B/$W/.pgiofs-xlogtemp" ] || fail "$label: a temporary file was left in pg_wal"
}

label="A, made ahead"
mkseg 1
pgiofs_mount "$B" "$M" --set files.wal_segments_ahead=2 --set files.wal_segments_reserve=0
[ "$(walprep ahead)" = 2 ] || fail "$label: pgiofs stat says $(walprep ahead) segments ahead, want 2"
stat "$M/$W/$(seg 1)" >/dev/null || fail "$label: cannot stat $(seg 1) through the mount"
wait_for made 2
zeroed 2
zeroed 3
no_temp
[ ! -e "$B/$W/$(seg 4)" ] || fail "$label: $(seg 4) was made, more than 2 ahead"

label="A, no header"
head -c $((16 << 20)) /dev/zero >"$B/$W/$(seg 20)"
stat "$M/$W/$(seg 20)" >/dev/null || fail "$label: cannot stat $(seg 20) through the mount"
sleep 0.5
[ ! -e "$B/$W/$(seg 21)" ] || fail "$label: $(seg 21) was made after a segment of zeros"
rm "$B/$W/$(seg 20)"

label="A, existing kept, no negative entry"
echo keep >"$B/$W/$(seg 5)"
! stat "$M/$W/$(seg 4)" >/dev/null 2>&1 || fail "$label: $(seg 4) exists before it was made"
stat "$M/$W/$(seg 3)" >/dev/null || fail "$label: cannot stat $(seg 3) through the mount"
wait_for made 3
zeroed 4
[ "$(cat "$B/$W/$(seg 5)")" = keep ] || fail "$label: $(seg 5), which existed, was replaced"
[ "$(stat -c %s "$M/$W/$(seg 4)")" = $((16 << 20)) ] ||
	fail "$label: $(seg 4) is not seen through the mount after it was made (a negative entry kept?)"

label="A, low space"
# the stat of $(seg 4) above met it: $(seg 6) after $(seg 5)
wait_for made 4
zeroed 6
# 2 ahead of 16 MiB: 256 MiB must stay free after a segment is made
fallocate -l $(($(df -B1M --output=avail "$B" | tail -n 1) - 200))M "$B/filler" ||
	fail "$label: cannot fill the tmpfs"
mkseg 10
stat "$M/$W/$(seg 10)" >/dev/null || fail "$label: cannot stat $(seg 10) through the mount"
wait_for skipped 1
[ ! -e "$B/$W/$(seg 11)" ] || fail "$label: $(seg 11) was made with 184 MiB free"
no_temp
line=$("$BIN/pgiofs" stat "$M" | grep '^WAL segments made ahead') || fail "$label: pgiofs stat has no WAL segments line"
echo "$label: $line"
[[ $line == *"4 made (64 MiB), 0 made by PostgreSQL itself, 1 not made for want of space, 0 errors" ]] ||
	fail "$label: pgiofs stat says \"$line\""
rm "$B/filler" "$B/$W/$(seg 10)"

label="A, made by PostgreSQL itself"
rm -f "$B/$W/$(seg 2)" "$B/$W/$(seg 3)" "$B/$W/$(seg 4)" "$B/$W/$(seg 6)"
echo x >"$M/$W/xlogtemp.123" && mv "$M/$W/xlogtemp.123" "$M/$W/$(seg 7)" ||
	fail "$label: cannot rename a temporary file into a segment through the mount"
[ "$(walprep missed)" = 1 ] || fail "$label: $(walprep missed) segments made by PostgreSQL counted, want 1"
pgiofs_umount "$M" || fail "$label: cannot unmount"

label="R, the reserve"
rm -f "$B/$W/"0*
mkseg 1
pgiofs_mount "$B" "$M" --set files.wal_segments_ahead=2 --set files.wal_segments_reserve=4
[ "$(walprep reserve)" = 4 ] || fail "$label: pgiofs stat says a reserve of $(walprep reserve), want 4"
stat "$M/$W/$(seg 1)" >/dev/null || fail "$label: cannot stat $(seg 1) through the mount"
wait_for made 2
[ ! -e "$B/$W/$(seg 4)" ] || fail "$label: $(seg 4) was made before WAL was quiet"
[ "$(walprep reserved)" = 0 ] || fail "$label: $(walprep reserved) made for the reserve before WAL was quiet"
wait_for reserved 2
zeroed 4
zeroed 5
no_temp
[ ! -e "$B/$W/$(seg 6)" ] || fail "$label: $(seg 6) was made, more than 4 after $(seg 1)"
[ "$(walprep made)" = 4 ] || fail "$label: $(walprep made) made, want 4"

label="R, met inside the reserve"
stat "$M/$W/$(seg 2)" >/dev/null || fail "$label: cannot stat $(seg 2) through the mount"
sleep 1
[ ! -e "$B/$W/$(seg 6)" ] || fail "$label: $(seg 6) was made before WAL was quiet again"
wait_for reserved 3
zeroed 6
[ "$(walprep made)" = 5 ] || fail "$label: $(walprep made) made, want 5"

label="R, not while WAL is written"
# a segment met every 2 s: each restarts the 5 s; the segments ahead (2)
# are made at once, the reserve (4) only 5 s after the last
for n in 3 4 5 6; do
	stat "$M/$W/$(seg $n)" >/dev/null || fail "$label: cannot stat $(seg $n) through the mount"
	[ $n = 6 ] || sleep 2
done
wait_for made 7
sleep 1
[ -e "$B/$W/$(seg 8)" ] || fail "$label: $(seg 8), 2 after $(seg 6), was not made"
[ ! -e "$B/$W/$(seg 9)" ] || fail "$label: $(seg 9) was made while WAL was written (a segment met 2 s before)"
[ "$(walprep reserved)" = 3 ] || fail "$label: $(walprep reserved) made for the reserve, want 3"
wait_for reserved 5
zeroed 9
zeroed 10
[ ! -e "$B/$W/$(seg 11)" ] || fail "$label: $(seg 11) was made, more than 4 after $(seg 6)"
line=$("$BIN/pgiofs" stat "$M" | grep '^WAL segments made ahead') || fail "$label: pgiofs stat has no WAL segments line"
echo "$label: $line"
[[ $line == *": 2 at a time, 4 while WAL is quiet, 9 made (144 MiB; 5 while quiet), "* ]] ||
	fail "$label: pgiofs stat says \"$line\""

label="R, not while WAL is synced"
# $(seg 7) is met (its 2 after exist), then written and fdatasynced once a
# second for 8 s, as a server's commits do: no reserve until 5 s after
python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(8):
    os.pwrite(fd, b"x", 8192 + i)
    os.fdatasync(fd)
    time.sleep(1)
os.close(fd)' "$M/$W/$(seg 7)" || fail "$label: cannot write and sync $(seg 7) through the mount"
[ ! -e "$B/$W/$(seg 11)" ] || fail "$label: $(seg 11) was made while WAL was synced every second"
[ "$(walprep reserved)" = 5 ] || fail "$label: $(walprep reserved) made for the reserve, want 5"
wait_for reserved 6
zeroed 11
pgiofs_umount "$M" || fail "$label: cannot unmount"

label="A, 0 and auto"
rm -f "$B/$W/"0*
mkseg 1
for set in 0 -1; do
	pgiofs_mount "$B" "$M" --set files.wal_segments_ahead=$set
	stat "$M/$W/$(seg 1)" >/dev/null || fail "$label: cannot stat $(seg 1) through the mount"
	sleep 0.5
	[ "$(walprep ahead)" = 0 ] || fail "$label: $set on a tmpfs: $(walprep ahead) segments ahead, want 0"
	[ "$(walprep reserve)" = 0 ] || fail "$label: $set on a tmpfs: a reserve of $(walprep reserve), want 0"
	[ ! -e "$B/$W/$(seg 2)" ] || fail "$label: $set made a segment"
	pgiofs_umount "$M" || fail "$label: cannot unmount"
done
umount "$B" || fail "cannot unmount the tmpfs"

LABEL="B"
label=B
BACKING_DIR=$T/pgb mounted_cluster --set files.wal_segments_ahead=3 --set files.wal_segments_reserve=0 </dev/null
M=$MNT
sql "CREATE TABLE t (id int PRIMARY KEY, pad text)" >/dev/null || fail_log "$LABEL: CREATE TABLE failed" "$SERVER_LOG"
before=$(walprep missed)
first=$(sql "SELECT pg_walfile_name(pg_current_wal_lsn())") || fail "$LABEL: cannot read the WAL position"
for i in $(seq 1 8); do
	sql "INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series($((i * 10000)), $((i * 10000 + 9999))) g" >/dev/null ||
		fail_log "$LABEL: INSERT $i failed" "$SERVER_LOG"
	sql "SELECT pg_switch_wal()" >/dev/null || fail_log "$LABEL: pg_switch_wal failed" "$SERVER_LOG"
	sleep 0.2 # the thread is given the time it has between two segments
done
last=$(sql "SELECT pg_walfile_name(pg_current_wal_lsn())") || fail "$LABEL: cannot read the WAL position"
missed=$(($(walprep missed) - before))
log "$LABEL: WAL from $first to $last; $(walprep made) segments made ahead, $missed made by PostgreSQL"
[ "$missed" = 0 ] || fail "$LABEL: PostgreSQL made $missed segments itself"
n=$((16#${last:16:8}))
# the segments after each one WAL reached, no more: none after the names
# the checkpointer looks up to recycle old segments into
made=$(walprep made)
[ "$made" -le $((n - 1 + 3)) ] ||
	fail "$LABEL: $made segments made ahead from initdb's first segment to $last, want at most $((n - 1 + 3))"

# the last segment written is the one before $last (pg_switch_wal moved
# on, nothing was written since): its 3 after it, made in the thread, which
# may still be writing the last (10 s at most)
seg_after() { printf '%s/pg/data/pg_wal/%s%08X' "$BACKING" "${last:0:16}" $((n + $1)); }
for ((i = 0; i < 100; i++)); do
	[ -e "$(seg_after 0)" ] && [ -e "$(seg_after 1)" ] && [ -e "$(seg_after 2)" ] && break
	sleep 0.1
done
[ "$i" -lt 100 ] || fail "$LABEL: not every one of the 3 segments after the last written is there"
[ "$(stat -c %U "$(seg_after 2)")" = postgres ] || fail "$LABEL: $(seg_after 2) is not the postgres user's"
# a segment made ahead and not yet written has the long page header of a
# recycled one, at its own address (pg_waldump and recovery read it)
python3 - "$(seg_after 2)" "$BACKING/pg/data/pg_wal/$last" <<'PY' || fail "$LABEL: $(seg_after 2)'s first page header is not a segment's"
import struct, sys
def header(path):
    with open(path, "rb") as f:
        return struct.unpack("<HHIQI4xQII", f.read(40))
made, cur = header(sys.argv[1]), header(sys.argv[2])
name = sys.argv[1].rsplit("/", 1)[1]
segno = int(name[8:16], 16) * (0x100000000 // (16 << 20)) + int(name[16:24], 16)
assert made[0] == cur[0] and made[1] == 2 and made[2] == int(name[:8], 16), (made, cur)
assert made[3] == segno * (16 << 20) and made[4] == 0, made
assert made[5] == cur[5] and made[6] == 16 << 20 and made[7] == cur[7], (made, cur)
PY
# (test_walmodes.sh runs pg_waldump without a start file over such a pg_wal)
made=$(walprep made)
kill_postgres 20
start_server
rows=$(sql "SELECT count(*) FROM t") || fail_log "$LABEL: cannot count after crash recovery" "$SERVER_LOG"
[ "$rows" = 80000 ] || fail "$LABEL: $rows rows after crash recovery, want 80000"
log "$LABEL: crash recovery: $rows rows"
amcheck after-crash
stop_server
echo ok
