#!/bin/bash
# test_compare_dev.sh -- `pgload compare` on a real block device
# (dev:DEVICE:FS), a loop device standing in for the user's disk:
#   - refused, each on its own, with its message, nothing set up (no --out,
#     no mount, no loop device, no swap, the device's first MiB as it was):
#     without --destroy-device, with --destroy-device naming another
#     device, a --destroy-device no back end uses, a path that is no block
#     device, the device carrying the root file system (this machine's own
#     root device, with a mkfs on PATH that refuses to run, in case), a
#     mounted device, a whole disk with a partition table, a device with a
#     holder (a private holders/ in a mount namespace, as LVM would leave),
#     a device in use as swap, one held open exclusively by a program;
#   - ext4 and xfs on the device with the mq-deadline elevator and a queue
#     tunable: the two cells take turns, each run on a file system made
#     afresh; the report says so; the device's queue is given back as it
#     was; nothing of the run is left (the device holds the last cell's
#     file system).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/pglib.sh"

need_pg
need_root
command -v mkfs.xfs >/dev/null || skip "no mkfs.xfs (xfsprogs)"
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4 (e2fsprogs)"
command -v mkswap >/dev/null || skip "no mkswap"
W=$(mktempdir)
truncate -s 400M "$W/disk.img"
truncate -s 8M "$W/other.img"
DEV=$(losetup --direct-io=on --find --show "$W/disk.img") || fail "losetup failed"
on_exit "losetup -d $DEV"
OTHER=$(losetup --find --show "$W/other.img") || fail "losetup failed"
on_exit "losetup -d $OTHER"
on_exit "swapoff $DEV 2>/dev/null"
NAME=${DEV#/dev/}

# snapshot -- what a refused run must leave as it was (of what is this
# test's: other tests may mount and attach meanwhile)
snapshot() {
	awk '{print $5}' /proc/self/mountinfo | grep -F "$TMPDIR" | grep -vx "$W/m" | sort
	losetup -a | grep -F -e "$TMPDIR" -e "$DEV:" | sort
	awk -v d="$DEV" '$1 == d {print $1, $2}' /proc/swaps
	ls "$TMPDIR"
	# (a swap area in use is written by the kernel)
	grep -q "^$DEV " /proc/swaps || head -c 1M "$DEV" | md5sum
	cat "/sys/block/$NAME/queue/scheduler"
}

# refused WHY ARGS... -- pgload compare ARGS exits 1 saying WHY, having set
# nothing up
refused() {
	local why=$1 before
	shift
	before=$(snapshot)
	"$@" >"$W/out" 2>"$W/err"
	local rc=$?
	[ $rc = 1 ] || { cat "$W/err"; fail "exit status $rc, want 1: $*"; }
	grep -qF -- "$why" "$W/err" || { cat "$W/err"; fail "no \"$why\" for: $*"; }
	[ -e "$W/o" ] && fail "--out made by a refused run: $*"
	[ "$before" = "$(snapshot)" ] ||
		{ diff <(echo "$before") <(snapshot); fail "something was set up by a refused run: $*"; }
	return 0
}

C=("$PGLOAD" compare --gen 0.002 --profiles native --runs 1 --stream-mb 4 --out "$W/o")
refused "back end \"dev:$DEV:ext4\" makes a file system afresh on $DEV for each cell, destroying what it holds: give --destroy-device $DEV to allow it" \
	"${C[@]}" --backends "dev:$DEV:ext4"
refused "give --destroy-device $DEV to allow it" \
	"${C[@]}" --backends "dev:$DEV:ext4,dev:$OTHER:xfs" --destroy-device "$OTHER"
refused "--destroy-device $OTHER: no dev:DEVICE:FS back end is on that device" \
	"${C[@]}" --backends "dev:$DEV:ext4" --destroy-device "$DEV" --destroy-device "$OTHER"
refused "dev:DEVICE:FS expected" "${C[@]}" --backends "dev:$DEV:zfs" --destroy-device "$DEV"
refused "$W/disk.img is not a block device" \
	"${C[@]}" --backends "dev:$W/disk.img:ext4" --destroy-device "$W/disk.img"

# the root file system's device: were the refusal to fail, mkfs would not run
ROOT=$(findmnt -n -o SOURCE / 2>/dev/null)
if [ -b "$ROOT" ]; then
	mkdir "$W/fakebin"
	for fs in ext4 xfs; do
		printf '#!/bin/sh\necho "mkfs must not run" >&2\nexit 1\n' >"$W/fakebin/mkfs.$fs"
		chmod +x "$W/fakebin/mkfs.$fs"
	done
	refused "$ROOT carries the file system of the running system" \
		env PATH="$W/fakebin:$PATH" "${C[@]}" --backends "dev:$ROOT:ext4" --destroy-device "$ROOT"
else
	echo "note: / is not on a block device here ($ROOT): its refusal is not tested"
fi

# read-only: the kernel writes nothing to it while the refusal is checked
mkfs.ext4 -q -F "$DEV" && mkdir "$W/m" && mount -o ro "$DEV" "$W/m" || fail "could not mount $DEV"
refused "$DEV is mounted ($NAME or a device on it is mounted at $W/m): unmount it first" \
	"${C[@]}" --backends "dev:$DEV:xfs" --destroy-device "$DEV"
umount "$W/m" || fail "umount failed"

# an MBR with one partition, as fdisk writes it
python3 - "$DEV" <<'PY' || fail "could not write a partition table"
import sys
mbr = bytearray(512)
mbr[446:462] = bytes([0, 0, 2, 0, 0x83, 0, 0, 0]) + (2048).to_bytes(4, "little") + (100000).to_bytes(4, "little")
mbr[510:512] = b"\x55\xaa"
with open(sys.argv[1], "r+b") as f:
    f.write(mbr)
PY
refused "$DEV holds a partition table (dos): name a partition, not the whole disk" \
	"${C[@]}" --backends "dev:$DEV:ext4" --destroy-device "$DEV"
dd if=/dev/zero of="$DEV" bs=1M count=1 oflag=direct status=none || fail "could not wipe $DEV"

mkdir "$W/holders" && touch "$W/holders/dm-9"
refused "$DEV is in use by dm-9 (a holder in sysfs: LVM, md, dm-crypt or the like is built on it)" \
	unshare -m bash -c 'mount --bind "$0" "/sys/block/$1/holders" && shift && exec "$@"' \
	"$W/holders" "$NAME" "${C[@]}" --backends "dev:$DEV:ext4" --destroy-device "$DEV"

# a small swap area (64 KiB): the machine may swap to it while it is on
mkswap -q "$DEV" 64 >/dev/null && swapon "$DEV" || fail "swapon $DEV failed"
refused "$DEV is in use as swap ($DEV in /proc/swaps)" \
	"${C[@]}" --backends "dev:$DEV:ext4" --destroy-device "$DEV"
swapoff "$DEV" || fail "swapoff failed"

# held open exclusively (O_EXCL on a block device), as a program using it would
python3 -c 'import os, sys, time; os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL); print("held", flush=True); time.sleep(60)' \
	"$DEV" >"$W/held" &
HOLDER=$!
on_exit "kill $HOLDER 2>/dev/null"
for ((i = 0; i < 100; i++)); do grep -q held "$W/held" && break; sleep 0.1; done
refused "$DEV is in use: another program holds it open exclusively" \
	"${C[@]}" --backends "dev:$DEV:ext4" --destroy-device "$DEV"
kill $HOLDER && wait $HOLDER 2>/dev/null

# ---- ext4 and xfs on the device, taking turns ---------------------------------
echo none >"/sys/block/$NAME/queue/scheduler" || fail "could not set $DEV's elevator"
echo 128 >"/sys/block/$NAME/queue/read_ahead_kb"
queue_before=$(cat "/sys/block/$NAME/queue/scheduler" "/sys/block/$NAME/queue/read_ahead_kb")
"$PGLOAD" compare --gen 0.002 --backends "dev:$DEV:ext4,dev:$DEV:xfs" --destroy-device "$DEV" \
	--profiles native --elevators mq-deadline --queue-set read_ahead_kb=512 --runs 2 \
	--stream-mb 4 --out "$W/report" >"$W/stdout" 2>"$W/stderr" ||
	{ cat "$W/stderr"; fail "compare on dev:$DEV failed"; }
assert_compare_clean "$(compare_work_dir "$W/stderr")"
for fs in ext4 xfs; do
	cell="dev:$NAME:$fs/native elevator=mq-deadline queue.read_ahead_kb=512"
	grep -qF -- "$cell  " "$W/stdout" || { cat "$W/stdout"; fail "no row for $cell"; }
	sed -n '/^Block queues/,/^$/p' "$W/stdout" | grep -F -- "$cell " | grep -q ' mq-deadline read_ahead_kb=512 ' ||
		{ cat "$W/stdout"; fail "the queue table lacks $cell's queue as set"; }
done
grep -q "^Cells on one device take turns on it (a file system made afresh, initdb, for each run): dev:$NAME:ext4/native" "$W/stdout" ||
	{ cat "$W/stdout"; fail "the table does not say the cells took turns"; }
[ "$(grep -c "its turn on $DEV" "$W/stderr")" = 4 ] ||
	{ cat "$W/stderr"; fail "not 4 turns (2 cells x 2 runs) on $DEV"; }
python3 - "$W/report/results.json" "$DEV" <<'PY' || fail "results.json does not name the device"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["cells"]) == 2
for c in d["cells"]:
    assert c["backend_path"] == sys.argv[2] and c["set_up_per_run"] is True, c
    assert c["runs"] == 2 and c["stream"]["device_read_mb_s"] > 0, c
PY
[ "$queue_before" = "$(cat "/sys/block/$NAME/queue/scheduler" "/sys/block/$NAME/queue/read_ahead_kb")" ] ||
	fail "the device's queue is not as it was: $(cat "/sys/block/$NAME/queue/scheduler" "/sys/block/$NAME/queue/read_ahead_kb")"
[ "$(blkid -p -o value -s TYPE "$DEV")" = xfs ] || fail "the device does not hold the last cell's file system"
grep -q "^/dev/$NAME " /proc/mounts && fail "$DEV left mounted"
echo "ok: every refusal before anything was set up; two file systems took turns on the device"
