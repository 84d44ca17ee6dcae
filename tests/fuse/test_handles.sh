#!/bin/bash
# test_handles.sh -- inodes identified by file handles (files.inode_handles)
# with a descriptor cache of files.inode_fds, and the fallback to a
# descriptor per known file.  On an ext4 of its own (which reuses a freed
# inode number at once), mounted with a cache of 16 and no attribute or
# entry caching in the kernel (so every stat and name reaches the daemon):
#   - reuse: a file the kernel still knows (an O_PATH descriptor of it on
#     the mount) is unlinked once its cached descriptor was evicted; a new
#     file then gets its backing inode number.  The new file must read and
#     write as itself, and a stat of the old descriptor must fail (ESTALE)
#     instead of showing the new file (had the lookup of the new file found
#     the old inode, the kernel would take both for one inode).  With
#     files.inode_handles = no the old file's held descriptor must keep its
#     inode number from being reused at all;
#   - rename: with the cache full, a file open for writing and a directory
#     of files are renamed into another directory whose descriptors were
#     evicted; the open file keeps writing, everything is found under its
#     new name with its content and nowhere under the old, and pgiofs stat
#     shows evictions and descriptors opened from handles;
#   - the cache's bound: after 2,000 files are made and stated, the daemon
#     holds no more descriptors than the cache's 16 plus a fixed few;
#   - fallback: started without CAP_DAC_READ_SEARCH (capsh), on an
#     overlayfs without nfs_export, or with files.inode_handles = no, pgiofs
#     mounts, says at mount and in pgiofs stat (text and --json) that inodes
#     hold a descriptor each and why, and works; with files.inode_handles =
#     yes and no capability it refuses to mount, saying why, and leaves no
#     mount.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"
command -v capsh >/dev/null || fail "capsh is not installed (libcap2-bin)"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 64
NOCACHE=(-s fuse.attr_timeout=0 -s fuse.entry_timeout=0 -s fuse.negative_timeout=0)

inode_fds() { # inode_fds KEY -- inode_fds.KEY of pgiofs stat --json
	"$BIN/pgiofs" stat "$M" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["inode_fds"][sys.argv[1]])' "$1"
}

# reuse DIR MODE -- the scenario above in DIR of the mount; MODE handles
# (the old number must be reused, by a node of its own) or held (it must
# not be reused); prints a line of what happened
reuse() {
	python3 - "$M/$1" "$B/$1" "$2" <<'PY'
import errno, os, sys
mdir, bdir, mode = sys.argv[1:4]
os.makedirs(mdir)
with open(mdir + "/old", "w") as f:
    f.write("old file")
held = os.open(mdir + "/old", os.O_PATH)  # the kernel knows it, nothing open
old_ino = os.stat(bdir + "/old").st_ino
for i in range(64):  # evict its descriptor from a cache of 16
    with open("%s/other%d" % (mdir, i), "w") as f:
        f.write("x")
    os.stat("%s/other%d" % (mdir, i))
os.unlink(mdir + "/old")
reused = None
for i in range(200):
    p = "%s/new%d" % (mdir, i)
    with open(p, "w") as f:
        f.write("new file %d" % i)
    if os.stat("%s/new%d" % (bdir, i)).st_ino == old_ino:
        reused = i
        break
if mode == "held":
    if reused is not None:
        sys.exit("inode number %d of a file the kernel still knows was reused (new%d) with "
                 "files.inode_handles = no" % (old_ino, reused))
    print("held: inode number %d not reused while the kernel knows the old file" % old_ino)
    sys.exit(0)
if reused is None:
    sys.exit("the test's ext4 did not reuse inode number %d in 200 new files: the test no "
             "longer sees what it guards against" % old_ino)
p = "%s/new%d" % (mdir, reused)
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"NEW", 0)
os.fsync(fd)
os.close(fd)
with open(p) as f:
    got = f.read()
with open("%s/new%d" % (bdir, reused)) as f:
    back = f.read()
want = "NEW file %d" % reused
if got != want or back != want:
    sys.exit("new%d reads %r through the mount and %r on the backing store, not %r" % (reused, got, back, want))
try:
    st = os.stat(held)
    sys.exit("a stat of the unlinked old file answered size %d, nlink %d (the new file's?)"
             % (st.st_size, st.st_nlink))
