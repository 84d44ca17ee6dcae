"""reqlog.py -- what the tests read of pgdisk's request log.

A file's extents on the disk come from `filefrag -v -b4096 FILE` (a loop
device at offset 0 of the image, so the physical offsets are the disk's);
the requests from `pgdisk log --records LOG` (docs/pgdisk.md, "The request
log").  A test imports it with sys.path.insert(0, "tests/disk")."""
import re


def extents(path):
    """The (start, end) byte ranges of a file on the disk, from filefrag."""
    ext = []
    for line in open(path):
        m = re.match(r"\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", line)
        if m:
            ext.append((int(m.group(1)) * 4096, (int(m.group(2)) + 1) * 4096))
    assert ext, "no extents in " + path
    return ext


def writes(path):
    """The write requests of a request log, in arrival order: (seq, arrival
    ns, modelled completion ns, offset, length)."""
    recs = []
    for line in open(path):
        f = line.split()
        if len(f) < 9 or not f[0].isdigit() or f[1] != "write":
            continue
        t = int(f[2])
        recs.append((int(f[0]), t, t + int(f[7]) + int(f[8]), int(f[3]), int(f[4])))
    return recs


def inside(rec, ext):
    """Whether request @rec lies inside one of the ranges @ext."""
    return any(a <= rec[3] and rec[3] + rec[4] <= b for a, b in ext)
