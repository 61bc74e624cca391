"""Looking after a ledger: reindex (another embedder), vocab (relation cardinality), stats."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import Any

from .errors import CliError
from .options import ledger_path, open_engine
from .output import emit_json, progress_bar

EXAMPLES = {
    "reindex": ["reindex --to ollama:nomic-embed-text", "reindex --to local"],
    "vocab": ["vocab", "vocab set maintainer multi"],
    "stats": ["stats", "--db ~/backup/memstrata.db stats --json"],
}


def add_reindex(sub: Any) -> None:
    s = sub.add_parser("reindex", help="re-embed the ledger with another embedder")
    s.add_argument("--to", dest="target", default="local",
                   help='"local" or "ollama:<model>" (default local)')


def add_vocab(sub: Any) -> None:
    s = sub.add_parser("vocab", help="relation cardinality (single- or multi-valued)")
    s.add_argument("action", nargs="?", default="list", choices=("list", "set"),
                   help="list the relations and their cardinality (default), or set one")
    s.add_argument("relation", nargs="?", help='with set: the relation, e.g. "maintainer"')
    s.add_argument("cardinality", nargs="?", choices=("single", "multi"),
                   help="with set: single (a new value retires the old one) or multi (values "
                        "add up, removed only when said)")
    s.add_argument("--json", action="store_true")


def add_stats(sub: Any) -> None:
    s = sub.add_parser("stats", help="counts by status, keys, embedder")
    s.add_argument("--json", action="store_true")


def cmd_reindex(args: argparse.Namespace) -> int:
    from ..engine import MemoryEngine

    db = ledger_path(args)
    cancel = threading.Event()
    # open with whatever embedder the store has, then move it to the target space
    with MemoryEngine.open(db, embedder="auto") as eng:
        eng.check_writable()  # before re-embedding every row
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
        print(f"ledger   {s.get('location') or s['path']}\n"
              f"embedder {s['embedder']} ({s['dim']}-d)\nrows     "
              f"{s['total']} ({s['keys']} keys, {s['retired_share']:.0%} retired)")
        for k, v in s["by_status"].items():
            print(f"  {k:<12} {v}")
        spaces = s.get("by_space") or {}
        if len(spaces) > 1 or set(spaces) - {"global"}:
            print("spaces   " + ", ".join(f"{n} {c['current']}/{c['total']}"
                                          for n, c in spaces.items()) + " (current/rows)")
    return 0


COMMANDS = {"reindex": cmd_reindex, "vocab": cmd_vocab, "stats": cmd_stats}
