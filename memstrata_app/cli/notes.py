"""`memstrata ingest --file`: a file of statements read by the app's own reader
(memstrata_app/notes_file.py). Plain text is ingested as one text; JSON lines and CSV/TSV
are records, each stored at its own time (or --at), and each reported as `ingest` reports a
statement: what it retired, what went to review, what was not stored and why."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..notes_file import Notes, NotesError, parse_notes
from .errors import CliError
from .options import check_not_future, open_engine, parse_at, space_of
from .output import emit_json, fmt_time, progress_bar, tally, understood


def read_notes_arg(path: Path) -> Notes:
    """The --file given ('-': stdin), read as statements; a CliError says why not."""
    try:
        if str(path) == "-":
            return parse_notes(sys.stdin.buffer.read(), "stdin")
        return parse_notes(path.read_bytes(), path.name, path.suffix)
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror}") from None
    except NotesError as e:
        raise CliError(str(e)) from None


def ingest_records(args: argparse.Namespace, notes: Notes, name: str) -> int:
    """Each record at its own time (else --at, else now), one account per record."""
    if not notes.items:
        raise CliError(f"nothing to ingest: {name} holds no statements")
    at = parse_at(args.at)
    check_not_future(at, f"--at {args.at}", args.future)
    for (_text, t), n in zip(notes.items, notes.lines, strict=True):
        check_not_future(t, f"{name} line {n}: the time", args.future)
    items = [(text, t or at) for text, t in notes.items]
    show = progress_bar("ingesting") if sys.stderr.isatty() and len(items) > 256 else None
    u = understood()
    with open_engine(args) as eng:
        results = eng.ingest_many(items, source=args.source or "cli", progress=show,
                                  space=space_of(args), label=args.label)
        olds = {} if args.json else u.retired_values(eng, results)
    if show is not None:
        print(file=sys.stderr)
    if args.json:
        emit_json([{"line": n, "at": t.isoformat() if t else None, "text": text,
                    **res.to_dict()}
                   for (text, t), n, res in zip(items, notes.lines, results, strict=True)])
        return 0
    for (text, t), n, res in zip(items, notes.lines, results, strict=True):
        outcomes = u.by_sentence(res, text)
        single = len(outcomes) == 1 and outcomes[0].sentence.strip() == text
        when = fmt_time(t) if t else "now"
        print(f"line {n}  {when}  {u.quote(text) if single else ''}".rstrip())
        if not outcomes:
            print("  no statements found (questions and code blocks are not stored)")
        for line in u.render(outcomes, old_values=olds, quote_sentences=not single,
                             judged=args.each):
            print(line if single else f"  {line}")
    k = len(items)
    print(f"read {k} statement{'s' if k != 1 else ''} from {name} ({notes.kind_words}): "
          f"{tally(results)}")
    return 0


def file_label(path: Path) -> str:
    return "stdin" if str(path) == "-" else path.name
