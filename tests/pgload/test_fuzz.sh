#!/bin/bash
# test_fuzz.sh -- build the libFuzzer target of pgload's parser and run it
# (or, without clang, a seeded mutation driver under ASan/UBSan) briefly
# (FUZZ_SECONDS, default 20) from a seed corpus of awkward scripts.
# `FUZZ_SECONDS=600 tests/run.sh fuzz` for a longer run.
. "$(dirname "$0")/../lib.sh"

W=$(mktempdir)
FUZZ=$W/fuzz_parser
SRC=("$TOP/tests/pgload/fuzz_parser.c" "$TOP/pgload/parser.c" "$TOP/pgload/input.c")
# libFuzzer when clang has it; else the seeded mutation driver under gcc
# sanitizers, so that the parser is always fuzzed (CI counts a skip as a failure)
if command -v clang >/dev/null &&
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-I"$TOP/pgload" "${SRC[@]}" -llz4 -o "$FUZZ" 2>"$W/cc.log"; then
	ENGINE=libfuzzer
else
	gcc -g -O1 -std=gnu11 -D_GNU_SOURCE -DPGL_FUZZ_DRIVER -fsanitize=address,undefined \
		-fno-sanitize-recover=undefined -I"$TOP/pgload" "${SRC[@]}" -llz4 -o "$FUZZ" \
		2>>"$W/cc.log" || { cat "$W/cc.log"; fail "fuzzer build failed"; }
	ENGINE=driver
fi

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
