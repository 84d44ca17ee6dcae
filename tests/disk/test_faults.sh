#!/bin/bash
# test_faults.sh -- pgdisk's injected faults (--fault, MOUNTPOINT/control),
# on requests to the disk file and through a loop device:
#   - a rule on a sector range fails exactly the requests that touch it
#     (a request ending just before it or starting just after it passes),
#     with its error (EIO, ENOSPC), for reads, writes, flushes, discards
#     and write-zeroes; a failed write never reaches the image;
#   - nth and count: the nth matching request is the first to fail, count
#     of them fail, then none; for: the rule fails while its time runs from
#     its first fault, and no more once it is over; several rules: each
#     counts the requests it matches, the one added first fails one;
#   - run time: rules added and cleared through the control file, which
#     lists them with their counts; a write with one bad line changes
#     nothing; the stats file counts the faults;
#   - a lost write is acknowledged and not stored;
#   - every fault is logged once per rule (its first, its end, and its
#     counts when cleared), and marked in the write log as a fault, never
#     as a write: `pgdisk cut --keep all` of the log is the live image;
#   - through a loop device, a fault on its sectors reaches the writer;
#   - bad rules are refused at start, naming the rule and the reason,
#     leaving no mount and the image untouched, and at run time.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m"
disk_image "$D/img" 16M # 32768 sectors
cp --sparse=always "$D/img" "$D/base"
sum=$(md5sum <"$D/img")

# refuse EXPECTED_TEXT RULE -- pgdisk --fault RULE must fail saying it
refuse() {
	local out
	out=$("$PGDISK" --model none --fault "$2" "$D/img" "$D/m" 2>&1) && fail "--fault \"$2\" was accepted"
	echo "$out" | grep -qF -- "--fault \"$2\": $1" || fail "--fault \"$2\": expected \"$1\", got: $out"
	assert_no_mount "$D/m"
	[ -z "$(disk_pid "$D/m")" ] || fail "a refused --fault left a process"
	echo "ok: refused: $out"
}
refuse "sectors=32760-32768: beyond the disk, whose last sector is 32767" "op=write sectors=32760-32768"
refuse "sectors=40000+1: beyond the disk" "op=read sectors=40000+1"
refuse 'op=fly: not read, write, flush, discard, zero or all' "op=fly"
refuse 'op=read,: not read' "op=read,"
refuse 'no op=' "sectors=1-2"
refuse 'sectors=9-3: not FIRST-LAST' "op=write sectors=9-3"
refuse 'nth=0: not a whole number of at least 1' "op=write nth=0"
refuse 'count=-1: not a whole number' "op=write count=-1"
refuse 'for=5h: not a duration' "op=write for=5h"
refuse 'error=EBUSY: not eio, enospc or lost' "op=write error=EBUSY"
refuse '"when" is not KEY=VALUE' "op=write when"
refuse 'op= is given twice' "op=write op=read"
refuse 'a flush covers no sectors' "op=write,flush sectors=1-2"
refuse 'error=lost: a read cannot be lost' "op=read,write error=lost"
[ "$(md5sum <"$D/img")" = "$sum" ] || fail "a refused start changed the image"

# pgdisk in the foreground, its messages in $D/err
"$PGDISK" -f --model none --log "$D/log" --fault "op=write sectors=100-199" "$D/img" "$D/m" 2>"$D/err" &
PID=$!
on_exit "disk_stop $D/m $PID"
for ((i = 0; i < 100; i++)); do is_mounted "$D/m" && break; sleep 0.1; done
is_mounted "$D/m" || fail_err "pgdisk did not mount"
C=$D/m/control

# w SECTOR COUNT -- write COUNT sectors of random data at SECTOR to the disk
# file; the exit status of dd
# (one request: the disk file has direct_io, and pgdisk takes up to 1 MiB)
w() {
	head -c $(($2 * 512)) /dev/urandom | dd of="$D/m/disk" bs=$(($2 * 512)) count=1 iflag=fullblock \
		seek=$(($1 * 512)) oflag=seek_bytes conv=notrunc status=none 2>"$D/dd.err"
}
r() { dd if="$D/m/disk" of=/dev/null bs=$(($2 * 512)) count=1 skip=$(($1 * 512)) iflag=skip_bytes status=none 2>"$D/dd.err"; }
# fa ARGS -- fallocate ARGS on the disk file; fl -- a write and an fsync of it
fa() { fallocate "$@" "$D/m/disk" 2>"$D/dd.err"; }
fl() { dd if=/dev/zero of="$D/m/disk" bs=512 seek=30000 count=1 conv=notrunc,fsync status=none 2>"$D/dd.err"; }
# expect OK|EIO|ENOSPC WHAT CMD... -- CMD succeeds, or fails with that error
expect() {
	local want=$1 what=$2 msg
	shift 2
	if "$@"; then
		[ "$want" = OK ] || fail "$what succeeded, expected $want"
	else
		case $want in EIO) msg="Input/output error" ;; ENOSPC) msg="No space left on device" ;; *) msg="(success)" ;; esac
		grep -q "$msg" "$D/dd.err" || fail "$what: expected $want, got: $(cat "$D/dd.err")"
	fi
}
# rule ID FIELD -- a field of rule ID in the control file's listing
rule() { awk -v id="$1" -v k="$2" '$1 == "rule" && $2 == id { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1) print substr($i, length(k) + 2) }' "$C"; }
# ctl TEXT -- TEXT (printf's format) to the control file in one write (bash's
# printf writes line by line)
ctl() { printf "$1" | dd of="$C" bs=4k iflag=fullblock status=none; }
fail_err() { echo "---- pgdisk's messages" >&2; cat "$D/err" >&2; fail "$1"; }

