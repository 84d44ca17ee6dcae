#!/bin/bash
# test_tools.sh -- what tar, cp -a and rsync -aHAX need works on a pgiofs
# mount: each tool copies the same source tree (files, holes, hard links,
# symlinks incl. dangling ones, a FIFO, odd modes, owners, times, xattrs) to a
# plain directory and through pgiofs, and the two results are identical
# (names, types, modes, owners, sizes, link counts, targets, mtimes, contents,
# xattrs), both as seen through the mount and in its backing directory.
source "$(dirname "$0")/../lib.sh"
need_root
T=$(mktempdir)
S=$T/src
mkdir -p "$S/dir/sub" "$S/empty" "$T/plain" "$T/backing" "$T/mnt"

# the source tree
head -c 200000 /dev/urandom >"$S/file"
printf 'small\n' >"$S/dir/small"
truncate -s 10M "$S/sparse" && printf 'end' | dd of="$S/sparse" bs=1 seek=5000000 conv=notrunc 2>/dev/null
ln "$S/file" "$S/dir/hardlink"
ln -s ../file "$S/dir/rel-link"
ln -s /etc/passwd "$S/abs-link"
ln -s nowhere "$S/dangling"
mkfifo "$S/fifo"
chmod 0600 "$S/dir/small"; chmod 4755 "$S/file"; chmod 2775 "$S/dir/sub"; chmod 1777 "$S/empty"
chown 101:104 "$S/dir/small" "$S/dir/sub"
chown -h nobody "$S/dir/rel-link"
setfattr -n user.colour -v blue "$S/dir/small"
setfattr -n user.empty "$S/file"
# every time is in the past: a copy made in the same second as the source
# could otherwise look preserved by accident (rsync skips equal times)
find "$S" -depth -exec touch -h -d '2001-02-03 04:05:06.789' {} +
touch -h -d '1999-12-31 23:59:59.5' "$S/dir/rel-link" "$S/dir/small"

pgiofs_mount "$T/backing" "$T/mnt" --set time_gran_ns=1 # exact timestamps, as on ext4

# describe DIR -- a canonical listing of everything a copy must preserve
describe() {
	(cd "$1" && find . -printf '%p %y %m %U %G %n %l %T@\n' | sed 's/\(\.[0-9]\{6\}\)[0-9]* *$/\1/' | sort &&
		find . -type f ! -name fifo -exec md5sum {} + | sort -k2 &&
		getfattr -R -h -d -m 'user\.' . 2>/dev/null | grep -v '^$' | sort)
}

check_tool() {
	local name=$1 cmd=$2
	rm -rf "$T/plain"/* "$T/mnt"/*
	(eval "${cmd//DEST/$T/plain}") || fail "$name into a plain directory failed"
	(eval "${cmd//DEST/$T/mnt}") || fail "$name into the pgiofs mount failed"
	describe "$T/plain" >"$T/plain.txt"
	describe "$T/mnt" >"$T/mnt.txt"
	diff -u "$T/plain.txt" "$T/mnt.txt" || fail "$name: the copy through pgiofs differs from the plain copy"
	describe "$T/backing" >"$T/backing.txt"
	diff -u "$T/plain.txt" "$T/backing.txt" || fail "$name: the backing directory differs from the plain copy"
	echo "ok: $name ($(wc -l <"$T/plain.txt") facts compared)"
}

check_tool "cp -a" 'cp -a "$S"/. DEST/'
check_tool "tar" '(cd "$S" && tar --xattrs --xattrs-include="user.*" -cf - .) | (cd DEST && tar --xattrs --xattrs-include="user.*" -xpf -)'
check_tool "rsync -aHAX" 'rsync -aHAX --sparse "$S"/ DEST/ && touch -h -r "$S" DEST'

# and back out again: tar and cp -a reading from the mount
rm -rf "$T/plain"/* "$T/mnt"/*
cp -a "$S"/. "$T/mnt"/
mkdir "$T/out"
(cd "$T/mnt" && tar --xattrs --xattrs-include='user.*' -cf - .) | (cd "$T/out" && tar --xattrs --xattrs-include='user.*' -xpf -)
describe "$S" >"$T/src.txt"
describe "$T/out" >"$T/out.txt"
diff -u "$T/src.txt" "$T/out.txt" || fail "tar reading from the mount does not reproduce the source"
echo "ok: tar out of the mount reproduces the source"
