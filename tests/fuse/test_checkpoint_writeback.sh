#!/bin/bash
# test_checkpoint_writeback.sh -- files.checkpoint_writeback_kb: an fsync
# from PostgreSQL's checkpointer starts the backing writeback of every
# relation file written through the backing page cache since (up to that
# much written to it), so that the backing
# file system allocates them in one journal transaction and the fsyncs of a
# checkpoint share its commit, as they do without pgiofs.
#
# The backing directory is an ext4 on a loop device, whose journal counts
# its commits (/proc/fs/jbd2/DEV-8/info); files are reached through the
# backing page cache (files.backing_direct = no).  Per round, 100 new heap
# files (base/1/NNNNN) are written through the mount and pushed to pgiofs
# with sync_file_range (what checkpoint_flush_after does), then fsynced one
# by one by a process whose title is the one given: the checkpointer's
# ("postgres: checkpointer " as PostgreSQL 15 sets it, "postgres: CLUSTER:
# checkpointer") must cost a
# few commits and count as a start of 100 files in `pgiofs stat`; any other
# process (a backend of a user named "checkpointer", a plain program), or
# the setting off, one commit per file and no start; files written more
# than the limit (24 KiB each against 16) are left to their own fsyncs, one
# commit each, and counted as such.  Every file's bytes
# are checked on the backing file system after the unmount.  Then a real
# PostgreSQL 15 on the mount: CREATE DATABASE and a CHECKPOINT (about 300
# new files) must be started by its checkpointer and commit the journal far
# fewer times than once per file.
source "$(dirname "$0")/../lib.sh"
need_root

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
ext4_on_loop "$B" 256
journal_info
mkdir -p "$B/base/1"

commits() { read -r n _ <"$INFO" && echo "$n"; }
# ckpt_stat KEY -- checkpoint_writeback.KEY of `pgiofs stat --json`
ckpt_stat() {
	"$BIN/pgiofs" stat "$M" --json | sed -n "s/.*\"checkpoint_writeback\":{[^}]*\"$1\":\([a-z0-9]*\).*/\1/p"
}

# fsync_round FIRST TITLE -- files base/1/FIRST.. FIRST+99 written, pushed
# to pgiofs and fsynced by a process titled TITLE; prints the journal
# commits of the fsyncs
fsync_round() {
	(exec -a "$2" /usr/bin/python3 - "$M/base/1" "$1" "$INFO" <<-'PY') || fail "writing and fsyncing the files from $1 as \"$2\" failed"
		import ctypes, os, sys
		libc = ctypes.CDLL(None, use_errno=True)
		def commits():
		    with open(sys.argv[3]) as f:
		        return int(f.read().split()[0])
		d, first = sys.argv[1], int(sys.argv[2])
		fds = [os.open("%s/%d" % (d, first + i), os.O_RDWR | os.O_CREAT, 0o600) for i in range(100)]
		for i, fd in enumerate(fds):
		    os.pwrite(fd, (b"%08d" % (first + i)) * 3072, 0)
		    # SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER: at pgiofs now
		    if libc.sync_file_range(fd, ctypes.c_long(0), ctypes.c_long(0), 7) != 0:
		        sys.exit("sync_file_range: %s" % os.strerror(ctypes.get_errno()))
		before = commits()
		for fd in fds:
		    os.fsync(fd)
		print(commits() - before)
		for fd in fds:
		    os.close(fd)
	PY
}

# round FIRST TITLE WANT(few|each|large) -- fsync_round, then check the
# commits and the starts, files and large files pgiofs counted
round() {
	local s0 f0 l0 n s1 f1 l1
	s0=$(ckpt_stat starts) f0=$(ckpt_stat files) l0=$(ckpt_stat large)
	n=$(fsync_round "$1" "$2")
	s1=$(ckpt_stat starts) f1=$(ckpt_stat files) l1=$(ckpt_stat large)
	echo "\"$2\" ($3): $n journal commits for 100 fsyncs; starts $s0 -> $s1, files $f0 -> $f1, large $l0 -> $l1"
	if [ "$3" = few ]; then
		[ "$n" -le 10 ] || fail "\"$2\": $n journal commits for 100 fsyncs of new files (at most 10 expected)"
		[ "$s1" -gt "$s0" ] && [ $((f1 - f0)) -ge 100 ] ||
			fail "\"$2\": pgiofs stat counts starts $s0 -> $s1, files $f0 -> $f1 (one more start, 100 more files expected)"
	elif [ "$3" = large ]; then
		[ "$n" -ge 90 ] || fail "\"$2\": only $n journal commits for 100 fsyncs of files over the limit"
		[ "$f1" = "$f0" ] && [ $((l1 - l0)) -ge 100 ] ||
			fail "\"$2\": files over the limit: files $f0 -> $f1, large $l0 -> $l1 (no more files, 100 more large ones expected)"
	else
		[ "$n" -ge 90 ] || fail "\"$2\": only $n journal commits for 100 fsyncs: the test no longer sees what it guards against"
		[ "$s1" = "$s0" ] || fail "\"$2\" is not the checkpointer, yet pgiofs started the writeback ($s0 -> $s1 starts)"
	fi
}

