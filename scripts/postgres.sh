#!/usr/bin/env bash
# The PostgreSQL server binaries the team-ledger tests start (initdb in a temporary folder,
# a free port; tests/support/postgres.py). Installs the distribution's package when they are
# missing and this is a Debian/Ubuntu machine we may install on; otherwise says so, and those
# tests skip with the same message. Safe to run again.
set -euo pipefail
have() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null 2>&1
}
if have; then
  exit 0
fi
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing PostgreSQL (Debian package postgresql) for the team-ledger tests"
  export DEBIAN_FRONTEND=noninteractive
  (apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql) >/dev/null
  # the package may start a cluster of its own; the tests use their own, on a free port
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    for v in /etc/postgresql/*/main; do
      [ -d "$v" ] && pg_ctlcluster "$(basename "$(dirname "$v")")" main stop 2>/dev/null || true
    done
  fi
  have && exit 0
fi
echo "scripts/postgres.sh: no PostgreSQL server here (initdb); the team-ledger tests will skip." \
     "Install it (Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql@15)" \
     "or set PG_BINDIR to the folder holding initdb." >&2
