#!/usr/bin/env bash
# Creates .venv and installs MemStrata with everything it needs. Safe to run again.
#   scripts/setup.sh          the app (engine, endpoint, desktop)
#   scripts/setup.sh --test   the app plus the test tools
set -euo pipefail
cd "$(dirname "$0")/.."

extras="proxy,gui"
[ "${1:-}" = "--test" ] && extras="proxy,gui,test"

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --disable-pip-version-check -q)

# Already set up for this pyproject.toml and these extras? Then there is nothing to do.
stamp=".venv/.memstrata-setup"
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1) ${extras}"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x .venv/bin/memstrata ]; then
  exit 0
fi

# torch first, pinned: the CPU build. Left unpinned, sentence-transformers would pull a
# multi-GB CUDA build that this app never uses.
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
echo "$want" > "$stamp"
echo "MemStrata is set up in $(pwd)/.venv"
