#!/bin/bash
# test_badinput.sh -- pgdisk refuses bad input before it sets anything up:
# each case exits non-zero with a message naming the input and the reason,
# mounts nothing, leaves no process, and leaves the image as it was.
#   images: missing, a directory, not a regular file, empty, not whole
#           sectors; mount points: missing, a file, not empty;
#   --check IMAGE: the same refusals of the image alone, and a good image;
#   settings: an unknown model (--model, --set, a config file), a value out
#           of range or not a number, an unknown setting (queue_depth and
#           [iosched] are not pgdisk's), a config file that is missing or has
#           an unknown section; capped volumes: a size for a model other than
#           gp2, a size that is not one, a p99 below the median, credits
#           without a baseline, a baseline above the cap, a bare gp2 with no
#           image to size it; an existing request log; arguments: too few,
#           an unknown option.
# And the good paths of the settings: --help lists them, --print-config
# prints an INI file that --config reads back to the same values, a capped
# volume's effective values (gp2 from gp2:SIZE or from the image's size).
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m" "$D/full" "$D/dir"
touch "$D/full/x" "$D/file" "$D/empty"
disk_image "$D/img" 16M
head -c 1000 /dev/zero >"$D/odd"
sum=$(md5sum <"$D/img")

# refuse EXPECTED_TEXT ARGS... -- pgdisk ARGS must fail saying EXPECTED_TEXT
refuse() {
	local want=$1 out rc
	shift
	out=$("$PGDISK" "$@" 2>&1)
	rc=$?
	[ $rc -ne 0 ] || fail "pgdisk $* succeeded"
	echo "$out" | grep -qF -- "$want" || fail "pgdisk $*: expected \"$want\", got: $out"
	assert_no_mount "$D/m"
	[ -z "$(disk_pid "$D/m")" ] || fail "pgdisk $* left a process"
	echo "ok ($rc): pgdisk $* -> $(echo "$out" | head -1)"
}

refuse "image \"$D/none\": No such file or directory" "$D/none" "$D/m"
refuse "is not a regular file" "$D/dir" "$D/m"
refuse "is not a regular file" /dev/null "$D/m"
refuse "is damaged: its size (0 bytes) is not a whole" "$D/empty" "$D/m"
refuse "is damaged: its size (1000 bytes) is not a whole" "$D/odd" "$D/m"
refuse "mount point \"$D/nomnt\": No such file or directory" "$D/img" "$D/nomnt"
refuse "mount point \"$D/file\" is not a directory" "$D/img" "$D/file"
refuse "mount point \"$D/full\" is not empty" "$D/img" "$D/full"
refuse 'model: "floppy" is not one of: none, hdd, ssd' --model floppy "$D/img" "$D/m"
refuse 'model: "floppy" is not one of' --set model=floppy "$D/img" "$D/m"
refuse "seek_ms: -1 is out of range" --set seek_ms=-1 "$D/img" "$D/m"
refuse "rpm: 10 is out of range" --set device.rpm=10 "$D/img" "$D/m"
refuse 'seq_mb_s: "fast" is not a number' -s seq_mb_s=fast "$D/img" "$D/m"
refuse 'unknown option "queue_depth"' --set queue_depth=4 "$D/img" "$D/m"
refuse 'unknown option "policy" in section [iosched]' --set iosched.policy=noop "$D/img" "$D/m"
# capped volumes: presets and their settings
refuse '"gp3:100": only gp2 takes a size' --model gp3:100 "$D/img" "$D/m"
refuse '"gp2:big": the size must be a whole number of GiB' --model gp2:big "$D/img" "$D/m"
refuse '"gp2:0": the size must be a whole number of GiB' --model gp2:0 "$D/img" "$D/m"
refuse 'cloud_latency_p99_us (500 us) is below the median' --model gp3 \
	--set cloud_latency_p99_us=500 "$D/img" "$D/m"
refuse 'device.cloud_credits (1000) and device.cloud_baseline_iops (0) go together' \
	--model cloud --set cloud_credits=1000 "$D/img" "$D/m"
refuse 'device.cloud_baseline_iops (5000) is above device.cloud_iops (3000)' --model gp2:100 \
	--set cloud_baseline_iops=5000 "$D/img" "$D/m"
