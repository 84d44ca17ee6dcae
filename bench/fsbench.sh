#!/bin/bash
# fsbench.sh -- the seed threads' file system benchmarks on a pgiofs mount
# against the native file system underneath it, side by side.
#
# For every round, every cell (native, pgiofs with the default
# configuration, and pgiofs with each --profile) runs, in this order and on
# a fresh directory of the same file system (--dir):
#   dbench1, dbench4   dbench with 1 and 4 clients for --time seconds (its
#                      client.txt load): MB/s
#   bonnie             bonnie++ -f (block I/O: sequential write, rewrite and
#                      read of --size MB) and -n (file creation, stat and
#                      deletion, sequential and random order): KB/s and
#                      files/s ("+++++": bonnie++ found it too fast to time)
#   tio                a tiobench-style table by fio: 4 threads, 4 KiB
#                      blocks, sequential and random write and read of
#                      --size MB in all: MB/s, average and maximum latency,
#                      % of requests over 2 s and over 10 s
#   dd                 a --size MB sequential write with a final fdatasync
#                      (dd conv=fdatasync), then the same file read cold
#                      (page cache dropped) with 1 MiB reads: MB/s
#   hdparm             hdparm -t's measure on a file: cold sequential reads
#                      of 2 MiB for 3 seconds, or to the end of the file if
#                      sooner (looping over it would read from the page
#                      cache): MB/s
#   randread           cold random 8 KiB reads of that file (fio, 1 thread):
#                      a quarter of its blocks, each read once, in random
#                      order (at most --time seconds), so that no read
#                      finds a block an earlier read of the run brought into
#                      a page cache: MB/s and IOPS
# Cells alternate within each round (native, pgiofs, native, pgiofs, ...
# when one profile), and the medians over the rounds and the ratio
# pgiofs/native of each figure (higher is better for every rate) are
# printed at the end, next to the targets the project holds pgiofs to.
#
# It measures and prints, nothing more: no timing is ever asserted.
# Progress goes to stderr, results to stdout.  Exit 0 when every sample
# ran, 1 on an error, 2 when interrupted.  Everything it started (mounts,
# directories) is removed at exit, Ctrl-C included.
set -u

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PGIOFS=${PGIOFS:-$TOP/bin/pgiofs}
ME=fsbench.sh
# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"

ROUNDS=3
SIZE=1024
TIME=20
NFILES=64
DIR=/var/tmp
PGIOFS_ARGS=""
PROFILES=()
ONLY="dbench1 dbench4 bonnie tio dd hdparm randread"

