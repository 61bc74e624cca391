"""How commands print: `--json` output, rows and times for people, progress on stderr,
and what the write path understood."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO


def emit_json(obj: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    json.dump(obj, out, indent=2, ensure_ascii=False)
    out.write("\n")


def fmt_time(t: Any) -> str:
    return "…" if t is None else t.strftime("%Y-%m-%d %H:%M")


def fmt_iso(t: str | None) -> str:
    from datetime import datetime

    return fmt_time(None if t is None else datetime.fromisoformat(t))


def fmt_row(a: Any, author: bool = False) -> str:
    triple = (f"({a.subject} · {a.relation} · {a.object})" if a.subject else "(plain fact)")
    where = f"  [{a.space}]" if getattr(a, "space", "global") != "global" else ""
    who = f"  by {a.author}" if author and getattr(a, "author", None) else ""
    return (f"#{a.id:<6} {a.status.value:<11} {fmt_time(a.valid_from)} → {fmt_time(a.valid_to)}"
            f"  {triple}{where}{who}\n        “{a.text}”")


def progress_bar(label: str) -> Any:
    def show(done: int, total: int) -> None:
        width = 30
        fill = int(width * done / total) if total else width
        sys.stderr.write(f"\r{label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        sys.stderr.flush()

    return show


def understood() -> Any:
    from .. import understood as u

    return u


def print_understood(res: Any, text: str, *, dry_run: bool = False,
                     old_values: dict[int, str | None] | None = None,
                     judged: bool = False) -> None:
    """Each sentence quoted once, then what became of it (see `understood.render`); with
    `judged`, each candidate the update judge read and what it decided."""
    u = understood()
    outcomes = u.by_sentence(res, text)
    if not outcomes:
        print("no statements found (questions and code blocks are not stored)")
    for line in u.render(outcomes, dry_run=dry_run, old_values=old_values, judged=judged):
        print(line)


def tally(results: Any) -> str:
    """What many statements came to, in one line: "2 superseded, 5 novel, 1 notes, …"."""
    c = understood().counts(results)
    parts = [f"{c.get(k, 0)} {k}" for k in ("superseded", "novel")]
    parts.append(f"{c.get('prose', 0)} notes")
    parts += [f"{c[k]} {k}" for k in ("history", "reinforced", "retracted", "quarantined",
                                       "to review", "duplicate", "refused") if c.get(k)]
    parts.append(f"{c.get('skipped', 0)} skipped")
    return ", ".join(parts)
