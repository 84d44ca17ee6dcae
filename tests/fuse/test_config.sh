#!/bin/bash
# test_config.sh -- config/pgiofs.conf documents every tunable with its
# default (it is exactly what `pgiofs --print-config` prints, so the file and
# the tunables table cannot drift apart), and it loads back unchanged; every
# tunable name is in one section only, so `-o NAME=VALUE` reaches each one.
source "$(dirname "$0")/../lib.sh"
T=$(mktempdir)
"$BIN/pgiofs" --print-config >"$T/printed.conf" || fail "--print-config failed"
diff -u "$TOP/config/pgiofs.conf" "$T/printed.conf" ||
	fail "config/pgiofs.conf differs from pgiofs --print-config: regenerate it"
"$BIN/pgiofs" --config "$TOP/config/pgiofs.conf" --print-config >"$T/reloaded.conf" ||
	fail "config/pgiofs.conf does not load"
diff -u "$T/printed.conf" "$T/reloaded.conf" || fail "loading config/pgiofs.conf changed values"
"$BIN/pgiofs" --set fuse.attr_timeout=5 -o max_background=64 --print-config >"$T/set.conf"
grep -qx "attr_timeout = 5" "$T/set.conf" || fail "--set did not change attr_timeout"
grep -qx "max_background = 64" "$T/set.conf" || fail "-o NAME=VALUE did not change max_background"
"$BIN/pgiofs" --help-tunables | grep -q "bdi.max_ratio" || fail "--help-tunables does not list the tunables"

# every name is unambiguous, so -o NAME=VALUE reaches every tunable: no
# name is in two sections, and each one set by its bare name (to its
# default) is accepted; read_ahead_kb is the mount's ([bdi])
awk '/^\[/ { sec = $0 } /^[a-z_0-9]+ = / { print sec, $1 }' "$T/printed.conf" >"$T/names"
dups=$(awk '{ print $2 }' "$T/names" | sort | uniq -d)
[ -z "$dups" ] || fail "tunable names in more than one section: $dups"
n=0
while read -r name value; do
	"$BIN/pgiofs" -o "$name=$value" --print-config >/dev/null 2>"$T/err" ||
		fail "-o $name=$value is refused: $(cat "$T/err")"
	n=$((n + 1))
done < <(awk '/^[a-z_0-9]+ = / { print $1, $3 }' "$T/printed.conf")
"$BIN/pgiofs" -o read_ahead_kb=256 --print-config |
	awk '/^\[/ { sec = $0 } $0 == "read_ahead_kb = 256" { print sec }' | grep -qx "\[bdi\]" ||
	fail "-o read_ahead_kb=256 did not set bdi.read_ahead_kb"
# every row of iosched's table is in pgiofs's (the merged table cannot drop any)
[ "$n" -eq "$("$BIN/pgiofs" --help-tunables | grep -cE '^  [a-z]+\.[a-z_0-9]+ +default')" ] ||
	fail "--print-config has $n tunables, --help another number"
for s in iosched device fault; do
	grep -qx "\[$s\]" "$T/printed.conf" || fail "no [$s] section in --print-config"
done
grep -qx "in_transfer = no" "$T/printed.conf" || fail "the last [fault] row is missing"
"$BIN/pgiofs" --version | grep -q "^pgiofs " || fail "--version"
echo ok
