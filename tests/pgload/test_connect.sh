#!/bin/bash
# test_connect.sh -- `pgload run` finds its server as psql and pgbench do:
# -h -p -U on a server on a non-default port whose user needs a password
# (read from ~/.pgpass), the same through PGHOST/PGPORT/PGUSER; -d names the
# database connected to; nothing embedded starts when a server is given, and
# the embedded one does when none is (PGDATABASE alone names none).  Bad
# input is refused naming it; --version agrees across the three programs;
# -P 1 prints pgbench-style progress lines to a file.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
pg_test_server
W=$(mktempdir)
SRV=$PGHOST PORT=$PGPORT
unset PGHOST PGPORT PGUSER PGDATABASE # each case below says how it connects

# a user that needs a password (the test server trusts everyone else)
psql -X -q -h "$SRV" -p "$PORT" -U "$(pg_user)" -d postgres -v ON_ERROR_STOP=1 <<'SQL' || fail "setup"
CREATE ROLE dba LOGIN SUPERUSER PASSWORD 'pgload-pw-31';
CREATE DATABASE admin;
SQL
sed -i '1i local all dba scram-sha-256' "$SRV/data/pg_hba.conf"
psql -X -qAt -h "$SRV" -p "$PORT" -U "$(pg_user)" -d postgres -c 'SELECT pg_reload_conf()' >/dev/null
H=$(mktempdir) # HOME: the .pgpass
printf '*:%s:*:dba:pgload-pw-31\n' "$PORT" >"$H/.pgpass"
chmod 600 "$H/.pgpass"
printf 'CREATE TABLE t (a int);\nINSERT INTO t SELECT generate_series(1, 5);\n' >"$W/one.sql"

count() { psql -X -At -h "$SRV" -p "$PORT" -U "$(pg_user)" -d "$1" -c 'SELECT count(*) FROM t'; }
# embedded_none -- no embedded server was made (its directory, its initdb)
embedded_none() {
	ls -d "$TMPDIR"/pgload.* >/dev/null 2>&1 && fail "$1: an embedded server directory was made"
	grep -q 'initdb\|server started' "$W/err" && { cat "$W/err"; fail "$1: an embedded server ran"; }
	return 0
}

# ---- -h -p -U as psql, the password from ~/.pgpass --------------------------
HOME=$H "$PGLOAD" run -h "$SRV" -p "$PORT" -U dba --db c1 -f "$W/one.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "-h -p -U with .pgpass"; }
[ "$(count c1)" = 5 ] || fail "-h -p -U: the script was not loaded into --db"
embedded_none "-h -p -U"
# the password is really asked for: without the .pgpass, libpq says so
HOME=$W "$PGLOAD" run -h "$SRV" -p "$PORT" -U dba --db c0 -f "$W/one.sql" >"$W/out" 2>"$W/err" &&
	fail "no password, yet connected"
grep -q 'no password supplied\|password authentication failed' "$W/err" || { cat "$W/err"; fail "no password error"; }
echo "ok: -h -p -U, password from ~/.pgpass"

# ---- the same through the environment -----------------------------------------
HOME=$H PGHOST=$SRV PGPORT=$PORT PGUSER=dba "$PGLOAD" run --db c2 -f "$W/one.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "PGHOST PGPORT PGUSER"; }
[ "$(count c2)" = 5 ] || fail "PGHOST: not loaded"
grep -qF "pgload: using the server of PGHOST=$SRV (--embedded starts pgload's own)" "$W/err" ||
	{ cat "$W/err"; fail "the server taken from PGHOST is not said"; }
embedded_none "PGHOST"
# PGPORT alone names the server too (host from PGHOST's absence: libpq's default socket
# directory has no server of ours, so the failure shows which server was tried)
HOME=$H PGPORT=$PORT PGUSER=dba "$PGLOAD" run -q --db c3 -f "$W/one.sql" >"$W/out" 2>"$W/err" &&
	fail "PGPORT alone reached a server it should not"
grep -q "port $PORT\|\.s\.PGSQL\.$PORT" "$W/err" || { cat "$W/err"; fail "PGPORT not used"; }
embedded_none "PGPORT"
echo "ok: PGHOST, PGPORT, PGUSER and ~/.pgpass"

# ---- -d: the database connected to (a name or a connection string) -------------
HOME=$H "$PGLOAD" run -h "$SRV" -p "$PORT" -U dba -d admin --db c4 -f "$W/one.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "-d admin"; }
[ "$(count c4)" = 5 ] || fail "-d admin: not loaded"
HOME=$H "$PGLOAD" run -d "host=$SRV port=$PORT user=dba dbname=admin" --db c5 -f "$W/one.sql" \
	>"$W/out" 2>"$W/err" || { cat "$W/err"; fail "-d CONNINFO"; }
