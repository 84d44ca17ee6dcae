#!/bin/bash
# test_fstab.sh -- pgiofs mounted the ways an administrator mounts it: options
# after the paths (as mount.fuse3 passes them), an /etc/fstab line through
# mount(8) and mount.fuse3 (`mount MOUNT`, `mount -a`, `umount MOUNT`), and
# the systemd mount unit systemd-fstab-generator makes of that line.
#
# The fstab used is a file of the test's own (mount --fstab), so the
# machine's /etc/fstab is never touched.  mount(8) runs its helpers with a
# standard PATH, where an installed pgiofs is found by the type
# fuse.pgiofs; the build's binary is not installed, so the mount(8) lines
# name it the other way mount.fuse3 accepts (type fuse, source
# /path/to/pgiofs#BACKING), the same helper and the same arguments.  Checked each time: the
# mount exists with type fuse.pgiofs, the options reached the daemon (the
# profile's policy in `pgiofs stat --json`, allow_other in the mount
# options), files written through it are in the backing directory, and
# `umount` ends the daemon; a bad option in the fstab line fails the mount
# with pgiofs's message and leaves nothing mounted or running.
source "$(dirname "$0")/../lib.sh"
need_root
command -v mount.fuse3 >/dev/null || fail "mount.fuse3 is missing (Debian package fuse3)"
command -v python3 >/dev/null || fail "python3 is needed to read the statistics"

T=$(mktempdir)
B=$T/backing M=$T/mnt
mkdir -p "$B" "$M"
PGIOFS=$(realpath "$BIN/pgiofs")
on_exit "umount '$M' 2>/dev/null; true"

# daemon_of -- the pid of the daemon serving $M ("" if none).
daemon_of() { pgrep -f "pgiofs $B $M( |\$)" | head -n 1; }

# check_mount POLICY -- $M is a pgiofs mount of $B with allow_other,
# whose scheduler runs POLICY, and what is written through it lands in $B.
check_mount() {
	local policy=$1 f
	f=$(awk -v m="$M" '$2 == m { print $3 " " $4 }' /proc/mounts)
	[[ $f == "fuse.pgiofs "* ]] || fail "$M is not a fuse.pgiofs mount: \"$f\""
	[[ ,${f#* }, == *,allow_other,* ]] ||
		grep -q "allow_other" <<<"$(awk -v m="$M" '$5 == m' /proc/self/mountinfo)" ||
		fail "allow_other did not reach the mount: $f"
	"$BIN/pgiofs" stat "$M" --json >"$T/stat.json" || fail "pgiofs stat $M failed"
	python3 - "$T/stat.json" "$policy" <<-'PY' || fail "the options did not reach the daemon"
		import json, sys
		s = json.load(open(sys.argv[1]))
		assert s["policy"] == sys.argv[2], "policy %s, want %s" % (s["policy"], sys.argv[2])
	PY
	echo "hello $policy" >"$M/f" && sync "$M/f" || fail "cannot write through $M"
	[ "$(cat "$B/f")" = "hello $policy" ] || fail "a write through $M is not in $B"
}

# unmount_and_wait -- umount(8) $M; the daemon exits, nothing is left.
unmount_and_wait() {
	local pid i
	pid=$(daemon_of)
	[ -n "$pid" ] || fail "no pgiofs daemon serves $M"
	umount "$M" || fail "umount $M failed"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null || fail "the daemon (pid $pid) is still running after umount"
	assert_no_mount "$M"
}

# 1. options after the two paths, as mount.fuse3 passes them
"$PGIOFS" "$B" "$M" -o allow_other,profile=deadline-2.6,fuse.attr_timeout=5 ||
	fail "pgiofs BACKING MOUNT -o OPTIONS failed"
check_mount deadline-2.6
unmount_and_wait
echo "ok: pgiofs BACKING MOUNT -o allow_other,profile=deadline-2.6,..."

# 2. an fstab line: mount MOUNT, then umount MOUNT
printf '%s#%s %s fuse allow_other,profile=as-2.6,noauto,nofail,x-systemd.requires=local-fs.target 0 0\n' \
	"$PGIOFS" "$B" "$M" >"$T/fstab"
mount --fstab "$T/fstab" "$M" || fail "mount $M from the fstab line failed: $(cat "$T/fstab")"
check_mount as-2.6
unmount_and_wait
echo "ok: mount MOUNT / umount MOUNT from an fstab line"

# 3. mount -a mounts what is not noauto
printf '%s#%s %s fuse allow_other,profile=dbaware,files.wal_mode=direct,_netdev 0 0\n' \
	"$PGIOFS" "$B" "$M" >"$T/fstab"
mount -a --fstab "$T/fstab" || fail "mount -a failed: $(cat "$T/fstab")"
check_mount dbaware
unmount_and_wait
echo "ok: mount -a from an fstab line"

# 4. a bad option: mount fails with pgiofs's reason, nothing is left
printf '%s#%s %s fuse allow_other,profile=nosuch 0 0\n' "$PGIOFS" "$B" "$M" >"$T/fstab"
if out=$(mount --fstab "$T/fstab" "$M" 2>&1); then
	fail "mount with profile=nosuch succeeded"
fi
grep -qF 'profile "nosuch": no such profile' <<<"$out" || fail "mount's error does not say why: $out"
assert_no_mount "$M"
[ -z "$(daemon_of)" ] || fail "a refused mount left a daemon running"
echo "ok: a bad fstab option is refused by name: $(head -n 1 <<<"$out")"

# 5. the systemd mount unit made of the documented fstab line is valid
printf '%s %s fuse.pgiofs allow_other,profile=dbaware,nofail 0 0\n' "$B" "$M" >"$T/fstab"
GEN=/usr/lib/systemd/system-generators/systemd-fstab-generator
if [ -x "$GEN" ] && command -v systemd-analyze >/dev/null; then
	mkdir "$T/gen"
	SYSTEMD_FSTAB=$T/fstab "$GEN" "$T/gen" "$T/gen" "$T/gen" || fail "systemd-fstab-generator failed"
	unit=$(systemd-escape --path --suffix=mount "$M")
	[ -f "$T/gen/$unit" ] || fail "the generator made no $unit: $(ls -R "$T/gen")"
	grep -qx "Type=fuse.pgiofs" "$T/gen/$unit" && grep -qx "What=$B" "$T/gen/$unit" ||
		fail "the generated unit is not a pgiofs mount: $(cat "$T/gen/$unit")"
	systemd-analyze verify "$T/gen/$unit" || fail "systemd-analyze verify $unit failed"
	echo "ok: systemd-fstab-generator makes $unit, and it verifies"
else
	fail "systemd-fstab-generator or systemd-analyze is missing (Debian package systemd)"
fi
echo ok