refuse 'cloud_depth: 5000 is out of range' --model gp3 --set cloud_depth=5000 "$D/img" "$D/m"
refuse 'gp2 takes its caps from the volume' --model gp2 --print-config
refuse 'realtime: "maybe" is not' --set realtime=maybe "$D/img" "$D/m"
refuse 'rt_priority: 100 is out of range' --set daemon.rt_priority=100 "$D/img" "$D/m"
touch "$D/exists.log"
refuse "cannot create the request log \"$D/exists.log\": File exists (a log is never overwritten)" \
	--requests "$D/exists.log" "$D/img" "$D/m"
[ -s "$D/exists.log" ] && fail "a refused start wrote into an existing log"
printf '[device]\nmodel = tape\n' >"$D/bad.conf"
refuse "$D/bad.conf:2" --config "$D/bad.conf" "$D/img" "$D/m"
printf '[iosched]\npolicy = noop\n' >"$D/other.conf"
refuse "$D/other.conf:" --config "$D/other.conf" "$D/img" "$D/m"
refuse "$D/missing.conf" --config "$D/missing.conf" "$D/img" "$D/m"
refuse "expected IMAGE and MOUNTPOINT, got 1 argument" "$D/img"
refuse 'unknown option "--bogus"' --bogus "$D/img" "$D/m"
# --check: the image's refusals alone, nothing served
refuse "image \"$D/none\": No such file or directory" --check "$D/none"
refuse "is damaged: its size (1000 bytes) is not a whole" --check "$D/odd"
refuse "is not a regular file" --check "$D/dir"
refuse "--check takes one IMAGE, got 2 arguments" --check "$D/img" "$D/m"
out=$("$PGDISK" --check "$D/img" 2>&1) || fail "pgdisk --check of a good image: $out"
[ "$out" = "pgdisk: image \"$D/img\": 16777216 bytes, can be served" ] || fail "pgdisk --check says: $out"
echo "ok: pgdisk --check"
[ "$(md5sum <"$D/img")" = "$sum" ] || fail "a refused start changed the image"
[ "$(stat -c %s "$D/odd")" -eq 1000 ] || fail "a refused start changed a damaged image"

# the settings: --help, --print-config and --config agree
"$PGDISK" --help | grep -q "device.seek_ms .*default 8.5 ms" || fail "--help lacks device.seek_ms"
"$PGDISK" --help | grep -q "device.model .*default hdd" || fail "--help: the default model is not hdd"
"$PGDISK" --help | grep -q queue_depth && fail "--help lists queue_depth"
"$PGDISK" --model ssd --set seek_ms=12 --print-config >"$D/p.conf" || fail "--print-config"
grep -qx "model = ssd" "$D/p.conf" && grep -qx "seek_ms = 12" "$D/p.conf" ||
	fail "--print-config does not show the settings: $(cat "$D/p.conf")"
"$PGDISK" --config "$D/p.conf" --print-config | cmp -s - "$D/p.conf" ||
	fail "--config of --print-config's output changes the values"
# a capped volume's effective values: gp2 sized by gp2:SIZE, or by the image
"$PGDISK" --model gp2:100 --print-config >"$D/g.conf" || fail "--print-config gp2:100"
grep -qx "cloud_baseline_iops = 300" "$D/g.conf" && grep -qx "cloud_iops = 3000" "$D/g.conf" &&
	grep -qx "cloud_credits = 5.4e+06" "$D/g.conf" && grep -qx "cloud_mib_s = 128" "$D/g.conf" ||
	fail "--print-config of gp2:100: $(grep cloud_ "$D/g.conf" | tr '\n' ' ')"
"$PGDISK" --config "$D/g.conf" --print-config | cmp -s - "$D/g.conf" ||
	fail "--config of gp2:100's printed settings changes the values"
truncate -s 200G "$D/big.img"
"$PGDISK" --model gp2 --print-config "$D/big.img" | grep -qx "cloud_baseline_iops = 600" ||
	fail "a bare gp2 does not take the image's size"
rm -f "$D/big.img"
"$PGDISK" --model io2 --print-config | grep -qx "cloud_latency_us = 250" || fail "io2's latency"
echo "ok"
