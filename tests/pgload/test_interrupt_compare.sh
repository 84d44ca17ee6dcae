#!/bin/bash
# test_interrupt_compare.sh -- SIGINT at every step of `pgload compare`:
# generating the workload, preparing a back end (mkfs, losetup, mount of the
# image or of a tmpfs; on a modelled disk the tmpfs of its image, copying
# the image, starting pgdisk, the loop device's queue, mkfs on the device), measuring the
# streaming figures, writing the read_load file, mounting pgiofs, initdb,
# starting the server, connecting, creating the OLTP tables, and in a run:
# creating the database, the schema phase, starting the OLTP clients, the
# data and post phases (with the clients running), the checkpoint after
# it and the sync after that; reading the latency, writing the report, cleaning up; twice in a
# row.  Each time: exit status 2, the step named, and nothing left: no work
# directory, mount, loop device, server, pgiofs or pgdisk daemon, nothing
# in the dir: back end, no --out directory unless the report was written.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"
. "$(dirname "$0")/intrlib.sh"

need_pg
need_root
[ -x "$BIN/pgiofs" ] || skip "pgiofs not built"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v mkfs.ext2 >/dev/null || skip "no mkfs.ext2 (e2fsprogs)"
W=$(mktempdir)
mkdir "$W/d"

# ccheck WHAT STEP -- check (intrlib.sh) for compare, and the dir: back end
# and --out as they were
ccheck() {
	check "$1" "$2" "pgload compare: interrupted; everything it created is removed (the signal came while $2"
	[ -z "$(ls -A "$W/d")" ] || fail "$1: the dir: back end is not as it was: $(ls -A "$W/d")"
	[ -e "$W/report" ] && fail "$1: --out left behind"
	return 0
}

# ---- a real SIGINT in the phases of a run --------------------------------------
# workloads whose data (or post) phase writes a marker, then waits on the server
mkdir "$W/wl_data" "$W/wl_post"
for wl in wl_data wl_post; do
	slow_schema >"$W/$wl/schema.sql"
done
printf "COPY (SELECT 1) TO '%s/data';\nCOPY t FROM stdin;\n1\n\\\\.\n" "$MARK" >"$W/wl_data/data.sql"
printf 'SELECT 1;\n' >"$W/wl_data/post.sql"
printf 'COPY u FROM stdin;\n1\n\\.\n' >"$W/wl_post/data.sql"
printf "COPY (SELECT 1) TO '%s/post';\nCREATE INDEX u_slow ON u (slow_key(a));\n" "$MARK" >"$W/wl_post/post.sql"

start compare --workload "$W/wl_data" --backends "dir:$W/d,ext2" --profiles dbaware --runs 2 \
	--size 256M --oltp 1 --stream-mb 1 --out "$W/report"
wait_mark data
kill -INT "$pid"
finish
ccheck "compare: SIGINT in the data phase (OLTP clients running)" \
	"running the data phase of $W/wl_data/data.sql, round 1/2, cell 1 dir/dbaware"

start compare --workload "$W/wl_post" --backends "hdd:ext2,dir:$W/d" --profiles native,dbaware --runs 1 \
	--size 256M --stream-mb 1 --out "$W/report"
wait_mark post
kill -INT "$pid"
sleep 0.05
kill -INT "$pid"
finish
grep -qF 'pgload: Interrupt received again: cleaning up, please wait' "$W/err" ||
	{ cat "$W/err"; fail "second SIGINT not seen"; }
ccheck "compare: SIGINT twice in the post phase (a modelled disk)" \
	"running the post phase of $W/wl_post/post.sql, round 1/1, cell 1 hdd:ext2/native"

