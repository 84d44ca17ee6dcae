#!/bin/bash
# test_uring.sh -- fuse.uring (FUSE over io_uring):
#   - yes where the kernel does not offer it (enable_uring = N) is refused
#     by name before anything is mounted; auto then mounts over /dev/fuse
#     and `pgiofs stat` says why;
#   - with the kernel's switch on, yes and auto take requests over the
#     rings: one pinned "pgiofs-ring" thread per CPU, `pgiofs stat` counts
#     the requests served there, and data written in parallel (replies from
#     the scheduler's threads) and through a WAL mount (a connection of its
#     own) reads back; no keeps /dev/fuse;
#   - when the kernel refuses the entries after INIT offered the ring
#     (simulated), the requests it holds are released to /dev/fuse: auto
#     serves there, yes fails leaving nothing mounted;
#   - unmount, SIGTERM and SIGKILL of the daemon with requests in flight
#     end within seconds: no caller and no daemon hangs.
# The test sets /sys/module/fuse/parameters/enable_uring itself and puts the
# value it found back at exit.
# run alone: it sets the kernel's FUSE over io_uring switch, which every
# new mount on the machine follows (tests/run.sh)
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ncpu=$(getconf _NPROCESSORS_CONF)

ring_threads() { grep -lx pgiofs-ring /proc/"$1"/task/*/comm 2>/dev/null | wc -l; }
daemon_of() { pgrep -f "pgiofs .*$1\$" | head -n 1; }
rings_of() { ls -l /proc/"$1"/fd | grep -c 'anon_inode:\[io_uring\]'; }
# limit_leaving PID K -- the descriptor limit that leaves PID K numbers free
limit_leaving() {
	python3 -c 'import os, sys
used = {int(f) for f in os.listdir("/proc/%s/fd" % sys.argv[1])}
free, n = int(sys.argv[2]), 0
while n in used or free > 0:
    free -= n not in used
    n += 1
print(n)' "$1" "$2"
}
ring_requests() { "$BIN/pgiofs" stat "$1" --json | sed -n 's/.*"uring_requests":\([0-9]*\).*/\1/p'; }

# 1. switch off: yes is refused before mounting, auto falls back and says so
uring_switch N
if out=$("$BIN/pgiofs" -o fuse.uring=yes "$B" "$M" 2>&1); then
	_cleanup_mounts+=("$M")
	fail "fuse.uring=yes mounted with $URING_SWITCH = N"
fi
grep -q "cannot mount \"$M\" with fuse.uring = yes: .*enable_uring = Y" <<<"$out" ||
	fail "the refusal does not say why: $out"
assert_no_mount "$M"
[ -z "$(daemon_of "$M")" ] || fail "a daemon is left after the refusal"
echo "ok: fuse.uring=yes refused with the switch off ($out)"
pgiofs_mount "$B" "$M"
st=$("$BIN/pgiofs" stat "$M")
grep -q "requests over /dev/fuse: .*enable_uring = Y" <<<"$st" ||
	fail "auto with the switch off: pgiofs stat does not say why there is no ring: $st"
[ "$(ring_threads "$(daemon_of "$M")")" -eq 0 ] || fail "ring threads with the switch off"
pgiofs_umount "$M" || fail "unmount failed"
echo "ok: auto with the switch off serves over /dev/fuse and says why"

# 2. switch on: requests over the rings
uring_switch Y
for mode in yes auto; do
	pgiofs_mount "$B" "$M" -o fuse.uring=$mode
	pid=$(daemon_of "$M")
	st=$("$BIN/pgiofs" stat "$M")
	grep -q "requests over io_uring ($ncpu queues x 1 threads x 8 entries)" <<<"$st" ||
		fail "fuse.uring=$mode: pgiofs stat does not show the rings: $st"
	[ "$(ring_threads "$pid")" -eq "$ncpu" ] ||
		fail "fuse.uring=$mode: $(ring_threads "$pid") ring threads, $ncpu CPUs"
	before=$(ring_requests "$M")
	python3 -c 'import os, sys
for i in range(2000): os.statvfs(sys.argv[1])' "$M"
	after=$(ring_requests "$M")
	[ $((after - before)) -ge 2000 ] ||
		fail "fuse.uring=$mode: 2000 statfs, the rings served $((after - before)) requests"
	# parallel writers, fsync, reads: replies come from the scheduler's
	# threads as well as from the ring threads
	for i in 1 2 3 4; do
		head -c $((3000000 + i * 4096)) /dev/urandom >"$T/src$i"
		dd if="$T/src$i" of="$M/f$i" bs=64k conv=fsync status=none &
	done
	wait
	for i in 1 2 3 4; do
		cmp -s "$T/src$i" "$M/f$i" || fail "fuse.uring=$mode: f$i reads back different bytes"
		dd if="$M/f$i" of=/dev/null bs=1M iflag=direct status=none ||
			fail "fuse.uring=$mode: O_DIRECT read of f$i failed"
	done
	pgiofs_umount "$M" || fail "unmount failed"
	echo "ok: fuse.uring=$mode: $ncpu ring threads, $((after - before)) requests over the rings for 2000 statfs, parallel writes read back"
done

# a WAL mount (a connection of its own, over the pg_wal directory of a
# data directory) gets a ring of its own: its requests are counted too
mkdir -p "$B/pg/pg_wal"
echo 15 >"$B/pg/PG_VERSION"
pgiofs_mount "$B" "$M" -o fuse.uring=yes
is_mounted "$M/pg/pg_wal" || fail "no WAL mount over $M/pg/pg_wal"
pid=$(daemon_of "$M")
[ "$(ring_threads "$pid")" -eq $((2 * ncpu)) ] ||
	fail "$(ring_threads "$pid") ring threads for the mount and its WAL mount, $ncpu CPUs"
head -c 1048576 /dev/urandom >"$T/wal"
dd if="$T/wal" of="$M/pg/pg_wal/000000010000000000000001" bs=8k oflag=dsync status=none ||
	fail "a write through the WAL mount failed"
cmp -s "$T/wal" "$M/pg/pg_wal/000000010000000000000001" || fail "WAL reads back different bytes"
# a pg_wal made through the mount gets its WAL mount from a handler, in a
# ring thread pinned to one CPU: the WAL mount's threads must not inherit it
mkdir "$M/pg2" && echo 15 >"$M/pg2/PG_VERSION" && mkdir "$M/pg2/pg_wal"
for ((i = 0; i < 100; i++)); do is_mounted "$M/pg2/pg_wal" && break; sleep 0.1; done
is_mounted "$M/pg2/pg_wal" || fail "no WAL mount over $M/pg2/pg_wal made through the mount"
all=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/"$pid"/status)
for t in /proc/"$pid"/task/*; do
	case $(cat "$t/comm") in pgiofs-walmnt | pgiofs-fuse)
		[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "$t/status")" = "$all" ] ||
			fail "$(cat "$t/comm") thread $(basename "$t") runs on CPUs $(awk '/^Cpus_allowed_list/ { print $2 }' "$t/status") only, the daemon on $all" ;;
	esac
done
# a WAL mount that ends gives its rings back: a daemon that sees many
# initdbs does not pile them up until it runs out of descriptors
n=$(rings_of "$pid")
umount "$M/pg2/pg_wal" || fail "cannot unmount a WAL mount by itself"
for ((i = 0; i < 100; i++)); do [ "$(rings_of "$pid")" -le $((n - ncpu)) ] && break; sleep 0.1; done
[ "$(rings_of "$pid")" -le $((n - ncpu)) ] ||
	fail "a WAL mount ended: the daemon still has $(rings_of "$pid") rings open, $n before"
pgiofs_umount "$M" || fail "unmount failed"
rm -rf "${B:?}/pg" "${B:?}/pg2"
echo "ok: the WAL mounts have rings of their own, their threads are not pinned; WAL written through one reads back; an ended one's rings are closed"

# 2c. no ring can be set up for a WAL mount (its connection's INIT reply
# offered one) because the daemon is out of descriptors: the kernel would
# hold every request of the connection until each queue has an entry;
# pgiofs turns the ring off and serves over /dev/fuse.  For every number of
# descriptors left when the WAL mount is made (pg_wal renamed into place).
pgiofs_mount_fg "$T/log" "$B" "$M" -o fuse.uring=yes
pid=$PGIOFS_PID
soft=$(prlimit --pid "$pid" --nofile --output SOFT --noheadings)
on_exit "prlimit --pid $pid --nofile=$soft:"
# (from 1: the rename looks the new name up, which takes one for a moment)
for ((k = 1; k <= 2 * ncpu + 6; k++)); do
	mkdir -p "$M/e$k/wal"
	prlimit --pid "$pid" --nofile="$(limit_leaving "$pid" "$k")": || fail "prlimit failed"
	python3 -c 'import os, sys; os.rename(sys.argv[1] + "/wal", sys.argv[1] + "/pg_wal")' "$M/e$k" ||
		fail "the rename into pg_wal failed with $k descriptors left"
	for ((i = 0; i < 100; i++)); do
		grep -qE "WAL mount over \"$M/e$k/pg_wal\"( \(passthrough\)|.*opened direct)" "$T/log" && break
		sleep 0.1
	done
	prlimit --pid "$pid" --nofile="$soft": || fail "prlimit failed"
	timeout 20 sh -c "echo $k >'$M/e$k/pg_wal/f' && [ \"\$(cat '$M/e$k/pg_wal/f')\" = $k ]" ||
		fail "a WAL mount made with $k descriptors left: its requests hang or fail; the daemon says: $(grep -F "$M/e$k/" "$T/log")"
done
# the sweep went through the failure in question
grep -q "WAL mount over \"$M/e[0-9]*/pg_wal\": requests over /dev/fuse: the ring could not be set up: Too many open files" "$T/log" ||
	fail "no WAL mount of the sweep failed to set its ring up: $(grep -F "$M/e" "$T/log")"
