#!/bin/bash
# test_lifecycle.sh -- starting and stopping pgdisk:
#   - in the background the command returns once the mount exists, the
#     daemon runs with locked memory; SIGTERM unmounts and it exits;
#   - in the foreground (-f) it stays attached; SIGINT unmounts, exit 0;
#   - an unmount by hand ends it;
#   - SIGTERM while a loop device (and a file system) is on the disk does
#     not pull the disk: the mount point is freed, the file system keeps
#     working, and pgdisk exits once the loop device is detached; what was
#     written is on the image;
#   - a second pgdisk on the same image is refused and mounts nothing;
#   - nothing is left: no mount, no loop device, no process.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root

D=$(mktempdir)
mkdir "$D/m" "$D/m2" "$D/fs"
disk_image "$D/img" 64M

# background, SIGTERM
disk_start "$D/img" "$D/m" --model ssd
grep -q '^VmLck:.*[1-9]' "/proc/$DISK_PID/status" || fail "pgdisk has no locked memory"
[ "$(stat_of "$D/m" model)" = ssd ] || fail "stats do not name the model"
kill -TERM "$DISK_PID"
disk_wait_exit "$DISK_PID" || fail "pgdisk did not exit on SIGTERM"
assert_no_mount "$D/m"
echo "ok: background start, SIGTERM"

# foreground, SIGINT
"$PGDISK" -f --model none "$D/img" "$D/m" 2>"$D/fg.log" &
fg=$!
on_exit "disk_stop $D/m $fg"
for ((i = 0; i < 100; i++)); do is_mounted "$D/m" && break; sleep 0.1; done
is_mounted "$D/m" || fail "pgdisk -f did not mount"
kill -INT $fg
wait $fg || fail "pgdisk -f exited with $? on SIGINT"
assert_no_mount "$D/m"
grep -q "signal 2: unmounting" "$D/fg.log" || fail "no log line for SIGINT: $(cat "$D/fg.log")"
echo "ok: foreground, SIGINT"

# unmount by hand
disk_start "$D/img" "$D/m"
umount "$D/m" || fail "umount"
disk_wait_exit "$DISK_PID" || fail "pgdisk did not exit after an unmount"
echo "ok: umount ends pgdisk"

# a second pgdisk on the same image
disk_start "$D/img" "$D/m"
out=$("$PGDISK" "$D/img" "$D/m2" 2>&1) && fail "a second pgdisk on the same image started"
echo "$out" | grep -q "is in use: another pgdisk serves it" || fail "second pgdisk: $out"
assert_no_mount "$D/m2"
echo "ok: a second pgdisk is refused"

# SIGTERM with a loop device and a file system on the disk
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$LOOP" || fail "mkfs.ext4"
fs_mount "$LOOP" "$D/fs"
echo before >"$D/fs/a"
kill -TERM "$DISK_PID"
for ((i = 0; i < 50; i++)); do is_mounted "$D/m" || break; sleep 0.1; done
assert_no_mount "$D/m"
kill -0 "$DISK_PID" 2>/dev/null || fail "pgdisk exited with a loop device on its disk"
echo after >"$D/fs/b" && sync -f "$D/fs/b" || fail "the file system stopped working"
umount "$D/fs"
losetup -d "$LOOP"
disk_wait_exit "$DISK_PID" || fail "pgdisk did not exit once the loop device was detached"
# what was written is on the image
L2=$(losetup --find --show --read-only "$D/img") || fail "losetup of the image"
on_exit "loop_detach $L2 '$D/img'"
mount -o ro "$L2" "$D/fs" || fail "cannot mount the image"
[ "$(cat "$D/fs/a" "$D/fs/b")" = "$(printf 'before\nafter')" ] || fail "the image lacks the writes"
umount "$D/fs"
losetup -d "$L2"
echo "ok: SIGTERM with a loop device: detached, served until the loop device went"

# nothing left behind
assert_no_mount "$D/m"
[ -z "$(disk_pid "$D/m")" ] || fail "a pgdisk process is left"
losetup -j "$D/m/disk" | grep -q . && fail "a loop device is left"
echo "ok"
