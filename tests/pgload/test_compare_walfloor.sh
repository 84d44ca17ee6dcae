#!/bin/bash
# test_compare_walfloor.sh -- `pgload compare --wal-floor`: a cell per back
# end with only pg_wal on it, the floor of the commits during the import.
#   - on tmpfs, native and dbaware with --oltp 2, 1 run: a third cell
#     "tmpfs/walonly", last, native (no pgiofs), its data directory off the
#     back end and its pg_wal on it, where the native cell has both on it
#     (results.json's on_backend, from the running servers);
#   - every other cell's vs_wal_floor is its commit figures over the
#     floor's, the table's "Commit latency against the WAL-alone floor"
#     prints them, the CSV names the profile "walonly";
#   - no verdict names the floor: neither a best nor a next of results.json
#     nor a line of "Best of each figure", nor the cells against the
#     baseline;
#   - refused, with the reason and nothing left behind: --wal-floor without
#     --oltp, the floor as --baseline, a dir: back end on the test bed's own
#     file system (no data directory could be kept off it), each before
#     anything is made.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
W=$(mktempdir)

"$PGLOAD" compare --gen 0.01 --backends tmpfs --profiles native,dbaware --oltp 2 --wal-floor \
	--runs 1 --stream-mb 0 --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare with --wal-floor failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"

python3 - "$W/out/results.json" <<'PY' || { cat "$W/stdout"; fail "results.json's WAL-alone floor"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["oltp"]["wal_floor"] is True, d["settings"]["oltp"]
cells = d["cells"]
assert [c["label"] for c in cells] == ["tmpfs/native", "tmpfs/dbaware", "tmpfs/walonly"], \
    [c["label"] for c in cells]
nat, pg, wf = cells
assert wf["wal_floor"] and wf["profile"] == "walonly" and not wf["pgiofs"], wf
assert not nat["wal_floor"] and not pg["wal_floor"]
# where the clusters were: the floor's pg_wal alone on the back end
assert wf["on_backend"] == {"data": False, "pg_wal": True}, wf["on_backend"]
assert nat["on_backend"] == {"data": True, "pg_wal": True}, nat["on_backend"]
assert pg["on_backend"] is None, pg["on_backend"]
assert wf["oltp"]["tx"] > 0 and wf["vs_wal_floor"] is None
for c in (nat, pg):
    v, o, f = c["vs_wal_floor"], c["oltp"], wf["oltp"]
    assert v["cell"] == 3, v
    for k, j in (("p50", "p50_ms"), ("p99", "p99_ms"), ("p999", "p999_ms"), ("max", "max_ms"),
                 ("tps", "tps")):
        assert abs(v[k] - o[j] / f[j]) <= 1e-3 * v[k] + 1e-6, (c["label"], k, v[k], o[j], f[j])
for b in d["best"]:
    assert b["cell"] != "tmpfs/walonly" and b["next"] != "tmpfs/walonly", b
assert wf["vs_baseline"] is not None  # it has an import time like any cell
PY

# the table: the floor's section, one row per other cell, with its ratios
sed -n '/^Commit latency against the WAL-alone floor/,/^$/p' "$W/stdout" >"$W/floor.txt"
[ "$(grep -c '^tmpfs/' "$W/floor.txt")" = 2 ] || { cat "$W/stdout"; fail "the WAL-alone floor table"; }
grep -q '^tmpfs/native  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  *[0-9.]*  [0-9.]* / ' "$W/floor.txt" ||
	{ cat "$W/floor.txt"; fail "the native cell's row against the floor"; }
sed -n '/^Best of each figure/,/^$/p' "$W/stdout" | grep -q 'walonly' &&
	{ cat "$W/stdout"; fail "a verdict names the floor"; }
grep -q '^only pg_wal' "$W/stdout" && fail "the floor against the baseline"
grep -q 'Compared 3 cells (back ends tmpfs; profiles native, dbaware; and the WAL-alone floor of each back end)' "$W/out/index.html" ||
	fail "the verdicts do not say the floor was measured"
grep -q '^tmpfs/walonly,tmpfs,walonly,' "$W/out/results.csv" ||
	{ head -3 "$W/out/results.csv"; fail "the CSV's profile of the floor"; }

# refused
bad() { # bad MESSAGE ARGS...
	local msg=$1
	shift
	"$PGLOAD" compare --gen 0.01 --stream-mb 0 --runs 1 --out "$W/bad" "$@" >/dev/null 2>"$W/err" &&
		fail "accepted: $*"
	grep -qF -- "$msg" "$W/err" || { cat "$W/err"; fail "$* did not say: $msg"; }
	[ -e "$W/bad" ] && fail "$*: a report was left"
	[ -z "$(compare_work_dir "$W/err")" ] || fail "$*: a test bed was made"
}
bad "--wal-floor needs --oltp CLIENTS" --backends tmpfs --profiles native --wal-floor
bad "--baseline \"tmpfs/walonly\": that is --wal-floor's cell" --backends tmpfs --profiles native \
	--oltp 1 --wal-floor --baseline tmpfs/walonly
mkdir "$W/d"
bad "--wal-floor: back end dir (\"$W/d\") is on the file system of the test bed" \
	--backends "dir:$W/d" --profiles native --oltp 1 --wal-floor
echo "ok: the WAL-alone floor cell, its ratios, no verdict naming it, refusals"
