"""Row versions: what each row was from each instant of transaction time on. Every change
to a row's status, validity or label adds one (`WriteContext.touch`, `insert_row`), so a
read "as known at T" takes each row's last version at or before T."""

from __future__ import annotations

from typing import Any, Protocol


class Tx(Protocol):
    """What a version needs of the writer's transaction (transaction.WriteContext)."""

    conn: Any
    now: float


def record_version(ctx: Tx, row_id: int, status: str, valid_from: float,
                   valid_to: float | None, label: str, at: float | None = None) -> None:
    """What a row is from `at` on (transaction time, default `ctx.now`): reads "as known
    at T" take each row's last version at or before T."""
    ctx.conn.execute(
        "INSERT INTO row_versions(row_id, at, status, valid_from, valid_to, label)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (row_id, ctx.now if at is None else at, status, valid_from, valid_to, label))
