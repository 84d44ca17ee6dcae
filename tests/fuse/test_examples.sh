#!/bin/bash
# test_examples.sh -- the README's root quick start and pgiofs(1)'s example
# run as written: each block is extracted from the document (doc_block in
# tests/lib.sh), /srv/pg is moved into the test's scratch directory (and
# nothing else is changed), the build's pgiofs is put first on PATH, and
# the block runs under `bash -e`.  PGPORT gives the server a free port.
# Checked: every command succeeds, the server it starts runs on the pgiofs
# mount and answers, and (man page) the example's own stop and unmount
# leave nothing behind.  The README example leaves its server running, as a
# reader's would: the test stops it and unmounts, as the README says next.
source "$(dirname "$0")/../lib.sh"
need_root
id postgres >/dev/null 2>&1 || fail "no postgres user (run scripts/install-deps.sh)"

T=$(mktempdir)
mkdir "$T/srv"
export PGPORT
PGPORT=$(free_port)
PGBIN=/usr/lib/postgresql/15/bin

# run_example FILE NAME -- run the marked block of FILE with /srv/pg moved.
run_example() {
	local b
	b=$(doc_block "$TOP/$1" "$2")
	[ -n "$b" ] || fail "$1 has no example marked $2"
	printf '%s\n' "$b" | sed "s|/srv/pg|$T/srv/pg|g" >"$T/$2.sh"
	PATH="$(dirname "$(realpath "$BIN/pgiofs")"):$PATH" bash -e -x "$T/$2.sh" >"$T/$2.log" 2>&1 ||
		{ cat "$T/$2.log"; fail "the example $2 of $1 failed"; }
}

# answers DATADIR -- the server of DATADIR answers on $PGPORT.
answers() {
	[ "$(runuser -u postgres -- "$PGBIN/psql" -X -At -p "$PGPORT" -d postgres \
		-c "SHOW data_directory")" = "$1" ]
}

# README: mount as root, initdb and start as postgres
on_exit "runuser -u postgres -- $PGBIN/pg_ctl -D '$T/srv/pg/data' -m immediate stop >/dev/null 2>&1; umount -l '$T/srv/pg/data' 2>/dev/null; true"
run_example README.md readme-root
awk -v m="$T/srv/pg/data" '$2 == m { print $3 }' /proc/mounts | grep -qx fuse.pgiofs ||
	fail "README: $T/srv/pg/data is not a pgiofs mount"
answers "$T/srv/pg/data" || fail "README: the server does not answer"
[ -f "$T/srv/pg/backing/PG_VERSION" ] || fail "README: the cluster is not in the backing directory"
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$T/srv/pg/data" stop >/dev/null || fail "README: pg_ctl stop failed"
"$BIN/pgiofs" umount "$T/srv/pg/data" || fail "README: pgiofs umount failed"
echo "ok: the README's root quick start runs as written"

# pgiofs(1): mount, initdb, start, stat, stop, unmount
on_exit "runuser -u postgres -- $PGBIN/pg_ctl -D '$T/srv/pg/data' -m immediate stop >/dev/null 2>&1; umount -l '$T/srv/pg' 2>/dev/null; true"
rm -rf "$T/srv/pg"
run_example man/pgiofs.1 man-example
grep -q ' total ' "$T/man-example.log" || fail "pgiofs(1): pgiofs stat printed no lines"
! is_mounted "$T/srv/pg" || fail "pgiofs(1): the example's umount left the mount"
[ -f "$T/srv/pg.backing/data/PG_VERSION" ] || fail "pgiofs(1): the cluster is not in the backing directory"
! pgrep -f "pgiofs .*$T/srv/pg" >/dev/null || fail "pgiofs(1): a daemon is left running"
echo "ok: pgiofs(1)'s example runs as written"
echo ok
