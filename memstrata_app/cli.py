"""`memstrata`: no arguments opens the desktop app; subcommands work headless."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from . import __version__, paths
from .settings import Settings

log = logging.getLogger("memstrata")


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memstrata",
        description="A local memory for AI coding tools that knows which facts are still true. "
                    "Without a command, opens the desktop app.")
    p.add_argument("--version", action="version", version=f"memstrata {__version__}")
    p.add_argument("--db", type=Path, help="ledger file (default: MEMSTRATA_HOME or the "
                                           "platform's data folder, memstrata.db)")
    p.add_argument("--embedder", help='"local", "auto" or "ollama:<model>" (default: settings)')
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("ingest", help="store statements (text or a file), superseding old values")
    s.add_argument("text", nargs="?", help="the statement(s); omit with --file")
    s.add_argument("--file", type=Path, help="a text file, one or more statements ('-': stdin)")
    s.add_argument("--at", help="when it was said (ISO 8601; default now)")
    s.add_argument("--source", default="cli", help="who said it (default: cli)")
    s.add_argument("--json", action="store_true", help="machine-readable output")

    s = sub.add_parser("query", help="retrieve the facts valid now (or --as-of T)")
    s.add_argument("query")
    s.add_argument("-k", type=int, default=5, help="how many facts (default 5)")
    s.add_argument("--as-of", help="answer as of this time (ISO 8601)")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("history", help="a fact's supersession chain, oldest first")
    s.add_argument("subject")
    s.add_argument("relation")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("quarantine", help="review low-confidence extractions")
    s.add_argument("action", nargs="?", default="list", choices=("list", "approve", "reject"))
    s.add_argument("id", nargs="?", type=int)
    s.add_argument("--subject", help="with approve: correct the subject first")
    s.add_argument("--relation", help="with approve: correct the relation first")
    s.add_argument("--object", help="with approve: correct the value first")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("forget", help="retract a fact (kept for audit, no longer retrieved)")
    s.add_argument("id", type=int)
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("export", help="write every ledger row as JSON")
    s.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    s.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    s = sub.add_parser("import", help="restore rows written by `memstrata export`")
    s.add_argument("file", type=Path, help="a JSON array or JSON-lines file ('-': stdin)")

    s = sub.add_parser("reindex", help="re-embed the ledger with another embedder")
    s.add_argument("--to", dest="target", default="local",
                   help='"local" or "ollama:<model>" (default local)')

    s = sub.add_parser("vocab", help="relation cardinality (single- or multi-valued)")
    s.add_argument("action", nargs="?", default="list", choices=("list", "set"))
    s.add_argument("relation", nargs="?")
    s.add_argument("cardinality", nargs="?", choices=("single", "multi"))
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("stats", help="counts by status, keys, embedder")
    s.add_argument("--json", action="store_true")

    s = sub.add_parser("serve", help="run the local endpoint (Ollama/OpenAI/Anthropic APIs)")
    s.add_argument("--port", type=int, help="port on 127.0.0.1 (default: settings, 11435)")

    sub.add_parser("mcp", help="run the MCP server on stdio (Claude Code, Cursor)")
    s = sub.add_parser("gui", help="open the desktop app")
    s.add_argument("--tray", action="store_true", help="start in the system tray, window hidden")
    s.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    sub.add_parser("bench", help="benchmarks: `memstrata bench --help`", add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        from .bench.cli import main as bench_main

        return bench_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in (None, "gui"):  # the app sets up its own logging
        from .gui.app import main as gui_main

        gui_args = ["--db", str(args.db)] if args.db else []
        gui_args += [f"--{f.replace('_', '-')}" for f in ("tray", "exit_when_ready")
                     if getattr(args, f, False)]
        return gui_main(gui_args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return COMMANDS[args.command](args)
    except CliError as e:
        print(f"memstrata: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memstrata: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # known engine errors and anything unexpected: one line, no trace
        from .engine import EngineError

        if os.environ.get("MEMSTRATA_DEBUG"):
            raise
        what = str(e) if isinstance(e, EngineError) else f"{type(e).__name__}: {e}"
        print(f"memstrata: error: {what}", file=sys.stderr)
        return 1


# --- helpers -------------------------------------------------------------------------------
@contextlib.contextmanager
def open_engine(args: argparse.Namespace) -> Iterator[Any]:
    from .engine import MemoryEngine

    settings = Settings.load()
    db = args.db or paths.db_path()
    with MemoryEngine.open(db, embedder=args.embedder or settings["embedder"],
                           quarantine_threshold=settings["quarantine_threshold"],
                           ollama_host=settings["ollama_url"]) as eng:
        yield eng


def parse_at(value: str | None) -> Any:
    from .engine.timeutil import parse_time

    return None if value is None else parse_time(value)


def emit_json(obj: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    json.dump(obj, out, indent=2, ensure_ascii=False)
    out.write("\n")


def read_text(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"cannot read {path}: {e.strerror if isinstance(e, OSError) else e}"
                       ) from None


def fmt_time(t: Any) -> str:
    return "…" if t is None else t.strftime("%Y-%m-%d %H:%M")


def fmt_row(a: Any) -> str:
    triple = (f"({a.subject} · {a.relation} · {a.object})" if a.subject else "(plain fact)")
    return (f"#{a.id:<6} {a.status.value:<11} {fmt_time(a.valid_from)} → {fmt_time(a.valid_to)}"
            f"  {triple}\n        “{a.text}”")


# --- commands ------------------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    if (args.text is None) == (args.file is None):
        raise CliError("give the statement as an argument or with --file, not both")
    text = args.text if args.text is not None else read_text(args.file)
    if not text.strip():
        raise CliError("nothing to ingest: the text is empty")
    at = parse_at(args.at)
    with open_engine(args) as eng:
        res = eng.ingest(text, source=args.source, at=at)
    if args.json:
        emit_json(res.to_dict())
        return 0
    if not res.actions:
        print("no statements found (questions and code blocks are not stored)")
    for a in res.actions:
        extra = f" (retired #{', #'.join(map(str, a.retired))})" if a.retired else ""
        print(f"{a.action.value:<11} #{a.assertion_id}{extra}  {a.text}")
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CliError("-k must be at least 1")
    as_of = parse_at(args.as_of)
    with open_engine(args) as eng:
        hits = eng.retrieve(args.query, k=args.k, as_of=as_of)
    if args.json:
        emit_json([h.to_dict() for h in hits])
        return 0
    if not hits:
        print("no facts valid at that time")
    for h in hits:
        print(f"{h.score:.3f}  #{h.assertion_id:<6} {h.text}   "
              f"[valid {fmt_time(h.valid_from)} → {fmt_time(h.valid_to)}]")
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        chain = eng.history(args.subject, args.relation)
    if args.json:
        emit_json([a.to_dict() for a in chain])
        return 0
    if not chain:
        print(f"no history for ({args.subject}, {args.relation})")
    for a in chain:
        print(fmt_row(a))
    return 0


def cmd_quarantine(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.action == "list":
            rows = eng.quarantined()
            if args.json:
                emit_json([a.to_dict() for a in rows])
            elif not rows:
                print("the review queue is empty")
            for a in rows if not args.json else ():
                print(f"{fmt_row(a)}\n        confidence {a.confidence:.2f}, {a.method}")
            return 0
        if args.id is None:
            raise CliError(f"quarantine {args.action} needs an assertion id")
        if args.action == "approve":
            act = eng.approve(args.id, args.subject, args.relation, args.object)
            out: Any = act.to_dict()
            line = f"{act.action.value} #{act.assertion_id}"
        else:
            a = eng.reject(args.id)
            out, line = a.to_dict(), f"rejected #{a.id}"
    emit_json(out) if args.json else print(line)
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        a = eng.forget(args.id)
    emit_json(a.to_dict()) if args.json else print(f"retracted #{a.id}: {a.text}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        rows = list(eng.export())
    out = args.output.open("w", encoding="utf-8") if args.output else sys.stdout
    try:
        if args.jsonl:
            for r in rows:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
        else:
            emit_json(rows, out)
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"exported {len(rows)} rows to {args.output}", file=sys.stderr)
    return 0


def parse_records(text: str, name: str) -> list[dict[str, Any]]:
    s = text.strip()
    if not s:
        raise CliError(f"{name} is empty")
    try:
        if s.startswith("["):
            data = json.loads(s)
        else:
            data = [json.loads(line) for line in s.splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise CliError(f"{name} is not JSON or JSON lines (line {e.lineno}: {e.msg})") from None
    if not all(isinstance(r, dict) for r in data):
        raise CliError(f"{name}: every record must be a JSON object")
    return data


def cmd_import(args: argparse.Namespace) -> int:
    records = parse_records(read_text(args.file), str(args.file))
    with open_engine(args) as eng:
        n = eng.import_records(records, progress=progress_bar("embedding"))
    print(f"\nimported {n} records", file=sys.stderr)
    return 0


def progress_bar(label: str) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        fill = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        sys.stderr.flush()

    return show


def cmd_reindex(args: argparse.Namespace) -> int:
    from .engine import MemoryEngine

    db = args.db or paths.db_path()
    cancel = threading.Event()
    # open with whatever embedder the store has, then move it to the target space
    with MemoryEngine.open(db, embedder="auto") as eng:
        old = eng.embedder.name
        try:
            n = eng.reindex(args.target, progress=progress_bar("re-embedding"), cancel=cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise
        print(f"\nre-embedded {n} rows: {old} → {eng.embedder.name}", file=sys.stderr)
    return 0


def cmd_vocab(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.action == "set":
            if not args.relation or not args.cardinality:
                raise CliError("usage: memstrata vocab set RELATION single|multi")
            eng.set_cardinality(args.relation, args.cardinality)
        vocab = eng.vocabulary()
    if args.json:
        emit_json({k: v.value for k, v in sorted(vocab.items())})
    else:
        for k, v in sorted(vocab.items()):
            print(f"{k:<24} {v.value}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        s = eng.stats()
    if args.json:
        emit_json(s)
    else:
        print(f"ledger   {s['path']}\nembedder {s['embedder']} ({s['dim']}-d)\nrows     "
              f"{s['total']} ({s['keys']} keys, {s['retired_share']:.0%} retired)")
        for k, v in s["by_status"].items():
            print(f"  {k:<12} {v}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from .proxy.server import serve_forever

    settings = Settings.load()
    with open_engine(args) as eng:
        serve_forever(eng, settings, host="127.0.0.1", port=args.port)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from .proxy.mcp_server import run_stdio

    with open_engine(args) as eng:
        run_stdio(eng)
    return 0


COMMANDS = {
    "ingest": cmd_ingest, "query": cmd_query, "history": cmd_history,
    "quarantine": cmd_quarantine, "forget": cmd_forget, "export": cmd_export,
    "import": cmd_import, "reindex": cmd_reindex, "vocab": cmd_vocab, "stats": cmd_stats,
    "serve": cmd_serve, "mcp": cmd_mcp,
}

if __name__ == "__main__":
    raise SystemExit(main())
