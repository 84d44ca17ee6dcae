#!/bin/bash
# test_syscalls.sh -- syscall semantics through pgiofs must equal the backing
# filesystem's: run helper_syscalls (a fixed script of about 900 calls, one
# normalized line each) in a plain directory and in a pgiofs mount of another
# directory on the same filesystem, and diff the outputs.
#
# Rounds: the root of a default mount; a PostgreSQL temp directory (pgiofs
# treats the files there by class); write-back caching off (when pgiofs has
# that tunable); and -o allow_other with --unpriv 101.  In each round, then
# compare the trees the two runs left behind (helper_syscalls --dump):
# the plain directory against the mount itself, against the backing directory
# after unmounting (did everything reach the backing store?), and against a
# fresh mount of it (reads with a cold page cache go through the daemon).
#
# --unpriv checks permissions and the ownership of files created by a
# non-root user.  If an allow_other mount is not possible here, that round is
# reported and left out (the rest still decides the result).
#
# Every difference is shown as `diff -u` (native first); the test fails if
# there is any.
. "$(dirname "$0")/../lib.sh"

need_root
H=$TESTBUILD/fuse/helper_syscalls
[ -x "$H" ] || fail "$H not built (run make)"
[ -x "$BIN/pgiofs" ] || fail "$BIN/pgiofs not built (run make)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed"

T=$(mktempdir)
bad=()

# compare NAME A B -- diff two outputs; remember a failure.
compare() {
	if ! diff -u --label "native: $1" --label "pgiofs: $1" "$2" "$3" >"$T/diff" 2>&1; then
		echo "--- $1 differs (- native, + pgiofs):"
		head -n 300 "$T/diff"
		bad+=("$1")
	else
		echo "ok: $1 ($(wc -l <"$2") lines identical)"
	fi
}

# run_helper OUT ARGS... -- run the helper with a time limit; a hang or a
# crash is a failure of its own.
run_helper() {
	local out=$1 rc
	shift
	timeout -k 5 120 "$H" "$@" >"$out" 2>"$out.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "helper_syscalls $* exited $rc:"
		tail -n 5 "$out.err"
		tail -n 5 "$out"
		bad+=("helper_syscalls $* (exit $rc)")
		return 1
	fi
	return 0
}

# one_round TAG MOUNTOPTS HELPEROPTS [SUBDIR] -- the full comparison in
# $T/TAG; with SUBDIR the script runs in that subdirectory rather than in the
# root of the mount (the daemon treats its root inode specially).
one_round() {
	local tag=$1 mopts=$2 hopts=$3 sub=${4:-}
	local d=$T/$tag
	mkdir -p "$d/native/$sub" "$d/backing/$sub" "$d/mnt"
	chmod 755 "$d" "$d/native" "$d/backing" "$d/mnt" "$d/native/$sub" "$d/backing/$sub"

	echo "== $tag: syscalls in ./$sub (mount options: ${mopts:-none})"
	run_helper "$d/native.out" $hopts "$d/native/$sub" ||
		fail "helper_syscalls fails on a plain directory"
	pgiofs_mount "$d/backing" "$d/mnt" --set time_gran_ns=1 $mopts
	if run_helper "$d/mnt.out" $hopts "$d/mnt/$sub"; then
		compare "$tag syscall output" "$d/native.out" "$d/mnt.out"
	fi

	run_helper "$d/native.dump" --dump "$d/native"
	run_helper "$d/mnt.dump" --dump "$d/mnt" &&
		compare "$tag tree seen through the mount" "$d/native.dump" "$d/mnt.dump"
	pgiofs_umount "$d/mnt" || bad+=("$tag: unmount of $d/mnt failed")
	run_helper "$d/backing.dump" --dump "$d/backing" &&
		compare "$tag backing tree after unmount" "$d/native.dump" "$d/backing.dump"
	pgiofs_mount "$d/backing" "$d/mnt" --set time_gran_ns=1 $mopts
	run_helper "$d/cold.dump" --dump "$d/mnt" &&
		compare "$tag tree through a fresh mount (cold cache)" "$d/native.dump" "$d/cold.dump"
	pgiofs_umount "$d/mnt" || bad+=("$tag: unmount of $d/mnt failed")
}

one_round plain "" ""

# in a PostgreSQL temp directory every file is of class "temp", which pgiofs
# reads and writes with O_DIRECT on the backing side when aligned.
one_round pg-temp "" "" base/pgsql_tmp

# write-back caching off: the kernel sends every write (and O_APPEND) through.
if "$BIN/pgiofs" --help-tunables 2>&1 | grep -q "fuse.writeback_cache"; then
	one_round no-writeback "-s fuse.writeback_cache=no -s fuse.keep_cache=no" "" work
else
	echo "note: pgiofs has no fuse.writeback_cache tunable; that round left out"
fi

# allow_other: as root this needs no user_allow_other in /etc/fuse.conf.
probe=$T/probe
mkdir -p "$probe/b" "$probe/m"
if "$BIN/pgiofs" -o allow_other "$probe/b" "$probe/m" 2>"$probe/err" &&
	mountpoint -q "$probe/m"; then
	_cleanup_mounts+=("$probe/m")
	pgiofs_umount "$probe/m"
	one_round allow_other "-o allow_other" "--unpriv 101" work
else
	echo "note: pgiofs -o allow_other does not mount here ($(tail -n 1 "$probe/err")); unprivileged checks left out"
fi

if [ ${#bad[@]} -gt 0 ]; then
	fail "pgiofs differs from the backing filesystem in ${#bad[@]} comparisons (diffs above): $(IFS=,; echo "${bad[*]}")"
fi
echo "PASS: pgiofs syscall semantics equal the backing filesystem's"
