#!/usr/bin/env bash
# The system tools the test suite uses that a fresh Debian or Ubuntu lacks: node and npm (the
# coding tools of tests/clients: Claude Code, Codex CLI and cn install from npm;
# scripts/clients/install.sh) and objdump (binutils: the .deb's glibc floor,
# installer/linux/package.sh). Installs the distribution's packages when they are missing and
# this is a Debian/Ubuntu machine we may install on (as root, like scripts/postgres.sh);
# otherwise says what to install. Safe to run again.
set -euo pipefail
want=()
command -v npm >/dev/null 2>&1 || want+=(nodejs npm)
command -v objdump >/dev/null 2>&1 || want+=(binutils)
[ ${#want[@]} -gt 0 ] || exit 0
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing ${want[*]} (Debian packages) for the tests"
  export DEBIAN_FRONTEND=noninteractive
  if (apt-get update -qq && apt-get install -y -qq --no-install-recommends "${want[@]}") \
      >/dev/null; then
    exit 0
  fi
fi
echo "scripts/test-tools.sh: missing ${want[*]}: install them (Debian/Ubuntu: apt-get install" \
     "${want[*]}; macOS: brew install node binutils); without npm the coding-tool tests fail" \
     "with that reason" >&2
