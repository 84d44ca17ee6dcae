# lib.sh -- shared helpers for the shell tests (source it; bash only).
#
# Every helper cleans up after itself: register paths/mounts with the
# functions below and the EXIT trap removes them, even when a test fails.
# Tests exit 0 on pass, 1 on fail, 77 on skip (last output line = reason).

TOP=${TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BIN=${BIN:-$TOP/bin}
TESTBUILD=${TESTBUILD:-$TOP/build/release/tests}
PGBIN=${PGBIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
[ -x "$PGBIN/initdb" ] || PGBIN=/usr/lib/postgresql/15/bin

_cleanup_mounts=()
_cleanup_paths=()
_cleanup_cmds=()
# one root for every temporary directory of this test, made here in the
# test's own shell (mktempdir runs in $(...) subshells, which cannot
# register anything for clean-up)
TEST_TMP=$(mktemp -d /tmp/pgiofs-test.XXXXXX) || exit 1
chmod 755 "$TEST_TMP"
_cleanup_paths+=("$TEST_TMP")
# what the programs under test make in $TMPDIR (pgload's servers and
# compare work directories) goes there too, so that a test judges only
# what it made itself, even with other test runs on the machine
export TMPDIR=$TEST_TMP
# libpq's variables of the caller's shell (a DBA's PGHOST, PGSERVICE...)
# would point pgload and psql at a server of theirs: the tests name theirs
unset PGHOST PGHOSTADDR PGPORT PGSERVICE PGSERVICEFILE PGDATABASE PGUSER PGPASSWORD PGPASSFILE

# is_mounted DIR -- DIR is a mount point (read from mountinfo: root may not
# stat another user's FUSE mount made without allow_other).
is_mounted() {
	local d
	d=$(realpath -m "$1")
	awk -v d="$d" '{ gsub(/\\040/, " ", $5); if ($5 == d) found = 1 } END { exit !found }' /proc/self/mountinfo
}

_lib_cleanup() {
	local i
	for ((i = ${#_cleanup_cmds[@]} - 1; i >= 0; i--)); do
		eval "${_cleanup_cmds[$i]}" >/dev/null 2>&1 || true
	done
	for ((i = ${#_cleanup_mounts[@]} - 1; i >= 0; i--)); do
		local m=${_cleanup_mounts[$i]}
		if is_mounted "$m"; then
			umount -R "$m" 2>/dev/null || fusermount3 -u "$m" 2>/dev/null || umount -R -l "$m" 2>/dev/null
		fi
	done
	_reap_test_tmp
	for ((i = ${#_cleanup_paths[@]} - 1; i >= 0; i--)); do
		rm -rf -- "${_cleanup_paths[$i]}"
	done
}
trap _lib_cleanup EXIT

# _reap_test_tmp -- what a program under test that crashed (a sanitizer
# abort, a SIGKILL) left under $TEST_TMP, which no test's own clean-up
# knows of: PostgreSQL servers, mounts, loop devices over its files.  Said
# on stderr (the test's log): the test's own assertions ran before this.
_reap_test_tmp() {
	local pidfile pid m dev loop
	local -a mounts=()
	while read -r pidfile; do
		pid=$(head -n 1 "$pidfile" 2>/dev/null)
		{ [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; } || continue
		echo "lib.sh: stopping the server $pid left in ${pidfile%/postmaster.pid}" >&2
		# an immediate shutdown, which removes the server's shared memory
		kill -QUIT "$pid" 2>/dev/null
		for ((m = 0; m < 100; m++)); do
			kill -0 "$pid" 2>/dev/null || break
			[ $m -eq 50 ] && kill -KILL "$pid" 2>/dev/null
			sleep 0.1
		done
	done < <(timeout 10 find "$TEST_TMP" -maxdepth 7 -name postmaster.pid 2>/dev/null)
	# mount points under $TEST_TMP, the last mounted first
	mapfile -t mounts < <(awk -v t="$TEST_TMP/" '{ gsub(/\\040/, " ", $5); if (index($5, t) == 1) print $5 }' \
		/proc/self/mountinfo | tac)
	[ ${#mounts[@]} -gt 0 ] && echo "lib.sh: unmounting what was left: ${mounts[*]}" >&2
	# block devices first: a loop device holds the file under it open
	for m in "${mounts[@]}"; do
		dev=$(awk -v d="$m" '{ gsub(/\\040/, " ", $5); if ($5 == d) src = $(NF - 1) } END { print src }' /proc/self/mountinfo)
		[[ $dev == /dev/* ]] && umount "$m" 2>/dev/null
	done
	while read -r loop; do
		echo "lib.sh: detaching $loop, left over a file in $TEST_TMP" >&2
		losetup -d "$loop" 2>/dev/null
	done < <(losetup -n -O NAME,BACK-FILE -l 2>/dev/null | awk -v t="$TEST_TMP/" 'index($2, t) == 1 { print $1 }')
	for m in "${mounts[@]}"; do
		is_mounted "$m" && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
	done
	return 0
}
trap 'exit 1' INT TERM

# on_exit CMD -- run CMD (a string) at exit, in reverse order of registration.
on_exit() { _cleanup_cmds+=("$1"); }

# mktempdir -- print a fresh directory (world-searchable) under $TEST_TMP,
# which is removed at exit.
mktempdir() {
	local d
	d=$(mktemp -d "$TEST_TMP/d.XXXXXX") || exit 1
	chmod 755 "$d"
	echo "$d"
}

# loop_detach DEV FILE -- detach DEV if it is still the loop device on FILE:
# tests run in parallel, and one that detached its device already must not
# detach another test's that got the same number since.
loop_detach() {
	[ "$(cat "/sys/block/${1#/dev/}/loop/backing_file" 2>/dev/null)" = "$2" ] && losetup -d "$1"
	return 0
}

# ext4_on_loop DIR MB [MKFS_OPTION...] -- a fresh ext4 of MB MiB on a loop
# device (its image in a fresh temporary directory), made with the options
# given (-O ^filetype: no file types in directory entries), mounted on DIR;
# the device is in $LOOP.  Unmounted and detached at exit.  Not in a
# subshell: it registers its clean-up.
ext4_on_loop() {
	local img dir=$1 mb=$2
	shift 2
	img=$(mktempdir)/fs.img
	truncate -s "${mb}M" "$img" || fail "cannot make a $mb MiB image"
	mkfs.ext4 -q -F "$@" "$img" || fail "mkfs.ext4 $* failed"
	LOOP=$(losetup --find --show "$img") || fail "losetup failed"
	on_exit "loop_detach '$LOOP' '$img'"
	mount "$LOOP" "$dir" || fail "cannot mount $LOOP"
	on_exit "umount -l '$dir'"
}

# journal_info -- after ext4_on_loop: INFO, the journal statistics of $LOOP's
# ext4 (its first number counts the commits so far)
journal_info() {
	INFO=/proc/fs/jbd2/${LOOP#/dev/}-8/info
	[ -r "$INFO" ] || fail "no journal statistics at $INFO"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; }

# wait_wal_mounts MNT -- until the WAL mounts pgiofs started over the pg_wal
# directories of the clusters it found at MNT are mounted (10 s at most):
# they are made from the daemon, after the mount exists.
wait_wal_mounts() {
	local i
	for ((i = 0; i < 100; i++)); do
		"$BIN/pgiofs" stat "$1" --json 2>/dev/null | grep -q '"wal_mounts":"[^"]*(mounting)' || return 0
		sleep 0.1
	done
}

# doc_block FILE NAME -- the commands of the example in FILE marked
# "tested: NAME": in Markdown the ```sh block after an HTML comment
# "<!-- tested: NAME ...", in a man page the .nf/.fi block after a comment
# '.\" tested: NAME ...', with roff's \- read as -.  Tests run the
# documentation's examples as written, so that they cannot rot.
doc_block() {
	DOC_MD="<!-- tested: $2 " DOC_MAN=".\\\" tested: $2 " awk '
		BEGIN { md = ENVIRON["DOC_MD"]; man = ENVIRON["DOC_MAN"] }
		index($0, md) == 1 { f = 1; next }
		index($0, man) == 1 { f = 3; next }
		f == 1 && /^```sh$/ { f = 2; next }
		f == 2 && /^```$/ { exit }
		f == 3 && /^\.RS$/ { f = 4; next }
		f == 4 && /^\.RE$/ { exit }
		f == 2 { print }
		f == 4 { gsub(/\\-/, "-"); print }' "$1"
}

# uring_switch Y|N -- set the kernel's FUSE over io_uring switch (system
# wide: new mounts only), putting the value found back at exit; skips the
# test on a kernel without FUSE over io_uring.
URING_SWITCH=/sys/module/fuse/parameters/enable_uring
uring_switch() {
	[ -e "$URING_SWITCH" ] || skip "the kernel has no FUSE over io_uring ($URING_SWITCH is missing)"
	if [ -z "${_uring_old:-}" ]; then
		_uring_old=$(cat "$URING_SWITCH")
		on_exit "echo $_uring_old >$URING_SWITCH"
	fi
	echo "$1" >"$URING_SWITCH"
}

# PGIOFS_TEST_URING=yes|no (test_uring_suite.sh): the mounts of the two
# helpers below get -o fuse.uring=VALUE before their own arguments.
#
# pgiofs_mount BACKING MNT [ARGS...] -- mount pgiofs (daemonized) and
# register the mount for clean-up.  Fails the test if the mount fails.
pgiofs_mount() {
	local backing=$1 mnt=$2
	shift 2
	set -- ${PGIOFS_TEST_URING:+-o fuse.uring="$PGIOFS_TEST_URING"} "$@"
	"$BIN/pgiofs" "$@" "$backing" "$mnt" || fail "pgiofs $* $backing $mnt failed"
	_cleanup_mounts+=("$mnt")
	is_mounted "$mnt" || fail "$mnt is not a mount point after pgiofs returned"
	wait_wal_mounts "$mnt"
}

# space_guard MNT MEMBER -- a member of `pgiofs stat MNT --json`'s
# "space_guard" (files.space_guard_mb), as JSON (true, 42).
space_guard() {
	"$BIN/pgiofs" stat "$1" --json |
		python3 -c "import json, sys; print(json.dumps(json.load(sys.stdin)['space_guard']['$2']))"
}

# space_guard_json MNT -- the whole "space_guard" member, for a message.
space_guard_json() {
	"$BIN/pgiofs" stat "$1" --json | grep -o '"space_guard":{[^}]*}'
}

# wait_space_guard MNT true|false WHO -- until MNT's space guard is on
# (true) or off, 5 s at most; else the test fails, WHO: saying so.
wait_space_guard() {
	local i
	for i in $(seq 50); do
		[ "$(space_guard "$1" low)" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$3: the space guard did not turn $([ "$2" = true ] && echo on || echo off): $(space_guard_json "$1")"
}

# pgiofs_umount MNT -- unmount (the WAL mounts pgiofs made over pg_wal
# directories first: -R) and wait until the daemon has exited.
pgiofs_umount() {
	local mnt=$1 i
	umount -R "$mnt" 2>/dev/null || fusermount3 -u "$mnt" || return 1
	for ((i = 0; i < 100; i++)); do
		pgrep -f "pgiofs .* $mnt\$" >/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# assert_no_fuse_mount DIR -- fail if DIR is a FUSE mount.
assert_no_mount() {
	if is_mounted "$1"; then
		fail "$1 is still mounted"
	fi
}

# as_user USER CMD... -- run CMD as USER (via runuser when root).
as_user() {
	local u=$1
	shift
	if [ "$(id -un)" = "$u" ]; then "$@"; else runuser -u "$u" -- "$@"; fi
}

# kernel_elevators -- the block I/O schedulers this kernel has (as the
# queues of its block devices list them), one line, space-separated.
kernel_elevators() {
	local f
	for f in /sys/block/*/queue/scheduler; do
		[ -r "$f" ] && sed 's/[][]//g' "$f" && return 0
	done
}

# shm_mapped_by PID... -- the PostgreSQL dynamic shared memory segments
# (names in /dev/shm) the processes PID... have mapped, one per line.
shm_mapped_by() {
	local p
	for p in "$@"; do
		sed -n 's|.* /dev/shm/\(PostgreSQL\.[0-9]*\).*|\1|p' "/proc/$p/maps" 2>/dev/null
	done | sort -u
}

# fuse_dev_open_to_all -- make /dev/fuse 0666 (Debian's usual mode) for the
# rest of the test, so non-root users can mount.  Tests running side by side
# share the change: the first saves the mode it found, each registers its
# shell's pid, and the last to leave (or the next to come after one that was
# killed) puts the saved mode back.  Under a lock in $DEVFUSE_STATE.
DEVFUSE_STATE=/run/pgiofs-test-devfuse
_devfuse() { # _devfuse enter|leave
	mkdir -p "$DEVFUSE_STATE" || fail "cannot make $DEVFUSE_STATE"
	(
		flock -x 9 || exit 1
		local f live=0
		[ "$1" = leave ] && rm -f "$DEVFUSE_STATE/pid.$$"
		for f in "$DEVFUSE_STATE"/pid.*; do
			[ -e "$f" ] || continue
			if kill -0 "${f##*.}" 2>/dev/null; then live=1; else rm -f "$f"; fi
		done
		if [ "$1" = enter ]; then
			[ $live = 1 ] || [ -f "$DEVFUSE_STATE/mode" ] ||
				stat -c %a /dev/fuse >"$DEVFUSE_STATE/mode" || exit 1
			touch "$DEVFUSE_STATE/pid.$$" && chmod 0666 /dev/fuse
		elif [ $live = 0 ] && [ -f "$DEVFUSE_STATE/mode" ]; then
			chmod "$(cat "$DEVFUSE_STATE/mode")" /dev/fuse && rm -f "$DEVFUSE_STATE/mode"
		fi
	) 9>"$DEVFUSE_STATE/lock"
}
fuse_dev_open_to_all() {
	_devfuse enter || fail "cannot make /dev/fuse usable by other users"
	on_exit "_devfuse leave"
}

# pgiofs_mount_fg LOG BACKING MNT [ARGS...] -- pgiofs in the foreground in
# the background of the test, its log (stderr) appended to LOG, once the
# mount exists; PGIOFS_PID is the daemon (SIGKILLed at exit if still there).
# With PGIOFS_NOFILE=SOFT:HARD the daemon starts under that open-files
# limit (prlimit).
pgiofs_mount_fg() {
	local log=$1 backing=$2 mnt=$3 i
	shift 3
	set -- ${PGIOFS_TEST_URING:+-o fuse.uring="$PGIOFS_TEST_URING"} "$@"
	${PGIOFS_NOFILE:+prlimit --nofile="$PGIOFS_NOFILE"} \
		"$BIN/pgiofs" -f "$@" "$backing" "$mnt" 2>>"$log" &
	PGIOFS_PID=$!
	on_exit "pgiofs_kill $PGIOFS_PID"
	_cleanup_mounts+=("$mnt")
	for ((i = 0; i < 100; i++)); do
		is_mounted "$mnt" && wait_wal_mounts "$mnt" && return 0
		kill -0 "$PGIOFS_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$log" >&2
	fail "pgiofs -f $* $backing $mnt did not mount"
}

# pgiofs_kill PID -- SIGKILL PID if it is still a pgiofs (not a recycled pid).
pgiofs_kill() {
	[ "$(readlink "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$BIN/pgiofs")" ] &&
		kill -9 "$1" 2>/dev/null
	return 0
}

# pgiofs_hup LOG TEXT -- SIGHUP $PGIOFS_PID and wait until the last line of
# its log (see pgiofs_mount_fg) answers the reload; fail unless it says TEXT.
pgiofs_hup() {
	local log=$1 n i
	n=$(grep -c "SIGHUP" "$log")
	kill -HUP "$PGIOFS_PID"
	for ((i = 0; i < 100; i++)); do
		[ "$(grep -c "SIGHUP" "$log")" -gt "$n" ] && break
		sleep 0.1
	done
	tail -n 1 "$log" | grep -qF -- "$2" ||
		fail "after SIGHUP the log says \"$(tail -n 1 "$log")\", not \"$2\""
}

# free_port -- print a TCP port nobody listens on, with no PostgreSQL Unix
# socket of that number either (a test server's private port)
free_port() {
	local p
	for ((p = 20000 + RANDOM % 20000; ; p++)); do
		if ! ss -Hltn "sport = :$p" | grep -q . &&
			! ss -Hlx | grep -q "\.s\.PGSQL\.$p\b"; then
			echo "$p"
			return
		fi
	done
}
