#!/bin/bash
# stats_cost.sh -- build and run bench/stats_cost.c: the cost of
# ios_stats_account() (without and with relation counters, measured side by
# side, medians) and ios_trace_write() per call (1 and 2 threads),
# beside a clock read and an 8 KiB pread from the page cache.
#
#   bench/stats_cost.sh [-n CALLS]
#
# Needs the release build of libiosched (made here if missing).  Prints the
# table on stdout; measures only, asserts nothing.
set -eu
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
BUILD=${BUILD:-build/release}
make -s "$BUILD/libiosched.a" "$BUILD/libcommon.a" >&2
mkdir -p "$BUILD/bench"
# shellcheck disable=SC2046
cc -std=gnu11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -Icommon -Iiosched \
	-o "$BUILD/bench/stats_cost" bench/stats_cost.c "$BUILD/libiosched.a" "$BUILD/libcommon.a" \
	$(pkg-config --libs liburing liblz4 inih) -lpthread -lm
exec "$BUILD/bench/stats_cost" "$@"