usage() {
	cat <<EOF
usage: bench/fsbench.sh [options]

dbench, bonnie++, a tiobench-style fio table, dd and an hdparm -t-style
read on pgiofs and on the native file system under it, interleaved, with
medians and ratios.  Needs root, dbench, bonnie++ and fio
(scripts/install-deps.sh installs them).

  --rounds N          rounds (default $ROUNDS, 1..100)
  --size MB           file size of bonnie++, the fio table and dd (default
                      $SIZE, 16..65536)
  --time S            seconds of each dbench and of the random reads
                      (default $TIME, 1..3600)
  --files N           bonnie++ -n: N*1024 files (default $NFILES, 1..1024)
  --quick             2 rounds, 128 MB, 5 s, 8 (x1024) files
  --dir DIR           parent of the working directory, on the file system
                      to measure (default $DIR)
  --profile NAME      one more pgiofs cell with --profile NAME (repeatable)
  --pgiofs-args ARGS  extra pgiofs options for every pgiofs cell
  --only LIST         comma-separated subset of: ${ONLY// /,}
  -h, --help          this help
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--rounds) range --rounds "${2-}" 1 100 && ROUNDS=$2 && shift 2 ;;
	--size) range --size "${2-}" 16 65536 && SIZE=$2 && shift 2 ;;
	--time) range --time "${2-}" 1 3600 && TIME=$2 && shift 2 ;;
	--files) range --files "${2-}" 1 1024 && NFILES=$2 && shift 2 ;;
	--quick) ROUNDS=2 SIZE=128 TIME=5 NFILES=8 && shift ;;
	--dir) [ $# -ge 2 ] || die "--dir needs a directory"; DIR=$2 && shift 2 ;;
	--profile) [ $# -ge 2 ] || die "--profile needs a name"; PROFILES+=("$2") && shift 2 ;;
	--pgiofs-args) [ $# -ge 2 ] || die "--pgiofs-args needs a value"; PGIOFS_ARGS=$2 && shift 2 ;;
	--only)
		[ $# -ge 2 ] || die "--only needs a list"
		for t in ${2//,/ }; do
			[[ " dbench1 dbench4 bonnie tio dd hdparm randread " == *" $t "* ]] ||
				die "--only: unknown benchmark \"$t\" (one of: ${ONLY// /, })"
		done
		ONLY=${2//,/ } && shift 2
		;;
	-h | --help) usage && exit 0 ;;
	*) die "unknown option \"$1\" (see --help)" ;;
	esac
done
[ "$(id -u)" -eq 0 ] || die "needs root (mounts, dropping the page cache)"
for p in dbench bonnie++ fio; do
	command -v $p >/dev/null || die "$p is not installed (run scripts/install-deps.sh)"
done
[ -x "$PGIOFS" ] || die "$PGIOFS is missing: run make"
[ -d "$DIR" ] || die "--dir $DIR: not a directory"
for p in "${PROFILES[@]}"; do
	"$PGIOFS" --profile "$p" --print-config >/dev/null 2>"$DIR/.fsbench.err.$$" ||
		die "--profile $p: $(cat "$DIR/.fsbench.err.$$"; rm -f "$DIR/.fsbench.err.$$")"
done
rm -f "$DIR/.fsbench.err.$$"
# pgiofs holds a descriptor for every file the kernel knows: bonnie++'s
# files must fit the open-files limit the daemon will have (fs.nr_open
# where root may raise its hard limit, else the hard limit)
if [[ " $ONLY " == *" bonnie "* ]]; then
	nofile=$(cat /proc/sys/fs/nr_open)
	prlimit --nofile="$nofile:$nofile" true 2>/dev/null || nofile=$(ulimit -Hn)
	[ "$nofile" = unlimited ] || [ $((NFILES * 1024 + 1024)) -le "$nofile" ] ||
		die "--files $NFILES: bonnie++ would create $((NFILES * 1024)) files, and pgiofs holds a descriptor for each; its open-files limit here is $nofile (the hard limit, which this process may not raise): use --files $(((nofile - 1024) / 1024)) or less"
fi
free=$(df -Pm "$DIR" | awk 'NR == 2 { print $4 }')
[ "$free" -gt $((SIZE * 3 + 512)) ] ||
	die "--dir $DIR has $free MB free; --size $SIZE needs about $((SIZE * 3 + 512))"

W=$(mktemp -d "$DIR/pgiofs-fsbench.XXXXXX") || die "cannot make a directory in $DIR"
MNT=""
cleanup() {
	[ -n "$MNT" ] && unmount "$MNT"
	rm -rf "$W"
}
trap 'cleanup' EXIT
trap 'echo "$ME: interrupted" >&2; cleanup; trap - EXIT; exit 2' INT TERM
RES=$W/results.tsv
: >"$RES"

CELLS=(native pgiofs)
for p in "${PROFILES[@]}"; do CELLS+=("pgiofs:$p"); done

# record CELL ROUND NAME VALUE -- one sample
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RES"; }

# cell_up CELL -- the directory to measure: a fresh one for native, a fresh
# pgiofs mount for the others (its backing directory on the same file system)
cell_up() {
	local cell=$1 d=$W/$1.$2
	d=${d//:/_}
	mkdir -p "$d/backing" || die "cannot make $d"
	if [ "$cell" = native ]; then
		TARGET=$d/backing
		return
	fi
	mkdir -p "$d/mnt"
	local args=(-o allow_other)
	[ "$cell" = pgiofs ] || args+=(--profile "${cell#pgiofs:}")
	# shellcheck disable=SC2086 # ARGS split as written
	"$PGIOFS" "${args[@]}" $PGIOFS_ARGS "$d/backing" "$d/mnt" || die "pgiofs ${args[*]} $PGIOFS_ARGS failed"
	MNT=$d/mnt
	TARGET=$d/mnt
}

cell_down() {
	if [ -n "$MNT" ]; then
		unmount "$MNT"
		MNT=""
	fi
	rm -rf "${TARGET%/*}"
}

# fio_json ARGS... -- run fio with JSON output into $W/fio.json
fio_json() {
	fio --output-format=json --output="$W/fio.json" "$@" >"$W/fio.log" 2>&1 ||
		fail_log "fio $* failed" "$W/fio.log"
}

run_dbench() { # N
	local out
	out=$(dbench -D "$TARGET" -t "$TIME" "$1" 2>&1) || { echo "$out" >"$W/dbench.log"; fail_log "dbench $1 failed" "$W/dbench.log"; }
	awk '/^Throughput/ { print $2 }' <<<"$out" | tail -n 1
}

run_bonnie() { # CELL ROUND
	local csv f i names=(put_block rewrite get_block) idx=(11 13 17)
	local fnames=(seq_create seq_stat seq_del ran_create ran_stat ran_del) fidx=(26 28 30 32 34 36)
	mkdir -p "$TARGET/bonnie"
	csv=$(bonnie++ -d "$TARGET/bonnie" -s "$SIZE" -r $((SIZE / 2)) -n "$NFILES" -u root -f -q 2>"$W/bonnie.log" | tail -n 1) ||
		fail_log "bonnie++ failed" "$W/bonnie.log"
	IFS=, read -r -a f <<<"$csv"
	[ "${#f[@]}" -ge 37 ] || fail_log "bonnie++ printed no CSV line: $csv" "$W/bonnie.log"
	for i in "${!names[@]}"; do record "$1" "$2" "bonnie_${names[$i]}_KBs" "${f[${idx[$i]}]}"; done
	for i in "${!fnames[@]}"; do record "$1" "$2" "bonnie_${fnames[$i]}_per_s" "${f[${fidx[$i]}]}"; done
	rm -rf "$TARGET/bonnie"
}

# run_tio CELL ROUND -- the tiobench-style table: 4 threads, 4 KiB blocks
run_tio() {
	local rw per=$((SIZE / 4)) extra
	for rw in write randwrite read randread; do
		extra=()
		case $rw in read | randread) drop_caches ;; esac
		# random transfers stop after --time seconds if --size takes longer
		case $rw in rand*) extra=(--runtime="$TIME") ;; esac
		fio_json --name=tio --directory="$TARGET" --rw=$rw --bs=4k --numjobs=4 --thread \
			--size="${per}m" --group_reporting --end_fsync=1 --fallocate=none "${extra[@]}"
		python3 - "$W/fio.json" "$1" "$2" "$rw" >>"$RES" <<-'PY' || die "cannot read fio's output"
			import json, sys
			j = json.load(open(sys.argv[1]))["jobs"][0]
			cell, rnd, rw = sys.argv[2:5]
			d = j["write"] if "write" in rw else j["read"]
			lat, buckets = d["clat_ns"], j["latency_ms"]
			over2 = buckets.get(">=2000", 0.0)
			# fio's buckets end at ">=2000": >10 s is 0 exactly when the slowest
			# request took less; else it is not known from these figures
			over10 = 0.0 if lat["max"] < 10e9 else float("nan")
			for k, v in (("MBs", d["bw_bytes"] / 1e6), ("avg_ms", lat["mean"] / 1e6),
			             ("max_ms", lat["max"] / 1e6), ("over2s_pct", over2),
			             ("over10s_pct", over10)):
			    print("%s\t%s\ttio_%s_%s\t%.6g" % (cell, rnd, rw, k, v))
		PY
		rm -f "$TARGET"/tio.*
	done
}

