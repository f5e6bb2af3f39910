#!/usr/bin/env bash
# System packages the tests need beyond npm: Debian's chromium for the dashboard's browser tests and
# redis-server for the cluster tests, bubblewrap for the workspace sandbox, a C compiler for the native spawner. A no-op when both are installed; otherwise apt-get (as root, or
# through sudo when available).
set -euo pipefail
MISSING=()
[ -x /usr/bin/chromium ] || MISSING+=(chromium)
[ -x /usr/bin/redis-server ] || MISSING+=(redis-server)
# bubblewrap: the sandbox of runs spawned with sandbox: true (issue 31).
[ -x /usr/bin/bwrap ] || MISSING+=(bubblewrap)
# A C compiler: the native spawner is built with the host's cc (D-381); better-sqlite3's build needs one too.
command -v cc >/dev/null 2>&1 || MISSING+=(gcc libc6-dev)
if [ "${#MISSING[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "ensure-system-packages: ${MISSING[*]} missing and there is no root or sudo to install it" >&2
  exit 1
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${MISSING[@]}"
