#!/bin/bash
# test_classes.sh -- pgiofs tells the I/O of a live PostgreSQL cluster
# apart: after a table with an index is loaded and checkpointed, `pgiofs
# stat` shows writes in the heap and index classes and the WAL's (WAL in
# passthrough: its opens and syncs, its bytes marked not seen) (relation files are
# named alike; index files are recognised by their pages' content) and the
# classes add up to the total; `pgiofs stat --relations --dsn` names the
# table and its index (schema.relation, relkind) with byte counts
# plausible against their size, the toast table and the shared catalogs
# (mapped relations) included.
source "$(dirname "$0")/../lib.sh"
need_root
T=$(mktempdir)
mkdir -p "$T/backing" "$T/mnt" "$T/run"
chown postgres "$T/run"
pgiofs_mount "$T/backing" "$T/mnt" -o allow_other
mkdir "$T/mnt/data" && chown postgres "$T/mnt/data"
PORT=$((20000 + RANDOM % 20000))
as_user postgres "$PGBIN/initdb" -D "$T/mnt/data" >"$T/run/initdb.log" 2>&1 || fail "initdb: $(tail -3 "$T/run/initdb.log")"
as_user postgres "$PGBIN/pg_ctl" -D "$T/mnt/data" -l "$T/run/log" -w \
	-o "-k $T/run -p $PORT -c listen_addresses=''" start >/dev/null || fail "server did not start: $(tail -5 "$T/run/log")"
on_exit "as_user postgres $PGBIN/pg_ctl -D $T/mnt/data -m immediate -w stop"
psql_() { as_user postgres "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$T/run" -p "$PORT" -d postgres "$@"; }
before=$("$BIN/pgiofs" stat "$T/mnt" --json) || fail "pgiofs stat failed"
psql_ -c "CREATE TABLE t (id int PRIMARY KEY, v text);
          CREATE INDEX t_v ON t (v);
          INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 200000) g;
          CHECKPOINT;" || fail "load failed"
after=$("$BIN/pgiofs" stat "$T/mnt" --json) || fail "pgiofs stat failed"
python3 - "$before" "$after" <<'PY' || fail "classes"
import json, sys
b, a = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def w(doc, c):
    return doc["classes"][c]["write_bytes"]
d = {c: w(a, c) - w(b, c) for c in a["classes"]}
print("write bytes per class:", {c: v for c, v in d.items() if v})
# WAL in passthrough (the default: a WAL mount over pg_wal) is not seen
# byte by byte; its opens and fsyncs are, in the wal class
wal = a["classes"]["wal"]
if wal["bytes_seen"] == "all":
    assert d["wal"] > 10 << 20, "WAL writes missing"
else:
    assert wal["passthrough_opens"] > 0 and wal["sync_ops"] > b["classes"]["wal"]["sync_ops"], \
        "WAL opens and syncs missing: %s" % wal
assert d["heap"] > 10 << 20, "heap writes missing"
assert d["index"] > 4 << 20, "index writes not recognised (counted as heap?)"
total = a["total"]["write_bytes"] - b["total"]["write_bytes"]
assert total == sum(d.values()), "classes do not add up to the total"
PY

# --- per-relation statistics with names ----------------------------------------
sizes=$(psql_ -At -c "SELECT pg_relation_size('t'), pg_relation_size('t_pkey'), pg_relation_size('t_v')") ||
	fail "sizes"
"$BIN/pgiofs" stat "$T/mnt" --relations --top 0 --json \
	--dsn "host=$T/run port=$PORT user=postgres dbname=postgres" >"$T/rel.json" 2>"$T/rel.err" ||
	fail "pgiofs stat --relations --dsn failed: $(cat "$T/rel.err")"
[ ! -s "$T/rel.err" ] || fail "names incomplete: $(cat "$T/rel.err")"
python3 - "$T/rel.json" "$sizes" <<'PY' || fail "relation names"
import json, sys
d = json.load(open(sys.argv[1]))
heap, pkey, tv = (int(x) for x in sys.argv[2].split("|"))
rels = {r["name"]: r for r in d["relations"] if r["name"]}
print("named relations: %d of %d; top: %s" % (len(rels), len(d["relations"]),
      [(r["name"], r["kind"], r["write_bytes"]) for r in d["relations"][:4]]))
t, pk, v = rels["public.t"], rels["public.t_pkey"], rels["public.t_v"]
assert t["relkind"] == "r" and t["kind"] == "table", t
assert pk["relkind"] == "i" and pk["kind"] == "index" and v["relkind"] == "i", pk
# checkpointed: every page reached the file at least once, and not absurdly often
assert heap <= t["forks"]["main"]["write_bytes"] <= 4 * heap, (heap, t)
assert pkey <= pk["write_bytes"] <= 4 * pkey and tv <= v["write_bytes"] <= 4 * tv, (pk, v)
assert {r["name"] for r in d["relations"][:3]} == {"public.t", "public.t_pkey", "public.t_v"}
assert "relation_names_error" not in d
# catalogs: mapped ones (relfilenode 0 in pg_class), shared ones in global/
cat = [r for r in d["relations"] if r["name"] and r["name"].startswith("pg_catalog.")]
assert any(r["name"] == "pg_catalog.pg_class" for r in cat), cat
assert any(r["db"] == 0 and r["spc"] == 1664 for r in cat), cat
PY
echo ok
