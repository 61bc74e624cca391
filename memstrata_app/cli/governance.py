"""Governance: erasure (purge, redact), legal holds (hold, release), labels, retention
(expire) and the injection log (audit)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .errors import CliError
from .options import TIME_FORMATS, open_engine, parse_at
from .output import emit_json, fmt_time

EXAMPLES = {
    "purge": ['purge 12 --reason "pasted a key"', "purge 12 --yes"],
    "redact": ['redact 12 --reason "customer name"', "redact 12 --yes"],
    "hold": ['hold 12 --reason "incident 4411"', 'hold --key "auth service::port"',
             "hold --list"],
    "release": ["release 12", 'release --key "auth service::port"'],
    "label": ["label 12 restricted", "label 12 normal"],
    "expire": ["expire", "expire --json"],
    "audit": ["audit", "audit 42", 'audit --since "2026-11-24" -n 50'],
}


def add_purge(sub: Any) -> None:
    s = sub.add_parser(
        "purge", help="erase a fact's sentence and vector from the ledger file (irreversible)",
        description="Overwrite the sentence, triple and vector of a row, and of every row made "
                    "from the same sentence, in the ledger file itself (secure delete, then a "
                    "checkpoint that empties the write-ahead log). A tombstone keeps the key, "
                    "the interval and the reason. `forget` keeps the text; this does not.")
    s.add_argument("id", type=int, help="the row's id; every row made from its sentence goes "
                                        "with it")
    s.add_argument("--reason", default="purged", help="why (kept on the tombstone)")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    s.add_argument("--json", action="store_true")


def add_redact(sub: Any) -> None:
    s = sub.add_parser(
        "redact", help="erase a row's sentence, value and vector; keep its key and interval",
        description="Erase the sentence, value and vector of a row (and of every row made from "
                    "the same sentence) from the ledger file, keeping the key, the validity "
                    "interval and the row's place in its key's history. The sentence is never "
                    "stored again. `purge` also ends the row; this keeps it in the chain.")
    s.add_argument("id", type=int, help="the row's id")
    s.add_argument("--reason", default="redacted", help="why (kept on the row)")
    s.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    s.add_argument("--json", action="store_true")


def add_hold_release(sub: Any) -> None:
    for verb, what in (("hold", "put a row or a key on legal hold (no expiry, purge or "
                                "redaction until released)"),
                       ("release", "lift a legal hold from a row or a key")):
        s = sub.add_parser(verb, help=what)
        s.add_argument("id", type=int, nargs="?", help="the row's id (or --key)")
        s.add_argument("--key", help='a key as history shows it ("auth service::port")')
        if verb == "hold":
            s.add_argument("--reason", default="legal hold", help="why (shown on the row)")
            s.add_argument("--list", action="store_true", help="list every hold instead")
        s.add_argument("--json", action="store_true")


def add_label(sub: Any) -> None:
    s = sub.add_parser("label", help="set a row's permission label (normal, sensitive, "
                                     "restricted)")
    s.add_argument("id", type=int, help="the row's id (every row of its sentence changes)")
    s.add_argument("label", choices=("normal", "sensitive", "restricted"),
                   help="normal, sensitive (served, marked) or restricted (never served)")
    s.add_argument("--json", action="store_true")


def add_expire(sub: Any) -> None:
    s = sub.add_parser("expire", help="apply the retention rules now (the endpoint does it "
                                      "hourly)")
    s.add_argument("--json", action="store_true")


def add_audit(sub: Any) -> None:
    s = sub.add_parser(
        "audit", help="the injection log: what the endpoint injected into each request, and why",
        description="Each request the endpoint served: the facts injected, the stale ones left "
                    "out (and which row retired each), the settings in force. Without ID, the "
                    "latest entries.")
    s.add_argument("id", type=int, nargs="?", help="one entry, in full")
    s.add_argument("--since", metavar="TIME", help=f"entries from TIME on ({TIME_FORMATS})")
    s.add_argument("-n", type=int, default=20, help="how many entries (default 20)")
    s.add_argument("--json", action="store_true")


def cmd_purge(args: argparse.Namespace) -> int:
    return _erase(args, "purge", "Purge erases this sentence and its vector from the ledger "
                  "file, with every row made from it. This cannot be undone.")


def cmd_redact(args: argparse.Namespace) -> int:
    return _erase(args, "redact", "Redact erases this sentence, its value and its vector (its "
                  "key and interval stay).")


def _erase(args: argparse.Namespace, verb: str, what: str) -> int:
    """purge/redact: confirm (on a terminal), erase, print the rows as they are left."""
    done = verb + ("d" if verb.endswith("e") else "ed")
    with open_engine(args) as eng:
        a = eng.get(args.id)
        if not _confirm(f"#{a.id}: “{a.text}”\n{what} {verb.capitalize()}? [y/N] ", args):
            print(f"nothing {done}", file=sys.stderr)
            return 1
        rows = getattr(eng, verb)(args.id, reason=args.reason)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    for r in rows:
        print(f"{done} #{r.id}: "
              f"{r.key or '(plain fact)'}  {fmt_time(r.valid_from)} → {fmt_time(r.valid_to)}"
              f"  {r.status.value}  ({r.reason})")
    return 0


def _confirm(prompt: str, args: argparse.Namespace) -> bool:
    if args.yes or not sys.stdin.isatty():
        return True
    try:
        return input(prompt).strip().lower() in ("y", "yes")
    except EOFError:
        return False


def _hold_target(args: argparse.Namespace) -> tuple[int | None, str | None]:
    if (args.id is None) == (args.key is None):
        raise CliError("give a row id or --key KEY (one of them)")
    return args.id, args.key


def cmd_hold(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.list:
            holds = eng.holds()
            if args.json:
                emit_json(holds)
            for h in holds if not args.json else ():
                what = f"#{h['row']}" if "row" in h else f"key {h['key']}"
                print(f"{what}: {h['reason']}")
            if not holds and not args.json:
                print("no holds")
            return 0
        rid, key = _hold_target(args)
        eng.hold(rid, key, reason=args.reason)
    print(f"on legal hold: {f'#{rid}' if rid is not None else f'key {key}'} ({args.reason})")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    rid, key = _hold_target(args)
    with open_engine(args) as eng:
        eng.release_hold(rid, key)
    print(f"hold released: {f'#{rid}' if rid is not None else f'key {key}'}")
    return 0


def cmd_label(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        a = eng.set_label(args.id, args.label)
    if args.json:
        emit_json(a.to_dict())
    else:
        print(f"#{a.id} is {a.label}")
    return 0


def cmd_expire(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        done = eng.expire()
    if args.json:
        emit_json([{"id": i, "done": what} for i, what in done])
    else:
        print(f"{len(done)} row(s) expired" + "".join(f"\n  #{i} {w}" for i, w in done))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    since = parse_at(args.since, "--since")
    with open_engine(args) as eng:
        entries = ([eng.injection(args.id)] if args.id is not None
                   else eng.injections(since=since, limit=args.n))
    if args.json:
        emit_json(entries)
        return 0
    if not entries:
        print("no logged requests" + (" since then" if since else ""))
    for e in entries:
        print(f"audit {e['id']}  {fmt_time(e['at'])}  {e['api']}  model {e['model'] or '-'}  "
              f"space {e['space'] or 'global'}  tool {e['tool'] or '-'}")
        for f in e["injected"]:
            text = "[erased]" if f.get("erased") else f"“{f['text']}”"
            print(f"    injected  #{f['id']:<6} {f['score']:.3f}  {text}")
        for f in e["filtered"]:
            text = "[erased]" if f.get("erased") else f"“{f['text']}”"
            by = f" (retired by #{f['retired_by']})" if f.get("retired_by") else ""
            print(f"    left out  #{f['id']:<6} {f['score']:.3f}  {text}{by}")
        if args.id is not None:
            print(f"    settings  {json.dumps(e['settings'], sort_keys=True)}")
    return 0


COMMANDS = {"purge": cmd_purge, "redact": cmd_redact, "hold": cmd_hold,
            "release": cmd_release, "label": cmd_label, "expire": cmd_expire,
            "audit": cmd_audit}
