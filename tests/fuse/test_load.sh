#!/bin/bash
# test_load.sh -- 64 pgbench clients, a bulk import, forced checkpoints and
# sorts that spill to temp files through pgiofs: no errors, and the bytes
# PostgreSQL wrote equal the bytes pgiofs wrote to the backing store, per
# class.
#
# Four rounds, each on a fresh cluster (max_connections 100) on a fresh
# pgiofs mount (root, allow_other):
#   a  the defaults (dbaware, WAL direct), fuse.writeback_cache = no (so
#      pgiofs is the write cache), 20 s of load (150 s with LONG=1)
#   b  --profile direct, fuse.writeback_cache = yes (the default), 15 s
#      (90 s with LONG=1)
#   c  files.wal_mode = passthrough on the one connection
#      (fuse.writeback_cache = no), 15 s (90 s with LONG=1): WAL bytes
#      bypass pgiofs
#   d  the default configuration (dbaware, write-back cache, WAL in
#      passthrough on a WAL mount over pg_wal), 15 s (90 s with LONG=1): WAL
#      bytes bypass pgiofs
# LOAD_SECONDS sets all four.  initdb runs on a first mount, which is then
# unmounted, so the statistics of the load's mount count the server alone.
# The load: pgbench -c 64 -j 2 (TPC-B-like) in database bench, initialised
# beforehand; `pgbench -i -s 4` in database import again and again (a new
# one starts until the load ends; the last one finishes); CHECKPOINT every
# 3 s; a sort with work_mem 64kB that spills to base/pgsql_tmp every second.
#
# Measuring.  helper_wcount.so (tests/fuse/helper_wcount.c) is preloaded
# into the postmaster, so into every server process: it adds the result of
# every write system call on a file of the mount to the counter of the class
# pgiofs's own classifier (fuse/classify.c) gives the path, in a shared
# counter file.  The same shim, rooted at the backing directory, is
# preloaded into the pgiofs daemon and counts what it wrote to the backing
# store, system call by system call.  pgiofs's statistics (`pgiofs stat
# --json`) count the result of each backing-store write (iosched accounts a
# request's result when it completes: docs/stats.md), so `write_bytes` is
# the backing-store side.  They are read after the server stopped and every
# file was fsynced through the mount (nothing is left for the unmount to
# write back; the daemon's shim, read after the unmount, would show it).
#
# Checks, every round: pgbench exits 0 and reports 0 failed transactions,
# every import, checkpoint and sort succeeds, the last import holds all its
# rows, the pgbench balances agree, the server log has no ERROR, FATAL or
# PANIC line; no class has a failed request; per class, the bytes pgiofs
# counted equal the bytes its backing-store system calls wrote (with
# dbaware, WAL and commit status only: the rest goes through io_uring,
# which a preloaded shim cannot see), and no
# backing write was short (every byte the kernel sent reached the store);
# PostgreSQL's writes were never short; the files read through the mount
# after the server stopped are byte for byte those in the backing
# directory after the unmount.
#   Round a (no write-back cache: each write(2) reaches pgiofs as it is):
#   per class, the bytes PostgreSQL wrote == the bytes pgiofs wrote to the
#   backing store.  Relation main forks are compared as heap + index, since
#   pgiofs tells an index from a table by the content of the first page it
#   sees of a file (the bytes before that count as heap) and a path cannot;
#   but every PostgreSQL write whose first page is an index (heap) page must
#   be among pgiofs's index (heap) bytes.
#   Round c (passthrough): as round a for every class pgiofs sees all of;
#   for one it does not (its statistics say bytes_seen "none" or
#   "partial": WAL), pgiofs's bytes are at most PostgreSQL's and what it did
#   not see is printed as such, and its statistics still equal what its
#   backing-store system calls wrote (none, for passthrough WAL).
#   Round d: WAL as in round c (not seen), the rest as round b.
#   Rounds b and d (write-back cache: the kernel coalesces and rewrites whole
#   pages, and drops those of files deleted before write-back, such as temp
#   files): per class, pgiofs's bytes <= PostgreSQL's writes rounded out to
#   whole 4 KiB pages (a page is sent once per time a write dirtied it; WAL
#   is written in whole 8 KiB pages, so for WAL this is PostgreSQL's bytes).
#   This assumes the kernel tracks dirty data in 4 KiB pages, as 6.18 does
#   for FUSE (a 100-byte write is written back as 4096 bytes); a kernel
#   that wrote back whole large folios would fail it.  It cannot be exact
#   for any class: even where PostgreSQL fsyncs every write before writing
#   the same page again (WAL, pg_control), the kernel may replace a page's
#   queued write-back by the newer one before sending it (seen: 8 KiB of WAL
#   fewer under ASan, whose slower daemon lets writes queue).
# Exact wherever the daemon sees every byte, every round: the bytes of the
# WRITE requests the daemon read from /dev/fuse (the shim counts them
# there, PGIOFS_WCOUNT_FUSE) equal the bytes pgiofs wrote to the backing
# store (its statistics), whether by system call or io_uring; and per
# class, where the shim sees the backing-store system calls, those.
#
# Nothing is excluded: stdio writes (pgstat, relcache init files,
# postmaster.opts), which bypass any shim, are counted at fclose()
# (helper_wcount.c says how; a stream it cannot count fails the test).
# Everything is removed at exit, on failure and on interrupt too.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"

