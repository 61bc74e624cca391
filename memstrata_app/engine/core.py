"""MemoryEngine: the public facade over ledger, write path and read path.

SIGNATURES ONLY for now -- the implementation lands in the next commits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from .metrics import Metrics
from .types import Assertion, AssertionId, Cardinality, Hit, IngestAction, IngestResult, LedgerFilter

Progress = Callable[[int, int], None]  # (done, total)


class MemoryEngine:
    metrics: Metrics
    path: Path

    @classmethod
    def open(cls, path: str | Path, embedder: Any = "auto", *, quarantine_threshold: float = 0.6,
             ollama_host: str | None = None) -> MemoryEngine:
        """Open (creating if needed) the ledger at `path` (a file; ':memory:' not supported)."""
        raise NotImplementedError

    # --- contract -------------------------------------------------------------------------
    def ingest(self, text: str, source: str = "api", at: datetime | None = None) -> IngestResult:
        raise NotImplementedError

    def retrieve(self, query: str, k: int = 5, as_of: datetime | None = None) -> list[Hit]:
        raise NotImplementedError

    def history(self, subject: str, relation: str) -> list[Assertion]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> MemoryEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- beyond the contract (GUI, endpoint, CLI, bench) -------------------------------------
    def ingest_many(self, items: Iterable[str | tuple[str, datetime | None]], source: str = "import",
                    progress: Progress | None = None, cancel: threading.Event | None = None
                    ) -> list[IngestResult]:
        raise NotImplementedError

    def get(self, assertion_id: int) -> Assertion:
        raise NotImplementedError

    def list_assertions(self, flt: LedgerFilter | None = None, offset: int = 0, limit: int = 200,
                        order: str = "id", descending: bool = True) -> list[Assertion]:
        raise NotImplementedError

    def count_assertions(self, flt: LedgerFilter | None = None) -> int:
        raise NotImplementedError

    def stats(self) -> dict[str, Any]:
        raise NotImplementedError

    def time_range(self) -> tuple[datetime, datetime] | None:
        raise NotImplementedError

    def keys(self, search: str | None = None, limit: int = 100) -> list[tuple[str, str]]:
        raise NotImplementedError

    def quarantined(self) -> list[Assertion]:
        raise NotImplementedError

    def would_retire(self, assertion_id: int) -> list[Assertion]:
        raise NotImplementedError

    def approve(self, assertion_id: int, subject: str | None = None, relation: str | None = None,
                object: str | None = None) -> IngestAction:
        raise NotImplementedError

    def reject(self, assertion_id: int) -> Assertion:
        raise NotImplementedError

    def forget(self, assertion_id: int, reason: str = "forgotten") -> Assertion:
        raise NotImplementedError

    def export(self) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def import_records(self, records: Iterable[dict[str, Any]]) -> int:
        raise NotImplementedError

    def reindex(self, embedder: Any, progress: Progress | None = None,
                cancel: threading.Event | None = None) -> int:
        raise NotImplementedError

    def vocabulary(self) -> dict[str, Cardinality]:
        raise NotImplementedError

    def set_cardinality(self, relation: str, cardinality: Cardinality | str) -> None:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load the embedder now (call from a background thread)."""
        raise NotImplementedError


_ = AssertionId
