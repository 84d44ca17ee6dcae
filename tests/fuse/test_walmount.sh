#!/bin/bash
# test_walmount.sh -- the default arrangement: files.wal_mode = passthrough
# with the write-back cache on, where one pgiofs daemon mounts a connection
# of its own (passthrough) over each pg_wal directory.
#
#   a. a fresh initdb on the mount (the defaults, root, allow_other) gets a
#      WAL mount over its pg_wal, made when initdb creates the directory;
#      `pgiofs stat MOUNT` names it; commits of a running server open WAL in
#      passthrough (counted, bytes not seen) while data files keep the
#      write-back cache; the writeback throttle times the WAL mount's
#      fsyncs and `pgiofs stat` says that is all it sees (a and b queue the
#      data files, iosched.data_inline = no: through the backing page cache
#      they would run at arrival, and dbaware then has no throttle); a plain unmount of
#      the mount fails (EBUSY) and changes nothing; SIGTERM unmounts both and
#      the daemon exits.
#   b. the existing cluster mounted again gets its WAL mount at start; with
#      wal_sync_method = open_datasync the throttle sees no WAL flush and
#      `pgiofs stat` says so; the
#      WAL mount unmounted by itself leaves the daemon serving WAL through
#      the mount (direct: WAL writes counted again), and `pgiofs stat` says
#      it ended; unmounting the mount then works and the daemon exits.
#   c. a cluster made with initdb --waldir (pg_wal a symbolic link to a
#      directory off the mount) gets no WAL mount; `umount -R` takes
#      everything down, the daemon exits.
#   d. `pgiofs stat` of a path in a WAL mount answers for the mount it is
#      in, the list of mounts shows the WAL mount as such (not as a daemon
#      that does not answer), and `pgiofs umount MOUNT` takes both down.
#   e. files.wal_nice and files.wal_io_class (a checks their defaults,
#      -10 and realtime): the WAL mount's threads (and
#      only they) run at that nice value and I/O class; a daemon without
#      CAP_SYS_NICE says it cannot have the nice value and still mounts;
#      `pgiofs stat` shows the priority the WAL mount has.
#   f. on a backing file system whose directory entries carry no file type
#      (DT_UNKNOWN: ext4 without the filetype feature, xfs with ftype=0) the
#      scan at start still finds an existing cluster and mounts over its
#      pg_wal, before anything looks it up.
#   g. a WAL mount whose connection ends while one of its requests waits in
#      the scheduler (a WAL fsync held back by fault injection) answers it
#      before it closes its /dev/fuse descriptor: a reply written after,
#      to that number, would reach whatever the daemon opened under it
#      (seen with strace: no writev to the number, or to -1, after the
#      close).
#   h. a directory opened through the mount before its WAL mount existed
#      (renamed into place as pg_wal) and the WAL mount both serve the
#      same backing pg_wal: a name created or removed through one is seen
#      through the other at once (no entry or negative entry of either kept
#      by the kernel past the change), and so is a file grown through the
#      mount's side (not the other way: with the write-back cache the
#      kernel keeps its own size of a file it knows, docs/pgiofs.md).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pgcluster.sh"
command -v python3 >/dev/null || fail "python3 is needed"

T=$(mktempdir)
BACKING=$T/backing MNT=$T/mnt RUN=$T/run
mkdir -p "$BACKING" "$MNT" "$RUN"
chown postgres: "$RUN"
chmod 700 "$RUN"
on_exit "cleanup_cluster '$RUN'"
on_exit "force_umount '$MNT'"

# fstype_at PATH -- the file system type of the mount exactly at PATH, or ""
fstype_at() {
	awk -v m="$1" '$5 == m { for (i = 7; $i != "-"; i++) ; t = $(i + 1) } END { print t }' /proc/self/mountinfo
}

# wait_wal_mount PATH -- until PATH is a pgiofs mount (5 s at most)
wait_wal_mount() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(fstype_at "$1")" = fuse.pgiofs ] && return 0
		sleep 0.1
	done
	fail "$LABEL: no WAL mount over $1; the daemon says: $(cat "$T/pgiofs.log")"
}

# stat_expect EXPR -- EXPR (python; s: the statistics, w: their "wal"
# class) must be true
stat_expect() {
	"$BIN/pgiofs" stat "$MNT" --json >"$T/stat.json" || fail "$LABEL: pgiofs stat failed"
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); w = s["classes"]["wal"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$T/stat.json" "$1" ||
		fail "$LABEL: statistics: not ($1): $(cat "$T/stat.json")"
}

