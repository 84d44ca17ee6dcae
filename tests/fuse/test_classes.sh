#!/bin/bash
# test_classes.sh -- pgiofs tells the I/O of a live PostgreSQL cluster
# apart: after a table with an index is loaded and checkpointed, `pgiofs
# stat` shows writes in the wal, heap and index classes (relation files are
# named alike; index files are recognised by their pages' content) and the
# classes add up to the total.
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
assert d["wal"] > 10 << 20, "WAL writes missing"
assert d["heap"] > 10 << 20, "heap writes missing"
assert d["index"] > 4 << 20, "index writes not recognised (counted as heap?)"
total = a["total"]["write_bytes"] - b["total"]["write_bytes"]
assert total == sum(d.values()), "classes do not add up to the total"
PY
echo ok
