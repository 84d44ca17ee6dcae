#!/usr/bin/env python3
"""account.py -- the time account of imports and tps samples, from bench/account.bt's output.

usage: account.py SIDE=FILE[,FILE...] ...

Each FILE is what account.bt printed for one sample of SIDE (native, pgiofs,
...); a side's figures are the medians of its samples.  Printed, one column
per side, in seconds: CPU time per group of processes (PostgreSQL's, the
pgiofs daemon's threads, the client, and the kernel's writeback and
journal threads, machine-wide); time runnable but waiting for a CPU; time
PostgreSQL's processes and the daemon's threads spent blocked, by cause
(the first of CAUSES that a frame of the blocking kernel stack names); and the
FUSE requests per opcode with the time the kernel waited for them.
It reads and prints; it judges nothing.
"""
import re
import statistics
import sys

# (cause, frames any of which names it): the first cause in this order
# that a frame of the stack names wins (balance_dirty_pages sleeps in
# io_schedule_timeout(): throttling, not device I/O)
CAUSES = [
    ("dirty throttle (balance_dirty_pages)", ("balance_dirty_pages",)),
    # FUSE's write-back cache writes a file's dirty pages back, and waits
    # for them, before a close() returns
    ("FUSE close writing the file back (fuse_flush)", ("fuse_flush",)),
    # a background request (readahead) waits while the connection has
    # max_background of them outstanding, writeback included
    ("FUSE background requests full (fuse_get_req)", ("fuse_get_req",)),
    # FUSE holds a file's inode lock across a whole fsync, the daemon's
    # answer included (fuse_fsync()), so a write or an lseek(SEEK_END) of
    # the same file (PostgreSQL's size check before it extends a relation)
    # waits for all of it; natively an fsync writes back without it
    ("a file's inode lock (on FUSE, held across an fsync)", ("rwsem_down_write_slowpath",
                                                             "rwsem_down_read_slowpath")),
    ("writeback throttle (wbt, rq_qos)", ("rq_qos_wait", "wbt_wait")),
    ("FUSE request (waiting for the daemon)", ("request_wait_answer", "fuse_simple_request",
                                               "fuse_wait_on_folio_writeback",
                                               "fuse_wait_on_page_writeback")),
    ("journal (jbd2)", ("jbd2_", "wait_transaction_locked", "start_this_handle",
                        "do_get_write_access")),
    ("device queue slot (a request tag: the queue's depth)", ("blk_mq_get_tag",)),
    ("device I/O (wait for writeback, a flush, a read)", (
        "folio_wait_writeback", "wait_on_page_writeback", "submit_bio_wait",
        "blkdev_issue_flush", "io_schedule", "folio_wait_bit",
        "filemap_fdatawait", "__filemap_fdatawait_range")),
    ("lock (futex, semaphore)", ("futex_wait", "do_semtimedop", "futex_")),
    ("FUSE daemon idle (no request)", ("fuse_dev_do_read", "fuse_dev_read", "io_cqring_wait",
                                       "io_uring_cqring_wait", "fuse_uring")),
    ("client socket (waiting for the other side)", ("unix_stream_read", "sock_",
                                                    "ep_poll", "do_epoll_wait", "do_select",
                                                    "do_sys_poll", "wait_woken")),
    ("sleep (naps, timers)", ("do_nanosleep", "hrtimer_nanosleep", "schedule_hrtimeout")),
    ("pipe, wait for a child", ("pipe_read", "pipe_write", "do_wait")),
]
OPS = {1: "LOOKUP", 2: "FORGET", 3: "GETATTR", 4: "SETATTR", 9: "MKDIR", 10: "UNLINK", 11: "RMDIR", 12: "RENAME",
       14: "OPEN", 15: "READ", 16: "WRITE", 17: "STATFS", 18: "RELEASE", 20: "FSYNC",
       22: "GETXATTR", 23: "LISTXATTR", 25: "FLUSH", 27: "OPENDIR", 28: "READDIR",
       29: "RELEASEDIR", 30: "FSYNCDIR", 35: "CREATE", 42: "BATCH_FORGET", 43: "FALLOCATE",
       44: "READDIRPLUS", 45: "RENAME2", 46: "LSEEK", 52: "STATX"}
NS = 1e9


