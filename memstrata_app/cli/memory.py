"""Writing and reading facts: ingest, explain (a dry run), query, rejudge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .errors import CliError
from .gitlog import ingest_git_log
from .notes import file_label, ingest_records, read_notes_arg
from .options import (
    TIME_FORMATS,
    check_not_future,
    open_engine,
    parse_at,
    space_of,
)
from .output import emit_json, fmt_iso, print_understood, understood
from .remote import markup_skipped, outbound, result_from_dict, running_endpoint

INGEST_EXAMPLES = """\
examples:
  memstrata ingest "the orders API listens on 8080 in prod"
  memstrata ingest --file notes.md --at 2026-03-01
  memstrata ingest --file notes.jsonl             # {"text": …, "at": …} per line, each at its time
  memstrata ingest --git-log                      # this repository's commit subjects
  memstrata ingest --git-log ../api --since 2025-01-01 --max 500 -v
  memstrata --space shop ingest "the shop's API listens on 3000"
  memstrata ingest -v "bumped the Dockerfile to python 3.12"   # what the judge read
"""
EXAMPLES = {
    "query": ['query "which port does the auth service use?"',
              'query "auth service port" --as-of 2025-02-15',
              'query "API port" --space shop -k 3 --json'],
    "rejudge": ["rejudge", "rejudge --apply", "rejudge --space shop --json"],
}


def add_ingest(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser(
        "ingest", help="store statements (text, a file or a git history), superseding old values",
        description="Store statements and print, sentence by sentence, what was understood: "
                    "the key, the action and what it retired, or why a sentence was not stored.",
        epilog=INGEST_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[spaced])
    s.add_argument("text", nargs="?", help="the statement(s); omit with --file or --git-log")
    s.add_argument("--file", type=Path,
                   help="a file of statements ('-': stdin): plain text; or JSON lines "
                        '({"text": …, "at": …} per line) or CSV/TSV with a header naming a '
                        "text column (text, sentence or statement) and a time column (at, "
                        "time, date or timestamp), each stored at its own time; other "
                        "structured files (JSON, YAML, XML, binary) are refused")
    s.add_argument("--git-log", nargs="?", const=".", metavar="REPO",
                   help="ingest the commit subjects of a git repository (default REPO: .), "
                        "oldest first, each at its committer date")
    s.add_argument("--since", metavar="DATE",
                   help="with --git-log: only commits after DATE (anything git log accepts)")
    s.add_argument("--max", type=int, metavar="N",
                   help="with --git-log: only the latest N commits")
    s.add_argument("-v", "--verbose", dest="each", action="store_true",
                   help="show what the update judge read beside each statement and decided"
                        " (with --git-log: also what was understood in each commit)")
    s.add_argument("--at", metavar="TIME",
                   help=f"when it was said (default now; with --file, for the lines without "
                        f"a time of their own). TIME is {TIME_FORMATS}; more than a day ahead "
                        "is refused without --future")
    s.add_argument("--future", action="store_true",
                   help="accept a time more than a day ahead (a change planned for then: it "
                        "is not valid, nor shown, before that time)")
    s.add_argument("--source", help="who said it (default: cli; git with --git-log)")
    s.add_argument("--label", choices=("normal", "sensitive", "restricted"),
                   help="permission label of the stored rows (default normal; restricted "
                        "rows are never injected nor returned by query)")
    s.add_argument("--json", action="store_true", help="machine-readable output")


def add_explain(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser(
        "explain", help="show what ingesting a text would do, without writing anything",
        description="A dry run of `memstrata ingest`: the same write path, rolled back. "
                    "Nothing is written to the ledger.",
        epilog='example:\n  memstrata explain "moved the orders API from 8080 to 9090 in prod"',
        formatter_class=argparse.RawDescriptionHelpFormatter, parents=[spaced])
    s.add_argument("text", help="the statement(s)")
    s.add_argument("--at", metavar="TIME",
                   help=f"when it would be said (default now). TIME is {TIME_FORMATS}; more "
                        "than a day ahead is refused without --future")
    s.add_argument("--future", action="store_true",
                   help="accept a time more than a day ahead (a change planned for then)")
    s.add_argument("--source", default="cli",
                   help='who would say it (default: cli; "git" reads each sentence as a '
                        "commit subject)")
    s.add_argument("--json", action="store_true", help="machine-readable output")


def add_query(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser("query", help="retrieve the facts valid now (or --as-of T)",
                       parents=[spaced])
    s.add_argument("query", help="what you want to know, in words (a question or keywords)")
    s.add_argument("-k", type=int, default=5, help="how many facts (default 5)")
    s.add_argument("--as-of", metavar="TIME",
                   help=f"answer with the facts valid at TIME (default now). TIME is "
                        f"{TIME_FORMATS}")
    s.add_argument("--known-at", metavar="TIME",
                   help="answer as the ledger knew it at TIME (transaction time: statements "
                        "recorded later, and later corrections, unseen); --as-of then "
                        "defaults to TIME")
    s.add_argument("--json", action="store_true")


def add_rejudge(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser(
        "rejudge", parents=[spaced],
        help="read the open facts again with the current update judge; propose what it "
             "finds (review queue), never retire",
        description="Each open sentence is read beside the earlier open sentences nearest to "
                    "it in its space, as the write path reads a new statement. Where the judge "
                    "finds an update the ledger does not hold, it is listed; with --apply it "
                    "goes to the review queue (approving retires the older fact).")
    s.add_argument("--apply", action="store_true",
                   help="put each proposal in the review queue (default: only list them)")
    s.add_argument("--json", action="store_true", help="machine-readable output")


def cmd_ingest(args: argparse.Namespace) -> int:
    if args.git_log is not None:
        return ingest_git_log(args)
    for flag, given in (("--since", args.since), ("--max", args.max)):
        if given:
            raise CliError(f"{flag} goes with --git-log")
    if args.text is None and args.file is None:
        raise CliError('nothing to ingest: give the statement(s) as an argument (memstrata '
                       'ingest "The API port is 8080."), a file with --file FILE (- for stdin), '
                       "or a repository's commits with --git-log [REPO]")
    if args.text is not None and args.file is not None:
        raise CliError("give the statement as an argument or with --file, not both")
    if args.file is not None:
        notes = read_notes_arg(args.file)
        if notes.structured:  # records with their own times: each stored at its time
            return ingest_records(args, notes, file_label(args.file))
        text = notes.text
    else:
        text = args.text
    if not text.strip():
        raise CliError("nothing to ingest: the text is empty")
    at = parse_at(args.at)
    check_not_future(at, f"--at {args.at}", args.future)
    space = space_of(args)
    remote = running_endpoint(args) if not args.label else None
    if remote is not None:
        sent, removed = outbound(text)  # redacted here: no secret leaves this process
        body = {"text": sent, "source": args.source or "cli", "space": space,
                "at": at.isoformat() if at else None}
        data = remote.call("POST", "/memstrata/v1/ingest", body)
        data["skipped"] = markup_skipped(removed) + list(data.get("skipped") or [])
        if args.json:
            emit_json(data)
            return 0
        res = result_from_dict(data)
        with open_engine(args) as eng:  # reads only: the values it retired, no model
            olds = understood().retired_values(eng, [res])
        print_understood(res, text, old_values=olds, judged=args.each)
        return 0
    with open_engine(args) as eng:
        res = eng.ingest(text, source=args.source or "cli", at=at, space=space,
                         label=args.label)
        olds = {} if args.json else understood().retired_values(eng, [res])
    if args.json:
        emit_json(res.to_dict())
        return 0
    print_understood(res, text, old_values=olds, judged=args.each)
    return 0


def cmd_rejudge(args: argparse.Namespace) -> int:
    space = space_of(args)
    with open_engine(args) as eng:
        if eng.judge is None:
            raise CliError("the update judge is off (the update_judge setting); nothing to do")
        found = eng.rejudge(apply=args.apply, space=space)
        name = eng.judge.name
    if args.json:
        emit_json({"judge": name, "applied": args.apply, "proposals": [
            {"older": p.older, "newer": p.newer, "older_text": p.older_text,
             "newer_text": p.newer_text, "updates": round(p.updates, 4),
             "review_id": p.review_id} for p in found]})
        return 0
    if not found:
        print(f"the judge {name} finds no update the ledger does not already hold")
        return 0
    verb = "put in review" if args.apply else "would propose (run with --apply to review them)"
    print(f"the judge {name} {verb}: {len(found)}")
    for p in found:
        where = f" → review #{p.review_id}" if p.review_id else ""
        print(f"  #{p.older} “{p.older_text[:70]}”\n    may be updated by #{p.newer}"
              f" “{p.newer_text[:70]}” (updates {p.updates:.2f}){where}")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise CliError("nothing to explain: the text is empty")
    at = parse_at(args.at)
    check_not_future(at, f"--at {args.at}", args.future)
    space = space_of(args)
    remote = running_endpoint(args)
    if remote is not None:
        sent, removed = outbound(args.text)
        data = remote.call("POST", "/memstrata/v1/explain", {
            "text": sent, "source": args.source, "space": space,
            "at": at.isoformat() if at else None})
        data["skipped"] = markup_skipped(removed) + list(data.get("skipped") or [])
        if args.json:
            emit_json(data)
            return 0
        res = result_from_dict(data)
        with open_engine(args) as eng:  # reads only: the values it would retire, no model
            olds = understood().retired_values(eng, [res])
    else:
        with open_engine(args) as eng:
            res = eng.explain(args.text, source=args.source, at=at, space=space)
            olds = {} if args.json else understood().retired_values(eng, [res])
        if args.json:
            emit_json({"dry_run": True, **res.to_dict()})
            return 0
    print("dry run: nothing was written; `memstrata ingest` would do this:")
    print_understood(res, args.text, dry_run=True, old_values=olds, judged=True)
    return 0


def cmd_query(args: argparse.Namespace) -> int:
    if args.k < 1:
        raise CliError("-k must be at least 1")
    as_of = parse_at(args.as_of, "--as-of")
    known_at = parse_at(args.known_at, "--known-at")
    space = space_of(args)
    remote = running_endpoint(args)
    if remote is not None:
        got = remote.call("POST", "/memstrata/v1/query", {
            "query": outbound(args.query)[0], "k": args.k, "space": space,
            "as_of": as_of.isoformat() if as_of else None,
            "known_at": known_at.isoformat() if known_at else None})
        hits, pending = got["hits"], {int(k): int(v) for k, v in
                                      (got.get("pending") or {}).items()}
    else:
        with open_engine(args) as eng:
            found = eng.retrieve(args.query, k=args.k, as_of=as_of, space=space,
                                 known_at=known_at)
            hits = [h.to_dict() for h in found]
            pending = understood().doubted(eng, found, as_of) if known_at is None else {}
    if args.json:
        emit_json(hits)
        return 0
    if not hits:
        print("no facts valid at that time")
    for h in hits:
        print(f"{h['score']:.3f}  #{h['assertion_id']:<6} {h['text']}   "
              f"[valid {fmt_iso(h['valid_from'])} → {fmt_iso(h['valid_to'])}]")
        if int(h["assertion_id"]) in pending:  # as the endpoint marks it in the prompt
            print(f"{'':15}may be outdated: #{pending[int(h['assertion_id'])]} may replace it"
                  " (awaiting review: memstrata quarantine)")
    return 0


COMMANDS = {"ingest": cmd_ingest, "explain": cmd_explain, "query": cmd_query,
            "rejudge": cmd_rejudge}
