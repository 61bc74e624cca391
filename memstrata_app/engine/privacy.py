"""Secrets kept out of the ledger, flagged rows, and purge: text and vector gone from the file.

`forget` retracts a fact and keeps its sentence for audit. `purge` is for what must not stay
at all (a secret the detector missed, personal data): the sentence, its triple and its
vector are overwritten in the ledger file itself (SQLite's secure_delete zeroes the freed
bytes; a TRUNCATE checkpoint then empties the write-ahead log that still held the old
pages). What remains is a tombstone: the id, key, relation, context, interval, times and
the reason, so the key's history still shows that a value was there and was purged.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from . import lexical
from .governance import record_version
from .index import IndexUpdate
from .secrets import PLACEHOLDER_MARK, redact
from .store import KNOWN_ERRORS, connect, scalar
from .types import Assertion, EngineError, NotFound

if TYPE_CHECKING:
    from pathlib import Path

    from .store import Readers
    from .types import Cardinality
    from .write import WriteContext

log = logging.getLogger(__name__)

PURGED_HASH = "purged"  # in text_hash: never a hex digest, so never a duplicate of anything
SECRET = "secret"  # the flag on a row whose sentence had a secret replaced
PURGED = "purged"
FLAGS_TABLE = (
    "CREATE TABLE IF NOT EXISTS flags ("
    " assertion_id INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"  # secret | purged
    " at REAL NOT NULL,"
    " PRIMARY KEY (assertion_id, kind)) WITHOUT ROWID"
)
# Text-bearing fields of an exported row (import redacts them like ingest does)
_RECORD_TEXT = ("text", "subject", "object", "subject_norm", "object_norm", "key", "reason",
                "context")


def flag_rows(conn: apsw.Connection, ids: Iterable[int], kind: str, at: float) -> None:
    """Mark rows (inside the caller's write transaction); the table is made on first use."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    if not ids:
        return
    conn.execute(FLAGS_TABLE)
    for i in ids:
        conn.execute("INSERT OR IGNORE INTO flags(assertion_id, kind, at) VALUES (?, ?, ?)",
                     (i, kind, at))


def flag_secret_rows(conn: apsw.Connection, ids: Iterable[int], at: float) -> None:
    """Flag those of `ids` whose stored sentence holds a secret's placeholder."""
    ids = list(dict.fromkeys(int(i) for i in ids))
    if not ids:
        return
    rows = conn.execute(
        f"SELECT id FROM assertions WHERE id IN ({','.join('?' * len(ids))})"
        " AND instr(text, ?) > 0", (*ids, PLACEHOLDER_MARK)).fetchall()
    flag_rows(conn, (int(r[0]) for r in rows), SECRET, at)  # type: ignore[arg-type]


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """An exported row with secrets in its text fields replaced, as ingest would have."""
    out = dict(record)
    for f in _RECORD_TEXT:
        v = out.get(f)
        if isinstance(v, str) and v:
            out[f] = redact(v)[0]
    return out


def is_purged(a: Assertion) -> bool:
    return a.text == "" and (a.reason or "").startswith("purged")


class PrivacyOps:
    """Mixed into MemoryEngine: purge, flags and the checkpoint that empties the WAL."""

    if TYPE_CHECKING:  # provided by MemoryEngine
        path: Path | str
        _readers: Readers

        def _run_write(self, job: Callable[[apsw.Connection], tuple[Any, WriteContext, int]]
                       ) -> Any: ...
        def _context(self, conn: apsw.Connection,
                     vocab: dict[str, Cardinality]) -> WriteContext: ...
        @staticmethod
        def _bump(conn: apsw.Connection) -> int: ...
        def get(self, assertion_id: int) -> Assertion: ...

    def purge(self, assertion_id: int, reason: str = "purged") -> list[Assertion]:
        """Remove a row's sentence, triple and vector from the ledger file, irreversibly.

        Every row made from the same sentence goes with it (a sentence with several claims
        has several rows). Each becomes a retracted tombstone that keeps its id, key,
        relation, context, interval and the reason `purged: <reason>`. Returns the
        tombstones.
        """
        assertion_id = int(assertion_id)
        a = self.get(assertion_id)
        if is_purged(a):
            raise EngineError(f"assertion {assertion_id} is already purged")
        why = "purged" if not reason or reason.strip() in ("", "purged") else \
            f"purged: {redact(reason.strip())[0][:200]}"

        def job(conn: apsw.Connection) -> tuple[list[int], WriteContext, int]:
            ctx = self._context(conn, {})
            row = ctx.q("SELECT text_hash FROM assertions WHERE id=?", (assertion_id,))
            if not row:
                raise NotFound(f"no assertion with id {assertion_id}")
            if row[0][0] == PURGED_HASH:
                raise EngineError(f"assertion {assertion_id} is already purged")
            ids = sorted({assertion_id, *(r[0] for r in ctx.q(
                "SELECT id FROM assertions WHERE text_hash=?", (row[0][0],)))})
            from .governance_ops import held, mark_erased

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
                flag_rows(conn, ids, PURGED, ctx.now)
                lexical.compact(conn, self.backend)  # type: ignore[attr-defined]
            finally:
                conn.execute(f"PRAGMA secure_delete={secure}")
            log.info("purged %d row(s): #%s", len(ids), ", #".join(map(str, ids)))
            return ids, ctx, self._bump(conn)

        ids = self._run_write(job)
        if not self.checkpoint():
            log.warning("purge: the write-ahead log is still in use; it is emptied at the next "
                        "checkpoint (at the latest when the ledger is closed)")
        return [self.get(i) for i in ids]

    def checkpoint(self, attempts: int = 20) -> bool:
        """Copy the write-ahead log into the ledger file and truncate it to zero bytes, so
        no old page stays in it. False when readers kept it busy through every attempt.
        On a team ledger (PostgreSQL): VACUUM the tables, so the purged rows' old versions
        are removed from them (PostgreSQL's own WAL and backups are the server's to keep)."""
        if isinstance(self.path, str):
            from .store_pg import vacuum

            return vacuum(self._readers)  # type: ignore[arg-type]
        try:
            conn = connect(self.path)
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

    def flags(self, assertion_id: int) -> list[str]:
        """What a row is flagged for: "secret" (a secret was replaced in its sentence),
        "purged"."""
        if not self._readers.query(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='flags'"):
            return []
        return [r[0] for r in self._readers.query(
            "SELECT kind FROM flags WHERE assertion_id=? ORDER BY kind", (int(assertion_id),))]

    def flagged(self, kind: str = SECRET) -> list[int]:
        """Ids of the rows flagged `kind`, oldest first."""
        if not self._readers.query(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='flags'"):
            return []
        return [int(r[0]) for r in self._readers.query(
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
