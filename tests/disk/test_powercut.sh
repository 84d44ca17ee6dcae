#!/bin/bash
# test_powercut.sh -- pull the plug: PostgreSQL recovers from simulated power
# cuts of the modelled disk with no acknowledged transaction lost, on
# pgiofs and natively.
#
# A recorded run: a file system (ext4; ext3 and xfs too with LONG=1) made
# on a disk image, served by pgdisk (hdd model, 8 MiB volatile write cache)
# with its write log, a loop device with direct I/O on it; PostgreSQL's data
# directory on pgiofs (default profile) on that file system, or directly on
# it (native, the control).  The load: two ledger clients making transfers
# between accounts, one committed transaction each, every transfer recorded
# with the time its COMMIT was acknowledged in a file outside the disk
# under test; a bulk-import client (COPY batches, each recorded once
# acknowledged); two CHECKPOINTs.  Then, for each of N cut points (records
# of the log drawn from a generator seeded with POWERCUT_SEED, within the
# load), `pgdisk cut` builds the disk as the power cut would have left it
# (unflushed writes still in the cache kept or lost by a seeded choice),
# and on a fresh loop device on that image: the file system's own recovery
# (a mount) and its checker (e2fsck -fn, xfs_repair -n) find it clean;
# PostgreSQL starts (through pgiofs in the pgiofs case) and recovers; every
# transfer acknowledged before the cut is there, every account's balance
# is its opening balance plus the transfers present (and the total is
# unchanged), every import batch acknowledged before the cut is complete
# and none is partial; pg_amcheck is clean.
#
# Mode "broken" runs pgiofs with fault.error = skip on every sync (an
# fsync that syncs nothing): then the checks must fail in at least 90% of
# the cuts (the test catches the bug it exists for).  It runs after the
# others in make check too.  Mode "nobarrier" (not run by default) is
# native PostgreSQL on ext4 or ext3 mounted with -o nobarrier, a file
# system that sends the disk no flushes: it shows what the disk's write
# cache alone loses; its failure rate is reported, not judged.
#
# Cuts per run: 3 (make check), 25 with LONG=1 (make check-long);
# POWERCUT_CUTS overrides.  POWERCUT_FS (ext4; LONG=1: "ext4 ext3 xfs"),
# POWERCUT_MODES ("pgiofs native broken"; pgiofs:PROFILE mounts pgiofs with
# --profile PROFILE), POWERCUT_LOAD_SECONDS (12), POWERCUT_SEED (1).
# Prints one line per cut and a summary per run.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/disklib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../fuse/pgcluster.sh"

if [ "${LONG:-0}" = 1 ]; then
	CUTS=${POWERCUT_CUTS:-25}
	FSES=${POWERCUT_FS:-ext4 ext3 xfs}
else
	CUTS=${POWERCUT_CUTS:-3}
	FSES=${POWERCUT_FS:-ext4}
fi
MODES=${POWERCUT_MODES:-pgiofs native broken}
LOAD_SECONDS=${POWERCUT_LOAD_SECONDS:-12}
SEED=${POWERCUT_SEED:-1}
IMAGE_SIZE=768M
NACC=100       # accounts per ledger client
OPENING=100000 # every account's opening balance
IMPORT_ROWS=5000
for fs in $FSES; do
	command -v "mkfs.$fs" >/dev/null || fail "mkfs.$fs is missing (apt-get install e2fsprogs xfsprogs)"
done
command -v xfs_repair >/dev/null || ! [[ " $FSES " == *" xfs "* ]] || fail "xfs_repair is missing"
[ -x "$PGBIN/pg_amcheck" ] || fail "pg_amcheck is missing in $PGBIN"

# the broken pgiofs: every sync (fsync, fdatasync) skipped from the start
# of the load on (set up before it normally: the cluster is durable)
BROKEN_FAULTS='[fault]\ndirection = sync\nerror = skip\nnth = 1\ncount = 0\n'

now_ns() { echo "${EPOCHREALTIME/./}000"; }

# make_fs FS IMG -- a file system on the image file itself (not logged:
# it is the base the log starts from).
make_fs() {
	case $1 in
	ext4 | ext3) "mkfs.$1" -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$2" ;;
	xfs) mkfs.xfs -q -f "$2" ;;
	esac >"$W/mkfs.log" 2>&1 || fail_log "mkfs.$1 failed" "$W/mkfs.log"
}