def group(comm):
    if comm.startswith("postgres"):
        return "postgres"
    if comm.startswith("pgiofs"):
        return "pgiofs"
    if comm.startswith(("kworker", "jbd2")):
        return "kernel threads (machine-wide)"
    return "client and tools"


def cause(stack):
    names = [frame.split("+")[0] for frame in stack]
    for what, keys in CAUSES:
        if any(name.startswith(k) for name in names for k in keys):
            return what
    return "other"


def parse(path):
    """One sample: {row: seconds or count}."""
    text = open(path, encoding="utf-8", errors="replace").read()
    out = {}

    def add(key, v):
        out[key] = out.get(key, 0) + v

    # @off[comm, <stack lines>]: N -- stacks span lines
    for m in re.finditer(r"@off\[([^,\]]+),\s*\n(.*?)\]: (\d+)", text, re.S):
        frames = [f.strip() for f in m.group(2).splitlines() if f.strip()]
        g = group(m.group(1))
        if g in ("postgres", "pgiofs"):
            add(("blocked", g, cause(frames[2:] if len(frames) > 2 else frames)),
                int(m.group(3)) / NS)
    for m in re.finditer(r"^@(cpu|kcpu|runq)\[([^\]]*)\]: (\d+)$", text, re.M):
        kind = "cpu" if m.group(1) in ("cpu", "kcpu") else "runq"
        add((kind, group(m.group(2)), ""), int(m.group(3)) / NS)
    for m in re.finditer(r"^@fuse_(n|ns)\[(\d+)\]: (\d+)$", text, re.M):
        op = OPS.get(int(m.group(2)), "op %s" % m.group(2))
        add(("fuse " + m.group(1), op, ""), int(m.group(3)) / (NS if m.group(1) == "ns" else 1))
    return out


def main(argv):
    sides = []
    for arg in argv:
        if "=" not in arg:
            sys.exit("account.py: \"%s\": want SIDE=FILE[,FILE...]" % arg)
        name, files = arg.split("=", 1)
        samples = []
        for f in files.split(","):
            try:
                samples.append(parse(f))
            except OSError as e:
                sys.exit("account.py: cannot read \"%s\": %s" % (f, e.strerror))
        sides.append((name, samples))
    if not sides:
        sys.exit(__doc__.strip().splitlines()[2])
    keys = sorted({k for _, ss in sides for s in ss for k in s})
    med = {name: {k: statistics.median([s.get(k, 0) for s in ss]) for k in keys}
           for name, ss in sides}
    names = [n for n, _ in sides]
    head = "%-58s" % "" + "".join("%12s" % n for n in names)
    if len(names) == 2:
        head += "%12s" % "difference"

    def row(label, k, fmt="%12.2f"):
        vals = [med[n].get(k, 0) for n in names]
        if all(v < 0.005 for v in vals) and fmt == "%12.2f":
            return
        line = "%-58s" % label + "".join(fmt % v for v in vals)
        if len(names) == 2:
            line += (fmt.replace("12", "+12")) % (vals[1] - vals[0])
        print(line)

    print("Time account, seconds (medians of %s samples)" %
          ", ".join("%d %s" % (len(ss), n) for n, ss in sides))
    print(head)
    print("CPU")
    for k in [k for k in keys if k[0] == "cpu"]:
        row("  " + k[1], k)
    print("runnable, waiting for a CPU")
    for k in [k for k in keys if k[0] == "runq"]:
        row("  " + k[1], k)
    for g in ("postgres", "pgiofs"):
        ks = [k for k in keys if k[0] == "blocked" and k[1] == g]
        if ks:
            print("blocked: %s" % ("PostgreSQL's processes (summed over processes)" if g == "postgres"
                                   else "the pgiofs daemon's threads (summed over threads)"))
            for k in sorted(ks, key=lambda k: -max(med[n][k] for n in names)):
                row("  " + k[2], k)
    ks = [k for k in keys if k[0] == "fuse n"]
    if ks:
        print("FUSE requests: count, then seconds the kernel waited for them")
        for k in sorted(ks, key=lambda k: -max(med[n][k] for n in names)):
            row("  %s (count)" % k[1], k, "%12.0f")
            row("  %s (s)" % k[1], ("fuse ns", k[1], ""))


if __name__ == "__main__":
    main(sys.argv[1:])
