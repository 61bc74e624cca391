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
    def total(self) -> int:
        return self._total

    def reload(self) -> None:
        """Drop the rows and fetch the first page (with the total) again."""
        self._generation += 1
        gen, flt, order, desc = self._generation, self._filter, self._order, self._descending
        self.beginResetModel()
        self._rows, self._total, self._fetching = [], 0, True
        self.endResetModel()

        def fetch(e: Any) -> tuple[int, list[Any]]:
            return e.count_assertions(flt), e.list_assertions(flt, 0, PAGE, order, desc)

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
        order, desc = self._order, self._descending
        self._client.submit(Operation(
            "page ledger", lambda e: e.list_assertions(flt, offset, PAGE, order, desc),
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
