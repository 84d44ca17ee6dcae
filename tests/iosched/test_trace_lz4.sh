#!/bin/bash
# test_trace_lz4.sh -- pgiofs traces are standard lz4 frames: the lz4
# command-line tool decompresses them (and verifies their checksums) to
# exactly the 32-byte header plus 56 bytes per record, starting with the
# magic "PGIOTRC1"; a trace cut short or damaged is reported by the reader
# after the records before the damage, and by `lz4 -t` too; files that are
# not traces are refused with a reason.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

H=$TESTBUILD/iosched/helper_trace
[ -x "$H" ] || fail "$H is missing: run make"
command -v lz4 >/dev/null || skip "the lz4 command is not installed (apt-get install lz4)"

T=$TEST_TMP
for n in 0 1 1365 100000; do
	"$H" write "$T/t$n.trc" "$n" >"$T/w.out" || fail "writing $n records: $(cat "$T/w.out")"
	grep -qx "records $n dropped 0" "$T/w.out" || fail "writer says: $(cat "$T/w.out")"
	lz4 -t -q "$T/t$n.trc" || fail "lz4 -t rejects a trace of $n records"
	lz4 -d -q -c "$T/t$n.trc" >"$T/t$n.raw" || fail "lz4 -d fails on a trace of $n records"
	size=$(stat -c %s "$T/t$n.raw")
	[ "$size" -eq $((32 + n * 56)) ] ||
		fail "$n records decompress to $size bytes, want $((32 + n * 56))"
	[ "$(head -c 8 "$T/t$n.raw")" = PGIOTRC1 ] || fail "no PGIOTRC1 magic in the $n-record trace"
	# version 2, header 32, record 56 (little-endian u16s at 8, 10, 12)
	[ "$(od -An -tu2 -j8 -N6 "$T/t$n.raw" | tr -s ' ')" = " 2 32 56" ] ||
		fail "header fields: $(od -An -tu2 -j8 -N6 "$T/t$n.raw")"
	"$H" check "$T/t$n.trc" "$n" >"$T/c.out" || fail "reading back $n records: $(cat "$T/c.out")"
	echo "$n records: $(stat -c %s "$T/t$n.trc") bytes compressed, $size decompressed"
done

# the record layout seen from outside: record 0 of trace_gen.h seed 1 has
# cls 0 (wal), dir 0 (read), len 8192, result 8192
[ "$(od -An -tu4 -j$((32 + 24)) -N4 "$T/t1.raw" | tr -d ' ')" = 8192 ] || fail "record 0 len"
[ "$(od -An -tu1 -j$((32 + 44)) -N2 "$T/t1.raw" | tr -s ' ')" = " 0 0" ] || fail "record 0 cls/dir"

# truncated: lz4 notices, the reader returns what it can and says where
size=$(stat -c %s "$T/t100000.trc")
head -c $((size / 2)) "$T/t100000.trc" >"$T/half.trc"
lz4 -t -q "$T/half.trc" 2>/dev/null && fail "lz4 -t accepts a truncated trace"
"$H" check "$T/half.trc" 100000 >"$T/c.out" 2>"$T/c.err"
rc=$?
[ $rc -eq 3 ] || fail "truncated trace: exit $rc, want 3 ($(cat "$T/c.out" "$T/c.err"))"
k=$(awk '{ print $2 }' "$T/c.out")
[ "$k" -gt 10000 ] && [ "$k" -lt 100000 ] || fail "truncated trace gave $k records"
grep -q "truncated at byte $((size / 2))" "$T/c.err" || fail "message: $(cat "$T/c.err")"
echo "half a trace: $k records, then: $(cat "$T/c.err")"

# a damaged byte in the middle: lz4 -t notices, and so does the reader
cp "$T/t100000.trc" "$T/flip.trc"
pos=$((size / 3))
byte=$(od -An -tu1 -j$pos -N1 "$T/flip.trc" | tr -d ' ')
printf "$(printf '\\%03o' $((byte ^ 0x20)))" | dd of="$T/flip.trc" bs=1 seek=$pos conv=notrunc status=none
lz4 -t -q "$T/flip.trc" 2>/dev/null && fail "lz4 -t accepts a damaged trace"
"$H" check "$T/flip.trc" 100000 >"$T/c.out" 2>"$T/c.err"
rc=$?
[ $rc -eq 3 ] || fail "damaged trace: exit $rc, want 3 ($(cat "$T/c.out" "$T/c.err"))"
grep -q "corrupt at byte [0-9]*: " "$T/c.err" || fail "message: $(cat "$T/c.err")"
echo "flipped byte $pos: $(cat "$T/c.out"), then: $(cat "$T/c.err")"

# not traces: an lz4 frame of something else, and not lz4 at all
echo "hello, this is not a trace but it is long enough for a header" | lz4 -q -c >"$T/other.lz4"
"$H" check "$T/other.lz4" 0 >/dev/null 2>"$T/c.err"
[ $? -eq 3 ] && grep -q "not a pgiofs trace" "$T/c.err" || fail "other lz4: $(cat "$T/c.err")"
echo "plain text" >"$T/text.trc"
"$H" check "$T/text.trc" 0 >/dev/null 2>"$T/c.err"
[ $? -eq 3 ] && grep -q "not an lz4 frame" "$T/c.err" || fail "text: $(cat "$T/c.err")"
: >"$T/empty.trc"
"$H" check "$T/empty.trc" 0 >/dev/null 2>"$T/c.err"
[ $? -eq 3 ] && grep -q "empty" "$T/c.err" || fail "empty file: $(cat "$T/c.err")"
# an existing file is never overwritten
"$H" write "$T/t1.trc" 5 >/dev/null 2>"$T/c.err" && fail "writer overwrote an existing trace"
grep -q "File exists" "$T/c.err" || fail "existing file: $(cat "$T/c.err")"
"$H" check "$T/t1.trc" 1 >/dev/null || fail "the existing trace was damaged"
echo "test_trace_lz4: ok"
