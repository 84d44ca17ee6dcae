#!/bin/bash
# test_failing_disk.sh -- PostgreSQL on a failing disk: on pgiofs it sees
# the same errors and ends the same way as natively (the control).
#
# ext4 on a loop device on pgdisk (ssd model), whose injected faults
# (docs/pgdisk.md, "Injected faults") fail chosen sectors of one file;
# PostgreSQL 15 with its data directory directly on the ext4 (native) and
# on pgiofs in its default configuration over the same ext4.  Each
# scenario runs in both, prints "native: X / pgiofs: Y" (X and Y the
# outcomes, file names and numbers left out) and fails unless they match:
#   1. the sectors of a heap file fail every write, its pages are dirtied
#      and CHECKPOINT writes them back: the CHECKPOINT fails, the server
#      PANICs on the fsync's EIO; with the fault cleared it recovers from
#      the last checkpoint that succeeded (its redo point), every commit a
#      ledger client saw acknowledged during it is present, pg_amcheck is
#      clean;
#   2. the sectors of the WAL segment being written fail every write: the
#      next commit's WAL flush fails and the server PANICs; recovery
#      loses no acknowledged commit;
#   3. the sectors of a heap file fail every read, every cache of it cold
#      (the server restarted, pgiofs remounted, its pages evicted from the
#      page cache of the ext4 and of the mount, fincore shows none): the
#      query fails with EIO, the server stays up, and with the fault
#      cleared the table reads whole;
#   4. the file system fills up in the middle of a COPY (a filler file
#      leaves 24 MiB for a 60 MiB import, in the transaction that creates
#      its table: wal_level = minimal writes no WAL for it): the COPY fails
#      with "No space left on device", the server stays up or recovers
#      (restart_after_crash on), and with the filler removed the same
#      import succeeds.
# The server runs with restart_after_crash = off until 4, so that a PANIC
# ends it and the restart, with the fault cleared, is the test's.  The
# native outcomes must be the failures the faults are for (else the
# faults missed).  About a minute.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../disk/disklib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"
command -v filefrag >/dev/null || fail "filefrag is missing (e2fsprogs)"
command -v fincore >/dev/null || fail "fincore is missing (util-linux)"
[ -x "$PGBIN/pg_amcheck" ] || fail "pg_amcheck is missing in $PGBIN"

W=$(mktempdir)
IMPORT_MB=60
ROWS=$((IMPORT_MB * 10000)) # rows of about 100 bytes
awk -v n=$ROWS 'BEGIN { for (i = 1; i <= n; i++)
	printf "%d\tsome text padded to about a hundred bytes ..............................\n", i }' >"$W/import.tsv"
chmod 644 "$W/import.tsv"

# the disk: ext4 (no reserved blocks: the filler leaves what it leaves to
# everyone) made on the image, served by pgdisk, a loop device on it
disk_image "$W/img" 768M
mkfs.ext4 -q -F -m 0 -E lazy_itable_init=0,lazy_journal_init=0 "$W/img" >"$W/mkfs.log" 2>&1 ||
	fail_log "mkfs.ext4 failed" "$W/mkfs.log"
mkdir -p "$W/dm" "$W/fs" "$W/mnt"
disk_start "$W/img" "$W/dm" --model ssd
CTL=$W/dm/control
LOOP=$(loop_attach "$W/dm/disk")
loop_registered "$LOOP"
fs_mount "$LOOP" "$W/fs"
on_exit "force_umount '$W/mnt'"

# ctl TEXT -- TEXT (printf's format) to pgdisk's control file in one write
ctl() {
	printf "$1" | dd of="$CTL" bs=64k iflag=fullblock status=none ||
		fail "pgdisk refused \"$1\": $(grep '^# last refused' "$CTL")"
}

