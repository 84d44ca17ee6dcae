#!/bin/bash
# test_passthrough.sh -- files.wal_mode = passthrough on the one connection
# (fuse.writeback_cache = no; with it, test_walmount.sh): WAL reads and
# writes bypass the daemon, opens never fail with EIO whatever mix of modes
# an inode goes through, and where passthrough cannot be had the mount says
# so, makes no WAL mount, and WAL is opened direct.
#
#   a. root, allow_other: O_DSYNC writes and reads of a pg_wal file never
#      reach pgiofs (its statistics count no WAL write, one file in
#      passthrough, and mark WAL bytes as not seen), yet the data is in the
#      backing file, and fdatasync reaches pgiofs (a WAL sync counted);
#      the write-back cache is off, the mount says so.
#   b. mixed open modes, none may fail: a second process opening a WAL file
#      held open in passthrough; the file renamed out of pg_wal while open,
#      then opened under its new name; a file opened elsewhere (through the
#      page cache), renamed into pg_wal while still open and opened there
#      (direct); mmap of a passthrough file and of a direct one; every
#      read sees every write.
#   c. a kernel without passthrough (simulated: [fault] no_passthrough):
#      the mount prints why on stderr, makes no WAL mount over pg_wal, and
#      opens WAL direct (every WAL write counted by pgiofs), with the
#      write-back cache as configured.
#   d. a daemon without CAP_SYS_ADMIN (run by the postgres user): the same
#      fallback, saying why.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is needed"
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"

# stat_json MNT EXPR -- evaluate the python expression EXPR over the
# statistics (s: the JSON object, w: its "wal" class); print the result
stat_json() {
	"$BIN/pgiofs" stat "$1" --json >"$T/stat.json" || fail "pgiofs stat $1 failed"
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); w = s["classes"]["wal"]
print(eval(sys.argv[2]))' "$T/stat.json" "$2"
}

# expect MNT EXPR -- EXPR over the statistics must be true
expect() {
	[ "$(stat_json "$1" "$2")" = True ] || fail "statistics of $1: not ($2): $(cat "$T/stat.json")"
}

T=$(mktempdir)

# ---- a: the basics --------------------------------------------------------
mkdir -p "$T/a/backing/pg_wal" "$T/a/mnt"
pgiofs_mount_fg "$T/a/log" "$T/a/backing" "$T/a/mnt" -o allow_other --set files.wal_mode=passthrough \
	--set fuse.writeback_cache=no
expect "$T/a/mnt" 's["wal_mode"] == "passthrough" and s["writeback_cache"] is False and s["wal_note"] == ""'
python3 - "$T/a/mnt/pg_wal/000000010000000000000001" <<'PY' || fail "a: passthrough reads and writes"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_DSYNC, 0o600)
for i in range(64):
    os.pwrite(fd, bytes([i]) * 8192, i * 8192)
for i in range(64):
    assert os.pread(fd, 8192, i * 8192) == bytes([i]) * 8192, "page %d" % i
os.fdatasync(fd)
os.close(fd)
PY
cmp <(python3 -c 'import sys; sys.stdout.buffer.write(b"".join(bytes([i]) * 8192 for i in range(64)))') \
	"$T/a/backing/pg_wal/000000010000000000000001" || fail "a: the backing file lacks the writes"
expect "$T/a/mnt" 'w["write_ops"] == 0 and w["read_ops"] == 0 and w["sync_ops"] == 1'
expect "$T/a/mnt" 'w["opens"] == 1 and w["passthrough_opens"] == 1 and w["passthrough_files"] == 1'
expect "$T/a/mnt" 'w["bytes_seen"] == "none"'
"$BIN/pgiofs" stat "$T/a/mnt" >"$T/a/table" || fail "a: pgiofs stat failed"
grep -q '^wal .* n/s .* n/s' "$T/a/table" && grep -q '^wal: all of 1 opens in passthrough' "$T/a/table" &&
	grep -q '^WAL passthrough, write-back cache off' "$T/a/table" ||
	fail "a: the table does not say what pgiofs did not see: $(cat "$T/a/table")"

# ---- b: mixed open modes --------------------------------------------------
python3 - "$T/a/mnt" "$T/a/backing" <<'PY' || fail "b: mixed open modes"
import mmap, os, subprocess, sys
mnt, back = sys.argv[1], sys.argv[2]
wal = mnt + "/pg_wal"
os.mkdir(mnt + "/elsewhere")

def other_process_reads(path, off, want):
    # a second process: pg_waldump or a backup reading while the server writes
    got = subprocess.run([sys.executable, "-c",
                          "import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
                          "sys.stdout.buffer.write(os.pread(fd, 8192, int(sys.argv[2])))",
                          path, str(off)], capture_output=True, check=True).stdout
    assert got == want, "%s at %d: another process reads stale data" % (path, off)

# held open in passthrough; another process opens and reads it
seg = wal + "/000000010000000000000002"
fd = os.open(seg, os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"a" * 8192, 0)
other_process_reads(seg, 0, b"a" * 8192)
os.pwrite(fd, b"b" * 8192, 8192)
other_process_reads(seg, 8192, b"b" * 8192)

# renamed out of pg_wal while open: the new name opens in passthrough too
moved = mnt + "/elsewhere/moved"
os.rename(seg, moved)
fd2 = os.open(moved, os.O_RDWR)
os.pwrite(fd2, b"c" * 8192, 16384)
assert os.pread(fd, 8192, 16384) == b"c" * 8192
os.close(fd2)
os.close(fd)
fd = os.open(moved, os.O_RDONLY) # nothing else open: its class's mode again
assert os.pread(fd, 8192, 0) == b"a" * 8192
os.close(fd)

