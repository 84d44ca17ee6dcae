#!/bin/bash
# walfloor.sh -- how low a commit's latency can go on the modelled hdd
# while an import runs, whatever orders the writes: the same load with
# only pg_wal on the disk.
#
# A 2004 hdd modelled by pgdisk (its defaults: 54 MB/s, 8.5 ms seeks,
# 7200 rpm) carries ext4 on a loop device under the kernel's ELEVATOR.
# Per round, two fresh clusters, one after the other:
#   all      data directory and pg_wal on the modelled disk (what
#            `pgload compare --backends hdd:ext4` measures);
#   pgiofs   the cluster on a pgiofs mount (bin/pgiofs, its defaults, or
#            PGIOFS_ARGS) over a directory of the modelled disk's ext4;
#   walonly  data directory on the machine's own disk (DIR), pg_wal on the
#            modelled disk (initdb --waldir): no heap, index or temp write
#            competes with WAL on the modelled disk.
# In each, the workload `pgload gen SCALE` makes is imported into database
# "bulk" with psql as pgload compare's OLTP cells import it: the schema
# phase and a checkpoint first, then pgbench -c CLIENTS commits (database
# "oltp", scale CLIENTS) while the data and post-data phases run, the
# import's time.  Printed per cell: that time, the commit latency (p50,
# p99, p99.9, max) of the transactions that ended during it, and what the
# modelled disk did meanwhile (MB written, requests, modelled seek time,
# from pgdisk's counters), medians over the rounds.  --no-post leaves the post-data
# phase (indexes, constraints) out of the import.
# "walonly" is the floor: the import's own WAL, which every commit of the
# clients flushes behind, is all that is left on the disk; no elevator
# and no pgiofs profile can take a commit below it, since they can only
# move the other writes out of its way.
#
# Needs root.  Everything made is removed at exit, Ctrl-C included.
set -u
ME=walfloor
TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$TOP/bench/lib.sh"

