#!/bin/bash
# test_cut.sh -- pgdisk's write log and `pgdisk cut`, on known writes
# through a loop device:
#   - the log holds every write (with its data), flush and FUA write in
#     order; a FUA write through the loop device arrives as a write and a
#     flush, an O_DSYNC write to the disk file as a FUA write;
#   - a cut that keeps everything is the live image; a cut that keeps
#     nothing unflushed has every write before the last flush and every FUA
#     write, and none of the unflushed ones; the cache's size bounds what
#     is lost (older unflushed writes were destaged); no cache: nothing lost;
#   - a seeded random cut is the same image for the same seed, and seeds
#     differ in what they keep;
#   - refusals: a cut past the end, past the cap, an existing output, a
#     base of the wrong size, a damaged log; nothing is built then.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m"
disk_image "$D/img" 16M
cp --sparse=always "$D/img" "$D/base"

# blk N FILE -- 4 KiB block N of FILE
blk() { dd if="$2" bs=4k skip="$1" count=1 status=none | md5sum | cut -d' ' -f1; }
zero=$(head -c 4096 /dev/zero | md5sum | cut -d' ' -f1)
pat() { head -c 4096 /dev/urandom >"$D/p$1"; }
for i in 0 1 2 3 4 5; do pat $i; done

disk_start "$D/img" "$D/m" --model none --set write_cache_kb=8 --log "$D/log"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
dd if="$D/p0" of="$LOOP" bs=4k seek=0 oflag=direct conv=fsync status=none # flushed
dd if="$D/p1" of="$LOOP" bs=4k seek=1 oflag=direct,dsync status=none      # FUA via loop
dd if="$D/p2" of="$D/m/disk" bs=4k seek=2 oflag=direct,dsync conv=notrunc status=none # FUA
dd if="$D/p3" of="$LOOP" bs=4k seek=3 oflag=direct status=none # unflushed, destaged by 4 and 5
dd if="$D/p4" of="$LOOP" bs=4k seek=4 oflag=direct status=none # unflushed
dd if="$D/p5" of="$LOOP" bs=4k seek=5 oflag=direct status=none # unflushed
[ "$(stat_of "$D/m" log)" = yes ] || fail "stats: no log"
[ "$(stat_of "$D/m" write_cache_kb)" = 8 ] || fail "stats: write_cache_kb is $(stat_of "$D/m" write_cache_kb)"
losetup -d "$LOOP"
disk_stop "$D/m" "$DISK_PID"

"$PGDISK" log --records "$D/log" >"$D/records" || fail "pgdisk log failed: $(cat "$D/records")"
cat "$D/records"
grep -q '^ended clean$' "$D/records" || fail "the log did not end cleanly"
# the writes, in order, at their offsets (bytes)
writes=$(awk '$2 == "write" { printf "%s ", $4 }' "$D/records")
[ "$writes" = "0 4096 8192 12288 16384 20480 " ] || fail "logged writes at: $writes"
# the FUA write through the loop device: a write, then a flush
awk '$2 == "write" && $4 == 4096 { s = $1 } s && $1 == s + 1 { print $2; exit }' "$D/records" |
	grep -qx flush || fail "the loop device's FUA write is not followed by a flush"
awk '$2 == "write" && $4 == 8192 { print $6 }' "$D/records" | grep -qx 1 ||
	fail "the O_DSYNC write to the disk file is not logged as FUA"
echo "ok: the log holds the writes, flushes and FUA writes in order"

last=$(awk '$2 == "write" && $4 == 20480 { print $1 }' "$D/records")
"$PGDISK" cut --keep all "$D/log" "$D/base" "$D/all" >"$D/cut.out" || fail "cut --keep all failed"
cmp -s "$D/all" "$D/img" || fail "a cut keeping everything differs from the live image"
grep -qx "cut_seq $last" "$D/cut.out" || fail "the cut is not after the last record: $(cat "$D/cut.out")"
echo "ok: keeping everything gives the live image"

"$PGDISK" cut --keep none "$D/log" "$D/base" "$D/none" >"$D/cut.out" || fail "cut --keep none failed"
cat "$D/cut.out"
for i in 0 1 2 3; do
	[ "$(blk $i "$D/none")" = "$(md5sum <"$D/p$i" | cut -d' ' -f1)" ] ||
		fail "block $i (flushed, FUA or destaged) is not on the cut disk"
done
for i in 4 5; do
	[ "$(blk $i "$D/none")" = "$zero" ] || fail "block $i (unflushed, in the cache) survived --keep none"