# threads PID -- "name nice ioprio" of each of PID's threads
threads() {
	local t
	for t in /proc/"$1"/task/*; do
		echo "$(cat "$t/comm") $(awk '{ print $19 }' "$t/stat") $(ionice -p "${t##*/}" | tr -d ' ')"
	done
}

# daemon_gone -- the daemon of $MNT exits within 10 s
daemon_gone() {
	wait_daemon_gone "$MNT" || fail "$LABEL: the daemon did not exit"
	[ -z "$(grep " $T/" /proc/self/mountinfo)" ] || fail "$LABEL: left mounted: $(grep " $T/" /proc/self/mountinfo)"
}

# ---- a: a fresh initdb -------------------------------------------------------
LABEL=a
pgiofs_mount_fg "$T/pgiofs.log" "$BACKING" "$MNT" -o allow_other --set iosched.data_inline=no
mkdir "$MNT/pg" && chown postgres: "$MNT/pg" || fail "a: cannot make $MNT/pg"
PGDATA=$MNT/pg/data
PORT=$(free_port)
init_cluster
wait_wal_mount "$PGDATA/pg_wal"
stat_expect 's["wal_mode"] == "passthrough" and s["writeback_cache"] is True and s["wal_note"] == ""'
stat_expect '"pg/data/pg_wal (passthrough)" in s["wal_mounts"]'
# the WAL mount's thread has the defaults files.wal_nice = -10, wal_io_class = realtime
threads "$PGIOFS_PID" | grep -qx "pgiofs-walmnt -10 realtime:prio4" ||
	fail "a: the WAL mount's thread: $(threads "$PGIOFS_PID")"
stat_expect '"pg/data/pg_wal (passthrough), nice -10, I/O realtime" in s["wal_mounts"]'
"$BIN/pgiofs" stat "$MNT" | grep -q "^WAL mounts: $PGDATA/pg_wal (passthrough)" ||
	fail "a: pgiofs stat does not name the WAL mount"
start_server
pgc pgbench -h "$RUN" -p "$PORT" -i -s 1 -q postgres >"$RUN/pgbench-i.log" 2>&1 ||
	fail_log "a: pgbench -i failed" "$RUN/pgbench-i.log"
pgc pgbench -h "$RUN" -p "$PORT" -n -c 2 -T 3 postgres >"$RUN/pgbench.log" 2>&1 ||
	fail_log "a: pgbench failed" "$RUN/pgbench.log"
stat_expect 'w["passthrough_opens"] > 0 and w["bytes_seen"] != "all" and w["sync_ops"] > 0'
stat_expect 's["classes"]["heap"]["write_ops"] > 0'
# the throttle times the WAL mount's fsyncs, and says that is all it sees
stat_expect 's["throttle"]["wal_flushes"] > 0'
"$BIN/pgiofs" stat "$MNT" | grep -q '^throttle: WAL in passthrough: only its fsyncs are timed (with' ||
	fail "a: pgiofs stat does not say what the throttle sees: $("$BIN/pgiofs" stat "$MNT")"
# the next start (b) commits with O_DSYNC writes: nothing for the throttle
sql "ALTER SYSTEM SET wal_sync_method = open_datasync" >/dev/null || fail "a: ALTER SYSTEM failed"
if fusermount3 -u "$MNT" 2>"$T/fusermount.err"; then
	fail "a: fusermount3 -u of the mount succeeded while the WAL mount exists"
fi
grep -qi "busy" "$T/fusermount.err" || fail "a: fusermount3 -u said: $(cat "$T/fusermount.err")"
[ "$(fstype_at "$PGDATA/pg_wal")" = fuse.pgiofs ] || fail "a: the failed unmount changed the WAL mount"
sql "SELECT 1" >/dev/null || fail_log "a: the server does not answer after the failed unmount" "$SERVER_LOG"
stop_server
kill -TERM "$PGIOFS_PID"
daemon_gone
! grep -E "ERROR|error" "$T/pgiofs.log" || fail "a: the daemon logged an error"
log "a: fresh initdb got its WAL mount; SIGTERM took both down"

# ---- b: the existing cluster, its WAL mount unmounted alone ------------------
LABEL=b
pgiofs_mount_fg "$T/pgiofs.log" "$BACKING" "$MNT" -o allow_other --set iosched.data_inline=no
wait_wal_mount "$PGDATA/pg_wal"
start_server
sql "CREATE TABLE b0 AS SELECT g FROM generate_series(1, 1000) g" >/dev/null ||
	fail_log "b: a transaction failed" "$SERVER_LOG"
