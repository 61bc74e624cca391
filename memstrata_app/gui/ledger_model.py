"""The ledger as a Qt table model that pages rows in from the engine (`fetchMore`)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from .style import fmt_time, status_text, themed_status_color
from .worker import EngineClient, Operation

log = logging.getLogger(__name__)

Index = QModelIndex | QPersistentModelIndex
PAGE = 200

# (header, engine sort order or None when the engine cannot sort by it)
COLUMNS: tuple[tuple[str, str | None], ...] = (
    ("ID", "id"),
    ("Status", "status"),
    ("Subject", "subject"),
    ("Relation", "relation"),
    ("Value / sentence", None),
    ("Valid from", "valid_from"),
    ("Valid to", None),
    ("Recorded", "recorded_at"),
    ("Source", None),
    ("Conf.", "confidence"),
)
ASSERTION_ROLE = Qt.ItemDataRole.UserRole + 1


def _known_where(engine: Any, flt: Any, known_at: Any) -> tuple[str, list[Any]]:
    """The listing's WHERE clause for the ledger as known at `known_at`: rows recorded by then,
    with the status filter applied to each row's status as known then (its last version)."""
    from memstrata_app.engine.ledger.queries import where
    from memstrata_app.engine.timeutil import to_ts

    statuses = tuple(getattr(s, "value", s) for s in (getattr(flt, "statuses", ()) or ()))
    w, params = where(replace(flt, statuses=()) if flt is not None else None)
    t = to_ts(known_at)
    w += " AND recorded_at <= ?"
    params = [*params, t]
    if statuses:
        w += (" AND id IN (SELECT v.row_id FROM row_versions v JOIN (SELECT row_id,"
              " max(vid) AS vid FROM row_versions WHERE at <= ? GROUP BY row_id) m"
              f" ON m.vid = v.vid WHERE v.status IN ({','.join('?' * len(statuses))}))")
        params += [t, *statuses]
    return w, params


def count_rows(engine: Any, flt: Any, known_at: Any = None) -> int:
    """`engine.count_assertions(flt)`, or the rows the ledger held at `known_at`."""
    if known_at is None or getattr(engine, "_readers", None) is None:
        return int(engine.count_assertions(flt))
    w, params = _known_where(engine, flt, known_at)
    return int(engine._readers.query(f"SELECT count(*) FROM assertions WHERE {w}", params)[0][0])


def list_rows(engine: Any, flt: Any, offset: int, limit: int, order: str, descending: bool,
              known_at: Any = None) -> list[Any]:
    """`engine.list_assertions(...)`, or — with `known_at` — the rows recorded by then, each
    with the status, validity and label it had then (a later correction not yet applied)."""
    if known_at is None or getattr(engine, "_readers", None) is None:
        return list(engine.list_assertions(flt, offset, limit, order, descending))
    from memstrata_app.engine.ledger.queries import ORDERS
    from memstrata_app.engine.ledger.schema import COLUMNS, row_to_assertion

    col = ORDERS.get(order, "id")
    w, params = _known_where(engine, flt, known_at)
    direction = "DESC" if descending else "ASC"
    rows = [row_to_assertion(r) for r in engine._readers.query(
        f"SELECT {COLUMNS} FROM assertions WHERE {w} ORDER BY {col} {direction}, id {direction}"
        " LIMIT ? OFFSET ?", (*params, int(limit), int(offset)))]
    return as_known(engine, rows, known_at)


def as_known(engine: Any, rows: list[Any], known_at: Any) -> list[Any]:
    """Each row as the ledger held it at `known_at` (its last version at or before then)."""
    from datetime import UTC, datetime

    from memstrata_app.engine import Status
    from memstrata_app.engine.timeutil import to_ts

    if not rows:
        return rows
    ids = [int(a.id) for a in rows]
    t = to_ts(known_at)
    versions = {int(r[0]): r[1:] for r in engine._readers.query(
        "SELECT v.row_id, v.status, v.valid_from, v.valid_to, v.label FROM row_versions v"
        " JOIN (SELECT row_id, max(vid) AS vid FROM row_versions WHERE at <= ? AND row_id IN"
        f" ({','.join('?' * len(ids))}) GROUP BY row_id) m ON m.vid = v.vid", (t, *ids))}

    def dt(x: Any) -> Any:
        return None if x is None else datetime.fromtimestamp(float(x), tz=UTC)

    out = []
    for a in rows:
        v = versions.get(int(a.id))
        if v is None:
            out.append(a)
            continue
        status = Status(str(v[0]))
        later = a.retired_at is not None and a.retired_at > known_at
        out.append(replace(a, status=status, valid_from=dt(v[1]), valid_to=dt(v[2]),
                           label=str(v[3] or a.label),
                           retired_at=None if later else a.retired_at,
                           superseded_by=None if later else a.superseded_by,
                           reason=None if later else a.reason))
    return out


