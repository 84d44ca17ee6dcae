#!/bin/bash
# test_compare.sh -- `pgload compare`: a tiny matrix (dir and tmpfs back
# ends, native and two pgiofs profiles, a --set sweep, --pg-set server
# settings read back from each cell's server, 2 runs, read_load)
# produces the table, results.json with the documented keys, results.csv,
# the SVG charts and index.html; the loop-mounted back ends ext2, ext3 and
# xfs (with io_load); bad arguments are refused before anything is made;
# SIGINT removes everything (exit 2); the leftovers of a run killed with
# SIGKILL are found and removed by the next run.  After each run no mount,
# loop device, server, pgiofs daemon or directory of it remains.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
W=$(mktempdir)
mkdir "$W/d"

# assert_clean WD -- nothing of the run with work directory WD remains, and
# the dir: back end is as it was.
assert_clean() {
	assert_compare_clean "$1"
	[ -z "$(ls -A "$W/d")" ] || fail "the dir: back end is not as it was: $(ls -A "$W/d")"
	return 0
}

# ---- the tiny matrix ---------------------------------------------------------
"$PGLOAD" compare --gen 0.01 --backends "dir:$W/d,tmpfs" --profiles native,deadline-2.6,dbaware \
	--runs 2 --set iosched.nr_requests=32,128 --load read_load --size 256M --stream-mb 4 \
	--pg-set max_wal_size=144MB --pg-set work_mem=8MB \
	--baseline tmpfs/native --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "tiny compare failed"; }
assert_clean "$(compare_work_dir "$W/stderr")"
grep -q '^Backend/profile  *\[runs\] Schema(s) Import(s)  *±sd  *CPU%  *Loads(MB)  *LCPU%  *Ratio$' "$W/stdout" ||
	{ cat "$W/stdout"; fail "no seed-style table header"; }
for cell in dir/native "dir/deadline-2.6 iosched.nr_requests=32" "dir/dbaware iosched.nr_requests=128" \
	tmpfs/native "tmpfs/dbaware iosched.nr_requests=32"; do
	grep -q "^$cell  *\[2\] " "$W/stdout" || { cat "$W/stdout"; fail "no row for $cell"; }
done
[ "$(grep -c ' \[2\] ' "$W/stdout")" = 10 ] || fail "not 10 cells (2 back ends x (native + 2 profiles x 2 values))"
grep -q '^tmpfs/native .* 1\.00 (baseline)' "$W/stdout" || fail "baseline not marked"
grep -q '^pgload compare: 2 runs per cell, .*; PostgreSQL [0-9.]* with max_wal_size=144MB, work_mem=8MB$' \
	"$W/stdout" || { head -1 "$W/stdout"; fail "the header does not name the --pg-set settings"; }
grep -q '^native on dir took [0-9.]* ± [0-9.]* times the import time of native on tmpfs: \(faster\|slower\|not separated\) (2 runs each, [0-9.]* to [0-9.]* against [0-9.]* to [0-9.]* s)$' "$W/stdout" ||
	{ cat "$W/stdout"; fail "no ratio line"; }
python3 - "$W/stdout" <<'PY' || fail "a ratio line's word disagrees with its runs"
import re, sys
for l in open(sys.argv[1]):
    m = re.match(r".* took ([0-9.]+) ± [0-9.]+ times the import time of .*: (.*) \(2 runs each, "
                 r"([0-9.]+) to ([0-9.]+) against ([0-9.]+) to ([0-9.]+) s\)$", l)
    if m:
        r, word = float(m[1]), m[2]
        alo, ahi, blo, bhi = map(float, m.groups()[2:])
        if ahi == blo or bhi == alo:
            continue   # ranges that touch as printed (2 decimals) may be apart unrounded
        apart = ahi < blo or bhi < alo
        want = "not separated" if not apart else "faster" if r < 1 else "slower"
        assert word == want, l
PY
grep -q '^Backend/profile  *class  *ops  *Avg ms  *p99 ms  *Max ms  *Lat%>2s Lat%>10s$' "$W/stdout" ||
	fail "no latency table"