run_dd() { # CELL ROUND
	local t0 t1
	t0=$(now)
	dd if=/dev/zero of="$TARGET/dd.bin" bs=1M count="$SIZE" conv=fdatasync status=none ||
		die "dd write failed"
	t1=$(now)
	record "$1" "$2" dd_write_fdatasync_MBs "$(awk -v s="$SIZE" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", s * 1.048576 / (b - a) }')"
	drop_caches
	t0=$(now)
	dd if="$TARGET/dd.bin" of=/dev/null bs=1M status=none || die "dd read failed"
	t1=$(now)
	record "$1" "$2" dd_read_cold_MBs "$(awk -v s="$SIZE" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", s * 1.048576 / (b - a) }')"
}

run_hdparm() { # CELL ROUND -- on dd's file
	drop_caches
	# each block once: hdparm -t stops at the end of the device too
	fio_json --name=hdparm --filename="$TARGET/dd.bin" --rw=read --bs=2m --runtime=3 \
		--size="${SIZE}m"
	record "$1" "$2" hdparm_t_MBs "$(python3 -c 'import json,sys; print("%.2f" % (json.load(open(sys.argv[1]))["jobs"][0]["read"]["bw_bytes"] / 1e6))' "$W/fio.json")"
}

run_randread() { # CELL ROUND -- on dd's file
	drop_caches
	# fio's random map reads each block once; looping over the file for
	# --time seconds would read the later blocks from the page cache
	fio_json --name=rr --filename="$TARGET/dd.bin" --rw=randread --bs=8k --runtime="$TIME" \
		--size="${SIZE}m" --io_size="$((SIZE / 4))m"
	python3 - "$W/fio.json" "$1" "$2" >>"$RES" <<-'PY' || die "cannot read fio's output"
		import json, sys
		r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
		print("%s\t%s\trandread_8k_cold_MBs\t%.3f" % (sys.argv[2], sys.argv[3], r["bw_bytes"] / 1e6))
		print("%s\t%s\trandread_8k_cold_iops\t%.1f" % (sys.argv[2], sys.argv[3], r["iops"]))
	PY
}

