#!/bin/bash
# test_compare_timeline.sh -- what `pgload compare --oltp --floor` says of
# the time of an import, on a workload whose data phase asks for a
# checkpoint in its middle (CHECKPOINT between two INSERTs of ~35 MB of WAL
# each), on tmpfs, native and dbaware with no segment made ahead and with
# 4 (files.wal_segments_ahead; none made while WAL is quiet, so that those
# the import needs are made during it), 1 run:
#   - per run, the commits of each second (results.json): as many seconds as
#     the import lasted, the commits adding up to the run's, a p99 and a max
#     each no slower than the run's;
#   - the checkpoint asked for, from the server log: kind "immediate force
#     wait", inside the import, after its start and before the post phase;
#     the WAL segments the run created (pg_wal watched: through the
#     pgiofs mount too), each ending after it started; the segments pgiofs
#     made ahead meanwhile: none natively (null), none where it makes none,
#     some where it makes 4 ahead;
#   - the table's "Commit latency over the import" row per cell naming the
#     run with the slowest commit, and its checkpoint; the timeline chart in
#     index.html and timeline.svg, a panel per cell with its checkpoint band;
#   - the floor: the same clients without the import, per run and per cell,
#     and the table's distance of each cell from it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
W=$(mktempdir)
mkdir "$W/wl"
echo 'CREATE TABLE t (id int, pad text);' >"$W/wl/schema.sql"
cat >"$W/wl/data.sql" <<'EOF'
INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(1, 120000) g;
CHECKPOINT;
INSERT INTO t SELECT g, repeat('y', 200) FROM generate_series(1, 120000) g;
EOF
echo 'CREATE INDEX ON t (id);' >"$W/wl/post.sql"

"$PGLOAD" compare --workload "$W/wl" --backends tmpfs --profiles native,dbaware --oltp 2 --floor \
	--set files.wal_segments_ahead=0,4 --set files.wal_segments_reserve=0 \
	--runs 1 --stream-mb 0 --out "$W/out" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare with --floor failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"

python3 - "$W/out/results.json" <<'PY' || { cat "$W/stdout"; fail "results.json's timelines"; }
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["settings"]["oltp"] == {"clients": 2, "scale": 2, "floor": True, "wal_floor": False}, d["settings"]["oltp"]
assert len(d["cells"]) == 3
ahead = {}
for c in d["cells"]:
    assert c["floor"]["tx"] > 0 and c["floor"]["p99_ms"] > 0, c["floor"]
    created = 0
    for s in c["samples"]:
        t, o = s["timeline"], s["oltp"]
        # the window of the commits: the phases and the moments between them
        assert 0 <= t["seconds"] - s["import_s"] < 0.2, (t["seconds"], s["import_s"])
        per = t["per_second"]
        assert len(per) == math.ceil(t["seconds"] - 1e-9), (len(per), t["seconds"])
        assert sum(x[0] for x in per) == o["tx"], (sum(x[0] for x in per), o["tx"])
        assert max(x[2] for x in per) <= o["max_ms"] + 1e-3 and all(x[1] <= x[2] for x in per)
        assert 0 < t["post_start_s"] < t["seconds"], t["post_start_s"]
        # the CHECKPOINT of data.sql, in the data phase
        asked = [k for k in t["checkpoints"] if k["kind"].startswith("immediate")]
        assert len(asked) == 1, t["checkpoints"]
        k = asked[0]
        assert 0 <= k["start_s"] <= k["end_s"] <= t["post_start_s"], k
        assert k["write_s"] >= 0 and k["sync_s"] >= 0, k
        for g in t["wal_segments_created"]:
            assert g["end_s"] is None or g["start_s"] <= g["end_s"], g
        created += len(t["wal_segments_created"])
        m = t["wal_segments_made_ahead"]
        if c["profile"] == "native":
            assert m is None, (c["label"], m)
        else:
            assert isinstance(m, int) and m >= 0, (c["label"], m)
            ahead[c["label"]] = ahead.get(c["label"], 0) + m
        assert s["floor"]["tx"] > 0, s["floor"]
    # a fresh cluster has 1 segment: the run's ~60 MB of WAL make more, by
    # PostgreSQL where pgiofs makes none ahead
    if "ahead=4" not in c["label"]:
        assert created > 0, (c["label"], [s["timeline"] for s in c["samples"]])
assert len(ahead) == 2, ahead
for label, m in ahead.items():
    assert (m > 0) == ("ahead=4" in label), ahead
PY

for cell in tmpfs/native "tmpfs/dbaware files.wal_segments_ahead=0 files.wal_segments_reserve=0" \
	"tmpfs/dbaware files.wal_segments_ahead=4 files.wal_segments_reserve=0"; do
	sed -n '/^Commit latency over the import/,/^$/p' "$W/stdout" | grep -qE "^$cell +1 " ||
		{ cat "$W/stdout"; fail "no timeline row for $cell"; }
	sed -n '/^Commit latency against the floor/,/^$/p' "$W/stdout" | grep -qE "^$cell +[0-9.]+ " ||
		{ cat "$W/stdout"; fail "no floor row for $cell"; }
done
sed -n '/^Commit latency over the import/,/^$/p' "$W/stdout" | grep -qE 'WAL segments: .*, [1-9][0-9]* made ahead by pgiofs$' ||
	{ cat "$W/stdout"; fail "the table does not count the segments pgiofs made ahead"; }
[ "$(sed -n '/^Commit latency over the import/,/^$/p' "$W/stdout" | grep -c '   checkpoints: immediate force wait [0-9.]*-[0-9.]* s (write ')" = 3 ] ||
	{ cat "$W/stdout"; fail "the table does not name each cell's checkpoint"; }
for f in "$W/out/timeline.svg" "$W/out/index.html"; do
	[ "$(grep -o 'class="panel"' "$f" | wc -l)" = 3 ] || fail "not a panel per cell in $f"
	grep -q 'class="checkpoint"' "$f" || fail "no checkpoint band in $f"
	grep -q 'class="post"' "$f" || fail "no start of the post phase in $f"
done
echo "ok: commits per second, the checkpoint and WAL segments where they happened, the floor"