class LedgerModel(QAbstractTableModel):
    """Rows of `engine.list_assertions(filter)`, fetched a page at a time on the worker."""

    loaded = Signal()  # a page (or the reset's first page) arrived
    total_changed = Signal(int)

    def __init__(self, client: EngineClient, parent: Any = None):
        super().__init__(parent)
        self._client = client
        self._rows: list[Any] = []
        self._total = 0
        self._filter: Any = None
        self._order = "id"
        self._descending = True
        self._generation = 0
        self._fetching = False
        self._known_at: Any = None  # a transaction-time instant: the ledger as known then

    # --- what to show -------------------------------------------------------------------------
    @property
    def filter(self) -> Any:
        return self._filter

    def set_filter(self, flt: Any) -> None:
        self._filter = flt
        self.reload()

    def update_filter(self, **changes: Any) -> None:
        """Change some fields of the current `LedgerFilter` and reload."""
        from memstrata_app.engine import LedgerFilter

        self.set_filter(replace(self._filter or LedgerFilter(), **changes))

    @property
    def known_at(self) -> Any:
        return self._known_at

    def set_known_at(self, t: Any) -> None:
        """Show the rows as the ledger knew them at `t` (None: as it is now), and reload."""
        if t != self._known_at:
            self._known_at = t
            self.reload()

    @property
    def total(self) -> int:
        return self._total

    def reload(self) -> None:
        """Drop the rows and fetch the first page (with the total) again."""
        self._generation += 1
        gen, flt, order, desc = self._generation, self._filter, self._order, self._descending
        known = self._known_at
        self.beginResetModel()
        self._rows, self._total, self._fetching = [], 0, True
        self.endResetModel()

        def fetch(e: Any) -> tuple[int, list[Any]]:
            return (count_rows(e, flt, known),
                    list_rows(e, flt, 0, PAGE, order, desc, known))

        self._client.submit(Operation("list ledger", fetch, lambda r: self._on_first(gen, r),
                                      lambda exc: self._on_error(gen, exc)))

    def _on_first(self, gen: int, result: tuple[int, list[Any]]) -> None:
        if gen != self._generation:
            return
        total, rows = result
        self._fetching = False
        self._total = max(total, len(rows))
        if rows:
            self.beginInsertRows(QModelIndex(), 0, len(rows) - 1)
            self._rows = list(rows)
            self.endInsertRows()
        self.total_changed.emit(self._total)
        self.loaded.emit()

    def _on_error(self, gen: int, exc: BaseException) -> None:
        if gen == self._generation:
            self._fetching = False
            log.warning("listing the ledger failed: %s", exc)
            self._client.error.emit(f"Could not list the ledger: {exc}")

    # --- paging -------------------------------------------------------------------------------
    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._fetching and len(self._rows) < self._total

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if not self.canFetchMore(parent):
            return
        self._fetching = True
        gen, flt, offset = self._generation, self._filter, len(self._rows)
        order, desc, known = self._order, self._descending, self._known_at
        self._client.submit(Operation(
            "page ledger", lambda e: list_rows(e, flt, offset, PAGE, order, desc, known),
            lambda rows: self._on_page(gen, offset, rows), lambda exc: self._on_error(gen, exc)))

    def _on_page(self, gen: int, offset: int, rows: list[Any]) -> None:
        if gen != self._generation or offset != len(self._rows):
            return
        self._fetching = False
        if not rows:  # the ledger shrank under us: stop paging
            self._total = len(self._rows)
            return
        self.beginInsertRows(QModelIndex(), offset, offset + len(rows) - 1)
        self._rows.extend(rows)
        self.endInsertRows()
        self.loaded.emit()

    # --- Qt model API --------------------------------------------------------------------------
    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(COLUMNS)):
            return COLUMNS[section][0]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        a = self._rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(a, col)
        if role == Qt.ItemDataRole.ToolTipRole:
            return a.text
        if role == Qt.ItemDataRole.ForegroundRole and col == 1:
            return themed_status_color(a.status)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (0, 9):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == ASSERTION_ROLE:
            return a
        return None

    @staticmethod
    def _display(a: Any, col: int) -> str:
        if col == 0:
            return str(int(a.id))
        if col == 1:
            return status_text(a.status)
        if col == 2:  # a plain fact's sentence spans subject to value (see LedgerView)
            return a.subject or ("" if a.kind == "assertion" and a.object else a.text)
        if col == 3:
            return a.relation or ""
        if col == 4:
            return a.object if a.kind == "assertion" and a.object else a.text
        if col == 5:
            return fmt_time(a.valid_from)
        if col == 6:
            return fmt_time(a.valid_to, "open")
        if col == 7:
            return fmt_time(a.recorded_at)
        if col == 8:
            return a.source
        return f"{a.confidence:.2f}"

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = COLUMNS[column][1] if 0 <= column < len(COLUMNS) else None
        if key is None:
            return
        self._order = key
        self._descending = order == Qt.SortOrder.DescendingOrder
        self.reload()

    @staticmethod
    def sortable(column: int) -> bool:
        return 0 <= column < len(COLUMNS) and COLUMNS[column][1] is not None

    def assertion(self, row: int) -> Any:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def row_of(self, assertion_id: int) -> int:
        for i, a in enumerate(self._rows):
            if int(a.id) == assertion_id:
                return i
        return -1
