"""The reviewer's commands: quarantine (the review queue), forget, contest, and undo of any
of them (and of move)."""

from __future__ import annotations

import argparse
from typing import Any

from .errors import CliError
from .options import open_engine
from .output import emit_json, fmt_row, fmt_time

EXAMPLES = {
    "quarantine": ["quarantine", "quarantine approve 7",
                   'quarantine approve 7 --subject "orders API"', "quarantine reject 8"],
    "forget": ["forget 12"],
    "contest": ['contest 17 --reason "it is 7001, see the compose file" --value 7001',
                'contest 17 --reason "never true"'],
    "undo": ["undo", "undo --list", "undo 7", "undo 7 --json"],
}


def add_quarantine(sub: Any) -> None:
    s = sub.add_parser("quarantine", help="review low-confidence extractions")
    s.add_argument("action", nargs="?", default="list", choices=("list", "approve", "reject"),
                   help="list the queue (default), approve an extraction (it takes effect, "
                        "retiring what it supersedes) or reject it (kept, never retrieved)")
    s.add_argument("id", nargs="?", type=int, help="with approve or reject: the row's id")
    s.add_argument("--subject", help="with approve: correct the subject first")
    s.add_argument("--relation", help="with approve: correct the relation first")
    s.add_argument("--object", help="with approve: correct the value first")
    s.add_argument("--json", action="store_true")


def add_forget(sub: Any) -> None:
    s = sub.add_parser("forget", help="retract a fact (kept for audit, no longer retrieved)")
    s.add_argument("id", type=int, help="the fact's id (#N in query or history output)")
    s.add_argument("--json", action="store_true")


def add_contest(sub: Any) -> None:
    s = sub.add_parser(
        "contest", help="mark a current fact wrong in review (optionally with the right value)",
        description="A reviewer's correction: the fact stops being valid now and stays in its "
                    "key's history with the reason; with --value, a reviewer-stated row holds "
                    "the key's value from now on.")
    s.add_argument("id", type=int, help="the current fact's id")
    s.add_argument("--reason", required=True, help="why it is wrong")
    s.add_argument("--value", help="the right value, when known")
    s.add_argument("--json", action="store_true")


def add_undo(sub: Any) -> None:
    s = sub.add_parser(
        "undo", help="undo an approve, reject, forget, move or contest (the latest, or one by id)",
        description="Put back every row the action changed exactly as it was, in a new "
                    "transaction (reads --known-at before it still show the action), and log "
                    "the undo. Refused, changing nothing, when those rows changed since (a "
                    "later statement replaced one, say) or the action was undone already.")
    s.add_argument("id", nargs="?", type=int, metavar="AUDIT_ID",
                   help="the action's entry (#N in `undo --list`); default: your latest")
    s.add_argument("--list", action="store_true",
                   help="list your recent actions that are not undone, and whether each can be")
    s.add_argument("--json", action="store_true")


def cmd_quarantine(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.action == "list":
            rows = eng.quarantined()
            if args.json:
                emit_json([a.to_dict() for a in rows])
            elif not rows:
                print("the review queue is empty")
            for a in rows if not args.json else ():
                print(f"{fmt_row(a)}\n        confidence {a.confidence:.2f}, {a.method}")
                if a.reason:  # why it waits, and what approving it would retire
                    print(f"        {a.reason}")
            return 0
        if args.id is None:
            raise CliError(f"quarantine {args.action} needs an assertion id")
        if args.action == "approve":
            act = eng.approve(args.id, args.subject, args.relation, args.object)
            out: Any = act.to_dict()
            line = "" if args.json else approved_line(eng, args.id, act)
        else:
            a = eng.reject(args.id)
            out, line = a.to_dict(), f"rejected #{a.id}"
    emit_json(out) if args.json else print(line)
    return 0


def fact_words(a: Any) -> str:
    """A row as people read it: its key and value, or its sentence."""
    from ..engine.ledger.keys import key_label

    if a.subject and a.object:
        return f"{key_label(a.subject, a.relation, a.context)} = {a.object}"
    text = a.text or "(erased)"
    return f"“{text[:70]}{'…' if len(text) > 70 else ''}”"


def approved_line(eng: Any, item_id: int, act: Any) -> str:
    """What approving review item `item_id` did, by number and in words: which row now
    holds the value, and what it retired."""
    def row(i: int) -> str:
        try:
            return f"#{i} ({fact_words(eng.get(i))})"
        except Exception:  # a row that cannot be read is still named
            return f"#{i}"

    retired = [row(int(r)) for r in act.retired]
    gone = ("it retired " + (", ".join(retired[:-1]) + " and " + retired[-1]
                             if len(retired) > 1 else retired[0])) if retired \
        else "it retired nothing"
    kept = int(act.assertion_id)
    if kept == item_id:
        now = ("filed as history (older than the current value)"
               if act.action.value == "history" else "it is current now")
        return f"approved {row(item_id)}: {now}; {gone}"
    item = eng.get(item_id)
    if (item.reason or "").startswith("approved as a restatement"):
        return (f"approved #{item_id} as a restatement of {row(kept)}, which stays current; "
                f"{gone}")
    return f"approved review item #{item_id}: {row(kept)} stands; {gone}"


def cmd_forget(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        a = eng.forget(args.id)
        done = [e for e in eng.undoable(limit=1) if e.kind == "forget" and e.row_id == a.id]
        back = [eng.get(i) for i in done[0].created] if done else []
    if args.json:
        emit_json(a.to_dict())
        return 0
    print(f"retracted #{a.id}: {a.text}")
    for b in back:
        print(f"reopened #{b.id}: {b.text} (the value #{a.id} had replaced holds again)")
    if done:
        print(f"(`memstrata undo {done[0].id}` takes it back)")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        if args.list:
            if args.id is not None:
                raise CliError("undo --list takes no AUDIT_ID")
            entries = eng.undoable()
            if args.json:
                emit_json([e.to_dict() for e in entries])
            elif not entries:
                print("nothing to undo")
            for e in entries if not args.json else ():
                state = (f"blocked: {e.blocked}" if e.blocked
                         else f"`memstrata undo {e.id}`")
                print(f"#{e.id:<5} {fmt_time(e.at)}  {e.summary}\n        {state}")
            return 0
        res = eng.undo(args.id)
    if args.json:
        emit_json(res.to_dict())
        return 0
    print(f"undid #{res.undone.id} ({res.undone.summary}), logged as #{res.entry.id}")
    for a in res.restored:
        print(f"restored {fmt_row(a)}")
    for a in res.withdrawn:
        print(f"withdrawn #{a.id} (written by the action; kept, never served): {a.text}")
    return 0


def cmd_contest(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        rows = eng.contest(args.id, args.reason, right_value=args.value)
    if args.json:
        emit_json([r.to_dict() for r in rows])
        return 0
    print(f"contested #{rows[0].id}: {rows[0].status.value}, valid until "
          f"{fmt_time(rows[0].valid_to)} ({rows[0].reason})")
    if len(rows) > 1:
        print(f"now: #{rows[1].id} {rows[1].subject} · {rows[1].relation} = {rows[1].object}"
              " (stated in review)")
    return 0


COMMANDS = {"quarantine": cmd_quarantine, "forget": cmd_forget, "contest": cmd_contest,
            "undo": cmd_undo}