pgiofs_umount "$M" || fail "unmount failed"
rm -rf "${B:?}"/e*
echo "ok: WAL mounts made with 1 to $((k - 1)) descriptors left: none hangs; $(grep -c "$M/e[0-9]*/pg_wal\": requests over /dev/fuse: the ring could not be set up" "$T/log") had no ring, served over /dev/fuse"

# 2b. the kernel refuses the entries after INIT promised a ring (simulated,
# [fault] uring_refused): pgiofs makes it release the requests it holds to
# /dev/fuse; auto serves there and says why, yes fails and leaves nothing
pgiofs_mount "$B" "$M" --allow-faults -o fuse.uring=auto -o fault.uring_refused=yes
timeout 20 python3 -c 'import os, sys
for i in range(100): os.statvfs(sys.argv[1])' "$M" || fail "auto with the rings refused: requests hang"
echo x >"$M/refused" && [ "$(cat "$M/refused")" = x ] || fail "auto with the rings refused: no I/O"
st=$("$BIN/pgiofs" stat "$M")
grep -q "requests over /dev/fuse: the ring could not be set up" <<<"$st" ||
	fail "auto with the rings refused: pgiofs stat does not say why: $st"
pgiofs_umount "$M" || fail "unmount failed"
rm -f "$B/refused"
if out=$(timeout 20 "$BIN/pgiofs" -f --allow-faults -o fuse.uring=yes -o fault.uring_refused=yes \
	"$B" "$M" 2>&1); then
	fail "fuse.uring=yes served with the rings refused"
