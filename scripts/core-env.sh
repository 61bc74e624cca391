#!/usr/bin/env bash
# The core environment (.venv-core): the engine and its test tools, with no Qt and no HTTP
# server packages installed (DESIGN.md, Layers). scripts/test-core.sh runs the engine's tests
# in it; .ci/run checks the import contracts in it first.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-core
yes=0
[ "${1:-}" = "--yes" ] && yes=1  # install a missing venv module without asking (CI)
bash scripts/python-venv.sh "$venv" "$yes"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check -q)
"$venv/bin/python" -c "import torch" >/dev/null 2>&1 || "${pip[@]}" "torch==2.13.0"
"${pip[@]}" -e ".[distill]" pytest pytest-timeout hypothesis import-linter
# the local embedder's ONNX graph (shared with .venv: same checkout, same recipe, built once)
HF_HUB_OFFLINE=1 "$venv/bin/python" scripts/build_onnx_embedder.py
for pkg in PySide6 pyqtgraph starlette uvicorn mcp; do
  if "$venv/bin/python" -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('$pkg') is None)"; then
    echo "core-env: $pkg is installed in $venv; the core environment must not have it" >&2
    exit 1
  fi
done
