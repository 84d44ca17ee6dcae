#!/bin/bash
# test_writebehind.sh -- writes acknowledged before they reach the backing
# file, and what must wait for them.
#
# WAL write-behind (files.wal_mode = direct): (1) reads, fsync and close see
# every acknowledged write, in order, even when the same WAL page is
# rewritten again and again as PostgreSQL does, and (2) a backing write that
# fails (here: ENOSPC on a full tmpfs) is never turned into success: the
# next fsync reports it, once, like a writeback error; an O_DSYNC write is
# on the backing file when it returns.
#
# The write cache (no write-back cache: pgiofs answers a queued write of a
# data file once the scheduler has it), with every heap write held back
# 300 ms by an injected delay, so that the checks run while the writes are
# still pending: (3) the file's size and contents through the mount include
# them (a smaller size from pgiofs would make the kernel cut the file), an
# fsync returns only once they are on the backing file, and a write that
# fails (ENOSPC) is reported by the next fsync, once; (4) with a 1 MiB cache
# writers wait for room, and never more than the cache (plus one write) is
# held.
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

# (2) fill the backing filesystem: the writes are acknowledged, the fsync
# that follows must fail with ENOSPC, and only that fsync
fd = os.open(mnt + "/000000010000000000000002", os.O_RDWR | os.O_CREAT, 0o600)
acked = 0
try:
    for i in range(64):                     # 4 MiB into a 2 MiB tmpfs
        os.pwrite(fd, b"w" * 65536, i * 65536)
        acked += 1
except OSError as e:
    pass                                    # refused outright is fine too
try:
    os.fdatasync(fd)
    sys.exit("fdatasync succeeded after %d acknowledged writes that cannot fit" % acked)
except OSError as e:
    assert e.errno == errno.ENOSPC, "fdatasync failed with %s, want ENOSPC" % e
os.fdatasync(fd)                            # reported once
os.close(fd)
os.unlink(mnt + "/000000010000000000000002")

print("ok: %d writes acknowledged, ENOSPC reported by the next fsync" % acked)
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

# ENOSPC: the tmpfs holds 2 MiB; 4 MiB of acknowledged writes cannot fit
fd = os.open(mnt + "/16385", os.O_RDWR | os.O_CREAT, 0o600)
acked = 0
try:
    for i in range(512):
        os.pwrite(fd, b"h" * 8192, i * 8192)
        acked += 1
except OSError:
    pass
try:
    os.fsync(fd)
    sys.exit("fsync succeeded after %d acknowledged writes that cannot fit" % acked)
except OSError as e:
    assert e.errno == errno.ENOSPC, "fsync failed with %s, want ENOSPC" % e
os.fsync(fd)                                # reported once
os.close(fd)
os.unlink(mnt + "/16385")
print("ok: write cache: size, contents and fsync right; ENOSPC after %d acknowledged writes" % acked)
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
assert w["errors"] > 0, w                   # the writes that did not fit
print("ok: %d writes through the cache, %d waited, peak %d bytes" % (w["writes"], w["waits"], w["peak_bytes"]))
PY
echo ok
