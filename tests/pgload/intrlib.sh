# intrlib.sh -- helpers of the interrupt tests (source after pglib.sh).
#
# A case starts pgload in the background, waits until it is in the step
# under test, sends SIGINT (once or twice), and checks: exit status 2, the
# step named in pgload's messages, and nothing of the run left -- no new
# $TMPDIR/pgload.* or $TMPDIR/pgload-compare.* directory, no process naming one,
# no mount under one, no loop device backed by a file in one.
#
# Steps are reached for real where they take long enough: the SQL writes a
# marker file from the server (COPY ... TO, as the superuser the cluster
# user is) and then sleeps or hangs; slow wrappers of initdb and postgres
# write a marker and wait.  The short steps use pgload's test hook,
# PGLOAD_TEST_INTERRUPT_AT=STEP (pgload sends itself SIGINT as STEP starts).

MARK=$(mktempdir)
chmod 1777 "$MARK"
export PGLOAD_TEST_MARK=$MARK

# slow_schema -- tables t and u; an insert into t waits 60 s on the server
# (trigger slow_row), and so does slow_key(), for an index on it.
slow_schema() {
	cat <<EOF
CREATE TABLE t (a int);
CREATE TABLE u (a int);
CREATE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM pg_sleep(60); RETURN NEW; END \$\$;
CREATE TRIGGER slow BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION slow_row();
CREATE FUNCTION slow_key(int) RETURNS int IMMUTABLE LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM pg_sleep(60); RETURN \$1; END \$\$;
EOF
}

# snap -- pgload's temporary directories, one a line.
snap() { ls -d "$TMPDIR"/pgload.* "$TMPDIR"/pgload-compare.* 2>/dev/null | sort; }

# start ARGS... -- `pgload ARGS` in the background: $pid, stderr in $W/err,
# stdin from $STDIN (a background job's is /dev/null otherwise).
start() {
	rm -f "$MARK"/*
	snap >"$W/before"
	"$PGLOAD" "$@" <"${STDIN:-/dev/null}" >"$W/out" 2>"$W/err" &
	pid=$!
}

# abandon MESSAGE -- pgload is stuck or slow beyond reason: kill it, let a
# small compare sweep what a killed compare leaves (its mounts, loop devices
# and daemons: the next compare removes them), and fail with MESSAGE.
abandon() {
	cat "$W/err" >&2
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	"$PGLOAD" compare --gen 0.001 --backends tmpfs --profiles native --runs 1 --stream-mb 0 -q \
		--out "$W/sweep" >/dev/null 2>&1
	fail "$1"
}

# wait_mark NAME -- until the marker NAME appears (then a moment more, for
# the statement after it to be under way).  A compare sets up every cell
# first, on a modelled disk slowly: on a loaded machine that takes more than
# a minute, so the wait is long (it ends as soon as the marker is there).
wait_mark() {
	local i
	for ((i = 0; i < 1800; i++)); do
		if [ -e "$MARK/$1" ]; then
			sleep 0.3
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	abandon "pgload never reached the marker \"$1\""
}

# finish -- wait for pgload (60 s at most): its exit status in $rc.
finish() {
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		abandon "pgload still running 60 s after SIGINT"
	fi
	rc=0
	wait "$pid" || rc=$?
}

# left -- what this case left: new directories, and processes, mounts and
# loop devices naming a pgload directory that is not an older one.
# ours -- the pgload directories named on stdin that are not older ones.
ours() {
	grep -oE "$TMPDIR/pgload(-compare)?\\.[A-Za-z0-9]{6}" | sort -u | comm -23 - "$W/before"
}

left() {
	local new
	new=$(comm -13 "$W/before" <(snap))
	[ -n "$new" ] && echo "directories: $new"
	[ -n "$(ps -eo args= | grep -v grep | ours)" ] &&
		echo "processes: $(ps -eo pid=,args= | grep -E "$TMPDIR/pgload(-compare)?\\." | grep -v grep)"
	[ -n "$(ours </proc/mounts)" ] && echo "mounts: $(grep -E " $TMPDIR/pgload(-compare)?\\." /proc/mounts)"
	[ -n "$(losetup -a 2>/dev/null | ours)" ] && echo "loop devices: $(losetup -a | grep pgload)"
	return 0
}

# assert_left_nothing WHAT -- nothing left (processes get 5 s to exit).
assert_left_nothing() {
	local i l
	for ((i = 0; i < 50; i++)); do
		l=$(left)
		[ -z "$l" ] && return 0
		sleep 0.1
	done
	cat "$W/err" >&2
	fail "$1: left behind: $l"
}

# check WHAT STEP [FINAL] -- exit status 2; the signal named STEP (the text
# after "while"); FINAL (a fixed string) in the last message; nothing left.
check() {
	local what=$1 step=$2 final=${3:-}
	[ "$rc" = 2 ] || { cat "$W/err" >&2; fail "$what: exit status $rc, want 2"; }
	grep -qF "pgload: Interrupt received while $step" "$W/err" ||
		{ cat "$W/err" >&2; fail "$what: no \"Interrupt received while $step\""; }
	if [ -n "$final" ]; then
		grep -qF -- "$final" "$W/err" || { cat "$W/err" >&2; fail "$what: no \"$final\""; }
	fi
	assert_left_nothing "$what"
	echo "ok: $what"
}

# slow_bin DIR -- DIR holds initdb and postgres wrappers that write the marker
# "initdb" / "postgres", wait 30 s (ended by SIGTERM, SIGINT, SIGQUIT), then
# run the real program.
slow_bin() {
	local dir=$1 prog
	mkdir -p "$dir"
	for prog in initdb postgres; do
		cat >"$dir/$prog" <<EOF
#!/bin/bash
: >"\$PGLOAD_TEST_MARK/$prog"
sleep 30 &
s=\$!
trap 'kill \$s; exit 1' TERM INT QUIT
wait \$s
exec "$PGBIN/$prog" "\$@"
EOF
		chmod 755 "$dir/$prog"
	done
}