[ "$(count c5)" = 5 ] || fail "-d CONNINFO: not loaded"
expect 1 'pgload run: --db "admin" is also the database pgload connects to' \
	env HOME="$H" "$PGLOAD" run -h "$SRV" -p "$PORT" -U dba -d admin --db admin -f "$W/one.sql"
echo "ok: -d DBNAME and -d CONNINFO"

# ---- which server: the embedded one when none is named ---------------------------
# (a relative TMPDIR is refused only by the embedded server, before initdb)
expect 1 'TMPDIR "rel" is not usable' env TMPDIR=rel PGDATABASE=admin PGUSER=dba "$PGLOAD" run -f "$W/one.sql"
expect 1 'TMPDIR "rel" is not usable' \
	env TMPDIR=rel PGHOST="$SRV" PGPORT="$PORT" "$PGLOAD" run --embedded -f "$W/one.sql"
expect 1 '--pgbin "/nonexistent"' env PGHOST="$SRV" "$PGLOAD" run --pgbin /nonexistent -f "$W/one.sql"
HOME=$H PGHOST=$SRV PGPORT=$PORT TMPDIR=rel "$PGLOAD" run -q -U dba --db c6 -f "$W/one.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "PGHOST with a TMPDIR only the embedded server would use"; }
echo "ok: PGDATABASE/PGUSER alone start the embedded server; --embedded, --pgbin override PGHOST"

# ---- bad input --------------------------------------------------------------------
expect 1 'pgload run: unknown option "--nosuch"' "$PGLOAD" run --nosuch -f "$W/one.sql"
expect 1 'pgload run: invalid value "abc" for -p/--port: must be a port number from 1 to 65535' \
	"$PGLOAD" run -p abc -f "$W/one.sql"
expect 1 'pgload run: --dsn and -h/--host both say where to connect' \
	"$PGLOAD" run --dsn "host=$SRV" -h "$SRV" -f "$W/one.sql"
expect 1 'pgload run: -h/--host names a server, and --on-pgiofs is for the embedded server' \
	"$PGLOAD" run -h "$SRV" --on-pgiofs -f "$W/one.sql"
expect 1 "pgload run: -d \"$W/one.sql\" is a file, but -d names the database to connect to" \
	"$PGLOAD" run -d "$W/one.sql"
expect 1 'pgload run: -s is not an option: the schema script is --schema FILE' "$PGLOAD" run -s "$W/one.sql"
expect 1 'pgload run: invalid value "0" for -P/--progress' "$PGLOAD" run -P 0 -f "$W/one.sql"
expect 1 'pgload run: option "-h" needs a value' "$PGLOAD" run -f "$W/one.sql" -h
embedded_none "bad input"
echo "ok: bad options refused, naming them"

# ---- --version ---------------------------------------------------------------------
v=$("$PGLOAD" --version) || fail "pgload --version"
[[ "$v" =~ ^pgload\ ([0-9]+\.[0-9]+\.[0-9]+)\ \(libpq\ [0-9.]+\)$ ]] || fail "pgload --version: \"$v\""
ver=${BASH_REMATCH[1]}
[ "$("$PGLOAD" run -V)" = "$v" ] || fail "pgload run -V differs"
for p in pgiofs pgdisk; do
	for o in -V --version; do
		pv=$("$BIN/$p" $o) || fail "$p $o"
		[[ "$pv" =~ ^$p\ $ver\ \(libfuse\ [0-9.]+\)$ ]] || fail "$p $o: \"$pv\", want \"$p $ver (libfuse ...)\""
	done
done
echo "ok: --version: $v"

# ---- -P 1: pgbench-style progress lines on stderr, a file here -----------------------
printf 'CREATE TABLE t (a int);\nSELECT pg_sleep(2.6);\nINSERT INTO t VALUES (1);\n' >"$W/slow.sql"
HOME=$H "$PGLOAD" run -q -P 1 -h "$SRV" -p "$PORT" -U dba --db c7 -f "$W/slow.sql" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "-P 1"; }
n=$(grep -cE '^progress: [0-9]+\.[0-9] s, run 1/1 data, [0-9.]+ MB read, [0-9.]+ statements/s, [0-9]+ rows/s, [0-9.]+ MB/s$' "$W/err")
[ "$n" -ge 2 ] || { cat -A "$W/err"; fail "-P 1: $n progress lines in 2.6 s, want 2 or more"; }
grep -q $'\r\|\033' "$W/err" && { cat -A "$W/err"; fail "-P: terminal control characters in a file"; }
[ "$(grep -c '^progress: ' "$W/out")" = 0 ] || fail "-P: progress on stdout"
echo "ok: -P 1 printed $n progress lines"