# fault OP FILE -- a pgdisk rule failing every OP request on each extent of
# FILE (a path in the ext4); the file must be on the disk already (no
# delayed allocation left: fsynced)
fault() {
	local op=$1 file=$2 rules
	filefrag -v -b512 "$file" >"$W/filefrag.out" || fail "filefrag $file failed"
	grep -q "unwritten\|delalloc\|unknown" "$W/filefrag.out" && fail_log "$file is not on the disk yet" "$W/filefrag.out"
	rules=$(awk -v op="$op" '/^ *[0-9]+:/ { gsub(/[.:]+/, " "); printf "add op=%s sectors=%s-%s\\n", op, $4, $5 }' \
		"$W/filefrag.out")
	[ -n "$rules" ] || fail_log "no extent of $file" "$W/filefrag.out"
	ctl "$rules"
	log "$LABEL: ${op}s fail on the $(grep -c '^rule ' "$CTL") extent(s) of $file"
}

# faults_clear -- clear every rule; FAULTS: how many requests they failed
faults_clear() {
	FAULTS=$(awk '$1 == "rule" { for (i = 3; i <= NF; i++) if ($i ~ /^faults=/) n += substr($i, 8) } END { print n + 0 }' "$CTL")
	ctl 'clear all\n'
}

# norm TEXT -- a server message without what differs between two runs:
# quoted names, numbers, LSNs
norm() { sed -E 's/"[^"]*"/"F"/g; s/[0-9A-F]+\/[0-9A-F]+/LSN/g; s/[0-9]+/N/g' <<<"$1"; }

# panic_line -- PANIC: the first PANIC of the server log (normalized), once
# the server is gone (restart_after_crash = off); fails after 60 s
panic_line() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "PANIC:" "$SERVER_LOG" && break
		sleep 0.1
	done
	grep -q "PANIC:" "$SERVER_LOG" || fail_log "$LABEL: no PANIC within 60 s" "$SERVER_LOG"
	wait_server_gone 30 || fail "$LABEL: the server is still running after its PANIC"
	rm -f "$RUN/postmaster.pid"
	PANIC=$(norm "$(grep -m1 -o "PANIC: .*" "$SERVER_LOG")")
}

# rel_file REL -- the backing (or native) path of relation REL's main fork
rel_file() { echo "$FSDATA/$(sql "SELECT pg_relation_filepath('$1')")"; }

# stop_ledger -- end the ledger client (after a PANIC it ends by itself)
stop_ledger() {
	local pid
	for pid in $(cat "$RUN/clients.pids"); do
		kill_group "$pid"
		wait_group_gone "$pid" 10 || fail "$LABEL: the ledger client did not stop"
	done
	: >"$RUN/clients.pids"
}

# restart_checked N -- start the server after a PANIC (faults cleared):
# crash recovery runs, ledger client N's acknowledged commits are there
restart_checked() {
	start_server
	grep -q "database system was interrupted\|not properly shut down" "$SERVER_LOG" ||
		fail_log "$LABEL: the restart did not run crash recovery" "$SERVER_LOG"
	check_ledger "$1" "$(ledger_first "$1")"
}

# evict FILE -- FILE's pages out of the page cache (the server stopped,
# every page clean), and none left; not drop_caches, which would empty
# the caches of everything else running on the machine
evict() {
	{ sync "$1" && dd if="$1" iflag=nocache count=0 status=none; } || fail "$LABEL: cannot evict $1"
	[ "$(fincore -n -o PAGES "$1" | tr -d " ")" = 0 ] || fail "$LABEL: $1 is still cached: $(fincore "$1")"
}

# cold_restart REL -- stop the server, drop every cache of its file REL
# (relative to the data directory) between PostgreSQL and the disk (its
# buffers, pgiofs's caches by a remount, the page cache of the mount and
# of the ext4), start the server again
cold_restart() {
	stop_server
	if [ "$MODE" = pgiofs ]; then
		pgiofs_umount "$W/mnt" || fail "$LABEL: cannot unmount pgiofs"
		evict "$FSDATA/$1"
		pgiofs_mount "$W/fs/backing" "$W/mnt" -o allow_other
	fi
	evict "$PGDATA/$1"
	start_server
}

