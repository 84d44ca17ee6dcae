#!/bin/bash
# test_crash_enospc.sh -- a full backing filesystem under pgiofs.
#
# The backing directory is on a small loop-mounted ext4 image, filled with a
# file until 30 MiB are left; a ledger client commits throughout.  A bulk
# import (one COPY of 600,000 rows, about 60 MiB, in the transaction that
# creates its table: wal_level = minimal writes no WAL for it) must fail
# with "No space left on device", and after the filler is removed the same
# import must succeed; then postgres is SIGKILLed and restarted, and every
# acknowledged commit must be present and pg_amcheck clean.  Three rounds:
#   a. fuse.writeback_cache = no: every write reaches pgiofs, so the import
#      gets PostgreSQL's own error, 'could not extend file "...": No space
#      left on device', and the server stays up;
#   b. the defaults (write-back cache, files.space_guard_mb): the guard sees
#      the file system nearly full and has every write of PostgreSQL sent to
#      pgiofs before write(2) returns, so the same as in round a;
#   c. the write-back cache without the guard (files.space_guard_mb = 0):
#      the kernel accepts the writes into its page cache and the error only
#      comes back when they are written through (close or fsync), which
#      PostgreSQL answers with a PANIC; once the filler is removed the
#      server must recover (by itself, or after a restart) before the import
#      is tried again.
# ENOSPC_ROUNDS=a, b, c or a combination runs those rounds.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
command -v mkfs.ext4 >/dev/null || fail "mkfs.ext4 is missing (e2fsprogs)"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

ROWS=600000
DATA=$TEST_TMP/import.tsv
awk -v n=$ROWS 'BEGIN { for (i = 1; i <= n; i++)
	printf "%d\tsome text padded to about a hundred bytes ..............................\n", i }' >"$DATA"
chmod 644 "$DATA"

# import OUT -- the bulk import, its messages in OUT.
import() {
	pgc psql -X -q -v ON_ERROR_STOP=1 -h "$RUN" -p "$PORT" -d postgres \
		-c "BEGIN" -c "DROP TABLE IF EXISTS imp" -c "CREATE TABLE imp (id int, t text)" \
		-c "\\copy imp FROM '$DATA'" -c "COMMIT" >"$1" 2>&1
}

# round NAME PGIOFS_ARGS... -- the scenario on a fresh loop filesystem.
round() {
	local name=$1 d img loop free
	shift
	LABEL="enospc $name"
	d=$(mktempdir)
	img=$d/ext4.img loop=$d/fs
	truncate -s 384M "$img" && mkfs.ext4 -q -F "$img" && mkdir "$loop" ||
		fail "$LABEL: cannot make the ext4 image"
	mount -o loop "$img" "$loop" || fail "$LABEL: cannot loop-mount the image"
	# runs after the cluster is stopped and pgiofs unmounted (registered first)
	on_exit "umount '$loop' || umount -l '$loop'"
	BACKING_DIR=$loop/b mounted_cluster "$@" <<-EOF
		wal_level = minimal
		max_wal_senders = 0
	EOF
	free=$(df -B1M --output=avail "$loop" | tail -n 1)
	fallocate -l $((free - 30))M "$loop/filler" || fail "$LABEL: cannot fill the filesystem"
	log "$LABEL: $(df -h --output=size,avail "$loop" | tail -n 1 | xargs) (size, free) after filling"

	: >"$RUN/clients.pids"
	start_ledger 1 "$(ledger_first 1)"
	wait_lines "$RUN/ledger.1" 5 60 || fail_log "$LABEL: the ledger client does not commit" "$RUN/ledger.1.err"
	import "$RUN/import1.out" && fail "$LABEL: an import into a full filesystem succeeded"
	log "$LABEL: import failed: $(grep -m1 "ERROR\|PANIC" "$RUN/import1.out")"
	grep -q "No space left on device" "$RUN/import1.out" ||
		fail_log "$LABEL: the import failed for another reason" "$RUN/import1.out"
	if [ "$name" != c ]; then
		grep -q 'ERROR:  could not extend file "base/[0-9/]*": No space left on device' "$RUN/import1.out" ||
			fail_log "$LABEL: not PostgreSQL's \"could not extend file\" error" "$RUN/import1.out"
		sql "SELECT 1" >/dev/null || fail_log "$LABEL: the server did not stay up" "$SERVER_LOG"
		kill -0 "$(head -n 1 "$RUN/clients.pids")" 2>/dev/null ||
			fail_log "$LABEL: the ledger client died with the import" "$RUN/ledger.1.err"
	else
		# the failed import's file stays behind (a crash leaves the
		# files of its unfinished transactions in place): until space
		# is freed, new backends cannot even write their relcache init
		# file
		rm "$loop/filler"
		if ! server_up 30; then
			log "$LABEL: the server did not come back by itself: restarting it; it said:"
			grep -h "PANIC\|FATAL" "$RUN"/server.*.log | tail -n 3 | sed 's/^/    /'
			kill_postgres 20
			start_server
		fi
	fi
	rm -f "$loop/filler"
	import "$RUN/import2.out" || fail_log "$LABEL: the same import failed after space was freed" "$RUN/import2.out"
	[ "$(sql "SELECT count(*) FROM imp")" = $ROWS ] || fail "$LABEL: the import did not load $ROWS rows"
	log "$LABEL: after freeing space the import loaded $ROWS rows"

	kill_group "$(head -n 1 "$RUN/clients.pids")"
	kill_postgres 20
	recover_and_check 1
	amcheck "$name"
	stop_server
	pgiofs_umount "$MNT" || fail "$LABEL: cannot unmount"
}

ROUNDS=${ENOSPC_ROUNDS:-abc}
[[ $ROUNDS != *a* ]] || round a --set fuse.writeback_cache=no
[[ $ROUNDS != *b* ]] || round b
[[ $ROUNDS != *c* ]] || round c --set files.space_guard_mb=0
log "all checks passed"
