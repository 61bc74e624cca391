"""The ledger's keys and their histories: keys, history (typed words resolved to a key)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .errors import CliError
from .options import open_engine, space_of
from .output import emit_json, fmt_row

EXAMPLES = {
    "history": ['history "auth service" port', "history auth port            # loose words",
                'history "orders API" port --context prod', "history port --space shop"],
}


def add_history(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser("history", help="a fact's supersession chain, oldest first",
                       parents=[spaced])
    s.add_argument("subject", help='what the fact is about, as you would say it ("auth '
                                   'service"); or every word of the key at once')
    s.add_argument("relation", nargs="?",
                   help='the attribute ("port", "version", "owner"); words need not be exact: '
                        "a loose match that names one key is read, several are listed")
    s.add_argument("--context", help='a qualified key\'s context, e.g. "prod"')
    s.add_argument("--json", action="store_true", help="machine-readable output")


def add_keys(sub: Any, spaced: argparse.ArgumentParser) -> None:
    s = sub.add_parser(
        "keys", help="list the keys (subject · relation · context) with their row counts",
        description="The ledger's keys, the (subject, relation, context) that `history` takes, "
                    "most rows first, with each key's current value.",
        epilog="examples:\n  memstrata keys\n  memstrata keys port\n"
               '  memstrata keys "auth service" --space shop',
        formatter_class=argparse.RawDescriptionHelpFormatter, parents=[spaced])
    s.add_argument("filter", nargs="?", metavar="FILTER",
                   help="only keys whose subject, relation or context hold all these words")
    s.add_argument("--json", action="store_true", help="machine-readable output")


class Key:
    """One key of the ledger, as `keys` lists it and `history` resolves typed words to it."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.subject: str = row.get("subject") or ""
        self.subject_norm: str = row.get("subject_norm") or ""
        self.relation: str = row.get("relation") or ""
        self.context: str = row.get("context") or ""
        self.space: str = row.get("space") or "global"
        self.rows = 0
        self.current: str | None = None

    @property
    def label(self) -> str:
        ctx = f" · {self.context}" if self.context else ""
        where = f"  [{self.space}]" if self.space != "global" else ""
        return f"{self.subject} · {self.relation}{ctx}{where}"

    @property
    def words(self) -> str:
        return fold(f"{self.subject} {self.relation} {self.context}")

    def command(self) -> str:
        def q(w: str) -> str:
            return f'"{w}"' if (" " in w or not w) else w
        ctx = f" --context {q(self.context)}" if self.context else ""
        sp = f" --space {self.space}" if self.space != "global" else ""
        return f"memstrata history {q(self.subject)} {q(self.relation)}{ctx}{sp}"


