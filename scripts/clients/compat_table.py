#!/usr/bin/env python3
"""Write the measured compatibility table into docs/CONNECT.md.

Reads tests/clients/.run/results.json, which tests/clients/test_tools_e2e.py writes (one
entry per tool and scenario: what the tool sent, what the upstream received, what the
ledger holds), and replaces the text between `<!-- compat:start -->` and
`<!-- compat:end -->` in docs/CONNECT.md (adding a "## Compatibility, as measured"
section with the markers at the end when they are missing).

    python scripts/clients/compat_table.py          # from the last e2e run's results
    python scripts/clients/compat_table.py --run    # run the e2e tests first (~1-4 min)
    python scripts/clients/compat_table.py --print  # show the table, change nothing

Standard library only; `--run` is bounded by --timeout.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "clients" / ".run" / "results.json"
DOC = ROOT / "docs" / "CONNECT.md"
E2E = "tests/clients/test_tools_e2e.py"
START, END = "<!-- compat:start -->", "<!-- compat:end -->"
HEADING = "## Compatibility, as measured"

NAMES = {
    "claude-code": "Claude Code",
    "codex": "OpenAI Codex CLI",
    "continue-cn": "Continue CLI `cn`",
    "aider": "Aider",
    "llm": "`llm` + `llm-ollama`",
}
SCENARIOS = {  # in table order
    ("claude-code", "quiet"): "`claude -p`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`",
    ("claude-code", "nonessential"): "`claude -p`, nonessential traffic on",
    ("codex", "provider"): "`codex exec`, own provider, `wire_api = \"responses\"`",
    ("codex", "oss"): "`codex exec --oss --local-provider ollama`",
    ("continue-cn", ""): "",
    ("aider", ""): "",
    ("llm", ""): "",
}
ORDER = list(SCENARIOS)
APIS = [  # route prefix -> API name
    ("/v1/messages", "Anthropic Messages"),
    ("/v1/responses", "OpenAI Responses"),
    ("/v1/chat/completions", "OpenAI Chat Completions"),
    ("/v1/completions", "OpenAI Completions"),
    ("/api/chat", "Ollama `/api/chat`"),
    ("/api/generate", "Ollama `/api/generate`"),
]


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: one line, `|` escaped, and `<` `>` outside
    code spans written as entities (else `<session>` would vanish as an HTML tag)."""
    parts = " ".join(text.split()).replace("|", "\\|").split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def version_of(r: dict[str, Any]) -> str:
    m = re.search(r"\d+\.\d+(?:\.\d+)?", r.get("version") or "")
    v = m.group(0) if m else (r.get("version") or "?")
    plugin = re.search(r"llm-ollama==([\w.]+)", r.get("install") or "")
    return f"{v} + {plugin.group(1)}" if plugin else v


def api_of(r: dict[str, Any]) -> str:
    routes: dict[str, dict[str, int]] = r.get("tool_routes") or {}
    apis = []
    for prefix, name in APIS:
        if any(k.split(" ", 1)[-1].startswith(prefix) for k in routes) and name not in apis:
            apis.append(name)
    seen = []
    for route, statuses in routes.items():
        n = sum(statuses.values())
        bad = {s: c for s, c in statuses.items() if s != "200"}
        note = (" → " + ", ".join(f"{s} ×{c}" for s, c in sorted(bad.items()))) if bad else ""
        seen.append(f"`{route}` ×{n}{note}")
    head = ", ".join(apis) or "no chat route"
    return f"{head}: {'; '.join(seen)}" if seen else head


def stored_of(r: dict[str, Any]) -> str:
    s = r.get("stored") or {}
    old, new, other = s.get("old", []), s.get("new", []), s.get("other", [])
    words = "yes" if old == ["superseded"] and new == ["active"] else "**no**"
    parts = [f"{words}: 300 s → {', '.join(old) or 'not stored'}, "
             f"900 s → {', '.join(new) or 'not stored'}"]
    if s.get("spaces"):
        parts.append("space " + ", ".join(f"`{x}`" for x in s["spaces"]))
    parts.append("boilerplate stored: none" if not other else
                 f"**boilerplate stored: {len(other)} rows** ({'; '.join(other[:3])})")
    return "; ".join(parts)


def injected_of(r: dict[str, Any]) -> str:
    i = r.get("injected") or {}
    n = i.get("turn3_requests", 0)
    if not n:
        return "**no**: no turn-3 request reached the upstream"
    if i.get("ok"):
        return ("yes: one block with the 900 statement, not the 300 one"
                + (f" ({n} requests)" if n > 1 else ""))
    return (f"**no**: of {n} turn-3 requests, {i.get('one_block', 0)} had one block, "
            f"{i.get('has_new', 0)} quoted 900, {i.get('has_old', 0)} quoted 300")


