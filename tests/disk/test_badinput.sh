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
#           an unknown section; arguments: too few, an unknown option.
# And the good paths of the settings: --help lists them, --print-config
# prints an INI file that --config reads back to the same values.
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
echo "ok"