has() { [[ " $ONLY " == *" $1 "* ]]; }

echo "pgiofs file system benchmarks: $ROUNDS rounds, --size $SIZE MB, --time $TIME s, bonnie++ -n $NFILES"
echo "directory: $W ($(df -PT "$DIR" | awk 'NR == 2 { print $2 " on " $1 }')); pgiofs: $PGIOFS $PGIOFS_ARGS ($("$PGIOFS" --version))"
echo "kernel $(uname -r), $(nproc) CPUs; $(dbench --help 2>&1 | head -n 1 | tr -s ' '); $(fio --version); bonnie++ $(bonnie++ 2>&1 | awk '/^Version/ { print $2; exit }')"
echo

for ((r = 1; r <= ROUNDS; r++)); do
	# alternate which cell goes first, so that neither always runs on a
	# machine warmed (or tired) by the other
	order=("${CELLS[@]}")
	if ((r % 2 == 0)); then
		order=()
		for ((i = ${#CELLS[@]} - 1; i >= 0; i--)); do order+=("${CELLS[$i]}"); done
	fi
	for cell in "${order[@]}"; do
		progress "round $r/$ROUNDS: $cell"
		cell_up "$cell" "$r"
		has dbench1 && record "$cell" "$r" dbench1_MBs "$(run_dbench 1)"
		has dbench4 && record "$cell" "$r" dbench4_MBs "$(run_dbench 4)"
		has bonnie && run_bonnie "$cell" "$r"
		has tio && run_tio "$cell" "$r"
		if has dd || has hdparm || has randread; then
			run_dd "$cell" "$r"
		fi
		has hdparm && run_hdparm "$cell" "$r"
		has randread && run_randread "$cell" "$r"
		cell_down
	done
done

echo "raw samples (cell, round, figure, value):"
sort -t $'\t' -k3,3 -k2,2n -k1,1 "$RES" | column -t -s $'\t'
echo
python3 - "$RES" "${CELLS[@]}" <<'PY'
import math, statistics, sys
from collections import defaultdict
res, cells = sys.argv[1], sys.argv[2:]
v = defaultdict(list)
order = []
for line in open(res):
    cell, rnd, name, val = line.rstrip("\n").split("\t")
    if name not in order:
        order.append(name)
    try:
        x = float(val)
    except ValueError:          # bonnie++'s "+++++": too fast to time
        continue
    if not math.isnan(x):
        v[(cell, name)].append(x)
# the project's targets: pgiofs (default configuration) / native
targets = {"dbench1_MBs": 0.4, "dbench4_MBs": 0.4, "dd_read_cold_MBs": 0.95,
           "hdparm_t_MBs": 0.95, "randread_8k_cold_MBs": 0.85,
           "dd_write_fdatasync_MBs": 0.95, "bonnie_seq_create_per_s": 0.4,
           "bonnie_seq_stat_per_s": 0.4, "bonnie_seq_del_per_s": 0.4,
           "bonnie_ran_create_per_s": 0.4, "bonnie_ran_stat_per_s": 0.4,
           "bonnie_ran_del_per_s": 0.4}
lower_better = ("avg_ms", "max_ms", "pct")
head = "%-30s" % "medians" + "".join("%14s" % c for c in cells) + "".join(
    "%14s" % ("%s/native" % c) for c in cells[1:]) + "  target"
print(head)
for name in order:
    med = {c: statistics.median(v[(c, name)]) if v[(c, name)] else None for c in cells}
    row = "%-30s" % name
    for c in cells:
        row += "%14s" % ("%.4g" % med[c] if med[c] is not None else "too fast")
    for c in cells[1:]:
        if med[c] is None or not med["native"]:
            row += "%14s" % "-"
        else:
            row += "%14.2f" % (med[c] / med["native"])
    if name in targets:
        row += "  >= %.2f" % targets[name]
    elif name.endswith(lower_better):
        row += "  (lower is better)"
    print(row)
PY
