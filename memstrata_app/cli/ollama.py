"""`memstrata ollama`: the upstream Ollama's status and models; pull, try, unload."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..settings import Settings
from .errors import CliError
from .output import emit_json

EXAMPLES = {
    "ollama": ["ollama status", "ollama models", "ollama pull nomic-embed-text",
               "ollama try qwen2.5:7b", "ollama unload qwen2.5:7b"],
}


def add_ollama(sub: Any) -> None:
    s = sub.add_parser("ollama", help="the upstream Ollama: status, models, pull, try, unload",
                       description="Ask the Ollama the endpoint forwards to (the ollama_url "
                                   "setting, or OLLAMA_HOST) what it has and where it runs.")
    s.add_argument("action", choices=("status", "models", "pull", "try", "unload"),
                   help="status: reachable, version, loaded models and their GPU/CPU split; "
                        "models: installed and needed models; pull/try/unload NAME")
    s.add_argument("name", nargs="?", help="with pull, try, unload: the model")
    s.add_argument("--url", help="the Ollama to ask (default: settings / OLLAMA_HOST)")
    s.add_argument("--json", action="store_true")


def cmd_ollama(args: argparse.Namespace) -> int:
    from .. import ollama_admin as oa

    settings = Settings.load()
    url = (args.url or settings["ollama_url"]).rstrip("/")
    if args.action in ("pull", "try", "unload") and not args.name:
        raise CliError(f"`memstrata ollama {args.action}` needs a model name")
    with oa.OllamaAdmin(url) as admin:
        st = admin.probe()
        if not st.reachable:
            if args.json:
                emit_json({"url": url, "reachable": False, "error": st.error})
            else:
                print(f"Ollama is not running at {url} ({st.error}).\n" + oa.install_help())
            return 1
        try:
            return _ollama_action(args, admin, st, settings)
        except oa.OllamaError as e:
            raise CliError(str(e)) from None
        except oa.PullCancelled:
            print("\ncancelled (what was downloaded is kept; pull again to resume)",
                  file=sys.stderr)
            return 130


def _ollama_action(args: argparse.Namespace, admin: Any, st: Any, settings: Settings) -> int:
    from dataclasses import asdict

    from .. import ollama_admin as oa

    if args.action == "status":
        if args.json:
            emit_json({**asdict(st), "loaded": [
                {**asdict(m), "processor": m.processor} for m in st.loaded]})
            return 0
        print(f"Ollama {st.version} at {st.url}: {len(st.models)} models installed")
        for m in st.loaded:
            print(f"  loaded {m.name:<28} {oa.human_bytes(m.size):>9}  {m.processor:<16} "
                  f"until {m.expires_at or '?'}")
        if not st.loaded:
            print("  no model loaded")
        if any(not m.on_gpu or m.partial for m in st.loaded):
            print("  (part or all of a model runs on the CPU: slower; unload others or use "
                  "a smaller model to keep it on the GPU)")
        return 0
    if args.action == "models":
        needed = oa.needed_models(st, str(settings["embedder"]),
                                  str(settings["extraction_model"]))
        if args.json:
            emit_json({"installed": [asdict(m) for m in st.models],
                       "needed": [asdict(n) for n in needed]})
            return 0
        for m in st.models:
            size = oa.human_bytes(m.size)
            print(f"{m.name:<32} {size:>9}  {m.parameter_size:<6} {m.quantization}")
        for n in needed:
            mark = "installed" if n.installed else f"not installed: memstrata ollama pull {n.name}"
            print(f"for {n.purpose}: {n.name} ({mark})")
        return 0
    if args.action == "pull":
        last = [""]

        def show(p: Any) -> None:
            if args.json:
                emit_json(asdict(p))
                return
            frac = p.fraction
            line = p.status + (f" {frac:4.0%} of {oa.human_bytes(p.total)}"
                               if frac is not None else "")
            if sys.stderr.isatty():
                print("\r" + line.ljust(len(last[0])), end="", file=sys.stderr, flush=True)
            elif p.status != last[0].split(" ")[0] or frac in (None, 1.0):
                print(line, file=sys.stderr)
            last[0] = line

        admin.pull(args.name, show)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        return 0
    if args.action == "try":
        r = admin.try_model(args.name)
        t = r.timing
        if args.json:
            emit_json({"model": r.model, "ttft_ms": round(r.ttft_ms, 1),
                       "tokens_per_s": round(r.tokens_per_s, 1), "load_ms": round(t.load_ms, 1),
                       "prompt_eval_ms": round(t.prompt_eval_ms, 1),
                       "eval_ms": round(t.eval_ms, 1), "eval_count": t.eval_count,
                       "loaded": t.loaded, "text": r.text})
            return 0
        print(f"{r.model}: first token {r.ttft_ms:.0f} ms, {r.tokens_per_s:.1f} tokens/s "
              f"({t.eval_count} tokens)\n  load {t.load_ms:.0f} ms"
              f"{' (it had to load)' if t.loaded else ''}, prompt {t.prompt_eval_ms:.0f} ms, "
              f"generation {t.eval_ms:.0f} ms\n  {r.text.strip()[:200]}")
        return 0
    admin.unload(args.name)
    if not args.json:
        print(f"unloaded {args.name}")
    return 0


COMMANDS = {"ollama": cmd_ollama}
