#!/usr/bin/env python3
"""stalls.py -- the stall account: what PostgreSQL's slow WAL waits waited on.

usage: stalls.py [--threshold-ms MS] [--json] EVENTS

EVENTS is what bench/stalls.bt printed.  A stall is a wait of a PostgreSQL
process of at least MS milliseconds (default 500) for WAL: a sync (fsync or
fdatasync of a WAL segment), a write to one, or a lock (a futex wait: an
LWLock such as WALWriteLock, which a committing backend waits for while
another process writes and flushes WAL).  Each stall's time is split into
causes:

  pgiofs: queue and handling   a FUSE request's wait not covered by the
                               daemon's own blocked time below
  device queue slot            waiting for a request tag: the device queue's
                               depth (blk_mq_get_tag)
  device I/O                   waiting for writeback, a flush, a read
  journal                      a jbd2 commit (data=ordered: with the data
                               the commit carries)
  writeback throttling         wbt, rq_qos, balance_dirty_pages
  segment initialisation       a backend making a WAL segment (zeros, fsync,
                               rename) while the stalled one waits for it
  lock, other                  a lock wait nothing above explains
  runnable                     ready, waiting for a CPU
  on CPU, other                the rest (running, or blocked under 1 ms,
                               or in a wait no cause names)

A FUSE request's wait is explained by what the daemon's threads were
blocked on at the same time (their fsyncs and io_uring's workers).  A lock
wait is explained by what the other PostgreSQL processes were doing at the
same time: making a WAL segment, or blocked on something a cause names
(the lock's holder is one of them, or waits itself on one of them; which
one holds it the kernel does not say, so every such process counts, one
level deep).  Each moment of a stall counts once, for the first cause in
this order that covers it: segment initialisation, a device queue slot,
device I/O, journal, writeback throttling, pgiofs, lock, runnable.
Printed: one line per stall (seconds from the first event, process,
kind, milliseconds, and the milliseconds per cause), then the
sum per cause.

A commit also waits for what is not WAL: a read of a page it needs, a
close() that writes a file's dirty pages back first (FUSE's write-back
cache does), a buffer it must write out.  So the longest other waits
follow: every time a PostgreSQL process was blocked (not runnable, and
not idle: waiting for its client, sleeping, in a pipe) for MS or more,
outside the WAL stalls above, with the cause its kernel stack names and
the functions it blocked under.  It reads and prints; it judges nothing.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from account import cause  # noqa: E402  (one sorting of stacks into causes)

CAUSES = ["pgiofs: queue and handling", "device queue slot", "device I/O", "journal",
          "writeback throttling", "segment initialisation", "lock, other", "runnable",
          "on CPU, other"]
# account.py's causes of a blocked stack, as named here (others: None)
FROM_ACCOUNT = {
    "FUSE request (waiting for the daemon)": "fuse",
    "FUSE close writing the file back (fuse_flush)": "fuse",
    "FUSE background requests full (fuse_get_req)": "fuse",
    "a file's inode lock (on FUSE, held across an fsync)": "lock",
    "device queue slot (a request tag: the queue's depth)": "device queue slot",
    "device I/O (wait for writeback, a flush, a read)": "device I/O",
    "journal (jbd2)": "journal",
    "writeback throttle (wbt, rq_qos)": "writeback throttling",
    "dirty throttle (balance_dirty_pages)": "writeback throttling",
    "lock (futex, semaphore)": "lock",
}
# which cause a moment counts for when several cover it: what the daemon
# or the lock's holder was blocked on before the wait that it explains
PRIORITY = ["segment initialisation", "device queue slot", "device I/O", "journal",
            "writeback throttling", "pgiofs: queue and handling", "lock, other", "runnable"]
# what the daemon's blocked time may explain of a FUSE wait
DAEMON = ("device queue slot", "device I/O", "journal", "writeback throttling")
# account.py's causes that are a process idle, not waiting for storage
IDLE = ("client socket (waiting for the other side)", "sleep (naps, timers)",
        "pipe, wait for a child", "FUSE daemon idle (no request)")
# frames of the scheduler itself, left out of a wait's "where"
SCHED = ("__schedule", "schedule", "io_schedule", "schedule_timeout", "io_schedule_timeout",
         "schedule_preempt_disabled", "preempt_schedule")
# frames of the system call entry
ENTRY = ("entry_SYSCALL_64_after_hwframe", "do_syscall_64", "x64_sys_call")
WAITS_MAX = 20  # other waits listed at most


def parse(path):
    """(calls, segs, offs, comms, blocked): calls [(kind, tid, comm, start,
    end)], segs [(tid, start, end)], offs {tid: [(start, end, what)]}, comms
    {tid: comm} of the threads with offs, blocked [(tid, start, end, cause,
    frames)]: PostgreSQL's blocked intervals with account.py's cause."""
    calls, segs, offs, comms, blocked = [], [], {}, {}, []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    seen = False
    i = 0
    while i < len(lines):
        w = lines[i].split()
        i += 1
        if not w:
            continue
        if w[0] == "stalls.bt":
            seen = True
        elif w[0] in ("sync", "write", "lock", "dsync") and len(w) == 5:
            start = int(w[3])
            calls.append((w[0], int(w[1]), w[2], start, start + int(w[4])))
        elif w[0] == "seg" and len(w) == 4:
            segs.append((int(w[1]), int(w[2]), int(w[3])))
        elif w[0] == "off" and len(w) >= 6:
            frames = []
            while i < len(lines) and lines[i].strip():
                frames.append(lines[i].strip())
                i += 1
            start = int(w[3])
            why = cause(frames)
            what = "runnable" if w[5] == "0" else FROM_ACCOUNT.get(why)
            offs.setdefault(int(w[1]), []).append((start, start + int(w[4]), what))
            comms[int(w[1])] = w[2]
            if w[2] == "postgres" and w[5] != "0":
                blocked.append((int(w[1]), start, start + int(w[4]), why, frames))
    if not seen:
        raise ValueError("%s: not the output of bench/stalls.bt (no \"stalls.bt\" line)" % path)
    return calls, segs, offs, comms, blocked


def clip(ivs, a, b):
    return [(max(s, a), min(e, b), w) for s, e, w in ivs if s < b and e > a]


def union(ivs):
    out = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [tuple(x) for x in out]


def subtract(ivs, cover):
    """ivs minus the union cover (both lists of (s, e))."""
    out = []
    for s, e in ivs:
        cur = s
        for cs, ce in cover:
            if ce <= cur or cs >= e:
                continue
            if cs > cur:
                out.append((cur, cs))
            cur = max(cur, ce)
        if cur < e:
            out.append((cur, e))
    return out


def explain(s, e, what, daemon):
    """The labelled pieces of a blocked interval [s, e] of some process."""
    if what == "fuse":
        # the daemon's blocked time explains what it covers
        out = [(cs, ce, dw) for cs, ce, dw in clip(daemon, s, e) if dw in DAEMON]
        return out + [(s, e, "pgiofs: queue and handling")]
    if what in CAUSES and what not in ("runnable", "lock, other"):
        return [(s, e, what)]
    return []


def account(a, b, tid, segs, offs, others, daemon):
    """{cause: ns} of the interval [a, b] of thread tid; others: the other
    PostgreSQL threads' blocked intervals, [(tid, start, end, what)]."""
    labelled = []
    for s, e, what in clip(offs.get(tid, []), a, b):
        if what == "lock":
            # what the other PostgreSQL processes were doing meanwhile:
            # making a segment, or blocked on something a cause names
            for ts, sa, sb in segs:
                if ts != tid and sa < e and sb > s:
                    labelled.append((max(sa, s), min(sb, e), "segment initialisation"))
            for otid, os_, oe, owhat in others:
                if otid != tid and os_ < e and oe > s:
                    labelled += explain(max(os_, s), min(oe, e), owhat, daemon)
            labelled.append((s, e, "lock, other"))
        elif what == "runnable":
            labelled.append((s, e, "runnable"))
        else:
            labelled += explain(s, e, what, daemon)
    out = {}
    taken = []
    for c in PRIORITY:
        ivs = union([(s, e) for s, e, w in labelled if w == c])
        ivs = subtract(ivs, union(taken))
        out[c] = sum(e - s for s, e in ivs)
        taken += ivs
    out["on CPU, other"] = (b - a) - sum(out.values())
    return out


