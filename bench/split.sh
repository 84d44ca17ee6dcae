#!/bin/bash
# bench/split.sh -- the script splitter's throughput, two pgload builds side
# by side: `pgload split FILE >/dev/null` on a statement-heavy script (one
# INSERT per line, quoted strings, comments) and on the COPY-heavy data.sql
# of `pgload gen`, interleaved A B A B; prints the median MB/s of each build
# and the ratio B/A per input.  It measures only the parser and the input
# layer (no server).
#
#   bench/split.sh [--rounds N] [--mb N] PGLOAD_A PGLOAD_B
#
# For example the build of another commit against this one:
#   git archive OLD | tar -x -C /tmp/old && make -C /tmp/old bin/pgload
#   bench/split.sh /tmp/old/bin/pgload bin/pgload
set -euo pipefail
ROUNDS=7 MB=100
while [ $# -gt 2 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--mb) MB=$2; shift 2 ;;
	*) echo "bench/split.sh: unknown option $1" >&2; exit 1 ;;
	esac
done
[ $# -eq 2 ] || { sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 1; }
A=$1 B=$2
W=$(mktemp -d /tmp/pgload-split-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT

# statement-heavy: INSERTs with quoted text, an escape string, a comment
awk -v n=$((MB * 1024 * 1024 / 120)) 'BEGIN {
	for (i = 0; i < n; i++)
		printf "INSERT INTO t (id, name, note) VALUES (%d, '\''name %d'\'', E'\''a\\tb'\''); -- row %d\n", i, i, i
}' >"$W/inserts.sql"
"$B" gen --scale "$(awk -v mb="$MB" 'BEGIN { printf "%.2f", mb / 100 }')" --out "$W/gen" >/dev/null 2>&1

# one timed split, in seconds
split_s() {
	local t0 t1
	t0=$EPOCHREALTIME
	"$1" split "$2" >/dev/null
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-12s %10s %10s %8s   (%d rounds, A B A B)\n' input "A MB/s" "B MB/s" "B/A" "$ROUNDS"
for f in "$W/inserts.sql" "$W/gen/data.sql"; do
	size=$(stat -c %s "$f")
	: >"$W/a" && : >"$W/b"
	for _ in $(seq "$ROUNDS"); do
		split_s "$A" "$f" >>"$W/a"
		split_s "$B" "$f" >>"$W/b"
	done
	ma=$(median <"$W/a") mb=$(median <"$W/b")
	awk -v n="$(basename "$f")" -v s="$size" -v a="$ma" -v b="$mb" \
		'BEGIN { printf "%-12s %10.1f %10.1f %8.3f\n", n, s / 1e6 / a, s / 1e6 / b, a / b }'
done
