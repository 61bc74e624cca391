#!/usr/bin/env bash
# Median wall time of 5 runs of CLI commands in a fresh temporary MEMSTRATA_HOME: `query`
# opening the ledger itself (loads the embedding model, int8, on ONNX Runtime), on a ledger
# of the fp32 space its fp32 graph and the same through torch (`--embedder local-torch`, the
# runtime before: the ratio), a cold `ingest` (parser,
# judge and embedder), and through a running `memstrata serve`; commands that need no
# model; `query` on a static-embedder ledger.
# Used for docs/PERFORMANCE.md (CLI).
#   scripts/cli-timing.sh [PORT]      (default 11799)
#   MEMSTRATA_BIN=dist/memstrata/memstrata scripts/cli-timing.sh   an installed binary (the
#                                     bundle) instead of .venv's; it carries neither the fp32
#                                     graph nor torch, so those two rows are left out
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
MEMSTRATA_HOME="$(mktemp -d)"
export MEMSTRATA_HOME
port="${1:-11799}"
M="${MEMSTRATA_BIN:-.venv/bin/memstrata}"
times="$MEMSTRATA_HOME/times"

median5() {  # median5 CMD…: run it 5 times, print the median wall time in seconds
  : > "$times"
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%e" -a -o "$times" "$@" >/dev/null 2>&1
  done
  sort -n "$times" | sed -n 3p
}

$M ingest "The auth service port is 8080." --at 2025-01-10 >/dev/null
$M ingest "The auth service port is 9090." --at 2025-03-01 >/dev/null
echo "nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
echo "query, no endpoint (cold: loads the model)   $(median5 $M query 'auth service port') s"
# the fp32 space (a ledger made before int8 was the default): its ONNX graph against torch
if [ -z "${MEMSTRATA_BIN:-}" ]; then
fp32_home="$(mktemp -d)"
MEMSTRATA_HOME="$fp32_home" $M --embedder local-fp32 ingest "The auth service port is 8080." --at 2025-01-10 >/dev/null
MEMSTRATA_HOME="$fp32_home" $M ingest "The auth service port is 9090." --at 2025-03-01 >/dev/null
q_onnx=$(median5 env MEMSTRATA_HOME="$fp32_home" $M query 'auth service port')
q_torch=$(median5 env MEMSTRATA_HOME="$fp32_home" $M --embedder local-torch query 'auth service port')
rm -rf "$fp32_home"
echo "query, fp32-space ledger (ONNX fp32 graph)   $q_onnx s"
echo "query, fp32-space ledger, through torch      $q_torch s  (ONNX: ×$(echo "scale=3; $q_onnx / $q_torch" | bc | sed "s/^\./0./"))"
fi
echo "ingest, no endpoint (cold: parser, judge)    $(median5 $M ingest 'The auth service timeout is 30 seconds.') s"
echo "the same, regex programs compiled anew       $(median5 env MEMSTRATA_REGEX_CACHE=0 $M ingest 'The auth service timeout is 30 seconds.') s"
echo "stats (no model)                             $(median5 $M stats) s"
echo "history, loose words (no model)              $(median5 $M history auth port) s"
# the same on a ledger that embeds with the static model (no torch)
static_home="$(mktemp -d)"
echo '{"embedder": "static"}' > "$static_home/settings.json"
MEMSTRATA_HOME="$static_home" $M ingest "The auth service port is 8080." --at 2025-01-10 >/dev/null
MEMSTRATA_HOME="$static_home" $M ingest "The auth service port is 9090." --at 2025-03-01 >/dev/null
echo "query, static-embedder ledger, no endpoint   $(median5 env MEMSTRATA_HOME="$static_home" $M query 'auth service port') s"
rm -rf "$static_home"
$M serve --port "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$MEMSTRATA_HOME"' EXIT
for _ in $(seq 1 240); do
  curl -sf -m 1 "http://127.0.0.1:$port/memstrata/status" >/dev/null && break
  sleep 0.5
done
$M query warm-up >/dev/null  # the endpoint loads its model in the background
echo "query, through memstrata serve (warm)        $(median5 $M query 'auth service port') s"
echo "query --direct, serve running                $(median5 $M --direct query 'auth service port') s"