done
grep -qx "lost 2" "$D/cut.out" || fail "expected 2 writes lost: $(cat "$D/cut.out")"
echo "ok: keeping nothing unflushed loses exactly the writes still in the 8 KiB cache"

# before the flush that followed the first write: it is lost
first=$(awk '$2 == "write" && $4 == 0 { print $1 }' "$D/records")
"$PGDISK" cut --at "$first" --keep none "$D/log" "$D/early" >/dev/null && fail "a cut with two arguments worked"
"$PGDISK" cut --at "$first" --keep none "$D/log" "$D/base" "$D/early" >/dev/null || fail "cut --at $first failed"
[ "$(blk 0 "$D/early")" = "$zero" ] || fail "an unflushed write survived a cut right after it"
"$PGDISK" cut --flush 2 "$D/log" "$D/base" "$D/flush2" >"$D/cut.out" || fail "cut --flush 2 failed"
[ "$(blk 0 "$D/flush2")" = "$(md5sum <"$D/p0" | cut -d' ' -f1)" ] || fail "--flush 2 lacks the flushed write"
echo "ok: --at and --flush"

# seeded choices: the same seed, the same image; different seeds differ
"$PGDISK" cut --seed 7 "$D/log" "$D/base" "$D/s7a" >/dev/null || fail "cut --seed 7"
"$PGDISK" cut --seed 7 "$D/log" "$D/base" "$D/s7b" >/dev/null || fail "cut --seed 7 again"
cmp -s "$D/s7a" "$D/s7b" || fail "the same seed built different images"
for s in 1 2 3 4 5 6 7 8; do
	"$PGDISK" cut --seed $s "$D/log" "$D/base" "$D/s" | awk '$1 == "lost" { print $2 }' >>"$D/lost"
	rm -f "$D/s"
done
[ "$(sort -u "$D/lost" | wc -l)" -gt 1 ] || fail "eight seeds all lost the same number of writes"
echo "ok: seeded choices are reproducible and vary with the seed ($(sort -u "$D/lost" | tr '\n' ' '))"

# refusals: nothing built
out=$("$PGDISK" cut --at 999 "$D/log" "$D/base" "$D/x" 2>&1) && fail "a cut past the end worked"
echo "$out" | grep -q "ends at record" || fail "past the end: $out"
out=$("$PGDISK" cut "$D/log" "$D/base" "$D/all" 2>&1) && fail "an existing output was overwritten"
echo "$out" | grep -q "never overwritten" || fail "existing output: $out"
truncate -s 8M "$D/small"
out=$("$PGDISK" cut "$D/log" "$D/small" "$D/x" 2>&1) && fail "a base of the wrong size worked"
echo "$out" | grep -q "not the disk of the log" || fail "wrong base: $out"
head -c $(($(stat -c %s "$D/log") - 20)) "$D/log" >"$D/short"
out=$("$PGDISK" cut "$D/short" "$D/base" "$D/x" 2>&1) && fail "a damaged log worked"
echo "$out" | grep -q 'write log ".*short".*truncated' || fail "damaged log: $out"
[ ! -e "$D/x" ] || fail "a refused cut left its output"
echo "ok: refusals"

# no cache: nothing is lost
rm -f "$D/log2"
cp --sparse=always "$D/base" "$D/img2"
disk_start "$D/img2" "$D/m" --model none --set write_cache_kb=0 --set log.max_mb=1 --log "$D/log2"
dd if="$D/p4" of="$D/m/disk" bs=4k seek=4 oflag=direct conv=notrunc status=none
dd if=/dev/urandom of="$D/m/disk" bs=64k count=20 seek=10 oflag=direct conv=notrunc status=none
disk_stop "$D/m" "$DISK_PID"
"$PGDISK" log "$D/log2" >"$D/info2" || fail "pgdisk log of the capped log failed"
grep -qx "ended cap" "$D/info2" || fail "the 1 MiB log did not end at its cap: $(cat "$D/info2")"
"$PGDISK" cut --keep none "$D/log2" "$D/base" "$D/nocache" >/dev/null || fail "cut of the capped log"
[ "$(blk 4 "$D/nocache")" = "$(md5sum <"$D/p4" | cut -d' ' -f1)" ] || fail "without a cache a write was lost"
n=$(awk '$1 == "records" { print $2 }' "$D/info2")
out=$("$PGDISK" cut --at $((n + 1)) "$D/log2" "$D/base" "$D/x" 2>&1) && fail "a cut past the cap worked"
echo "$out" | grep -q "cap was reached" || fail "past the cap: $out"
echo "ok: no cache, nothing lost; the cap ends the log and bounds the cuts"
echo "ok"
