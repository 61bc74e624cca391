#!/usr/bin/env bash
# Builds the MemStrata bundle with PyInstaller (Linux: dist/memstrata/, macOS: dist/MemStrata.app).
#
#   packaging/build.sh                 build venv in build/venv, bundle in dist/
#
# Environment:
#   PYTHON           interpreter for the build venv (default python3; must be >= 3.11)
#   BUILD_VENV       where the build venv lives (default build/venv; reused when present)
#   TORCH_INDEX_URL  extra index for the CPU torch wheel. Linux default:
#                    https://download.pytorch.org/whl/cpu (PyPI's Linux torch is the CUDA
#                    build, several GB). Set it empty where a local wheel house already has
#                    torch 2.13.0+cpu. Unused on macOS (PyPI's macOS torch is CPU/MPS).
#   PYINSTALLER_ARGS extra arguments for pyinstaller
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

PY="${PYTHON:-python3}"
VENV="${BUILD_VENV:-$ROOT/build/venv}"
TORCH_VERSION="2.13.0"
case "$(uname -s)" in
  Linux) TORCH_INDEX_URL="${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}" ;;
  *)     TORCH_INDEX_URL="${TORCH_INDEX_URL-}" ;;
esac

start=$(date +%s)
if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating build venv $VENV"
  "$PY" -m venv "$VENV"
fi
vpy="$VENV/bin/python"
"$vpy" -c 'import sys; assert sys.version_info >= (3, 11), sys.version' \
  || { echo "build venv needs Python >= 3.11" >&2; exit 1; }
pip=("$vpy" -m pip install --disable-pip-version-check -q)
"${pip[@]}" --upgrade pip wheel setuptools

# 1. torch first, pinned, CPU build. Installed before the app so that sentence-transformers'
#    unpinned torch requirement is already met and pip never fetches a CUDA build.
echo "==> torch==$TORCH_VERSION (CPU)"
torch_args=()
[ -n "$TORCH_INDEX_URL" ] && torch_args=(--extra-index-url "$TORCH_INDEX_URL")
"${pip[@]}" ${torch_args[@]+"${torch_args[@]}"} "torch==$TORCH_VERSION"
"$vpy" - <<'PY'
import torch, sys
if torch.version.cuda or getattr(torch.version, "hip", None):
    sys.exit(f"torch {torch.__version__} is a GPU build (CUDA {torch.version.cuda}); "
             "install the CPU wheel (TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu)")
print(f"    torch {torch.__version__}, CPU only")
PY

# 2. the app (not editable: the bundle must not depend on this checkout) and PyInstaller.
echo "==> memstrata-desktop[proxy,gui] + pyinstaller"
"${pip[@]}" "${ROOT}[proxy,gui]" "pyinstaller>=6.10" "pyinstaller-hooks-contrib"
"$vpy" -c 'import torch; assert not torch.version.cuda, "the app install replaced torch with a CUDA build"'

# 3. the static embedder (model2vec, ~15 MB) the bundle ships beside MiniLM, so that
#    `--embedder static` works in an installed app: built from the same MiniLM weights.
if [ ! -f "$ROOT/memstrata_app/resources/static-minilm-m2v/build.json" ]; then
  echo "==> static embedder (scripts/build_static_embedder.py)"
  "${pip[@]}" "${ROOT}[distill]"
  HF_HUB_OFFLINE=1 "$vpy" "$ROOT/scripts/build_static_embedder.py"
fi

# 4. the bundle.
echo "==> pyinstaller packaging/memstrata.spec"
# shellcheck disable=SC2086
"$vpy" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" \
  ${PYINSTALLER_ARGS:-} packaging/memstrata.spec

end=$(date +%s)
if [ "$(uname -s)" = "Darwin" ]; then out="$ROOT/dist/MemStrata.app"; else out="$ROOT/dist/memstrata"; fi
echo "==> built $out in $((end - start)) s ($(du -sh "$out" | cut -f1))"
