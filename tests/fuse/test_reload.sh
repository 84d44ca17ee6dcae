#!/bin/bash
# test_reload.sh -- a SIGHUP reload whose new scheduler cannot be started
# keeps the old one running and says so.  The daemon's file descriptor
# limit is lowered (prlimit) below every free descriptor number, so the new
# scheduler's eventfd and io_uring cannot be made; the reload must log
# "cannot start the new scheduler: Too many open files; keeping the old
# one", and once the limit is back, reads, writes and fsyncs through the
# mount work, `pgiofs stat` answers, and the next SIGHUP reloads.
source "$(dirname "$0")/../lib.sh"
need_root
command -v prlimit >/dev/null || fail "prlimit (util-linux) is missing"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
: >"$T/log"
# no configuration file: a reload reads no file, so it needs no descriptor
# before the scheduler's own
pgiofs_mount_fg "$T/log" "$B" "$M" --set iosched.policy=dbaware
PID=$PGIOFS_PID

# write_check NAME -- 1 MiB written and fsynced through the mount, read back.
write_check() {
	dd if=/dev/urandom of="$T/$1.src" bs=1M count=1 status=none
	dd if="$T/$1.src" of="$M/$1" bs=1M conv=fsync status=none 2>"$T/dd.err" ||
		fail "$2: writing $1 failed: $(cat "$T/dd.err")"
	cmp -s "$T/$1.src" "$B/$1" || fail "$2: the backing file $1 differs"
	cmp -s "$T/$1.src" "$M/$1" || fail "$2: $1 read through the mount differs"
}

write_check a "before the reload"
read -r soft hard < <(prlimit --pid "$PID" --nofile --noheadings --output SOFT,HARD)
prlimit --pid "$PID" --nofile="3:$hard" || fail "cannot lower the daemon's descriptor limit"
pgiofs_hup "$T/log" "cannot start the new scheduler: Too many open files; keeping the old one"
prlimit --pid "$PID" --nofile="$soft:$hard" || fail "cannot restore the descriptor limit"
kill -0 "$PID" 2>/dev/null || fail "the daemon died after the failed reload"
write_check b "after the failed reload"
"$BIN/pgiofs" stat "$M" --json | grep -q '"policy":"dbaware"' ||
	fail "pgiofs stat does not show the old scheduler"
pgiofs_hup "$T/log" "settings reloaded (policy dbaware;"
write_check c "after the next reload"
pgiofs_umount "$M" || fail "cannot unmount"
wait "$PID" || fail "the daemon exited with $?"
echo ok
