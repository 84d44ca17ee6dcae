# pglib.sh -- helpers for the pgload shell tests (source after tests/lib.sh).
#
# pg_test_server starts a private PostgreSQL cluster (Unix socket only) and
# registers its shutdown and removal with lib.sh's exit trap; it exports
# PGHOST, PGPORT, PGUSER and DSN for psql, pg_dump and `pgload --dsn`.

PGLOAD=${PGLOAD:-$BIN/pgload}
[ -x "$PGLOAD" ] || PGLOAD=$TOP/bin/pgload

need_pg() {
	[ -x "$PGBIN/initdb" ] || skip "no PostgreSQL server binaries in $PGBIN"
	command -v psql >/dev/null || skip "no psql"
	[ -x "$PGLOAD" ] || fail "pgload binary $PGLOAD not built"
}

# need_pgiofs_root -- PostgreSQL, pgiofs, /dev/fuse and root: what a
# compare with pgiofs cells needs (skips saying which is missing).
need_pgiofs_root() {
	need_pg
	[ -x "$BIN/pgiofs" ] || skip "pgiofs not built"
	[ -c /dev/fuse ] || skip "no /dev/fuse"
	need_root
}

# pg_user -- the OS user that runs the test servers.
pg_user() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

pg_test_server() {
	local dir user port
	need_pg
	dir=$(mktempdir)
	user=$(pg_user)
	chown "$user" "$dir"
	port=$((20000 + RANDOM % 30000))
	as_user "$user" "$PGBIN/initdb" -D "$dir/data" -A trust -U "$user" -E UTF8 \
		--no-locale --no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; fail "initdb failed"; }
	on_exit "as_user $user $PGBIN/pg_ctl -D $dir/data -m immediate stop"
	as_user "$user" "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
		-o "-k $dir -p $port -c listen_addresses= -c fsync=off" start >/dev/null ||
		{ cat "$dir/server.log"; fail "server did not start"; }
	export PGHOST=$dir PGPORT=$port PGUSER=$user PGDATABASE=postgres
	export DSN="host=$dir port=$port user=$user dbname=postgres"
	PG_TEST_DIR=$dir
}

# table_checksums DB -- "table md5" per user table, rows in a canonical order.
table_checksums() {
	local db=$1 t sum
	psql -X -At -d "$db" -c "SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables ORDER BY 1" |
		while IFS= read -r t; do
			sum=$(psql -X -At -v ON_ERROR_STOP=1 -d "$db" -c "SELECT count(*) || ' ' || coalesce(md5(string_agg(x::text, E'\n' ORDER BY x::text)), '-') FROM $t x") ||
				sum="ERROR"
			printf '%s %s\n' "$t" "$sum"
		done
}

# schema_checksum DB -- md5 of the schema as pg_dump sees it.
schema_checksum() {
	pg_dump -X --schema-only --no-owner -d "$1" 2>/dev/null | grep -v -e '^--' -e '^\\restrict' -e '^\\unrestrict' | md5sum | cut -d' ' -f1
}

# expect STATUS PATTERN CMD... -- run CMD (stdout in $W/out, stderr in
# $W/err), check its exit status and that stderr has the fixed string PATTERN.
expect() {
	local want=$1 pat=$2 rc
	shift 2
	"$@" >"$W/out" 2>"$W/err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		cat "$W/err" >&2
		fail "exit status $rc, want $want: $*"
	fi
	grep -qF -- "$pat" "$W/err" || { cat "$W/err" >&2; fail "stderr lacks \"$pat\": $*"; }
}

# has PATTERN -- the last stderr has the fixed string PATTERN too.
has() { grep -qF -- "$1" "$W/err" || { cat "$W/err" >&2; fail "stderr lacks \"$1\""; }; }

# assert_clean -- no server or temp directory of pgload is left.
assert_clean() {
	local left
	left=$(pgrep -f "postgres -D $TMPDIR/pgload\." || true)
	[ -z "$left" ] || fail "pgload left a server running: $left"
	left=$(ls -d "$TMPDIR"/pgload.* 2>/dev/null | grep -v -f <(printf '%s\n' "${PGLOAD_PREEXISTING[@]:-none}") || true)
	[ -z "$left" ] || fail "pgload left temporary directories: $left"
}

# compare_work_dir ERRFILE -- the work directory a `pgload compare` named on stderr.
compare_work_dir() {
	sed -n "s|.*work directory \\($TMPDIR/pgload-compare\\.[A-Za-z0-9]*\\).*|\\1|p" "$1" | head -n 1
}

# assert_compare_clean WD -- nothing of the compare run with work directory
# WD remains: the directory, a mount, a loop device, a process (a server,
# pgiofs, pgdisk) naming it.
assert_compare_clean() {
	local wd=$1 i
	[ -n "$wd" ] || fail "no work directory reported"
	[ -e "$wd" ] && fail "work directory $wd left behind"
	grep -q " $wd" /proc/self/mountinfo && fail "a mount under $wd left behind"
	losetup -a | grep -q "$wd" && fail "a loop device on $wd left behind: $(losetup -a | grep "$wd")"
	for ((i = 0; i < 50; i++)); do
		pgrep -f "$wd" >/dev/null || return 0
		sleep 0.1
	done
	fail "a process of $wd left behind: $(pgrep -af "$wd")"
}

# compare_snapshot -- what a `pgload compare` could have set up: its work
# directories, loop devices and mounts, all under $TMPDIR (those of other
# tests running beside this one are not).
compare_snapshot() {
	ls -d "$TMPDIR"/pgload-compare.* 2>/dev/null
	losetup -a | grep -F -- "$TMPDIR" | sort
	grep -F -- "$TMPDIR" /proc/self/mountinfo | cut -d' ' -f5 | sort
}

# compare_refused DIR MESSAGE ARGS... -- `pgload compare --gen 0.01 --out
# DIR/bad ARGS` fails saying MESSAGE and sets nothing up: no --out, and
# compare_snapshot as in DIR/before.
compare_refused() {
	local dir=$1 msg=$2
	shift 2
	"$PGLOAD" compare --gen 0.01 --out "$dir/bad" "$@" >/dev/null 2>"$dir/err" &&
		fail "accepted: $*"
	grep -qF -- "$msg" "$dir/err" || { cat "$dir/err"; fail "message for $*: want \"$msg\""; }
	[ -e "$dir/bad" ] && fail "--out created for $*"
	cmp -s "$dir/before" <(compare_snapshot) ||
		fail "something was set up for $*: $(diff "$dir/before" <(compare_snapshot))"
	return 0
}

# Directories of concurrently running pgloads are not ours to judge.
PGLOAD_PREEXISTING=($(ls -d "$TMPDIR"/pgload.* 2>/dev/null))
