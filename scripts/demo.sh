#!/bin/sh
# demo.sh -- the README's main job (`make demo`): the seeds' comparison,
# the same database load on the same disk under different elevators.  On
# a 2004-era hdd modelled by pgdisk (54 MB/s, 8.5 ms seeks, 7200 rpm) with
# ext4, a generated import during which the kernel's elevators make
# commits wait up to about a second (seconds at scale 2, too long for a
# demo) runs while 4 pgbench-like clients commit, in
# fresh PostgreSQL clusters: natively under the kernel's mq-deadline and
# bfq (kyber on a kernel built without bfq), and through pgiofs with its
# dbaware profile (over the kernel's none, which pgiofs's device queue
# setting makes mq-deadline holding a few writes).  Three interleaved runs
# each; it prints the table (import time, commit latency
# p50/p99/p99.9/max and tps during the import), the best cell of each
# figure and whether the kernel or pgiofs wins it, each cell's commit
# latency over the import with its stalls, the streaming figures of each
# disk, and the path of the report (index.html with charts, results.json,
# results.csv).
#
# About 5 minutes on a quiet 2-core machine (300 s), more on a busy one.
# DEMO_SCALE (default 1, about 100 MB of COPY data), DEMO_RUNS (default 3),
# DEMO_CLIENTS (default 4) and DEMO_PROFILES (default dbaware; the seeds'
# deadline-2.6 and as-2.6 too: DEMO_PROFILES=dbaware,deadline-2.6,as-2.6,
# a minute and a half more each) change the size; DEMO_OUT (default
# demo-report/) is where the report goes.  Needs root (loop devices,
# mounts).  Nothing else is left behind: pgload compare removes its
# clusters, mounts, loop devices, pgdisk daemons and images.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
SCALE=${DEMO_SCALE:-1}
RUNS=${DEMO_RUNS:-3}
CLIENTS=${DEMO_CLIENTS:-4}
PROFILES=${DEMO_PROFILES:-dbaware}
OUT=${DEMO_OUT:-$TOP/demo-report}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: needs root (it makes loop devices and mounts); try: sudo make demo" >&2
	exit 1
fi
# bfq, the kernel's answer to the seeds' anticipatory elevator, where this
# kernel has it (a build option); kyber otherwise
SECOND=kyber
for f in /sys/block/*/queue/scheduler; do
	grep -qw bfq "$f" 2>/dev/null && SECOND=bfq
	break
done
echo "demo: pgload compare on a modelled 2004 hdd with ext4: the kernel's mq-deadline and $SECOND" \
	"against pgiofs's $PROFILES, an import (scale $SCALE) under" \
	"$CLIENTS OLTP clients, $RUNS runs each" >&2
[ "$SECOND" = bfq ] || echo "demo: this kernel has no bfq (it has: $(sed 's/[][]//g; s/ *$//' "$f")); kyber instead" >&2
exec "$TOP/bin/pgload" compare --gen "$SCALE" --backends hdd:ext4 \
	--profiles "native,$PROFILES" --elevators "mq-deadline,$SECOND" \
	--oltp "$CLIENTS" --runs "$RUNS" --stream-mb 16 --out "$OUT"