# an exact sector range
before=$(dd if="$D/img" bs=512 skip=90 count=120 status=none | md5sum)
expect OK "a write of sectors 92-99" w 92 8
expect EIO "a write of sectors 96-103" w 96 8
expect EIO "a write of sector 100" w 100 1
expect EIO "a write of sector 199" w 199 1
expect EIO "a write of sectors 150-1149" w 150 1000
expect OK "a write of sector 200" w 200 1
expect OK "a read of sectors 100-199" r 100 100
after=$(dd if="$D/img" bs=512 skip=90 count=120 status=none | md5sum)
[ "$(dd if="$D/img" bs=512 skip=100 count=100 status=none | md5sum)" = \
	"$(dd if="$D/base" bs=512 skip=100 count=100 status=none | md5sum)" ] ||
	fail "a failed write reached the image (sectors 100-199 changed)"
[ "$before" != "$after" ] || fail "the writes around the range did not reach the image"
[ "$(rule 1 seen)" = 4 ] && [ "$(rule 1 faults)" = 4 ] || fail "rule 1: $(grep '^rule 1 ' "$C")"
echo "ok: a rule on sectors 100-199 fails exactly the writes touching them, and none reaches the image"

# run time: add, several at once, a refused write changes nothing
echo "add op=read sectors=1000+8 error=enospc nth=3 count=2" >"$C" || fail "add a read rule"
[ "$(rule 2 state)" = waiting ] || fail "rule 2 is not waiting for its 3rd request: $(cat "$C")"
for want in OK OK ENOSPC ENOSPC OK; do expect $want "read $want" r 1004 1; done
[ "$(rule 2 seen)/$(rule 2 faults)/$(rule 2 state)" = 5/2/over ] || fail "rule 2: $(grep '^rule 2 ' "$C")"
echo "ok: nth=3 count=2: the 3rd and 4th matching reads fail with ENOSPC, then none"
ctl 'add op=discard sectors=2048-2055\nadd op=zero sectors=2048-2055\n' || fail "add two rules in one write"
ctl 'add op=write sectors=5000\nadd op=write sectors=99999\n' 2>/dev/null && fail "a bad line was accepted"
grep -q '^# last refused: "add op=write sectors=99999": sectors=99999: beyond the disk' "$C" ||
	fail "the listing does not show the refusal: $(cat "$C")"
ctl 'clear 3\nclear 42\n' 2>/dev/null && fail "clear 42 (no such rule) was accepted"
grep -q '^# last refused: "clear 42": no rule 42' "$C" || fail "the listing does not show the refusal: $(cat "$C")"
[ "$(grep -c '^rule ' "$C")" = 4 ] || fail "a refused write changed the rules: $(cat "$C")"
echo "ok: a control write with one bad line changes nothing, and the listing says why"
expect EIO "a discard of sectors 2040-2055" fa -p -o $((2040 * 512)) -l 8192
expect OK "a discard of sectors 2056-2063" fa -p -o $((2056 * 512)) -l 4096
expect EIO "a write-zeroes of sector 2055" fa -z -o $((2055 * 512)) -l 512
echo "add op=flush count=1" >"$C" # (fallocate(1) fsyncs the file it changed)
expect EIO "an fsync of the disk file" fl
expect OK "a second fsync" fl
echo "ok: discards, write-zeroes and flushes fail as their rules say (count=1: one flush)"

# several rules on one request: each counts it, the first added fails it
echo "add op=write sectors=150 error=enospc" >"$C"
expect EIO "a write under rules 1 and 6" w 150 1
[ "$(rule 6 seen)/$(rule 6 faults)" = 1/0 ] || fail "rule 6: $(grep '^rule 6 ' "$C")"
echo "clear 1" >"$C" || fail "clear 1"
expect ENOSPC "a write under rule 6 alone" w 150 1
grep -q '^rule 1 ' "$C" && fail "rule 1 was not cleared"
echo "ok: of two rules, the one added first fails the request; clear ID"

