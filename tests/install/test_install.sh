#!/bin/bash
# test_install.sh -- `make install` lays out binaries, the default
# configuration, the profiles, man pages and the systemd unit template; the
# installed pgiofs finds its profiles and mounts with the installed
# configuration exactly as the unit's ExecStart line runs it; an edited
# configuration survives a second install.
set -u
. "$(dirname "$0")/../lib.sh"

D=$(mktempdir)
inst() {
	make -s -C "$TOP" --no-print-directory -o "$BIN/pgiofs" -o "$BIN/pgload" \
		PROGS="$BIN/pgiofs $BIN/pgload" PREFIX=/usr DESTDIR="$D" install >"$D.log" 2>&1 ||
		{ cat "$D.log"; fail "make install failed"; }
}
inst
for f in usr/bin/pgiofs usr/bin/pgload etc/pgiofs/pgiofs.conf usr/share/pgiofs/pgiofs.conf \
	usr/share/man/man1/pgiofs.1 usr/share/man/man1/pgload.1 usr/share/man/man1/pgdisk.1 \
	usr/lib/systemd/system/pgiofs@.service; do
	[ -f "$D/$f" ] || fail "make install did not install /$f"
done
for p in "$TOP"/config/profiles/*.conf; do
	cmp -s "$p" "$D/usr/share/pgiofs/profiles/$(basename "$p")" || fail "profile $(basename "$p") not installed"
done
echo "ok: layout (PREFIX=/usr puts the configuration in /etc)"

# man pages render without warnings
for m in pgiofs pgload pgdisk; do
	w=$(groff -man -ww -z -Tutf8 "$D/usr/share/man/man1/$m.1" 2>&1)
	[ -z "$w" ] || fail "$m(1) has roff warnings: $w"
done
echo "ok: man pages render cleanly"

# the installed binary finds the installed profiles (../share/pgiofs/profiles)
PGIOFS_PROFILE_DIR= "$D/usr/bin/pgiofs" --profile as-2.6 --print-config >"$D.cfg" 2>&1 ||
	{ cat "$D.cfg"; fail "installed pgiofs cannot load profile as-2.6"; }
grep -qx 'policy = as-2.6' "$D.cfg" || fail "installed profile not applied"
echo "ok: installed pgiofs finds its profiles"

# the unit: paths substituted, syntax verified, and its ExecStart works
U="$D/usr/lib/systemd/system/pgiofs@.service"
grep -q '@BINDIR@\|@SYSCONFDIR@' "$U" && fail "unsubstituted placeholders in the unit"
grep -q '^ExecStart=/usr/bin/pgiofs \$PGIOFS_OPTS \${BACKING} %f$' "$U" || fail "unit ExecStart: $(grep ExecStart "$U")"
grep -q '^Type=forking$' "$U" || fail "the unit must wait for pgiofs to daemonize once mounted"
mnt="$D/srv/pg"
mkdir -p "$mnt" "$mnt.backing"
unit="pgiofs@$(systemd-escape -p "$mnt").service"
sed "s|/usr/bin/pgiofs|$D/usr/bin/pgiofs|; s|/etc/pgiofs|$D/etc/pgiofs|g" "$U" >"$D/$unit"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify --man=no "$D/$unit" >"$D.verify" 2>&1 ||
		{ cat "$D.verify"; fail "systemd-analyze verify rejected the unit"; }
fi
# ExecStart as systemd runs it: the default PGIOFS_OPTS and BACKING=%f.backing
opts=$(sed -n 's/^Environment="PGIOFS_OPTS=\(.*\)"$/\1/p' "$D/$unit")
[ -n "$opts" ] || fail "no default PGIOFS_OPTS in the unit"
# shellcheck disable=SC2086  # word splitting as systemd does for $VAR
"$D/usr/bin/pgiofs" $opts "$mnt.backing" "$mnt" || fail "the unit's ExecStart failed"
_cleanup_mounts+=("$mnt")
is_mounted "$mnt" || fail "not mounted once ExecStart returned (Type=forking)"
echo data >"$mnt/f" && [ "$(cat "$mnt.backing/f")" = data ] || fail "the mount does not pass through"
pgiofs_umount "$mnt" || fail "unmount"
echo "ok: unit verified; its ExecStart mounts with the installed configuration"

# a second install keeps an edited configuration
echo '; edited' >>"$D/etc/pgiofs/pgiofs.conf"
inst
tail -1 "$D/etc/pgiofs/pgiofs.conf" | grep -q edited || fail "make install overwrote an edited configuration"
echo "ok: reinstall keeps /etc/pgiofs/pgiofs.conf"

# the unit waits for the file system of the backing directory, not for its
# own mount point (which it makes)
grep -qx 'RequiresMountsFor=%f.backing' "$U" || fail "unit RequiresMountsFor: $(grep RequiresMountsFor "$U")"

# uninstall removes what install put there, and keeps the configuration
make -s -C "$TOP" --no-print-directory PREFIX=/usr DESTDIR="$D" uninstall >"$D.log" 2>&1 ||
	{ cat "$D.log"; fail "make uninstall failed"; }
left=$(cd "$D" && find usr -type f)
[ -z "$left" ] || fail "make uninstall left files: $left"
[ -f "$D/etc/pgiofs/pgiofs.conf" ] || fail "make uninstall removed the (possibly edited) configuration"
echo "ok: uninstall removes every installed file but the configuration"

# PREFIX=/usr/local: binaries under /usr/local, the configuration in /etc,
# where the unit (and the documentation) look for it
D2=$(mktempdir)
make -s -C "$TOP" --no-print-directory -o "$BIN/pgiofs" -o "$BIN/pgload" \
	PROGS="$BIN/pgiofs $BIN/pgload" PREFIX=/usr/local DESTDIR="$D2" install >"$D2.log" 2>&1 ||
	{ cat "$D2.log"; fail "make install PREFIX=/usr/local failed"; }
[ -f "$D2/etc/pgiofs/pgiofs.conf" ] && [ -x "$D2/usr/local/bin/pgiofs" ] ||
	fail "PREFIX=/usr/local: $(cd "$D2" && find . -type f | head)"
grep -q '^ExecStart=/usr/local/bin/pgiofs ' "$D2/usr/local/lib/systemd/system/pgiofs@.service" &&
	grep -q 'config=/etc/pgiofs/pgiofs.conf' "$D2/usr/local/lib/systemd/system/pgiofs@.service" ||
	fail "PREFIX=/usr/local: the unit's paths are wrong"
echo "ok: PREFIX=/usr/local installs the configuration in /etc"
