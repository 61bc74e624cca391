"""The ledger: where the rows are kept and how they change.

Stores behind one protocol (protocol.py): SQLite (sqlite.py, schema.py, sqlite_errors.py)
and PostgreSQL (pg.py, pg_sql.py); `Ledger` (ledger.py), the open ledger and its writer's
jobs; the writer's transaction (transaction.py), keys (keys.py) and supersession
(supersede.py); row versions (versions.py), the stored terms (terms.py), erasure and flags
(erasure.py), legal holds (holds.py), listings and export (queries.py), file modes
(files.py).
"""
