#!/bin/bash
# test_stalls.sh -- the stall account (bench/stalls.sh, stalls.bt,
# stalls.py) attributes synthetic stalls to what they waited on.
#
# First stalls.py alone, on events made up here, where every figure is
# known: a WAL sync blocked 300 ms on the device, 200 ms on the journal
# and 50 ms runnable (and 50 ms nothing names: on CPU); a WAL sync through
# pgiofs whose FUSE wait the daemon's own fsync spent 400 ms of on the
# device; a lock wait while another backend made a WAL segment (300 ms)
# and then synced WAL on the device (200 ms); a lock wait while another
# backend, in no WAL call, waited 400 ms for the journal (and a third slept
# in epoll, which explains nothing); a wait under the threshold is not a
# stall; bad input is refused.  The other waits (not idle, outside the
# stalls, over the threshold) are listed with their causes, a close() that
# wrote its file back first.
#
# Then the whole tool on a real kernel: ext4 (data=ordered, nodelalloc,
# commit=600: no journal commit but the backend's own, however long bpftrace
# takes to attach; with the default 5 s the timer may commit the bulk data
# first and leave the backend nothing to wait for) on a loop device over
# pgdisk's hdd slowed to 1 MB/s, and a process named "postgres" that
# writes and fdatasyncs a file it opened as
# "pg_wal/000000010000000000000001", as a backend does:
#   - a held-back device request: 1 MiB overwritten in place (its blocks
#     allocated before) then fdatasynced: the second it takes is the
#     device's, and the account must say so (device I/O at least 80 %);
#   - a slow journal: another process writes 2 MiB to another file
#     (allocated at once, so the running transaction must write it first,
#     data=ordered), then the backend appends 8 KiB to its segment and
#     fdatasyncs: the new size needs a journal commit, which carries the
#     2 MiB: journal at least 70 %.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../disk/disklib.sh"
command -v python3 >/dev/null || fail "python3 is not installed"
T=$(mktempdir)
PY="python3 $TOP/bench/stalls.py"

# ---- stalls.py on made-up events (times in ns) ----
# call KIND TID COMM START_MS DURATION_MS -- a sync, write, lock or dsync line
call() { echo "$1 $2 $3 $(($4 * 1000000)) $(($5 * 1000000))"; }
# off TID COMM START_MS DURATION_MS STATE FRAME... -- an off-CPU interval
# with its kernel stack (below __schedule and schedule), as stalls.bt prints it
off() {
	local f
	echo "off $1 $2 $(($3 * 1000000)) $(($4 * 1000000)) $5 "
	shift 5
	for f in __schedule+1 schedule+2 "$@"; do echo "        $f"; done
	echo
}
{
	echo "Attaching 23 probes..."
	echo "stalls.bt 1000"
	call sync 10 postgres 1000 600
	off 10 postgres 1000 300 2 io_schedule+3 folio_wait_writeback+4
	off 10 postgres 1300 200 2 jbd2_log_wait_commit+3 ext4_sync_file+4
	off 10 postgres 1500 50 0 preempt_schedule+3
	call sync 11 postgres 3000 500
	off 11 postgres 3000 500 2 request_wait_answer+3 fuse_simple_request+4 fuse_fsync+5
	call dsync 99 pgiofs-fuse 3050 400
	off 99 pgiofs-fuse 3050 400 2 io_schedule+3 submit_bio_wait+4
	echo "seg 12 $((5000 * 1000000)) $((5300 * 1000000))"
	call sync 12 postgres 5300 200
	off 12 postgres 5300 200 2 io_schedule+3 folio_wait_writeback+4
	call lock 13 postgres 5000 520
	off 13 postgres 5000 520 2 futex_wait+3
	call sync 14 postgres 7000 100
	call lock 15 postgres 8000 600
	off 15 postgres 8000 600 2 futex_wait+3
	off 16 postgres 8000 400 2 jbd2_log_wait_commit+3 ext4_sync_file+4
	off 17 postgres 7900 800 2 do_epoll_wait+3
	off 18 postgres 9000 700 2 inode_wait_for_writeback+3 write_inode_now+4 fuse_flush+5 \
		filp_flush+6 __x64_sys_close+7 do_syscall_64+8
	off 19 postgres 9500 250 2 fuse_get_req+3 fuse_simple_background+4 fuse_readahead+5
	off 20 postgres 9600 350 2 rwsem_down_write_slowpath+3 down_write+4 fuse_file_llseek+5 \
		ksys_lseek+6 do_syscall_64+7
} >"$T/ev"
out=$($PY --threshold-ms 300 --json "$T/ev") || fail "stalls.py failed on made-up events: $out"
echo "$out" | head -c 600
echo
python3 - "$out" <<'PYEOF' || fail "stalls.py's account of the made-up events is wrong"
import json, sys
d = json.loads(sys.argv[1])
s = {x["tid"]: x for x in d["stalls"]}
assert sorted(s) == [10, 11, 13, 15], sorted(s)      # 12 (200 ms) and 14 (100 ms): short
def near(a, b):
    return abs(a - b) < 0.01
