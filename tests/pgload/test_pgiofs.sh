#!/bin/bash
# test_pgiofs.sh -- `pgload run --on-pgiofs`: the embedded cluster runs on a
# pgiofs mount that pgload creates and removes; the report says so.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
[ -x "$BIN/pgiofs" ] || skip "pgiofs not built"
[ -c /dev/fuse ] || skip "no /dev/fuse"
need_root
W=$(mktempdir)
"$PGLOAD" gen -q --scale 0.01 --out "$W/g" || fail "gen"
"$PGLOAD" run -q --on-pgiofs --jobs 2 -s "$W/g/schema.sql" -d "$W/g/data.sql" -p "$W/g/post.sql" \
	--json "$W/r.json" >"$W/out" 2>"$W/err" || { cat "$W/err"; fail "run --on-pgiofs"; }
grep -q '"fstype": "fuse"' "$W/r.json" || fail "data directory not on a FUSE mount"
grep -q '"pgiofs_profile": "default"' "$W/r.json" || fail "profile not reported"
grep -q '^data    real ' "$W/out" || fail "no summary"
grep -q " /tmp/pgload\.[^ ]*/mnt fuse" /proc/mounts && fail "pgiofs mount left behind"
assert_clean
echo "ok: --on-pgiofs"

"$PGLOAD" run -q --on-pgiofs --profile /nonexistent.conf -d "$W/g/schema.sql" 2>"$W/err" && fail "bad profile accepted"
grep -q -- '--profile "/nonexistent.conf": no such file' "$W/err" || { cat "$W/err"; fail "bad profile message"; }
assert_clean
echo "ok: bad profile"