grep -q '^tmpfs/dbaware iosched.nr_requests=128  *wal  *[1-9]' "$W/stdout" || fail "no WAL latency row"
grep -q "^report: $W/out/index.html\$" "$W/stdout" || fail "report path not printed"
cmp -s <(sed '/^$/d; /^report: /d' "$W/stdout") <(sed '/^$/d' "$W/out/table.txt") || fail "table.txt differs from stdout"

python3 - "$W/out/results.json" <<'PY' || fail "results.json lacks documented keys"
import json, sys
d = json.load(open(sys.argv[1]))
top = {"schema", "started", "seconds", "kernel", "server_version", "settings", "baseline", "cells"}
assert top <= d.keys(), top - d.keys()
assert d["schema"] == "pgload.compare/1"
s = d["settings"]
for k in ("workload", "gen_scale", "files", "runs", "jobs", "load", "device", "size_bytes",
          "backends", "profiles", "sets", "elevators", "pgiofs_elevators", "queue_sets",
          "disk_sets", "oltp", "stream_mb", "cv_limit_pct", "pg_sets"):
    assert k in s, k
assert s["elevators"] == [] and s["pgiofs_elevators"] == ["none"] and s["oltp"] is None
assert s["queue_sets"] == {} and s["disk_sets"] == {} and s["stream_mb"] == 4
assert s["runs"] == 2 and s["load"] == "read_load" and s["gen_scale"] == 0.01
assert s["sets"] == {"iosched.nr_requests": ["32", "128"]}, s["sets"]
assert s["pg_sets"] == ["max_wal_size=144MB", "work_mem=8MB"], s["pg_sets"]
assert d["baseline"] == "tmpfs/native"
assert len(d["cells"]) == 10
for c in d["cells"]:
    for k in ("label", "backend", "backend_path", "profile", "pgiofs", "set", "runs", "import_s",
              "schema_s", "cpu_pct", "load_mb", "load_cpu_pct", "ratio", "ratio_sd", "noisy",
              "samples", "latency", "queue_set", "disk_set", "elevator", "queue", "disk",
              "stream", "oltp", "floor", "vs_baseline", "set_up_per_run", "caps",
              "server_settings"):
        assert k in c, k
    # read back from each cell's server: --pg-set reached it, through pgiofs too
    ss = c["server_settings"]
    assert ss["max_wal_size"] == "144MB" and ss["work_mem"] == "8MB", ss
    assert ss["checkpoint_timeout"] == "5min", ss
    # no block device, no model, no OLTP clients here; streaming figures of the file only
    assert c["elevator"] is None and c["queue"] is None and c["disk"] is None and c["caps"] is None
    assert c["oltp"] is None and c["queue_set"] == {} and c["disk_set"] == {}
    st = c["stream"]
    assert st["device_read_mb_s"] is None and st["file_write_mb_s"] > 0 and st["file_read_mb_s"] > 0, st
    assert set(c["import_s"]) == {"mean", "sd", "min", "max", "cv_pct"}
    assert c["runs"] == 2 and len(c["samples"]) == 2
    assert [x["round"] for x in c["samples"]] == [1, 2]
    for x in c["samples"]:
        assert set(x) == {"round", "schema_s", "data_s", "post_s", "import_s", "cpu_pct",
                          "load_mb", "load_cpu_pct", "wal_bytes", "rows", "oltp", "floor",
                          "caps", "timeline"}
        assert x["floor"] is None and x["caps"] is None and x["timeline"]["per_second"] == [], x["timeline"]
        assert x["import_s"] > 0 and x["rows"] > 0 and x["load_mb"] > 0
        assert abs(x["import_s"] - x["data_s"] - x["post_s"]) < 1e-5
    if c["pgiofs"]:
        assert set(c["latency"]) == {"wal", "xact", "heap", "index", "fsm", "vm", "temp", "meta", "other"}
        assert c["latency"]["wal"]["ops"] > 0
        assert set(c["latency"]["wal"]) == {"ops", "avg_ms", "p99_ms", "max_ms", "over_2s_pct", "over_10s_pct"}
        assert list(c["set"]) == ["iosched.nr_requests"]
    else:
        assert c["latency"] is None and c["set"] == {}