ROUNDS=3 SCALE=0.2 CLIENTS=4 ELEVATOR=mq-deadline DIR=/var/tmp POST=yes CELLS="all pgiofs walonly"
usage() {
	cat <<EOF
usage: bench/walfloor.sh [--rounds N] [--scale S] [--clients N] [--elevator E] [--dir DIR]
                        [--no-post]

The commit latency during an import with the whole cluster on a modelled hdd,
against the same with only pg_wal on it.  Needs root.

  --rounds N     rounds, each cell once per round (default $ROUNDS, 1..20)
  --scale S      pgload gen scale of the import (default $SCALE)
  --clients N    pgbench clients committing during the import (default $CLIENTS, 1..64)
  --elevator E   the loop device's elevator (default $ELEVATOR)
  --dir DIR      where the work directory goes, on the machine's own disk (default $DIR)
  --no-post      import without the post-data phase (indexes, constraints)
  --cells LIST   the cells, of all, pgiofs, walonly (default: all three)

Environment: PGIOFS_ARGS, options of the pgiofs cell's mount.
EOF
}
while [ $# -gt 0 ]; do
	case $1 in
		--rounds) [ $# -ge 2 ] || die "--rounds needs a value"; range --rounds "$2" 1 20; ROUNDS=$2; shift 2 ;;
		--scale) [ $# -ge 2 ] || die "--scale needs a value"; SCALE=$2; shift 2 ;;
		--clients) [ $# -ge 2 ] || die "--clients needs a value"; range --clients "$2" 1 64; CLIENTS=$2; shift 2 ;;
		--elevator) [ $# -ge 2 ] || die "--elevator needs a value"; ELEVATOR=$2; shift 2 ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value"; DIR=$2; shift 2 ;;
		--no-post) POST=""; shift ;;
		--cells) [ $# -ge 2 ] || die "--cells needs a value"; CELLS=${2//,/ }; shift 2
			for c in $CELLS; do [[ $c =~ ^(all|pgiofs|walonly)$ ]] || die "--cells: unknown cell \"$c\""; done ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; die "unknown option \"$1\"" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "needs root (a loop device and mounts)"
[ -n "$CELLS" ] || die "--cells: no cell"
[ -d "$DIR" ] || die "--dir \"$DIR\" is not a directory"
for p in "$TOP/bin/pgdisk" "$TOP/bin/pgload" "$TOP/bin/pgiofs"; do [ -x "$p" ] || die "$p is missing: run make"; done

PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1)
W=$(mktemp -d "$DIR/pgiofs-walfloor.XXXXXX") || die "cannot make a directory in $DIR"
chmod 755 "$W"
LOOP="" PGPID=""
cleanup() {
	kill_postgres "$PGPID"
	unmount "$W/pgm"
	mountpoint -q "$W/hdd" && umount "$W/hdd"
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	mountpoint -q "$W/disk" && umount "$W/disk"
	for ((i = 0; i < 50; i++)); do pgrep -f "pgdisk .*$W/disk\$" >/dev/null || break; sleep 0.1; done
	mountpoint -q "$W/img" && umount "$W/img"
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

progress "modelled hdd: pgdisk, loop device ($ELEVATOR), ext4"
mkdir "$W/disk" "$W/hdd" "$W/fast" "$W/log" "$W/img"
# the image in memory, as pgload compare keeps it: only the model times it
mount -t tmpfs -o size=2G,mode=0700 walfloor-image "$W/img" || die "cannot mount a tmpfs for the image"
truncate -s 2G "$W/img/hdd.img"
"$TOP/bin/pgdisk" "$W/img/hdd.img" "$W/disk" >"$W/log/pgdisk" 2>&1 || fail_log "pgdisk failed" "$W/log/pgdisk"
LOOP=$(losetup --direct-io=on --find --show "$W/disk/disk") || die "losetup failed"
echo 1 >"/sys/block/${LOOP#/dev/}/queue/rotational"
echo "$ELEVATOR" >"/sys/block/${LOOP#/dev/}/queue/scheduler" 2>/dev/null ||
	die "the kernel has no elevator \"$ELEVATOR\" ($(cat "/sys/block/${LOOP#/dev/}/queue/scheduler"))"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP" || die "mkfs.ext4 failed"
mount "$LOOP" "$W/hdd" || die "cannot mount $LOOP"
chown postgres "$W/hdd" "$W/fast" "$W/log"
"$TOP/bin/pgload" gen --quiet --scale "$SCALE" --out "$W/wl" || die "pgload gen failed"
chmod -R a+rX "$W/wl"

# disk -- pgdisk's "write_bytes write_ops seek_ns" now
disk() { awk '$1 == "write_bytes" { b = $2 } $1 == "write_ops" { o = $2 } $1 == "seek_ns" { s = $2 } END { print b, o, s }' "$W/disk/stats"; }

# one_cell CELL ROUND -- prints "import_s p50 p99 p999 max txs MB writes seek_s"
one_cell() {
	local cell=$1 r=$2 data wal port t0 t1 pg
	case $cell in
		all) data=$W/hdd/data wal="" ;;
		pgiofs)
			mkdir -p "$W/hdd/pgb" "$W/pgm"
			chown postgres "$W/hdd/pgb"
			# shellcheck disable=SC2086 # PGIOFS_ARGS are words
			"$TOP/bin/pgiofs" -o allow_other ${PGIOFS_ARGS:-} "$W/hdd/pgb" "$W/pgm" ||
				die "pgiofs ${PGIOFS_ARGS:-} failed"
			data=$W/pgm/data wal="" ;;
		*) data=$W/fast/data wal=$W/hdd/wal ;;
	esac
	"${AS_PG[@]}" "$PGBIN/initdb" -D "$data" ${wal:+--waldir "$wal"} -A trust -U postgres \
		--no-sync --no-instructions >"$W/log/initdb" 2>&1 || fail_log "initdb failed" "$W/log/initdb"
	sync
	port=$(free_port)
	"${AS_PG[@]}" "$PGBIN/pg_ctl" -D "$data" -l "$W/log/server" -w -o "-k $W/log -p $port -c listen_addresses=" \
		start >/dev/null || fail_log "the server did not start" "$W/log/server"
	PGPID=$(head -1 "$data/postmaster.pid")
	pg=(-h "$W/log" -p "$port" -U postgres)
	"$PGBIN/createdb" "${pg[@]}" oltp && "$PGBIN/createdb" "${pg[@]}" bulk || die "createdb failed"
	"$PGBIN/pgbench" "${pg[@]}" -q -i -s "$CLIENTS" oltp >/dev/null 2>&1 || die "pgbench -i failed"
	# as pgload compare: the schema and a checkpoint before the clients
	# start, the data and post-data phases timed
	"${PSQL[@]}" "${pg[@]}" -d bulk -f "$W/wl/schema.sql" >"$W/log/import" 2>&1 ||
		fail_log "the schema phase failed" "$W/log/import"
	"$PGBIN/psql" "${pg[@]}" -qAtc checkpoint oltp || die "checkpoint failed"
	rm -f "$W/log/tx"*
	(cd "$W/log" && exec "$PGBIN/pgbench" "${pg[@]}" -c "$CLIENTS" -j 2 -T 30 -l --log-prefix="$W/log/tx" oltp \
		>"$W/log/pgbench" 2>&1) &
	local bench=$!
	sleep 2
	local d0 d1
	d0=$(disk)
	t0=$(now)
	"${PSQL[@]}" "${pg[@]}" -d bulk -f "$W/wl/data.sql" ${POST:+-f "$W/wl/post.sql"} >>"$W/log/import" 2>&1 ||
		fail_log "the import failed" "$W/log/import"
	t1=$(now)
	d1=$(disk)
	kill -INT "$bench" 2>/dev/null
	wait "$bench"
	kill_postgres "$PGPID"
	PGPID=""
	if [ "$cell" = pgiofs ]; then
		# the mount first: pgiofs's WAL mount over pg_wal cannot be removed
		unmount "$W/pgm" && rm -rf "$W/hdd/pgb"
	else
		rm -rf "$data" ${wal:+"$wal"}
	fi
	cat "$W/log/tx"* | awk -v t0="$t0" -v t1="$t1" '
		{ end = $5 + $6 / 1e6; if (end >= t0 && end <= t1) print $3 / 1000 }' | sort -n |
		awk -v imp="$(echo "$t1 - $t0" | bc)" -v d0="$d0" -v d1="$d1" '
		{ v[NR] = $1 }
		function q(p,  i) { i = int(p * NR + 0.999999); if (i < 1) i = 1; return v[i] }
		END { if (NR == 0) { print "no transactions ended during the import" > "/dev/stderr"; exit 1 }
		      split(d0, a, " "); split(d1, b, " ")
		      printf "%.2f %.2f %.2f %.2f %.2f %d %.1f %d %.2f\n", imp, q(0.5), q(0.99), q(0.999), v[NR], NR,
		             (b[1] - a[1]) / 1e6, b[2] - a[2], (b[3] - a[3]) / 1e9 }'
}

