#!/bin/bash
# test_refusals.sh -- every set-up pgiofs must refuse gives a clear message
# naming the input, a non-zero exit, and leaves nothing mounted.
# run alone: it makes /dev/fuse 0600 for a while, which other tests' non-root
# mounts would meet (tests/run.sh)
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
mkdir -p "$T/backing" "$T/mnt" "$T/full" "$T/inner/mnt"
touch "$T/file" "$T/full/x"

# our_mounts -- the FUSE mounts below this test's directory (other tests may
# be mounting elsewhere meanwhile)
our_mounts() { awk -v t="$T/" '$3 ~ /^fuse/ && index($2, t) == 1' /proc/mounts; }

mounts_before=$(our_mounts | wc -l)
# a set-up wrongly accepted must not leave its mount when the test fails
on_exit 'for m in $(our_mounts | awk "{ print \$2 }" | sort -r); do umount -l "$m"; done'

# refuse EXPECTED_TEXT ARGS... -- pgiofs ARGS must fail saying EXPECTED_TEXT.
refuse() {
	local want=$1 out rc
	shift
	out=$("$BIN/pgiofs" "$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || fail "pgiofs $* succeeded; expected a refusal ($want)"
	grep -qF -- "$want" <<<"$out" || fail "pgiofs $*: message \"$out\" does not say \"$want\""
	[ "$(our_mounts | wc -l)" -eq "$mounts_before" ] ||
		fail "pgiofs $* left a mount behind: $(our_mounts)"
	echo "ok: pgiofs $* -> $out"
}

refuse "backing directory \"$T/nope\": No such file or directory" "$T/nope" "$T/mnt"
refuse "backing directory \"$T/file\": not a directory" "$T/file" "$T/mnt"
refuse "mount point \"$T/nope\": No such file or directory" "$T/backing" "$T/nope"
refuse "mount point \"$T/file\": not a directory" "$T/backing" "$T/file"
refuse "mount point is not empty (use -o nonempty)" "$T/backing" "$T/full"
refuse "is inside the backing directory" "$T/inner" "$T/inner/mnt"
refuse "is inside the backing directory" "$T/backing" "$T/backing"
refuse "is inside the mount point" "$T/inner/mnt" "$T/inner"
refuse "unknown mount option \"bogus\"" -o bogus "$T/backing" "$T/mnt"
refuse "unknown option \"--bogus\"" --bogus "$T/backing" "$T/mnt"
refuse "expected BACKING_DIR and MOUNTPOINT, got 1 argument" "$T/backing"
refuse "option \"fuse.max_write_kb=0\": max_write_kb: 0 is out of range (4 to 1024 KiB)" \
	--set fuse.max_write_kb=0 "$T/backing" "$T/mnt"
refuse "option \"attr_timeout=abc\": attr_timeout: \"abc\" is not a number" \
	-o attr_timeout=abc "$T/backing" "$T/mnt"
refuse "option \"policy=nosuch\": policy: \"nosuch\" is not one of: direct, noop, elevator-2.4" --set policy=nosuch "$T/backing" "$T/mnt"

refuse "trace file \"$T/backing/t.lz4\" is inside the backing directory" --trace "$T/backing/t.lz4" "$T/backing" "$T/mnt"
[ ! -e "$T/backing/t.lz4" ] || fail "a refused --trace left its file behind"
printf '[fuse]\nattr_timeout = 1\nmax_background = 99999\n' >"$T/bad.conf"
refuse "$T/bad.conf:3: max_background: 99999 is out of range" -c "$T/bad.conf" "$T/backing" "$T/mnt"
printf '[fuse]\nattr_timeout = 1\n\n[bdi]\nmax_ratio = 5\n[fuse]\nmax_background = 99\n' >"$T/dup.conf"
refuse "$T/dup.conf:7: section [fuse] appears a second time (first on line 2): merge them" -c "$T/dup.conf" "$T/backing" "$T/mnt"
printf '[fuse]\nattr_timeout = 1\nattr_timeout = 2\n' >"$T/dup2.conf"
refuse "$T/dup2.conf:3: \"attr_timeout\" is set a second time in [fuse] (first on line 2)" -c "$T/dup2.conf" "$T/backing" "$T/mnt"
refuse "profile \"nosuch\": no such profile (profiles: as-2.6, dbaware, deadline-2.6, direct," \
	--profile nosuch "$T/backing" "$T/mnt"
refuse "profile \"nosuch\": no such profile" "$T/backing" "$T/mnt" -o profile=nosuch
refuse "unknown mount option \"bogus\"" "$T/backing" "$T/mnt" -o allow_other,bogus
refuse "expected BACKING_DIR and MOUNTPOINT, got 3 arguments" "$T/backing" "$T/mnt" -o ro "$T/x"
refuse "profile \"Bad Name\": not a profile name" --profile "Bad Name" "$T/backing" "$T/mnt"
refuse "[fault] settings inject I/O errors and crashes; they are for tests and need --allow-faults" \
	--set fault.error=eio "$T/backing" "$T/mnt"
printf '[fuse]\nno_such_knob = 1\n' >"$T/bad2.conf"
refuse "$T/bad2.conf:2: unknown option \"no_such_knob\" in section [fuse]" -c "$T/bad2.conf" "$T/backing" "$T/mnt"
printf '[nosuch]\nx = 1\n' >"$T/bad3.conf"
refuse "$T/bad3.conf:2: unknown section [nosuch]" -c "$T/bad3.conf" "$T/backing" "$T/mnt"
printf '[fuse]\nthis line is wrong\n' >"$T/bad4.conf"
refuse "$T/bad4.conf:2: syntax error" -c "$T/bad4.conf" "$T/backing" "$T/mnt"
refuse "$T/missing.conf: cannot open: No such file or directory" -c "$T/missing.conf" "$T/backing" "$T/mnt"

# /dev/fuse not usable by an unprivileged user (it is 0600 root here;
# make sure of it for the duration of the check)
old=$(stat -c %a /dev/fuse)
chmod 0600 /dev/fuse
on_exit "chmod $old /dev/fuse"
chown nobody "$T/backing" "$T/mnt"
out=$(runuser -u nobody -- "$BIN/pgiofs" "$T/backing" "$T/mnt" 2>&1) && fail "non-root mount with a 0600 /dev/fuse succeeded"
grep -qF "cannot open /dev/fuse: Permission denied (run pgiofs as root, or make the device usable by other users as Debian does: chmod 0666 /dev/fuse)" <<<"$out" ||
	fail "unexpected /dev/fuse message: $out"
echo "ok: /dev/fuse refusal -> $out"
chmod "$old" /dev/fuse
chown root "$T/backing" "$T/mnt"

# a backing directory that is itself on a pgiofs mount
pgiofs_mount "$T/backing" "$T/mnt"
mkdir "$T/mnt/sub" "$T/mnt2"
mounts_before=$(our_mounts | wc -l)
refuse "is already on the pgiofs mount \"$T/mnt\"" "$T/mnt/sub" "$T/mnt2"

# -o nonempty does mount over a non-empty directory, which is then hidden
pgiofs_mount "$T/backing" "$T/full" -o nonempty
[ -d "$T/full/sub" ] || fail "-o nonempty mount does not show the backing directory"
pgiofs_umount "$T/full" || fail "cannot unmount $T/full"
pgiofs_umount "$T/mnt" || fail "cannot unmount $T/mnt"
[ -e "$T/full/x" ] || fail "the hidden content of $T/full is gone after unmount"
assert_no_mount "$T/mnt"
echo "all refusals ok"
