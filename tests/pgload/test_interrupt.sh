#!/bin/bash
# test_interrupt.sh -- SIGINT at every step of `pgload run`: initdb, starting
# the server, mounting pgiofs, connecting (also to a server that never
# answers), creating the database, the schema, data (COPY, also from a
# stalled pipe and with --jobs) and post phases, writing the report and
# cleaning up; twice in a row; with the embedded server (also on pgiofs)
# and with --dsn.  Each time: exit status 2, the step named ("Interrupt
# received while STEP" at once, "interrupted while STEP" at the end), no
# server, temporary directory or mount left, and with --dsn the database
# pgload created dropped (one it did not create is left alone).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"
. "$(dirname "$0")/intrlib.sh"

need_pg
W=$(mktempdir)

# the workload: each slow phase writes its marker, then waits on the server
slow_schema >"$W/schema.sql"
{ cat "$W/schema.sql"; printf "COPY (SELECT 1) TO '%s/schema';\nSELECT pg_sleep(60);\n" "$MARK"; } >"$W/schema_slow.sql"
printf "COPY (SELECT 1) TO '%s/data';\nCOPY t FROM stdin;\n1\n2\n\\\\.\n" "$MARK" >"$W/data.sql"
printf 'COPY u FROM stdin;\n1\n2\n\\.\n' >"$W/data_fast.sql"
printf "COPY (SELECT 1) TO '%s/post';\nCREATE INDEX u_slow ON u (slow_key(a));\n" "$MARK" >"$W/post.sql"
printf 'SELECT 1;\n' >"$W/fast.sql"

# phase_args PHASE -- the scripts of a run that waits in PHASE
phase_args() {
	case $1 in
	schema) echo "--schema $W/schema_slow.sql --data $W/data.sql --post $W/post.sql" ;;
	data) echo "--schema $W/schema.sql --data $W/data.sql --post $W/post.sql" ;;
	post) echo "--schema $W/schema.sql --data $W/data_fast.sql --post $W/post.sql" ;;
	esac
}
phase_file() { case $1 in schema) echo "$W/schema_slow.sql" ;; data) echo "$W/data.sql" ;; post) echo "$W/post.sql" ;; esac; }
EMB="the embedded server is stopped and its files are removed"

# ---- embedded server: a real SIGINT in every step long enough for one ---------
slow_bin "$W/slow"
start run --pgbin "$W/slow" --schema "$W/fast.sql"
wait_mark initdb
kill -INT "$pid"
finish
check "embedded: SIGINT during initdb" "running initdb of $TMPDIR/pgload." "; $EMB"

ln -sf "$PGBIN/initdb" "$W/slow/initdb" # the real initdb; a slow postgres
start run --pgbin "$W/slow" --schema "$W/fast.sql"
wait_mark postgres
kill -INT "$pid"
finish
check "embedded: SIGINT while the server starts" "starting the server" \
	"interrupted while starting the server; $EMB"

for ph in schema data post; do
	start run $(phase_args $ph)
	wait_mark $ph
	kill -INT "$pid"
	finish
	step="running the $ph phase of $(phase_file $ph), run 1/1"
	check "embedded: SIGINT in the $ph phase" "$step" "interrupted while $step; $EMB"
done

# an impatient user: SIGINT twice
start run $(phase_args data)
wait_mark data
kill -INT "$pid"
sleep 0.05
kill -INT "$pid"
finish
grep -qF 'pgload: Interrupt received again: cleaning up, please wait' "$W/err" ||
	{ cat "$W/err"; fail "second SIGINT not seen"; }
check "embedded: SIGINT twice in the data phase" "running the data phase of $W/data.sql, run 1/1"

