#!/bin/bash
# test_uring_suite.sh -- a representative part of the fuse/ tests run again
# with FUSE over io_uring: POSIX behaviour (syscalls), the differential
# test against the backing filesystem, PostgreSQL on the mount, a disk
# filled to ENOSPC (and a write(2) failing with it through the space
# guard), crashes of the postmaster, WAL mounts, and the write
# cache (an early acknowledged write must be answered before its backing
# write: a reply is committed at once, not when its handler returns).  The kernel's
# switch (/sys/module/fuse/parameters/enable_uring) is set for the run and
# put back at exit; the mounts the tests make with lib.sh's helpers get
# -o fuse.uring=yes (so a mount without a ring fails), the others (pgload's)
# take the default, auto, which uses the ring the switch offers.
# run alone: it sets the kernel's FUSE over io_uring switch, which every
# new mount on the machine follows (tests/run.sh)
source "$(dirname "$0")/../lib.sh"
need_root

uring_switch Y

export PGIOFS_TEST_URING=yes
# the suite's own lengths: in make check one crash and 1500 operations per
# differential seed (the transport is what differs: the tests themselves
# run in full over /dev/fuse); in full with LONG=1
if [ "${LONG:-0}" != 1 ]; then
	export CRASH_ITERATIONS=${CRASH_ITERATIONS:-1} FSX_OPS=${FSX_OPS:-1500}
fi
dir=$(dirname "$0")
W=$(mktempdir)
# two at a time, as tests/run.sh runs the suite (each test makes its own
# directories, mounts and servers); the switch stays set until both end
JOBS=${JOBS:-2}
declare -A running=() # pid -> test
# collect PID -- the result of the finished test PID ran
collect() {
	local t=${running[$1]} rc secs
	unset "running[$1]"
	read -r rc secs <"$W/$t.rc" || rc=1 secs=0
	if [ "$rc" -eq 0 ]; then
		echo "ok: $t with fuse.uring=yes ($secs s)"
		return
	fi
	tail -n 20 "$W/$t.log" | sed "s/^/    $t: /"
	if [ "$rc" -eq 77 ] && [ "${CI:-}" != true ]; then
		echo "skipped: $t: $(tail -n 1 "$W/$t.log")"
		return
	fi
	failed+=("$t")
}
failed=()
# the longest first
for t in test_postgres.sh test_fill.sh test_crash.sh test_walmount.sh test_differential.sh \
	test_space_guard.sh test_writebehind.sh test_syscalls.sh; do
	while [ ${#running[@]} -ge "$JOBS" ]; do
		wait -n -p pid "${!running[@]}"
		collect "$pid"
	done
	(
		start=$SECONDS
		bash "$dir/$t" >"$W/$t.log" 2>&1
		echo "$? $((SECONDS - start))" >"$W/$t.rc"
	) &
	running[$!]=$t
done
while [ ${#running[@]} -gt 0 ]; do
	wait -n -p pid "${!running[@]}"
	collect "$pid"
done
[ ${#failed[@]} -eq 0 ] || fail "with fuse.uring=yes: ${failed[*]}"