except OSError as e:
    if e.errno not in (errno.ESTALE, errno.ENOENT):
        sys.exit("a stat of the unlinked old file failed with %s, not ESTALE" % errno.errorcode[e.errno])
    err = errno.errorcode[e.errno]
os.close(held)
print("handles: inode number %d reused by new%d, which reads and writes as itself; the old "
      "one's stat: %s" % (old_ino, reused, err))
PY
}

# ---- handles: reuse, rename, the bound -------------------------------------
pgiofs_mount "$B" "$M" -s files.inode_fds=16 "${NOCACHE[@]}"
[ "$(inode_fds handles)" = True ] || fail "no file handles on ext4 as root: $(inode_fds note)"
out=$(reuse r1 handles) || fail "reuse with handles: $out"
echo "$out"

python3 - "$M" "$B" <<'PY' || fail "rename across directories with the cache full"
import os, sys
m, b = sys.argv[1:3]
for d in ("d1", "d2", "d1/sub"):
    os.mkdir("%s/%s" % (m, d))
for i in range(5):
    with open("%s/d1/sub/f%d" % (m, i), "w") as f:
        f.write("sub %d" % i)
w = os.open(m + "/d1/moving", os.O_RDWR | os.O_CREAT, 0o644)
os.write(w, b"before;")
os.mkdir(m + "/filler")
for i in range(100):  # every descriptor of d1, d2, sub and moving evicted
    with open("%s/filler/%d" % (m, i), "w") as f:
        f.write("x")
    os.stat("%s/filler/%d" % (m, i))
os.rename(m + "/d1/moving", m + "/d2/moved")
os.rename(m + "/d1/sub", m + "/d2/sub")
for i in range(100):
    os.stat("%s/filler/%d" % (m, i))
os.write(w, b"after")
os.fsync(w)
os.close(w)
def read(p):
    with open(p) as f:
        return f.read()
for root in (m, b):
    assert read(root + "/d2/moved") == "before;after", (root, read(root + "/d2/moved"))
    for i in range(5):
        assert read("%s/d2/sub/f%d" % (root, i)) == "sub %d" % i, (root, i)
    assert sorted(os.listdir(root + "/d1")) == [], os.listdir(root + "/d1")
    assert sorted(os.listdir(root + "/d2")) == ["moved", "sub"], os.listdir(root + "/d2")
with open(m + "/d2/sub/f5", "w") as f:  # a new file in the moved directory
    f.write("new in sub")
assert read(b + "/d2/sub/f5") == "new in sub"
print("rename: an open file and a directory of 5 files moved across directories, all found")
PY
[ "$(inode_fds evictions)" -gt 100 ] && [ "$(inode_fds misses)" -gt 0 ] ||
	fail "the cache did not evict and reopen (evictions $(inode_fds evictions), misses $(inode_fds misses))"

# the bound: 2000 files known, a cache of 16
pid=$("$BIN/pgiofs" stat "$M" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["pid"])')
python3 - "$M/many" <<'PY' || fail "making 2000 files"
import os, sys
os.mkdir(sys.argv[1])
keep = []
for i in range(2000):
    p = "%s/%d" % (sys.argv[1], i)
    with open(p, "w") as f:
        f.write(str(i))
    keep.append(os.open(p, os.O_PATH))  # every one known to the kernel at once
    os.stat(p)
for fd in keep:
    os.fstat(fd)
print("2000 files made and stated")
PY
nfd=$(find "/proc/$pid/fd" -mindepth 1 | wc -l)
cached=$(inode_fds cached) inodes=$(inode_fds inodes)
echo "bound: $inodes inodes known, $cached descriptors cached, the daemon holds $nfd descriptors"
[ "$inodes" -ge 2000 ] || fail "only $inodes inodes known after 2000 files"
[ "$cached" -le 16 ] || fail "$cached descriptors cached, more than files.inode_fds = 16"
[ "$nfd" -le 64 ] || fail "the daemon holds $nfd descriptors with a cache of 16"
pgiofs_umount "$M" || fail "cannot unmount"