def limits_of(r: dict[str, Any]) -> str:
    out = list(r.get("known_limits") or [])
    for t in r.get("turns") or []:
        if t.get("rc") != 0:
            out.append(f"turn {t.get('turn')} exited {t.get('rc')}")
    if r.get("problems") and not r.get("passed"):
        out.append("**e2e test failed** (" + "; ".join(r["problems"][:2]) + ")")
    return "; ".join(out) or "none seen"


def sort_key(item: tuple[str, dict[str, Any]]) -> tuple[int, str]:
    cid, r = item
    key = (r.get("tool", ""), r.get("scenario", ""))
    return (ORDER.index(key) if key in ORDER else len(ORDER), cid)


def table(data: dict[str, Any]) -> str:
    cases = sorted((data.get("cases") or {}).items(), key=sort_key)
    if not cases:
        raise SystemExit(f"no results in {RESULTS.relative_to(ROOT)}: run "
                         f"`python -m pytest {E2E}` (or this script with --run)")
    times = sorted(r.get("run_at", "") for _, r in cases if r.get("run_at"))
    when = times[-1] if times and times[0][:10] == times[-1][:10] else \
        f"{times[0]} to {times[-1]}" if times else "unknown"
    lines = [
        f"_Generated by `python scripts/clients/compat_table.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from the results of "
        f"`python -m pytest {E2E}` (run {when}): each tool, at the pinned version "
        "`scripts/clients/install.sh` installs, ran the three-turn story (\"The cache TTL is "
        "300 seconds.\", \"The cache TTL is now 900 seconds.\", \"What is the cache TTL?\") "
        "non-interactively against `memstrata serve`, whose upstream was the Ollama "
        "stand-in (memstrata_app/bench/standin/), not a real model. Do not edit by "
        "hand; re-run the command._",
        "",
        "| Tool | Version | API used (routes seen) | Stored | Injected (turn 3) | "
        "Known limits |",
        "|---|---|---|---|---|---|",
    ]
    for _, r in cases:
        tool = NAMES.get(r.get("tool", ""), r.get("tool", "?"))
        how = SCENARIOS.get((r.get("tool", ""), r.get("scenario", "")))
        name = f"{tool} ({how})" if how else tool
        if r.get("skipped"):
            lines.append(f"| {cell(name)} | {cell(version_of(r))} | not run | not run | "
                         f"not run | {cell(r['skipped'])} |")
            continue
        lines.append("| " + " | ".join(cell(x) for x in (
            name, version_of(r), api_of(r), stored_of(r), injected_of(r), limits_of(r)))
            + " |")
    lines += [
        "",
        "*Stored*: the ledger after the run (`memstrata export`): the 300 statement must be "
        "superseded, the 900 one active, and no other row (no `<session>` title, edit-format "
        "instructions or environment context stored as a fact). *Injected*: the request the "
        "upstream received for turn 3 carried exactly one `<memstrata-memory>` block, quoting "
        "900 and not 300. *Space*: where the rows landed; each tool worked in a folder named "
        "`work`, which tools that write their working directory into the prompt name, and "
        "tools that write none (Aider, `llm`) use the global space. Routes are what the tool "
        "sent to the endpoint, with the endpoint's answer where it was not 200.",
    ]
    return "\n".join(lines)


def write_doc(doc: Path, body: str) -> None:
    text = doc.read_text(encoding="utf-8")
    block = f"{START}\n{body}\n{END}"
    if START in text and END in text and text.index(START) < text.index(END):
        a, b = text.index(START), text.index(END) + len(END)
        text = text[:a] + block + text[b:]
    elif HEADING in text:
        at = text.index(HEADING) + len(HEADING)
        text = text[:at] + "\n\n" + block + "\n" + text[at:]
    else:
        text = text.rstrip("\n") + f"\n\n{HEADING}\n\n{block}\n"
    doc.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", action="store_true", help=f"run {E2E} first")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds allowed for --run")
    ap.add_argument("--results", type=Path, default=RESULTS)
    ap.add_argument("--doc", type=Path, default=DOC)
    ap.add_argument("--print", dest="show", action="store_true",
                    help="print the table instead of writing the doc")
    args = ap.parse_args(argv)
    if args.run:
        cmd = [sys.executable, "-m", "pytest", E2E, "-q", "-p", "no:cacheprovider"]
        print("$", " ".join(cmd), flush=True)
        try:
            # Failing cases still write their results; the table shows them as failed.
            subprocess.run(cmd, cwd=ROOT, timeout=args.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print(f"the e2e run took over {args.timeout} s; writing what it recorded",
                  file=sys.stderr)
    if not args.results.exists():
        print(f"no {args.results}: run `python -m pytest {E2E}` (or --run)", file=sys.stderr)
        return 1
    body = table(json.loads(args.results.read_text(encoding="utf-8")))
    if args.show:
        print(body)
        return 0
    write_doc(args.doc, body)
    print(f"wrote the compatibility table into {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
