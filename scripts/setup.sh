#!/usr/bin/env bash
# Creates .venv and installs MemStrata with everything it needs. Safe to run again.
#   scripts/setup.sh          the app (engine, endpoint, desktop)
#   scripts/setup.sh --test   the app plus the test tools
#   scripts/setup.sh --yes    install missing system libraries without asking (with --test too)
# Both also build the local embedder's ONNX graph (scripts/build_onnx_embedder.py) and the
# static embedder (scripts/build_static_embedder.py), ~1-2 min once (torch is needed for
# those builds only: nothing MemStrata runs imports it), and check, every time, the system
# libraries Qt's window plugin needs (the list: memstrata_app/resources/qt-system-libs.txt):
# on Debian/Ubuntu they offer to install the missing ones with apt-get, asking first (--yes:
# without asking; without a terminal to ask on, they only say what to run).
set -euo pipefail
cd "$(dirname "$0")/.."

extras="proxy,gui,distill"
yes=0
for a in "$@"; do
  case "$a" in
    --test) extras="proxy,gui,distill,test" ;;
    --yes|-y) yes=1 ;;
    *) echo "setup.sh: unknown option $a (use --test, --yes)" >&2; exit 2 ;;
  esac
done

# The system libraries Qt's xcb platform plugin loads (Qt aborts without them, naming only the
# first): those the loader cannot find, by `python -m memstrata_app.qt_check --missing`
# (ldd over the installed plugin), mapped to Debian packages by qt-system-libs.txt.
qt_system_libs() {
  [ "$(uname -s)" = "Linux" ] || return 0
  local missing pkgs unknown answer
  missing="$(.venv/bin/python -m memstrata_app.qt_check --missing 2>/dev/null)" || return 0
  [ -n "$missing" ] || return 0
  echo "Qt needs these system libraries to open the window, and they are missing:"
  printf '%s\n' "$missing" | while read -r so pkg; do
    if [ "$pkg" = "?" ]; then echo "  $so"; else echo "  $so  (package $pkg)"; fi
  done
  pkgs="$(printf '%s\n' "$missing" | awk '$2 != "?" {print $2}' | sort -u | tr '\n' ' ')"
  pkgs="${pkgs% }"
  unknown="$(printf '%s\n' "$missing" | awk '$2 == "?" {print $1}' | tr '\n' ' ')"
  [ -z "$unknown" ] || echo "  (no package known for: ${unknown% }: install the ones that provide them)"
  if [ -z "$pkgs" ]; then return 0; fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install your distribution's packages for them (on Debian/Ubuntu: $pkgs);"
    echo "the headless commands (memstrata serve, ingest, query, ...) work without them"
    return 0
  fi
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
      echo "as root, run: apt-get install $pkgs"; return 0
    fi
  fi
  local cmd="${sudo[*]:+${sudo[*]} }apt-get install $pkgs"
  if [ "$yes" != 1 ]; then
    if [ ! -t 0 ]; then
      echo "not installing without asking: run scripts/setup.sh --yes (or scripts/run.sh --yes), or: $cmd"
      return 0
    fi
    read -r -p "Install them now ($cmd)? [Y/n] " answer || answer=n
    case "$answer" in
      ""|y|Y|yes|Yes) ;;
      *) echo "not installed; later: $cmd"; return 0 ;;
    esac
  fi
  echo "installing: $pkgs"
  if ! { "${sudo[@]}" apt-get update -qq &&
         "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs; } >/dev/null
  then
    echo "apt-get failed; run it yourself: $cmd" >&2
    return 0
  fi
  missing="$(.venv/bin/python -m memstrata_app.qt_check --missing 2>/dev/null)" || return 0
  [ -z "$missing" ] || { echo "still missing after the install:"; printf '  %s\n' "$missing"; }
}

# Python >= 3.11 and its venv module (Debian ships it apart: offered like the Qt libraries),
# and .venv made, or made again when a failed attempt left it without pip
bash scripts/python-venv.sh .venv "$yes"
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
    if [ "$covered" = 1 ]; then qt_system_libs; exit 0; fi
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

qt_system_libs
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
