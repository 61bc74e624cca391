"""Rows in and out of a ledger: export, import, and push/pull with a team ledger (an
export from one ledger imported into the other)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import CliError
from .options import ledger_path, open_engine, read_text, space_of
from .output import emit_json, progress_bar

EXAMPLES = {
    "push": ["push postgresql://dana@db.internal/memstrata --space shop"],
    "pull": ["pull postgresql://dana@db.internal/memstrata --space shop"],
    "export": ["export -o ledger.json", "export --jsonl -o ledger.jsonl",
               "export --space shop -o shop.json"],
    "import": ["import ledger.jsonl", "--db copy.db --create import ledger.jsonl",
               "import shop.json --space archive"],
}
IMPORT_WORDS = {  # summary key -> how the line says it, in this order
    "restored": "restored as exported", "novel": "new", "superseded": "superseded older values",
    "history": "filed into the past", "reinforced": "restated a current value",
    "duplicate": "already stored", "prose": "new notes", "quarantined": "to review",
    "retracted": "removals", "already there": "already there",
    "kept retracted": "retracted (not brought back)",
    "not standing": "rejected or awaiting review (not imported)",
    "markup only": "only markup (not imported)",
}


def add_export_import(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser("export", help="write every ledger row (or a space's) as JSON",
                       parents=[spaced])
    s.add_argument("--jsonl", action="store_true", help="one JSON object per line")
    s.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")

    s = sub.add_parser("import", help="restore rows written by `memstrata export` (rows keep "
                                      "their space unless --space names one)", parents=[spaced])
    s.add_argument("file", type=Path, help="a JSON array or JSON-lines file ('-': stdin)")


def add_push_pull(sub: Any, spaced: argparse.ArgumentParser) -> None:
    for verb, helptext, desc in (
            ("push", "copy this ledger's rows (or a space's) to a team ledger, history included",
             "Copy the rows of this ledger (--db, default the data folder's), or of one space, "
             "to a team ledger on PostgreSQL. Into a space the team ledger does not hold yet "
             "the rows arrive exactly as they are here: statuses, validity, chains, authors. "
             "Into a space it holds, each current statement it lacks is replayed through the "
             "write path (so pushing twice adds nothing)."),
            ("pull", "copy a team ledger's rows (or a space's) into this ledger",
             "Copy the rows of a team ledger on PostgreSQL, or of one space, into this ledger "
             "(--db, default the data folder's): the reverse of push, with the same rules.")):
        s = sub.add_parser(verb, help=helptext, description=desc, parents=[spaced],
                           epilog="examples:\n"
                                  f"  memstrata {verb} postgresql://dana@db.internal/memstrata"
                                  " --space shop\n"
                                  f"  memstrata {verb} postgresql://dana@db.internal/memstrata",
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        s.add_argument("team", metavar="TEAM_LEDGER",
                       help="the team ledger: postgresql://user@host:port/db (its password "
                            "from ~/.pgpass or PGPASSWORD)")


def cmd_export(args: argparse.Namespace) -> int:
    lost: list[int] = []  # ids a damaged ledger could not give back
    space = space_of(args)
    with open_engine(args) as eng:
        rows = list(eng.export(unreadable=lost.append, space=space))
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
    if lost:  # the readable rows are out; say loudly (and in the exit status) what is not
        print(f"memstrata: error: the ledger is damaged: {len(lost)} of its rows could not be "
              f"read and are missing from the export (ids {id_ranges(lost)}); the {len(rows)} "
              "readable rows were written", file=sys.stderr)
        return 1
    return 0


def id_ranges(ids: list[int], limit: int = 8) -> str:
    """1, 2, 3, 7 -> "1–3, 7" (at most `limit` ranges, then "…")."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    out = [f"{a}–{b}" if b > a else str(a) for a, b in spans[:limit]]
    return ", ".join(out) + (", …" if len(spans) > limit else "")


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
    space = space_of(args)
    with open_engine(args) as eng:
        eng.check_writable()  # a read-only or damaged ledger says so before embedding
        summary: dict[str, int] = {}
        show = progress_bar("embedding") if sys.stderr.isatty() else None
        try:
            eng.import_records(records, progress=show, space=space, summary=summary)
        except ValueError as e:  # a record's own space is not a space name
            raise CliError(f"{args.file}: {e}") from None
    if show is not None:
        print(file=sys.stderr)
    print(import_summary(len(records), summary), file=sys.stderr)
    return 0


def import_summary(n: int, summary: dict[str, int]) -> str:
    """"imported 0 of 33 records: 0 new, 33 already there" — what became of each record."""
    left = sum(summary.get(k, 0) for k in ("already there", "kept retracted", "not standing",
                                           "markup only"))
    parts = [f"{summary[k]} {w}" for k, w in IMPORT_WORDS.items() if summary.get(k)]
    parts += [f"{v} {k}" for k, v in summary.items() if k not in IMPORT_WORDS and v]
    if "restored" not in summary and not any(summary.get(k) for k in ("novel", "prose")):
        parts.insert(0, "0 new")
    return (f"imported {n - left} of {n} record{'s' if n != 1 else ''}: "
            f"{', '.join(parts) or 'nothing to do'}")


def _copy_ledger(source: Path | str, target: Path | str, space: str | None,
                 embedder: str) -> int:
    """push/pull: export from one ledger, import into the other, say what happened."""
    from ..engine import MemoryEngine

    with MemoryEngine.open(source, embedder=embedder) as src:
        rows = list(src.export(space=space))
        name = src.location
    if not rows:
        print(f"nothing to copy: {name} holds no rows"
              + (f" in the space {space!r}" if space else ""), file=sys.stderr)
        return 0
    summary: dict[str, int] = {}
    with MemoryEngine.open(target, embedder=embedder) as dst:
        dst.check_writable()
        show = progress_bar("embedding") if sys.stderr.isatty() else None
        dst.import_records(rows, progress=show, summary=summary)
        if show is not None:
            print(file=sys.stderr)
        print(f"{name} → {dst.location}", file=sys.stderr)
    print(import_summary(len(rows), summary), file=sys.stderr)
    return 0


def _team(args: argparse.Namespace) -> str:
    from ..engine.ledger.pg import is_dsn

    if not is_dsn(args.team):
        raise CliError(f"{args.team!r} is not a team ledger: give a "
                       "postgresql://user@host:port/db URI")
    return str(args.team)


def cmd_push(args: argparse.Namespace) -> int:
    return _copy_ledger(ledger_path(args), _team(args), space_of(args),
                        args.embedder or "auto")


def cmd_pull(args: argparse.Namespace) -> int:
    return _copy_ledger(_team(args), ledger_path(args), space_of(args),
                        args.embedder or "auto")


COMMANDS = {"export": cmd_export, "import": cmd_import, "push": cmd_push, "pull": cmd_pull}