# check_fs FS DEV -- the file system's checker finds nothing (after the
# kernel's journal or log recovery at the mount before).
check_fs() {
	case $1 in
	ext4 | ext3) e2fsck -fn "$2" ;;
	xfs) xfs_repair -n "$2" ;;
	esac >"$W/fsck.log" 2>&1
}

# start_transfers N -- ledger client N in the background: transfers between
# its own accounts (no deadlocks between clients), one transaction each,
# ids N*10^9+1, ...; each acknowledged id is written with the time of its
# acknowledgement (psql prints RETURNING only after the COMMIT returned).
start_transfers() {
	local n=$1 base=$(($1 * 1000))
	setsid bash -c "RANDOM=$((SEED * 100 + n))
		for ((i = $n * 1000000000 + 1; ; i++)); do
			a=\$((RANDOM % $NACC + $base + 1)); b=\$((RANDOM % ($NACC - 1) + $base + 1))
			[ \$b -ge \$a ] && b=\$((b + 1))
			m=\$((RANDOM % 100 + 1))
			echo \"WITH x AS (UPDATE accounts SET bal = bal + CASE WHEN id = \$a THEN -\$m ELSE \$m END
			      WHERE id IN (\$a, \$b)) INSERT INTO transfers VALUES (\$i, \$a, \$b, \$m) RETURNING id;\"
		done | runuser -u postgres -- stdbuf -oL '$PGBIN/psql' -X -q -At -v ON_ERROR_STOP=1 \
			-h '$RUN' -p $PORT -d postgres |
		while read -r id; do echo \"\$id \${EPOCHREALTIME/./}000\"; done" \
		>"$W/acks.$n" 2>"$W/acks.$n.err" &
	echo $! >>"$RUN/clients.pids"
	disown $!
}

# start_batches -- the import client: batches of $IMPORT_ROWS rows by COPY,
# each recorded with the time it was acknowledged.
start_batches() {
	setsid bash -c "for ((b = 1; ; b++)); do
		awk -v b=\$b 'BEGIN { for (i = 1; i <= $IMPORT_ROWS; i++)
			printf \"%d\\t%d\\t%s\\n\", b, i, \"row \" i \" of batch \" b \" padded to about a hundred bytes .................\" }' |
		runuser -u postgres -- '$PGBIN/psql' -X -q -v ON_ERROR_STOP=1 -h '$RUN' -p $PORT \
			-d postgres -c '\\copy bulk FROM STDIN' || exit 1
		echo \"\$b \${EPOCHREALTIME/./}000\"
	done" >"$W/batches" 2>"$W/batches.err" &
	echo $! >>"$RUN/clients.pids"
	disown $!
}

# stop_clients -- end the load clients (their process groups).
stop_clients() {
	local pid
	for pid in $(cat "$RUN/clients.pids"); do
		kill_group "$pid"
		pkill -g "$pid" 2>/dev/null # the bash loops of the group
		wait_group_gone "$pid" 10 || fail "load client $pid did not stop"
	done
	: >"$RUN/clients.pids"
}

# mount_data MODE FSDIR MNT [PGIOFS ARGS...] -- where PGDATA lives: pgiofs
# on FSDIR/backing at MNT, or FSDIR itself (native); sets PGDATA.
mount_data() {
	local mode=$1 fsdir=$2 mnt=$3
	shift 3
	if [ "$mode" = native ] || [ "$mode" = nobarrier ]; then
		PGDATA=$fsdir/pg/data
		return
	fi
	mkdir -p "$fsdir/backing" "$mnt"
	if [ "$mode" = broken ]; then # in the foreground: SIGHUP switches the faults on
		echo "; no faults yet" >"$W/faults.conf"
		pgiofs_mount_fg "$W/pgiofs.log" "$fsdir/backing" "$mnt" -o allow_other \
			--allow-faults -c "$W/faults.conf"
	else
		[ -n "$PROFILE" ] && set -- --profile "$PROFILE" "$@"
		"$BIN/pgiofs" -o allow_other "$@" "$fsdir/backing" "$mnt" 2>"$W/pgiofs.err" ||
			fail_log "pgiofs $* on $fsdir/backing failed" "$W/pgiofs.err"
	fi
	PGDATA=$mnt/pg/data
}

umount_data() {
	local mode=$1 mnt=$2
	[ "$mode" = native ] || [ "$mode" = nobarrier ] && return 0
	force_umount "$mnt"
	wait_daemon_gone "$mnt" || fail "pgiofs on $mnt did not exit"
}

