#!/bin/bash
# run.sh -- run every test of the project and print one line per test and a
# final summary "N passed, N failed, N skipped".
#
# A test is a compiled program $BUILD/tests/<module>/test_* (from
# tests/<module>/test_*.c) or a script tests/<module>/test_*.sh.  Exit status
# 0 = pass, 77 = skip (the last line of its output says why), anything else =
# fail.  With CI=true a skip counts as a failure: CI must run everything.
# Arguments, if given, are substrings selecting which tests run.
# TEST_LOGDIR: where the logs go (default $BUILD/test-logs).
#
# JOBS (default 2) tests run at once: each test makes its own temporary
# directory, mounts, loop devices, servers and ports, and judges only what
# it made, so tests do not see each other.  A script with a line
# "# run alone: REASON" (it changes something system-wide, such as the
# kernel's FUSE over io_uring switch) runs with no other test beside it;
# those run first.  Lines are printed as tests finish.
#
# With a sanitizer build (BIN ending in asan or tsan: make check-asan,
# check-tsan) every sanitizer report goes to a file of the test's own (a
# daemon's stderr is gone once it daemonizes, and a report must not be
# lost with it), and a test that leaves a report of a memory error,
# undefined behaviour or a data race fails, whatever its exit status.  A
# leak report alone is copied into the log and fails only a program whose
# exit status it sets (a test program run directly): a daemon or a command
# that exits with memory still allocated loses nothing.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
BIN=${BIN:-bin}
export TOP BUILD
case "$BIN" in /*) ;; *) BIN="$TOP/$BIN" ;; esac # absolute when run by a test
export BIN
export TESTBUILD="$TOP/$BUILD/tests"
TIMEOUT=${TEST_TIMEOUT:-900}
JOBS=${JOBS:-2}
case "$JOBS" in '' | *[!0-9]* | 0) echo "run.sh: JOBS=$JOBS: not a positive number" >&2; exit 2 ;; esac
case "$BUILD" in /*) LOGDIR="$BUILD/test-logs" ;; *) LOGDIR="$TOP/$BUILD/test-logs" ;; esac
LOGDIR=${TEST_LOGDIR:-$LOGDIR} # a test running tests again keeps its logs apart
mkdir -p "$LOGDIR"
RESULTS=$(mktemp -d "${TMPDIR:-/tmp}/run-results.XXXXXX") || exit 2
trap 'rm -rf "$RESULTS"' EXIT
# interrupted: each running test's timeout(1) (its own process group, out
# of the terminal's reach) passes the signal on, and the test cleans up
trap 'for p in $(jobs -p); do pkill -TERM -P "$p"; done 2>/dev/null; wait; exit 130' INT TERM

all=()
for t in "$BUILD"/tests/*/test_*; do
	[ -x "$t" ] && [ -f "$t" ] && all+=("$t")
done
for t in tests/*/test_*.sh; do
	[ -f "$t" ] && all+=("$t")
done
IFS=$'\n' all=($(printf '%s\n' "${all[@]}" | sort -t/ -k3))
unset IFS

case "$BIN" in */asan | */tsan) SAN=1 ;; *) SAN=0 ;; esac

# test_name VAR TEST -- set VAR to TEST's name, e.g. fuse/test_fill.sh
test_name() {
	local n=${2#"$BUILD"/tests/}
	printf -v "$1" '%s' "${n#tests/}"
}

# the selected tests, those that run alone first
alone=() shared=()
for t in "${all[@]}"; do
	test_name name "$t"
	if [ $# -gt 0 ]; then
		sel=0
		for s in "$@"; do case "$name" in *"$s"*) sel=1 ;; esac; done
		[ $sel = 1 ] || continue
	fi
	case "$t" in
		*.sh) grep -q '^# run alone: ' "$t" && { alone+=("$t"); continue; } ;;
	esac
	shared+=("$t")
done

# run_one TEST -- run TEST, write its result (rc, seconds) to $RESULTS/NAME
run_one() {
	local t=$1 name log san rc start secs
	test_name name "$t"
	log="$LOGDIR/${name//\//_}.log"
	san="$LOGDIR/sanitizer/${name//\//_}"
	if [ $SAN = 1 ]; then
		rm -rf "$san" && mkdir -p "$san" && chmod 1777 "$san"
		export ASAN_OPTIONS="log_path=$san/report${ASAN_OPTIONS_BASE:+:$ASAN_OPTIONS_BASE}"
		export UBSAN_OPTIONS="log_path=$san/report${UBSAN_OPTIONS_BASE:+:$UBSAN_OPTIONS_BASE}"
		export TSAN_OPTIONS="log_path=$san/report${TSAN_OPTIONS_BASE:+:$TSAN_OPTIONS_BASE}"
	fi
	start=$EPOCHREALTIME
	case "$t" in
		*.sh) timeout -k 10 "$TIMEOUT" bash "$t" >"$log" 2>&1 ;;
		*)    timeout -k 10 "$TIMEOUT" "$t" >"$log" 2>&1 ;;
	esac
	rc=$?
	if [ $SAN = 1 ] && [ -n "$(ls -A "$san")" ]; then
		{
			echo "(sanitizer reports in $san:)"
			head -n 60 "$san"/*
		} >>"$log"
		if grep -qE "ERROR: (AddressSanitizer|ThreadSanitizer)|runtime error:|WARNING: ThreadSanitizer" \
			"$san"/* && { [ $rc -eq 0 ] || [ $rc -eq 77 ]; }; then
			rc=99
		fi
	fi
	secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "$rc $secs $log" >"$RESULTS/${name//\//_}"
}

pass=0 fail=0 skip=0
failed=()
declare -A running=() # pid -> test
# report PID -- print the result of the finished test PID ran
report() {
	local name rc secs log
	test_name name "${running[$1]}"
	unset "running[$1]"
	read -r rc secs log <"$RESULTS/${name//\//_}" || { rc=1 secs=0 log="(no result)"; }
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		printf 'PASS %-40s %6.1fs\n' "$name" "$secs"
	elif [ "$rc" -eq 77 ] && [ "${CI:-}" != "true" ]; then
		skip=$((skip + 1))
		printf 'SKIP %-40s %s\n' "$name" "$(tail -n 1 "$log")"
	else
		fail=$((fail + 1))
		failed+=("$name")
		[ "$rc" -eq 77 ] && echo "(skipped under CI=true, which counts as a failure)" >>"$log"
		[ "$rc" -eq 124 ] && echo "(timed out after ${TIMEOUT}s)" >>"$log"
		printf 'FAIL %-40s %6.1fs (exit %d, log %s)\n' "$name" "$secs" "$rc" "$log"
		tail -n 40 "$log" | sed 's/^/    | /'
	fi
}
# wait_one -- wait for any running test and report it
wait_one() {
	local pid
	wait -n -p pid "${!running[@]}"
	report "$pid"
}
for t in "${alone[@]}"; do
	run_one "$t" &
	running[$!]=$t
	wait_one
done
for t in "${shared[@]}"; do
	while [ ${#running[@]} -ge "$JOBS" ]; do wait_one; done
	run_one "$t" &
	running[$!]=$t
done
while [ ${#running[@]} -gt 0 ]; do wait_one; done
echo
[ ${#failed[@]} -gt 0 ] && echo "failed: ${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
