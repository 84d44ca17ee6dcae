#!/bin/bash
# test_differential.sh -- seeded randomized differential test of pgiofs:
# helper_fsx applies the same random operations (writes up to 300 KiB at
# random offsets, truncates, hole punching, renames, links, ... with files
# kept open across operations) to a plain directory and to a pgiofs mount of
# another directory on the same filesystem, requires the same result and
# errno for each, and compares the two trees every 100 operations.
#
# After the runs the mount is taken down and each plain tree is compared with
# its backing directory (everything reached the backing store), then with a
# fresh mount of it (cold-cache reads through the daemon).
#
# Configurations: pgiofs defaults with plain names; defaults with the names of
# a PostgreSQL data directory (pgiofs treats relation, WAL and temp files by
# class, e.g. O_DIRECT on the backing file); the same with write-back caching
# off (another kernel write path) when pgiofs has that tunable; the dbaware
# and noop (no write-back caching) profiles, whose queued writes keep or copy
# their data; a /dev/fuse descriptor per worker (fuse.clone_fd) with workers
# starting and exiting (max_threads 4, max_idle_threads 1).  Seeds are fixed
# so a failure reproduces; FSX_SEEDS, FSX_SEEDS_PG, FSX_SEEDS_NOWB,
# FSX_SEEDS_QUEUED, FSX_SEEDS_CLONE and FSX_OPS override them for longer
# soak runs, e.g.
# FSX_SEEDS="$(seq 100 199)" FSX_OPS=20000 tests/run.sh differential.
. "$(dirname "$0")/../lib.sh"

need_root
H=$TESTBUILD/fuse/helper_fsx
[ -x "$H" ] || fail "$H not built (run make)"
[ -x "$BIN/pgiofs" ] || fail "$BIN/pgiofs not built (run make)"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed"

SEEDS=${FSX_SEEDS:-"1 2 3"}
SEEDS_PG=${FSX_SEEDS_PG:-"4 5 6"}
SEEDS_NOWB=${FSX_SEEDS_NOWB:-"7 8"}
SEEDS_QUEUED=${FSX_SEEDS_QUEUED:-"9"}
SEEDS_CLONE=${FSX_SEEDS_CLONE:-"10"}
OPS=${FSX_OPS:-4000}

T=$(mktempdir)
bad=()

# fsx ARGS... -- run helper_fsx with a time limit, show its output on failure.
fsx() {
	local out=$T/fsx.out rc
	timeout -k 5 300 "$H" "$@" >"$out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -eq 124 ] && echo "helper_fsx $* timed out"
		cat "$out"
		return 1
	fi
	head -n 1 "$out"
	return 0
}

# config TAG SEEDS NAMES MOUNTOPTS... -- one mount, one subdirectory per seed.
config() {
	local tag=$1 seeds=$2 names=$3 s
	shift 3
	local d=$T/$tag
	mkdir -p "$d/native" "$d/backing" "$d/mnt"
	echo "== $tag (pgiofs $*): --names $names, seeds $seeds, $OPS operations each"
	pgiofs_mount "$d/backing" "$d/mnt" --set time_gran_ns=1 "$@"
	for s in $seeds; do
		mkdir "$d/native/s$s" "$d/mnt/s$s" || fail "cannot create s$s"
		fsx --seed "$s" --ops "$OPS" --names "$names" "$d/native/s$s" "$d/mnt/s$s" ||
			bad+=("$tag seed $s")
	done
	pgiofs_umount "$d/mnt" || bad+=("$tag: unmount failed")
	for s in $seeds; do
		fsx --compare "$d/native/s$s" "$d/backing/s$s" || bad+=("$tag seed $s: backing tree")
	done
	pgiofs_mount "$d/backing" "$d/mnt" --set time_gran_ns=1 "$@"
	for s in $seeds; do
		fsx --compare "$d/native/s$s" "$d/mnt/s$s" || bad+=("$tag seed $s: after remount")
	done
	pgiofs_umount "$d/mnt" || bad+=("$tag: unmount failed")
}

config defaults "$SEEDS" plain
# With the write-back cache and pg names, WAL direct: the default
# (passthrough) mounts a connection of its own over every pg_wal the
# operations make, which by design is not a plain directory any more (rmdir
# and rename over it fail with EBUSY, renames across it with EXDEV:
# docs/pgiofs.md "WAL modes"); test_walmount.sh holds that arrangement.
WALDIRECT=(-s files.wal_mode=direct)
config pg-names "$SEEDS_PG" pg "${WALDIRECT[@]}"
if "$BIN/pgiofs" --help-tunables 2>&1 | grep -q "fuse.writeback_cache"; then
	config no-writeback "$SEEDS_NOWB" pg -s fuse.writeback_cache=no -s fuse.keep_cache=no
else
	echo "note: pgiofs has no fuse.writeback_cache tunable; that configuration left out"
fi
# a queueing scheduler keeps a write's data after the handler returns: small
# writes are copied out of the receive buffer, large ones take it (fs.c)
config dbaware "$SEEDS_QUEUED" pg --profile dbaware "${WALDIRECT[@]}"
config noop-no-writeback "$SEEDS_QUEUED" pg --profile noop -s fuse.writeback_cache=no -s fuse.keep_cache=no
# workers with a /dev/fuse descriptor each, coming and going (loop.c, wire.c)
config clone-fd "$SEEDS_CLONE" pg -s fuse.clone_fd=yes -s fuse.max_threads=4 \
	-s fuse.max_idle_threads=1 "${WALDIRECT[@]}"

if [ ${#bad[@]} -gt 0 ]; then
	fail "pgiofs differs from the backing filesystem: $(printf '%s; ' "${bad[@]}")"
fi
echo "PASS: every operation and every tree comparison agreed"
