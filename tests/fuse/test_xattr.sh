#!/bin/bash
# test_xattr.sh -- fuse.xattr: with yes (the default) extended attributes
# are passed through to the backing files both ways, and the kernel asks
# pgiofs for security.capability at the first write of each file; with no
# the first request is answered ENOSYS, the kernel sends none after it on
# that connection (the 20 files written ask nothing) and answers
# EOPNOTSUPP itself, and no attribute of a backing file is read, set or
# removed through the mount.  Requests are counted from pgiofs -d's log.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
echo x >"$B/held"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.pg", b"15")' "$B/held" ||
	fail "the backing file system of $B takes no user.* attribute"

count() { grep -c "opcode: $2 " "$1"; }

# the calls through the mount, then 20 files written; prints one line per
# call: its result or its errno's name
cat >"$T/calls.py" <<'PY'
import errno, os, sys
m = sys.argv[1]
def call(what, fn):
    try:
        r = fn()
        print(what, r if r is not None else "ok")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
call("get", lambda: os.getxattr(m + "/held", "user.pg").decode())
call("list", lambda: ",".join(sorted(os.listxattr(m + "/held"))))
call("set", lambda: os.setxattr(m + "/held", "user.new", b"1"))
call("remove", lambda: os.removexattr(m + "/held", "user.pg"))
for i in range(20):
    with open("%s/f%d" % (m, i), "wb") as f:
        f.write(b"%d" % i * 4096)
for i in range(20):
    with open("%s/f%d" % (m, i), "rb") as f:
        assert f.read() == b"%d" % i * 4096, i
PY

for mode in yes no; do
	log=$T/log.$mode
	: >"$log"
	pgiofs_mount_fg "$log" "$B" "$M" -d -s "fuse.xattr=$mode"
	out=$(python3 "$T/calls.py" "$M") || fail "fuse.xattr=$mode: the calls failed: $out"
	pgiofs_umount "$M" || fail "fuse.xattr=$mode: cannot unmount"
	gets=$(count "$log" GETXATTR)
	backing=$(python3 -c 'import os, sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$B/held")
	echo "fuse.xattr=$mode:" $out "| $gets GETXATTR | backing: $backing"
	if [ $mode = yes ]; then
		[ "$out" = "$(printf 'get 15\nlist user.pg\nset ok\nremove ok')" ] ||
			fail "fuse.xattr=yes: want the attribute read, listed, set and removed through the mount, got: $out"
		[ "$backing" = user.new ] ||
			fail "fuse.xattr=yes: the backing file has $backing, want user.new (set through the mount, user.pg removed)"
		[ "$gets" -ge 20 ] ||
			fail "fuse.xattr=yes: $gets GETXATTR for 20 files written: want the kernel's security.capability for each"
		python3 -c 'import os, sys; os.removexattr(sys.argv[1], "user.new"); os.setxattr(sys.argv[1], "user.pg", b"15")' "$B/held"
	else
		[ "$out" = "$(printf 'get ENOTSUP\nlist ENOTSUP\nset ENOTSUP\nremove ENOTSUP')" ] ||
			fail "fuse.xattr=no: want EOPNOTSUPP (ENOTSUP) from every call, got: $out"
		[ "$backing" = user.pg ] ||
			fail "fuse.xattr=no: the backing file has $backing, want user.pg alone (nothing changed through the mount)"
		[ "$gets" -le 1 ] || fail "fuse.xattr=no: $gets GETXATTR requests: the kernel kept asking"
		grep -A1 'opcode: GETXATTR ' "$log" | grep -q 'error: -38' ||
			fail "fuse.xattr=no: the GETXATTR was not answered ENOSYS"
	fi
	rm -f "$B"/f*
done
echo "all checks passed"
