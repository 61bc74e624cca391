#!/usr/bin/env bash
# The virtual environment VENV (scripts/setup.sh: .venv; scripts/core-env.sh: .venv-core), made
# with Python >= 3.11 ($PYTHON, default python3). `python-venv.sh VENV [1]`: 1 installs a
# missing venv module without asking.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$1"
yes="${2:-0}"
# Python >= 3.11 with its venv module. Debian and Ubuntu ship venv's pip in a package of its
# own (python3.X-venv): without it `python3 -m venv` leaves a .venv without pip, which would
# fail every later run; so it is checked first (and offered, like the Qt libraries), and a
# .venv without pip (left by such a run) is made again.
py="${PYTHON:-python3}"
if ! command -v "$py" >/dev/null 2>&1; then
  echo "setup.sh: $py not found: MemStrata needs Python 3.11 or newer (set PYTHON=/path/to/python3)" >&2
  exit 1
fi
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup.sh: $("$py" --version 2>&1) is too old: MemStrata needs Python 3.11 or newer (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  venv_pkg="python$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo "
  if command -v apt-get >/dev/null 2>&1 && { [ "$yes" = 1 ] || [ -t 0 ]; }; then
    answer=y
    if [ "$yes" != 1 ]; then
      read -r -p "Python's venv module is missing; install it now (${sudo_cmd}apt-get install $venv_pkg)? [Y/n] " answer || answer=n
    fi
    case "$answer" in
      ""|y|Y|yes|Yes)
        echo "installing: $venv_pkg"
        { ${sudo_cmd}apt-get update -qq && ${sudo_cmd}env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq "$venv_pkg"; } >/dev/null || true ;;
    esac
  fi
  if ! "$py" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      echo "setup.sh: Python's venv module is missing: run ${sudo_cmd}apt-get install $venv_pkg (or scripts/setup.sh --yes), then this again" >&2
    else
      echo "setup.sh: Python's venv module (with ensurepip) is missing: install your distribution's python3 venv package, then run this again" >&2
    fi
    exit 1
  fi
fi
if [ -x "$venv/bin/python" ] && ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
  echo "the $venv here has no pip (left by a set-up that could not finish): making it again"
  "$py" -m venv --clear "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
