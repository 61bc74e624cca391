#!/usr/bin/env bash
# The fusion choices side by side: `memstrata bench retrieval` (suite, validity given,
# identifier questions; no conversations) with linear fusion at several lexical weights and
# with reciprocal rank fusion, per embedder. Prints a Markdown table; used for
# docs/RETRIEVAL.md (Choosing the fusion). ~1 min per setting on 2 cores.
#   scripts/retrieval-sweep.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
settings=("--weight 0.1" "--weight 0.3" "--weight 0.5" "--weight 0.7" "--weight 1.0"
          "--fusion rrf")
for s in "${settings[@]}"; do
  # shellcheck disable=SC2086
  .venv/bin/memstrata bench retrieval --json --no-conversations $s > "$out/${s// /_}.json"
done
.venv/bin/python - "$out" "${settings[@]}" <<'PY'
import json, sys
from pathlib import Path

out, settings = Path(sys.argv[1]), sys.argv[2:]
cols = ("current_present", "as_of_accuracy", "static_recall", "multi_member_recall",
        "validity_given_present")
print("| embedder | fusion | current in top k | as-of | static recall | multi-valued "
      "| validity given | identifier first | identifier in top k |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
rows = []
for i, s in enumerate(settings):
    r = json.loads((out / f"{s.replace(' ', '_')}.json").read_text())
    for spec, e in r["embedders"].items():
        modes = (["vector"] if i == 0 else []) + ["hybrid"]
        for m in modes:
            su, ids = e["suite"][m], e["identifiers"][m]
            name = "none (vector only)" if m == "vector" else (
                "RRF, k=60" if "rrf" in s else f"linear, weight {s.split()[1]}")
            rows.append((spec, name, *(f"{100 * su[c]:.1f}%" for c in cols),
                         f"{ids['token_first'][0]}/{ids['token_first'][1]}",
                         f"{ids['token'][0]}/{ids['token'][1]}"))
for row in sorted(rows, key=lambda r: r[0]):
    print("| " + " | ".join(row) + " |")
PY
