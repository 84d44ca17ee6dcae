#!/bin/bash
# test_readahead.sh -- iosched's readahead through a pgiofs mount with the
# dbaware profile (ra_window_kb 512): a sequential O_DIRECT reader of a
# 48 MiB relation file (no kernel page cache or readahead in between, so
# every read reaches the scheduler) with O_DIRECT writes interleaved, many
# of them into the windows read ahead of the reader, must read exactly what
# a model of the file says (the original bytes with every earlier write
# applied); truncation and a punched hole through the mount are seen by the
# next read, and so is a truncation by another open (O_TRUNC, through OPEN
# and through CREATE) while the reader's handle and windows stay; the file
# then holds the model's bytes; a cold buffered read
# of the whole file gives the backing file's checksum; and `pgiofs stat`
# shows readahead hits for the heap class.  The data files are queued
# (iosched.data_inline = no): through the backing page cache they would run
# at arrival, where the scheduler reads nothing ahead.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || skip "python3 is not installed"
command -v fallocate >/dev/null || skip "fallocate (util-linux) is not installed"

T=$(mktempdir)
mkdir -p "$T/b/base/1" "$T/m"
M=$T/m
F=base/1/16384
head -c $((48 << 20)) /dev/urandom >"$T/b/$F"
pgiofs_mount "$T/b" "$M" --profile dbaware --set iosched.data_inline=no
"$BIN/pgiofs" stat "$M" --json >"$T/s0.json" || fail "pgiofs stat failed"

python3 - "$M/$F" "$T/b/$F" <<'EOF' || fail "the interleaved read/write check failed"
import mmap, os, random, subprocess, sys

path, backing = sys.argv[1], sys.argv[2]
model = bytearray(open(backing, "rb").read())
size = len(model)
rng = random.Random(3)
CH, BLK = 128 << 10, 8 << 10
buf = mmap.mmap(-1, CH)          # page aligned, as O_DIRECT wants
wbuf = mmap.mmap(-1, BLK)
fd = os.open(path, os.O_RDWR | os.O_DIRECT)

def read_at(off, n):
    got = os.preadv(fd, [memoryview(buf)[:n]], off)
    return bytes(buf[:got])

def write_at(off):
    data = rng.randbytes(BLK)
    wbuf[:] = data
    assert os.pwritev(fd, [wbuf], off) == BLK
    model[off:off + BLK] = data

writes = ahead = 0
for off in range(0, size, CH):
    got = read_at(off, CH)
    if got != bytes(model[off:off + CH]):
        bad = next(i for i in range(len(got)) if got[i] != model[off + i])
        sys.exit(f"read at {off}: byte {off + bad} differs from the model "
                 f"({writes} writes so far)")
    # a write after most reads, mostly just ahead of the reader (inside the
    # windows read ahead), sometimes anywhere
    if rng.random() < 0.7:
        if rng.random() < 0.8:
            w = off + CH + rng.randrange(0, 1 << 20)
            ahead += 1
        else:
            w = rng.randrange(0, size)
        w = min(w, size - BLK) // BLK * BLK
        write_at(w)
        writes += 1
print(f"{size >> 20} MiB read sequentially with {writes} writes interleaved "
      f"({ahead} just ahead of the reader)")

# truncation: read ahead, shrink, grow back: the old bytes must not return
read_at(0, CH)
read_at(CH, CH)                  # windows now cover up to about 1 MiB
os.ftruncate(fd, 384 << 10)
os.ftruncate(fd, size)
model[384 << 10:] = bytes(size - (384 << 10))
got = read_at(384 << 10, CH)
if got != bytes(CH):
    sys.exit("after truncate and extend, old bytes were read back")
# a punched hole
model[:] = open(backing, "rb").read()   # the backing file is the truth now
read_at(2 << 20, CH)
read_at((2 << 20) + CH, CH)
subprocess.run(["fallocate", "--punch-hole", "--offset", str((2 << 20) + 3 * CH),
                "--length", str(CH), path], check=True)
model[(2 << 20) + 3 * CH:(2 << 20) + 4 * CH] = bytes(CH)
for k in range(2, 5):
    o = (2 << 20) + k * CH
    if read_at(o, CH) != bytes(model[o:o + CH]):
        sys.exit(f"after the punched hole: read at {o} differs")

# O_TRUNC from another open while this handle stays open with windows read
# ahead: once the file is extended again, reads see zeros, not the bytes
# read ahead before the truncation (libfuse's atomic O_TRUNC truncates in
# the OPEN, which must drop them as setattr does)
def trunc_check(label, truncate):
    for o in range(0, 1 << 20, BLK):
        write_at(o)
    read_at(0, CH)
    read_at(CH, CH)              # windows now cover up to about 1 MiB
    truncate()
    os.ftruncate(fd, size)
    model[:] = bytes(size)
    for o in (CH, 2 * CH, 5 * CH):
        if read_at(o, CH) != bytes(CH):
            sys.exit(f"{label}: after the truncation and an extension, a read at {o} "
                     "returned bytes from before the truncation")

trunc_check("open(O_TRUNC)", lambda: os.close(os.open(path, os.O_WRONLY | os.O_TRUNC)))
# the same through CREATE: a name the kernel holds as absent (a negative
# entry) that meanwhile exists, a hard link made behind pgiofs's back
alias = os.path.join(os.path.dirname(path), "16385")
try:
    os.stat(alias)
    sys.exit(f"{alias} exists already")
except FileNotFoundError:
    pass
os.link(backing, os.path.join(os.path.dirname(backing), "16385"))
trunc_check("creat(O_TRUNC)",
            lambda: os.close(os.open(alias, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)))
os.close(fd)
if open(backing, "rb").read() != bytes(model):
    sys.exit("the backing file does not hold the model's bytes")
EOF

# a cold buffered read of the whole file (kernel readahead above ours)
sync
echo 3 >/proc/sys/vm/drop_caches
want=$(sha256sum <"$T/b/$F" | cut -d' ' -f1)
got=$(sha256sum <"$M/$F" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the file read through the mount differs from the backing file"

"$BIN/pgiofs" stat "$M" --json >"$T/s1.json" || fail "pgiofs stat failed"
"$BIN/pgiofs" stat "$M" | grep -q "^readahead (MB): heap hit" ||
	fail "pgiofs stat shows no readahead line: $("$BIN/pgiofs" stat "$M")"
python3 - "$T/s0.json" "$T/s1.json" <<'EOF' || fail "readahead statistics"
import json, sys
a, b = (json.load(open(p))["classes"]["heap"] for p in sys.argv[1:3])
hit = b["ra_hit_bytes"] - a["ra_hit_bytes"]
waste = b["ra_wasted_bytes"] - a["ra_wasted_bytes"]
print(f"heap readahead: {hit >> 20} MiB hit, {waste >> 20} MiB wasted")
assert b["read_bytes"] - a["read_bytes"] >= 48 << 20
assert hit >= 16 << 20, hit
EOF
pgiofs_umount "$M" || fail "unmount failed"
echo PASS
