#!/bin/bash
# test_memory.sh -- pgdisk does not deadlock under memory pressure: pgdisk
# and a writer share a memory cgroup limited to 32 MiB (18 MiB more than
# pgdisk itself uses; cgroup v2
# memory.max, or memory.limit_in_bytes where the memory controller is on a
# v1 hierarchy); the writer puts 768 MiB through the page cache of an ext4
# on the loop device over pgdisk's disk and fsyncs it.  Reclaim in that
# cgroup meets dirty and writeback pages of the loop device all the time; a
# server whose own allocations wait for that writeback waits for itself
# (without mlockall and PR_SET_IO_FLUSHER this hangs in folio_wait_bit
# within seconds).
# The write must finish within 60 s (4 s of modelled time at 200 MB/s),
# with no OOM kill, and the cgroup must have hit its limit.  A hang is ended
# by aborting the FUSE connection, so that the test can still clean up.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

# the limit: what pgdisk uses once started (its locked memory, about 14
# MiB; far more in a sanitizer build) plus 18 MiB for the writer: 32 MiB in
# all for a release build.  With 64 MiB in all an unprotected pgdisk hung in
# about half of the runs, with 32 in every run.
ROOM=$((18 << 20))
WRITE_MB=768
TIMEOUT=60

# PR_SET_IO_FLUSHER needs CAP_SYS_RESOURCE, which some containers withhold
HAVE_IO_FLUSHER=0
(((0x$(awk '/^CapEff/ { print $2 }' /proc/self/status) >> 24) & 1)) && HAVE_IO_FLUSHER=1
# a sanitizer's runtime allocates as the program runs (shadow memory faulted
# in on first touch, ASan's quarantine of freed blocks), locked or not: such
# a pgdisk needs memory on the request path, which is what this test denies
if grep -qa -e __tsan_init -e __asan_init "$PGDISK"; then
	skip "a sanitizer build allocates as it runs (shadow memory, quarantine): the" \
		"memory-pressure test is for the release build"
fi

# a memory cgroup of our own: v2 where the memory controller is there,
# else under our own v1 memory cgroup (so the limits above ours still hold)
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
V1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
if [ -n "$V2" ] && grep -qw memory "$V2/cgroup.subtree_control" 2>/dev/null; then
	CG="$V2/pgdisk-test.$$"
	mkdir "$CG" || fail "cannot create cgroup $CG"
	on_exit "rmdir $CG"
	echo 0 >"$CG/memory.swap.max" 2>/dev/null
	usage() { cat "$CG/memory.current"; }
	set_limit() { echo "$1" >"$CG/memory.max" || fail "cannot set $CG/memory.max"; }
	hits() { awk '$1 == "max" { print $2 }' "$CG/memory.events"; }
	ooms() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.events"; }
	echo "cgroup v2: $CG (memory.max)"
elif [ -n "$V1" ]; then
	CG="$V1$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)/pgdisk-test.$$"
	CG=${CG/\/\//\/}
	mkdir "$CG" || fail "cannot create cgroup $CG"
	on_exit "rmdir $CG"
	usage() { cat "$CG/memory.usage_in_bytes"; }
	set_limit() { echo "$1" >"$CG/memory.limit_in_bytes" || fail "cannot set the limit of $CG"; }
	hits() { cat "$CG/memory.failcnt"; }
	ooms() { awk '$1 == "oom_kill" { print $2 }' "$CG/memory.oom_control"; }
	echo "cgroup v1 (the memory controller is on a v1 hierarchy here): $CG"
else
	skip "no memory cgroup controller (cgroup v2 memory.max or v1 memory)"
fi

D=$(mktempdir)
mkdir "$D/m" "$D/fs"
disk_image "$D/img" 1G
# pgdisk in the cgroup (its daemonized child stays there)
(echo $BASHPID >"$CG/cgroup.procs" && exec "$PGDISK" --set seq_mb_s=200 "$D/img" "$D/m") ||
	fail "pgdisk did not start in $CG"
DISK_PID=$(disk_pid "$D/m")
[ -n "$DISK_PID" ] || fail "no pgdisk serves $D/m"
on_exit "disk_stop $D/m $DISK_PID"
grep -qx "$DISK_PID" "$CG/cgroup.procs" || fail "pgdisk is not in $CG"
grep -q '^VmLck:.*[1-9]' "/proc/$DISK_PID/status" || fail "pgdisk has no locked memory"
# PR_SET_IO_FLUSHER shows as PF_MEMALLOC_NOIO (0x80000) in the task flags
pf=$(awk '{ print $9 }' "/proc/$DISK_PID/stat")
if [ $HAVE_IO_FLUSHER = 1 ]; then
	((pf & 0x80000)) || fail "pgdisk runs without PR_SET_IO_FLUSHER"
	echo "pgdisk runs with PR_SET_IO_FLUSHER and locked memory"
else
	echo "no CAP_SYS_RESOURCE here: pgdisk runs with locked memory but without PR_SET_IO_FLUSHER"
fi
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$LOOP" || fail "mkfs.ext4"
fs_mount "$LOOP" "$D/fs"

LIMIT=$(($(usage) + ROOM))
set_limit $LIMIT
echo "pgdisk uses $(($(usage) >> 20)) MiB; limit $((LIMIT >> 20)) MiB"
hits0=$(hits)
(echo $BASHPID >"$CG/cgroup.procs" &&
	exec dd if=/dev/zero of="$D/fs/big" bs=1M count=$WRITE_MB conv=fsync status=none) &
writer=$!
start=$SECONDS
while kill -0 $writer 2>/dev/null && [ $((SECONDS - start)) -lt $TIMEOUT ]; do
	sleep 0.5
done
if kill -0 $writer 2>/dev/null; then
	ps -o pid,stat,wchan:32,cmd -p "$writer,$DISK_PID" >&2
	fuse_abort "$D/m"
	wait $writer
	fail "the write did not finish in $TIMEOUT s: pgdisk deadlocked under memory pressure"
fi
wait $writer || fail "the write failed"
echo "wrote $WRITE_MB MiB and fsynced in $((SECONDS - start)) s under a $((LIMIT >> 20)) MiB limit"
[ "$(stat -c %s "$D/fs/big")" -eq $((WRITE_MB << 20)) ] || fail "the file has the wrong size"
echo "limit hit $(($(hits) - hits0)) times, OOM kills $(ooms)"
[ "$(($(hits) - hits0))" -gt 0 ] || fail "the cgroup never reached its limit: no memory pressure"
[ "$(ooms)" -eq 0 ] || fail "OOM kills in $CG"
kill -0 "$DISK_PID" || fail "pgdisk died"
[ "$(stat_of "$D/m" errors)" -eq 0 ] || fail "pgdisk counted errors"
echo "ok"
