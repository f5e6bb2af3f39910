#!/usr/bin/env bash
# System packages the tests need beyond npm: Debian's chromium for the dashboard's browser tests.
# A no-op when it is already installed; otherwise apt-get (as root, or through sudo when available).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "ensure-system-packages: /usr/bin/chromium is missing and there is no root or sudo to install it" >&2
  exit 1
fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
