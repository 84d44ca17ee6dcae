#!/bin/bash
# test_fuzz.sh -- build the libFuzzer targets of pgload (the script parser,
# and the reader of `pgiofs stat --json`) with clang and run them briefly
# (FUZZ_SECONDS, default 20; FUZZ_IOSTAT_SECONDS, default 5) from seed corpora.
# `FUZZ_SECONDS=600 tests/run.sh fuzz` for a longer run.  A target that
# cannot be built fails the test, with the compiler's messages: nothing is
# left unfuzzed without saying so.  On a machine without clang's libFuzzer,
# FUZZ_ENGINE=driver fuzzes the parser with its seeded mutation driver under
# gcc's ASan/UBSan instead (the reader needs libFuzzer: the test then fails
# after the parser, naming it).
. "$(dirname "$0")/../lib.sh"

W=$(mktempdir)
FUZZ=$W/fuzz_parser
# (intr.c: input.c waits for pipes beside pgload's interrupt descriptor)
SRC=("$TOP/tests/pgload/fuzz_parser.c" "$TOP"/pgload/parser*.c "$TOP/pgload/input.c" "$TOP/pgload/intr.c"
	"$TOP/pgload/sqllex.c")
PQ_CFLAGS=$(pkg-config --cflags libpq)
PQ_LIBS=$(pkg-config --libs libpq)
# libFuzzer (clang); the seeded mutation driver under gcc only when asked for
ENGINE=${FUZZ_ENGINE:-libfuzzer}
case $ENGINE in
libfuzzer)
	command -v clang >/dev/null ||
		fail "clang is needed for the libFuzzer targets (apt-get install clang libclang-rt-14-dev; or FUZZ_ENGINE=driver)"
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-I"$TOP/pgload" $PQ_CFLAGS "${SRC[@]}" -llz4 $PQ_LIBS -lpthread -o "$FUZZ" 2>"$W/cc.log" ||
		{ cat "$W/cc.log"; fail "the parser's libFuzzer target does not build (see above)"; }
	;;
driver)
	gcc -g -O1 -std=gnu11 -D_GNU_SOURCE -DPGL_FUZZ_DRIVER -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -I"$TOP/pgload" $PQ_CFLAGS "${SRC[@]}" -llz4 $PQ_LIBS -lpthread -o "$FUZZ" \
		2>"$W/cc.log" || { cat "$W/cc.log"; fail "the parser's fuzz driver does not build (see above)"; }
	;;
*) fail "FUZZ_ENGINE=$ENGINE: use libfuzzer (the default) or driver" ;;
esac

mkdir "$W/corpus"
cp "$TOP/tests/pgload/awkward.sql" "$W/corpus/"
printf 'COPY t FROM stdin;\n1\t\\N\n\\.\nSELECT $a$;$a$;\n' >"$W/corpus/copy"
printf '\\restrict k\nSELECT E'"'"'\\'"'"';'"'"';\n\\unrestrict k\n\\set x 1\nSELECT :x, :'"'"'x'"'"';\n' >"$W/corpus/meta"
printf 'CREATE FUNCTION f() BEGIN ATOMIC SELECT 1; CASE END; END;\n/* /* */ ; */ -- ;\n' >"$W/corpus/atomic"
cd "$W" || exit 1
if [ $ENGINE = libfuzzer ]; then
	"$FUZZ" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 corpus >"$W/fuzz.log" 2>&1
else
	"$FUZZ" "${FUZZ_SECONDS:-20}" corpus/* >"$W/fuzz.log" 2>&1
fi || { tail -40 "$W/fuzz.log"; fail "fuzzer ($ENGINE) found a problem"; }
grep -E '^stat::number_of_executed_units' "$W/fuzz.log"
echo "ok: fuzzed ${FUZZ_SECONDS:-20} s with $ENGINE"

# the reader of `pgiofs stat --json` (libFuzzer only; test_iostat covers
# truncations and mutations under any compiler)
[ $ENGINE = libfuzzer ] ||
	fail "the pgiofs stat reader was not fuzzed: its target needs libFuzzer (clang), FUZZ_ENGINE=$ENGINE"
ISRC=("$TOP/tests/pgload/fuzz_iostat.c" "$TOP/pgload/iostat.c" "$TOP/pgload/util.c"
	"$TOP/pgload/intr.c" "$TOP/common/mountinfo.c")
clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -I"$TOP/pgload" -I"$TOP/common" \
	$(pkg-config --cflags libpq jansson) "${ISRC[@]}" $(pkg-config --libs libpq jansson) -o "$W/fuzz_iostat" \
	2>"$W/cc.log" || { cat "$W/cc.log"; fail "iostat fuzzer build failed"; }
mkdir "$W/icorpus"
printf '{"schema":"pgiofs.stats/1","mount":"/m","cumulative":true,"interval_s":0.5,"classes":{%s},"total":{}}\n' \
	"$(for c in wal xact heap index fsm vm temp meta other; do
		printf '"%s":{"read_ops":1,"read_bytes":8192,"write_ops":2,"write_bytes":16384,"sync_ops":1,"errors":0,"latency_ms":{"count":4,"avg":1.5,"p50":0.999423}},' $c
	done | sed 's/,$//')" >"$W/icorpus/sample"
"$W/fuzz_iostat" -max_total_time="${FUZZ_IOSTAT_SECONDS:-5}" -max_len=8192 -timeout=10 \
	-rss_limit_mb=1024 -print_final_stats=1 "$W/icorpus" >"$W/ifuzz.log" 2>&1 ||
	{ tail -40 "$W/ifuzz.log"; fail "iostat fuzzer found a problem"; }
grep -E '^stat::number_of_executed_units' "$W/ifuzz.log"
echo "ok: fuzzed the pgiofs stat reader ${FUZZ_IOSTAT_SECONDS:-5} s"
