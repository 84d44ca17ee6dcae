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
# tests/run.sh runs them, two at a time (JOBS) as in make check, with their
# logs apart from make check's own; the switch stays set until all end
SUITE=(fuse/test_postgres.sh fuse/test_fill.sh fuse/test_crash.sh fuse/test_walmount.sh
	fuse/test_differential.sh fuse/test_space_guard.sh fuse/test_writebehind.sh
	fuse/test_syscalls.sh)
out=$(TEST_LOGDIR=$(mktempdir) "$TOP/tests/run.sh" "${SUITE[@]}")
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "with fuse.uring=yes: the tests above"
grep -q "^${#SUITE[@]} passed" <<<"$out" || fail "with fuse.uring=yes: not all ${#SUITE[@]} tests ran"
