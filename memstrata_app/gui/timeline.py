"""Timeline tab: pick a (subject, relation) and see every value it has had, as of any instant."""

from __future__ import annotations

import html
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memstrata_app.engine.ledger.keys import key_label

from .state import AppState
from .style import fmt_time, heading, muted, on_resize, status_color, status_text
from .timeline_canvas import TimelineCanvas
from .worker import Change, Operation

KEY_ROLE = Qt.ItemDataRole.UserRole + 3
PENDING = ("quarantined", "rejected")
CHAIN_HEADERS = ("ID", "Value", "Status", "Valid from", "Valid to", "Recorded", "Source",
                 "Sentence")


def chain_with_proposals(engine: Any, subject: str, relation: str,
                         space: str | None = None, context: str | None = None) -> list[Any]:
    """The key's history in `space` (None: the global space) plus its proposals awaiting review
    (or rejected), by valid_from. After a rename the history holds the facts kept under the
    entity's old and new names (engine.history follows renames both ways), and the proposals
    of each of those keys."""
    from memstrata_app.engine import LedgerFilter, Status

    rows = list(engine.history(subject, relation, context or None, space) if space or context
                else engine.history(subject, relation))
    for key in dict.fromkeys(a.key for a in rows if a.key):
        flt = LedgerFilter(key=key, statuses=(Status.QUARANTINED, Status.REJECTED))
        rows += engine.list_assertions(flt, 0, 50, "valid_from", False)
    return sorted(rows, key=lambda a: (a.valid_from, int(a.id)))


