#!/bin/bash
# test_writebehind.sh -- writes acknowledged before they reach the backing
# file, and what must wait for them.
#
# WAL write-behind (files.wal_mode = direct): (1) reads, fsync and close see
# every acknowledged write, in order, even when the same WAL page is
# rewritten again and again as PostgreSQL does; an O_DSYNC write is on the
# backing file when it returns; (2) a full filesystem (a 2 MiB tmpfs): the
# space of an extending write is reserved before it is acknowledged, so the
# write that does not fit fails at once with ENOSPC and every acknowledged
# one is in the backing file after the fsync.
#
# The write cache (no write-back cache: pgiofs answers a queued write of a
# data file once the scheduler has it), with every heap write held back
# 300 ms by an injected delay, so that the checks run while the writes are
# still pending: (3) the file's size and contents through the mount include
# them (a smaller size from pgiofs would make the kernel cut the file), an
# fsync returns only once they are on the backing file, and a full
# filesystem fails the write that does not fit, at once; (4) with a 1 MiB
# cache writers wait for room, and never more than the cache (plus one
# write) is held.
#
# (5) A backing write that fails after it was acknowledged (an injected
# EIO, WAL direct and the write cache) is never turned into success: the
# next fsync of the file reports it, once per open handle, like the
# kernel's errseq reports a write-back error: on the handle that wrote,
# on another handle open at the time, on one opened after the failure
# (before any fsync reported it), and not on one opened after that.
#
# (6) A truncation by open(O_TRUNC) waits for acknowledged writes.
#
# (7) The error outlives the kernel's memory of the file: with the file
# closed and the kernel made to forget its inode (drop_caches, until a
# closed neighbour's descriptor is gone from the daemon: its FORGET was
# handled), the next open and fsync of the file report it.
source "$(dirname "$0")/../lib.sh"
need_root
T=$(mktempdir)
mkdir -p "$T/backing" "$T/mnt"
mount -t tmpfs -o size=2m tmpfs "$T/backing" || fail "cannot mount a tmpfs"
on_exit "umount -l $T/backing"
mkdir "$T/backing/pg_wal"
pgiofs_mount "$T/backing" "$T/mnt" --set files.wal_mode=direct

python3 - "$T/mnt/pg_wal" "$T/backing/pg_wal" <<'PY' || fail "write-behind semantics"
import errno, os, sys
mnt, back = sys.argv[1], sys.argv[2]

