#!/bin/bash
# test_stat_ops.sh -- what an operator reads off pgiofs: the profile and
# the tunables that differ from their defaults (in `pgiofs stat`, its JSON,
# and the daemon's log at mount and after SIGHUP); `pgiofs stat MOUNT 1 5`
# as iostat takes it; `pgiofs stat` with no mount point listing the mounts;
# `--format openmetrics` read back by the Prometheus project's own
# OpenMetrics parser (python3-prometheus-client) with the same counts as
# the JSON; systemd's STATUS line through NOTIFY_SOCKET; bad input refused
# by name.
source "$(dirname "$0")/../lib.sh"
need_root
PY=/usr/bin/python3 # Debian's, where python3-prometheus-client is
$PY -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
	fail "python3-prometheus-client is missing (run scripts/install-deps.sh)"

T=$(mktempdir)
mkdir -p "$T/b" "$T/m" "$T/b2" "$T/m2"

# a socket standing in for systemd's NOTIFY_SOCKET: every datagram to a file
$PY - "$T/notify" "$T/notify.log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(60)
with open(sys.argv[2], "a") as out:
    try:
        while True:
            out.write(s.recv(4096).decode() + "\n")
            out.flush()
    except socket.timeout:
        pass
PY
listener=$!
on_exit "kill $listener 2>/dev/null"
for ((i = 0; i < 50; i++)); do [ -S "$T/notify" ] && break; sleep 0.1; done

NOTIFY_SOCKET=$T/notify pgiofs_mount_fg "$T/log" "$T/b" "$T/m" --profile deadline-2.6 \
	-o fuse.attr_timeout=7
grep -q "profile deadline-2.6, policy deadline-2.6, WAL passthrough, backing files [a-zA-Z_]* ([^)]*), requests over [a-z_/]* ([^)]*), inodes identified by file handles, at most 4096 descriptors cached (files.inode_fds); tunables changed from their defaults: .*fuse.attr_timeout=7" "$T/log" ||
	fail "the daemon did not log its configuration at mount: $(cat "$T/log")"
echo "ok: the configuration is logged at mount"

# the table and the JSON name the profile and what differs from the defaults
out=$("$BIN/pgiofs" stat "$T/m") || fail "pgiofs stat failed"
grep -q '^profile deadline-2.6; tunables changed from their defaults: .*fuse.attr_timeout=7.*iosched.policy=deadline-2.6' <<<"$out" ||
	fail "pgiofs stat does not show the profile and changed tunables: $out"
"$BIN/pgiofs" stat "$T/m" --json >"$T/s.json" || fail "pgiofs stat --json failed"
$PY - "$T/s.json" <<'PY' || fail "the JSON lacks profile or changed: $(cat "$T/s.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["profile"] == "deadline-2.6", s["profile"]
assert "fuse.attr_timeout=7" in s["changed"].split(), s["changed"]
PY
echo "ok: pgiofs stat shows the profile and the tunables changed"

# SIGHUP with another setting: stat and the log follow
kill -HUP "$PGIOFS_PID"
for ((i = 0; i < 50; i++)); do
	"$BIN/pgiofs" stat "$T/m" --json | grep -q '"policy":"deadline-2.6"' || break
	sleep 0.1
done
# the profile file is read again: same policy; the log says what changed
grep -q "SIGHUP: settings reloaded (policy deadline-2.6; changed from the defaults: .*fuse.attr_timeout=7" "$T/log" ||
	fail "the reload's log line does not list the changed tunables: $(tail -n 3 "$T/log")"
echo "ok: a reload logs what differs from the defaults"

# iostat's positional INTERVAL COUNT
dd if=/dev/zero of="$T/m/f" bs=1M count=4 conv=fsync status=none || fail "cannot write through the mount"
out=$("$BIN/pgiofs" stat "$T/m" 0.2 3) || fail "pgiofs stat MOUNT 0.2 3 failed"
[ "$(grep -c ' total ' <<<"$out")" = 3 ] || fail "pgiofs stat MOUNT 0.2 3 did not print 3 samples: $out"
echo "ok: pgiofs stat MOUNT INTERVAL COUNT"

