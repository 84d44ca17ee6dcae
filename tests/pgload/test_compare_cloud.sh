#!/bin/bash
# test_compare_cloud.sh -- `pgload compare` on the capped cloud volumes
# pgdisk models:
#   - gp3:ext4 and a bare gp2:ext4 (a 256 MiB image: a 1 GiB volume, the
#     100 IOPS baseline) at a small scale, one run each: the report's caps
#     table gives each cell its model's caps (gp3: 3000 IOPS, 125 MiB/s;
#     gp2: 3000, 128) against what its import used, the gp2 cell its credit
#     line (5.4 million: they do not run out here); results.json's figures
#     agree with pgdisk's own counters (no import used more operations than
#     pgdisk counted since it started); nothing is left behind;
#   - gp2:ext4 with 50 credits earned back at 100 IOPS: the credit line
#     says they ran out before the imports (mkfs), and when in the import
#     if they did there, which results.json and pgdisk's counters agree on,
#     and the chart of the caps over the import (caps.svg) draws what
#     results.json gives second by second;
#   - bad presets and settings are refused before anything is set up,
#     naming the input: an unknown model, a size for gp3, a gp2 size that
#     is not a whole number of GiB in range, a file system pgload does not
#     make, settings pgdisk refuses together (a p99 below the median).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
need_root
[ -x "$BIN/pgdisk" ] || skip "pgdisk not built"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
W=$(mktempdir)

# ---- gp3:ext4 and gp2:ext4 ----------------------------------------------------
"$PGLOAD" compare --gen 0.005 --backends gp3:ext4,gp2:ext4 --profiles native --runs 1 \
	--size 256M --stream-mb 0 --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare on gp3:ext4 and gp2:ext4 failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
# caps_row LABEL -- the row of LABEL in the table of capped volumes
caps_row() { sed -n '/^Capped volumes/,/^$/p' "$W/stdout" | grep -E -- "^$1 "; }
grep -qE '^Backend/profile +model +IOPS cap +mean +peak +%cap +MiB/s +mean +peak +%cap +held iops/MiB/cr$' \
	"$W/stdout" || { cat "$W/stdout"; fail "no table of capped volumes"; }
# model, IOPS cap, mean and peak used (some), %cap, MiB/s cap, mean, peak, %cap, held
NUM='[0-9]+' USED='[0-9]*[1-9][0-9]*' MIB='[0-9]+\.[0-9]'
caps_row 'gp3:ext4/native' | grep -qE "^gp3:ext4/native +gp3 +3000 +$USED +$USED +$NUM +125\.0 +$MIB +$MIB +$NUM +$NUM/$NUM/0$" ||
	{ cat "$W/stdout"; fail "the caps row of gp3:ext4"; }
caps_row 'gp2:ext4/native' | grep -qE "^gp2:ext4/native +gp2 +3000 +$USED +$USED +$NUM +128\.0 +$MIB +$MIB +$NUM +$NUM/$NUM/$NUM$" ||
	{ cat "$W/stdout"; fail "the caps row of gp2:ext4"; }
grep -qE '^gp2:ext4/native +baseline 100 IOPS, burst 3000; credits [0-9]+ of 5400000 at the first import, lowest [0-9]+ \(run 1\), [0-9]+ at the last.s end; never ran out$' \
	"$W/stdout" || { cat "$W/stdout"; fail "the credit line of gp2:ext4"; }
grep -q '^gp3:ext4/native  *baseline' "$W/stdout" && fail "a credit line for gp3, which has no credits"
python3 - "$W/out/results.json" <<'PY' || fail "results.json: the caps and their use"
import json, sys
d = json.load(open(sys.argv[1]))
cells = {c["label"]: c for c in d["cells"]}
gp3, gp2 = cells["gp3:ext4/native"], cells["gp2:ext4/native"]
for c, iops, mib in ((gp3, 3000, 125), (gp2, 3000, 128)):
    k, s = c["caps"], c["samples"][0]["caps"]
    assert k["iops_cap"] == iops and k["mib_s_cap"] == mib, k
    assert 0 < s["ops"] <= c["disk"]["cloud_ops"] and 0 < s["bytes"] <= c["disk"]["cloud_bytes"], (s, c["disk"])
    assert 0 < s["seconds"] and k["iops_mean"] > 0 and k["mib_s_mean"] > 0, k
    assert abs(k["iops_mean"] - s["ops"] / s["seconds"]) < 1e-6 * k["iops_mean"] + 1e-9, (k, s)
    assert k["iops_peak"] > 0 and k["mib_s_peak"] > 0, k
assert gp3["caps"]["credits"] is None and gp3["caps"]["held_credits"] == 0
cr = gp2["caps"]["credits"]
assert gp2["caps"]["baseline_iops"] == 100 and gp2["caps"]["volume_gib"] == 1, gp2["caps"]
assert gp2["caps"]["credits_cap"] == 5.4e6 and cr["ran_out"] is None and cr["outs"] == 0, cr
assert 0 < cr["min"] <= cr["start"] <= 5.4e6, cr
assert cells.keys() == {"gp3:ext4/native", "gp2:ext4/native"}
for c in cells.values():
    assert c["queue"]["tunables"]["rotational"] == 0, c["queue"]   # a volume, not a head
PY
echo "ok: gp3:ext4 and gp2:ext4: the caps against what the imports used, gp2's credits; nothing left"
sed -n '/^Capped volumes/,/^$/p' "$W/stdout"

