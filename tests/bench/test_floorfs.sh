#!/bin/bash
# test_floorfs.sh -- bench/floorfs.c, the minimal FUSE passthrough that
# bench/relations.sh measures the floor with, must be a file system that
# works, or its floor is meaningless, and --noopen must do what it says:
#   - with and without --noopen, as the postgres user: a file created,
#     written (300 KB), synced, truncated, read back, renamed into a new
#     directory; another made with O_EXCL, which a second O_EXCL refuses;
#     a directory listed; all as on the backing directory, new files owned
#     by their creator (default_permissions, as pgiofs mounts);
#   - with OPEN, every open file is a descriptor in the daemon (40 open at
#     once: at least 40 more); with --noopen the kernel sends no OPEN, so
#     the 40 opens of one file add at most one (the inode's own);
#   - bad arguments are refused with a message.
source "$(dirname "$0")/../lib.sh"
need_root
id postgres >/dev/null 2>&1 || fail "no postgres user"
T=$(mktempdir)
cc -O2 -D_GNU_SOURCE -I/usr/include/fuse3 -o "$T/floorfs" "$TOP/bench/floorfs.c" -lfuse3 -lpthread \
	2>"$T/cc.log" || fail "bench/floorfs.c does not build: $(cat "$T/cc.log")"
chmod 755 "$T"

err=$("$T/floorfs" 2>&1) && fail "floorfs took no arguments"
[[ $err == *usage* ]] || fail "no usage message: $err"
err=$("$T/floorfs" "$T/missing" "$T" 2>&1) && fail "floorfs took a missing source"
[[ $err == *missing* ]] || fail "the error does not name the source: $err"

cat >"$T/ops.py" <<'PY'
import os, sys
os.chdir(sys.argv[1])
fd = os.open("f", os.O_CREAT | os.O_RDWR, 0o600)
assert os.pwrite(fd, b"x" * 300000, 0) == 300000
os.fsync(fd)
os.ftruncate(fd, 100000)
os.close(fd)
fd = os.open("f", os.O_RDONLY)
assert os.pread(fd, 400000, 0) == b"x" * 100000, "read back"
os.close(fd)
os.mkdir("d")
os.rename("f", "d/g")
fd = os.open("e", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
os.write(fd, b"e")
os.close(fd)
try:
    os.open("e", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    sys.exit("a second O_EXCL create succeeded")
except FileExistsError:
    pass
assert sorted(os.listdir(".")) == ["d", "e"], os.listdir(".")
PY
cat >"$T/hold.py" <<'PY'
import os, sys, time
fds = [os.open(sys.argv[1], os.O_RDWR) for _ in range(40)]
print("open", flush=True)
time.sleep(3)
PY

# fds PID -- descriptors the daemon holds
fds() { find "/proc/$1/fd" -mindepth 1 2>/dev/null | wc -l; }

for mode in open noopen; do
	B=$T/b.$mode M=$T/m.$mode
	mkdir -p "$B" "$M"
	chown postgres: "$B"
	opt=()
	[ $mode = noopen ] && opt=(--noopen)
	"$T/floorfs" "${opt[@]}" "$B" "$M" || fail "$mode: floorfs did not mount"
	_cleanup_mounts+=("$M")
	pid=$(pgrep -f -- "floorfs .*$B $M\$" | head -1)
	[ -n "$pid" ] || fail "$mode: no floorfs process"
	su postgres -c "python3 $T/ops.py $M" || fail "$mode: file operations through floorfs failed"
	[ "$(stat -c %s "$B/d/g")" = 100000 ] || fail "$mode: the backing file is not 100000 bytes"
	[ "$(head -c 5 "$B/d/g")" = xxxxx ] || fail "$mode: the backing file does not hold what was written"
	[ "$(stat -c %U "$B/d/g") $(stat -c %U "$B/e")" = "postgres postgres" ] ||
		fail "$mode: new files are not their creator's"
	before=$(fds "$pid")
	su postgres -c "python3 $T/hold.py $M/e" >"$T/hold.out" &
	holder=$!
	for ((i = 0; i < 50; i++)); do
		grep -q open "$T/hold.out" && break
		sleep 0.1
	done
	grep -q open "$T/hold.out" || fail "$mode: the 40 opens did not finish"
	during=$(fds "$pid")
	wait "$holder"
	echo "$mode: the daemon held $before descriptors, $during with 40 opens of one file"
	if [ $mode = open ]; then
		[ "$during" -ge $((before + 40)) ] || fail "with OPEN, 40 opens made $((during - before)) descriptors"
	else
		[ "$during" -le $((before + 1)) ] || fail "with --noopen, 40 opens made $((during - before)) descriptors"
	fi
	umount "$M" || fail "$mode: cannot unmount"
done
echo "ok"
