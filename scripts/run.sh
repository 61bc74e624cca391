#!/usr/bin/env bash
# Sets up (if needed) and starts the MemStrata desktop app. Extra arguments go to `memstrata`.
#   scripts/run.sh --yes [ARGS]   install missing system libraries without asking first
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--yes" ] || [ "${1:-}" = "-y" ]; then
  shift
  bash scripts/setup.sh --yes
else
  bash scripts/setup.sh
fi
exec .venv/bin/memstrata "$@"