stat_expect 's["throttle"]["wal_flushes"] == 0 and w["passthrough_opens"] > 0'
"$BIN/pgiofs" stat "$MNT" | grep -q '^throttle: WAL in passthrough: only its fsyncs are timed; none seen' ||
	fail "b: pgiofs stat does not say the throttle sees no WAL flush: $("$BIN/pgiofs" stat "$MNT")"
stop_server
umount "$PGDATA/pg_wal" || fail "b: cannot unmount the WAL mount by itself"
kill -0 "$PGIOFS_PID" || fail "b: the daemon ended with its WAL mount"
stat_expect '"pg/data/pg_wal (ended)" in s["wal_mounts"]'
start_server
sql "CREATE TABLE b AS SELECT g FROM generate_series(1, 1000) g" >/dev/null ||
	fail_log "b: a transaction failed without the WAL mount" "$SERVER_LOG"
stat_expect 'w["write_ops"] > 0 and w["opens"] > w["passthrough_opens"]'
[ -z "$(fstype_at "$PGDATA/pg_wal")" ] || fail "b: the WAL mount came back"
stop_server
umount "$MNT" || fail "b: unmounting the mount failed once the WAL mount was gone"
daemon_gone
log "b: the existing cluster got its WAL mount at start; without it WAL went direct"

# ---- c: initdb --waldir: no WAL mount ----------------------------------------
LABEL=c
rm -rf "${BACKING:?}/pg"
mkdir -p "$T/waldir"
chown postgres: "$T/waldir"
pgiofs_mount_fg "$T/pgiofs.log" "$BACKING" "$MNT" -o allow_other
mkdir "$MNT/pg" && chown postgres: "$MNT/pg" || fail "c: cannot make $MNT/pg"
pgc initdb -D "$PGDATA" -U postgres -A trust --waldir="$T/waldir/wal" --no-instructions \
	>"$RUN/initdb.log" 2>&1 || fail_log "c: initdb --waldir failed" "$RUN/initdb.log"
[ -L "$BACKING/pg/data/pg_wal" ] || fail "c: pg_wal is not a symbolic link"
ls "$PGDATA/pg_wal/" >/dev/null || fail "c: cannot list pg_wal"
sleep 0.5
[ -z "$(fstype_at "$PGDATA/pg_wal")" ] && [ -z "$(fstype_at "$T/waldir/wal")" ] ||
	fail "c: a WAL mount over a --waldir pg_wal"
stat_expect 'not s["wal_mounts"].count("pg_wal (")'
umount -R "$MNT" || fail "c: umount -R failed"
daemon_gone

# ---- d: pgiofs stat and pgiofs umount with a WAL mount -----------------------
LABEL=d
rm -rf "${BACKING:?}/pg"
mkdir -p "$BACKING/pg/data/pg_wal" # what the scan at start takes for a cluster
echo 15 >"$BACKING/pg/data/PG_VERSION"
pgiofs_mount_fg "$T/pgiofs.log" "$BACKING" "$MNT" -o allow_other
wait_wal_mount "$PGDATA/pg_wal"
"$BIN/pgiofs" stat "$PGDATA/pg_wal" --json >"$T/stat.json" 2>"$T/stat.err" ||
	fail "d: pgiofs stat of the WAL mount failed: $(cat "$T/stat.err")"
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["mount"] != sys.argv[2])' \
	"$T/stat.json" "$MNT" || fail "d: pgiofs stat of the WAL mount: $(cat "$T/stat.json")"
"$BIN/pgiofs" stat >"$T/list" 2>"$T/list.err" # other tests' mounts may be listed too
grep -qxF "$PGDATA/pg_wal (a WAL mount of $MNT, served by its daemon)" <(sed 's/  */ /' "$T/list") ||
	fail "d: the list of mounts: $(cat "$T/list" "$T/list.err")"
grep -q "$MNT" "$T/list.err" && fail "d: the list of mounts complains: $(cat "$T/list.err")"
"$BIN/pgiofs" umount "$MNT" || fail "d: pgiofs umount failed"
case "$(ps -o stat= -p "$PGIOFS_PID")" in # our child: a zombie until waited for
"" | Z*) ;;
*) fail "d: pgiofs umount returned before the daemon exited" ;;
esac
[ -z "$(grep " $T/" /proc/self/mountinfo)" ] || fail "d: left mounted: $(grep " $T/" /proc/self/mountinfo)"

