#!/usr/bin/env bash
# Builds the MemStrata bundle with PyInstaller (Linux: dist/memstrata/, macOS: dist/MemStrata.app).
#
#   packaging/build.sh                 build venv in build/venv, bundle in dist/
#
# Environment:
#   PYTHON           interpreter for the build venv (default python3; must be >= 3.11)
#   BUILD_VENV       where the build venv lives (default build/venv; reused when present)
#   MODELS_VENV      where the venv that builds the models lives (default build/models-venv;
#                    only made when memstrata_app/resources lacks a built model)
#   TORCH_INDEX_URL  extra index for the CPU torch wheel the model build needs (torch exports
#                    the embedder; the app never runs it). Linux default:
#                    https://download.pytorch.org/whl/cpu (PyPI's Linux torch is the CUDA
#                    build, several GB). Set it empty where a local wheel house already has
#                    torch 2.13.0+cpu. Unused on macOS (PyPI's macOS torch is CPU/MPS).
#   PYINSTALLER_ARGS extra arguments for pyinstaller
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

PY="${PYTHON:-python3}"
VENV="${BUILD_VENV:-$ROOT/build/venv}"
TORCH_VERSION="2.13.0"  # the models' build only
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

# 1. the models the bundle ships, built offline from the MiniLM weights where the checkout
#    lacks them: the local embedder as one ONNX graph and the static embedder. Their build
#    needs torch (pinned, CPU) and transformers, in a venv of its own: the bundle's venv
#    never has torch, so nothing in the bundle can depend on it.
res="$ROOT/memstrata_app/resources"
if [ ! -f "$res/minilm-onnx/embedder.json" ] || [ ! -f "$res/static-minilm-m2v/build.json" ]; then
  MVENV="${MODELS_VENV:-$ROOT/build/models-venv}"
  echo "==> models (scripts/build_onnx_embedder.py, scripts/build_static_embedder.py) in $MVENV"
  [ -x "$MVENV/bin/python" ] || "$PY" -m venv "$MVENV"
  mpip=("$MVENV/bin/python" -m pip install --disable-pip-version-check -q)
  torch_args=()
  [ -n "$TORCH_INDEX_URL" ] && torch_args=(--extra-index-url "$TORCH_INDEX_URL")
  "${mpip[@]}" ${torch_args[@]+"${torch_args[@]}"} "torch==$TORCH_VERSION"
  "${mpip[@]}" "${ROOT}[distill]"
  HF_HUB_OFFLINE=1 "$MVENV/bin/python" "$ROOT/scripts/build_onnx_embedder.py"
  HF_HUB_OFFLINE=1 "$MVENV/bin/python" "$ROOT/scripts/build_static_embedder.py"
fi

# 2. the app (not editable: the bundle must not depend on this checkout) and PyInstaller,
#    without torch.
echo "==> memstrata-desktop[proxy,gui] + pyinstaller"
"${pip[@]}" "${ROOT}[proxy,gui]" "pyinstaller>=6.10" "pyinstaller-hooks-contrib"
if "$vpy" -c "import torch" >/dev/null 2>&1; then
  echo "the build venv $VENV has torch (an older build's): remove it, or set BUILD_VENV" >&2
  exit 1
fi

# 3. the bundle.
echo "==> pyinstaller packaging/memstrata.spec"
# shellcheck disable=SC2086
"$vpy" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath "$ROOT/dist" --workpath "$ROOT/build/pyinstaller" \
  ${PYINSTALLER_ARGS:-} packaging/memstrata.spec

end=$(date +%s)
if [ "$(uname -s)" = "Darwin" ]; then out="$ROOT/dist/MemStrata.app"; else out="$ROOT/dist/memstrata"; fi
# Symbols off the shared libraries (Linux), as Debian strips its own (dh_strip: debug
# information and the symbols no relocation needs; the dynamic symbol table stays): spaCy's
# and thinc's Cython modules shrink from 126 MB to 16 MB, tokenizers and cryptography by
# 3 MB each. Not the auditwheel-repaired folders (numpy.libs, …): strip breaks their
# patched ELF headers ("ELF load command address/offset not page-aligned").
if [ "$(uname -s)" = Linux ] && command -v strip >/dev/null; then
  before=$(du -sm "$out" | cut -f1)
  find "$out" -name '*.so*' -type f -not -path '*.libs/*' \
    -exec strip --strip-unneeded --remove-section=.comment --remove-section=.note {} +
  echo "==> stripped symbols: ${before} MB -> $(du -sm "$out" | cut -f1) MB"
fi
# Qt's ICU data library (31 MiB) cut to the collation, time-zone and core tables Qt reads
# (packaging/slim_icu.py says what goes and why; needs icupkg from Debian's icu-devtools)
if [ "$(uname -s)" = Linux ]; then
  icu_dir=$(dirname "$(find "$out" -name 'libicudata.so.*' -print -quit)")
  if [ "$icu_dir" != . ]; then
    "$vpy" "$ROOT/packaging/slim_icu.py" "$icu_dir"
  fi
fi
if find "$out" -path '*torch*' -print -quit | grep -q .; then
  echo "the bundle carries torch files: check packaging/memstrata.spec's excludes" >&2
  exit 1
fi
echo "==> built $out in $((end - start)) s ($(du -sh "$out" | cut -f1))"
