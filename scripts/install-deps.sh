#!/bin/sh
# install-deps.sh -- install the Debian packages pgiofs needs, if missing.
#
# Idempotent: does nothing (and needs no network) when every package is
# already installed.  Run as root, or with sudo available.  Both README
# commands (make demo, make check) call it through `make deps`.
set -eu

PKGS="build-essential pkg-config
      libfuse3-dev fuse3
      liburing-dev
      liblz4-dev lz4
      libpq-dev postgresql-15 postgresql-client-15
      libinih-dev libjansson-dev
      e2fsprogs xfsprogs util-linux procps psmisc time rsync attr python3
      chromium clang libclang-rt-14-dev
      groff-base systemd python3-prometheus-client dbench bonnie++ fio bpftrace"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "install-deps: missing packages:$missing; run this script as root" >&2
		exit 1
	fi
fi

# Tests and tools start private clusters of their own; a fresh install
# should not create and start Debian's default "main" cluster.
if ! dpkg-query -W -f='${Status}' postgresql-common 2>/dev/null | grep -q "install ok installed"; then
	$SUDO mkdir -p /etc/postgresql-common
	if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
		echo "create_main_cluster = false" | $SUDO tee /etc/postgresql-common/createcluster.conf >/dev/null
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "install-deps: done" >&2
