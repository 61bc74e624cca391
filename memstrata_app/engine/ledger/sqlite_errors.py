"""SQLite's errors as the ledger's own: what happened and what to do, in words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from ..types import EngineError, StoreCorrupt, StoreLocked, StoreReadOnly


def corrupt_message(path: Path, detail: str) -> str:
    return (
        f"the ledger {path} is damaged (SQLite reports: {detail}); writes are refused so the "
        "damage does not spread. Restore it from a backup, or save what can still be read with "
        f"`memstrata --db {path} export --jsonl -o rows.jsonl` and load that into a new ledger "
        "(`memstrata --db NEW.db import rows.jsonl`), or point --db at another file"
    )


def read_only_message(path: Path, reason: str) -> str:
    return (
        f"the ledger at {path} is read-only ({reason}): writes are disabled; reads (query, "
        "export, stats) still work. To write, make the file and its folder writable, or "
        "point --db at another file"
    )


def translate(e: Exception, path: Path) -> EngineError:
    """Turn SQLite's errors into the known, user-facing ones."""
    if isinstance(e, apsw.BusyError | apsw.LockedError):
        return StoreLocked(
            f"the ledger {path} is locked by another process; close it or try again shortly"
        )
    if isinstance(e, apsw.NotADBError):
        return StoreCorrupt(
            f"the ledger {path} is not a readable MemStrata database ({e}); "
            "restore it from a backup or point --db at another file"
        )
    if isinstance(e, apsw.CorruptError):
        return StoreCorrupt(corrupt_message(path, str(e)))
    if isinstance(e, apsw.ReadOnlyError):
        reason = f"SQLite: {e}"
        return StoreReadOnly(read_only_message(path, reason), reason)
    if isinstance(e, apsw.CantOpenError):
        return EngineError(f"cannot open the ledger {path} ({e}); check that the file and its "
                           "folder exist and are readable")
    if isinstance(e, apsw.IOError | apsw.FullError):
        return EngineError(f"cannot write the ledger {path}: {e}")
    return EngineError(f"ledger error on {path}: {e}")


KNOWN_ERRORS = (
    apsw.BusyError, apsw.LockedError, apsw.CorruptError, apsw.NotADBError, apsw.ReadOnlyError,
    apsw.CantOpenError, apsw.IOError, apsw.FullError,
)


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row of a query that always returns one."""
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise EngineError(f"the ledger is missing data the query expects: {sql}")
    return row[0]