# OpenMetrics, read by the reference parser, equal to the JSON's counters
"$BIN/pgiofs" stat "$T/m" --format openmetrics >"$T/om.txt" || fail "--format openmetrics failed"
"$BIN/pgiofs" stat "$T/m" --json >"$T/s.json" || fail "pgiofs stat --json failed"
$PY - "$T/om.txt" "$T/s.json" "$T/m" <<'PY' || fail "the OpenMetrics text is not right: $(head -n 20 "$T/om.txt")"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
js = json.load(open(sys.argv[2]))["classes"]
want = {"pgiofs_requests", "pgiofs_transferred_bytes", "pgiofs_errors", "pgiofs_merges",
        "pgiofs_request_latency_seconds", "pgiofs_throttle_windows"}
assert want <= set(fams), sorted(fams)
assert fams["pgiofs_transferred_bytes"].unit == "bytes"
got = {}
for s in fams["pgiofs_transferred_bytes"].samples:
    assert s.labels["mount"] == sys.argv[3], s.labels
    got[(s.labels["class"], s.labels["direction"])] = s.value
for cls, c in js.items():
    if cls == "total":
        continue
    assert got[(cls, "write")] == c["write_bytes"], (cls, got[(cls, "write")], c["write_bytes"])
    assert got[(cls, "read")] == c["read_bytes"], cls
assert sum(v for (c, d), v in got.items() if d == "write") >= 4 << 20, got
print("ok: %d families, %d byte counters equal to the JSON's" % (len(fams), len(got)))
PY
echo "ok: --format openmetrics parses and agrees with --json"

# the list of mounts
pgiofs_mount "$T/b2" "$T/m2" --profile as-2.6
# (other tests' mounts are listed too, and one whose daemon was killed makes
# the exit status 1: only these two lines are judged)
out=$("$BIN/pgiofs" stat 2>/dev/null)
grep -q "^$T/m  *$T/b  *deadline-2.6  *deadline-2.6  *passthrough " <<<"$out" ||
	fail "the list lacks $T/m: $out"
grep -q "^$T/m2  *$T/b2  *as-2.6  *as-2.6 " <<<"$out" || fail "the list lacks $T/m2: $out"
"$BIN/pgiofs" stat --json 2>/dev/null | grep -qF "\"mount\":\"$T/m2\"" || fail "pgiofs stat --json lists no $T/m2"
echo "ok: pgiofs stat lists the mounts"

# systemd's status line: at mount, after the reload, at unmount
kill -TERM "$PGIOFS_PID"
for ((i = 0; i < 50; i++)); do grep -q '^STATUS=unmounting' "$T/notify.log" 2>/dev/null && break; sleep 0.1; done
grep -q "^STATUS=serving $T/b on $T/m: profile deadline-2.6, policy deadline-2.6, WAL passthrough$" "$T/notify.log" &&
	grep -q "^STATUS=serving $T/m: reloaded, policy deadline-2.6$" "$T/notify.log" &&
	grep -q "^STATUS=unmounting $T/m" "$T/notify.log" ||
	fail "systemd was not told the status: $(cat "$T/notify.log")"
echo "ok: STATUS through NOTIFY_SOCKET at mount, reload and unmount"

# -o config=FILE, read again on SIGHUP: the way to change the policy of a
# running mount (docs/operations.md)
mkdir -p "$T/b3" "$T/m3"
printf '[iosched]\npolicy = deadline-2.6\n' >"$T/main.conf"
pgiofs_mount "$T/b3" "$T/m3" -o config="$T/main.conf"
"$BIN/pgiofs" stat "$T/m3" --json | grep -q '"policy":"deadline-2.6"' || fail "-o config= was not read"
printf '[iosched]\npolicy = as-2.6\n' >"$T/main.conf"
pkill -HUP -f "pgiofs .*$T/m3\$" || fail "no daemon for $T/m3"
for ((i = 0; i < 50; i++)); do
	"$BIN/pgiofs" stat "$T/m3" --json | grep -q '"policy":"as-2.6"' && break
	sleep 0.1
done
"$BIN/pgiofs" stat "$T/m3" | grep -q 'iosched.policy=as-2.6' || fail "SIGHUP did not apply the edited config file"
echo "ok: -o config=FILE, edited and applied by SIGHUP"

# bad input
for args in "--format xml" "$T/m2 1 --interval 1" "$T/m2 --format openmetrics --interval 1" \
	"$T/m2 0 3" "$T/m2 1 0" "--interval 1"; do
	# shellcheck disable=SC2086 # the arguments split as written
	if out=$("$BIN/pgiofs" stat $args 2>&1); then fail "pgiofs stat $args succeeded"; fi
	grep -q '^pgiofs stat: ' <<<"$out" || fail "pgiofs stat $args: no clear message: $out"
	echo "ok: pgiofs stat $args -> $out"
done
echo ok
