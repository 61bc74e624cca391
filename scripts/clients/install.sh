#!/usr/bin/env bash
# Install pinned versions of real coding tools into ignored folders under tests/clients/,
# for scripts/clients/capture.py. Idempotent; always exits 0 and says per tool what it
# installed, found already installed, or skipped and why.
#
#   npm  (prefix tests/clients/.tools): @anthropic-ai/claude-code, @openai/codex,
#                                       @continuedev/cli (command `cn`)
#   PyPI (own venvs):                   aider-chat -> tests/clients/.venv-aider
#                                       llm + llm-ollama -> tests/clients/.venv-llm
#
# Only the package registries are used: a tool whose install step needs anything else
# (a binary downloaded from the internet) is reported as skipped.
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLIENTS="$ROOT/tests/clients"
PREFIX="$CLIENTS/.tools"
T_NPM="${T_NPM:-300}"   # seconds allowed for one npm install
T_PIP="${T_PIP:-600}"   # seconds allowed for one pip install

CLAUDE_PIN="${CLAUDE_PIN:-2.1.197}"
CODEX_PIN="${CODEX_PIN:-0.171.0}"
CN_PIN="${CN_PIN:-1.5.47}"
AIDER_PIN="${AIDER_PIN:-0.86.2}"
LLM_PIN="${LLM_PIN:-0.36}"
LLM_OLLAMA_PIN="${LLM_OLLAMA_PIN:-0.19.1}"

CHECK_HOME="$(mktemp -d)"   # throwaway HOME for the --version checks
trap 'rm -rf "$CHECK_HOME"' EXIT

say() { printf '%s\n' "$*"; }
tail1() { grep -v "^WARNING: Location" | grep -v '^\s*$' | tail -n "${1:-1}" | tr '\n' ' '; }

mkdir -p "$CLIENTS"

# ------------------------------------------------------------------------------ npm --
npm_installed_version() {  # $1 package -> prints version or nothing
  local pj="$PREFIX/node_modules/$1/package.json"
  [ -f "$pj" ] && node -p "require('$pj').version" 2>/dev/null
}

npm_tool() {  # $1 label  $2 package  $3 version  $4 bin
  local label="$1" pkg="$2" ver="$3" bin="$4" have out
  have="$(npm_installed_version "$pkg")"
  if [ "$have" = "$ver" ] && HOME="$CHECK_HOME" timeout 60 "$PREFIX/node_modules/.bin/$bin" --version >/dev/null 2>&1; then
    say "already installed: $label $pkg@$ver ($PREFIX/node_modules/.bin/$bin)"
    return 0
  fi
  if ! out="$(timeout "$T_NPM" npm install --prefix "$PREFIX" --no-audit --no-fund \
        --save-exact "$pkg@$ver" 2>&1)"; then
    say "skipped: $label $pkg@$ver: npm install failed: $(printf '%s' "$out" | tail1 3)"
    return 0
  fi
  if [ ! -x "$PREFIX/node_modules/.bin/$bin" ]; then
    say "skipped: $label $pkg@$ver: installed but no '$bin' command"
    return 0
  fi
  # Claude Code's postinstall copies its native binary (shipped in the per-platform
  # optional package) over a placeholder; npm versions that hold back install scripts
  # leave the placeholder. Run that step ourselves: it reads registry content only.
  if [ "$bin" = "claude" ] && ! HOME="$CHECK_HOME" timeout 60 "$PREFIX/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    (cd "$PREFIX/node_modules/$pkg" && timeout 120 node install.cjs >/dev/null 2>&1) || true
  fi
  if out="$(HOME="$CHECK_HOME" timeout 60 "$PREFIX/node_modules/.bin/$bin" --version 2>&1)"; then
    say "installed: $label $pkg@$ver -> $(printf '%s' "$out" | tail -n1)"
  else
    say "skipped: $label $pkg@$ver: installed but '$bin --version' fails: $(printf '%s' "$out" | tail1 2)"
  fi
}

if ! command -v npm >/dev/null 2>&1; then
  say "skipped: claude-code, codex, continue-cn: npm not found"
elif ! timeout 30 npm ping >/dev/null 2>&1; then
  say "skipped: claude-code, codex, continue-cn: npm registry unreachable (npm ping failed)"