# opened elsewhere through the page cache, renamed into pg_wal while open
plain = mnt + "/elsewhere/plain"
fdc = os.open(plain, os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fdc, b"d" * 8192, 0)
os.rename(plain, wal + "/000000010000000000000003")
seg3 = wal + "/000000010000000000000003"
fdd = os.open(seg3, os.O_RDWR) # cannot be passthrough now: direct
os.pwrite(fdd, b"e" * 8192, 0)
assert os.pread(fdc, 8192, 0) == b"e" * 8192, "the page-cache handle reads stale data"
other_process_reads(seg3, 0, b"e" * 8192)
m = mmap.mmap(fdd, 8192, prot=mmap.PROT_READ) # a direct handle: shared mmap too
assert m[0:8192] == b"e" * 8192
m.close()
os.close(fdc)
os.close(fdd)
fdp = os.open(seg3, os.O_RDWR) # alone now: passthrough
os.pwrite(fdp, b"f" * 8192, 8192)
other_process_reads(seg3, 8192, b"f" * 8192)

os.close(fdp)

# mmap of a passthrough file (a new one: nothing else holds it)
seg4 = wal + "/000000010000000000000004"
fdp = os.open(seg4, os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fdp, b"g" * 8192 + b"h" * 8192, 0)
m = mmap.mmap(fdp, 16384, prot=mmap.PROT_READ)
assert m[0:8192] == b"g" * 8192 and m[8192:16384] == b"h" * 8192
m.close()
os.close(fdp)
with open(back + "/pg_wal/000000010000000000000003", "rb") as f:
    assert f.read() == b"e" * 8192 + b"f" * 8192, "backing file"
print("ok")
PY
grep -i "could not be made passthrough\|error" "$T/a/log" && fail "b: the daemon logged an error"
expect "$T/a/mnt" 'w["passthrough_files"] >= 3 and w["opens"] > w["passthrough_opens"] and w["bytes_seen"] == "partial"'
pgiofs_umount "$T/a/mnt" || fail "a: unmount failed"

# ---- c: a kernel without passthrough --------------------------------------
mkdir -p "$T/c/backing/pg_wal" "$T/c/mnt"
"$BIN/pgiofs" -o allow_other --allow-faults --set files.wal_mode=passthrough \
	--set fault.no_passthrough=yes "$T/c/backing" "$T/c/mnt" 2>"$T/c/err" ||
	fail "c: the mount failed: $(cat "$T/c/err")"
_cleanup_mounts+=("$T/c/mnt")
grep -q 'files.wal_mode = passthrough: the kernel does not offer FUSE passthrough.*WAL is opened direct' "$T/c/err" ||
	fail "c: the mount did not say why WAL is not in passthrough: $(cat "$T/c/err")"
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_DSYNC, 0o600)
os.pwrite(fd, b"x" * 8192, 0); os.fdatasync(fd); os.close(fd)' "$T/c/mnt/pg_wal/seg" || fail "c: WAL write failed"
expect "$T/c/mnt" 's["wal_mode"] == "direct" and "does not offer" in s["wal_note"] and s["writeback_cache"] is True and s["wal_mounts"] == ""'
sleep 0.5 # a WAL mount would be made from another thread
! grep -q " $T/c/mnt/pg_wal fuse" /proc/mounts || fail "c: a WAL mount without passthrough"
expect "$T/c/mnt" 'w["write_ops"] == 1 and w["write_bytes"] == 8192 and w["passthrough_opens"] == 0 and w["bytes_seen"] == "all"'
"$BIN/pgiofs" stat "$T/c/mnt" | grep -q '^note: files.wal_mode = passthrough: the kernel does not offer' ||
	fail "c: pgiofs stat does not say why"
pgiofs_umount "$T/c/mnt" || fail "c: unmount failed"

# ---- d: a daemon without CAP_SYS_ADMIN ------------------------------------
fuse_dev_open_to_all
mkdir -p "$T/d/backing/pg_wal" "$T/d/mnt"
chown -R postgres: "$T/d"
runuser -u postgres -- "$BIN/pgiofs" --set files.wal_mode=passthrough "$T/d/backing" "$T/d/mnt" \
	2>"$T/d/err" || fail "d: the mount as postgres failed: $(cat "$T/d/err")"
_cleanup_mounts+=("$T/d/mnt")
grep -q 'files.wal_mode = passthrough: FUSE passthrough needs CAP_SYS_ADMIN.*WAL is opened direct' "$T/d/err" ||
	fail "d: the mount did not say why WAL is not in passthrough: $(cat "$T/d/err")"
runuser -u postgres -- python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_DSYNC, 0o600)
os.pwrite(fd, b"y" * 8192, 0); os.fdatasync(fd); os.close(fd)' "$T/d/mnt/pg_wal/seg" || fail "d: WAL write failed"
runuser -u postgres -- "$BIN/pgiofs" stat "$T/d/mnt" --json >"$T/stat.json" || fail "d: pgiofs stat failed"
python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); w = s["classes"]["wal"]
assert s["wal_mode"] == "direct" and "CAP_SYS_ADMIN" in s["wal_note"] and s["wal_mounts"] == "", s
assert w["write_ops"] == 1 and w["passthrough_opens"] == 0, w' "$T/stat.json" ||
	fail "d: statistics: $(cat "$T/stat.json")"
runuser -u postgres -- fusermount3 -u "$T/d/mnt" || fail "d: unmount failed"
echo "ok"
