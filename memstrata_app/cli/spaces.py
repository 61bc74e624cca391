"""Spaces (projects): spaces, move."""

from __future__ import annotations

import argparse
from typing import Any

from .errors import CliError
from .options import open_engine
from .output import emit_json

EXAMPLES = {
    "spaces": ["spaces", "spaces --json"],
    "move": ["move 12 global", "move 12 shop"],
}


def add_spaces(sub: Any) -> None:
    s = sub.add_parser("spaces", help="the spaces (projects) with their row counts")
    s.add_argument("--json", action="store_true")


def add_move(sub: Any) -> None:
    s = sub.add_parser(
        "move", help="move a fact (and its earlier values) to another space",
        description="Move a fact, every row made from its sentence and the key's earlier "
                    "values, to another space (a project, or global). Refused when that space "
                    "already holds a current value for the key.")
    s.add_argument("id", type=int, help="the fact's id (#N in query, history or keys output)")
    s.add_argument("target", metavar="SPACE", help='the space to move it to ("global" for all)')
    s.add_argument("--json", action="store_true")


def cmd_spaces(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        counts = eng.spaces()
    if args.json:
        emit_json(counts)
        return 0
    if not counts:
        print("the ledger is empty (every statement goes into the global space unless a space "
              "is named)")
    width = max([len(n) for n in counts] + [5])
    if counts:
        print(f"{'space':<{width}}  {'current':>8}  {'rows':>8}")
    for name, c in counts.items():
        print(f"{name:<{width}}  {c['current']:>8}  {c['total']:>8}")
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    from ..engine.ledger.keys import normalize_space

    try:
        target = normalize_space(args.target)
    except ValueError as e:
        raise CliError(str(e)) from None
    with open_engine(args) as eng:
        rows = eng.move_to_space(args.id, target)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    print(f"moved {len(rows)} row{'s' if len(rows) != 1 else ''} to the space {target}: "
          + ", ".join(f"#{r.id}" for r in rows))
    return 0


COMMANDS = {"spaces": cmd_spaces, "move": cmd_move}
