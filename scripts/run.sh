#!/usr/bin/env bash
# Sets up (if needed) and starts the MemStrata desktop app. Extra arguments go to `memstrata`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/memstrata "$@"