# scenario_checkpoint -- 1: a heap file's write-back fails in a checkpoint
scenario_checkpoint() {
	local redo before start out file
	LABEL="$MODE 1"
	sql "CREATE TABLE t1 (id int, v int, pad text);
	     INSERT INTO t1 SELECT i, 0, repeat('x', 200) FROM generate_series(1, 3000) i;
	     CHECKPOINT" >/dev/null || fail_log "$LABEL: cannot make t1" "$SERVER_LOG"
	file=$(rel_file t1)
	: >"$RUN/clients.pids"
	start_ledger 1 "$(ledger_first 1)"
	wait_lines "$RUN/ledger.1" 20 60 || fail_log "$LABEL: the ledger client does not commit" "$RUN/ledger.1.err"
	fault write "$file"
	redo=$(sql "SELECT redo_lsn FROM pg_control_checkpoint()")
	sql "UPDATE t1 SET v = v + 1" >/dev/null || fail_log "$LABEL: UPDATE failed" "$SERVER_LOG"
	before=$(sql "SELECT pg_current_wal_insert_lsn()")
	if sql "CHECKPOINT" >"$W/checkpoint.out" 2>&1; then
		out="CHECKPOINT succeeded"
	else
		out="CHECKPOINT failed"
	fi
	panic_line
	out="$out, $PANIC"
	stop_ledger
	faults_clear
	log "$LABEL: $out ($FAULTS writes failed)"
	[ "$FAULTS" -gt 0 ] || fail "$LABEL: no write of t1 reached the failing sectors"
	restart_checked 1
	# the first record at or after the redo point of the last checkpoint
	# that succeeded, before the one that failed began
	start=$(grep -m1 -o "redo starts at [0-9A-F/]*" "$SERVER_LOG" | cut -d' ' -f4)
	[ "$(sql "SELECT '$start'::pg_lsn >= '$redo' AND '$start'::pg_lsn < '$before'")" = t ] ||
		fail_log "$LABEL: recovery started at ${start:-?}, not from the redo point $redo of the last good checkpoint" "$SERVER_LOG"
	log "$LABEL: recovery started at $start (redo point $redo; the failed checkpoint began after $before)"
	[ "$(sql "SELECT count(*) FILTER (WHERE v = 1) || '/' || count(*) FROM t1")" = 3000/3000 ] ||
		fail "$LABEL: t1 after recovery: $(sql "SELECT count(*) FILTER (WHERE v = 1) || '/' || count(*) FROM t1")"
	amcheck "$MODE-1"
	OUT1[$MODE]="$out; recovery from the last good checkpoint, every acknowledged commit present, amcheck clean"
}

# scenario_wal -- 2: the WAL segment being written fails every write
scenario_wal() {
	local seg out
	LABEL="$MODE 2"
	sql "SELECT pg_switch_wal(); CHECKPOINT" >/dev/null || fail_log "$LABEL: cannot switch WAL" "$SERVER_LOG"
	seg=$(sql "SELECT pg_walfile_name(pg_current_wal_insert_lsn())")
	: >"$RUN/clients.pids"
	start_ledger 2 "$(ledger_first 2)"
	wait_lines "$RUN/ledger.2" 20 60 || fail_log "$LABEL: the ledger client does not commit" "$RUN/ledger.2.err"
	fault write "$FSDATA/pg_wal/$seg"
	panic_line
	out=$PANIC
	stop_ledger
	faults_clear
	log "$LABEL: $out ($FAULTS writes failed)"
	[ "$FAULTS" -gt 0 ] || fail "$LABEL: no WAL write reached the failing sectors"
	restart_checked 2
	amcheck "$MODE-2"
	OUT2[$MODE]="$out; every acknowledged commit present after recovery"
}