# for: from its first fault, and over after it
echo "clear all" >"$C" || fail "clear all"
[ "$(stat_of "$D/m" fault_rules)" = 0 ] || fail "rules left after clear all"
echo "add op=write sectors=3000 for=1m" >"$C"
expect EIO "a write in a minute's window (1)" w 3000 1
expect EIO "a write in a minute's window (2)" w 3000 1
echo "add op=write sectors=3001 for=200ms" >"$C"
expect EIO "the first write of a 200 ms window" w 3001 1
sleep 0.5
expect OK "a write after the 200 ms" w 3001 1
[ "$(rule 8 state)" = over ] && [ "$(rule 7 state)" = active ] || fail "for: $(cat "$C")"
echo "ok: for=DURATION runs from the first fault; over, the rule fails nothing"

# a lost write: acknowledged, not stored
echo "add op=write sectors=4000+8 error=lost" >"$C"
lostbefore=$(dd if="$D/img" bs=512 skip=4000 count=8 status=none | md5sum)
expect OK "a lost write" w 4000 8
[ "$(dd if="$D/img" bs=512 skip=4000 count=8 status=none | md5sum)" = "$lostbefore" ] ||
	fail "a lost write reached the image"
echo "ok: a lost write is acknowledged and not stored"

# through a loop device: the writer sees the error
echo "add op=write sectors=8192+8" >"$C"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
dd if=/dev/urandom of="$LOOP" bs=4k seek=1024 count=1 oflag=direct status=none 2>"$D/dd.err" &&
	fail "a direct write through the loop device to a failing sector succeeded"
grep -q "Input/output error" "$D/dd.err" || fail "loop device: $(cat "$D/dd.err")"
dd if=/dev/urandom of="$LOOP" bs=4k seek=1025 count=1 oflag=direct status=none ||
	fail "a write through the loop device next to the failing sectors failed"
losetup -d "$LOOP"
echo "ok: through a loop device, the write on the failing sectors fails with EIO, the next passes"

[ "$(stat_of "$D/m" faults)" -ge 16 ] || fail "stats: faults $(stat_of "$D/m" faults)"
nf=$(stat_of "$D/m" faults)
cp "$C" "$D/listing"
disk_stop "$D/m" "$PID"

# the messages: one first fault per rule that failed something, the ends
for id in 1 2 3 4 5 6 7 8 9 10; do
	n=$(grep -c "fault rule $id (.*): first fault" "$D/err")
	[ "$n" = 1 ] || fail_err "rule $id: $n first-fault messages"
done
grep -q "fault rule 2 is over (op=read sectors=1000-1007 nth=3 count=2 for=0s error=enospc): 2 faults injected, 4 requests matched" "$D/err" ||
	fail_err "no end message for rule 2"
grep -q "fault rule 1 cleared (.*): 5 faults injected, 5 requests matched" "$D/err" || fail_err "no counts for rule 1 when cleared"
[ "$(grep -c 'first fault' "$D/err")" = 10 ] || fail_err "first-fault messages: $(grep -c 'first fault' "$D/err"), expected 10"
echo "ok: each rule's first fault and end are logged once, with its counts"

# the write log: every fault marked, none as a write; the cut is the image
"$PGDISK" log --records "$D/log" >"$D/records" || fail "pgdisk log failed"
[ "$(awk '$2 == "fault"' "$D/records" | wc -l)" = "$nf" ] ||
	fail "$nf faults injected, $(awk '$2 == "fault"' "$D/records" | wc -l) in the log"
grep -qx "faults $nf" "$D/records" || fail "pgdisk log: $(tail -n 14 "$D/records")"
awk '$2 == "fault" && $4 == 100 * 512 && $7 == "write" && $8 == "EIO"' "$D/records" | grep -q . ||
	fail "no fault record of the write at sector 100"
awk '$2 == "fault" && $4 == 4000 * 512 && $8 == "lost"' "$D/records" | grep -q . || fail "the lost write is not marked"
awk '$2 == "fault" && $7 == "flush"' "$D/records" | grep -q . || fail "the failed flush is not marked"
awk '$2 == "write" && $4 >= 51200 && $4 < 102400' "$D/records" | grep -q . && fail "a failed write is logged as a write"
"$PGDISK" cut --keep all "$D/log" "$D/base" "$D/cut" >/dev/null || fail "pgdisk cut failed"
cmp -s "$D/cut" "$D/img" || fail "the cut of the log keeping everything is not the image"
echo "ok: the write log marks the $nf faults; a cut keeping everything is the image"
echo "ok"