def fold(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces: how typed words are compared."""
    import re

    return " ".join(re.sub(r"[^\w.]+", " ", text.casefold()).split())


def ledger_keys(eng: Any, space: str | None, *, history_only: bool = False) -> list[Key]:
    """Every key (in `space`, or every space), most rows first."""
    keys: dict[tuple[str, str], Key] = {}
    for r in eng.export(space=space):
        if not r.get("key") or r.get("status") == "rejected":
            continue
        if history_only and r.get("status") not in ("active", "superseded", "retracted"):
            continue
        k = keys.setdefault((r.get("space") or "global", r["key"]), Key(r))
        k.rows += 1
        if r.get("status") == "active":
            k.current = r.get("object") if k.current is None else f"{k.current}, {r['object']}"
    return sorted(keys.values(), key=lambda k: (-k.rows, k.label))


def cmd_keys(args: argparse.Namespace) -> int:
    with open_engine(args) as eng:
        keys = ledger_keys(eng, space_of(args))
    if args.filter:
        want = fold(args.filter).split()
        keys = [k for k in keys if all(w in k.words for w in want)]
    if args.json:
        emit_json([{"subject": k.subject, "relation": k.relation, "context": k.context or None,
                    "space": k.space, "rows": k.rows, "current": k.current} for k in keys])
        return 0
    if not keys:
        print(f"no keys match {args.filter!r}" if args.filter else "the ledger holds no keys yet")
    width = min(max([len(k.label) for k in keys] + [0]), 60)
    for k in keys:
        now = f", now {k.current}" if k.current is not None else ", no current value"
        print(f"{k.label:<{width}}  {k.rows} row{'s' if k.rows != 1 else ''}{now}")
    return 0


def resolve_key(eng: Any, args: argparse.Namespace, space: str | None) -> Key:
    """The one key the typed words name (in the history's space), or a CliError that lists
    the candidates ("did you mean")."""
    import difflib

    keys = ledger_keys(eng, space or "global", history_only=True)
    subject, relation = fold(args.subject), fold(args.relation or "")
    ctx = fold(args.context or "")
    if ctx:
        keys = [k for k in keys if fold(k.context) == ctx]
    typed = f"{subject} {relation}".strip()
    # a renamed entity asked by one of its names ("checkout" after "renamed the orders
    # service to checkout"): the keys kept under any of them
    names = eng.subject_names(args.subject, space or "global")
    entity = [k for k in keys if k.subject_norm in names] if len(names) > 1 else []
    if entity and relation:
        entity = ([k for k in entity if fold(k.relation) == relation]
                  or [k for k in entity
                      if all(w in fold(f"{k.relation} {k.context}") for w in relation.split())])
    exact = [k for k in keys if fold(f"{k.subject} {k.relation}") == typed]
    words = typed.split()
    matches = entity or exact or [k for k in keys if all(w in k.words for w in words)]
    if len(matches) == 1:
        return matches[0]
    if not matches and relation:  # the words split differently: "auth" "service port"
        matches = [k for k in keys if fold(k.subject).find(subject) >= 0
                   and relation in fold(f"{k.relation} {k.context}")]
        if len(matches) == 1:
            return matches[0]
    what = f"({args.subject}, {args.relation})" if args.relation else repr(args.subject)
    if matches:
        shown = "\n".join(f"  {k.command()}" for k in matches[:12])
        more = f"\n  … and {len(matches) - 12} more (memstrata keys)" if len(matches) > 12 else ""
        raise CliError(f"{what} matches {len(matches)} keys; did you mean one of:\n"
                       f"{shown}{more}")
    close = difflib.get_close_matches(typed, [k.words for k in keys], n=5, cutoff=0.5)
    near = [k for c in close for k in keys if k.words == c][:5]
    where = f" in the space {space}" if space else ""
    if near:
        raise CliError(f"no history for {what}{where}; did you mean:\n"
                       + "\n".join(f"  {k.command()}" for k in near))
    raise NoHistory(f"no history for {what}{where} (memstrata keys lists the keys)")


class NoHistory(Exception):
    """Nothing anywhere near the typed key: exit status 1, as for an ambiguous key."""


def cmd_history(args: argparse.Namespace) -> int:
    space = space_of(args)
    with open_engine(args) as eng:
        chain = (eng.history(args.subject, args.relation, args.context, space)
                 if args.relation else [])
        if not chain:
            try:
                key = resolve_key(eng, args, space)
            except NoHistory as e:
                if args.json:
                    emit_json([])
                raise CliError(str(e)) from None
            if not args.json:
                print(f"(reading {key.label})", file=sys.stderr)
            chain = eng.history(key.subject, key.relation, key.context or None, key.space)
    if args.json:
        emit_json([a.to_dict() for a in chain])
        return 0
    if not chain:
        where = f" in the space {space}" if space else ""
        raise CliError(f"no history for ({args.subject}, {args.relation}){where}")
    several = len({a.author for a in chain if a.author}) > 1  # who changed it, when it matters
    for a in chain:
        print(fmt_row(a, author=several))
    return 0


COMMANDS = {"history": cmd_history, "keys": cmd_keys}
