"""What the shared options mean: the ledger (--db, --create), the space (--space), times
(--at, --as-of, …), input files, and the engine a command opens with them."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..settings import Settings, apply_governance
from .errors import CliError

TIME_FORMATS = ('an ISO 8601 date or date-time (2026-03-01, 2026-03-01T14:30, '
                '2026-03-01T14:30+01:00, …Z), "now", or a written date such as "March 2", '
                '"2 Mar 2026 14:00" or 03/02/2026 (month first); a missing year is this year, '
                'a missing time midnight, a missing zone UTC; relative words ("yesterday") '
                'are not read')
SPACE_ENV = "MEMSTRATA_SPACE"
SPACE_HELP = ("the space (project) to use: ingest, explain and import write into it, query reads "
              "it and the global space, history and export read it alone (default: "
              f"${SPACE_ENV}; without either, writes and history use the global space, query "
              "and export every space)")


def space_parent() -> argparse.ArgumentParser:
    """The --space option again after the command (`memstrata query … --space shop`), as a
    parent parser for the commands that take it."""
    spaced = argparse.ArgumentParser(add_help=False)
    spaced.add_argument("--space", metavar="NAME", default=argparse.SUPPRESS, help=SPACE_HELP)
    return spaced


def ledger_path(args: argparse.Namespace) -> Path | str:
    """The ledger to open: --db, else the `ledger` setting, else the data folder's (made
    when missing). A --db file must exist unless --create says to start one (a mistyped path
    is an error, not a new ledger); a team ledger's URI is opened as given."""
    from ..settings import ledger_location

    if args.db is None:
        return ledger_location()
    target = ledger_location(args.db)
    if isinstance(target, str):
        return target
    db = target
    if db.is_dir():
        raise CliError(f"--db {args.db}: a folder, not a ledger file "
                       f"(e.g. {db / 'memstrata.db'})")
    if not db.exists() and not getattr(args, "create", False):
        where = "" if db.parent.is_dir() else f" (and the folder {db.parent} does not exist)"
        raise CliError(f"--db {args.db}: no ledger there{where}; check the path, or add "
                       "--create to start a new ledger there")
    return db


@contextlib.contextmanager
def open_engine(args: argparse.Namespace) -> Iterator[Any]:
    """The ledger of --db (or the default), opened with the settings' embedder and
    governance."""
    from ..engine import MemoryEngine

    settings = Settings.load()
    db = ledger_path(args)
    with MemoryEngine.open(db, embedder=args.embedder or settings["embedder"],
                           quarantine_threshold=settings["quarantine_threshold"],
                           ollama_host=settings["ollama_url"]) as eng:
        apply_governance(eng, settings)
        yield eng


def space_of(args: argparse.Namespace) -> str | None:
    """The --space given (or MEMSTRATA_SPACE), normalized; None when neither is set."""
    name = getattr(args, "space", None)
    if name is None:
        name = os.environ.get(SPACE_ENV) or None
    if name is None:
        return None
    from ..engine.ledger.keys import normalize_space

    try:
        return normalize_space(name)
    except ValueError as e:
        raise CliError(f"--space: {e}") from None


def parse_at(value: str | None, flag: str = "--at") -> Any:
    if value is None:
        return None
    from ..engine import EngineError
    from ..engine.timeutil import parse_time

    try:
        return parse_time(value)
    except EngineError:
        raise CliError(f"{flag}: cannot read the time {value!r}: {TIME_FORMATS}") from None


FUTURE_SLACK_DAYS = 1  # a clock a little ahead, or another time zone's "tomorrow", passes


def check_not_future(t: Any, what: str, allowed: bool) -> None:
    """A time more than a day ahead is refused unless --future says so: a fact said then is
    not valid before then, so query and the endpoint would not show it until that day."""
    from datetime import timedelta

    from ..engine.timeutil import now

    if t is None or allowed:
        return
    ahead = t - now()
    if ahead <= timedelta(days=FUTURE_SLACK_DAYS):
        return
    days = ahead.days
    span = (f"{days // 365} years" if days >= 730 else f"{days // 30} months" if days >= 60
            else f"{days} days")
    raise CliError(f"{what} is {t:%Y-%m-%d %H:%M} UTC, {span} in the future: a fact said then "
                   f"is not valid before then, so query and the endpoint would not show it "
                   f"until {t:%Y-%m-%d}. Check the date, or add --future to store it as a "
                   "change planned for then")


def read_text(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"cannot read {path}: {e.strerror if isinstance(e, OSError) else e}"
                       ) from None
