"""The SQLite ledger's schema: its columns, the migrations that build it (the version in
`PRAGMA user_version`), and a row as an `Assertion`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from ..timeutil import from_ts
from ..types import Assertion, AssertionId, EngineError, Status
from . import terms
from .sqlite_errors import KNOWN_ERRORS, scalar, translate

COLUMNS = (
    "id, kind, subject, relation, object, subject_norm, relation_norm, object_norm, key, text, "
    "source, method, confidence, status, recorded_at, retired_at, valid_from, valid_to, "
    "superseded_by, reason, reinforced, context, space, author, authority, label, reviewed_by, "
    "reviewed_at, expires_at, hold"
)

MIGRATIONS: list[str] = [
    # v1: the ledger
    """
    CREATE TABLE assertions (
        id            INTEGER PRIMARY KEY,
        kind          TEXT NOT NULL CHECK (kind IN ('assertion', 'fact')),
        subject       TEXT, relation TEXT, object TEXT,
        subject_norm  TEXT, relation_norm TEXT, object_norm TEXT,
        key           TEXT,
        text          TEXT NOT NULL,
        text_hash     TEXT NOT NULL,
        source        TEXT NOT NULL,
        method        TEXT NOT NULL,
        confidence    REAL NOT NULL,
        status        TEXT NOT NULL CHECK (status IN
                        ('active','superseded','quarantined','rejected','plain','retracted')),
        recorded_at   REAL NOT NULL,
        retired_at    REAL,
        valid_from    REAL NOT NULL,
        valid_to      REAL,
        superseded_by INTEGER REFERENCES assertions(id),
        reason        TEXT,
        reinforced    INTEGER NOT NULL DEFAULT 0,
        last_seen_at  REAL
    );
    CREATE INDEX ix_assertions_key ON assertions(key, valid_from);
    CREATE INDEX ix_assertions_hash ON assertions(text_hash);
    CREATE INDEX ix_assertions_status ON assertions(status);
    CREATE INDEX ix_assertions_name ON assertions(relation_norm, object_norm);
    CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
    CREATE TABLE vocabulary (
        relation    TEXT PRIMARY KEY,
        cardinality TEXT NOT NULL CHECK (cardinality IN ('single', 'multi'))
    );
    INSERT INTO meta(k, v) VALUES ('generation', '0');
    """,
    # v2: status has a handful of values; its index cost every write more than it saved
    # the few listings that filter on it
    """
    DROP INDEX IF EXISTS ix_assertions_status;
    """,
    # v3: context qualifiers are part of a key ("prod", "rev b"); change statements that name
    # the old value find its key through the value
    """
    ALTER TABLE assertions ADD COLUMN context TEXT;
    CREATE INDEX ix_assertions_object ON assertions(object_norm);
    """,
    # v4: every row belongs to a space (a project; "global" holds facts meant for all)
    """
    ALTER TABLE assertions ADD COLUMN space TEXT NOT NULL DEFAULT 'global';
    CREATE INDEX ix_assertions_space ON assertions(space);
    """,
    # v5: who wrote each row ("user@machine"), as a team ledger records it
    """
    ALTER TABLE assertions ADD COLUMN author TEXT;
    """,
    # v6: the governed ledger (docs/GOVERNANCE.md): each row's source authority, permission
    # label, review, expiry and legal hold; every state a row had, with when (transaction
    # time, for reads "as known at"); holds on keys; contests; the endpoint's injection log
    """
    ALTER TABLE assertions ADD COLUMN authority TEXT;
    ALTER TABLE assertions ADD COLUMN label TEXT NOT NULL DEFAULT 'normal';
    ALTER TABLE assertions ADD COLUMN reviewed_by TEXT;
    ALTER TABLE assertions ADD COLUMN reviewed_at REAL;
    ALTER TABLE assertions ADD COLUMN expires_at REAL;
    ALTER TABLE assertions ADD COLUMN hold TEXT;
    CREATE TABLE row_versions (
        vid        INTEGER PRIMARY KEY,
        row_id     INTEGER NOT NULL,
        at         REAL NOT NULL,
        status     TEXT NOT NULL,
        valid_from REAL NOT NULL,
        valid_to   REAL,
        label      TEXT NOT NULL DEFAULT 'normal'
    );
    CREATE INDEX ix_row_versions_at ON row_versions(at);
    CREATE INDEX ix_row_versions_row ON row_versions(row_id, at);
    -- what each row was when first recorded, and what it became when it was retired
    INSERT INTO row_versions(row_id, at, status, valid_from, valid_to)
        SELECT id, recorded_at,
               CASE WHEN retired_at > recorded_at AND status IN ('superseded', 'retracted')
                    THEN 'active' ELSE status END,
               valid_from,
               CASE WHEN retired_at > recorded_at AND status IN ('superseded', 'retracted')
                    THEN NULL ELSE valid_to END
        FROM assertions;
    INSERT INTO row_versions(row_id, at, status, valid_from, valid_to)
        SELECT id, retired_at, status, valid_from, valid_to FROM assertions
        WHERE retired_at > recorded_at AND status IN ('superseded', 'retracted');
    CREATE TABLE key_holds (key TEXT PRIMARY KEY, at REAL NOT NULL, reason TEXT NOT NULL,
                            by TEXT);
    CREATE TABLE contests (
        id          INTEGER PRIMARY KEY,
        row_id      INTEGER NOT NULL,
        at          REAL NOT NULL,
        by          TEXT,
        reason      TEXT NOT NULL,
        right_value TEXT,
        resolved    TEXT
    );
    CREATE INDEX ix_contests_row ON contests(row_id);
    CREATE TABLE injections (
        id        INTEGER PRIMARY KEY,
        at        REAL NOT NULL,
        api       TEXT NOT NULL,
        model     TEXT,
        space     TEXT,
        tool      TEXT,
        settings  TEXT NOT NULL,
        injected  TEXT NOT NULL,
        filtered  TEXT NOT NULL,
        query_sha TEXT
    );
    CREATE INDEX ix_injections_at ON injections(at);
    -- sentences erased by purge or redaction: never stored again (hashes, not text)
    CREATE TABLE erased (text_hash TEXT PRIMARY KEY, at REAL NOT NULL, how TEXT NOT NULL);
    """,
    # v7: the lexical index (SQLite FTS5 over each sentence's terms, ledger/terms.py);
    # the stored sentences are indexed in the same transaction (`AFTER_MIGRATION`)
    terms.FTS_TABLE_SQL,
]
SCHEMA_VERSION = len(MIGRATIONS)
# Python steps run right after a migration, in its transaction (by the version it made)
AFTER_MIGRATION: dict[int, Callable[[apsw.Connection], object]] = {7: terms.backfill}


def row_to_assertion(r: tuple[Any, ...]) -> Assertion:
    return Assertion(
        id=AssertionId(r[0]), kind=r[1], subject=r[2], relation=r[3], object=r[4],
        subject_norm=r[5], relation_norm=r[6], object_norm=r[7], key=r[8], text=r[9],
        source=r[10], method=r[11], confidence=r[12], status=Status(r[13]),
        recorded_at=from_ts(r[14]), retired_at=from_ts(r[15]),  # type: ignore[arg-type]
        valid_from=from_ts(r[16]), valid_to=from_ts(r[17]),  # type: ignore[arg-type]
        superseded_by=AssertionId(r[18]) if r[18] is not None else None,
        reason=r[19], reinforced=r[20], context=r[21], space=r[22], author=r[23],
        authority=r[24], label=r[25] or "normal", reviewed_by=r[26],
        reviewed_at=from_ts(r[27]), expires_at=from_ts(r[28]), hold=r[29],
    )


def newer_schema(path: Path, version: int) -> EngineError:
    return EngineError(
        f"the ledger {path} was written by a newer MemStrata (schema {version}; this version "
        f"reads schema {SCHEMA_VERSION} and older); upgrade MemStrata to open it. The file "
        "was not changed")


def migrate(conn: apsw.Connection, path: Path) -> None:
    """Run the migrations newer than `PRAGMA user_version`, each in its own transaction."""
    try:
        version = scalar(conn, "PRAGMA user_version")
    except KNOWN_ERRORS as e:
        raise translate(e, path) from e
    if version > SCHEMA_VERSION:  # `probe` refuses it first; another process may race it
        raise newer_schema(path, version)
    for v in range(version, SCHEMA_VERSION):
        try:
            conn.execute("BEGIN IMMEDIATE")
            if scalar(conn, "PRAGMA user_version") != v:
                conn.execute("ROLLBACK")  # another process migrated meanwhile
                continue
            conn.execute(MIGRATIONS[v])
            if v + 1 in AFTER_MIGRATION:
                AFTER_MIGRATION[v + 1](conn)
            conn.execute(f"PRAGMA user_version={v + 1}")
            conn.execute("COMMIT")
        except KNOWN_ERRORS as e:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise translate(e, path) from e
