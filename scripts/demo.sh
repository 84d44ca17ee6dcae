#!/bin/sh
# demo.sh -- the README's main job (`make demo`): load a generated workload
# into fresh PostgreSQL clusters on the local disk and on tmpfs, natively and
# through pgiofs with the deadline-2.6 and dbaware profiles, three runs each,
# interleaved, and print the seed-style table and the path of the report
# (index.html with charts, results.json, results.csv).
#
# About three minutes on 2 cores.  DEMO_SCALE (default 1, about 100 MB of
# COPY data) and DEMO_RUNS (default 3) change the size; DEMO_OUT (default
# demo-report/) is where the report goes.  Nothing else is left behind:
# pgload compare removes its clusters, mounts and directories.
set -eu

TOP=$(cd "$(dirname "$0")/.." && pwd)
SCALE=${DEMO_SCALE:-1}
RUNS=${DEMO_RUNS:-3}
OUT=${DEMO_OUT:-$TOP/demo-report}

# the local disk: a temporary directory on the file system of /var/tmp
# (persistent storage, unlike /tmp on some systems); pgload compare works in
# a fresh subdirectory of it
DISK=$(mktemp -d /var/tmp/pgiofs-demo.XXXXXX)
trap 'rm -rf "$DISK"' EXIT INT TERM
chmod 711 "$DISK"

echo "demo: pgload compare: local disk ($(df -PT "$DISK" | awk 'NR == 2 { print $2 }') at $DISK) and tmpfs," \
	"native vs pgiofs deadline-2.6 and dbaware, $RUNS runs each (scale $SCALE)" >&2
"$TOP/bin/pgload" compare --gen "$SCALE" --backends "dir:$DISK,tmpfs" \
	--profiles native,deadline-2.6,dbaware --runs "$RUNS" --out "$OUT"