# ---- handles off: the held descriptor keeps the number -----------------------
pgiofs_mount "$B" "$M" -s files.inode_handles=no -s files.inode_fds=16 "${NOCACHE[@]}"
[ "$(inode_fds handles)" = False ] || fail "files.inode_handles = no, yet handles are used"
[ "$(inode_fds note)" = "files.inode_handles = no" ] || fail "note: $(inode_fds note)"
out=$(reuse r2 held) || fail "reuse without handles: $out"
echo "$out"
"$BIN/pgiofs" stat "$M" | grep -q '^inodes: [0-9]* known, each holding a descriptor ([0-9]* held): no file handles (files.inode_handles = no)' ||
	fail "pgiofs stat does not say inodes hold descriptors: $("$BIN/pgiofs" stat "$M" | grep '^inodes')"
pgiofs_umount "$M" || fail "cannot unmount"

# ---- no CAP_DAC_READ_SEARCH ----------------------------------------------------
log=$T/nocap.log
capsh --drop=cap_dac_read_search -- -c "exec '$BIN/pgiofs' -s files.inode_fds=16 '$B' '$M'" 2>"$log" ||
	{ cat "$log" >&2; fail "pgiofs without CAP_DAC_READ_SEARCH did not mount"; }
_cleanup_mounts+=("$M")
grep -q "warning: every inode the kernel knows holds a descriptor (the daemon lacks CAP_DAC_READ_SEARCH" "$log" ||
	{ cat "$log" >&2; fail "no warning at mount without CAP_DAC_READ_SEARCH"; }
[ "$(inode_fds handles)" = False ] || fail "handles in use without CAP_DAC_READ_SEARCH"
inode_fds note | grep -q CAP_DAC_READ_SEARCH || fail "pgiofs stat --json's note: $(inode_fds note)"
python3 - "$M/nocap" <<'PY' || fail "files through a mount without handles"
import os, sys
os.mkdir(sys.argv[1])
for i in range(50):
    with open("%s/%d" % (sys.argv[1], i), "w") as f:
        f.write(str(i))
for i in range(50):
    with open("%s/%d" % (sys.argv[1], i)) as f:
        assert f.read() == str(i)
PY
held=$(inode_fds held) inodes=$(inode_fds inodes)
[ "$held" -gt "$inodes" ] || fail "without handles $inodes inodes known but $held descriptors held"
echo "no CAP_DAC_READ_SEARCH: $inodes inodes, $held descriptors held; $(inode_fds note)"
pgiofs_umount "$M" || fail "cannot unmount"

# files.inode_handles = yes refuses to mount without them
if capsh --drop=cap_dac_read_search -- -c "exec '$BIN/pgiofs' -s files.inode_handles=yes '$B' '$M'" 2>"$log"; then
	fail "pgiofs mounted with files.inode_handles = yes without CAP_DAC_READ_SEARCH"
fi
grep -q "cannot mount \"$M\" with files.inode_handles = yes: the daemon lacks CAP_DAC_READ_SEARCH" "$log" ||
	{ cat "$log" >&2; fail "the refusal does not say why"; }
assert_no_mount "$M"

# ---- a file system without handles: overlayfs without nfs_export ---------------
O=$T/o
mkdir -p "$O/lower" "$O/upper" "$O/work" "$O/merged"
mount -t overlay overlay -o "lowerdir=$O/lower,upperdir=$O/upper,workdir=$O/work" "$O/merged" ||
	fail "cannot mount an overlayfs"
on_exit "umount -l '$O/merged'"
"$BIN/pgiofs" "$O/merged" "$M" 2>"$log" || { cat "$log" >&2; fail "pgiofs over overlayfs did not mount"; }
_cleanup_mounts+=("$M")
grep -q "warning: every inode the kernel knows holds a descriptor (the backing file system gives no file handles" "$log" ||
	{ cat "$log" >&2; fail "no warning at mount over overlayfs"; }
[ "$(inode_fds handles)" = False ] || fail "handles in use over overlayfs"
echo "over overlayfs" >"$M/f" && [ "$(cat "$O/upper/f")" = "over overlayfs" ] || fail "writing through the overlayfs mount"
echo "overlayfs: $(inode_fds note)"
pgiofs_umount "$M" || fail "cannot unmount"
echo PASS
