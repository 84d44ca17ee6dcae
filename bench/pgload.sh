#!/bin/bash
# bench/pgload.sh -- pgload versus psql, side by side, on one private server.
#
# Loads the `pgload gen` workload (schema, data, post-data) and a pg_dump -Fp
# of it, through `psql -f` and through `pgload run` with one and with N
# connections, interleaved run by run into freshly created databases with a
# CHECKPOINT before each.  Prints per-phase mean ± sd of wall time, the
# ratios pgload/psql, and the peak RSS of every client.
#
# usage: bench/pgload.sh [--scale N] [--runs N] [--jobs N] [--quick] [--big]
#   --scale N   workload scale (default 2: about 200 MB of COPY data)
#   --runs N    rounds (default 3)
#   --jobs N    connections for the parallel pgload (default 4)
#   --quick     scale 0.5, one round
#   --big       also check streaming: peak RSS of `pgload gen`, `pgload split`
#               and `pgload run` on a ~1 GB dump (scale 10; takes minutes)
#   --pgiofs    also load the workload once with `pgload run --on-pgiofs`
#               (embedded server on a pgiofs mount; needs root or user FUSE
#               mounts) and print its phase times and the data phase's
#               per-class I/O from `pgiofs stat`
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
PGLOAD=${PGLOAD:-$TOP/bin/pgload}
PGBIN=${PGBIN:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}
SCALE=2 RUNS=3 JOBS=4 BIG=0 PGIOFS=0
while [ $# -gt 0 ]; do
	case $1 in
	--scale) SCALE=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--quick) SCALE=0.5; RUNS=1; shift ;;
	--big) BIG=1; shift ;;
	--pgiofs) PGIOFS=1; shift ;;
	-h|--help) sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/pgload.sh: unknown option $1" >&2; exit 1 ;;
	esac
