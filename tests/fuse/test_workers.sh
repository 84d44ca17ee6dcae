#!/bin/bash
# test_workers.sh -- the session loop's tunables do what they say:
#   - fuse.max_threads and fuse.max_idle_threads: workers are started as
#     requests come in parallel (more than max_idle_threads, never more than
#     max_threads), and once the load is gone, requests coming one at a
#     time make the spare ones exit until at most max_idle_threads wait
#     (beside the worker that served the last request), no faster than one
#     per fuse.worker_exit_ms;
#   - fuse.clone_fd: with yes each worker reads from a /dev/fuse descriptor
#     of its own (the daemon holds more than one), with no there is one;
#     either way every byte written in parallel reads back.
# Workers are the threads named "pgiofs-fuse" (fuse.uring = no: with FUSE
# over io_uring, ring threads take the requests instead; test_uring.sh).
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"

workers() { grep -lx pgiofs-fuse /proc/"$PID"/task/*/comm 2>/dev/null | wc -l; }
fuse_fds() { find /proc/"$PID"/fd -lname /dev/fuse 2>/dev/null | wc -l; }

# one_at_a_time.py FILE PID -- O_DIRECT reads of FILE one at a time, 20 ms
# apart, until the daemon PID has at most 3 workers (at most 1000 reads);
# prints the workers at the start, the reads and the seconds it took
cat >"$T/one_at_a_time.py" <<'PY'
import mmap, os, sys, time
def workers():
    n = 0
    for t in os.listdir("/proc/%s/task" % sys.argv[2]):
        try:
            with open("/proc/%s/task/%s/comm" % (sys.argv[2], t)) as f:
                n += f.read().strip() == "pgiofs-fuse"
        except OSError:
            pass
    return n
buf = mmap.mmap(-1, 4096)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
start, t0 = workers(), time.monotonic()
for i in range(1000):
    assert os.preadv(fd, [buf], (i % 256) * 4096) == 4096
    if workers() <= 3:
        break
    time.sleep(0.02)
os.close(fd)
print(start, i + 1, "%.3f" % (time.monotonic() - t0))
PY

# round CLONE -- one mount with max_threads 6, max_idle_threads 2, a worker
# exit a second at most.
# shellcheck disable=SC2030,SC2031 # PID is this function's
round() {
	local clone=$1 i peak=0 n
	# WAL direct: a WAL mount would be a session of its own, with its own
	# workers and descriptor (test_walmount.sh)
	# workers, every WAL write held 20 ms in the worker that runs it
	# (fault.delay_ms): the parallel writers need more workers whatever
	# the disk's speed (a fast disk once served them with two)
	pgiofs_mount "$B" "$M" -o fuse.uring=no -o clone_fd="$clone" -o max_threads=6 -o max_idle_threads=2 -o worker_exit_ms=1000 \
		-o wal_mode=direct --allow-faults -o fault.class=wal -o fault.direction=write \
		-o fault.nth=1 -o fault.count=0 -o fault.delay_ms=20
	PID=$(pgrep -f "pgiofs .* $M\$" | head -1)
	[ -n "$PID" ] || fail "cannot find the daemon of $M"
	# 12 parallel writers of 1 MiB of WAL in O_DSYNC 64 KiB writes: each
	# write and its fsync run inline in a worker, which waits
	mkdir -p "$M/pg_wal"
	for i in $(seq 12); do
		[ -f "$T/src$i" ] || head -c $((1 << 20)) /dev/urandom >"$T/src$i"
	done
	for i in $(seq 12); do
		dd if="$T/src$i" of="$M/pg_wal/f$i" bs=64k oflag=direct,dsync status=none &
	done
	while [ -n "$(jobs -r)" ]; do
		n=$(workers)
		[ "$n" -gt "$peak" ] && peak=$n
		sleep 0.01
	done
	wait
	n=$(workers)
	[ "$n" -gt "$peak" ] && peak=$n
	echo "clone_fd=$clone: at most $peak workers under load, $(fuse_fds) /dev/fuse descriptors"
	[ "$peak" -gt 2 ] || fail "clone_fd=$clone: never more than $peak workers under 12 parallel writers"
	[ "$peak" -le 6 ] || fail "clone_fd=$clone: $peak workers, max_threads is 6"
	if [ "$clone" = yes ]; then
		[ "$(fuse_fds)" -gt 2 ] || fail "clone_fd=yes: only $(fuse_fds) /dev/fuse descriptors"
	else
		[ "$(fuse_fds)" -eq 1 ] || fail "clone_fd=no: $(fuse_fds) /dev/fuse descriptors"
	fi
	# requests one at a time (reads through one descriptor): the spare
	# workers exit until max_idle_threads wait, beside the one that served
	# the last request, one per fuse.worker_exit_ms (1 s here) at most:
	# from START workers to 3 takes at least START - 4 seconds
	local start secs
	read -r start n secs < <(python3 "$T/one_at_a_time.py" "$M/pg_wal/f1" "$PID") ||
		fail "clone_fd=$clone: a read failed"
	[ -n "$secs" ] || fail "clone_fd=$clone: a read failed"
	echo "clone_fd=$clone: from $start workers to at most 3 in $n requests, $secs s"
	# after the load only its RELEASEs came, within a second: one exit
	# (a margin of one more)
	if [ "$peak" -ge 5 ] && [ "$start" -lt $((peak - 2)) ]; then
		fail "clone_fd=$clone: $start workers left of $peak right after the load"
	fi
	if [ "$start" -ge 5 ]; then
		python3 -c "import sys; sys.exit(float(sys.argv[1]) < int(sys.argv[2]) - 4)" "$secs" "$start" ||
			fail "clone_fd=$clone: $((start - 3)) workers left within $secs s, one per second at most"
	fi
	local left
	left=$(workers)
	if [ "$left" -lt 1 ] || [ "$left" -gt 3 ]; then
		# where the workers that did not leave are
		for t in /proc/"$PID"/task/*; do
			[ "$(cat "$t/comm" 2>/dev/null)" = pgiofs-fuse ] &&
				echo "  worker ${t##*/}: state $(awk '{ print $3 }' "$t/stat"), in $(cat "$t/wchan" 2>/dev/null)"
		done
		fail "clone_fd=$clone: $left workers left, max_idle_threads is 2 (plus the last request's)"
	fi
	for i in $(seq 12); do
		cmp -s "$T/src$i" "$M/pg_wal/f$i" || fail "clone_fd=$clone: f$i reads back different bytes"
	done
	pgiofs_umount "$M" || fail "cannot unmount"
	for i in $(seq 12); do
		cmp -s "$T/src$i" "$B/pg_wal/f$i" || fail "clone_fd=$clone: backing file f$i differs"
	done
	rm -rf "${B:?}"/*
}

round no
round yes
echo ok