# (1) rewrite the same page with growing content, as XLogWrite does for a
# partial WAL page; every read and the backing file see the last write
fd = os.open(mnt + "/000000010000000000000001", os.O_RDWR | os.O_CREAT, 0o600)
page = bytearray(8192)
for i in range(2000):
    page[(i * 4) % 8192:(i * 4) % 8192 + 4] = i.to_bytes(4, "little")
    os.pwrite(fd, bytes(page), 8192 * (i // 500))
    if i % 97 == 0:
        got = os.pread(fd, 8192, 8192 * (i // 500))
        assert got == bytes(page), "read %d does not see the write before it" % i
os.fdatasync(fd)
with open(back + "/000000010000000000000001", "rb") as f:
    data = f.read()
assert data[8192 * 3:8192 * 4] == bytes(page), "backing file lacks the last write"
os.close(fd)

# an O_DSYNC write is never written behind: on the backing file on return
fd = os.open(mnt + "/000000010000000000000003", os.O_RDWR | os.O_CREAT | os.O_DSYNC, 0o600)
os.pwrite(fd, b"s" * 8192, 0)
with open(back + "/000000010000000000000003", "rb") as f:
    assert f.read() == b"s" * 8192, "an O_DSYNC write was not on the backing file"
os.close(fd)

# (2) fill the backing filesystem: the write that does not fit fails at
# once; every acknowledged one is there after the fsync
fd = os.open(mnt + "/000000010000000000000002", os.O_RDWR | os.O_CREAT, 0o600)
acked = 0
try:
    for i in range(64):                     # 4 MiB into a 2 MiB tmpfs
        os.pwrite(fd, b"w" * 65536, i * 65536)
        acked += 1
    sys.exit("4 MiB of writes acknowledged on a 2 MiB filesystem")
except OSError as e:
    assert e.errno == errno.ENOSPC, "the write failed with %s, want ENOSPC" % e
os.fdatasync(fd)
os.close(fd)
with open(back + "/000000010000000000000002", "rb") as f:
    assert f.read(acked * 65536) == b"w" * (acked * 65536), "an acknowledged write is missing"
os.unlink(mnt + "/000000010000000000000002")
print("ok: %d writes acknowledged, the next refused with ENOSPC" % acked)
PY
pgiofs_umount "$T/mnt" || fail "unmount failed"
rm -rf "$T/backing/pg_wal"

# ---- the write cache, every heap write held back 300 ms ----------------------
mkdir -p "$T/backing/base/1" "$T/mnt2"
pgiofs_mount "$T/backing" "$T/mnt2" --allow-faults --set fuse.writeback_cache=no \
	--set fault.class=heap --set fault.direction=write --set fault.nth=1 --set fault.count=0 \
	--set fault.delay_ms=300 --set files.write_cache_mb=1
python3 - "$T/mnt2/base/1" "$T/backing/base/1" <<'PY' || fail "write cache semantics"
import errno, os, sys
mnt, back = sys.argv[1], sys.argv[2]

# (3) size and contents through the mount while the writes are pending
fd = os.open(mnt + "/16384", os.O_RDWR | os.O_CREAT, 0o600)
pages = [bytes([65 + i]) * 8192 for i in range(10)]
for i, p in enumerate(pages):
    os.pwrite(fd, p, i * 8192)
    assert os.lseek(fd, 0, os.SEEK_END) == (i + 1) * 8192, "size after write %d" % i
    assert os.fstat(fd).st_size == (i + 1) * 8192, "fstat size after write %d" % i
fd2 = os.open(mnt + "/16384", os.O_RDONLY)
for i, p in enumerate(pages):
    assert os.pread(fd2, 8192, i * 8192) == p, "page %d read back" % i
os.close(fd2)
os.fsync(fd)
with open(back + "/16384", "rb") as f:
    assert f.read() == b"".join(pages), "fsync returned before the writes were on the backing file"
os.close(fd)

# times set while a write is pending stay set: the write lands first
fd = os.open(mnt + "/16386", os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"t" * 8192, 0)
os.utime(fd, ns=(1_000_000_007, 2_000_000_009))
os.fsync(fd)
os.close(fd)
st = os.stat(back + "/16386")
assert (st.st_atime_ns, st.st_mtime_ns) == (1_000_000_007, 2_000_000_009), \
    "times set after a pending write were moved by it: %d %d" % (st.st_atime_ns, st.st_mtime_ns)
os.unlink(mnt + "/16386")

# ENOSPC: the tmpfs holds 2 MiB; 4 MiB of writes cannot fit, and the one
# that does not is refused at once, its space being reserved first
fd = os.open(mnt + "/16385", os.O_RDWR | os.O_CREAT, 0o600)
acked = 0
try:
    for i in range(512):
        os.pwrite(fd, b"h" * 8192, i * 8192)
        acked += 1
    sys.exit("4 MiB of writes acknowledged on a 2 MiB filesystem")
except OSError as e:
    assert e.errno == errno.ENOSPC, "the write failed with %s, want ENOSPC" % e
os.fsync(fd)
os.close(fd)
with open(back + "/16385", "rb") as f:
    assert f.read(acked * 8192) == b"h" * (acked * 8192), "an acknowledged write is missing"
os.unlink(mnt + "/16385")

print("ok: write cache: size, contents and fsync right; ENOSPC after %d acknowledged writes; "
      "times set after a pending write kept" % acked)
PY
"$BIN/pgiofs" stat "$T/mnt2" --json >"$T/stat.json" || fail "pgiofs stat failed"
python3 - "$T/stat.json" <<'PY' || fail "write cache statistics: $(cat "$T/stat.json")"
import json, sys
s = json.load(open(sys.argv[1]))
w = s["write_cache"]
assert s["writeback_cache"] is False and w["limit_bytes"] == 1 << 20, w
assert w["writes"] >= 100 and w["bytes"] == 0, w
# (4) 1 MiB held back 300 ms at a time: writers waited for room, and never
# more than the cache plus one write was held
assert w["waits"] > 0 and w["peak_bytes"] <= (1 << 20) + 8192, w
print("ok: %d writes through the cache, %d waited, peak %d bytes" % (w["writes"], w["waits"], w["peak_bytes"]))
PY
pgiofs_umount "$T/mnt2" || fail "unmount failed"

# ---- (5) an acknowledged write that fails ------------------------------------
# In a WAL file (write-behind) its 2nd write, in a heap file (the write
# cache) its 1st, each on a mount of its own: the mount's backing writes of
# different files run on different threads, so which of them is the mount's
# nth write is not fixed.  The next fsync of the file fails with EIO, once.
mkdir -p "$T/backing/pg_wal" "$T/mnt3"
for what in "WAL pg_wal/000000010000000000000009 2" "heap base/1/16390 1"; do
	read -r kind file nth <<<"$what"
	pgiofs_mount "$T/backing" "$T/mnt3" --allow-faults --set fuse.writeback_cache=no \
		--set files.wal_mode=direct --set fault.direction=write --set fault.error=eio \
		--set fault.nth="$nth" --set fault.count=1
	python3 - "$T/mnt3/$file" "$kind" <<'PY' || fail "$kind: an acknowledged write's error"
import errno, os, sys
path, what = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
other = os.open(path, os.O_RDWR)            # open when the write fails
os.pwrite(fd, b"1" * 8192, 0)               # WAL: fine; heap: acknowledged, fails in the cache
os.pwrite(fd, b"2" * 8192, 8192)            # WAL: acknowledged, fails behind; heap: fine
sync = os.fdatasync if what == "WAL" else os.fsync
def fails(f, who):
    try:
        sync(f)
        sys.exit("%s: the fsync on %s succeeded after an acknowledged write failed" % (what, who))
    except OSError as e:
        assert e.errno == errno.EIO, "%s: the fsync on %s failed with %s, want EIO" % (what, who, e)
later = os.open(path, os.O_RDWR)            # opened after the failure, before a report
fails(fd, "the writer's handle")
sync(fd)                                    # reported once per handle
fails(other, "a handle open when the write failed")
sync(other)
fails(later, "a handle opened after the failure")
last = os.open(path, os.O_RDWR)             # opened after it was reported: nothing
sync(last)
for f in (fd, other, later, last):
    os.close(f)
print("ok: %s: EIO of an acknowledged write reported by the next fsync of each handle, once" % what)
PY
	pgiofs_umount "$T/mnt3" || fail "cannot unmount"
done

# ---- (7) the error outlives the kernel's inode --------------------------------
mkdir -p "$T/mnt4"
pgiofs_mount "$T/backing" "$T/mnt4" --allow-faults --set fuse.writeback_cache=no \
	--set fault.class=heap --set fault.direction=write --set fault.error=eio \
	--set fault.nth=1 --set fault.count=1
pid=$(pgrep -f "pgiofs .* $T/mnt4\$") || fail "(7): no daemon for $T/mnt4"
python3 - "$T/mnt4/base/1" <<'PY' || fail "(7): writing the files"
import os, sys
d = sys.argv[1]
fd = os.open(d + "/16395", os.O_RDWR | os.O_CREAT, 0o600)
os.pwrite(fd, b"x" * 8192, 0)               # acknowledged, then fails: nobody fsyncs it
os.close(fd)
fd = os.open(d + "/16396", os.O_RDWR | os.O_CREAT, 0o600)
os.close(fd)
PY
# holds_fd FILE: the daemon holds a descriptor of backing FILE
holds_fd() { find "/proc/$pid/fd" -lname "$1" 2>/dev/null | grep -q .; }
holds_fd "$T/backing/base/1/16396" || fail "(7): the daemon holds no descriptor of base/1/16396"
for ((i = 0; i < 100; i++)); do
	echo 2 >/proc/sys/vm/drop_caches
	holds_fd "$T/backing/base/1/16396" || break
	sleep 0.1
done
holds_fd "$T/backing/base/1/16396" && fail "(7): the kernel never forgot base/1/16396"
python3 - "$T/mnt4/base/1/16395" <<'PY' || fail "(7): an acknowledged write's error lost with the inode"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    os.fsync(fd)
    sys.exit("the fsync after the kernel forgot the file succeeded; its acknowledged write had failed")
except OSError as e:
    assert e.errno == errno.EIO, "the fsync failed with %s, want EIO" % e
os.fsync(fd)
os.close(fd)
print("ok: the error of an acknowledged write reported after the kernel forgot the file")
PY
pgiofs_umount "$T/mnt4" || fail "cannot unmount"

# (6) a truncation waits for an acknowledged write: with the backing write
# held back 300 ms by fault injection, a WRITE is acknowledged, then an
# open(O_TRUNC) by another process comes: the write lands first and the
# truncation after it, so the file ends up empty (not 8 KiB re-extended)
rm -f "$T/backing/pg_wal"/*
pgiofs_mount "$T/backing" "$T/mnt" --allow-faults --set wal_mode=direct \
	--set fault.class=wal --set fault.direction=write --set fault.delay_ms=300 --set fault.nth=1
python3 - "$T/mnt/pg_wal/000000010000000000000003" "$T/backing/pg_wal/000000010000000000000003" <<'PY' ||
import os, sys, time
mnt, back = sys.argv[1], sys.argv[2]
fd = os.open(mnt, os.O_RDWR | os.O_CREAT, 0o600)
t0 = time.monotonic()
os.pwrite(fd, b"w" * 8192, 0)           # acknowledged at once, written 300 ms later
ack = time.monotonic() - t0
if ack > 0.2:
    sys.exit("the write was not acknowledged before its backing write (%.3f s)" % ack)
if os.fork() == 0:                      # another process truncates
    os.close(os.open(mnt, os.O_WRONLY | os.O_TRUNC))
    os._exit(0)
os.wait()
os.close(fd)
size = os.stat(back).st_size
if size != 0:
    sys.exit("the backing file has %d bytes after the truncation: the acknowledged "
             "write landed after it" % size)
PY
	fail "O_TRUNC did not wait for an acknowledged write"
echo ok