c = s[10]["causes_ms"]
assert s[10]["kind"] == "sync" and near(s[10]["ms"], 600), s[10]
assert near(c["device I/O"], 300) and near(c["journal"], 200) and near(c["runnable"], 50), c
assert near(c["on CPU, other"], 50), c
c = s[11]["causes_ms"]
assert near(c["device I/O"], 400) and near(c["pgiofs: queue and handling"], 100), c
c = s[13]["causes_ms"]
assert s[13]["kind"] == "lock", s[13]
assert near(c["segment initialisation"], 300) and near(c["device I/O"], 200), c
assert near(c["lock, other"], 20), c
assert near(sum(c.values()), 520), c
# a lock whose holder is not in a WAL call: another backend's journal wait
# explains it; one idle in epoll does not
c = s[15]["causes_ms"]
assert near(c["journal"], 400) and near(c["lock, other"], 200), c
# the other waits: 18's close that wrote its file back (700 ms), 16's
# journal wait (400 ms, in no WAL call); not the waits inside the stalls,
# nor 17 idle in epoll, nor 19's 250 ms (under the threshold)
w = d["waits"]
assert [(x["tid"], round(x["ms"])) for x in w] == [(18, 700), (16, 400), (20, 350)], w
assert w[0]["cause"] == "FUSE close writing the file back (fuse_flush)", w[0]
assert w[0]["where"].endswith("fuse_flush < filp_flush < __x64_sys_close"), w[0]
assert w[1]["cause"] == "journal (jbd2)", w[1]
assert w[2]["cause"] == "a file's inode lock (on FUSE, held across an fsync)", w[2]
assert w[2]["where"].endswith("fuse_file_llseek < ksys_lseek"), w[2]
PYEOF
table=$($PY --threshold-ms 300 "$T/ev") || fail "stalls.py (table) failed"
echo "$table"
grep -q "^Stalls: waits of PostgreSQL's processes for WAL of 300 ms or more (4)" <<<"$table" ||
	fail "the table's heading does not count 4 stalls"
# bad input: each refused with a message naming it
echo "not events" >"$T/bad"
err=$($PY "$T/bad" 2>&1) && fail "stalls.py took a file that is not stalls.bt's output"
[[ $err == *"$T/bad"* ]] || fail "the error does not name the file: $err"
err=$($PY "$T/missing" 2>&1) && fail "stalls.py took a missing file"
[[ $err == *missing* ]] || fail "the error does not name the missing file: $err"
err=$($PY --threshold-ms 0 "$T/ev" 2>&1) && fail "stalls.py took --threshold-ms 0"
[[ $err == *threshold* ]] || fail "the error does not name --threshold-ms: $err"
err=$("$TOP/bench/stalls.sh" --seconds x 2>&1) && fail "stalls.sh took --seconds x"
[[ $err == *--seconds* ]] || fail "the error does not name --seconds: $err"

# ---- the whole tool on a slow modelled disk ----
need_root
command -v bpftrace >/dev/null || fail "bpftrace is not installed (make deps installs it)"
W=$T/disk
mkdir -p "$W/dm" "$W/fs"
disk_image "$W/img" 256M
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$W/img" >"$W/mkfs.log" 2>&1 ||
	fail "mkfs.ext4 failed: $(cat "$W/mkfs.log")"
disk_start "$W/img" "$W/dm" --model hdd --set seq_mb_s=1
LOOP=$(loop_attach "$W/dm/disk")
loop_registered "$LOOP"
fs_mount "$LOOP" "$W/fs" -o data=ordered,nodelalloc,commit=600
mkdir -p "$W/fs/data/pg_wal"
SEG=pg_wal/000000010000000000000001
# backend MODE -- as a backend named postgres, in the data directory:
# "device": overwrite 1 MiB of the segment in place, fdatasync;
# "journal": append 8 KiB, fdatasync; its pid (its one thread's id) in
# $T/pid.MODE: the account watches every process named postgres, and
# other tests' servers run meanwhile
cat >"$T/backend.py" <<'PYEOF'
import ctypes, os, sys
ctypes.CDLL(None).prctl(15, b"postgres", 0, 0, 0)   # PR_SET_NAME
with open(sys.argv[4], "w") as f:
    f.write(str(os.getpid()))
os.chdir(sys.argv[1])
fd = os.open(sys.argv[2], os.O_RDWR)
if sys.argv[3] == "device":
    os.pwrite(fd, b"\1" * (1 << 20), 0)
else:
    os.pwrite(fd, b"\2" * 8192, os.fstat(fd).st_size)
os.fdatasync(fd)
os.close(fd)
PYEOF
head -c $((1 << 20)) /dev/zero >"$W/fs/data/$SEG" && sync "$W/fs/data/$SEG" ||
	fail "cannot make the segment"
# account MODE -- the stall account (JSON) of one backend's fdatasync
account() {
	"$TOP/bench/stalls.sh" --threshold-ms 300 --json --events "$T/events.$1" -- \
		python3 "$T/backend.py" "$W/fs/data" "$SEG" "$1" "$T/pid.$1" \
		>"$T/account.$1" 2>"$T/account.$1.err" ||
		fail "$1: bench/stalls.sh failed: $(cat "$T/account.$1.err")"
}
account device
head -c $((2 << 20)) /dev/urandom >"$W/fs/bulk" || fail "cannot write the bulk file"
account journal
python3 - "$T" <<'PYEOF' || fail "the account of the real stalls is wrong"
import json, sys
for mode, cause, share in (("device", "device I/O", 0.8), ("journal", "journal", 0.7)):
    path = "%s/account.%s" % (sys.argv[1], mode)
    tid = int(open("%s/pid.%s" % (sys.argv[1], mode)).read())
    d = json.load(open(path))
    st = [s for s in d["stalls"] if s["kind"] == "sync" and s["tid"] == tid]
    print(path, json.dumps(st))
    assert len(st) == 1, "want one WAL sync stall, got %d" % len(st)
    s = st[0]
    assert s["causes_ms"][cause] >= share * s["ms"], "%s: %s is %.0f of %.0f ms" % (
        path, cause, s["causes_ms"][cause], s["ms"])
PYEOF
echo "ok"
