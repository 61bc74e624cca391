#!/usr/bin/env bash
# Sets up (if needed) and runs the whole test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
bash scripts/postgres.sh  # a real PostgreSQL for the team-ledger tests
bash scripts/test-tools.sh  # node/npm for the coding tools, objdump for the .deb test
export QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# lint and types first: cheap, and a failure here is a real failure
.venv/bin/ruff check --quiet .
.venv/bin/mypy --no-error-summary
exec .venv/bin/python -m pytest "$@"
