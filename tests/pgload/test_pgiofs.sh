#!/bin/bash
# test_pgiofs.sh -- `pgload run --on-pgiofs`: the embedded cluster runs on a
# pgiofs mount that pgload creates and removes; the report says so and has
# the per-class I/O of each phase from `pgiofs stat` (summary, JSON, CSV);
# a data directory given with --pgdata on a pgiofs mount is found through
# mountinfo; a failing `pgiofs stat` is reported once and the load goes on.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pgiofs_root
"$BIN/pgiofs" --help 2>&1 | grep -q 'pgiofs stat' || skip "pgiofs has no stat command"
W=$(mktempdir)
"$PGLOAD" gen -q --scale 0.05 --out "$W/g" || fail "gen"
# The heap pages a load writes stay in shared buffers and the page cache
# until a checkpoint, which would come in a later phase or run; end the data
# phase with one so that they reach pgiofs within it.
{ cat "$W/g/data.sql"; echo "CHECKPOINT;"; } >"$W/data+ckpt.sql"

# json_io FILE PHASE CLASS FIELD -- a counter of the first run's PHASE.
json_io() {
	grep -m1 "^      \"$2\": " "$1" | sed -n "s/.*\"io\": {.*\"$3\": {\([^}]*\)}.*/\1/p" |
		sed -n "s/.*\"$4\": \([0-9]*\).*/\1/p"
}

# csv_col FILE PHASE COLUMN -- COLUMN of the first row of PHASE.
csv_col() {
	awk -F, -v ph="$2" -v col="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
		$4 == ph && c { print $c; exit }' "$1"
}

"$PGLOAD" run -q --on-pgiofs --jobs 2 --schema "$W/g/schema.sql" --data "$W/data+ckpt.sql" --post "$W/g/post.sql" \
	--json "$W/r.json" --csv "$W/r.csv" >"$W/out" 2>"$W/err" || { cat "$W/err"; fail "run --on-pgiofs"; }
grep -q '"fstype": "fuse"' "$W/r.json" || fail "data directory not on a FUSE mount"
grep -q '"pgiofs_profile": "default"' "$W/r.json" || fail "profile not reported"
grep -q "\"pgiofs_mount\": \"$TMPDIR/pgload\\.[^\"]*/mnt\"" "$W/r.json" || fail "pgiofs mount not reported"
grep -q '^data    real ' "$W/out" || fail "no summary"
[ -s "$W/err" ] && { cat "$W/err"; fail "messages on stderr with -q"; }
grep -q " $TMPDIR/pgload\.[^ ]*/mnt fuse" /proc/mounts && fail "pgiofs mount left behind"
assert_clean
echo "ok: --on-pgiofs"

# per-class I/O: the data phase wrote heap pages and WAL, in all three reports
# (WAL in passthrough, pgiofs's default: its syncs, its bytes bypass pgiofs)
grep -q "^I/O of the data phase on pgiofs ($TMPDIR/pgload\\.[^ ]*/mnt, mean of 1 run)\$" "$W/out" ||
	{ cat "$W/out"; fail "no I/O table in the summary"; }
awk '/^I\/O of the data phase/ { t = 1; next } t && /^heap / && $5 > 0 { h = 1 }
	t && /^wal / && ($5 > 0 || $6 > 0) { w = 1 } t && /^$/ { t = 0 }
	END { exit !(h && w) }' "$W/out" || { cat "$W/out"; fail "summary: no heap write MB or no WAL writes or syncs"; }
awk '/^I\/O of the data phase/ { t = 1; next } t && /^$/ { t = 0 }
	t && !/^(class|n\/s:)/ && $2 + $3 + $4 + $5 + $6 == 0 { bad = 1 } END { exit bad }' "$W/out" ||
	{ cat "$W/out"; fail "summary lists a class without I/O"; }
# WAL's bytes are not seen: "n/s", not zeros, and said so under the table;
# its syncs are counted
grep -Eq '^wal +n/s +n/s +n/s +n/s +[1-9][0-9]*$' "$W/out" || { cat "$W/out"; fail "summary: WAL not shown as not seen"; }
grep -q '^total\* ' "$W/out" && grep -q '^n/s: not seen' "$W/out" || { cat "$W/out"; fail "summary: no not-seen mark"; }
grep -m1 '^      "data": ' "$W/r.json" | grep -q '"wal": {[^}]*"bytes_seen": "none"}' ||
	fail "JSON: WAL's bytes_seen is not none"
grep -m1 '^      "data": ' "$W/r.json" | grep -q '"heap": {[^}]*"bytes_seen": "all"}' ||
	fail "JSON: heap's bytes_seen is not all"
# WAL: pgiofs's default puts it in passthrough (its bytes bypass pgiofs, its
# syncs are counted, below); its bytes are checked with --pgdata further on
for cls in heap; do
	v=$(json_io "$W/r.json" data $cls write_bytes)
	[ -n "$v" ] && [ "$v" -gt 0 ] || { cat "$W/r.json"; fail "JSON: data phase $cls write_bytes is \"$v\""; }
	v=$(json_io "$W/r.json" data $cls write_ops)
	[ -n "$v" ] && [ "$v" -gt 0 ] || fail "JSON: data phase $cls write_ops is \"$v\""
	v=$(csv_col "$W/r.csv" data ${cls}_write_bytes)
	[ -n "$v" ] && [ "$v" -gt 0 ] || { cat "$W/r.csv"; fail "CSV: data phase ${cls}_write_bytes is \"$v\""; }