done
[ -x "$PGLOAD" ] || { echo "bench/pgload.sh: build first (make): no $PGLOAD" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench/pgload.sh: needs /usr/bin/time (package time)" >&2; exit 1; }

W=$(mktemp -d /tmp/pgload-bench.XXXXXX)
chmod 755 "$W"
USER_PG=$( [ "$(id -u)" -eq 0 ] && echo postgres || id -un )
as_pg() { if [ "$(id -un)" = "$USER_PG" ]; then "$@"; else runuser -u "$USER_PG" -- "$@"; fi; }
cleanup() {
	[ -f "$W/data/postmaster.pid" ] && as_pg "$PGBIN/pg_ctl" -D "$W/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

PORT=$((20000 + RANDOM % 30000))
chown "$USER_PG" "$W"
as_pg "$PGBIN/initdb" -D "$W/data" -A trust -U "$USER_PG" -E UTF8 --no-locale >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$W/data" -l "$W/server.log" -w \
	-o "-k $W -p $PORT -c listen_addresses= -c max_wal_size=4GB" start >/dev/null
export PGHOST=$W PGPORT=$PORT PGUSER=$USER_PG PGDATABASE=postgres
DSN="host=$W port=$PORT user=$USER_PG dbname=postgres"

echo "pgload vs psql: scale $SCALE, $RUNS round(s), --jobs $JOBS, PostgreSQL $(psql -X -At -c 'SHOW server_version' | cut -d' ' -f1), $(nproc) CPUs, kernel $(uname -r)"
/usr/bin/time -f "%e %M" -o "$W/gen.time" "$PGLOAD" gen -q --scale "$SCALE" --out "$W/gen"
G=$W/gen
read -r gen_s gen_kb <"$W/gen.time"
gen_mb=$(awk -v b="$(stat -c %s "$G/data.sql")" 'BEGIN{printf "%.1f", b/1e6}')
echo "workload: data.sql $gen_mb MB, generated in ${gen_s}s (peak RSS $((gen_kb / 1024)) MiB)"

# timed NAME CMD... -- run CMD under /usr/bin/time; append "NAME secs kb".
timed() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$W/t" "$@" >/dev/null 2>"$W/err" || { cat "$W/err" >&2; exit 1; }
	echo "$name $(cat "$W/t")" >>"$W/samples"
}

fresh() { dropdb --if-exists "$1" 2>/dev/null || true; createdb "$1"; psql -X -q -c CHECKPOINT; }

# pgload_phases TAG ARGS... -- one pgload run; record its phases and RSS.
pgload_phases() {
	local tag=$1
	shift
	/usr/bin/time -f "%M" -o "$W/t" "$PGLOAD" run -q --dsn "$DSN" --force --csv "$W/p.csv" "$@" \
		>/dev/null 2>"$W/err" || { cat "$W/err" >&2; exit 1; }
	awk -F, -v tag="$tag" 'NR > 1 { print tag "." $4, $5, 0 }' "$W/p.csv" >>"$W/samples"
	echo "$tag.rss 0 $(cat "$W/t")" >>"$W/samples"
}

: >"$W/samples"
# the dump: the generated workload loaded once, unmeasured
"$PGLOAD" run -q --dsn "$DSN" --force --db b_dump --schema "$G/schema.sql" -f "$G/data.sql" --post "$G/post.sql" >/dev/null
pg_dump -Fp -d b_dump -f "$W/dump.sql"
dropdb b_dump

# one_load CLIENT -- one measured load; each database is dropped right after
# its load so that no autovacuum of a previous load competes with the next.
one_load() {
	case $1 in
	psql)
		fresh b_psql
		timed psql.schema psql -X -q -v ON_ERROR_STOP=1 -d b_psql -f "$G/schema.sql"
		timed psql.data psql -X -q -v ON_ERROR_STOP=1 -d b_psql -f "$G/data.sql"
		timed psql.post psql -X -q -v ON_ERROR_STOP=1 -d b_psql -f "$G/post.sql"
		dropdb b_psql ;;
	pgload)
		pgload_phases pgload --db b_pgload --schema "$G/schema.sql" -f "$G/data.sql" --post "$G/post.sql"
		dropdb b_pgload ;;
	pgloadj)
		pgload_phases pgloadj --db b_pgloadj --jobs "$JOBS" --schema "$G/schema.sql" -f "$G/data.sql" --post "$G/post.sql"
		dropdb b_pgloadj ;;
	dpsql)
		fresh d_psql
		timed dpsql.data psql -X -q -v ON_ERROR_STOP=1 -d d_psql -f "$W/dump.sql"
		dropdb d_psql ;;
	dpgload)
		pgload_phases dpgload --db d_pgload -d "$W/dump.sql"
		dropdb d_pgload ;;
	dpgloadj)
		pgload_phases dpgloadj --db d_pgloadj --jobs "$JOBS" -d "$W/dump.sql"
		dropdb d_pgloadj ;;
	esac
}