# record FS MODE -- the recorded run: sets LOG, BASE, T_FROM and T_TO (the
# load's window, CLOCK_REALTIME ns).
record() {
	local fs=$1 mode=$2 i
	IMG=$W/img BASE=$W/base LOG=$W/log
	disk_image "$IMG" "$IMAGE_SIZE"
	make_fs "$fs" "$IMG"
	cp --sparse=always "$IMG" "$BASE"
	mkdir -p "$W/dm" "$W/fs" "$W/mnt"
	disk_start "$IMG" "$W/dm" --log "$LOG"
	LOOP=$(loop_attach "$W/dm/disk")
	loop_registered "$LOOP"
	if [ "$mode" = nobarrier ]; then fs_mount "$LOOP" "$W/fs" -o nobarrier; else fs_mount "$LOOP" "$W/fs"; fi
	on_exit "force_umount '$W/mnt'"
	mount_data "$mode" "$W/fs" "$W/mnt"
	mkdir -p "$(dirname "$PGDATA")" && chown postgres: "$(dirname "$PGDATA")"
	LABEL="$fs/$mode record"
	init_cluster </dev/null
	# the lines init_cluster appended: initdb synced the file before them
	pgfile sync "$PGDATA/postgresql.conf" || fail "$LABEL: cannot sync postgresql.conf"
	start_server
	sql "CREATE TABLE accounts (id int PRIMARY KEY, bal bigint NOT NULL);
	     INSERT INTO accounts SELECT c * 1000 + i, $OPENING FROM generate_series(1, 2) c,
	                                 generate_series(1, $NACC) i;
	     CREATE TABLE transfers (id bigint PRIMARY KEY, src int, dst int, amt int);
	     CREATE TABLE bulk (batch int, id int, pad text, PRIMARY KEY (batch, id));
	     CHECKPOINT" >/dev/null || fail_log "$LABEL: cannot create the tables" "$SERVER_LOG"
	if [ "$mode" = broken ]; then
		printf "$BROKEN_FAULTS" >"$W/faults.conf"
		pgiofs_hup "$W/pgiofs.log" "settings reloaded"
		log "$LABEL: from now on pgiofs skips every fsync and fdatasync"
	fi
	: >"$RUN/clients.pids"
	T_FROM=$(now_ns)
	start_transfers 1
	start_transfers 2
	start_batches
	for ((i = 1; i <= LOAD_SECONDS; i++)); do
		sleep 1
		if [ $i = $((LOAD_SECONDS / 3)) ] || [ $i = $((2 * LOAD_SECONDS / 3)) ]; then
			sql CHECKPOINT >/dev/null || fail_log "$LABEL: CHECKPOINT failed" "$SERVER_LOG"
		fi
	done
	T_TO=$(now_ns)
	stop_clients
	log "$LABEL: $(wc -l <"$W/acks.1") + $(wc -l <"$W/acks.2") transfers and $(wc -l <"$W/batches") import batches acknowledged in ${LOAD_SECONDS} s"
	[ "$(wc -l <"$W/acks.1")" -gt 0 ] || fail_log "$LABEL: no transfer was acknowledged" "$W/acks.1.err"
	stop_server
	umount_data "$mode" "$W/mnt"
	umount "$W/fs" || fail "$LABEL: cannot unmount $W/fs"
	loop_detach "$LOOP" "$W/dm/disk"
	disk_stop "$W/dm" "$DISK_PID"
	"$PGDISK" log --records "$LOG" >"$W/records" 2>"$W/records.err" ||
		fail_log "$LABEL: pgdisk log failed" "$W/records.err"
	log "$LABEL: the log: $(awk '$1 ~ /^(records|writes|flushes|write_bytes)$/ { printf "%s %s ", $1, $2 }' "$W/records")"
	rm -f "$IMG"
}

# cut_points -- CUTS record numbers within the load window, drawn with the
# seed, in increasing order (record lines begin with their number; fault
# records are not cut points).
cut_points() {
	awk -v from="$T_FROM" -v to="$T_TO" -v n="$CUTS" -v seed="$SEED" '
		$1 ~ /^[0-9]+$/ && $2 != "fault" && $3 >= from && $3 <= to { c[m++] = $1 }
		END {
			srand(seed)
			for (i = 0; i < n && m > 0; i++) print c[int(rand() * m)]
		}' "$W/records" | sort -n
}