# ---- gp2 with a small credit bucket: the credits run out ------------------------
# 50 credits earned back at 100 IOPS: mkfs spends them at once, and the
# import's bursts (its writeback) spend them again
"$PGLOAD" compare --gen 0.2 --backends gp2:ext4 --profiles native --runs 1 --size 512M \
	--stream-mb 0 --disk-set cloud_credits=50 --disk-set cloud_baseline_iops=100 \
	--out "$W/credits" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare on gp2:ext4 with 50 credits failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
LABEL='gp2:ext4/native disk.cloud_credits=50 disk.cloud_baseline_iops=100'
grep -qE "^$LABEL +baseline 100 IOPS, burst 3000; credits -?[0-9]+ of 50 at the first import, lowest -?[0-9]+ \(run 1\), -?[0-9]+ at the last.s end; ran out before the imports \([0-9.]+ s after pgdisk started: mkfs, initdb\), (ran out [0-9.]+ s into run 1's import \([0-9]+ times? in the imports\)|not during the imports)$" \
	"$W/stdout" || { cat "$W/stdout"; fail "the credit line of gp2:ext4 with 50 credits"; }
python3 - "$W/credits/results.json" <<'PY' || fail "results.json: gp2's credits running out"
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
k, s, cr = c["caps"], c["samples"][0], c["caps"]["credits"]
assert k["credits_cap"] == 50 and k["baseline_iops"] == 100, k
assert cr["outs"] >= 1 and c["disk"]["credits_outs"] == cr["outs"], (cr, c["disk"]["credits_outs"])
assert 0 < cr["ran_out_before_s"] <= c["disk"]["uptime_ns"] / 1e9, cr
assert cr["outs_in_imports"] == s["caps"]["credits_outs"] <= cr["outs"], (cr, s["caps"])
if cr["ran_out"] is not None:   # the first run-out in the import: within it
    assert cr["ran_out"]["run"] == 1 and 0 <= cr["ran_out"]["at_s"] <= s["caps"]["seconds"], (cr, s["caps"])
    assert cr["ran_out"]["at_s"] == s["caps"]["credits_out_s"] and cr["outs_in_imports"] >= 1
else:
    assert cr["outs_in_imports"] == 0 and s["caps"]["credits_out_s"] is None
PY
# the chart over the import (caps.svg, in the page too): one panel, each
# series a point per second of what results.json gives second by second,
# whose sum is the import's operations; the baseline drawn, and the
# run-out marked where the credits ran out in the import
python3 - "$W/credits/results.json" "$W/credits/caps.svg" "$W/credits/index.html" <<'PY' ||
import json, re, sys
s = json.load(open(sys.argv[1]))["cells"][0]["samples"][0]["caps"]
svg, page = open(sys.argv[2]).read(), open(sys.argv[3]).read()
per = s["per_second"]
n = len(per["iops"])
assert n == -(-int(s["seconds"] * 1000) // 1000) and len(per["mib_s"]) == len(per["credits"]) == n, (n, s)
last = s["seconds"] - (n - 1)
ops = sum(per["iops"][:-1]) + per["iops"][-1] * last
assert abs(ops - s["ops"]) <= 0.02 * s["ops"] + 2, (ops, s["ops"])
lines = re.findall(r'<polyline [^>]*points="([^"]*)"', svg)
assert len(lines) == 3 and all(len(l.split()) == n for l in lines), (n, lines)
assert svg.count('class="panel"') == 1 and "baseline 100 IOPS" in svg
assert ("credits ran out" in svg) == (s["credits_out_s"] is not None), s["credits_out_s"]
assert 'id="caps"' in page
PY
	fail "caps.svg: the caps over the import"
echo "ok: gp2:ext4 with 50 credits: when they ran out, before and during the import; the chart"

sed -n '/^Credits/,/^$/p' "$W/stdout"

# ---- bad presets and settings: refused before anything is set up ---------------
compare_snapshot >"$W/before"
bad() { compare_refused "$W" "$1" --profiles native "${@:2}"; }
bad 'unknown back end "gp4:ext4" (' --backends gp4:ext4
bad 'back end "gp3:100G:ext4": only gp2 takes a size (gp2:SIZE:FS); the caps of gp3 do not follow' \
	--backends gp3:100G:ext4
bad 'back end "gp2:0:ext4": the size "0" of the gp2 volume must be a whole number of GiB from 1 to 65536' \
	--backends gp2:0:ext4
bad 'back end "gp2:1.5T:ext4": the size "1.5T" of the gp2 volume must be a whole number' --backends gp2:1.5T:ext4
bad 'back end "gp2:70000G:ext4": the size "70000G"' --backends gp2:70000G:ext4
bad 'back end "io2:zfs": no file system "zfs" on a modelled disk' --backends io2:zfs
bad 'the gp3 model with the --disk-set values refused by' --backends gp3:ext4 --disk-set cloud_latency_p99_us=100
bad '(back end "gp3:ext4", cloud_latency_p99_us=100): pgdisk: device.cloud_latency_p99_us (100 us) is below the median' \
	--backends gp3:ext4 --disk-set cloud_latency_p99_us=100
# one value of a sweep refused, the other taken: the cell of the bad one names it
bad '(back end "cloud:xfs", cloud_latency_p99_us=500): pgdisk: device.cloud_latency_p99_us (500 us) is below' \
	--backends cloud:xfs --disk-set cloud_latency_p99_us=5000,500
bad 'the gp2:100 model with the --disk-set values refused by' --backends gp2:100:ext4 --disk-set cloud_iops=-5
echo "ok: bad presets and settings refused, naming them, nothing set up"
