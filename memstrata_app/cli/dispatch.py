"""`memstrata [OPTIONS] [COMMAND …]`: bench and the desktop app hand over, every other
command runs through the table below."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from . import app
from .errors import run_command
from .parser import GROUPS, build_parser

COMMANDS = {name: command for group in GROUPS for name, command in group.COMMANDS.items()}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        return app.run_bench(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command in (None, "gui"):  # the app sets up its own logging
        return app.run_gui(args)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    return run_command(COMMANDS[args.command], args)
