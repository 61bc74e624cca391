"""Erasure: a sentence's text and vector gone from the ledger file, and the flags on rows.

`forget` retracts a fact and keeps its sentence for audit. `purge` is for what must not stay
at all (a secret the detector missed, personal data): the sentence, its triple and its
vector are overwritten in the ledger file itself (SQLite's secure_delete zeroes the freed
bytes; a TRUNCATE checkpoint then empties the write-ahead log that still held the old
pages). What remains is a tombstone: the id, key, relation, context, interval, times and
the reason, so the key's history still shows that a value was there and was purged.
`redact` erases a sentence and its value but keeps the row's place in its chain. An erased
sentence is never stored again (`erased_hash`). Rows on legal hold are refused (holds.py).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

import apsw
import numpy as np

from ..types import Assertion, EngineError, NotFound
from . import terms
from .holds import held
from .journal import forget_erased
from .sqlite import connect
from .sqlite_errors import KNOWN_ERRORS, scalar
from .transaction import IndexUpdate, WriteContext
from .versions import record_version

if TYPE_CHECKING:
    from .ledger import Ledger

log = logging.getLogger(__name__)

PURGED_HASH = "purged"  # in text_hash: never a hex digest, so never a duplicate of anything
REDACTED_HASH = "redacted"  # in text_hash: never a digest, so never a duplicate
SECRET = "secret"  # the flag on a row whose sentence had a secret replaced
PURGED = "purged"
FLAGS_TABLE = (
    "CREATE TABLE IF NOT EXISTS flags ("
    " assertion_id INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"  # secret | purged
    " at REAL NOT NULL,"
    " PRIMARY KEY (assertion_id, kind)) WITHOUT ROWID"
)


def flag_rows(conn: apsw.Connection, ids: Iterable[int], kind: str, at: float) -> None:
    """Mark rows (inside the caller's write transaction); the table is made on first use."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    if not ids:
        return
    conn.execute(FLAGS_TABLE)
    for i in ids:
        conn.execute("INSERT OR IGNORE INTO flags(assertion_id, kind, at) VALUES (?, ?, ?)",
                     (i, kind, at))


def is_purged(a: Assertion) -> bool:
    return a.text == "" and (a.reason or "").startswith("purged")


def erased_hash(ctx: WriteContext, text_hash: str) -> str | None:
    """How a sentence was erased ("purged", "redacted"), if it was: it is not stored again."""
    r = ctx.q("SELECT how FROM erased WHERE text_hash=?", (text_hash,))
    return str(r[0][0]) if r else None


def mark_erased(ctx: WriteContext, text_hash: str, how: str) -> None:
    if text_hash and text_hash not in ("purged", REDACTED_HASH):
        ctx.conn.execute("INSERT OR IGNORE INTO erased(text_hash, at, how) VALUES (?, ?, ?)",
                         (text_hash, ctx.now, how))


def purge(ledger: Ledger, assertion_id: int, why: str) -> list[int]:
    """Erase every row of the row's sentence (one writer job), then empty the WAL; the ids
    of the tombstones. `why`: the reason the tombstones keep ("purged: …")."""

    def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
        ctx = ledger.context(conn, {})
        row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (assertion_id,))
        if not row:
            raise NotFound(f"no assertion with id {assertion_id}")
        if row[0][0] == PURGED_HASH:
            raise EngineError(f"assertion {assertion_id} is already purged")
        ids = sorted({assertion_id, *(r[0] for r in ctx.q(
            "SELECT id FROM assertions WHERE text_hash=?", (row[0][0],)))})
        for rid in ids:
            h = held(ctx, rid)
            if h:
                raise EngineError(f"cannot purge #{rid}: {h}")
        mark_erased(ctx, row[0][0], "purged")
        secure = int(scalar(conn, "PRAGMA secure_delete"))
        conn.execute("PRAGMA secure_delete=ON")  # freed bytes are zeroed, not left behind
        try:
            for rid in ids:
                _purge_row(ctx, rid, why)
            marks = ",".join("?" * len(ids))
            # a predecessor's reason names its successor's value: "superseded by #7: Dana"
            conn.execute(
                f"UPDATE assertions SET reason='superseded by #' || superseded_by ||"
                f" ' (purged)' WHERE superseded_by IN ({marks})"
                " AND reason LIKE 'superseded by #%:%'", ids)
            forget_erased(ctx, ids)  # the action log's copies of their values
            flag_rows(conn, ids, PURGED, ctx.now)
            terms.compact(conn, ledger.backend)
        finally:
            conn.execute(f"PRAGMA secure_delete={secure}")
        log.info("purged %d row(s): #%s", len(ids), ", #".join(map(str, ids)))
        return ids, ctx, ledger.bump(conn)

    ids: list[int] = ledger.run_write(job)
    if not checkpoint(ledger):
        log.warning("purge: the write-ahead log is still in use; it is emptied at the next "
                    "checkpoint (at the latest when the ledger is closed)")
    return ids