# ---- embedded server: the short steps, by the test hook ------------------------
# hook STEP STEPTEXT ARGS... -- `pgload ARGS` interrupts itself as STEP
# starts; check as above (FINAL: the final message's text)
hook() {
	local at=$1 text=$2 where=embedded
	shift 2
	case " $* " in *" --dsn "*) where=--dsn ;; *" --on-pgiofs "*) where="on pgiofs" ;; esac
	rm -f "$MARK"/*
	snap >"$W/before"
	PGLOAD_TEST_INTERRUPT_AT=$at "$PGLOAD" "$@" >"$W/out" 2>"$W/err" &
	pid=$!
	finish
	check "$where: SIGINT as \"$at\" starts (hook)" "$text" "${FINAL:-}"
}
FINAL="; $EMB"
hook connect "connecting to the server" run --schema "$W/fast.sql"
hook createdb#2 'creating the database "pgload", run 2/2' run --runs 2 --schema "$W/schema.sql" --data "$W/data_fast.sql"
hook data "running the data phase of $W/data_fast.sql, run 1/1" run --schema "$W/schema.sql" --data "$W/data_fast.sql"
hook report "writing the report" run --schema "$W/fast.sql" --json "$W/r.json"
grep -q '"runs"' "$W/r.json" || fail "the report of the finished run was not written"
FINAL=""
hook cleanup "cleaning up; finishing it first" run --schema "$W/fast.sql"
hook data,cleanup "running the data phase of $W/data_fast.sql, run 1/1" \
	run --schema "$W/schema.sql" --data "$W/data_fast.sql"
grep -qF 'Interrupt received again' "$W/err" || { cat "$W/err"; fail "data,cleanup: second SIGINT not seen"; }

# ---- --dsn: the database pgload created is dropped -----------------------------
pg_test_server
nodb() { # nodb DB -- DB does not exist
	[ "$(psql -X -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$1'")" = 0 ] ||
		fail "database $1 left behind"
}
for ph in schema data post; do
	start run --dsn "$DSN" --db "i_$ph" $(phase_args $ph)
	wait_mark $ph
	kill -INT "$pid"
	finish
	check "--dsn: SIGINT in the $ph phase" "running the $ph phase of $(phase_file $ph), run 1/1" \
		"pgload: database \"i_$ph\" dropped"
	nodb "i_$ph"
done

# with --jobs: the COPY waits in a worker
start run --dsn "$DSN" --db i_jobs --jobs 2 $(phase_args data)
wait_mark data
kill -INT "$pid"
finish
check "--dsn --jobs 2: SIGINT in the data phase" "running the data phase of $W/data.sql" 'database "i_jobs" dropped'
nodb i_jobs

# twice, in the post phase
start run --dsn "$DSN" --db i_twice $(phase_args post)
wait_mark post
kill -INT "$pid"
kill -INT "$pid"
finish
check "--dsn: SIGINT twice in the post phase" "running the post phase of $W/post.sql" 'database "i_twice" dropped'
nodb i_twice

# a COPY fed by a pipe whose writer stalls: the read ends at the signal
mkfifo "$W/pipe"
(
	printf "COPY (SELECT 1) TO '%s/data';\nCOPY u FROM stdin;\n" "$MARK"
	seq 1 300
	exec sleep 60
) >"$W/pipe" &
writer=$!
on_exit "kill $writer"
STDIN=$W/pipe start run --dsn "$DSN" --db i_pipe --schema "$W/schema.sql" --data -
wait_mark data
kill -INT "$pid"
finish
kill "$writer"
check "--dsn: SIGINT while COPY data comes from a stalled pipe" "running the data phase of stdin, run 1/1" \
	'database "i_pipe" dropped'
nodb i_pipe

# connecting to a server that accepts and never answers
python3 - "$W/hang" <<'PY' &
import os, socket, sys, time
os.makedirs(sys.argv[1])
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1] + "/.s.PGSQL.5999")
s.listen(8)
held = []
while True:
    held.append(s.accept())
PY
hang=$!
on_exit "kill $hang"
for ((i = 0; i < 50; i++)); do [ -S "$W/hang/.s.PGSQL.5999" ] && break; sleep 0.1; done
start run --dsn "host=$W/hang port=5999 dbname=postgres" --schema "$W/fast.sql"
sleep 1
kill -INT "$pid"
finish
check "--dsn: SIGINT while connecting to a server that never answers" "connecting to the server" \
	"nothing of the run is left on the server"

# the short steps by the hook; a database pgload did not create stays
FINAL=""
hook connect "connecting to the server" run --dsn "$DSN" --db i_c --schema "$W/fast.sql"
hook createdb 'creating the database "i_cd", run 1/1' run --dsn "$DSN" --db i_cd --schema "$W/fast.sql"
nodb i_cd
createdb i_theirs
hook createdb 'creating the database "i_theirs", run 1/1' run --dsn "$DSN" --db i_theirs --force --schema "$W/fast.sql"
[ "$(psql -X -At -d i_theirs -c 'SELECT 1')" = 1 ] || fail "a database pgload did not create was dropped"
hook createdb#2 'creating the database "i_cd2", run 2/2' run --dsn "$DSN" --db i_cd2 --runs 2 --schema "$W/fast.sql"
nodb i_cd2
hook report "writing the report" run --dsn "$DSN" --db i_r --schema "$W/fast.sql"
nodb i_r
hook cleanup "cleaning up" run --dsn "$DSN" --db i_cl --schema "$W/fast.sql"
nodb i_cl

# ---- on pgiofs -------------------------------------------------------------------
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && [ -x "$BIN/pgiofs" ]; then
	FINAL="; $EMB"
	hook pgiofs "mounting pgiofs at $TMPDIR/pgload." run --on-pgiofs --schema "$W/fast.sql"
	hook initdb "running initdb of $TMPDIR/pgload." run --on-pgiofs --schema "$W/fast.sql"
	start run --on-pgiofs $(phase_args data)
	wait_mark data
	kill -INT "$pid"
	kill -INT "$pid"
	finish
	check "on pgiofs: SIGINT twice in the data phase" "running the data phase of $W/data.sql" "$EMB"
else
	echo "note: the --on-pgiofs cases need root, /dev/fuse and bin/pgiofs: not run"
fi
