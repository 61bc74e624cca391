#!/usr/bin/env bash
# Creates .venv and installs MemStrata with everything it needs. Safe to run again.
#   scripts/setup.sh          the app (engine, endpoint, desktop)
#   scripts/setup.sh --test   the app plus the test tools
# Both also build the local embedder's ONNX graph (scripts/build_onnx_embedder.py) and the
# static embedder (scripts/build_static_embedder.py), ~1-2 min once. torch is needed for those
# builds only: nothing MemStrata runs imports it.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="proxy,gui,distill"
[ "${1:-}" = "--test" ] && extras="proxy,gui,distill,test"

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --disable-pip-version-check -q)

# Already set up for this pyproject.toml and these extras? Then there is nothing to do.
# The stamp records the extras installed; a superset serves too (after `--test`, the app
# needs nothing more), so run.sh and test.sh share one environment without reinstalling.
stamp=".venv/.memstrata-setup"
digest="$(cat pyproject.toml scripts/setup.sh scripts/build_static_embedder.py scripts/build_onnx_embedder.py | sha256sum | cut -d' ' -f1)"
static_model="memstrata_app/resources/static-minilm-m2v"
onnx_model="memstrata_app/resources/minilm-onnx"
if [ -f "$stamp" ] && [ -x .venv/bin/memstrata ] && [ -f "$static_model/build.json" ] \
   && [ -f "$onnx_model/embedder.json" ]; then
  read -r have_digest have_extras < "$stamp" || true
  if [ "${have_digest:-}" = "$digest" ]; then
    covered=1
    for e in ${extras//,/ }; do
      case ",${have_extras:-}," in *",$e,"*) ;; *) covered=0 ;; esac
    done
    [ "$covered" = 1 ] && exit 0
    # installing more: keep what is there, add what is asked
    for e in ${have_extras//,/ }; do
      case ",$extras," in *",$e,"*) ;; *) extras="$extras,$e" ;; esac
    done
  fi
fi
want="$digest ${extras}"

# torch first, pinned: the CPU build (left unpinned, sentence-transformers would pull a
# multi-GB CUDA build). A build-time dependency: it exports the embedder below.
if ! .venv/bin/python -c "import torch" >/dev/null 2>&1; then
  "${pip[@]}" "torch==2.13.0"
fi
"${pip[@]}" -e ".[${extras}]"

# Qt's offscreen/xcb platforms need a few system libraries that slim Linux images lack.
if [ "$(uname -s)" = "Linux" ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  need=()
  for lib in libEGL.so.1:libegl1 libGL.so.1:libgl1 libfontconfig.so.1:libfontconfig1 \
             libxkbcommon.so.0:libxkbcommon0 libdbus-1.so.3:libdbus-1-3 \
             libglib-2.0.so.0:libglib2.0-0; do
    ldconfig -p | grep -q "${lib%%:*}" || need+=("${lib##*:}")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "installing system libraries for Qt: ${need[*]}"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") \
      >/dev/null
  fi
fi
# The static embedder (model2vec, distilled from the MiniLM above; ~15 MB): built here rather
# than kept in git, offline from the shipped weights; skipped when already built from the
# same recipe. It reports whether its digest matches the reference build.
HF_HUB_OFFLINE=1 .venv/bin/python scripts/build_static_embedder.py
# The local embedder (all-MiniLM-L6-v2 with its pooling, as one ONNX graph, ~90 MB): exported
# offline from the same weights; skipped when built from the same recipe. It checks its
# vectors against the torch pipeline and reports whether its digest is the reference one.
HF_HUB_OFFLINE=1 .venv/bin/python scripts/build_onnx_embedder.py

echo "$want" > "$stamp"
echo "MemStrata is set up in $(pwd)/.venv"