fi
grep -q "cannot serve \"$M\" with fuse.uring = yes: the ring could not be set up" <<<"$out" ||
	fail "yes with the rings refused: the message does not say why: $out"
assert_no_mount "$M"
echo "ok: the rings refused after INIT: auto serves over /dev/fuse, yes fails and leaves no mount"

# 3. fuse.uring=no keeps /dev/fuse
pgiofs_mount "$B" "$M" -o fuse.uring=no
st=$("$BIN/pgiofs" stat "$M")
grep -q "requests over /dev/fuse: fuse.uring = no" <<<"$st" || fail "fuse.uring=no: $st"
[ "$(ring_threads "$(daemon_of "$M")")" -eq 0 ] || fail "ring threads with fuse.uring=no"
pgiofs_umount "$M" || fail "unmount failed"
echo "ok: fuse.uring=no serves over /dev/fuse"

# 4. requests in flight when the mount or the daemon goes: nobody hangs
# busy -- writers and statfs callers on the mount, each until a call fails
# or $M is no longer the mount (after a lazy unmount a path reaches the
# directory below)
busy() {
	local i dev
	dev=$(stat -c %d "$M")
	for i in 1 2 3 4; do
		(while [ "$(stat -c %d "$M" 2>/dev/null)" = "$dev" ] &&
			dd if=/dev/zero of="$M/busy$i" bs=1M count=8 conv=fsync status=none 2>/dev/null; do :; done) &
		(python3 -c 'import os, sys
dev = int(sys.argv[2])
while os.stat(sys.argv[1]).st_dev == dev: os.statvfs(sys.argv[1])' "$M" "$dev" 2>/dev/null) &
	done
	sleep 1
}
# ends_within SECONDS -- every job of the test shell and the daemon $pid end
ends_within() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		[ -z "$(jobs -pr)" ] && ! kill -0 "$pid" 2>/dev/null && return 0
		sleep 0.1
	done
	jobs -pr | xargs -r kill -9 2>/dev/null
	return 1
}
for how in umount TERM KILL; do
	pgiofs_mount "$B" "$M" -o fuse.uring=yes
	pid=$(daemon_of "$M")
	busy
	case $how in
	umount) umount -l "$M" ;;
	TERM) kill -TERM "$pid" ;;
	KILL) kill -KILL "$pid" && umount -l "$M" ;;
	esac
	# (SIGTERM on a busy mount waits until requests stop for 0.5 s, 30 s
	# at most, as over /dev/fuse)
	ends_within 60 || fail "$how with requests in flight: callers or the daemon still run after 60 s"
	wait
	assert_no_mount "$M"
	rm -f "$M"/busy* # a writer may have reached the directory below
	echo "ok: $how with requests in flight over the rings: callers and daemon ended"
done
rm -f "$B"/busy*
