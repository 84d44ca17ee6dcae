#!/bin/bash
# test_fuzz.sh -- build the libFuzzer targets of the INI configuration
# parser (tests/common/fuzz_conf.c over common/conf.c with iosched's table)
# and of the trace decoder (tests/iosched/fuzz_trace.c over iosched/trace.c
# and common/lz4s.c)
# with clang -fsanitize=fuzzer,address,undefined, and run each for
# FUZZ_SECONDS (default 10; `make fuzz` sets 600) from a seed corpus: the
# profiles, a [fault] file and odd syntax; real traces of 10 and 1000
# records, one cut short, and an empty file.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
command -v clang >/dev/null || fail "clang is needed for the libFuzzer targets (apt-get install clang)"
H=$TESTBUILD/iosched/helper_trace
[ -x "$H" ] || fail "$H is missing: run make"
W=$TEST_TMP
SECS=${FUZZ_SECONDS:-10}

# fuzz NAME MAX_LEN CORPUS SOURCES... -- build and run target NAME.
fuzz() {
	local name=$1 max=$2 corpus=$3
	shift 3
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-I"$TOP/common" -I"$TOP/iosched" "$@" -linih -llz4 -lpthread -o "$W/$name" \
		2>"$W/$name.cc" || { cat "$W/$name.cc"; fail "$name: build failed"; }
	(cd "$W" && "./$name" -max_total_time="$SECS" -max_len="$max" -timeout=10 \
		-rss_limit_mb=1024 -print_final_stats=1 "$corpus") >"$W/$name.log" 2>&1 ||
		{ tail -n 40 "$W/$name.log"; fail "$name found a problem (the input is in the log above, in base64)"; }
	echo "ok: $name fuzzed $SECS s, $(grep -o 'number_of_executed_units: [0-9]*' "$W/$name.log")"
}

mkdir "$W/conf" "$W/trace"
cp "$TOP"/config/profiles/*.conf "$TOP/config/pgiofs.conf" "$W/conf/"
printf '[fault]\nclass = wal\ndirection=sync\nerror = eio\nfraction = 0.5\n[device]\nmodel=hdd\nseek_ms=1e3\n' >"$W/conf/fault"
printf '; c\n# c\n[iosched]\npolicy = noop ; x\n\nnr_requests=0x10\n  front_merges = on\n[iosched]\nfifo_batch = 3\n' >"$W/conf/odd"
fuzz fuzz_conf 4096 conf "$TOP/tests/common/fuzz_conf.c" "$TOP/common/conf.c" "$TOP/iosched/conf.c"

"$H" write "$W/trace/t10" 10 >/dev/null || fail "cannot write a seed trace"
"$H" write "$W/trace/t1000" 1000 >/dev/null || fail "cannot write a seed trace"
head -c 300 "$W/trace/t1000" >"$W/trace/cut"
: >"$W/trace/empty"
fuzz fuzz_trace 65536 trace "$TOP/tests/iosched/fuzz_trace.c" "$TOP/iosched/trace.c" \
	"$TOP/common/lz4s.c" "$TOP/iosched/direct.c"
