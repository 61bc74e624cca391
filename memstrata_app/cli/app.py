"""The commands that hand over to another part: gui (the desktop app, which also opens
without a command) and bench (its own parser, memstrata_app.bench.cli)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EXAMPLES = {"gui": ["gui", "gui --tray"]}
COMMANDS: dict[str, Any] = {}  # both are handed over before the command table (dispatch.main)


def add_gui_bench(sub: Any) -> None:
    s = sub.add_parser("gui", help="open the desktop app")
    s.add_argument("--tray", action="store_true", help="start in the system tray, window hidden")
    s.add_argument("--theme", choices=("system", "light", "dark"),
                   help="colour theme (default: follow the system; MEMSTRATA_THEME sets it too)")
    s.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    s.add_argument("--exit-when-warm", action="store_true", help=argparse.SUPPRESS)
    sub.add_parser("bench", help="benchmarks: `memstrata bench --help`", add_help=False)


def run_bench(argv: list[str]) -> int:
    from ..bench.cli import main as bench_main

    return bench_main(argv)


def run_gui(args: argparse.Namespace) -> int:
    """The desktop app, with the options given (the app sets up its own logging). First
    whether it can open here at all: without a display, or with a system library of Qt's
    platform plugin missing, Qt would abort the process; this says what is missing instead."""
    from ..qt_check import gui_problem

    problem = gui_problem()
    if problem:
        print(f"memstrata: error: {problem}", file=sys.stderr)
        return 1
    from ..gui.app import main as gui_main

    gui_args = ["--db", str(args.db)] if args.db else []
    gui_args += [f"--{f.replace('_', '-')}" for f in ("tray", "exit_when_ready",
                                                             "exit_when_warm")
                 if getattr(args, f, False)]
    if getattr(args, "theme", None):
        gui_args += ["--theme", args.theme]
    return gui_main(gui_args)
