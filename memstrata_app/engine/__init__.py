"""The Qt-free, HTTP-free memory engine: a bi-temporal ledger of assertions.

Public facade: `MemoryEngine` (see DESIGN.md, "Engine contract").
"""

from .core import MemoryEngine
from .metrics import Metrics
from .types import (
    Action,
    Assertion,
    AssertionId,
    AuditEntry,
    Cancelled,
    Cardinality,
    EmbedderMismatch,
    EngineError,
    Extraction,
    Hit,
    IngestAction,
    IngestResult,
    LedgerFilter,
    NotFound,
    Skipped,
    Status,
    StoreCorrupt,
    StoreLocked,
    StoreReadOnly,
    TurnRecall,
    UndoRefused,
    UndoResult,
)

__all__ = [
    "Action", "Assertion", "AssertionId", "AuditEntry", "Cancelled", "Cardinality",
    "EmbedderMismatch", "EngineError", "Extraction", "Hit", "IngestAction", "IngestResult",
    "LedgerFilter", "MemoryEngine", "Metrics", "NotFound", "Skipped", "Status", "StoreCorrupt",
    "StoreLocked", "StoreReadOnly", "TurnRecall", "UndoRefused", "UndoResult",
]
