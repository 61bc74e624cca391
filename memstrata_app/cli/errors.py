"""How a command's failure reaches the user: one line on stderr and an exit status."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 1."""


def run_command(command: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run one command; its errors become one line and an exit status, never a trace
    (unless MEMSTRATA_DEBUG is set)."""
    try:
        return command(args)
    except CliError as e:
        print(f"memstrata: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("memstrata: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `memstrata export | head`: the reader left early, not an error
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as e:  # known engine errors and anything unexpected: one line, no trace
        from ..engine import EngineError

        if os.environ.get("MEMSTRATA_DEBUG"):
            raise
        what = str(e) if isinstance(e, EngineError) else f"{type(e).__name__}: {e}"
        print(f"memstrata: error: {what}", file=sys.stderr)
        return 1
