#!/bin/bash
# stalls.sh -- the stall account of a PostgreSQL server, on any disk: for
# every wait of a PostgreSQL process for WAL (a WAL sync, a WAL write, a
# lock such as WALWriteLock) of at least a threshold, what it waited on:
# pgiofs's queue, a device queue slot, the device, a journal commit, a WAL
# segment another backend was making, a lock, a CPU (bench/stalls.py says
# how each is told).  bench/stalls.bt traces every process named
# "postgres" and the pgiofs daemon's threads on the machine while COMMAND
# runs (a benchmark, `pgload run`, ...) or for SECONDS (a server already
# running), then the account is printed, and after it the longest other
# waits of PostgreSQL's processes over the threshold (a read, a close that
# writes its file back, ...) with what each blocked in.
#
#   sudo bench/stalls.sh [--threshold-ms MS] [--events FILE] [--json] -- COMMAND [ARGS...]
#   sudo bench/stalls.sh [--threshold-ms MS] [--events FILE] [--json] --seconds N
#
# --events FILE keeps the events (stalls.py FILE prints the account again,
# with another threshold).  Exit status: COMMAND's, or 1 with a message if
# the account could not be made.  Needs root and bpftrace (tracepoints
# only: sched, syscalls).  docs/performance.md has a run of it.
set -u
ME=stalls.sh
TOP=$(cd "$(dirname "$0")/.." && pwd)
source "$TOP/bench/lib.sh"

usage() {
	sed -n '14,15p' "$0" | sed 's/^# *//' >&2
	exit 2
}
THRESHOLD=500 EVENTS='' JSON='' SECONDS_=''
while [ $# -gt 0 ]; do
	case "$1" in
	--threshold-ms) [ $# -ge 2 ] || usage; THRESHOLD=$2; shift 2 ;;
	--events) [ $# -ge 2 ] || usage; EVENTS=$2; shift 2 ;;
	--json) JSON=--json; shift ;;
	--seconds) [ $# -ge 2 ] || usage; SECONDS_=$2; shift 2 ;;
	--) shift; break ;;
	-h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "$ME: unknown argument \"$1\"" >&2; usage ;;
	esac
done
range --threshold-ms "$THRESHOLD" 1 3600000
if [ -n "$SECONDS_" ]; then
	range --seconds "$SECONDS_" 1 86400
	[ $# -eq 0 ] || die "--seconds and a COMMAND: give one of them"
else
	[ $# -gt 0 ] || die "no COMMAND to trace and no --seconds"
fi
[ "$(id -u)" -eq 0 ] || die "needs root (bpftrace)"
command -v bpftrace >/dev/null || die "needs bpftrace (apt-get install bpftrace)"
need_tracefs
command -v python3 >/dev/null || die "needs python3"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/stalls.XXXXXX") || die "cannot make a work directory"
BT=
cleanup() {
	[ -n "$BT" ] && kill -INT "$BT" 2>/dev/null && wait "$BT" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
OUT=${EVENTS:-$WORK/events}
: >"$OUT" || die "cannot write the events to $OUT"
bpftrace "$TOP/bench/stalls.bt" >"$OUT" 2>"$WORK/bpftrace.err" &
BT=$!
for ((i = 0; i < 300; i++)); do
	grep -q '^stalls.bt ' "$OUT" && break
	kill -0 "$BT" 2>/dev/null || { BT=; fail_log "bpftrace $TOP/bench/stalls.bt failed" "$WORK/bpftrace.err"; }
	sleep 0.1
done
grep -q '^stalls.bt ' "$OUT" || fail_log "bpftrace did not start in 30 s" "$WORK/bpftrace.err"
status=0
if [ -n "$SECONDS_" ]; then
	sleep "$SECONDS_"
else
	"$@" || status=$?
fi
kill -INT "$BT" 2>/dev/null
wait "$BT" 2>/dev/null
BT=
python3 "$TOP/bench/stalls.py" --threshold-ms "$THRESHOLD" $JSON "$OUT" || die "bench/stalls.py failed on $OUT"
exit "$status"