declare -A res
for ((r = 1; r <= ROUNDS; r++)); do
	# the order rotates from round to round
	set -- $CELLS
	for ((k = 0; k < $#; k++)); do
		i=$(((k + r - 1) % $# + 1))
		cell=${!i}
		progress "round $r: $cell"
		out=$(one_cell "$cell" "$r") || die "round $r, $cell failed"
		echo "round $r  $cell  import s, commit p50 p99 p99.9 max ms, transactions, disk MB written, writes, seek s: $out"
		res[$cell]+="$out;"
	done
done

printf '\nmedians of %d round(s), elevator %s, import scale %s, %d clients; commit latency of the transactions that ended during the import\n' \
	"$ROUNDS" "$ELEVATOR" "$SCALE" "$CLIENTS"
printf '%-8s %9s %8s %8s %9s %8s %9s %7s %7s\n' cell "import s" "p50 ms" "p99 ms" "p99.9 ms" "max ms" \
	"disk MB" writes "seek s"
for cell in $CELLS; do
	IFS=';' read -ra rows <<<"${res[$cell]}"
	line=$cell
	for k in 1 2 3 4 5 7 8 9; do
		line+=" $(median "$(for row in "${rows[@]}"; do echo "$row" | cut -d' ' -f$k; done | tr '\n' ' ')")"
	done
	# shellcheck disable=SC2086 # the fields are words
	printf '%-8s %9s %8s %8s %9s %8s %9s %7s %7s\n' $line
done