# scenario_read -- 3: a heap file's sectors fail every read, caches cold
scenario_read() {
	local file out n
	LABEL="$MODE 3"
	sql "CREATE TABLE t3 AS SELECT i AS id, repeat('y', 200) AS pad FROM generate_series(1, 10000) i" >/dev/null ||
		fail_log "$LABEL: cannot make t3" "$SERVER_LOG"
	file=$(sql "SELECT pg_relation_filepath('t3')")
	cold_restart "$file"
	file=$FSDATA/$file
	fault read "$file"
	if sql "SELECT count(*) FROM t3" >"$W/read.out" 2>&1; then
		out="the query succeeded ($(cat "$W/read.out") rows)"
	else
		out="the query failed: $(norm "$(grep -m1 -o "ERROR: .*\|FATAL: .*\|PANIC: .*" "$W/read.out")")"
	fi
	faults_clear
	log "$LABEL: $out ($FAULTS reads failed)"
	if server_up 30; then out="$out, server up"; else out="$out, server down"; fi
	n=$(sql "SELECT count(*) FROM t3") || fail_log "$LABEL: t3 cannot be read with the fault cleared" "$SERVER_LOG"
	[ "$n" = 10000 ] || fail "$LABEL: t3 has $n rows, not 10000"
	OUT3[$MODE]=$out
}

# import OUT -- the bulk import in one transaction that creates its table
import() {
	pgc psql -X -q -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres \
		-c "BEGIN" -c "DROP TABLE IF EXISTS imp" -c "CREATE TABLE imp (id int, t text)" \
		-c "\\copy imp FROM '$W/import.tsv'" -c "COMMIT" >"$1" 2>&1
}

# scenario_enospc -- 4: the file system fills up during a COPY.  OUT4 is
# the outcome's class (compared), DETAIL4 what happened (compared too)
scenario_enospc() {
	local free client panic after
	LABEL="$MODE 4"
	{ sql "ALTER SYSTEM SET restart_after_crash = on" && sql "SELECT pg_reload_conf()"; } >/dev/null ||
		fail_log "$LABEL: cannot set restart_after_crash" "$SERVER_LOG"
	sql "CHECKPOINT" >/dev/null || fail_log "$LABEL: CHECKPOINT failed" "$SERVER_LOG"
	sync -f "$W/fs"
	free=$(df -B1M --output=avail "$W/fs" | tail -n 1)
	fallocate -l $((free - 24))M "$W/fs/filler" || fail "$LABEL: cannot fill the file system"
	log "$LABEL: $(df -B1M --output=avail "$W/fs" | tail -n 1 | xargs) MiB left for a $IMPORT_MB MiB import"
	# pgiofs: files.space_guard_mb (256 by default) sees the file system
	# another program filled within its 100 ms, and from then sends every
	# write of PostgreSQL to the backing file system before write(2) returns
	[ "$MODE" = native ] || wait_space_guard "$W/mnt" true "$LABEL"
	if import "$W/import1.out"; then
		client="the COPY succeeded"
	else
		client=$(grep -m1 -o "ERROR: .*\|FATAL: .*\|PANIC: .*" "$W/import1.out" || head -n 1 "$W/import1.out")
		client="the COPY failed: $(norm "$client")"
	fi
	panic=$(grep -m1 -o "PANIC: .*" "$SERVER_LOG")
	log "$LABEL: $client${panic:+; the server says $panic}"
	if sql "SELECT 1" >/dev/null 2>&1; then
		after="server up"
	else
		rm -f "$W/fs/filler"
		if server_up 60; then
			after="server back by itself once space was freed"
		else
			after="server down"
			kill_postgres 20
			start_server
		fi
	fi
	if [ "$MODE" != native ]; then
		[ "$(space_guard "$W/mnt" written_through)" -gt 0 ] || fail "$LABEL: the space guard was on, yet no write went through it"
	fi
	rm -f "$W/fs/filler"
	[ "$MODE" = native ] || wait_space_guard "$W/mnt" false "$LABEL"
	import "$W/import2.out" || fail_log "$LABEL: the same import failed with the space back" "$W/import2.out"
	[ "$(sql "SELECT count(*) FROM imp")" = $ROWS ] || fail "$LABEL: the import did not load $ROWS rows"
	log "$LABEL: $after; with the space back the import loaded $ROWS rows"
	amcheck "$MODE-4"
	DETAIL4[$MODE]="$client${panic:+, $(norm "$panic")}, $after"
	case $client in
	*"No space left on device"*) OUT4[$MODE]="the COPY failed with \"No space left on device\"" ;;
	*) OUT4[$MODE]=$client ;;
	esac
	case $after in
	"server down") OUT4[$MODE]+=", server down" ;;
	*) OUT4[$MODE]+=", the server stays up or recovers by itself" ;;
	esac
	OUT4[$MODE]+=", the import succeeds once space is freed, amcheck clean"
}