clients=(psql pgload pgloadj dpsql dpgload dpgloadj)
for r in $(seq "$RUNS"); do
	echo "round $r/$RUNS ..." >&2
	# rotate the order from round to round
	for ((k = 0; k < ${#clients[@]}; k++)); do
		one_load "${clients[$(((k + r - 1) % ${#clients[@]}))]}"
	done
done

awk -v jobs="$JOBS" '
function stat(k,   m, s, i) {
	m = sum[k] / n[k]; s = 0
	if (n[k] > 1) s = sqrt((sq[k] - n[k] * m * m) / (n[k] - 1))
	if (s != s) s = 0
	return sprintf("%8.2f s ± %5.2f", m, s)
}
function mean(k) { return n[k] ? sum[k] / n[k] : 0 }
{ sum[$1] += $2; sq[$1] += $2 * $2; n[$1]++; if ($3 > rss[$1]) rss[$1] = $3
  split($1, a, "."); if ($3 > peak[a[1]]) peak[a[1]] = $3 }
END {
	printf "\ngenerated workload (mean ± sd over %d rounds)\n", n["psql.data"]
	printf "%-8s %18s %18s %18s   %s\n", "phase", "psql", "pgload", "pgload -j" jobs, "ratio pgload/psql, -j/psql"
	split("schema data post", ph, " ")
	for (i = 1; i <= 3; i++) {
		p = ph[i]
		printf "%-8s %18s %18s %18s   %.2f, %.2f\n", p, stat("psql." p), stat("pgload." p), stat("pgloadj." p),
			mean("pgload." p) / mean("psql." p), mean("pgloadj." p) / mean("psql." p)
	}
	printf "\npg_dump -Fp of it, loaded as one script\n"
	printf "%-8s %18s %18s %18s   %.2f, %.2f\n", "data", stat("dpsql.data"), stat("dpgload.data"), stat("dpgloadj.data"),
		mean("dpgload.data") / mean("dpsql.data"), mean("dpgloadj.data") / mean("dpsql.data")
	printf "\npeak RSS of the client: psql %d MiB, pgload %d MiB, pgload -j%d %d MiB\n",
		(peak["psql"] > peak["dpsql"] ? peak["psql"] : peak["dpsql"]) / 1024,
		(peak["pgload"] > peak["dpgload"] ? peak["pgload"] : peak["dpgload"]) / 1024, jobs,
		(peak["pgloadj"] > peak["dpgloadj"] ? peak["pgloadj"] : peak["dpgloadj"]) / 1024
}' "$W/samples"

if [ "$PGIOFS" = 1 ]; then
	echo
	echo "pgload run --on-pgiofs (embedded server on pgiofs, max_wal_size=4GB, one run):"
	"$PGLOAD" run -q --on-pgiofs --set max_wal_size=4GB --csv "$W/io.csv" \
		--schema "$G/schema.sql" -f "$G/data.sql" --post "$G/post.sql" >"$W/io.out" 2>"$W/err" ||
		{ cat "$W/err" >&2; exit 1; }
	cat "$W/err" >&2
	grep -E '^[a-z]+ +real [0-9]+m' "$W/io.out" | sed 's/^/  /'
	echo
	sed -n '/^I\/O of the data phase/,/^$/p' "$W/io.out" | sed '/^$/d; s/^/  /'
	# every phase: MB written per class (from the CSV's CLASS_write_bytes columns)
	awk -F, 'NR == 1 { for (i = 13; i <= NF; i++) if ($i ~ /_write_bytes$/) { c[i] = $i; sub(/_write_bytes$/, "", c[i]) } next }
		{ line = sprintf("  %-7s write MB:", $4)
		  for (i = 13; i <= NF; i++) if ((i in c) && $i > 0) line = line sprintf(" %s %.1f", c[i], $i / 1e6)
		  print line }' "$W/io.csv"
fi

if [ "$BIG" = 1 ]; then
	echo
	echo "streaming check (scale 10, about 1 GB):"
	rm -rf "$W/gen"
	/usr/bin/time -f "%e %M" -o "$W/t" "$PGLOAD" gen -q --scale 10 --out "$W/big"
	read -r s kb <"$W/t"
	echo "  pgload gen: $(awk -v b="$(stat -c %s "$W/big/data.sql")" 'BEGIN{printf "%.0f", b/1e6}') MB in ${s}s, peak RSS $((kb / 1024)) MiB"
	/usr/bin/time -f "%e %M" -o "$W/t" "$PGLOAD" split "$W/big/data.sql" >/dev/null
	read -r s kb <"$W/t"
	echo "  pgload split: ${s}s, peak RSS $((kb / 1024)) MiB"
	/usr/bin/time -f "%e %M" -o "$W/t" "$PGLOAD" run -q --dsn "$DSN" --force --db big \
		--schema "$W/big/schema.sql" -f "$W/big/data.sql" >/dev/null
	read -r s kb <"$W/t"
	echo "  pgload run (schema+data): ${s}s, peak RSS $((kb / 1024)) MiB"
	/usr/bin/time -f "%e %M" -o "$W/t" "$PGLOAD" run -q --dsn "$DSN" --force --db big --jobs "$JOBS" \
		--schema "$W/big/schema.sql" -f "$W/big/data.sql" >/dev/null
	read -r s kb <"$W/t"
	echo "  pgload run --jobs $JOBS (schema+data): ${s}s, peak RSS $((kb / 1024)) MiB"
fi
