#!/bin/bash
# test_stats_json.sh -- the statistics JSON (schema pgiofs.stats/1,
# docs/stats.md) parses with python3's json module and holds the values of
# helper_stats's known load: every class with every documented field, the
# caller's extra members, exact counters, latencies in ms within the
# histogram's resolution, and an interval sample that counts only its own
# requests while the cumulative one keeps growing.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

H=$TESTBUILD/iosched/helper_stats
[ -x "$H" ] || fail "$H is missing: run make"
command -v python3 >/dev/null || skip "python3 is not installed"

"$H" json >"$TEST_TMP/one.json" || fail "helper_stats json failed"
"$H" interval >"$TEST_TMP/two.json" || fail "helper_stats interval failed"

python3 - "$TEST_TMP/one.json" "$TEST_TMP/two.json" <<'PY' || fail "JSON check failed"
import json, sys

CLASSES = ["wal", "xact", "heap", "index", "fsm", "vm", "temp", "meta", "other"]
COUNTERS = ["read_ops", "read_bytes", "write_ops", "write_bytes", "sync_ops",
            "errors", "merges", "ra_hit_bytes", "ra_wasted_bytes"]
LATENCY = ["count", "avg", "p50", "p99", "p999", "max", "queue_avg",
           "service_avg", "over_2s_pct", "over_10s_pct"]
bad = []

def check(cond, what):
    if not cond:
        bad.append(what)

def near(got, want):  # histogram resolution: 1/16
    return abs(got - want) <= want / 16.0

def shape(doc, where):
    check(doc.get("schema") == "pgiofs.stats/1", where + ": schema")
    check(isinstance(doc.get("cumulative"), bool), where + ": cumulative")
    check(isinstance(doc.get("interval_s"), (int, float)), where + ": interval_s")
    check(sorted(doc["classes"]) == sorted(CLASSES), where + ": class names")
    for name, c in list(doc["classes"].items()) + [("total", doc["total"])]:
        for k in COUNTERS:
            check(isinstance(c.get(k), int) and c[k] >= 0, "%s: %s.%s" % (where, name, k))
        for k in LATENCY:
            v = c["latency_ms"].get(k)
            check(isinstance(v, (int, float)) and v >= 0,
                  "%s: %s.latency_ms.%s" % (where, name, k))

one = json.load(open(sys.argv[1]))
shape(one, "json")
check(one["mount"] == '/srv/pg "q"' and one["pid"] == 42, "extra fields")
check(one["cumulative"] is True, "cumulative flag")
c = one["classes"]
check(c["wal"]["write_ops"] == 100 and c["wal"]["write_bytes"] == 819200, "wal writes")
check(c["wal"]["sync_ops"] == 100, "wal syncs")
wl = c["wal"]["latency_ms"]
check(wl["count"] == 200 and abs(wl["avg"] - 1.5) < 1e-6, "wal avg")
check(near(wl["p50"], 1.0) and near(wl["p99"], 2.0) and wl["max"] == 2.0, "wal percentiles")
check(abs(wl["queue_avg"] - 0.375) < 1e-6 and abs(wl["service_avg"] - 1.125) < 1e-6,
      "wal queue/service")
h = c["heap"]
check(h["read_ops"] == 1000 and h["read_bytes"] == 8192000, "heap reads")
check(h["ra_hit_bytes"] == 131072 and h["ra_wasted_bytes"] == 16384, "heap readahead")
hl = h["latency_ms"]
check(near(hl["p50"], 0.5) and near(hl["p99"], 0.99) and near(hl["p999"], 0.999), "heap pct")
check(hl["max"] == 1.0 and abs(hl["avg"] - 0.5005) < 1e-6, "heap avg/max")
i = c["index"]
check(i["read_ops"] == 1 and i["read_bytes"] == 0 and i["errors"] == 1, "index error")
check(i["merges"] == 3, "index merges")
check(i["latency_ms"]["over_2s_pct"] == 100 and i["latency_ms"]["over_10s_pct"] == 0, "index >2s")
t = c["temp"]["latency_ms"]
check(t["over_2s_pct"] == 100 and t["over_10s_pct"] == 100 and t["max"] == 12000, "temp >10s")
tot = one["total"]
check(tot["read_ops"] == 1001 and tot["write_ops"] == 102 and tot["sync_ops"] == 100, "total ops")
check(tot["latency_ms"]["count"] == 1203 and tot["latency_ms"]["max"] == 12000, "total latency")
check(c["fsm"]["read_ops"] == 0 and c["fsm"]["latency_ms"]["count"] == 0, "idle class")

lines = open(sys.argv[2]).read().splitlines()
check(len(lines) == 2, "interval: two lines")
first, second = json.loads(lines[0]), json.loads(lines[1])
shape(first, "interval[0]")
shape(second, "interval[1]")
check(first["cumulative"] is True and second["cumulative"] is False, "interval flags")
check(second["classes"]["wal"]["write_ops"] == 100, "interval counts only its own load")
check(second["total"]["latency_ms"]["count"] == 1203, "interval latency count")
check(second["classes"]["heap"]["latency_ms"]["max"] <= 1.0, "interval max")

if bad:
    print("bad:", "; ".join(bad))
    sys.exit(1)
print("JSON ok: %d classes, %d fields each" % (len(CLASSES), len(COUNTERS) + len(LATENCY)))
PY

"$H" table >"$TEST_TMP/table.txt" || fail "helper_stats table failed"
cat "$TEST_TMP/table.txt"
for row in class wal heap index temp total; do
	grep -q "^$row " "$TEST_TMP/table.txt" || fail "table has no $row row"
done
grep -q "^fsm " "$TEST_TMP/table.txt" && fail "table shows an idle class"
grep -qx "readahead (MB): heap hit 0.13 wasted 0.02; total hit 0.13 wasted 0.02" "$TEST_TMP/table.txt" ||
	fail "table has no readahead line for heap"
echo "test_stats_json: ok"
