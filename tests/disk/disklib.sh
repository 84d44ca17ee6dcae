# disklib.sh -- helpers for the pgdisk tests (source it after ../lib.sh).
#
# Everything a helper sets up is registered for clean-up in the right
# order (the file system on the loop device, the loop device, pgdisk, the
# cgroup), so a failing test leaves nothing behind either.

PGDISK="$BIN/pgdisk"
HELPER_DIO="$TESTBUILD/disk/helper_dio"

# disk_image PATH SIZE -- a sparse image of SIZE (truncate's units).
disk_image() {
	truncate -s "$2" "$1" || fail "cannot create image $1"
}

# disk_pid MNT -- the pid of the pgdisk serving MNT (empty if none).
disk_pid() {
	local p
	for p in $(pgrep -f -- " $1\$"); do
		[ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$(readlink -f "$PGDISK")" ] && echo "$p"
	done
	return 0
}

# disk_start IMAGE MNT [ARGS...] -- pgdisk in the background (it returns
# once mounted); DISK_PID is the daemon, stopped at exit.
disk_start() {
	local img=$1 mnt=$2
	shift 2
	"$PGDISK" "$@" "$img" "$mnt" || fail "pgdisk $* $img $mnt failed"
	DISK_PID=$(disk_pid "$mnt")
	[ -n "$DISK_PID" ] || fail "no pgdisk process serves $mnt"
	on_exit "disk_stop $mnt $DISK_PID"
	is_mounted "$mnt" || fail "$mnt is not a mount point after pgdisk returned"
}

# disk_wait_exit PID [SECONDS] -- wait until PID has exited (default 10 s);
# 1 if it has not.
disk_wait_exit() {
	local i
	for ((i = 0; i < ${2:-10} * 10; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

# disk_stop MNT PID -- SIGTERM pgdisk PID and wait for it (SIGKILL after
# 10 s); unmount MNT if it is still mounted.
disk_stop() {
	local mnt=$1 pid=$2
	if [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$PGDISK")" ]; then
		kill -TERM "$pid" 2>/dev/null
		disk_wait_exit "$pid" || kill -KILL "$pid" 2>/dev/null
	fi
	if is_mounted "$mnt"; then umount "$mnt" 2>/dev/null || umount -l "$mnt"; fi
}

# loop_attach FILE -- a loop device with direct I/O on FILE, detached at
# exit; prints its path.  Call it as LOOP=$(loop_attach FILE) and then
# loop_registered "$LOOP" (a $(...) subshell cannot register anything).
loop_attach() {
	losetup --direct-io=on --find --show "$1" || fail "losetup --direct-io=on $1 failed"
}
loop_registered() {
	on_exit "loop_detach $1 '$(cat "/sys/block/${1#/dev/}/loop/backing_file")'"
	[ "$(cat "/sys/block/${1#/dev/}/loop/dio")" = 1 ] || fail "$1 does not use direct I/O"
}


# fs_mount DEV DIR [MOUNT ARGS...] -- mount, unmounted at exit.
fs_mount() {
	local dev=$1 dir=$2
	shift 2
	mount "$@" "$dev" "$dir" || fail "cannot mount $dev on $dir"
	on_exit "umount $dir"
}

# stat_of MNT NAME -- one counter of MNT/stats.
stat_of() {
	awk -v k="$2" '$1 == k { print $2 }' "$1/stats"
}

# set_scheduler DEV NAME -- the block queue's elevator.
set_scheduler() {
	echo "$2" >"/sys/block/${1#/dev/}/queue/scheduler" || fail "$1 does not accept scheduler $2"
	grep -q "\[$2\]" "/sys/block/${1#/dev/}/queue/scheduler" || fail "$1: scheduler is not $2"
}

# fuse_abort MNT -- end the FUSE connection of MNT (its pending requests
# fail): the way out of a deadlocked server, so that a failed test can still
# clean up.  Mounts fusectl for the moment if it is not mounted.
fuse_abort() {
	local dev conn=/sys/fs/fuse/connections mounted=0
	dev=$(awk -v m="$(realpath -m "$1")" '$5 == m { print $3 }' /proc/self/mountinfo | head -1)
	[ -n "$dev" ] || return 0
	if ! grep -q " $conn fusectl " /proc/mounts; then
		mount -t fusectl fusectl "$conn" && mounted=1
	fi
	echo 1 >"$conn/${dev#*:}/abort"
	[ $mounted = 1 ] && umount "$conn"
	return 0
}
