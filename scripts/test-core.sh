#!/usr/bin/env bash
# The engine's tests in an environment with no Qt and no HTTP server packages installed:
# proof that memstrata_app.engine stands alone (DESIGN.md, Layers).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-core
bash scripts/core-env.sh
bash scripts/postgres.sh  # a real PostgreSQL for the team-ledger tests
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$venv/bin/python" -m pytest tests/engine -q -p no:cacheprovider \
  -W "ignore:Unknown config option:pytest.PytestConfigWarning" "$@"
