#!/bin/bash
# test_lifecycle.sh -- pgiofs returns only once the mount is usable; SIGTERM,
# SIGINT and fusermount3 -u unmount cleanly after every write has reached the
# backing store, also when the mount is busy with dirty data in files that are
# still open; the daemon exits and no mount is left behind.
source "$(dirname "$0")/../lib.sh"
need_root
T=$(mktempdir)
B=$T/backing M=$T/mnt
mkdir -p "$B" "$M"

daemon_pid() { pgrep -f "pgiofs.* $B $M\$" | head -n 1; }
wait_gone() { # wait_gone PID -- the daemon has exited within 10 s
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	fail "daemon $1 still running 10 s after the unmount"
}

# 1. daemonized: the mount is usable on the next line
"$BIN/pgiofs" "$B" "$M" || fail "mount failed"
_cleanup_mounts+=("$M")
echo hello >"$M/first" || fail "the mount was not usable right after pgiofs returned"
# timestamps are exact by default (fuse.time_gran_ns = 1), as on ext4
TZ=UTC touch -d '2001-02-03 04:05:06.789' "$M/first"
[ "$(TZ=UTC stat -c %y "$M/first")" = "2001-02-03 04:05:06.789000000 +0000" ] ||
	fail "default timestamps are not exact: $(stat -c %y "$M/first")"
head -c 3000000 /dev/urandom >"$M/data"
sum=$(md5sum <"$M/data")
pid=$(daemon_pid)
[ -n "$pid" ] || fail "no daemon process"
kill -TERM "$pid"
wait_gone "$pid"
assert_no_mount "$M"
[ "$(md5sum <"$B/data")" = "$sum" ] || fail "SIGTERM: data did not reach the backing store"
echo "ok: SIGTERM on an idle mount"

# 2. busy mount: a file still open with dirty pages in the page cache
"$BIN/pgiofs" "$B" "$M" || fail "mount failed"
python3 - "$M/busy" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"x" * 5000000)   # dirty, not fsynced, not closed
open(sys.argv[1] + ".ready", "w").close()
time.sleep(30)
PY
writer=$!
on_exit "kill $writer"
for _ in $(seq 100); do [ -e "$M/busy.ready" ] && break; sleep 0.1; done
pid=$(daemon_pid)
kill -TERM "$pid"
wait_gone "$pid"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
assert_no_mount "$M"
[ "$(stat -c %s "$B/busy")" = 5000000 ] || fail "busy SIGTERM: dirty data lost (size $(stat -c %s "$B/busy"))"
[ "$(tr -d x <"$B/busy" | wc -c)" = 0 ] || fail "busy SIGTERM: wrong data in the backing file"
echo "ok: SIGTERM on a busy mount wrote back 5 MB of dirty data"

# 3. foreground, SIGINT
"$BIN/pgiofs" -f "$B" "$M" 2>"$T/fg.log" &
fg=$!
for _ in $(seq 100); do mountpoint -q "$M" && break; sleep 0.1; done
mountpoint -q "$M" || fail "foreground mount did not appear"
head -c 1000000 /dev/urandom >"$M/fg"
sum=$(md5sum <"$M/fg")
kill -INT "$fg"
wait "$fg" || fail "foreground pgiofs exited with $? after SIGINT: $(cat "$T/fg.log")"
assert_no_mount "$M"
[ "$(md5sum <"$B/fg")" = "$sum" ] || fail "SIGINT: data did not reach the backing store"
echo "ok: foreground SIGINT"

# 4. fusermount3 -u
"$BIN/pgiofs" "$B" "$M" || fail "mount failed"
pid=$(daemon_pid)
head -c 2000000 /dev/urandom >"$M/fu"
sum=$(md5sum <"$M/fu")
fusermount3 -u "$M" || fail "fusermount3 -u failed"
wait_gone "$pid"
[ "$(md5sum <"$B/fu")" = "$sum" ] || fail "fusermount3 -u: data did not reach the backing store"
assert_no_mount "$M"
echo "ok: fusermount3 -u"
