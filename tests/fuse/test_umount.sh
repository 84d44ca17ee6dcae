#!/bin/bash
# test_umount.sh -- `pgiofs umount MOUNTPOINT`: waits while the mount is
# busy (a process that still has its working directory there, as a
# postmaster has for a moment after `pg_ctl stop` returns) and unmounts once
# it is free; returns only when the daemon is gone and what was written
# without fsync is in the backing files; when the mount stays busy past
# --timeout it fails naming the process, and the mount stays as it was;
# pgiofs mounts below the mount point go first; bad input is refused by
# name.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
mkdir -p "$T/b" "$T/m" "$T/b2"

daemon_of() { pgrep -f "pgiofs .*$1\$" | head -n 1; }
# running PID -- PID exists and is not a zombie (a daemonized process is
# reaped by whoever is process 1, which may take its time)
running() { [ -e "/proc/$1" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# 1. busy for 2 s, then free: unmounted, daemon gone, dirty data written
pgiofs_mount "$T/b" "$T/m"
pid=$(daemon_of "$T/m")
[ -n "$pid" ] || fail "no daemon for $T/m"
head -c 3000000 /dev/urandom >"$T/data"
cp "$T/data" "$T/m/f" # no fsync: dirty pages in the mount's cache
(cd "$T/m" && sleep 2) &
holder=$!
sleep 0.3
"$BIN/pgiofs" umount "$T/m" --timeout 20 || fail "pgiofs umount of a mount busy for 2 s failed"
wait $holder
! is_mounted "$T/m" || fail "still mounted after pgiofs umount returned"
! running "$pid" || fail "the daemon (pid $pid) still runs after pgiofs umount returned"
cmp -s "$T/data" "$T/b/f" || fail "what was written without fsync is not in the backing file"
echo "ok: a mount busy for 2 s is unmounted once free; the daemon is gone, the data written through"

# 2. busy past the timeout: fails naming the holder; nothing changes
pgiofs_mount "$T/b" "$T/m"
(cd "$T/m" && exec sleep 60) &
holder=$!
sleep 0.3
if out=$("$BIN/pgiofs" umount "$T/m" --timeout 1 2>&1); then
	fail "pgiofs umount succeeded on a mount held for 60 s"
fi
grep -q "cannot unmount \"$T/m\": Device or resource busy" <<<"$out" ||
	fail "the message does not say it is busy: $out"
grep -q "pid $holder (sleep): working directory $T/m" <<<"$out" ||
	fail "the message does not name the holder (pid $holder): $out"
is_mounted "$T/m" || fail "a refused pgiofs umount unmounted it anyway"
[ "$(cat "$T/m/f" | cmp - "$T/data" && echo same)" = same ] || fail "the mount no longer serves its files"
kill $holder
wait $holder 2>/dev/null
echo "ok: held past --timeout: refused naming the holder, still mounted ($(head -n 1 <<<"$out"))"

# 3. a pgiofs mount below the mount point goes first
mkdir "$T/m/sub"
pgiofs_mount "$T/b2" "$T/m/sub"
echo sub >"$T/m/sub/g"
"$BIN/pgiofs" umount "$T/m" || fail "pgiofs umount with a pgiofs mount below failed"
! is_mounted "$T/m/sub" && ! is_mounted "$T/m" || fail "a mount is left: $(grep "$T" /proc/mounts)"
[ "$(cat "$T/b2/g")" = sub ] || fail "the inner mount's file is not in its backing directory"
echo "ok: the pgiofs mount below goes first"

# 4. bad input
out=$("$BIN/pgiofs" umount "$T/b" 2>&1) && fail "pgiofs umount of a plain directory succeeded"
grep -qF "\"$T/b\" is not a pgiofs mount point" <<<"$out" || fail "message: $out"
out=$("$BIN/pgiofs" umount "$T/nope" 2>&1) && fail "pgiofs umount of a missing path succeeded"
grep -qF "\"$T/nope\": No such file or directory" <<<"$out" || fail "message: $out"
out=$("$BIN/pgiofs" umount "$T/m" --timeout -1 2>&1) && fail "a negative --timeout was accepted"
grep -qF -- '--timeout "-1": not a number of seconds' <<<"$out" || fail "message: $out"
echo "ok: bad input refused by name"
echo ok