pgiofs_mount "$B" "$M" --set files.backing_direct=no --set files.checkpoint_writeback_kb=256
"$BIN/pgiofs" stat "$M" | grep '^checkpoint writeback (files written up to 256 KiB): 0 fsyncs' ||
	fail "pgiofs stat does not show the checkpoint writeback: $("$BIN/pgiofs" stat "$M" | head -n 8)"
round 20000 "postgres: checkpointer " few
round 20100 "postgres: main: checkpointer" few
round 20200 "postgres: checkpointer postgres [local] idle" each
round 20300 "python3" each
pgiofs_umount "$M" || fail "cannot unmount"

pgiofs_mount "$B" "$M" --set files.backing_direct=no --set files.checkpoint_writeback_kb=0
[ "$(ckpt_stat max_kb)" = 0 ] || fail "pgiofs stat --json says max_kb $(ckpt_stat max_kb) with files.checkpoint_writeback_kb = 0"
! "$BIN/pgiofs" stat "$M" | grep -q '^checkpoint writeback' || fail "pgiofs stat shows the checkpoint writeback while it is off"
round 20400 "postgres: checkpointer" each
pgiofs_umount "$M" || fail "cannot unmount"

pgiofs_mount "$B" "$M" --set files.backing_direct=no --set files.checkpoint_writeback_kb=16
round 20500 "postgres: checkpointer" large
pgiofs_umount "$M" || fail "cannot unmount"

/usr/bin/python3 - "$B/base/1" <<-'PY' || fail "the files on the backing file system are not what was written"
	import sys
	for f in range(20000, 20600):
	    with open("%s/%d" % (sys.argv[1], f), "rb") as h:
	        if h.read() != (b"%08d" % f) * 3072:
	            sys.exit("%s/%d differs" % (sys.argv[1], f))
	print("600 files intact on the backing file system")
PY

# PostgreSQL itself: CREATE DATABASE, then a CHECKPOINT writes and syncs
# template1's files anew
NATIVE=0
RUN=$T/run PORT=$(free_port) LABEL=postgres
PGDATA=$M/pg
mkdir "$RUN" && chown postgres "$RUN"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"
on_exit "cleanup_cluster '$RUN'"
pgiofs_mount "$B" "$M" -o allow_other --set files.backing_direct=no --set files.checkpoint_writeback_kb=256
mkdir "$PGDATA" && chown postgres "$PGDATA"
init_cluster </dev/null
start_server
sql "CREATE DATABASE d1" >/dev/null || fail_log "CREATE DATABASE failed" "$SERVER_LOG"
s0=$(ckpt_stat starts) f0=$(ckpt_stat files) c0=$(commits)
sql "CHECKPOINT" >/dev/null || fail_log "CHECKPOINT failed" "$SERVER_LOG"
c1=$(commits) s1=$(ckpt_stat starts) f1=$(ckpt_stat files)
echo "postgres: CHECKPOINT after CREATE DATABASE: $((c1 - c0)) journal commits; starts $s0 -> $s1, files $f0 -> $f1"
[ "$s1" -gt "$s0" ] && [ $((f1 - f0)) -ge 100 ] ||
	fail "PostgreSQL's checkpointer did not start the writeback (starts $s0 -> $s1, files $f0 -> $f1)"
[ $((c1 - c0)) -le $(((f1 - f0) / 4)) ] ||
	fail "the CHECKPOINT committed the journal $((c1 - c0)) times for $((f1 - f0)) new files"
stop_server
pgiofs_umount "$M" || fail "cannot unmount"
echo "PASS"