else
  mkdir -p "$PREFIX"
  [ -f "$PREFIX/package.json" ] || printf '{"private": true}\n' > "$PREFIX/package.json"
  claude_ver="$CLAUDE_PIN"
  if ! timeout 60 npm view "@anthropic-ai/claude-code@$CLAUDE_PIN" version >/dev/null 2>&1; then
    # Pin not served: fall back to the newest 2.1.x.
    claude_ver="$(timeout 60 npm view @anthropic-ai/claude-code versions --json 2>/dev/null |
      python3 -c 'import json,sys; v=[x for x in json.load(sys.stdin) if x.startswith("2.1.") and "-" not in x]; print(max(v, key=lambda s: tuple(map(int, s.split(".")))) if v else "")' 2>/dev/null)"
    say "note: @anthropic-ai/claude-code@$CLAUDE_PIN not served; using ${claude_ver:-none}"
  fi
  if [ -n "$claude_ver" ]; then
    npm_tool claude-code @anthropic-ai/claude-code "$claude_ver" claude
  else
    say "skipped: claude-code: no 2.1.x version served"
  fi
  npm_tool codex @openai/codex "$CODEX_PIN" codex
  npm_tool continue-cn @continuedev/cli "$CN_PIN" cn
fi

# ----------------------------------------------------------------------------- PyPI --
pick_python() {  # aider-chat 0.86 needs 3.10 <= Python < 3.13
  local c
  for c in python3.12 python3.11 python3.10 python3; do
    if command -v "$c" >/dev/null 2>&1 &&
       "$c" -c 'import sys; sys.exit(not ((3,10) <= sys.version_info[:2] < (3,13)))' 2>/dev/null; then
      command -v "$c"; return 0
    fi
  done
  return 1
}

venv_tool() {  # $1 label  $2 venv dir  $3 check command (in venv bin)  $4 expected version text  $5.. pip specs
  local label="$1" venv="$2" check="$3" want="$4"; shift 4
  local py out
  if [ -x "$venv/bin/$check" ] && HOME="$CHECK_HOME" timeout 120 "$venv/bin/$check" --version 2>/dev/null | grep -q "$want"; then
    say "already installed: $label ($*) in ${venv#$ROOT/}"
    return 0
  fi
  if ! py="$(pick_python)"; then
    say "skipped: $label: no Python between 3.10 and 3.12 found"
    return 0
  fi
  [ -x "$venv/bin/python" ] || "$py" -m venv "$venv" || { say "skipped: $label: cannot create venv"; return 0; }
  if [ "$label" = aider ]; then
    # Refuse anything that would pull torch (aider's base install must not need it).
    local report; report="$(mktemp)"
    if ! out="$(timeout "$T_PIP" "$venv/bin/pip" install --dry-run --quiet --report "$report" "$@" 2>&1)"; then
      say "skipped: $label ($*): pip could not resolve it (registry unreachable?): $(printf '%s' "$out" | tail1 2)"
      rm -rf "$venv" "$report"; return 0
    fi
    if grep -q '"name": "torch"' "$report"; then
      say "skipped: $label ($*): its dependencies would pull torch"
      rm -rf "$venv" "$report"; return 0
    fi
    rm -f "$report"
  fi
  if ! out="$(timeout "$T_PIP" "$venv/bin/pip" install --quiet "$@" 2>&1)"; then
    say "skipped: $label ($*): pip install failed (registry unreachable?): $(printf '%s' "$out" | tail1 2)"
    return 0
  fi
  if out="$(HOME="$CHECK_HOME" timeout 120 "$venv/bin/$check" --version 2>&1)"; then
    say "installed: $label ($*) -> $(printf '%s' "$out" | tail -n1)"
  else
    say "skipped: $label: installed but '$check --version' fails: $(printf '%s' "$out" | tail1 2)"
  fi
}

venv_tool aider "$CLIENTS/.venv-aider" aider "$AIDER_PIN" "aider-chat==$AIDER_PIN"
venv_tool llm "$CLIENTS/.venv-llm" llm "$LLM_PIN" "llm==$LLM_PIN" "llm-ollama==$LLM_OLLAMA_PIN"

exit 0