command -v python3 >/dev/null || fail "python3 is needed to read the statistics"
# the shim counts the WRITE requests where the daemon reads them from
# /dev/fuse: requests over FUSE's io_uring (fuse.uring = auto, where the
# kernel's switch is on) bypass it, so the mounts here keep /dev/fuse
PGIOFS_TEST_URING=no
WC=$TESTBUILD/fuse/helper_wcount
SHIM=$TESTBUILD/fuse/helper_wcount.so
[ -x "$WC" ] && [ -f "$SHIM" ] || fail "$WC or $SHIM is missing: run make"

if [ "${LONG:-0}" = 1 ]; then SECS_A=150 SECS_B=90; else SECS_A=20 SECS_B=15; fi
SECS_A=${LOAD_SECONDS:-$SECS_A}
SECS_B=${LOAD_SECONDS:-$SECS_B}
CLIENTS=64
BENCH_SCALE=4
IMPORT_SCALE=4
# a sanitizer build's runtime must be the first library of the daemon
SAN_RT=$(ldd "$BIN/pgiofs" 2>/dev/null | awk '/lib[at]san\.so/ { print $3; exit }')

# bg NAME CMD -- run CMD (a bash script) as its own process group in the
# background, output in $RUN/NAME.out and $RUN/NAME.err; killed at exit.
bg() {
	setsid bash -c "$2" >"$RUN/$1.out" 2>"$RUN/$1.err" &
	echo $! >>"$RUN/clients.pids"
	BG_PID=$!
}

# psql_cmd DB -- the psql command line the loops use for DB (a string).
psql_cmd() {
	echo "timeout -k 5 $CMD_TIMEOUT runuser -u postgres -- '$PGBIN/psql' -X -q -At" \
		"-v ON_ERROR_STOP=1 -h '$RUN' -p $PORT -d $1"
}