# ---- every other step, by the test hook -----------------------------------------
# chook STEP STEPTEXT ARGS... -- `pgload compare ARGS` interrupts itself as
# STEP starts (a one-cell matrix: ext2 through pgiofs with read_load)
chook() {
	local at=$1 text=$2
	shift 2
	rm -f "$MARK"/*
	snap >"$W/before"
	PGLOAD_TEST_INTERRUPT_AT=$at "$PGLOAD" compare --gen 0.005 --runs 1 --size 256M --out "$W/report" "$@" \
		>"$W/stdout" 2>"$W/err" &
	pid=$!
	finish
	ccheck "compare: SIGINT as \"$at\" starts (hook)" "$text"
}
ONE=(--backends ext2 --profiles dbaware --load read_load)
CELL="cell 1 ext2/dbaware"
chook gen "generating the workload" "${ONE[@]}"
chook backend "preparing the ext2 back end, $CELL" "${ONE[@]}"
chook mkfs "running mkfs.ext2 on $TMPDIR/pgload-compare." "${ONE[@]}"
chook losetup "attaching $TMPDIR/pgload-compare." "${ONE[@]}"
chook mount "mounting /dev/loop" "${ONE[@]}"
chook mount "mounting a tmpfs at $TMPDIR/pgload-compare." --backends tmpfs --profiles native
chook loadfile "writing the read_load file in $TMPDIR/pgload-compare." "${ONE[@]}"
chook pgiofs "mounting pgiofs at $TMPDIR/pgload-compare." "${ONE[@]}"
chook initdb "running initdb of $TMPDIR/pgload-compare." "${ONE[@]}"
chook postmaster "starting the server, $CELL" "${ONE[@]}"
chook connect "connecting to the server, $CELL" "${ONE[@]}"
chook createdb "creating the database \"pgload\", round 1/1, $CELL" "${ONE[@]}"
for ph in schema data post; do
	chook $ph "running the $ph phase of $TMPDIR/pgload-compare." "${ONE[@]}"
done
chook checkpoint "checkpointing after the run, round 1/1, $CELL" "${ONE[@]}"
chook settle "writing everything back (sync)" "${ONE[@]}"
chook latency "reading the latency of $CELL" "${ONE[@]}"
chook cleanup "cleaning up" "${ONE[@]}"
chook data,cleanup "running the data phase of $TMPDIR/pgload-compare." "${ONE[@]}"
grep -qF 'Interrupt received again' "$W/err" || { cat "$W/err"; fail "data,cleanup: second SIGINT not seen"; }

# the steps of a modelled disk, its queue, the streaming figures and the OLTP
# clients (an ssd: its OLTP tables are made in a few seconds, the hdd's in
# fifteen, and the steps are the same)
MODEL=(--backends ssd:ext2 --profiles native --elevators mq-deadline --oltp 1 --stream-mb 1)
MCELL="cell 1 ssd:ext2/native elevator=mq-deadline"
chook imgtmpfs "mounting a tmpfs for the image at $TMPDIR/pgload-compare." "${MODEL[@]}"
chook pgdisk "starting pgdisk (ssd) on $TMPDIR/pgload-compare." "${MODEL[@]}"
chook losetup "attaching $TMPDIR/pgload-compare." "${MODEL[@]}"
chook queue "setting up the queue of /dev/loop" "${MODEL[@]}"
chook mkfs "running mkfs.ext2 on /dev/loop" "${MODEL[@]}"
chook mount "mounting /dev/loop" "${MODEL[@]}"
chook stream "measuring streaming reads and writes of /dev/loop" "${MODEL[@]}"
chook oltp "creating the OLTP tables (scale 1), $MCELL" "${MODEL[@]}"
chook oltpstart "starting 1 OLTP client, round 1/1, $MCELL" "${MODEL[@]}"
chook data "running the data phase of $TMPDIR/pgload-compare." "${MODEL[@]}"
chook floor "running 1 OLTP client without the import (the floor), round 1/1, $MCELL" "${MODEL[@]}" --floor
truncate -s 64M "$W/fs.img"
mkfs.ext2 -q -F "$W/fs.img" || fail "mkfs.ext2 of an image"
chook copy "copying the image $W/fs.img" --backends "hdd:$W/fs.img" --profiles native

# the report: it is finished and kept, nothing else is
rm -f "$MARK"/*
snap >"$W/before"
PGLOAD_TEST_INTERRUPT_AT=report "$PGLOAD" compare --gen 0.005 --runs 1 --size 256M --out "$W/report" \
	--backends tmpfs --profiles native >"$W/stdout" 2>"$W/err" &
pid=$!
finish
check "compare: SIGINT as \"report\" starts (hook)" "writing the report" \
	"pgload compare: interrupted while writing the report: the report in $W/report is complete; nothing else of the run is left"
[ -s "$W/report/results.json" ] || fail "the report was not finished"