# ---- e: the WAL mounts' CPU and I/O priority ---------------------------------
LABEL=e
pgiofs_mount_fg "$T/pgiofs.log" "$BACKING" "$MNT" -o allow_other \
	-o files.wal_nice=-7 -o files.wal_io_class=realtime
wait_wal_mount "$PGDATA/pg_wal"
ls "$PGDATA/pg_wal/" >/dev/null # a request each way, so both have workers
ls "$PGDATA/" >/dev/null
threads "$PGIOFS_PID" >"$T/threads"
own=$(awk '{ print $19 }' "/proc/$PGIOFS_PID/stat") # the daemon's nice value (ours)
grep -qx "pgiofs-walmnt -7 realtime:prio4" "$T/threads" ||
	fail "e: the WAL mount's thread is not at nice -7, realtime: $(cat "$T/threads")"
grep -qx "pgiofs-fuse -7 realtime:prio4" "$T/threads" ||
	fail "e: no worker of the WAL mount at nice -7, realtime: $(cat "$T/threads")"
grep -q "^pgiofs-fuse $own " "$T/threads" ||
	fail "e: no worker of the mount kept the daemon's priority: $(cat "$T/threads")"
[ "$(grep -c -- " -7 " "$T/threads")" = "$(grep -c "realtime" "$T/threads")" ] &&
	! grep -q "^pgiofs $own realtime" "$T/threads" ||
	fail "e: the I/O class went further than the WAL mount: $(cat "$T/threads")"
"$BIN/pgiofs" umount "$MNT" || fail "e: pgiofs umount failed"
# without CAP_SYS_NICE (CAP_SYS_ADMIN kept: passthrough and realtime I/O need it)
: >"$T/nonice.log"
setpriv --bounding-set -sys_nice "$BIN/pgiofs" -f -o allow_other -o files.wal_nice=-7 \
	-o files.wal_io_class=realtime "$BACKING" "$MNT" 2>>"$T/nonice.log" &
PGIOFS_PID=$!
on_exit "pgiofs_kill $PGIOFS_PID"
wait_wal_mount "$PGDATA/pg_wal"
grep -q 'WAL mount over ".*pg_wal": cannot set files.wal_nice = -7: Permission denied' "$T/nonice.log" ||
	fail "e: without CAP_SYS_NICE the daemon did not say it cannot set the nice value: $(cat "$T/nonice.log")"
threads "$PGIOFS_PID" >"$T/threads"
grep -qx "pgiofs-walmnt $own realtime:prio4" "$T/threads" ||
	fail "e: without CAP_SYS_NICE, the WAL mount's thread: $(cat "$T/threads")"
"$BIN/pgiofs" stat "$MNT" | grep -q "^WAL mounts: $PGDATA/pg_wal (passthrough), nice $own, I/O realtime" ||
	fail "e: pgiofs stat without CAP_SYS_NICE: $("$BIN/pgiofs" stat "$MNT")"
"$BIN/pgiofs" umount "$MNT" || fail "e: pgiofs umount failed without CAP_SYS_NICE"
[ -z "$(grep " $T/" /proc/self/mountinfo)" ] || fail "e: left mounted: $(grep " $T/" /proc/self/mountinfo)"

# ---- f: directory entries without a file type --------------------------------
LABEL=f
mkdir -p "$T/notype" "$T/notype-mnt"
ext4_on_loop "$T/notype" 32 -O ^filetype
mkdir -p "$T/notype/pg/data/pg_wal"
echo 15 >"$T/notype/pg/data/PG_VERSION"
pgiofs_mount_fg "$T/pgiofs.log" "$T/notype" "$T/notype-mnt"
wait_wal_mount "$T/notype-mnt/pg/data/pg_wal" # in the mount table: no lookup
"$BIN/pgiofs" umount "$T/notype-mnt" || fail "f: pgiofs umount failed"

# ---- g: a WAL session's last replies, before its descriptor is closed --------
LABEL=g
command -v strace >/dev/null || fail "g: strace is needed"
mkdir -p "$T/g/pg/pg_wal" "$T/g-mnt"
echo 15 >"$T/g/pg/PG_VERSION"
pgiofs_mount_fg "$T/pgiofs.log" "$T/g" "$T/g-mnt" --allow-faults -o fault.class=wal \
	-o fault.direction=sync -o fault.nth=1 -o fault.count=0 -o fault.delay_ms=2000 -o iosched.wal_inline=no