done
[ "$(json_io "$W/r.json" data wal sync_ops)" -gt 0 ] || fail "JSON: no WAL syncs in the data phase"
for ph in schema data post; do
	[ -n "$(json_io "$W/r.json" $ph other read_ops)" ] || fail "JSON: no io in the $ph phase"
done
[ "$(head -1 "$W/r.csv" | tr ',' '\n' | wc -l)" -eq $((12 + 9 * 5)) ] || fail "CSV: wrong number of columns"
echo "ok: per-class I/O of each phase (summary, JSON, CSV)"

# a failing `pgiofs stat`: said once, the load goes on without I/O figures
cat >"$W/fake-pgiofs" <<EOF
#!/bin/sh
[ "\$1" = stat ] && { echo "fake: statistics unavailable" >&2; exit 3; }
exec "$BIN/pgiofs" "\$@"
EOF
chmod 755 "$W/fake-pgiofs"
"$PGLOAD" run -q --on-pgiofs --pgiofs-bin "$W/fake-pgiofs" --runs 2 --schema "$W/g/schema.sql" \
	-f "$W/g/data.sql" --json "$W/f.json" --csv "$W/f.csv" >"$W/out" 2>"$W/err" ||
	{ cat "$W/err"; fail "run with a failing pgiofs stat"; }
[ "$(grep -c 'going on without per-class I/O' "$W/err")" -eq 1 ] || { cat "$W/err"; fail "not said exactly once"; }
grep -q "fake-pgiofs stat $TMPDIR/pgload\\.[^ ]*/mnt --json\` failed (exit status 3: fake: statistics unavailable)" "$W/err" ||
	{ cat "$W/err"; fail "failure message"; }
grep -q '^I/O of the data phase' "$W/out" && fail "I/O table without figures"
grep -q '"io":' "$W/f.json" && fail "JSON has io without figures"
[ "$(csv_col "$W/f.csv" data heap_write_bytes)" = "" ] || fail "CSV has figures"
grep -q ',heap_write_bytes,' "$W/f.csv" || fail "CSV lacks the I/O columns on pgiofs"
assert_clean
echo "ok: failing pgiofs stat"

# --pgdata on a pgiofs mount of our own: found through /proc/self/mountinfo
mkdir "$W/back" "$W/mnt"
pgiofs_mount "$W/back" "$W/mnt" -o allow_other --set files.wal_mode=direct # WAL bytes seen
"$PGLOAD" run -q --pgdata "$W/mnt/data" --schema "$W/g/schema.sql" --data "$W/data+ckpt.sql" --json "$W/m.json" \
	>"$W/out" 2>"$W/err" || { cat "$W/err"; fail "run --pgdata on pgiofs"; }
grep -q "^I/O of the data phase on pgiofs ($W/mnt, mean of 1 run)\$" "$W/out" || { cat "$W/out"; fail "mount not found"; }
for cls in heap wal; do
	[ "$(json_io "$W/m.json" data $cls write_bytes)" -gt 0 ] || fail "JSON: no $cls writes with --pgdata"
done
grep -q '^n/s' "$W/out" && { cat "$W/out"; fail "WAL direct shown as not seen"; }
grep -m1 '^      "data": ' "$W/m.json" | grep -q '"wal": {[^}]*"bytes_seen": "all"}' ||
	fail "JSON: WAL direct's bytes_seen is not all"
pgiofs_umount "$W/mnt" || fail "unmount"
assert_no_mount "$W/mnt"
assert_clean
echo "ok: --pgdata on a pgiofs mount"

# a profile by name is found by pgiofs itself (beside its binary, whichever
# build directory that is); an unknown name is pgiofs's error, shown by pgload
"$PGLOAD" run -q --on-pgiofs --profile noop -f "$W/g/schema.sql" --json "$W/p.json" 2>"$W/err" ||
	{ cat "$W/err"; fail "--profile noop"; }
grep -q '"pgiofs_profile": "noop"' "$W/p.json" || fail "profile noop not reported"
"$PGLOAD" run -q --on-pgiofs --profile nosuch -f "$W/g/schema.sql" 2>"$W/err" && fail "unknown profile accepted"
grep -q 'profile "nosuch"' "$W/err" || { cat "$W/err"; fail "unknown profile message"; }
assert_clean
"$PGLOAD" run -q --on-pgiofs --profile /nonexistent.conf -f "$W/g/schema.sql" 2>"$W/err" && fail "bad profile accepted"
grep -q -- '--profile "/nonexistent.conf": no such file' "$W/err" || { cat "$W/err"; fail "bad profile message"; }
"$PGLOAD" run -q --on-pgiofs --pgiofs-bin /nonexistent -f "$W/g/schema.sql" 2>"$W/err" && fail "bad --pgiofs-bin accepted"
grep -q -- '--pgiofs-bin "/nonexistent": No such file' "$W/err" || { cat "$W/err"; fail "bad --pgiofs-bin message"; }
assert_clean
echo "ok: bad profile, bad --pgiofs-bin"
