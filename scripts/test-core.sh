#!/usr/bin/env bash
# The engine's tests in an environment with no Qt and no HTTP server packages installed:
# proof that memstrata_app.engine stands alone (DESIGN.md, Layers).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-core
py="${PYTHON:-python3}"
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check -q)
"$venv/bin/python" -c "import torch" >/dev/null 2>&1 || "${pip[@]}" "torch==2.13.0"
"${pip[@]}" -e . pytest pytest-timeout hypothesis import-linter
for pkg in PySide6 pyqtgraph starlette uvicorn mcp; do
  if "$venv/bin/python" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('$pkg') is None)"; then
    echo "test-core: $pkg is installed in $venv; the core environment must not have it" >&2
    exit 1
  fi
done
bash scripts/postgres.sh  # a real PostgreSQL for the team-ledger tests
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec "$venv/bin/python" -m pytest tests/engine -q -p no:cacheprovider \
  -W "ignore:Unknown config option:pytest.PytestConfigWarning" "$@"