wait_wal_mount "$T/g-mnt/pg/pg_wal"
strace -f -y -qq -e trace=close,writev -o "$T/g.strace" -p "$PGIOFS_PID" &
tracer=$!
on_exit "kill $tracer"
for ((i = 0; i < 100; i++)); do
	[ "$(awk '/^TracerPid/ { print $2 }' "/proc/$PGIOFS_PID/status")" != 0 ] && break
	sleep 0.1
done
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT)
os.write(fd, b"x" * 8192)
try:
    os.fsync(fd)
except OSError:
    pass' "$T/g-mnt/pg/pg_wal/000000010000000000000001" &
writer=$!
for ((i = 0; i < 100; i++)); do grep -q request_wait_answer "/proc/$writer/wchan" && break; sleep 0.05; done
grep -q request_wait_answer "/proc/$writer/wchan" || fail "g: the WAL fsync did not reach the daemon"
walmnt=$(dirname "$(grep -lx pgiofs-walmnt /proc/"$PGIOFS_PID"/task/*/comm)")
# the connection ends with the fsync held in the scheduler (a forced
# unmount aborts it, and fails while the writer has its file open)
umount -f "$T/g-mnt/pg/pg_wal" 2>/dev/null
wait $writer
umount "$T/g-mnt/pg/pg_wal" 2>/dev/null
for ((i = 0; i < 100; i++)); do
	[ -e "$walmnt" ] || break # its thread has freed the session
	sleep 0.1
done
kill $tracer && wait $tracer
python3 -c 'import re, sys
closed = None
for line in open(sys.argv[1]):
    m = re.search(r"close\((\d+)</dev/fuse>\)", line)
    if m:
        closed = m.group(1)
    m = re.search(r"writev\((-?\d+)", line)
    if closed and m and m.group(1) in (closed, "-1"):
        sys.exit("after its /dev/fuse descriptor %s was closed: %s" % (closed, line.strip()))
if not closed:
    sys.exit("no /dev/fuse descriptor was closed")' "$T/g.strace" || fail "g: a reply of the ended WAL session"
"$BIN/pgiofs" umount "$T/g-mnt" || fail "g: pgiofs umount failed"

# ---- h: the WAL mount and a descriptor from before it, on the same pg_wal -----
LABEL=h
mkdir -p "$T/h" "$T/h-mnt"
pgiofs_mount_fg "$T/pgiofs.log" "$T/h" "$T/h-mnt"
mkdir -p "$T/h-mnt/pg/wal"
echo 15 >"$T/h-mnt/pg/PG_VERSION"
python3 -c 'import os, sys, time
top, w = sys.argv[1], sys.argv[1] + "/pg_wal"
old = os.open(top + "/wal", os.O_RDONLY | os.O_DIRECTORY)  # through the mount
os.rename(top + "/wal", w)
for i in range(100):
    if os.stat(w).st_dev != os.fstat(old).st_dev:
        break
    time.sleep(0.1)
else:
    sys.exit("no WAL mount over " + w)
def exists(name, dir_fd=None):
    try:
        os.stat(name, dir_fd=dir_fd)
        return True
    except FileNotFoundError:
        return False
# each side has looked the names up (negative entries), and then...
assert not exists(w + "/a") and not exists("b", dir_fd=old)
fd = os.open("a", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=old)  # ...one side makes a
if not exists(w + "/a"):
    sys.exit("made through the descriptor from before, not seen through the WAL mount")
open(w + "/b", "w").close()  # ...the other b
if not exists("b", dir_fd=old):
    sys.exit("made through the WAL mount, not seen through the descriptor from before")
os.write(fd, b"x" * 8192)
os.fsync(fd)
if os.stat(w + "/a").st_size != 8192:
    sys.exit("grown to 8192 bytes through one side, %d through the WAL mount" % os.stat(w + "/a").st_size)
os.close(fd)
os.unlink(w + "/a")
if exists("a", dir_fd=old):
    sys.exit("removed through the WAL mount, still there through the other side")
os.unlink("b", dir_fd=old)
if exists(w + "/b"):
    sys.exit("removed through the descriptor from before, still there through the WAL mount")' "$T/h-mnt/pg" ||
	fail "h: the two views of one pg_wal differ"
"$BIN/pgiofs" umount "$T/h-mnt" || fail "h: pgiofs umount failed"
log "all checks passed"