base = [c for c in d["cells"] if c["label"] == "tmpfs/native"][0]
assert abs(base["ratio"] - 1) < 1e-9
PY
[ "$(head -n 1 "$W/out/results.csv")" = \
	"cell,backend,profile,set,round,schema_s,data_s,post_s,import_s,cpu_pct,load_mb,load_cpu_pct,wal_bytes,rows,elevator,queue_set,disk_set,oltp_tx,oltp_errors,oltp_tps,oltp_p50_ms,oltp_p99_ms,oltp_p999_ms,oltp_max_ms" ] ||
	fail "results.csv header"
[ "$(wc -l <"$W/out/results.csv")" = 21 ] || fail "results.csv: not 20 samples"
grep -q '^tmpfs/dbaware iosched.nr_requests=32,tmpfs,dbaware,iosched.nr_requests=32,2,' "$W/out/results.csv" ||
	fail "results.csv row"
for svg in import latency; do
	python3 -c 'import sys, xml.dom.minidom as x; assert x.parse(sys.argv[1]).documentElement.tagName == "svg"' \
		"$W/out/$svg.svg" || fail "$svg.svg is not an SVG"
	grep -q "<svg [^>]*id=\"$svg\"" "$W/out/index.html" || fail "index.html lacks the chart of $svg.svg"
done
grep -q 'dir/dbaware iosched.nr_requests=32' "$W/out/import.svg" || fail "import.svg lacks the cell names"
grep -q '<pre>pgload compare: 2 runs per cell' "$W/out/index.html" || fail "index.html lacks the table"
grep -q '^Ratio: import time relative to the baseline.s; below 1 is faster$' "$W/stdout" || fail "the ratio's direction is not said"
echo "ok: tiny matrix: table, JSON, CSV, SVG, HTML; nothing left"

# ---- bad arguments: clear errors, nothing created ---------------------------
before=$(ls -d "$TMPDIR"/pgload-compare.* 2>/dev/null | wc -l)
bad() { # bad MESSAGE ARGS... -- pgload compare ARGS fails saying MESSAGE
	local msg=$1
	shift
	"$PGLOAD" compare --gen 0.01 --out "$W/bad" "$@" >/dev/null 2>"$W/err" && fail "accepted: $*"
	grep -qF -- "$msg" "$W/err" || { cat "$W/err"; fail "message for $*: want \"$msg\""; }
	[ -e "$W/bad" ] && fail "--out created for $*"
	return 0
}
bad 'unknown back end "zfs" (ext2, ext3, ext4, xfs, tmpfs, dir:PATH, a modelled disk: hdd:FS, ssd:FS, a capped cloud volume: gp3:FS, gp2:FS, gp2:SIZE:FS, io2:FS, cloud:FS, or a device: dev:DEVICE:FS)' \
	--backends tmpfs,zfs --profiles native
bad 'back end "dir:/nonexistent": ' --backends dir:/nonexistent --profiles native
mkdir -p "$W/private/d" && chmod 700 "$W/private" # root's only: the server runs as postgres
bad "back end \"dir:$W/private/d\": the postgres user, which runs the server, cannot reach it (Permission denied)" \
	--backends "dir:$W/private/d" --profiles native
[ -z "$(ls -A "$W/private/d")" ] || fail "a refused dir: back end was written to"
bad 'profile "cfq" refused by' --backends tmpfs --profiles native,cfq
bad 'profile "cfq": no such profile' --backends tmpfs --profiles cfq
bad '--set "nr_requests": NAME=V1,V2,... expected' --backends tmpfs --profiles dbaware --set nr_requests
bad '--set "iosched.nr_requests=1,,2": empty value' --backends tmpfs --profiles dbaware --set iosched.nr_requests=1,,2
bad 'iosched.nr_requests=0' --backends tmpfs --profiles dbaware --set iosched.nr_requests=0,128
bad '--baseline "xfs/native": no such cell' --backends tmpfs --profiles native --baseline xfs/native
bad '--pg-set "max_wal_sise=1GB": the server (' --backends tmpfs --profiles native --pg-set max_wal_sise=1GB
bad '--pg-set "log_line_prefix=%m": pgload sets it' --backends tmpfs --profiles native --pg-set log_line_prefix=%m
bad '--pg-set "max_wal_size": NAME=VALUE expected' --backends tmpfs --profiles native --pg-set max_wal_size
bad 'invalid value for parameter "max_wal_size": "abc"' --backends tmpfs --profiles native --pg-set max_wal_size=abc
bad '--load "cpu_load": none, io_load or read_load expected' --backends tmpfs --profiles native --load cpu_load
bad 'give one of --workload DIR and --gen SCALE' --backends tmpfs --profiles native --workload "$W"
chmod 777 "$W"
as_user nobody "$PGLOAD" compare --gen 0.01 --backends tmpfs,xfs --profiles native --out "$W/bad" \
	>/dev/null 2>"$W/err" && fail "loop back end accepted without root"
