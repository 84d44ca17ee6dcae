#!/bin/bash
# test_security.sh -- nobody is let in who should not be, and pgiofs never
# escapes its backing directory.  With a throwaway unprivileged user:
#   1. without -o allow_other only the mounting user can enter the mount
#      (root's mount keeps the user out even at mode 0777; the user's own
#      mount keeps root out);
#   2. with -o allow_other the kernel checks permissions (default_permissions
#      is always on): the user cannot read a 0600 file, create in or list a
#      0700 directory, create in a 0755 one or write a 0644 file of root's; it can create in a
#      1777 directory, and the file belongs to it in the backing directory;
#   3. a symlink to /etc inside the mount behaves as on the backing
#      filesystem (same target, same contents when followed); operations
#      that do not follow links (touch -h, chown -h, rm, mv, O_NOFOLLOW) act
#      on the link, never on /etc; ".." of the mount root is the mount
#      point's parent, as on any mount.
# The statistics socket's refusals are tested in test_stat.sh.
source "$(dirname "$0")/../lib.sh"
need_root

U=pgiofs-sec-$$
useradd --system --no-create-home --shell /usr/sbin/nologin "$U" || fail "cannot create user $U"
on_exit "userdel '$U'"
UID_U=$(id -u "$U")

T=$(mktempdir)
B=$T/b M=$T/m
mkdir "$B" "$M"
chmod 0777 "$B"

# as U CMD... -- CMD as the throwaway user; its exit status.
as() { runuser -u "$U" -- "$@"; }

# --- 1. no allow_other: the mounting user only -------------------------------
pgiofs_mount "$B" "$M"
as ls "$M" >/dev/null 2>&1 && fail "$U entered root's mount made without allow_other"
as stat "$M/." >/dev/null 2>&1 && fail "$U could stat root's mount made without allow_other"
ls "$M" >/dev/null || fail "root cannot enter its own mount"
pgiofs_umount "$M" || fail "cannot unmount"

fuse_dev_open_to_all
chown "$U" "$M"
as "$BIN/pgiofs" "$B" "$M" || fail "$U cannot mount its own mount"
_cleanup_mounts+=("$M")
as touch "$M/by_user" || fail "$U cannot write in its own mount"
ls "$M" >/dev/null 2>&1 && fail "root entered $U's mount made without allow_other"
as fusermount3 -u "$M" || fail "$U cannot unmount its mount"
assert_no_mount "$M"
chown root "$M"
rm -f "$B/by_user"

# --- 2. allow_other: the kernel checks permissions ---------------------------
chmod 0755 "$B"
mkdir -m 0700 "$B/closed" && touch "$B/closed/inner"
mkdir -m 1777 "$B/pub"
echo secret >"$B/secret" && chmod 0600 "$B/secret"
echo public >"$B/public" && chmod 0644 "$B/public"
pgiofs_mount "$B" "$M" -o allow_other
as cat "$M/secret" >/dev/null 2>&1 && fail "$U read a 0600 file of root's"
as ls "$M/closed" >/dev/null 2>&1 && fail "$U listed a 0700 directory of root's"
as touch "$M/closed/new" 2>/dev/null && fail "$U created a file in a 0700 directory of root's"
as cat "$M/closed/inner" >/dev/null 2>&1 && fail "$U read a file inside a 0700 directory"
as sh -c "echo x >>'$M/public'" 2>/dev/null && fail "$U wrote to a 0644 file of root's"
as touch "$M/new_in_root" 2>/dev/null && fail "$U created a file in a 0755 directory of root's"
[ "$(as cat "$M/public")" = public ] || fail "$U cannot read a 0644 file"
as sh -c "echo mine >'$M/pub/mine'" || fail "$U cannot create a file in a 1777 directory"
[ "$(stat -c %u "$B/pub/mine")" = "$UID_U" ] || fail "the file $U created belongs to $(stat -c %U "$B/pub/mine") in the backing directory"
as rm "$M/public" 2>/dev/null && fail "$U removed a file of root's"
[ -e "$B/secret" ] && [ -e "$B/public" ] && [ ! -e "$B/closed/new" ] || fail "the backing directory changed"
[ "$(cat "$B/public")" = public ] || fail "root's 0644 file changed"
echo "ok: permissions"

# --- 3. symlinks and .. -------------------------------------------------------
ln -s /etc "$M/etc_link"
ln -s ../../../.. "$M/up_link"
[ "$(readlink "$M/etc_link")" = /etc ] && [ "$(readlink "$B/etc_link")" = /etc ] ||
	fail "the symlink's target differs"
[ "$(readlink "$M/up_link")" = "$(readlink "$B/up_link")" ] || fail "relative target differs"
cmp -s "$M/etc_link/hostname" /etc/hostname || fail "following the link does not reach /etc"
etc_before=$(stat -c '%u:%g %a %Y' /etc)
touch -h -d '2001-02-03 04:05:06' "$M/etc_link" || fail "touch -h on the link failed"
[ "$(stat -c %Y "$B/etc_link")" = "$(date -d '2001-02-03 04:05:06' +%s)" ] ||
	fail "touch -h did not change the link itself in the backing directory"
chown -h "$U" "$M/etc_link" || fail "chown -h on the link failed"
[ "$(stat -c %u "$B/etc_link")" = "$UID_U" ] || fail "chown -h did not change the link itself"
python3 - "$M/etc_link" <<'PY' || fail "O_NOFOLLOW open of the link did not fail with ELOOP"
import errno, os, sys
try:
    os.open(sys.argv[1], os.O_RDONLY | os.O_NOFOLLOW)
except OSError as e:
    sys.exit(0 if e.errno == errno.ELOOP else 1)
sys.exit(1)
PY
mv "$M/etc_link" "$M/etc_link2" && rm "$M/etc_link2" || fail "cannot rename and remove the link"
[ "$(stat -c '%u:%g %a %Y' /etc)" = "$etc_before" ] || fail "/etc changed: $(stat -c '%u:%g %a %Y' /etc), was $etc_before"
[ -d /etc ] && [ -e /etc/hostname ] || fail "/etc was touched"
[ "$(stat -c %i "$M/..")" = "$(stat -c %i "$T")" ] || fail "$M/.. is not the mount point's parent"
mkdir "$M/sub"
[ "$(stat -c %i "$M/sub/..")" = "$(stat -c %i "$M")" ] || fail "$M/sub/.. is not the mount root"
[ "$(cd "$M/sub/../.." && pwd -P)" = "$(cd "$T" && pwd -P)" ] || fail ".. from the root leaves the mount the wrong way"
echo "ok: symlinks and .."
pgiofs_umount "$M" || fail "cannot unmount"
echo ok
