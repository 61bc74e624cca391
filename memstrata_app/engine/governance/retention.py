"""Retention: rows stated by some authority (with some label) expire a number of days after
they were recorded unless confirmed; then they are retired, or purged (docs/GOVERNANCE.md).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

import apsw

from ..ledger.ledger import Ledger
from ..ledger.transaction import WriteContext

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class RetentionRule:
    """Rows stated by `authority` ("*": any) with `label` ("*": any) expire `days` after
    they were recorded unless confirmed; then they are retired, or purged."""

    authority: str
    label: str
    days: float
    action: str = "retire"  # or "purge"

    def matches(self, authority: str, label: str) -> bool:
        return self.authority in ("*", authority) and self.label in ("*", label)


_RULE = re.compile(r"^\s*(?P<a>[\w*]+)(?:/(?P<l>[\w*]+))?\s*=\s*(?P<n>\d+(?:\.\d+)?)\s*d?"
                   r"(?:\s*:\s*(?P<act>retire|purge))?\s*$", re.I)


def parse_retention(text: str) -> tuple[RetentionRule, ...]:
    """ "assistant=90d, tool/sensitive=30d:purge" as rules (first match wins); "" for none."""
    rules = []
    for part in (p for p in (text or "").split(",") if p.strip()):
        m = _RULE.match(part)
        if not m:
            raise ValueError(f"{part.strip()!r} is not a retention rule: write AUTHORITY[/LABEL]"
                             "=DAYSd[:retire|purge], e.g. assistant=90d")
        rules.append(RetentionRule(m.group("a").lower(), (m.group("l") or "*").lower(),
                                   float(m.group("n")), (m.group("act") or "retire").lower()))
    return tuple(rules)


def expires_for(rules: Sequence[RetentionRule], authority: str, label: str,
                now: float | None = None) -> float | None:
    """When a row stated by `authority` with `label` expires under `rules` (None: never)."""
    for rule in rules:
        if rule.matches(authority, label):
            return (time.time() if now is None else now) + rule.days * DAY
    return None


def rule_action(rules: Sequence[RetentionRule], authority: str | None,
                label: str | None) -> str:
    for rule in rules:
        if rule.matches(authority or "user", label or "normal"):
            return rule.action
    return "retire"


def due(ledger: Ledger, at: float) -> list[tuple[int, str | None, str | None]]:
    """(id, authority, label) of the unconfirmed rows past their expiry at `at`, on no hold."""
    return [(int(r[0]), r[1], r[2]) for r in ledger.readers.query(
        "SELECT a.id, a.authority, a.label FROM assertions a WHERE a.expires_at <= ?"
        " AND a.hold IS NULL AND a.status IN ('active', 'plain', 'quarantined')"
        " AND (a.key IS NULL OR a.key NOT IN (SELECT key FROM key_holds)) ORDER BY a.id",
        (at,))]


def retire(ledger: Ledger, ids: list[int], at: float) -> list[int]:
    """Retire expired rows (one writer job): a current one is retracted, one waiting for
    review rejected; the ids done (a row held or changed meanwhile is left)."""

    def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
        ctx = ledger.context(conn, {})
        out = []
        for rid in ids:
            r = ctx.q("SELECT valid_from, valid_to, status, authority, label, hold"
                      " FROM assertions WHERE id=?", (rid,))[0]
            if r[5] is not None or r[2] not in ("active", "plain", "quarantined"):
                continue
            end = at if r[1] is None else min(r[1], at)
            status = "rejected" if r[2] == "quarantined" else "retracted"
            conn.execute(
                "UPDATE assertions SET status=?, valid_to=?, retired_at=?, reason=?"
                " WHERE id=?", (status, max(end, r[0]), ctx.now,
                                f"expired: retention rule for {r[3]} facts", rid))
            ctx.touch(rid)
            out.append(rid)
        return out, ctx, ledger.bump(conn)

    return list(ledger.run_write(job))
