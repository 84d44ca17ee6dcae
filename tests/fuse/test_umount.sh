#!/bin/bash
# test_umount.sh -- `pgiofs umount MOUNTPOINT`: waits while the mount is
# busy (a process that still has its working directory there, as a
# postmaster has for a moment after `pg_ctl stop` returns) and unmounts once
# it is free; returns only when the daemon is gone and what was written
# without fsync is in the backing files; when the mount stays busy past
# --timeout it fails naming the process, and the mount stays as it was;
# pgiofs mounts below the mount point go first; bad input is refused by
# name.  With WAL mounts: a mount held past --timeout keeps its WAL mounts
# (they are not taken down while something holds the mount), and 17
# clusters' WAL mounts (more than any fixed list) all go.
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

# refused_while_held MNT -- a shell holds MNT (its working directory) for
# 60 s: pgiofs umount --timeout 1 must fail saying it is busy and naming the
# shell, whose pid is $holder (killed by the caller); its message in $out
refused_while_held() {
	(cd "$1" && exec sleep 60) &
	holder=$!
	sleep 0.3
	if out=$("$BIN/pgiofs" umount "$1" --timeout 1 2>&1); then
		fail "pgiofs umount succeeded on $1 held for 60 s"
	fi
	grep -q "cannot unmount \"$1\": Device or resource busy" <<<"$out" ||
		fail "the message does not say it is busy: $out"
	grep -q "pid $holder (sleep): working directory $1" <<<"$out" ||
		fail "the message does not name the holder (pid $holder): $out"
}

# 2. busy past the timeout: fails naming the holder; nothing changes
pgiofs_mount "$T/b" "$T/m"
refused_while_held "$T/m"
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

# 5. WAL mounts: the mount held past --timeout (a shell in it, not in a
# pg_wal) keeps them, and pgiofs stat still shows them mounted
for i in $(seq -w 1 17); do
	mkdir -p "$T/bw/c$i/pg_wal" && echo 15 >"$T/bw/c$i/PG_VERSION"
done
mkdir -p "$T/mw"
pgiofs_mount "$T/bw" "$T/mw"
nwal=$(awk -v m="$T/mw/" 'index($5, m) == 1' /proc/self/mountinfo | wc -l)
[ "$nwal" -eq 17 ] || fail "17 clusters, $nwal WAL mounts"
refused_while_held "$T/mw"
nwal=$(awk -v m="$T/mw/" 'index($5, m) == 1' /proc/self/mountinfo | wc -l)
[ "$nwal" -eq 17 ] || fail "a refused pgiofs umount left $nwal of 17 WAL mounts: $out"
! "$BIN/pgiofs" stat "$T/mw" | grep -q "(ended)" || fail "pgiofs stat shows an ended WAL mount"
kill $holder
wait $holder 2>/dev/null
echo "ok: held past --timeout with WAL mounts: refused naming the holder, its 17 WAL mounts still there"
"$BIN/pgiofs" umount "$T/mw" || fail "pgiofs umount of a mount with 17 WAL mounts failed"
[ -z "$(grep " $T/mw" /proc/self/mountinfo)" ] || fail "left mounted: $(grep " $T/mw" /proc/self/mountinfo)"
echo "ok: a mount with 17 WAL mounts is unmounted"

# 4. bad input
out=$("$BIN/pgiofs" umount "$T/b" 2>&1) && fail "pgiofs umount of a plain directory succeeded"
grep -qF "\"$T/b\" is not a pgiofs mount point" <<<"$out" || fail "message: $out"
out=$("$BIN/pgiofs" umount "$T/nope" 2>&1) && fail "pgiofs umount of a missing path succeeded"
grep -qF "\"$T/nope\": No such file or directory" <<<"$out" || fail "message: $out"
out=$("$BIN/pgiofs" umount "$T/m" --timeout -1 2>&1) && fail "a negative --timeout was accepted"
grep -qF -- '--timeout "-1": not a number of seconds' <<<"$out" || fail "message: $out"
echo "ok: bad input refused by name"
echo ok
