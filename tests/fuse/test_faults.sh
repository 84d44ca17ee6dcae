#!/bin/bash
# test_faults.sh -- fault injection through a mount: [fault] settings are
# refused without --allow-faults (at start and on SIGHUP, which keeps the
# old settings); with it, an injected EIO on writes makes fsync fail and
# the data never reaches the backing file, an injected ENOSPC on syncs
# fails fsync with "No space left on device", abort_after kills the daemon
# (the mount is then cleaned up with umount -l and mounted again), and a
# SIGHUP back to the defaults makes everything succeed again.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"

out=$("$BIN/pgiofs" --set fault.nth=1 "$B" "$M" 2>&1) && fail "a [fault] setting was accepted without --allow-faults"
grep -qF "[fault] settings inject I/O errors and crashes; they are for tests and need --allow-faults" <<<"$out" ||
	fail "unexpected refusal message: $out"
assert_no_mount "$M"
"$BIN/pgiofs" --set fault.error=eio --print-config | grep -qx "error = eio" ||
	fail "--print-config does not show the [fault] values"

# start_fg ARGS... -- pgiofs ARGS in the foreground, logging to $T/log.
start_fg() {
	: >"$T/log"
	pgiofs_mount_fg "$T/log" "$B" "$M" "$@"
	PID=$PGIOFS_PID
}

hup() { pgiofs_hup "$T/log" "$1"; }

# write_file NAME -- 8 KiB of "A" into the mount, fsynced; dd's status.
write_file() {
	dd if=<(yes A | tr -d '\n' | head -c 8192) of="$M/$1" bs=8192 count=1 iflag=fullblock \
		conv=fsync status=none 2>"$T/dd.err"
}

# --- without --allow-faults, a reload that adds faults is refused ------------
printf '[iosched]\npolicy = direct\n' >"$T/conf"
start_fg -c "$T/conf"
printf '[fault]\nerror = eio\nnth = 1\ncount = 0\n' >"$T/conf"
hup "need --allow-faults; keeping the current settings"
write_file ok1 || fail "a write failed after a refused fault reload: $(cat "$T/dd.err")"
pgiofs_umount "$M" || fail "cannot unmount"
wait "$PID"

# --- EIO on every write: fsync fails, nothing reaches the backing file --------
for policy in direct dbaware; do
	printf '[iosched]\npolicy = %s\n[fault]\ndirection = write\nerror = eio\nnth = 1\ncount = 0\n' \
		"$policy" >"$T/conf"
	start_fg --allow-faults -c "$T/conf"
	write_file eio && fail "$policy: fsync after an injected write EIO succeeded"
	grep -q "Input/output error" "$T/dd.err" || fail "$policy: unexpected error: $(cat "$T/dd.err")"
	grep -q A "$B/eio" && fail "$policy: the failed write reached the backing file"
	rm -f "$M/eio"

	# ENOSPC on the first sync only
	printf '[iosched]\npolicy = %s\n[fault]\ndirection = sync\nerror = enospc\nnth = 1\n' \
		"$policy" >"$T/conf"
	hup "settings reloaded"
	write_file nospc && fail "$policy: fsync with an injected ENOSPC succeeded"
	grep -q "No space left on device" "$T/dd.err" || fail "$policy: unexpected error: $(cat "$T/dd.err")"
	write_file nospc2 || fail "$policy: the second fsync failed too: $(cat "$T/dd.err")"

	# back to the defaults: everything works
	printf '[iosched]\npolicy = %s\n' "$policy" >"$T/conf"
	hup "settings reloaded"
	write_file fine || fail "$policy: a write failed after the faults were removed"
	cmp -s "$M/fine" "$B/fine" || fail "$policy: backing file differs"
	pgiofs_umount "$M" || fail "cannot unmount"
	wait "$PID"
	rm -f "$B"/*
done

# --- abort_after: the daemon dies; the mount is cleaned and made again --------
printf '[fault]\ndirection = write\nabort_after = 3\n' >"$T/conf"
start_fg --allow-faults -c "$T/conf"
for i in 1 2 3 4; do
	dd if=/dev/zero of="$M/f$i" bs=4096 count=1 oflag=direct status=none 2>/dev/null
done
wait "$PID"
st=$?
[ $st -eq 137 ] || fail "the daemon exited with $st, not by SIGKILL (137)"
grep -q "killing the process at request 3" "$T/log" || fail "no message before the kill"
[ "$(stat -c %s "$B/f2")" = 4096 ] || fail "write 2 was not performed"
[ ! -s "$B/f3" ] || fail "write 3 was performed although the daemon died before it"
ls "$M" >/dev/null 2>&1 && fail "the mount still answers after the daemon died"
umount -l "$M" || fail "umount -l of the dead mount failed"
assert_no_mount "$M"
pgiofs_mount "$B" "$M"
[ -e "$M/f2" ] || fail "remount does not show the files"
pgiofs_umount "$M" || fail "cannot unmount"
echo ok
