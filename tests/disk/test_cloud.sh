#!/bin/bash
# test_cloud.sh -- pgdisk serving a capped cloud volume through a loop device
# with direct I/O, fio as the client, checked on the model's own counters
# and request log (--requests), not on wall-clock figures:
#   - gp3 (its IOPS cap at 500, within a sanitizer build's reach): random
#     16 KiB writes 32 at a time, verified (fio --verify) after
#     they completed out of arrival order (the log shows modelled
#     completions passing each other, stats replies overtaken by later
#     requests' replies); the IOPS cap held requests back, and never more
#     operations were admitted over the run than 500 a second allow (plus
#     the bucket); each request counted as EBS counts it, recomputed from
#     the log (4 KiB sequential writes merged per 256 KiB, the loop
#     device's pieces of 1 MiB writes, about 512 KiB, split per 256 KiB
#     begun, random ones one each); stats agree with the log
#     (operations, what held requests back) and show the caps;
#   - the base latency drawn for each request: median within 10 % of
#     cloud_latency_us;
#   - gp2:100 with a small credit bucket (600): the credits ran out
#     (credits_outs, credits_empty) exactly when the operations admitted
#     reached the bucket plus the baseline's refill (within the IOPS
#     bucket), then requests waited for credits;
#   - pgdisk cut refuses a request log; realtime: stats say how the threads
#     were scheduled, and realtime = no leaves them in the normal class.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/disklib.sh"
need_root
command -v fio >/dev/null || skip "fio is not installed (scripts/install-deps.sh installs it)"

D=$(mktempdir)
mkdir "$D/m" "$D/g"
disk_image "$D/img" 64M
disk_image "$D/img2" 64M

# fio_on DEV ARGS... -- one fio job on DEV, direct, io_uring
fio_on() {
	local dev=$1
	shift
	fio --name=t --filename="$dev" --ioengine=io_uring --direct=1 "$@" >"$D/fio.out" 2>&1 ||
		fail "fio $* failed: $(tail -5 "$D/fio.out")"
}

# --- gp3 -------------------------------------------------------------------
# gp3 with its IOPS cap at 500, which a sanitizer build of pgdisk on a busy
# machine still reaches
disk_start "$D/img" "$D/m" --model gp3 --set cloud_iops=500 --requests "$D/req.log"
[ "$(stat_of "$D/m" model)" = gp3 ] && [ "$(stat_of "$D/m" cloud_iops)" = 500 ] &&
	[ "$(stat_of "$D/m" cloud_mib_s)" = 125 ] && [ "$(stat_of "$D/m" cloud_latency_us)" = 1000 ] ||
	fail "stats do not show gp3's caps: $(grep '^cloud_' "$D/m/stats" | tr '\n' ' ')"
