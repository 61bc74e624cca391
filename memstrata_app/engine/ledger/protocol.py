"""The one protocol both stores keep: a writer (one thread, jobs in, futures out) and a pool
of readers. SQLite (sqlite.py) and PostgreSQL (pg.py) implement it; everything above the
ledger's stores is written against it, in SQLite's SQL (pg_sql.py translates)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Readers(Protocol):
    """Read connections, one per thread."""

    def conn(self) -> Any: ...

    def query(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...


class Writer(Protocol):
    """The ledger's one writer: each job runs in one transaction on the writer's thread;
    `before_commit(conn, result)` runs inside it, just before COMMIT."""

    @property
    def read_only(self) -> bool: ...  # opened so, or stopped since (a -shm fault: health.py)

    # True where other clients write the same ledger and a change feed says what they
    # changed (PostgreSQL); False where another process's write means a reload (SQLite)
    incremental: bool

    def check(self) -> None: ...

    def submit(self, job: Callable[[Any], T],
               before_commit: Callable[[Any, T], None] | None = None) -> Future[T]: ...

    def run(self, job: Callable[[Any], T],
            before_commit: Callable[[Any, T], None] | None = None) -> T: ...

    def record_changes(self, conn: Any, ids: Sequence[int], gen: int) -> None: ...

    def close(self) -> None: ...