def redact(ledger: Ledger, assertion_id: int, why: str) -> list[int]:
    """Erase the sentence, value and vector of every row of the row's sentence and keep the
    rest (one writer job), then checkpoint; the ids."""

    def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
        ctx = ledger.context(conn, {})
        row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (int(assertion_id),))
        if not row:
            raise NotFound(f"no assertion with id {assertion_id}")
        if row[0][0] in (REDACTED_HASH, "purged"):
            raise EngineError(f"assertion {assertion_id} is already erased")
        ids = sorted({int(assertion_id), *(int(r[0]) for r in ctx.q(
            "SELECT id FROM assertions WHERE text_hash=?", (row[0][0],)))})
        for rid in ids:
            h = held(ctx, rid)
            if h:
                raise EngineError(f"cannot redact #{rid}: {h}")
        mark_erased(ctx, row[0][0], "redacted")
        secure = conn.execute("PRAGMA secure_delete").fetchone()
        conn.execute("PRAGMA secure_delete=ON")
        dim = _dim(conn)
        try:
            for rid in ids:
                vf, vt, st, label = ctx.q("SELECT valid_from, valid_to, status, label FROM"
                                          " assertions WHERE id=?", (rid,))[0]
                conn.execute(
                    "UPDATE assertions SET text='', text_hash=?, object=NULL,"
                    " object_norm=NULL, reason=? WHERE id=?", (REDACTED_HASH, why, rid))
                conn.execute("DELETE FROM vectors WHERE rowid=?", (rid,))
                record_version(ctx, rid, st, vf, vt, label)
                ctx.updates.append(IndexUpdate(rid, vf, vt, False,
                                               np.zeros(dim, dtype=np.float32)))
            marks = ",".join("?" * len(ids))
            conn.execute(  # a predecessor's reason names the erased value
                f"UPDATE assertions SET reason='superseded by #' || superseded_by ||"
                f" ' (redacted)' WHERE superseded_by IN ({marks})"
                " AND reason LIKE 'superseded by #%:%'", ids)
            forget_erased(ctx, ids)  # the action log's copies of their values
            terms.compact(conn, ledger.backend)
        finally:
            if secure is not None:
                conn.execute(f"PRAGMA secure_delete={int(secure[0])}")
        flag_rows(conn, ids, "redacted", ctx.now)
        return ids, ctx, ledger.bump(conn)

    ids: list[int] = ledger.run_write(job)
    checkpoint(ledger)
    return ids


def checkpoint(ledger: Ledger, attempts: int = 20) -> bool:
    """Copy the write-ahead log into the ledger file and truncate it to zero bytes, so
    no old page stays in it. False when readers kept it busy through every attempt.
    On a team ledger (PostgreSQL): VACUUM the tables, so the purged rows' old versions
    are removed from them (PostgreSQL's own WAL and backups are the server's to keep)."""
    if isinstance(ledger.path, str):
        from .pg import vacuum

        return vacuum(ledger.readers)  # type: ignore[arg-type]
    if ledger.read_only:  # e.g. stopped by a -shm fault: a new connection would map it
        return False
    try:
        conn = connect(ledger.path)
    except EngineError as e:
        log.warning("checkpoint: %s", e)
        return False
    try:
        for i in range(attempts):
            try:
                busy = scalar(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
            except KNOWN_ERRORS as e:
                log.info("checkpoint deferred: %s", e)
                busy = 1
            if not busy:
                return True
            time.sleep(min(0.05 * (i + 1), 0.5))
        return False
    finally:
        with contextlib.suppress(apsw.Error):
            conn.close()


def flags(ledger: Ledger, assertion_id: int) -> list[str]:
    """What a row is flagged for: "secret", "purged", "redacted"."""
    q = ledger.readers.query
    if not q("SELECT 1 FROM sqlite_master WHERE type='table' AND name='flags'"):
        return []
    return [r[0] for r in q("SELECT kind FROM flags WHERE assertion_id=? ORDER BY kind",
                            (int(assertion_id),))]


def flagged(ledger: Ledger, kind: str = SECRET) -> list[int]:
    """Ids of the rows flagged `kind`, oldest first."""
    q = ledger.readers.query
    if not q("SELECT 1 FROM sqlite_master WHERE type='table' AND name='flags'"):
        return []
    return [int(r[0]) for r in q(
        "SELECT assertion_id FROM flags WHERE kind=? ORDER BY assertion_id", (kind,))]


def _purge_row(ctx: WriteContext, rid: int, why: str) -> None:
    vf, vt = ctx.q("SELECT valid_from, valid_to FROM assertions WHERE id=?", (rid,))[0]
    end = max(vf, ctx.now) if vt is None else vt  # an open row ends now
    ctx.conn.execute(
        "UPDATE assertions SET text='', text_hash=?, subject=NULL, object=NULL,"
        " subject_norm=NULL, object_norm=NULL, status='retracted', valid_to=?,"
        " retired_at=COALESCE(retired_at, ?), reason=? WHERE id=?",
        (PURGED_HASH, end, ctx.now, why, rid))
    dim = _dim(ctx.conn)
    if dim:
        with contextlib.suppress(apsw.SQLError):  # zero it first, whatever vec0 does on delete
            ctx.conn.execute("UPDATE vectors SET embedding=? WHERE rowid=?",
                             (bytes(4 * dim), rid))
    ctx.conn.execute("DELETE FROM vectors WHERE rowid=?", (rid,))
    record_version(ctx, rid, "retracted", vf, end, "normal")
    # the in-memory index forgets it too: not retrievable, its vector zeroed
    ctx.updates.append(IndexUpdate(rid, vf, end, False,
                                   np.zeros(dim, dtype=np.float32) if dim else None))


def _dim(conn: apsw.Connection) -> int:
    r = conn.execute("SELECT v FROM meta WHERE k='dim'").fetchone()
    return int(r[0]) if r else 0
