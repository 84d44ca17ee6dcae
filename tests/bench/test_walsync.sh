#!/bin/bash
# test_walsync.sh -- bench/walsync.bt, what a commit's WAL sync waits for
# (bench/passthrough.sh --walsync), counts what it should and only that.
#
# A process named postgres in a cgroup of the test's own makes 20
# fdatasync calls on a file of a pgiofs mount: walsync.bt, given that
# cgroup, the mount's FUSE connection and the daemon's pid, must count 20
# calls of PostgreSQL (@pg), 20 FSYNC requests (@req), each taking no
# longer than the call that sent it on average, and 20 fdatasync calls of
# the daemon (@daemon), each within its request.  Outside its filters,
# not counted: 10 fdatasync calls of a process with another name in the
# same cgroup, and 5 of a process named postgres outside it.
source "$(dirname "$0")/../lib.sh"
need_root
command -v bpftrace >/dev/null || fail "bpftrace is not installed (make deps installs it)"
# bpftrace's tracepoints need tracefs (bench/lib.sh, need_tracefs)
[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing ||
	fail "cannot mount tracefs on /sys/kernel/tracing"
CGROOT=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
[ -n "$CGROOT" ] || fail "no cgroup2 file system is mounted"

T=$(mktempdir)
mkdir "$T/b" "$T/m"
pgiofs_mount "$T/b" "$T/m"
DAEMON=$(pgrep -f -- " $T/m\$" | head -n 1)
[ -n "$DAEMON" ] || fail "no pgiofs process serves $T/m"
echo "daemon $DAEMON: $(tr '\0' ' ' <"/proc/$DAEMON/cmdline")"
CONN=$(mountpoint -d "$T/m") && CONN=${CONN#*:}
CG=$CGROOT/pgiofs-test-walsync.$$
mkdir "$CG" || fail "cannot make the cgroup $CG"
on_exit "rmdir '$CG'"

# syncs NAME FILE N -- helper_fdatasync, copied as NAME (its command name),
# writes and fdatasyncs FILE N times
HELPER=$TESTBUILD/bench/helper_fdatasync
[ -x "$HELPER" ] || fail "$HELPER is missing: run make"
cp "$HELPER" "$T/postgres" && cp "$HELPER" "$T/other" || fail "cannot copy $HELPER"
syncs() {
	"$T/$1" "$2" "$3" || fail "$1: $3 fdatasync calls on $2 failed"
}
in_cg() { ( echo "$BASHPID" >"$CG/cgroup.procs" && "$@" ); }

OUT=$T/walsync.out
bpftrace "$TOP/bench/walsync.bt" "$(stat -c %i "$CG")" "$CONN" "$DAEMON" >"$OUT" 2>"$T/bt.err" &
BT=$!
on_exit "kill -INT $BT 2>/dev/null"
for ((i = 0; i < 300; i++)); do
	grep -qs '^Attaching' "$OUT" && break
	kill -0 "$BT" 2>/dev/null || { cat "$T/bt.err" >&2; fail "bpftrace bench/walsync.bt failed"; }
	sleep 0.1
done
grep -qs '^Attaching' "$OUT" || fail "bpftrace did not attach in 30 s"

in_cg syncs postgres "$T/m/wal" 20 || exit 1
in_cg syncs other "$T/b/other" 10 || exit 1
syncs postgres "$T/b/outside" 5
kill -INT "$BT"
wait "$BT"
cat "$OUT"

# field MAP FIELD -- from bpftrace's stats() line "@pg: count 20, average 212, total 4240"
field() {
	awk -v m="@$1:" -v f="$2" '$1 == m {
		for (i = 2; i < NF; i++) if ($i == f) { v = $(i + 1); sub(",", "", v); print v } }' "$OUT"
}
[ "$(field pg count)" = 20 ] || fail "walsync.bt counted $(field pg count) fdatasync calls of PostgreSQL, want 20"
[ "$(field req count)" = 20 ] || fail "walsync.bt counted $(field req count) FSYNC requests, want 20"
[ "$(field daemon count)" = 20 ] || fail "walsync.bt counted $(field daemon count) fdatasync calls of the daemon, want 20"
[ "$(field req average)" -le "$(field pg average)" ] ||
	fail "an FSYNC request took longer ($(field req average) us) than the fdatasync that sent it ($(field pg average) us)"
[ "$(field daemon average)" -le "$(field req average)" ] ||
	fail "the daemon's fdatasync took longer ($(field daemon average) us) than the request it served ($(field req average) us)"
echo ok
