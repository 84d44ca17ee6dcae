#!/bin/bash
# test_writebehind.sh -- WAL write-behind (files.wal_mode = direct): a
# WRITE is acknowledged before it reaches the backing file, so (1) reads,
# fsync and close see every acknowledged write, in order, even when the
# same WAL page is rewritten again and again as PostgreSQL does, and (2) a
# backing write that fails (here: ENOSPC on a full tmpfs) is never turned
# into success: the next fsync reports it, once, like a writeback error.
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
print("ok: %d writes acknowledged, ENOSPC reported by the next fsync" % acked)
PY
echo ok
