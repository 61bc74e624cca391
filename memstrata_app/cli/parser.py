"""The `memstrata` parser: the top-level options, then each command group's subcommands,
in the order `memstrata --help` lists them."""

from __future__ import annotations

import argparse
import difflib
import textwrap
from typing import Any

from .. import __version__
from . import app, endpoint, governance, keys, maintenance, memory, ollama, review, spaces, transfer
from .options import SPACE_HELP, TIME_FORMATS, space_parent

GROUPS = (memory, keys, spaces, review, governance, transfer, maintenance, endpoint, ollama,
          app)
EXAMPLES = {name: "examples:\n" + "\n".join(f"  memstrata {line}" for line in lines)
            for group in GROUPS for name, lines in group.EXAMPLES.items()}


class Parser(argparse.ArgumentParser):
    """argparse's parser, and a mistyped choice (a command, a subcommand such as `quarantine
    aprove`, a fixed value) is answered with the nearest choices: "did you mean …"."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is None or value in action.choices:
            return
        names = [str(c) for c in action.choices]
        typed = str(value)
        near = [n for n in names if len(typed) >= 2 and n.startswith(typed)]
        near += [n for n in difflib.get_close_matches(typed, names, n=3, cutoff=0.6)
                 if n not in near]
        hint = f"; did you mean {' or '.join(map(repr, near[:3]))}?" if near else ""
        raise argparse.ArgumentError(action, f"invalid choice: {typed!r}{hint} (choose from "
                                             f"{', '.join(map(repr, names))})")


# The top-level options that may come after the command too (`memstrata gui --db team.db`):
# added to each command hidden (its --help is unchanged) and only where the command has no
# option of that name itself (`ingest -v` is its own).
GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (("--db",), {"metavar": "LEDGER"}),
    (("--create",), {"action": "store_true"}),
    (("--direct",), {"action": "store_true"}),
    (("--embedder",), {}),
    (("-v", "--verbose"), {"action": "store_true"}),
    (("--space",), {"metavar": "NAME"}),
)


def add_global_options(sp: argparse.ArgumentParser) -> None:
    taken = sp._option_string_actions
    for flags, kw in GLOBAL_OPTIONS:
        free = [f for f in flags if f not in taken]
        if free and len(free) == len(flags):
            sp.add_argument(*free, dest=flags[-1].lstrip("-"), default=argparse.SUPPRESS,
                            help=argparse.SUPPRESS, **kw)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="memstrata",
        description="A local memory for AI coding tools that knows which facts are still "
                    "true.\nWithout a command, opens the desktop app.",
        epilog="examples:\n"
               '  memstrata ingest "The auth service port is 9090." --at 2025-03-01\n'
               '  memstrata query "which port does the auth service use?"\n'
               "  memstrata keys port\n"
               '  memstrata history "auth service" port\n'
               "  memstrata serve\n\n"
               + textwrap.fill("TIME (--at, --as-of) is " + TIME_FORMATS + ".", 79) + "\n\n"
               + textwrap.fill("The options above may come before or after the command "
                               "(memstrata gui --db team.db). Exit status: 0 done, 1 an error "
                               "or nothing found (history of an unknown key), 2 a usage error.",
                               79),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"memstrata {__version__}")
    p.add_argument("--db", metavar="LEDGER",
                   help="a ledger file, or a team ledger's postgresql://user@host:port/db URI "
                        "(its password from ~/.pgpass or PGPASSWORD); default: the `ledger` "
                        "setting, else memstrata.db in MEMSTRATA_HOME or the platform's data "
                        "folder")
    p.add_argument("--create", action="store_true",
                   help="with --db: start a new, empty ledger when the file does not exist "
                        "(without it a missing --db file is an error)")
    p.add_argument("--direct", action="store_true",
                   help="open the ledger in this process even when `memstrata serve` or the "
                        "app is running (by default ingest and query go through it: no model "
                        "to load, well under a second)")
    p.add_argument("--embedder", help='"local" (MiniLM on ONNX Runtime), "static" (its '
                                      'distilled form), "auto" or "ollama:<model>" (default: '
                                      'settings)')
    p.add_argument("-v", "--verbose", action="store_true", help="log what happens to stderr")
    p.add_argument("--space", metavar="NAME", help=SPACE_HELP)
    spaced = space_parent()
    sub = p.add_subparsers(dest="command", metavar="COMMAND",
                           help="what to do (without one, the desktop app opens); "
                                "`memstrata COMMAND --help` explains each")
    memory.add_ingest(sub, spaced)
    memory.add_explain(sub, spaced)
    memory.add_query(sub, spaced)
    keys.add_history(sub, spaced)
    keys.add_keys(sub, spaced)
    spaces.add_spaces(sub)
    spaces.add_move(sub)
    review.add_quarantine(sub)
    review.add_forget(sub)
    governance.add_purge(sub)
    governance.add_redact(sub)
    governance.add_hold_release(sub)
    review.add_contest(sub)
    review.add_undo(sub)
    governance.add_label(sub)
    governance.add_expire(sub)
    governance.add_audit(sub)
    transfer.add_export_import(sub, spaced)
    transfer.add_push_pull(sub, spaced)
    memory.add_rejudge(sub, spaced)
    maintenance.add_reindex(sub)
    maintenance.add_vocab(sub)
    maintenance.add_stats(sub)
    endpoint.add_serve(sub)
    endpoint.add_mcp_token(sub, spaced)
    ollama.add_ollama(sub)
    app.add_gui_bench(sub)
    for name, sp in sub.choices.items():
        if name == "bench":  # its own parser (memstrata_app.bench.cli) explains it
            continue
        add_global_options(sp)
        for action in sp._actions:
            if action.dest == "json" and not action.help:
                action.help = "machine-readable output"
        if not sp.epilog and name in EXAMPLES:
            sp.epilog = EXAMPLES[name]
            sp.formatter_class = argparse.RawDescriptionHelpFormatter
    return p