# check_cut FS MODE SEQ I -- build the image after record SEQ and check it;
# 0 if everything holds, else 1 with the reason in $WHY.
check_cut() {
	local fs=$1 mode=$2 seq=$3 i=$4 img=$W/cut.img r rc missing bad total naccts drift partial lostb
	WHY=""
	"$PGDISK" cut --at "$seq" --seed $((SEED * 1000 + i)) "$LOG" "$BASE" "$img" >"$W/cut.out" 2>&1 ||
		fail_log "pgdisk cut --at $seq failed" "$W/cut.out"
	CUT_NS=$(awk '$1 == "cut_time_ns" { print $2 }' "$W/cut.out")
	CUT_INFO=$(awk '$1 ~ /^(pending|volatile|lost)$/ { printf "%s %s ", $1, $2 }' "$W/cut.out")
	# a fresh loop device and mount: nothing cached from the recorded run
	CLOOP=$(loop_attach "$img")
	loop_registered "$CLOOP"
	mkdir -p "$W/cfs" "$W/cmnt"
	on_exit "umount '$W/cfs'"
	# the file system's own recovery at mount, then its checker
	if ! mount "$CLOOP" "$W/cfs" 2>"$W/mount.err" || ! umount "$W/cfs" ||
		! check_fs "$FS" "$CLOOP" || ! mount "$CLOOP" "$W/cfs" 2>>"$W/mount.err"; then
		WHY="the file system does not recover: $(cat "$W/mount.err" "$W/fsck.log" 2>/dev/null |
			grep -v '^Pass\|^Phase\|^ *-' | head -c 300)"
		umount "$W/cfs" 2>/dev/null
		loop_detach "$CLOOP" "$img"
		rm -f "$img"
		return 1
	fi
	# acknowledged before the cut (a line cut short by the clients' end
	# has no full time stamp and is left out)
	cat "$W"/acks.1 "$W"/acks.2 | awk -v t="$CUT_NS" 'NF == 2 && length($2) == length(t) && $2 < t { print $1 }' >"$W/acked"
	ACKED=$(wc -l <"$W/acked")
	awk -v t="$CUT_NS" 'NF == 2 && length($2) == length(t) && $2 < t { print $1 }' "$W/batches" >"$W/acked_batches"
	chmod 644 "$W/acked" "$W/acked_batches"
	LABEL="$fs/$mode cut $i"
	mount_data "$mode" "$W/cfs" "$W/cmnt"
	START_NO=$((START_NO + 1))
	SERVER_LOG=$RUN/server.$START_NO.log
	if ! timeout -k 5 "$CMD_TIMEOUT" runuser -u postgres -- "$PGBIN/pg_ctl" -D "$PGDATA" \
		-l "$SERVER_LOG" -w -t 120 start >"$RUN/pg_ctl.out" 2>&1; then
		WHY="PostgreSQL does not start: $(cat "$SERVER_LOG" "$RUN/pg_ctl.out" 2>/dev/null |
			grep -m1 -E 'PANIC|FATAL|pg_ctl:')"
		cleanup_cluster_dir
		return 1
	fi
	record_server
	r=$(pgc psql -X -q -At -h "$RUN" -p "$PORT" -d postgres \
		-c "CREATE TEMP TABLE acked (id bigint); CREATE TEMP TABLE acked_b (batch int)" \
		-c "\\copy acked FROM '$W/acked'" -c "\\copy acked_b FROM '$W/acked_batches'" \
		-c "SELECT (SELECT count(*) FROM acked a WHERE NOT EXISTS (SELECT 1 FROM transfers t WHERE t.id = a.id))
		   || ' ' || (SELECT count(*) FROM transfers)
		   || ' ' || (SELECT count(*) FROM accounts)
		   || ' ' || (SELECT coalesce(sum(bal), 0) - count(*) * $OPENING FROM accounts)
		   || ' ' || (SELECT count(*) FROM accounts a WHERE bal <> $OPENING
		              - coalesce((SELECT sum(amt) FROM transfers WHERE src = a.id), 0)
		              + coalesce((SELECT sum(amt) FROM transfers WHERE dst = a.id), 0))
		   || ' ' || (SELECT count(*) FROM (SELECT batch FROM bulk GROUP BY batch
		              HAVING count(*) <> $IMPORT_ROWS) x)
		   || ' ' || (SELECT count(*) FROM acked_b a WHERE NOT EXISTS
		              (SELECT 1 FROM bulk b WHERE b.batch = a.batch))" 2>"$W/check.err")
	rc=$?
	if [ $rc != 0 ] || [ -z "$r" ]; then
		WHY="the checking queries failed (psql exit $rc): $(head -c 300 "$W/check.err")"
	else
		read -r missing total naccts drift bad partial lostb <<<"$r"
		PRESENT=$total MISSING=$missing
		[ "$missing" = 0 ] || WHY="$missing of $ACKED acknowledged transfers lost"
		[ "$naccts" = $((2 * NACC)) ] || WHY="$WHY; $naccts of $((2 * NACC)) accounts present"
		[ "$drift" = 0 ] || WHY="$WHY; the balances' total moved by $drift"
		[ "$bad" = 0 ] || WHY="$WHY; $bad balances disagree with the transfers present"
		[ "$partial" = 0 ] || WHY="$WHY; $partial import batches present in part"
		[ "$lostb" = 0 ] || WHY="$WHY; $lostb acknowledged import batches lost"
	fi
	if [ -z "$WHY" ]; then
		pgc pg_amcheck -h "$RUN" -p "$PORT" -U postgres --all --install-missing \
			--heapallindexed >"$W/amcheck.out" 2>"$W/amcheck.err"
		grep -v 'NOTICE:  extension "amcheck" already exists' "$W/amcheck.err" >>"$W/amcheck.out"
		[ -s "$W/amcheck.out" ] && WHY="pg_amcheck: $(head -c 300 "$W/amcheck.out")"
	fi
	pgc pg_ctl -D "$PGDATA" -w -t 120 -m fast stop >>"$RUN/pg_ctl.out" 2>&1 || cleanup_cluster "$RUN"
	cleanup_cluster_dir
	WHY=${WHY#; }
	[ -z "$WHY" ]
}

# cleanup_cluster_dir -- after a cut's check: the server gone, pgiofs
# unmounted, the file system and the loop device released, the image
# removed.
cleanup_cluster_dir() {
	cleanup_cluster "$RUN"
	rm -f "$RUN/postmaster.pid"
	umount_data "$MODE" "$W/cmnt"
	umount "$W/cfs" || fail "cannot unmount $W/cfs"
	loop_detach "$CLOOP" "$W/cut.img"
	rm -f "$W/cut.img"
}

SUMMARY=() FAILS=()
for FS in $FSES; do
	for M in $MODES; do
		MODE=${M%%:*} PROFILE=""
		[ "$M" = "$MODE" ] || PROFILE=${M#*:}
		W=$(mktempdir)
		RUN=$W/run
		mkdir -p "$RUN" && chown postgres: "$RUN" && chmod 700 "$RUN"
		PORT=$(free_port)
		on_exit "cleanup_cluster '$RUN'"
		log "$FS/$M: recording $LOAD_SECONDS s of load, then $CUTS cuts (seed $SEED)"
		record "$FS" "$MODE"
		ok=0 failed=0 i=0 checked=0
		for seq in $(cut_points); do
			i=$((i + 1))
			PRESENT=0 MISSING=0 ACKED=0
			if check_cut "$FS" "$MODE" "$seq" "$i"; then
				ok=$((ok + 1))
				log "$FS/$M cut $i/$CUTS after record $seq ($CUT_INFO): recovered; $ACKED acknowledged transfers, all present ($PRESENT present)"
			else
				failed=$((failed + 1))
				log "$FS/$M cut $i/$CUTS after record $seq ($CUT_INFO): FAILED: $WHY"
			fi
			checked=$((checked + ACKED))
		done
		[ $i = "$CUTS" ] || fail "$FS/$M: only $i cut points in the load window"
		SUMMARY+=("$FS/$M: $ok of $CUTS cuts recovered, $failed failed; $checked acknowledged transfers checked")
		log "${SUMMARY[-1]}"
		if [ "$MODE" = broken ]; then
			[ $((failed * 10)) -ge $((CUTS * 9)) ] ||
				FAILS+=("$FS/broken: the fsync-skipping pgiofs was caught in only $failed of $CUTS cuts (< 90%)")
		elif [ "$MODE" = nobarrier ]; then
			: # reported above, not judged
		else
			[ "$failed" = 0 ] || FAILS+=("$FS/$M: $failed of $CUTS power cuts lost data or did not recover")
		fi
		rm -f "$W/base" "$W/log"
	done
done
printf '%s\n' "${SUMMARY[@]}"
[ ${#FAILS[@]} = 0 ] || fail "$(printf '%s; ' "${FAILS[@]}")"
echo "ok"