def main():
    ap = argparse.ArgumentParser(description="the stall account of bench/stalls.bt's events")
    ap.add_argument("--threshold-ms", type=float, default=500.0,
                    help="the shortest wait that is a stall (default 500)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("events")
    args = ap.parse_args()
    if args.threshold_ms <= 0:
        ap.error("--threshold-ms %g: not a positive number of milliseconds" % args.threshold_ms)
    try:
        calls, segs, offs, comms, blocked = parse(args.events)
    except (OSError, ValueError) as e:
        print("stalls.py: %s" % e, file=sys.stderr)
        return 1
    daemon = []
    for kind, tid, comm, a, b in calls:
        if kind == "dsync":
            daemon += clip(offs.get(tid, []), a, b)
    others = []
    for tid, ivs in offs.items():
        if comms.get(tid, "").startswith("iou-wrk"):  # io_uring's workers
            daemon += ivs
        elif comms.get(tid) == "postgres":
            others += [(tid, s, e, w) for s, e, w in ivs]
    t0 = min([c[3] for c in calls] + [s[1] for s in segs], default=0)
    stalls = []
    for kind, tid, comm, a, b in sorted(calls, key=lambda c: c[3]):
        if comm != "postgres" or kind == "dsync" or (b - a) < args.threshold_ms * 1e6:
            continue
        acc = account(a, b, tid, segs, offs, others, daemon)
        stalls.append({"at_s": (a - t0) / 1e9, "tid": tid, "kind": kind,
                       "ms": (b - a) / 1e6, "causes_ms": {c: acc[c] / 1e6 for c in CAUSES}})
    total = {c: sum(s["causes_ms"][c] for s in stalls) for c in CAUSES}
    waits = other_waits(blocked, stalls, t0, args.threshold_ms)
    if args.json:
        json.dump({"threshold_ms": args.threshold_ms, "stalls": stalls, "total_ms": total,
                   "waits": waits}, sys.stdout, indent=1)
        print()
        return 0
    short = ["pgiofs", "slot", "device", "journal", "wbt", "segment", "lock", "runnable", "cpu"]
    print("Stalls: waits of PostgreSQL's processes for WAL of %g ms or more (%d)"
          % (args.threshold_ms, len(stalls)))
    print("%8s %8s %-5s %8s " % ("at s", "pid", "kind", "ms") + " ".join("%8s" % s for s in short))
    for s in stalls:
        print("%8.2f %8d %-5s %8.0f " % (s["at_s"], s["tid"], s["kind"], s["ms"]) +
              " ".join("%8.0f" % s["causes_ms"][c] for c in CAUSES))
    all_ms = sum(total.values())
    print("Sum over the stalls: %.0f ms" % all_ms)
    for c, k in zip(CAUSES, short):
        print("  %-28s %-8s %10.0f ms %5.1f %%" % (c, "(" + k + ")", total[c],
                                                  100 * total[c] / all_ms if all_ms else 0))
    print("Other waits of PostgreSQL's processes of %g ms or more, the longest %d (%d in all)"
          % (args.threshold_ms, min(len(waits), WAITS_MAX), len(waits)))
    for x in waits[:WAITS_MAX]:
        print("%8.2f %8d %8.0f ms  %s: %s" % (x["at_s"], x["tid"], x["ms"], x["cause"], x["where"]))
    return 0


def other_waits(blocked, stalls, t0, threshold_ms):
    """The blocked intervals of at least threshold_ms that are not idle and
    not inside a stall of the same process, longest first."""
    inside = [(x["tid"], t0 + x["at_s"] * 1e9, t0 + (x["at_s"] + x["ms"] / 1e3) * 1e9)
              for x in stalls]
    out = []
    for tid, a, b, why, frames in blocked:
        if b - a < threshold_ms * 1e6 or why in IDLE:
            continue
        if any(t == tid and a >= s - 1e3 and b <= e + 1e3 for t, s, e in inside):
            continue
        names = [f.split("+")[0] for f in frames]
        names = [n for n in names if n not in SCHED and n not in ENTRY]
        if len(names) > 6:  # the innermost and the outermost (the call)
            names = names[:3] + ["..."] + names[-3:]
        out.append({"at_s": (a - t0) / 1e9, "tid": tid, "ms": (b - a) / 1e6,
                    "cause": why, "where": " < ".join(names)})
    out.sort(key=lambda x: -x["ms"])
    return out


if __name__ == "__main__":
    sys.exit(main())
