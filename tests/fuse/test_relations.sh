#!/bin/bash
# test_relations.sh -- per-relation statistics through a mount: O_DIRECT
# reads and writes of known sizes to files named like relation segments
# and forks (base/DB/NODE[.SEG][_fsm|_vm], global/NODE, an in-place
# tablespace pg_tblspc/SPC/PG_15_*/DB/NODE) show up in `pgiofs stat
# --relations` under (tablespace, database, relfilenode) with exact byte
# counts per fork, segments and forks of one relation in one entry; other
# files do not; --top cuts; interval samples count the interval only; a
# --dsn whose server is not there leaves the names out with a note and
# exit 0.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"

T=$(mktempdir)
mkdir "$T/b" "$T/m"
M=$T/m
printf '[iosched]\npolicy = direct\n' >"$T/conf"
pgiofs_mount "$T/b" "$M" --config "$T/conf"

TS=pg_tblspc/16500/PG_15_202209061
mkdir -p "$M/base/5" "$M/global" "$M/$TS/5"
# wr FILE BLOCKS -- BLOCKS O_DIRECT writes of 8 KiB; rd FILE BLOCKS
wr() { dd if=/dev/urandom of="$M/$1" bs=8192 count="$2" oflag=direct conv=fsync status=none || fail "dd to $1"; }
rd() { dd if="$M/$1" of=/dev/null bs=8192 count="$2" iflag=direct status=none || fail "dd from $1"; }
wr base/5/16384 10
wr base/5/16384.1 5
wr base/5/16384_fsm 3
wr base/5/16384_vm 1
wr base/5/16385 2
wr global/1262 1
wr "$TS/5/17000" 4
wr base/5/PG_VERSION 1       # not a relation
wr base/5/pg_filenode.map 1  # not a relation
wr base/5/t3_16390 1         # a temporary relation: not counted
rd base/5/16384 6
rd base/5/16384.1 5

"$BIN/pgiofs" stat "$M" --relations --top 0 --json >"$T/r.json" || fail "pgiofs stat --relations --json failed"
python3 - "$T/r.json" <<'PY' || fail "relation counters"
import json, sys
d = json.load(open(sys.argv[1]))
B = 8192
rels = {(r["spc"], r["db"], r["relfilenode"]): r for r in d["relations"]}
print("relations:", sorted(rels))
assert set(rels) == {(1663, 5, 16384), (1663, 5, 16385), (1664, 0, 1262), (16500, 5, 17000)}, rels
r = rels[(1663, 5, 16384)]
f = r["forks"]
assert f["main"] == {"read_bytes": 11 * B, "write_bytes": 15 * B}, f
assert f["fsm"] == {"read_bytes": 0, "write_bytes": 3 * B}, f
assert f["vm"] == {"read_bytes": 0, "write_bytes": 1 * B}, f
assert r["write_ops"] == 19 and r["read_ops"] == 11 and r["sync_ops"] >= 4, r
assert r["write_bytes"] == 19 * B and r["read_bytes"] == 11 * B, r
assert r["name"] is None and r["relkind"] is None and r["kind"] == "heap", r
assert rels[(1664, 0, 1262)]["write_bytes"] == B
assert rels[(16500, 5, 17000)]["write_bytes"] == 4 * B
# ordered by bytes, largest first
assert d["relations"][0]["relfilenode"] == 16384
assert d["relations_active"] == 4 and d["relations_untracked"] == 0, d
# the class counters saw the same requests
assert d["classes"]["fsm"]["write_bytes"] == 3 * B and d["classes"]["vm"]["write_bytes"] == B
PY

# --top 2 in the table
"$BIN/pgiofs" stat "$M" --relations --top 2 >"$T/r.txt" || fail "pgiofs stat --relations failed"
cat "$T/r.txt"
grep -q '^relation ' "$T/r.txt" || fail "no relation table"
grep -Eq '^\? +heap +1663 +5 +16384 +11 +0\.09 +19 +0\.16 ' "$T/r.txt" || fail "row of 16384 wrong"
grep -q '(top 2 of 4 relations with I/O)' "$T/r.txt" || fail "the cut is not reported"
[ "$(grep -c ' 1663 \| 1664 \| 16500 ' "$T/r.txt")" -eq 2 ] || fail "--top 2 printed other than 2 rows"

# an interval sample counts only the interval
( sleep 0.3; wr base/5/16385 3 ) &
"$BIN/pgiofs" stat "$M" --relations --json --interval 1 --count 1 >"$T/i.json" || fail "interval failed"
wait
python3 - "$T/i.json" <<'PY' || fail "interval relations"
import json, sys
d = json.load(open(sys.argv[1]))
rels = d["relations"]
assert d["cumulative"] is False and len(rels) == 1, rels
assert rels[0]["relfilenode"] == 16385 and rels[0]["write_bytes"] == 3 * 8192, rels
PY

# a server that is not there: names are left out, with a note; exit 0
out=$("$BIN/pgiofs" stat "$M" --relations --json --dsn "host=$T port=1 connect_timeout=2" 2>"$T/err") ||
	fail "an unreachable --dsn failed the command: $(cat "$T/err")"
grep -q 'note: relation names incomplete: cannot connect' "$T/err" || fail "no note: $(cat "$T/err")"
python3 -c 'import json, sys
d = json.loads(sys.argv[1])
assert "cannot connect" in d["relation_names_error"], d
assert all(r["name"] is None for r in d["relations"])' "$out" || fail "JSON with an unreachable dsn"
"$BIN/pgiofs" stat "$M" --relations --dsn "host=$T port=1" >"$T/t.txt" 2>/dev/null || fail "text with an unreachable dsn"
grep -q 'relation names incomplete' "$T/t.txt" || fail "the table does not say names are missing"

# usage
"$BIN/pgiofs" stat "$M" --top 3 2>"$T/err" && fail "--top without --relations accepted"
grep -q 'need --relations' "$T/err" || fail "wrong message: $(cat "$T/err")"
"$BIN/pgiofs" stat "$M" --relations --top x 2>/dev/null && fail "--top x accepted"
[ -z "$(ls -A "$M" | grep -v -e base -e global -e pg_tblspc)" ] || fail "something appeared in the mount"
echo ok
