"""Governance services over one ledger (docs/GOVERNANCE.md): the authority order and the
retention rules in force, legal holds, labels, expiry, erasure (purge, redaction) and the
audit trail. The ledger asks it, while it writes, for each row's authority and expiry
(`authority_of`, `expiry`: the ledger's RowPolicy)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from datetime import datetime
from typing import Any

import apsw

from ..ledger import erasure, holds
from ..ledger.ledger import Ledger
from ..ledger.transaction import WriteContext
from ..timeutil import to_ts, to_utc
from ..types import Assertion, AuditEntry, EngineError, UndoResult
from . import audit, retention
from .authority import DEFAULT_AUTHORITY_ORDER, authority_of
from .labels import checked_label, relabel
from .privacy import clean_reason, erasure_reason
from .retention import RetentionRule


class Governance:
    """Who may retire whose values, how long unconfirmed rows are kept, and the operations
    that hold, relabel, expire, erase and audit rows."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        # who may retire whose values, and how long unconfirmed rows are kept
        self.authority_order: tuple[str, ...] = DEFAULT_AUTHORITY_ORDER
        self.retention: tuple[RetentionRule, ...] = ()

    # --- the ledger's policy while it writes ---------------------------------------------------
    @staticmethod
    def authority_of(source: str | None) -> str:
        return authority_of(source)

    def expiry(self, now: float) -> Callable[[str, str], float | None] | None:
        """When a row written at `now` expires, by (authority, label); None: no rules."""
        if not self.retention:
            return None
        return lambda auth, label: self.expires_for(auth, label, now)

    def expires_for(self, authority: str, label: str, now: float | None = None
                    ) -> float | None:
        return retention.expires_for(self.retention, authority, label, now)

    # --- legal hold ----------------------------------------------------------------------------
    def hold(self, assertion_id: int | None = None, key: str | None = None,
             reason: str = "legal hold") -> None:
        why = clean_reason(reason, "legal hold", 200) or "legal hold"
        holds.hold(self.ledger, assertion_id, key, why)

    def release_hold(self, assertion_id: int | None = None, key: str | None = None) -> None:
        holds.release(self.ledger, assertion_id, key)

    def holds(self) -> list[dict[str, Any]]:
        return holds.holds(self.ledger)

    # --- labels --------------------------------------------------------------------------------
    def set_label(self, assertion_id: int, label: str) -> Assertion:
        lab = checked_label(label)
        ledger = self.ledger

        def job(conn: apsw.Connection) -> tuple[None, WriteContext, int]:
            ctx = ledger.context(conn, {})
            relabel(ctx, assertion_id, lab)
            return None, ctx, ledger.bump(conn)

        ledger.run_write(job)
        return ledger.get(assertion_id)

    # --- retention -----------------------------------------------------------------------------
    def expire(self, now: datetime | None = None) -> list[tuple[int, str]]:
        at = to_ts(to_utc(now)) if now is not None else time.time()
        assert at is not None
        due = retention.due(self.ledger, at)
        if not due:
            return []
        purge = [rid for rid, auth, label in due
                 if retention.rule_action(self.retention, auth, label) == "purge"]
        retire = [rid for rid, _, _ in due if rid not in purge]
        done: list[tuple[int, str]] = []
        if retire:
            done += [(i, "retired") for i in retention.retire(self.ledger, retire, at)]
        for rid in purge:
            try:
                self.purge(rid, reason="retention rule")
            except EngineError:
                continue  # purged with a sibling row of its sentence, or held meanwhile
            done.append((rid, "purged"))
        return done

    # --- erasure -------------------------------------------------------------------------------
    def purge(self, assertion_id: int, reason: str = "purged") -> list[Assertion]:
        assertion_id = int(assertion_id)
        a = self.ledger.get(assertion_id)
        if erasure.is_purged(a):
            raise EngineError(f"assertion {assertion_id} is already purged")
        ids = erasure.purge(self.ledger, assertion_id, erasure_reason("purged", reason))
        return [self.ledger.get(i) for i in ids]

    def redact(self, assertion_id: int, reason: str = "redacted") -> list[Assertion]:
        ids = erasure.redact(self.ledger, assertion_id, erasure_reason("redacted", reason))
        return [self.ledger.get(i) for i in ids]

    def checkpoint(self, attempts: int = 20) -> bool:
        return erasure.checkpoint(self.ledger, attempts)

    def flags(self, assertion_id: int) -> list[str]:
        return erasure.flags(self.ledger, assertion_id)

    def flagged(self, kind: str = erasure.SECRET) -> list[int]:
        return erasure.flagged(self.ledger, kind)

    # --- the audit trail -----------------------------------------------------------------------
    def log_injection(self, api: str, query: str, injected: Sequence[tuple[int, float]],
                      filtered: Sequence[tuple[int, float, int | None]],
                      settings: dict[str, Any], model: str | None = None,
                      space: str | None = None, tool: str | None = None,
                      keep_days: float | None = None, wait: bool = True) -> int | None:
        fut: Future[Any] = audit.log_injection(self.ledger, api, query, injected, filtered,
                                               settings, model, space, tool, keep_days)
        if not wait:
            fut.add_done_callback(lambda f: f.exception())  # a failed entry is only logged
            return None
        return int(fut.result())

    def injections(self, since: datetime | None = None, until: datetime | None = None,
                   limit: int = 100) -> list[dict[str, Any]]:
        return audit.injections(self.ledger, since, until, limit)

    def injection(self, entry_id: int) -> dict[str, Any]:
        return audit.injection(self.ledger, entry_id)

    def contests(self, assertion_id: int | None = None) -> list[dict[str, Any]]:
        return audit.contests(self.ledger, assertion_id)

    def actions(self, limit: int = 100) -> list[AuditEntry]:
        return audit.actions(self.ledger, limit)

    def undoable(self, limit: int = 20, everyone: bool = False) -> list[AuditEntry]:
        return audit.undoable(self.ledger, limit, None if everyone else self.ledger.author)

    def undo(self, entry_id: int | None = None) -> UndoResult:
        return audit.undo(self.ledger, entry_id)