class TimelineView(QWidget):
    """Key picker on the left, the chain's bars on the right, a caption saying what holds at T."""

    drawn = Signal()  # a chain was loaded and drawn

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.key: tuple[str, str] | None = None
        self.key_context = ""
        self._gen = 0
        self.search = QLineEdit(placeholderText="Find a subject or relation…")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self, singleShot=True, interval=200)
        self._search_timer.timeout.connect(self.refresh_keys)
        self.search.textChanged.connect(lambda _: self._search_timer.start())
        self.keys = QListWidget()
        self.keys.setObjectName("timeline_keys")
        self.keys.setWordWrap(True)  # long subjects wrap instead of scrolling sideways
        self.keys.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.keys.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.keys.setAlternatingRowColors(True)  # a wrapped key reads as one entry
        self.keys.setSpacing(1)
        self.keys.currentItemChanged.connect(self._on_key_item)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.search)
        lv.addWidget(self.keys, 1)
        self.title = QLabel()
        self.title.setStyleSheet("font-size: 16px; font-weight: 600;")
        self.caption = QLabel()
        self.caption.setObjectName("timeline_caption")
        self.caption.setWordWrap(True)
        self.canvas = TimelineCanvas()
        self.canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.canvas.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # a picture: the table below reads it
        hint = muted("Bars span each value's validity; arrows link a value to the one that "
                     "superseded it. Hover a bar for its source sentence. Hatched: awaiting "
                     "review or rejected.")
        self.table = QTableWidget(0, len(CHAIN_HEADERS))
        self.table.setObjectName("timeline_chain")
        self.table.setHorizontalHeaderLabels(CHAIN_HEADERS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        for col, w in enumerate((46, 110, 90, 130, 130, 130, 80)):
            self.table.setColumnWidth(col, w)
        on_resize(self.table.viewport(), self._fit_columns)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.title)
        rv.addWidget(self.caption)
        rv.addWidget(self.canvas)
        rv.addWidget(hint)
        rv.addWidget(heading("Source sentences"))
        rv.addWidget(self.table, 1)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([300, 1000])
        split.setChildrenCollapsible(False)
        left.setMinimumWidth(160)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Keys"))
        layout.addWidget(split, 1)
        state.key_picked.connect(self.show_key)
        state.as_of_changed.connect(self._on_as_of)
        state.client.changed.connect(self._on_changed)

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: find a key, the key list, the sentences."""
        return [self.search, self.keys, self.table]

    def start(self) -> None:
        self.refresh_keys()

    def _fit_columns(self) -> None:
        w = self.table.viewport().width()
        for col, least in ((6, 900), (5, 820), (0, 640)):  # source, recorded, id give way
            self.table.setColumnHidden(col, w < least)

    def refresh_keys(self) -> None:
        self._search_timer.stop()
        text = self.search.text().strip() or None
        space = self._state.space

        def entries(e: Any) -> list[tuple[str, str, str]]:
            return [(s, r, c) for s, r, c, sp in e.key_entries(text, 500)
                    if space is None or sp in (space, "global")]

        self._state.client.call("keys", entries, self._fill_keys, failure=lambda _e: None)

    def _fill_keys(self, keys: list[tuple[str, str, str]]) -> None:
        self.keys.blockSignals(True)
        self.keys.clear()
        for subject, relation, context in keys:
            label = key_label(subject, relation, context)
            item = QListWidgetItem(label)
            item.setToolTip(label)
            item.setData(KEY_ROLE, (subject, relation, context))
            self.keys.addItem(item)
            if self.key == (subject, relation) and self.key_context == context:
                self.keys.setCurrentItem(item)
                self.keys.scrollToItem(item)
        self.keys.blockSignals(False)

    def _on_key_item(self, item: QListWidgetItem | None, _prev: Any) -> None:
        if item is not None:
            self._state.key_space = None  # picked from the list: the switcher's space
            self.show_key(*item.data(KEY_ROLE))

    def show_key(self, subject: str, relation: str, context: str = "") -> None:
        """Load and draw the chain of (subject, relation) in `context` ("prod", "rev b")."""
        self.key = (subject, relation)
        self.key_context = context
        self._gen += 1
        gen = self._gen
        self.title.setText(key_label(subject, relation, context))
        space = self._state.key_space or self._state.space
        self._state.client.submit(Operation(
            "history", lambda e: chain_with_proposals(e, subject, relation, space, context),
            lambda rows: self._on_rows(gen, rows)))

    def _on_rows(self, gen: int, rows: list[Any]) -> None:
        if gen != self._gen:
            return
        self.canvas.set_rows(rows, self._state.as_of)
        self._caption()
        self._fill_table()
        shown = (*self.key, self.key_context) if self.key is not None else None
        for i in range(self.keys.count()):
            if tuple(self.keys.item(i).data(KEY_ROLE)) == shown:
                self.keys.blockSignals(True)
                self.keys.setCurrentRow(i)
                self.keys.blockSignals(False)
                self.keys.scrollToItem(self.keys.item(i))  # came from the ledger: in view
        self.drawn.emit()

    def _fill_table(self) -> None:
        rows = self.canvas.rows
        valid = set(self.canvas.valid_ids())
        self.table.setRowCount(len(rows))
        for i, a in enumerate(rows):
            cells = (str(int(a.id)), str(a.object or ""), status_text(a.status),
                     fmt_time(a.valid_from), fmt_time(a.valid_to, "open"),
                     fmt_time(a.recorded_at), a.source, a.text)
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setToolTip(a.text)
                if j == 2:
                    item.setForeground(status_color(a.status))
                if int(a.id) in valid:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(i, j, item)

    def _on_as_of(self, t: datetime | None) -> None:
        self.canvas.set_as_of(t)
        self._caption()
        self._fill_table()

    def shown_values(self) -> list[str]:
        """The values valid at the as-of instant (now when none)."""
        ids = set(self.canvas.valid_ids())
        return [str(a.object) for a in self.canvas.rows if int(a.id) in ids]

    def _caption(self) -> None:
        if not self.canvas.rows:
            self.caption.setText("")
            return
        t = self._state.as_of
        values = self.shown_values()
        when = f"as of {fmt_time(t)}" if t else "now"
        shown = ", ".join(f"<b>{html.escape(v)}</b>" for v in values) or "<i>no value</i>"
        later = ""
        if t is not None and t < datetime.now(UTC):
            current = [str(a.object) for a in self.canvas.rows
                       if a.valid_to is None and self.canvas._counts(a)]
            if current and current != values:
                later = f" (today: {html.escape(', '.join(current))})"
        n = sum(1 for a in self.canvas.rows if status_text(a.status) not in PENDING)
        pending = len(self.canvas.rows) - n
        extra = f" · {pending} proposed or rejected (hatched)" if pending else ""
        self.caption.setText(f"Valid {when}: {shown}{later} · {n} value{'s' if n != 1 else ''} "
                             f"in its history{extra}")

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            self.refresh_keys()
            if self.key is not None:
                self.show_key(*self.key, self.key_context)

    def shutdown(self) -> None:
        self._search_timer.stop()
