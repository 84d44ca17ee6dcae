#!/bin/bash
# test_config.sh -- config/pgiofs.conf documents every tunable with its
# default (it is exactly what `pgiofs --print-config` prints, so the file and
# the tunables table cannot drift apart), and it loads back unchanged.
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
"$BIN/pgiofs" --help | grep -q "bdi.max_ratio" || fail "--help does not list the tunables"
"$BIN/pgiofs" --version | grep -q "^pgiofs " || fail "--version"
echo ok
