#!/usr/bin/env bash
# Installs the system packages the test suite needs (as root, from Debian's packages). Idempotent.
set -euo pipefail
need=()
# (filled in as features need system packages: chromium for the dashboard, redis-server for cluster mode)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  else
    echo "missing system packages: ${need[*]} (install them as root)" >&2
  fi
fi
