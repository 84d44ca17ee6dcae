#!/bin/bash
# test_devqueue.sh -- files.device_queue: at mount pgiofs sets the backing
# device's block queue for commits (scheduler mq-deadline where it was none
# or kyber, writeback throttling off, mq-deadline's async_depth
# files.device_write_depth where it was the kernel's default, and with it
# nr_requests files.device_requests where above, max_sectors_kb
# files.device_request_kb where the kernel's default), says so in
# `pgiofs stat`, and puts
# back at unmount what it changed, unless someone changed it since.  On
# ext4 on a loop device whose queue/rotational the test sets:
#   - auto on a rotational device with none and wbt_lat_usec 2000: set,
#     then put back;
#   - auto on a device that does not say it is rotational: left as is, and
#     pgiofs stat says why;
#   - yes on that device with kyber: set, kyber put back;
#   - no: left as is;
#   - changed by the administrator while mounted (bfq, or kyber where the
#     kernel has no bfq; 5000): kept;
#   - already mq-deadline without wbt: only the depth set, then put back;
#   - files.device_write_depth 16, and 0 (left as is);
#   - files.device_requests and files.device_request_kb: lowered, put
#     back, an administrator's value kept; nr_requests put back gives
#     async_depth the kernel's default, or the administrator's again;
#   - an async_depth of the administrator's (not the kernel's default):
#     kept, and with wbt off nothing to do, nothing put back;
#   - a bad value refused at mount, naming it, with no mount left.
source "$(dirname "$0")/../lib.sh"
need_root
command -v python3 >/dev/null || fail "python3 is not installed"

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 64
Q=/sys/block/${LOOP#/dev/}/queue
grep -qw mq-deadline "$Q/scheduler" || skip "the kernel offers no mq-deadline for $LOOP"
[ -w "$Q/wbt_lat_usec" ] || skip "$LOOP has no writeback throttling (queue/wbt_lat_usec)"
grep -qw kyber "$Q/scheduler" || skip "the kernel offers no kyber for $LOOP"
# put the queue back as it was, whatever happens
old_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$Q/scheduler") old_wbt=$(cat "$Q/wbt_lat_usec")
old_rot=$(cat "$Q/rotational") old_kb=$(cat "$Q/max_sectors_kb")
on_exit "echo $old_sched >$Q/scheduler; echo $old_wbt >$Q/wbt_lat_usec; echo $old_rot >$Q/rotational; echo $old_kb >$Q/max_sectors_kb"

sched() { sed 's/.*\[\(.*\)\].*/\1/' "$Q/scheduler"; }
depth() { cat "$Q/iosched/async_depth"; }
# the kernel's default async_depth under mq-deadline: nr_requests (3/4 of
# it on some other kernels), as a fresh mq-deadline has it (a loop device
# that is used again keeps its queue's elevator and its tunables)
echo none >"$Q/scheduler" && echo mq-deadline >"$Q/scheduler" ||
	fail "cannot set $LOOP's scheduler to mq-deadline"
kdepth=$(depth) nr=$(cat "$Q/nr_requests")
[ "$kdepth" = "$nr" ] || [ "$kdepth" = $((3 * nr / 4)) ] ||
	fail "mq-deadline's async_depth is $kdepth, neither nr_requests $nr nor 3/4 of it"
echo "mq-deadline's default async_depth: $kdepth of nr_requests $nr"
# the kernel's default max_sectors_kb: max_hw_sectors_kb, at most 1280
kkb=$(cat "$Q/max_hw_sectors_kb")
[ "$kkb" -gt 1280 ] && kkb=1280
[ "$kkb" -gt 256 ] || skip "$LOOP takes requests of $kkb KiB at most: nothing to lower"
[ "$nr" -gt 16 ] || skip "$LOOP's nr_requests under mq-deadline is $nr: nothing to lower"
# queue ROTATIONAL SCHED WBT -- set the loop device's queue
# (through none: a fresh elevator, with its default tunables; requests of
# the kernel's default size)
queue() {
	echo "$1" >"$Q/rotational" && echo none >"$Q/scheduler" && echo "$2" >"$Q/scheduler" &&
		echo "$3" >"$Q/wbt_lat_usec" && echo "$kkb" >"$Q/max_sectors_kb" ||
		fail "cannot set $LOOP's queue to rotational $1, $2, wbt $3"
}
# expect WHEN SCHED WBT -- the queue is SCHED with wbt_lat_usec WBT
expect() {
	[ "$(sched)" = "$2" ] || fail "$label: $1, $LOOP's scheduler is $(sched), want $2"
	[ "$(cat "$Q/wbt_lat_usec")" = "$3" ] ||
		fail "$label: $1, $LOOP's wbt_lat_usec is $(cat "$Q/wbt_lat_usec"), want $3"
}
# stat_says TEXT -- pgiofs stat's device queue line is TEXT
stat_says() {
	local line
	line=$("$BIN/pgiofs" stat "$M" | grep '^device queue') || fail "$label: pgiofs stat has no device queue line"
	echo "$label: $line"
	[ "$line" = "$1" ] || fail "$label: pgiofs stat says \"$line\", want \"$1\""
}
# limits -- nr_requests, max_sectors_kb and what pgiofs found of them
# (--json), then the queue's own
limits() {
	"$BIN/pgiofs" stat "$M" --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["device_queue"]; print(d["nr_requests"], d["nr_requests_was"], d["max_sectors_kb"], d["max_sectors_kb_was"], end=" ")'
	echo "$(cat "$Q/nr_requests") $(cat "$Q/max_sectors_kb")"
}
json_set() {
	"$BIN/pgiofs" stat "$M" --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["device_queue"]; print(str(d["set"]).lower(), d["scheduler_was"] or "-", d["wbt_lat_usec_was"], d["async_depth"], d["async_depth_was"])'
}
dev=${LOOP#/dev/}

label="auto, rotational"
queue 1 none 2000
pgiofs_mount "$B" "$M"
expect "mounted" mq-deadline 0
[ "$(depth)" = 8 ] || fail "$label: async_depth is $(depth), want 8"
stat_says "device queue (files.device_queue = auto): $dev: scheduler mq-deadline (was none), wbt_lat_usec 0 (was 2000), async_depth 8 (was $kdepth), nr_requests 16 (was $nr), max_sectors_kb 256 (was $kkb); put back at unmount"
[ "$(json_set)" = "true none 2000 8 $kdepth" ] || fail "$label: pgiofs stat --json says $(json_set)"
[ "$(limits)" = "16 $nr 256 $kkb 16 256" ] || fail "$label: nr_requests, max_sectors_kb: $(limits)"
echo data >"$M/f" && sync "$M/f" || fail "$label: writing through the mount failed"
pgiofs_umount "$M" || fail "$label: cannot unmount"
expect "after the unmount" none 2000
[ "$(cat "$Q/max_sectors_kb")" = "$kkb" ] || fail "$label: after the unmount, max_sectors_kb is $(cat "$Q/max_sectors_kb"), want $kkb"

label="auto, not rotational"
queue 0 none 2000
pgiofs_mount "$B" "$M"
expect "mounted" none 2000
stat_says "device queue (files.device_queue = auto): left as is: the device does not say it is rotational"
pgiofs_umount "$M" || fail "$label: cannot unmount"
expect "after the unmount" none 2000

label="yes, kyber"
queue 0 kyber 2000
pgiofs_mount "$B" "$M" --set files.device_queue=yes
expect "mounted" mq-deadline 0
stat_says "device queue (files.device_queue = yes): $dev: scheduler mq-deadline (was kyber), wbt_lat_usec 0 (was 2000), async_depth 8 (was $kdepth), nr_requests 16 (was $nr), max_sectors_kb 256 (was $kkb); put back at unmount"
pgiofs_umount "$M" || fail "$label: cannot unmount"
expect "after the unmount" kyber 2000

label="no"
queue 1 none 2000
pgiofs_mount "$B" "$M" --set files.device_queue=no
expect "mounted" none 2000
stat_says "device queue (files.device_queue = no): left as is"
pgiofs_umount "$M" || fail "$label: cannot unmount"

label="changed while mounted"
queue 1 none 2000
pgiofs_mount "$B" "$M"
expect "mounted" mq-deadline 0
# the administrator's elevator: bfq, or kyber on a kernel built without it
admin=bfq
grep -qw bfq "$Q/scheduler" || admin=kyber
echo "$admin" >"$Q/scheduler" && echo 5000 >"$Q/wbt_lat_usec" || fail "$label: cannot change the queue"
pgiofs_umount "$M" || fail "$label: cannot unmount"
expect "after the unmount" "$admin" 5000

label="already mq-deadline, wbt off"
queue 1 mq-deadline 0
pgiofs_mount "$B" "$M"
[ "$(json_set)" = "true - -1 8 $kdepth" ] || fail "$label: pgiofs stat --json says $(json_set)"
stat_says "device queue (files.device_queue = auto): $dev: scheduler mq-deadline, wbt_lat_usec 0, async_depth 8 (was $kdepth), nr_requests 16 (was $nr), max_sectors_kb 256 (was $kkb); put back at unmount"
pgiofs_umount "$M" || fail "$label: cannot unmount"
[ "$(depth)" = "$kdepth" ] || fail "$label: after the unmount, async_depth is $(depth), want $kdepth"
[ "$(cat "$Q/nr_requests") $(cat "$Q/max_sectors_kb")" = "$nr $kkb" ] ||
	fail "$label: after the unmount, nr_requests and max_sectors_kb are $(cat "$Q/nr_requests") $(cat "$Q/max_sectors_kb"), want $nr $kkb"

label="device_write_depth 16"
queue 1 mq-deadline 0
pgiofs_mount "$B" "$M" --set files.device_write_depth=16
[ "$(depth)" = 16 ] || fail "$label: async_depth is $(depth), want 16"
echo 7 >"$Q/iosched/async_depth" || fail "$label: cannot change async_depth"
pgiofs_umount "$M" || fail "$label: cannot unmount"
[ "$(depth)" = 7 ] || fail "$label: after the unmount, async_depth is $(depth), want 7 (changed while mounted)"
[ "$(cat "$Q/nr_requests")" = "$nr" ] || fail "$label: after the unmount, nr_requests is $(cat "$Q/nr_requests"), want $nr"

label="device_requests 32, device_request_kb 128"
queue 1 none 2000
pgiofs_mount "$B" "$M" --set files.device_requests=32 --set files.device_request_kb=128
[ "$(limits)" = "32 $nr 128 $kkb 32 128" ] || fail "$label: nr_requests, max_sectors_kb: $(limits)"
[ "$(depth)" = 8 ] || fail "$label: async_depth is $(depth), want 8"
pgiofs_umount "$M" || fail "$label: cannot unmount"
[ "$(cat "$Q/max_sectors_kb")" = "$kkb" ] || fail "$label: after the unmount, max_sectors_kb is $(cat "$Q/max_sectors_kb")"

label="the administrator's nr_requests and max_sectors_kb"
queue 1 mq-deadline 0
echo 12 >"$Q/nr_requests" && echo 512 >"$Q/max_sectors_kb" || fail "$label: cannot set the queue"
pgiofs_mount "$B" "$M"
stat_says "device queue (files.device_queue = auto): $dev: scheduler mq-deadline, wbt_lat_usec 0, async_depth 8 (was 12); put back at unmount"
[ "$(limits)" = "12 -1 512 -1 12 512" ] || fail "$label: nr_requests, max_sectors_kb: $(limits)"
pgiofs_umount "$M" || fail "$label: cannot unmount"
[ "$(depth) $(cat "$Q/nr_requests") $(cat "$Q/max_sectors_kb")" = "12 12 512" ] ||
	fail "$label: after the unmount, async_depth, nr_requests, max_sectors_kb: $(depth) $(cat "$Q/nr_requests") $(cat "$Q/max_sectors_kb")"

label="device_write_depth 0"
queue 1 none 2000
pgiofs_mount "$B" "$M" --set files.device_write_depth=0
[ "$(depth)" = "$kdepth" ] || fail "$label: async_depth is $(depth), want the kernel's $kdepth"
[ "$(json_set)" = "true none 2000 $kdepth -1" ] || fail "$label: pgiofs stat --json says $(json_set)"
pgiofs_umount "$M" || fail "$label: cannot unmount"

label="nothing to do"
queue 1 mq-deadline 0
echo 12 >"$Q/iosched/async_depth" && echo 512 >"$Q/max_sectors_kb" || fail "$label: cannot set async_depth"
pgiofs_mount "$B" "$M"
[ "$(depth)" = 12 ] || fail "$label: async_depth is $(depth), want the administrator's 12"
[ "$(json_set)" = "false - -1 12 -1" ] || fail "$label: pgiofs stat --json says $(json_set)"
stat_says "device queue (files.device_queue = auto): left as is"
echo kyber >"$Q/scheduler" || fail "$label: cannot change the scheduler"
pgiofs_umount "$M" || fail "$label: cannot unmount"
expect "after the unmount (nothing to put back)" kyber 0

label="bad value"
if out=$("$BIN/pgiofs" --set files.device_queue=maybe "$B" "$M" 2>&1); then
	pgiofs_umount "$M"
	fail "$label: pgiofs mounted with files.device_queue=maybe"
fi
echo "$label: $out"
[[ $out == *device_queue* && $out == *maybe* ]] || fail "$label: the error does not name the setting and its value: $out"
assert_no_mount "$M"
if out=$("$BIN/pgiofs" --set files.device_write_depth=-2 "$B" "$M" 2>&1); then
	pgiofs_umount "$M"
	fail "$label: pgiofs mounted with files.device_write_depth=-2"
fi
echo "$label: $out"
[[ $out == *device_write_depth* && $out == *-2* ]] || fail "$label: the error does not name the setting and its value: $out"
assert_no_mount "$M"
echo "ok"
