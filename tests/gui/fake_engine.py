"""An in-memory stand-in for MemoryEngine's listing calls: 100k-row paging tests without SQLite."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from memstrata_app.engine import Assertion, AssertionId, LedgerFilter, Metrics, Status

BASE = datetime(2026, 1, 1, tzinfo=UTC)


def make_rows(n: int) -> list[Assertion]:
    """`n` rows: service ports over time, every tenth a superseded older value."""
    rows = []
    for i in range(1, n + 1):
        superseded = i % 10 == 0
        at = BASE + timedelta(minutes=i)
        rows.append(Assertion(
            id=AssertionId(i), kind="assertion", subject=f"service-{i % 997}", relation="port",
            object=str(8000 + i % 1000), subject_norm=None, relation_norm=None, object_norm=None,
            key=f"service-{i % 997}|port",
            text=f"service-{i % 997} listens on port {8000 + i % 1000}.",
            source="import" if i % 3 else "app", method="rule:port", confidence=0.9,
            status=Status.SUPERSEDED if superseded else Status.ACTIVE, recorded_at=at,
            retired_at=at if superseded else None, valid_from=at,
            valid_to=at + timedelta(minutes=5) if superseded else None,
            superseded_by=None, reason=None, reinforced=1))
    return rows


class FakeEngine:
    """Filtering, ordering and paging like the engine, over a list; counts its calls."""

    def __init__(self, rows: list[Assertion]):
        self.rows = rows
        self.metrics = Metrics()
        self.calls: list[tuple[str, int, int]] = []
        self.closed = False
        self.thread: threading.Thread | None = None

    def _match(self, a: Assertion, f: LedgerFilter | None) -> bool:
        if f is None:
            return True
        if f.statuses and a.status not in f.statuses:
            return False
        if f.source and a.source != f.source:
            return False
        if f.relation and a.relation != f.relation:
            return False
        if f.search and f.search.lower() not in a.text.lower():
            return False
        if f.space and a.space != f.space:
            return False
        return not (f.as_of and not a.valid_at(f.as_of))

    def list_assertions(self, flt: LedgerFilter | None = None, offset: int = 0, limit: int = 200,
                        order: str = "id", descending: bool = True) -> list[Assertion]:
        self.thread = threading.current_thread()
        self.calls.append(("list", offset, limit))
        rows = [a for a in self.rows if self._match(a, flt)]
        field = order if order != "status" else "id"
        rows.sort(key=lambda a: getattr(a, field), reverse=descending)
        return rows[offset:offset + limit]

    def count_assertions(self, flt: LedgerFilter | None = None) -> int:
        return sum(1 for a in self.rows if self._match(a, flt))

    def get(self, assertion_id: int) -> Assertion:
        return self.rows[assertion_id - 1]

    def history(self, subject: str, relation: str, context: str | None = None,
                space: str | None = None) -> list[Assertion]:
        return [a for a in self.rows if a.subject == subject and a.relation == relation]

    def stats(self) -> dict[str, Any]:
        return {"rows": len(self.rows), "sources": {"app": 1, "import": 2},
                "relations": {"port": 1}}

    def vocabulary(self) -> dict[str, Any]:
        return {}

    def keys(self, search: str | None = None, limit: int = 100) -> list[tuple[str, str]]:
        return [(f"service-{i}", "port") for i in range(min(limit, 20))]

    def spaces(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for a in self.rows:
            c = out.setdefault(a.space, {"total": 0, "current": 0})
            c["total"] += 1
            c["current"] += a.status in (Status.ACTIVE, Status.PLAIN)
        return out

    def quarantined(self) -> list[Assertion]:
        return []

    def time_range(self) -> tuple[datetime, datetime] | None:
        return (self.rows[0].valid_from, self.rows[-1].valid_from) if self.rows else None

    def warm_up(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True