declare -A OUT1 OUT2 OUT3 OUT4 DETAIL4
for MODE in native pgiofs; do
	LABEL=$MODE
	RUN=$W/run.$MODE
	mkdir -p "$RUN" && chown postgres: "$RUN" && chmod 700 "$RUN"
	if [ "$MODE" = pgiofs ]; then
		mkdir -p "$W/fs/backing"
		pgiofs_mount "$W/fs/backing" "$W/mnt" -o allow_other
		mkdir -p "$W/mnt/pg" && chown postgres: "$W/mnt/pg"
		PGDATA=$W/mnt/pg/data FSDATA=$W/fs/backing/pg/data
	else
		mkdir -p "$W/fs/native" && chown postgres: "$W/fs/native"
		PGDATA=$W/fs/native/data FSDATA=$PGDATA
	fi
	PORT=$(free_port)
	START_NO=0
	on_exit "cleanup_cluster '$RUN'"
	init_cluster <<-EOF
		wal_level = minimal
		max_wal_senders = 0
		checkpoint_timeout = 1h
		restart_after_crash = off
	EOF
	start_server
	create_load_tables
	scenario_checkpoint
	scenario_wal
	scenario_read
	scenario_enospc
	stop_server
	[ "$MODE" = native ] || pgiofs_umount "$W/mnt" || fail "cannot unmount pgiofs"
done

# the control must fail as the faults say, or they missed
expect_native() {
	[[ ${OUT1[native]} == *"PANIC:  could not fsync file"*"Input/output error"* ]] &&
		[[ ${OUT2[native]} == *"PANIC:  could not fdatasync file"*"Input/output error"* ]] &&
		[[ ${OUT3[native]} == *"ERROR:  could not read block"*"Input/output error"* ]] &&
		[[ ${DETAIL4[native]} == *"No space left on device"* ]]
}
expect_native || fail "native PostgreSQL did not fail as the injected faults should make it: $(declare -p OUT1 OUT2 OUT3 DETAIL4)"

rc=0
for s in 1 2 3 4; do
	declare -n o=OUT$s
	echo "scenario $s: native: ${o[native]} / pgiofs: ${o[pgiofs]}"
	[ "${o[native]}" = "${o[pgiofs]}" ] || { echo "  MISMATCH"; rc=1; }
	unset -n o
done
# scenario 4 in detail: the error PostgreSQL reports, and whether the
# server stayed up, as natively (files.space_guard_mb)
echo "scenario 4 in detail: native: ${DETAIL4[native]} / pgiofs: ${DETAIL4[pgiofs]}"
[ "${DETAIL4[native]}" = "${DETAIL4[pgiofs]}" ] || { echo "  MISMATCH"; rc=1; }
[ $rc = 0 ] || fail "pgiofs and native PostgreSQL ended differently on a failing disk"
log "all checks passed"