sched=$(stat_of "$D/m" sched_completion)
[[ $sched =~ ^(fifo:20|nice:-?[0-9]+|other)$ ]] || fail "sched_completion is \"$sched\""
echo "ok: gp3's caps in stats; the completion thread: $sched"
LOOP=$(loop_attach "$D/m/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none

# 1,024 random writes then read back and checked: completions out of order
# must not lose or misplace data
fio_on "$LOOP" --rw=randwrite --bs=16k --iodepth=32 --size=16M --verify=crc32c --do_verify=1 --verify_state_save=0 \
	--randseed=7
echo "ok: fio verified 16 MiB of random writes completed out of order"
fio_on "$LOOP" --rw=write --bs=4k --iodepth=32 --offset=32M --size=8M
fio_on "$LOOP" --rw=write --bs=1m --iodepth=4 --offset=40M --size=16M
# reads one at a time
fio_on "$LOOP" --rw=randread --bs=16k --iodepth=1 --size=32M --number_ios=400 --randseed=9
flush_stats=$(cat "$D/m/stats")
loop_detach "$LOOP" "$D/m/disk"
disk_stop "$D/m" "$(disk_pid "$D/m")"
"$PGDISK" log --records "$D/req.log" >"$D/records" || fail "pgdisk log failed: $(tail -3 "$D/records")"
grep -q '^kind requests$' "$D/records" || fail "the request log does not say it is one"
grep -q '^ended clean$' "$D/records" || fail "the request log did not end cleanly"
# columns: 1 seq, 2 kind, 3 time, 4 offset, 5 length, 6 flags, 7 limit,
# 8 wait_ns, 9 service_ns, 10 ops, 11 iops tokens, 12 throughput tokens,
# 13 credits
awk 'NF == 13' "$D/records" >"$D/recs"
[ "$(wc -l <"$D/recs")" -gt 2500 ] || fail "too few records: $(wc -l <"$D/recs")"

# completions out of arrival order: done = arrival + wait + service
inv=$(awk '{ d = $3 + $8 + $9; if (NR > 1 && d < last) n++; last = d } END { print n + 0 }' "$D/recs")
over=$(echo "$flush_stats" | awk '$1 == "overtaken" { print $2 }')
[ "$inv" -gt 0 ] || fail "no modelled completion passed an earlier one"
[ "$over" -gt 0 ] || fail "no reply went out after a later request's (overtaken $over)"
echo "ok: $inv modelled completions passed an earlier request's; $over replies were overtaken"

# the accounting rule, recomputed: a read or write continuing the last
# one's direction and end joins its operation while it stays within 256 KiB
bad=$(awk 'BEGIN { op = 262144 }
	$2 == "read" || $2 == "write" || $2 == "zero" {
		dir = ($2 == "read") ? "r" : "w"
		if (run && dir == rdir && $4 == rend && run + $5 <= op) { n = 0; run += $5; rend += $5 }
		else { n = $5 ? int(($5 + op - 1) / op) : 1; rdir = dir; rend = $4 + $5; run = $5 - (n - 1) * op }
		if (n != $10) { print $0 " expected " n; bad++ }
		next }
	{ if ($10 != 0) { print $0 " expected 0"; bad++ } }
	END { print bad + 0 }' "$D/recs" | tail -1)
[ "$bad" -eq 0 ] || fail "$bad records counted otherwise than EBS's rule"
merged=$(awk '$2 == "write" && $5 == 4096 && $10 == 0' "$D/recs" | wc -l)
split=$(awk '$2 == "write" && $5 > 262144 && $10 >= 2' "$D/recs" | wc -l)
[ "$merged" -gt 0 ] && [ "$split" -gt 0 ] || fail "no merged 4 KiB write ($merged) or split write ($split)"
echo "ok: every request counted as EBS counts it ($merged 4 KiB writes merged, $split writes split)"

# the IOPS cap held requests back, and never more was admitted than it allows
held=$(awk '$7 == "iops"' "$D/recs" | wc -l)
[ "$held" -gt 100 ] || fail "the IOPS cap held back only $held requests"
over=$(awk '{ s = $3 + $8; if (!first) first = s; last = s; ops += $10 }
	END { allowed = 500 * (last - first) / 1e9 + 5 + 1; print (ops > allowed) ? ops " > " allowed : "" }' "$D/recs")
[ -z "$over" ] || fail "more operations admitted than the cap allows: $over"
# stats agree with the log
ops=$(awk '{ s += $10 } END { print s }' "$D/recs")
sops=$(echo "$flush_stats" | awk '$1 == "cloud_ops" { print $2 }')
siops=$(echo "$flush_stats" | awk '$1 == "limit_iops" { print $2 }')
[ "$ops" = "$sops" ] || fail "stats count $sops operations, the log $ops"
[ "$held" = "$siops" ] || fail "stats count $siops requests held back by the IOPS cap, the log $held"
echo "ok: $held requests held back by the IOPS cap, $ops operations, as stats say"

# the base latency: the median of every request's draw (its service time,
# whatever held it back before)
med=$(awk '$2 != "end" { print $9 }' "$D/recs" | sort -n |
	awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
awk -v m="$med" 'BEGIN { exit !(m > 900000 && m < 1100000) }' ||
	fail "median base latency $med ns, not within 10% of 1 ms"
echo "ok: median base latency $med ns"
"$PGDISK" cut "$D/req.log" "$D/img" "$D/cut.img" >"$D/cut.out" 2>&1 && fail "pgdisk cut took a request log"
grep -q "is a request log" "$D/cut.out" || fail "pgdisk cut: $(cat "$D/cut.out")"
[ ! -e "$D/cut.img" ] || fail "pgdisk cut left an image"
echo "ok: pgdisk cut refuses a request log"

# --- gp2 with a small bucket: 600 credits, 300 baseline, 3,000 burst ------
# (a second or less of burst at what even a sanitizer build delivers)
rm -f "$D/req.log"
disk_start "$D/img2" "$D/g" --model gp2:100 --set cloud_credits=600 --set realtime=no \
	--requests "$D/req.log"
[ "$(stat_of "$D/g" cloud_baseline_iops)" = 300 ] && [ "$(stat_of "$D/g" credits)" = 600.000 ] ||
	fail "gp2:100: baseline $(stat_of "$D/g" cloud_baseline_iops), credits $(stat_of "$D/g" credits)"
[ "$(stat_of "$D/g" sched_completion)" = other ] || fail "realtime = no, but: $(stat_of "$D/g" sched_completion)"
LOOP=$(loop_attach "$D/g/disk")
loop_registered "$LOOP"
set_scheduler "$LOOP" none
fio_on "$LOOP" --rw=randwrite --bs=16k --iodepth=32 --time_based --runtime=3
cp "$D/g/stats" "$D/gstats"
loop_detach "$LOOP" "$D/g/disk"
disk_stop "$D/g" "$(disk_pid "$D/g")"
[ "$(awk '$1 == "credits_outs" { print $2 }' "$D/gstats")" -ge 1 ] &&
	[ "$(awk '$1 == "credits_empty" { print $2 }' "$D/gstats")" = 1 ] ||
	fail "the credits did not run out: $(grep credits "$D/gstats" | tr '\n' ' ')"
"$PGDISK" log --records "$D/req.log" | awk 'NF == 13' >"$D/recs" || fail "pgdisk log failed"
out=$(awk '$1 == "start_realtime_ns" { s = $2 } $1 == "credits_first_out_ns" { o = $2 } END { printf "%.0f", s + o }' "$D/gstats")
# operations admitted before the bucket ran out: the bucket and what the
# baseline earned meanwhile, give or take the IOPS bucket's 30
awk -v out="$out" '{ s = $3 + $8; if (!first && $10) first = s }
	$10 && s < out { ops += $10 }
	END { t = (out - first) / 1e9; want = 600 + 300 * t
		printf "credits ran out after %.3f s and %d operations; the bucket and the baseline: %.0f\n", t, ops, want
		exit !(ops >= want - 31 && ops <= want + 31) }' "$D/recs" ||
	fail "the credits did not run out when the operations reached the bucket and the baseline"
held=$(awk '$7 == "credits"' "$D/recs" | wc -l)
[ "$held" -gt 0 ] || fail "no request waited for credits"
echo "ok: credits ran out when spent; $held requests then waited for credits"