grep -qF 'back end "xfs" needs root (it makes a file system image and loop-mounts it)' "$W/err" ||
	{ cat "$W/err"; fail "not-root message"; }
[ -e "$W/bad" ] && fail "--out created without root"
chmod 755 "$W"
[ "$(ls -d "$TMPDIR"/pgload-compare.* 2>/dev/null | wc -l)" = "$before" ] || fail "a work directory was created"
[ -z "$(ls -A "$W/d")" ] || fail "a bad run touched the dir: back end"
echo "ok: bad arguments refused, nothing created"

# ---- SIGINT, then SIGKILL and the next run's clean-up ------------------------
# wait_cells ERRFILE N -- until the run has started N cells (servers up)
wait_cells() {
	local i
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c '^pgload: round 1/' "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	cat "$1"
	fail "the run did not get going"
}
"$PGLOAD" compare --gen 0.01 --backends ext2,"dir:$W/d" --profiles native,dbaware --runs 50 \
	--out "$W/int" >/dev/null 2>"$W/err.int" &
pid=$!
wait_cells "$W/err.int" 2
kill -INT $pid
wait $pid
st=$?
[ $st = 2 ] || { cat "$W/err.int"; fail "interrupted compare: exit status $st, not 2"; }
grep -q 'interrupted; everything it created is removed' "$W/err.int" || fail "no word on the interrupt"
assert_clean "$(compare_work_dir "$W/err.int")"
echo "ok: SIGINT: exit 2, nothing left"

"$PGLOAD" compare --gen 0.01 --backends ext3,"dir:$W/d" --profiles native,dbaware --runs 50 \
	--out "$W/kill" >/dev/null 2>"$W/err.kill" &
pid=$!
wait_cells "$W/err.kill" 2
kill -KILL $pid
wait $pid 2>/dev/null
killed=$(compare_work_dir "$W/err.kill")
[ -d "$killed" ] || fail "SIGKILL left nothing to clean (test broken)"
grep -q " $killed/" /proc/self/mountinfo || fail "no mount left by SIGKILL (test broken)"
[ -n "$(ls -A "$W/d")" ] || fail "no directory left in the dir: back end by SIGKILL (test broken)"

# ---- the loop back ends (and io_load); cleans the killed run's leftovers ----
"$PGLOAD" compare --gen 0.005 --backends ext2,ext3,xfs --profiles native,dbaware --runs 1 \
	--load io_load --size 512M --out "$W/loop" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare on ext2, ext3, xfs failed"; }
grep -q "cleaning up after an earlier interrupted run (pid $pid): $killed" "$W/stderr" ||
	{ cat "$W/stderr"; fail "the killed run's leftovers were not reported"; }
wd=$(compare_work_dir "$W/stderr")
assert_clean "$killed"
assert_clean "$wd"
for cell in ext2/native ext2/dbaware ext3/native ext3/dbaware xfs/native xfs/dbaware; do
	grep -q "^$cell  *\[1\] " "$W/stdout" || { cat "$W/stdout"; fail "no row for $cell"; }
done
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert all(c["samples"][0]["load_mb"] > 0 for c in d["cells"])' \
	"$W/loop/results.json" || fail "io_load did no work"
echo "ok: ext2, ext3, xfs with io_load; leftovers of a killed run removed"