# load SECS -- the load, then its checks (clients and server log).
load() {
	local secs=$1 stop=$RUN/stop rc n r
	sql "CREATE DATABASE bench" >/dev/null && sql "CREATE DATABASE import" >/dev/null ||
		fail_log "$LABEL: CREATE DATABASE failed" "$SERVER_LOG"
	pgc pgbench -h "$RUN" -p "$PORT" -i -s $BENCH_SCALE -q bench >"$RUN/bench-init.log" 2>&1 ||
		fail_log "$LABEL: pgbench -i bench failed" "$RUN/bench-init.log"
	log "$LABEL: $secs s of pgbench -c $CLIENTS, imports, checkpoints, sorts"
	: >"$RUN/clients.pids"
	bg pgbench "timeout -k 5 $((secs + CMD_TIMEOUT)) runuser -u postgres -- '$PGBIN/pgbench' \
		-h '$RUN' -p $PORT -c $CLIENTS -j 2 -T $secs bench"
	local bench=$BG_PID
	bg import "while [ ! -e '$stop' ]; do
		timeout -k 5 $CMD_TIMEOUT runuser -u postgres -- '$PGBIN/pgbench' -h '$RUN' -p $PORT \
			-i -s $IMPORT_SCALE -q import >>'$RUN/import.log' 2>&1 || exit 1
		echo done
	done"
	local import=$BG_PID
	bg checkpoint "while [ ! -e '$stop' ]; do
		$(psql_cmd postgres) -c CHECKPOINT || exit 1
		echo done
		sleep 3
	done"
	local ckpt=$BG_PID
	bg sort "while [ ! -e '$stop' ]; do
		$(psql_cmd postgres) -c \"SET work_mem = '64kB'\" \
			-c 'SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g ORDER BY g DESC) s' ||
			exit 1
		sleep 1
	done"
	local sort=$BG_PID
	wait $bench
	rc=$?
	touch "$stop"
	[ $rc -eq 0 ] || fail_log "$LABEL: pgbench exited $rc" "$RUN/pgbench.out"
	grep -q '^number of failed transactions: 0 ' "$RUN/pgbench.out" ||
		fail_log "$LABEL: pgbench reports failed transactions" "$RUN/pgbench.out"
	n=$(awk '/^number of transactions actually processed:/ { print $6 }' "$RUN/pgbench.out")
	[ "${n:-0}" -gt 0 ] || fail_log "$LABEL: pgbench processed no transaction" "$RUN/pgbench.out"
	log "$LABEL: pgbench: $n transactions, 0 failed ($(grep -o 'tps = [0-9.]*' "$RUN/pgbench.out" | head -n 1))"
	wait $import || fail_log "$LABEL: an import failed" "$RUN/import.log"
	wait $ckpt || fail_log "$LABEL: a CHECKPOINT failed" "$RUN/checkpoint.err"
	wait $sort || fail_log "$LABEL: a sort failed" "$RUN/sort.err"
	[ -s "$RUN/import.out" ] && [ -s "$RUN/checkpoint.out" ] && [ -s "$RUN/sort.out" ] ||
		fail "$LABEL: the import, checkpoint or sort loop never completed a round"
	! grep -qv '^200000$' "$RUN/sort.out" || fail_log "$LABEL: a sort returned a wrong count" "$RUN/sort.out"
	r=$(pgc psql -X -At -h "$RUN" -p "$PORT" -d import -c "SELECT count(*) FROM pgbench_accounts") ||
		fail_log "$LABEL: cannot count the imported rows" "$SERVER_LOG"
	[ "$r" = $((IMPORT_SCALE * 100000)) ] || fail "$LABEL: the last import holds $r rows, not $((IMPORT_SCALE * 100000))"
	r=$(pgc psql -X -At -h "$RUN" -p "$PORT" -d bench -c "SELECT
		(SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(bbalance) FROM pgbench_branches) AND
		(SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(bbalance) FROM pgbench_branches) AND
		(SELECT sum(delta) FROM pgbench_history) = (SELECT sum(bbalance) FROM pgbench_branches)") ||
		fail_log "$LABEL: balance query failed" "$SERVER_LOG"
	[ "$r" = t ] || fail "$LABEL: the pgbench balances disagree"
	log "$LABEL: $(wc -l <"$RUN/import.out") imports of $((IMPORT_SCALE * 100000)) rows," \
		"$(wc -l <"$RUN/checkpoint.out") checkpoints, $(wc -l <"$RUN/sort.out") sorts; balances agree"
}

# sums DIR -- md5sum of every file below DIR/pg, by relative path.
sums() {
	(cd "$1" && find pg -type f -print0 | sort -z | xargs -0 -r md5sum)
}

# round NAME SECS WRITEBACK PROFILE WALMODE -- one cluster on one mount
# (PROFILE, WALMODE "default": not set), the load, the checks.
round() {
	local name=$1 secs=$2 wb=$3 prof=$4 walmode=$5 tmp mode
	LABEL="round $name"
	tmp=$(mktempdir)
	BACKING=$tmp/backing MNT=$tmp/mnt RUN=$tmp/run
	mkdir -p "$BACKING" "$MNT" "$RUN" && chown postgres: "$RUN" && chmod 700 "$RUN" ||
		fail "$LABEL: cannot make $tmp"
	install -m 0644 "$SHIM" "$tmp/wcount.so" || fail "$LABEL: cannot copy $SHIM"
	MOUNT_ARGS=(-o allow_other --set "fuse.writeback_cache=$wb")
	[ "$prof" = default ] || MOUNT_ARGS+=(--profile "$prof")
	[ "$walmode" = default ] || MOUNT_ARGS+=(--set "files.wal_mode=$walmode")
	on_exit "force_umount '$MNT'"
	pgiofs_mount_fg "$tmp/pgiofs.log" "$BACKING" "$MNT" "${MOUNT_ARGS[@]}"
	mkdir "$MNT/pg" && chown postgres: "$MNT/pg" || fail "$LABEL: cannot make $MNT/pg"
	PGDATA=$MNT/pg/data
	PORT=$(free_port)
	init_cluster <<-EOF
		max_connections = 100
		autovacuum_naptime = 5s
	EOF
	pgiofs_umount "$MNT" || fail "$LABEL: unmounting after initdb failed"

	"$WC" --create "$RUN/pg.wcount" && chown postgres: "$RUN/pg.wcount" &&
		"$WC" --create "$tmp/daemon.wcount" || fail "$LABEL: cannot make the counter files"
	LD_PRELOAD="${SAN_RT:+$SAN_RT }$tmp/wcount.so" PGIOFS_WCOUNT=$tmp/daemon.wcount \
		PGIOFS_WCOUNT_ROOT=$BACKING PGIOFS_WCOUNT_FUSE=1 pgiofs_mount_fg "$tmp/pgiofs.log" "$BACKING" "$MNT" \
		"${MOUNT_ARGS[@]}" --set files.wal_segments_ahead=0 # the account is of PostgreSQL's writes:
	# segments made ahead are the daemon's own (test_walprep.sh counts them)
	grep -q "$tmp/wcount.so" "/proc/$PGIOFS_PID/maps" || fail "$LABEL: the shim is not in the daemon"
	on_exit "cleanup_cluster '$RUN'" # before the daemon is killed at exit
	SERVER_ENV=("LD_PRELOAD=$tmp/wcount.so" "PGIOFS_WCOUNT=$RUN/pg.wcount" "PGIOFS_WCOUNT_ROOT=$MNT")
	start_server
	SERVER_ENV=()
	grep -q "$tmp/wcount.so" "/proc/$PMPID/maps" || fail "$LABEL: the shim is not in the postmaster"

	load "$secs"

	stop_server
	# autovacuum yields to the imports' DROP TABLE ("canceling autovacuum
	# task") and is stopped by the shutdown: PostgreSQL's normal business
	grep -E '(ERROR|FATAL|PANIC):' "$SERVER_LOG" |
		grep -v -e 'ERROR:  canceling autovacuum task' \
			-e 'FATAL:  terminating autovacuum process due to administrator command' \
			>"$RUN/errors"
	[ ! -s "$RUN/errors" ] ||
		fail_log "$LABEL: the server log has errors" "$RUN/errors"
	# write back what the kernel still caches, then read the counters
	find "$PGDATA" -type f -print0 | xargs -0 -r sync -- ||
		fail "$LABEL: fsync of the files through the mount failed"
	"$BIN/pgiofs" stat "$MNT" --json >"$tmp/stats.json" || fail "$LABEL: pgiofs stat failed"
	sums "$MNT" >"$tmp/sums.mount" || fail "$LABEL: cannot read the files through the mount"
	pgiofs_umount "$MNT" || fail "$LABEL: unmount failed"
	assert_no_mount "$MNT"
	sums "$BACKING" >"$tmp/sums.backing" || fail "$LABEL: cannot read the backing files"
	cmp -s "$tmp/sums.mount" "$tmp/sums.backing" ||
		fail_log "$LABEL: the backing files differ from what the mount showed:
$(diff "$tmp/sums.mount" "$tmp/sums.backing" | head -n 10)" /dev/null
	log "$LABEL: $(wc -l <"$tmp/sums.mount") files identical through the mount and in the backing directory"

	"$WC" "$RUN/pg.wcount" >"$tmp/pg.txt" && "$WC" "$tmp/daemon.wcount" >"$tmp/daemon.txt" ||
		fail "$LABEL: cannot read the counter files"
	if [ "$wb" = no ]; then mode=exact; else mode=writeback; fi
	python3 - "$mode" "$tmp/stats.json" "$tmp/pg.txt" "$tmp/daemon.txt" "$prof" "$walmode" <<'PY' ||
import json, sys

mode, stats, pgf, dmf, prof, walmode = sys.argv[1:7]
# the shim sees the daemon's system calls: every backing write with direct;
# with dbaware only WAL and commit status (wal_inline) and files of class
# other (other_inline), the rest goes through io_uring, which no LD_PRELOAD
# shim sees (its bytes are checked end to end: PostgreSQL's bytes against
# pgiofs's, and the files)
seen = None if prof == "direct" else ("wal", "xact", "other")
st = json.load(open(stats))["classes"]


def counters(path):
    return {w[0]: [int(x) for x in w[1:]] for w in (l.split() for l in open(path))}


pg, dm = counters(pgf), counters(dmf)
# "main": relation main forks, all "heap" by path; pgiofs splits them into
# heap and index by content
rows = ["wal", "xact", "main", "fsm", "vm", "temp", "meta", "other"]


def shim(d, c, i=0):
    return d["heap" if c == "main" else c][i]


def stat(c):
    if c == "main":
        return st["heap"]["write_bytes"] + st["index"]["write_bytes"]
    return st[c]["write_bytes"]


bad = []
print("%-6s %14s %14s %14s %14s" % ("class", "postgres", "pg_pages", "pgiofs_stat", "backing_calls"))
for c in rows:
    p, pp, s, b = shim(pg, c), shim(pg, c, 1), stat(c), shim(dm, c)
    print("%-6s %14d %14d %14d %14d" % (c, p, pp, s, b))
    if (seen is None or c in seen) and s != b:
        bad.append("%s: pgiofs counted %d bytes, its backing writes wrote %d" % (c, s, b))
    unseen = c != "main" and st[c]["bytes_seen"] != "all"
    if unseen:
        print("%-6s %d bytes not seen by pgiofs (bytes_seen %s: %d of %d opens in passthrough)"
              % (c, p - s, st[c]["bytes_seen"], st[c]["passthrough_opens"], st[c]["opens"]))
        if s > p:
            bad.append("%s: pgiofs counted %d bytes, more than PostgreSQL's %d" % (c, s, p))
    elif (mode == "exact" or (c == "wal" and walmode != "cached")) and p != s:
        # WAL opened direct reaches pgiofs write by write, past the
        # kernel's write-back cache: exact in every round
        bad.append("%s: PostgreSQL wrote %d bytes, pgiofs %d (difference %d)" % (c, p, s, s - p))
    if mode == "writeback" and s > pp:
        bad.append("%s: pgiofs wrote %d bytes, more than PostgreSQL's %d rounded to pages"
                   % (c, s, pp))
    if p == 0:
        bad.append("%s: PostgreSQL wrote nothing: the load does not exercise it" % c)
print("pgiofs heap %d index %d; PostgreSQL writes starting with a heap page %d, an index page %d"
      % (st["heap"]["write_bytes"], st["index"]["write_bytes"], pg["main-heap"][0],
         pg["main-index"][0]))
for c in ("heap", "index"):
    if st[c]["write_bytes"] == 0:
        bad.append("pgiofs counted no %s bytes" % c)
    if mode == "exact" and pg["main-" + c][0] > st[c]["write_bytes"]:
        bad.append("PostgreSQL wrote %d bytes starting with a %s page, pgiofs counts %d as %s"
                   % (pg["main-" + c][0], c, st[c]["write_bytes"], c))
if walmode in ("passthrough", "default") and (st["wal"]["bytes_seen"] != "none" or st["wal"]["write_bytes"]):
    bad.append("wal: in passthrough, yet pgiofs saw WAL bytes (%s, %d)"
               % (st["wal"]["bytes_seen"], st["wal"]["write_bytes"]))
for c, v in st.items():
    if v["errors"]:
        bad.append("%s: %d failed requests" % (c, v["errors"]))
# every byte the kernel sent pgiofs to write (WRITE requests read from
# /dev/fuse, whatever the cache) is a byte pgiofs wrote to the backing
# store, by system call or io_uring: exact in every round
sent, written = dm["fuse-write"][0], sum(v["write_bytes"] for v in st.values())
print("WRITE requests: %d, %d bytes; pgiofs wrote %d bytes to the backing store"
      % (dm["fuse-write"][1], sent, written))
if sent != written or sent == 0:
    bad.append("the kernel sent %d bytes to write, pgiofs wrote %d" % (sent, written))
for who, d in (("PostgreSQL", pg), ("the daemon", dm)):
    if d["index"][0]:
        bad.append("%s: a path classified as index" % who)
    if d["short"][0]:
        bad.append("%s: %d short or failed writes" % (who, d["short"][0]))
    if d["stdio-unknown"][0]:
        bad.append("%s: %d stdio streams that could not be counted" % (who, d["stdio-unknown"][0]))
for b in bad:
    print("MISMATCH " + b)
sys.exit(1 if bad else 0)
PY
		fail "$LABEL: the byte accounting does not add up ($mode)"
	log "$LABEL: byte accounting holds ($mode)"
	rm -rf "$tmp"
}

# round a: the default policy (dbaware), exact accounting; round b: direct,
# where every backing write is a system call the shim counts; round c: WAL
# in passthrough on the one connection, not seen by pgiofs; round d: the
# default configuration (dbaware, write-back cache, WAL mounts in
# passthrough)
round a "$SECS_A" no dbaware direct
round b "$SECS_B" yes direct direct
round c "$SECS_B" no dbaware passthrough
round d "$SECS_B" yes default default
log "all checks passed"
