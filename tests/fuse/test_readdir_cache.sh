#!/bin/bash
# test_readdir_cache.sh -- fuse.cache_readdir: a directory listed again is
# served from the kernel's cache (no READDIR request reaches pgiofs), no
# directory open or release reaches pgiofs after the first OPENDIR (answered
# ENOSYS), and the listing follows every change made through the mount
# (create, mkdir, rename in and out, unlink, rmdir, links); a directory of
# 3000 long names, read in many READDIR requests each on a stream of its
# own, lists every name once; fsync of a directory reaches pgiofs.  With
# cache_readdir = no every listing asks pgiofs, through OPENDIR and
# RELEASEDIR.  Requests are counted from pgiofs -d's log.  On a backing
# directory whose offsets are positions in a list (an overlayfs merged
# directory) names removed while a listing is under way make no later name
# go missing.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
need_root
T=$(mktempdir)

# readdirs LOG -- READDIR and READDIRPLUS requests in LOG so far
readdirs() { grep -cE 'opcode: READDIR(PLUS)? ' "$1"; }
# count LOG OPCODE -- OPCODE requests in LOG so far
count() { grep -c "opcode: $2 " "$1"; }

# listing DIR -- its names, sorted, on one line
listing() { ls -A "$1" | sort | tr '\n' ' '; }

# expect DIR WANT -- the listing of DIR is WANT, and that of the backing
# directory under it too
expect() {
	local got back
	got=$(listing "$1")
	back=$(listing "$T/b${1#"$T/m"}")
	[ "$got" = "$2" ] || fail "$LABEL: listing of $1 is \"$got\", want \"$2\""
	[ "$back" = "$2" ] || fail "$LABEL: backing listing \"$back\", want \"$2\""
}

for mode in yes no; do
	LABEL=cache_readdir=$mode
	rm -rf "$T/b" "$T/m"
	mkdir -p "$T/b/d" "$T/m"
	touch "$T/b/d/a" "$T/b/d/b"
	log=$T/log.$mode
	: >"$log"
	pgiofs_mount_fg "$log" "$T/b" "$T/m" -d -s "fuse.cache_readdir=$mode"
	expect "$T/m/d" "a b "
	n0=$(readdirs "$log")
	for i in 1 2 3 4 5 6 7 8 9 10; do listing "$T/m/d" >/dev/null; done
	n1=$(readdirs "$log")
	if [ "$mode" = yes ]; then
		[ "$n1" -eq "$n0" ] || fail "$LABEL: 10 listings of an unchanged directory sent $((n1 - n0)) READDIRs"
	else
		[ "$((n1 - n0))" -ge 10 ] || fail "$LABEL: 10 listings sent only $((n1 - n0)) READDIRs"
	fi
	# every change through the mount shows in the next listing
	touch "$T/m/d/c" && expect "$T/m/d" "a b c "
	mkdir "$T/m/d/e" && expect "$T/m/d" "a b c e "
	mv "$T/m/d/a" "$T/m/d/e/a2" && expect "$T/m/d" "b c e " && expect "$T/m/d/e" "a2 "
	mkdir "$T/m/o" && mv "$T/m/d/b" "$T/m/o/b" && expect "$T/m/d" "c e " && expect "$T/m/o" "b "
	mv "$T/m/o/b" "$T/m/d/b3" && expect "$T/m/d" "b3 c e " && expect "$T/m/o" ""
	rm "$T/m/d/c" && expect "$T/m/d" "b3 e "
	rm "$T/m/d/e/a2" && rmdir "$T/m/d/e" && expect "$T/m/d" "b3 "
	ln -s b3 "$T/m/d/l" && ln "$T/m/d/b3" "$T/m/d/h" && expect "$T/m/d" "b3 h l "
	# a long listing: many READDIRs, each from the offset the kernel has
	mkdir "$T/m/big"
	(cd "$T/m/big" && seq -f "a-long-name-to-fill-the-readdir-buffers-quickly-%05g" 1 3000 | xargs touch) ||
		fail "$LABEL: cannot create the big directory"
	r0=$(readdirs "$log")
	[ "$(ls -A "$T/m/big" | sort | uniq | wc -l)" -eq 3000 ] || fail "$LABEL: the big directory lists $(ls -A "$T/m/big" | wc -l) names"
	[ "$(ls -A "$T/m/big" | sort)" = "$(ls -A "$T/b/big" | sort)" ] || fail "$LABEL: the big directory's names differ"
	[ $(($(readdirs "$log") - r0)) -gt 2 ] || fail "$LABEL: the big listing took $(($(readdirs "$log") - r0)) READDIRs"
	# fsync of a directory reaches pgiofs
	f0=$(count "$log" FSYNCDIR)
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)' "$T/m/d" ||
		fail "$LABEL: fsync of a directory failed"
	[ "$(count "$log" FSYNCDIR)" -gt "$f0" ] || fail "$LABEL: fsync of a directory did not reach pgiofs"
	opendirs=$(count "$log" OPENDIR) releasedirs=$(count "$log" RELEASEDIR)
	if [ "$mode" = yes ]; then
		[ "$opendirs" -le 1 ] && [ "$releasedirs" -eq 0 ] ||
			fail "$LABEL: $opendirs OPENDIR and $releasedirs RELEASEDIR requests"
	else
		[ "$opendirs" -ge 10 ] && [ "$releasedirs" -ge 10 ] ||
			fail "$LABEL: only $opendirs OPENDIR and $releasedirs RELEASEDIR requests"
	fi
	pgiofs_umount "$T/m" || fail "$LABEL: unmount"
	echo "ok: $LABEL: $((n1 - n0)) READDIRs for 10 listings, $opendirs OPENDIRs; every change through the mount listed"
done
# offsets that are positions: a listing goes on from where the kernel is
# although 50 names before it were unlinked meanwhile (each READDIR of a
# fresh stream, seeking to the offset, would skip 50 names)
LABEL=overlay
mkdir -p "$T/lower/d" "$T/upper" "$T/work" "$T/ovl" "$T/om"
touch "$T/lower/d/from-lower" # d is in both layers: a merged directory
mount -t overlay overlay -o "lowerdir=$T/lower,upperdir=$T/upper,workdir=$T/work" "$T/ovl" ||
	fail "$LABEL: cannot mount an overlayfs"
on_exit "umount -l '$T/ovl'"
pgiofs_mount "$T/ovl" "$T/om"
(cd "$T/om/d" && seq -f "a-long-name-to-fill-the-readdir-buffers-quickly-%05g" 1 3000 | xargs touch) ||
	fail "$LABEL: cannot create the names"
python3 -c 'import os, sys
d, back = sys.argv[1], sys.argv[2]
want, seen = set(os.listdir(back)), []
for e in os.scandir(d):
    seen.append(e.name)
    if len(seen) == 50:
        for n in seen:
            os.unlink(os.path.join(d, n))
missing = want - set(seen)
if missing or len(seen) != len(set(seen)):
    sys.exit("%d names missing (%s), %d listed twice" % (len(missing), sorted(missing)[0] if missing else "", len(seen) - len(set(seen))))' \
	"$T/om/d" "$T/ovl/d" || fail "$LABEL: a listing with names unlinked under way"
pgiofs_umount "$T/om" || fail "$LABEL: unmount"
echo "ok: $LABEL: a listing under way on an overlayfs merged directory lists every name once"
echo "all checks passed"
