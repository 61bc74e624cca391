#!/usr/bin/env bash
# Cold commands with the kept regular-expression programs (memstrata_app/regex_cache.py) and
# without (MEMSTRATA_REGEX_CACHE=0), interleaved run by run so that both sides see the same
# machine: `ingest` and `query` (wall and CPU seconds, median and minimum) and the app's
# launch (`gui --exit-when-warm`, offscreen: the embedder's "loaded … ms after the app
# module loaded"). Used for docs/PERFORMANCE.md.
#   scripts/regex-cache-timing.sh [ROUNDS]     (default 11; the app gets ROUNDS/3 launches)
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false QT_QPA_PLATFORM=offscreen
unset PYTHONDONTWRITEBYTECODE  # as on a user's machine: the project's .pyc files are kept
rounds="${1:-11}"
M=.venv/bin/memstrata
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export MEMSTRATA_HOME="$tmp/home"
$M ingest "The auth service port is 8080." --at 2025-01-10 >/dev/null  # also fills the cache
$M ingest "The auth service port is 9090." --at 2025-03-01 >/dev/null
echo "nproc $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?), $rounds rounds"
for cmd in ingest query; do
  if [ "$cmd" = ingest ]; then args=(ingest "The auth service timeout is 30 seconds.")
  else args=(query "auth service port"); fi
  : > "$tmp/on"; : > "$tmp/off"
  for _ in $(seq "$rounds"); do
    /usr/bin/time -a -o "$tmp/on" -f "%e %U %S" $M "${args[@]}" >/dev/null 2>&1
    MEMSTRATA_REGEX_CACHE=0 /usr/bin/time -a -o "$tmp/off" -f "%e %U %S" $M "${args[@]}" \
      >/dev/null 2>&1
  done
  for side in on off; do
    .venv/bin/python - "$cmd" "$side" "$tmp/$side" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[3]) if line.strip()]
wall, cpu = [r[0] for r in rows], [r[1] + r[2] for r in rows]
print(f"{sys.argv[1]:6} cache {sys.argv[2]:3}: wall median {statistics.median(wall):.2f} s "
      f"(min {min(wall):.2f}), cpu median {statistics.median(cpu):.2f} s (min {min(cpu):.2f})")
PY
  done
done
# the app: a fresh data folder each launch, the cache file carried over on the "on" side
launches=$(( rounds / 3 > 1 ? rounds / 3 : 2 ))
cp "$MEMSTRATA_HOME/cache/regex-programs.marshal" "$tmp/programs"
for side in on off; do : > "$tmp/app-$side"; done
for _ in $(seq "$launches"); do
  for side in on off; do
    home="$tmp/app"; rm -rf "$home"; mkdir -p "$home/cache"
    cp "$tmp/programs" "$home/cache/regex-programs.marshal"
    flag=1; [ "$side" = off ] && flag=0
    MEMSTRATA_HOME="$home" MEMSTRATA_REGEX_CACHE=$flag timeout 120 $M gui --exit-when-warm \
      2>&1 | grep -o "embedder loaded [0-9]* ms" | grep -o "[0-9]*" >> "$tmp/app-$side" || true
  done
done
for side in on off; do
  echo "app    cache $side: embedder loaded $(sort -n "$tmp/app-$side" | tr '\n' ' ')ms after the app module loaded"
done
