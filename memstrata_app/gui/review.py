"""Review queue: quarantined extractions to approve (optionally edited) or reject."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memstrata_app.understood import method_label

from .state import AppState
from .style import fmt_time, fmt_time_long, heading, muted
from .worker import Change, Operation

HEADERS = ("ID", "Conf.", "Subject", "Relation", "Value", "Sentence", "Recorded")


class ReviewView(QWidget):
    """Lists `engine.quarantined()`; approve applies the assertion with supersession."""

    loaded = Signal(int)  # rows in the queue
    decided = Signal(str, int)  # ("approved" | "rejected", assertion id)

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.rows: list[Any] = []
        self._gen = 0
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("review_table")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        for col, w in ((0, 50), (1, 50), (2, 120), (3, 100), (4, 120), (6, 120)):
            self.table.setColumnWidth(col, w)
        self.table.setWordWrap(False)
        self.table.itemSelectionChanged.connect(self._on_select)
        self.empty = muted("Nothing to review: every extraction so far was confident enough.")
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.sentence.setStyleSheet("font-size: 15px; padding: 6px; background: palette(base);"
                                    "border: 1px solid palette(mid); border-radius: 4px;")
        self.subject, self.relation, self.object = QLineEdit(), QLineEdit(), QLineEdit()
        triple = (("subject", self.subject), ("relation", self.relation), ("object", self.object))
        for name, w in triple:
            w.setObjectName(f"review_{name}")
        form = QFormLayout()
        form.addRow("Subject:", self.subject)
        form.addRow("Relation:", self.relation)
        form.addRow("Value:", self.object)
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.retires = QListWidget()
        self.retires.setObjectName("would_retire")
        self.approve_button = QPushButton("Approve  (A)")
        self.approve_button.setToolTip("Apply the assertion as shown (edits included); Ctrl+Enter")
        self.approve_button.clicked.connect(self.approve)
        self.reject_button = QPushButton("Reject  (R)")
        self.reject_button.setToolTip("Keep it out of memory (kept for audit); Delete")
        self.reject_button.clicked.connect(self.reject)
        self.edit_button = QPushButton("Edit  (E)")
        self.edit_button.setToolTip("Correct the proposed triple, then approve")
        self.edit_button.clicked.connect(self.start_edit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.edit_button)
        buttons.addWidget(self.reject_button)
        buttons.addStretch(1)
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.addWidget(heading("Source sentence"))
        rv.addWidget(self.sentence)
        rv.addWidget(heading("Proposed assertion (editable)"))
        rv.addLayout(form)
        rv.addWidget(self.info)
        rv.addWidget(heading("Approving would retire"))
        self.retires.setMaximumHeight(150)  # a few rows at most: no tall empty pane
        rv.addWidget(self.retires)
        rv.addLayout(buttons)
        rv.addWidget(muted("Approve applies the assertion with supersession; reject keeps the "
                           "row for audit but out of memory. Low-confidence extractions wait "
                           "here instead of being retrieved or retiring anything."))
        rv.addStretch(1)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.empty)
        lv.addWidget(self.table, 1)
        split = QSplitter()
        split.addWidget(left)
        split.addWidget(right)
        split.setSizes([800, 460])
        QVBoxLayout(self).addWidget(split)
        for keys, slot in ((("A", "Ctrl+Return"), self.approve), (("R", "Delete"), self.reject),
                           (("E",), self.start_edit)):
            for k in keys:
                sc = QShortcut(QKeySequence(k), self, slot)
                sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        state.client.changed.connect(self._on_changed)
        self._show(None)

    def reload(self) -> None:
        self._gen += 1
        gen = self._gen
        self._state.client.submit(Operation("review queue", lambda e: e.quarantined(),
                                            lambda rows: self._on_rows(gen, rows)))

    def _on_rows(self, gen: int, rows: list[Any]) -> None:
        if gen != self._gen:
            return
        keep = self.current()
        self.rows = list(rows)
        self.table.setRowCount(len(rows))
        for i, a in enumerate(rows):
            cells = (str(int(a.id)), f"{a.confidence:.2f}", a.subject or "", a.relation or "",
                     a.object or "", a.text, fmt_time(a.recorded_at))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setToolTip(a.text)
                self.table.setItem(i, j, item)
        self.empty.setVisible(not rows)
        self._state.review_count.emit(len(rows))
        row = next((i for i, a in enumerate(rows) if keep is not None and a.id == keep.id), 0)
        if rows:
            self.table.selectRow(min(row, len(rows) - 1))
        else:
            self._show(None)
        self.loaded.emit(len(rows))

    def current(self) -> Any:
        r = self.table.currentRow()
        sel = self.table.selectionModel().selectedRows()
        r = sel[0].row() if sel else r
        return self.rows[r] if 0 <= r < len(self.rows) else None

    def _on_select(self) -> None:
        self._show(self.current())

    def _show(self, a: Any) -> None:
        has = a is not None
        for w in (self.approve_button, self.reject_button, self.edit_button, self.subject,
                  self.relation, self.object):
            w.setEnabled(has and not self._state.read_only)
        self.retires.clear()
        if not has:
            self.sentence.setText("")
            self.info.setText("")
            for w in (self.subject, self.relation, self.object):
                w.setText("")
            return
        self.sentence.setText(a.text)
        self.subject.setText(a.subject or "")
        self.relation.setText(a.relation or "")
        self.object.setText(a.object or "")
        self.info.setText(f"Confidence <b>{a.confidence:.2f}</b> by "
                          f"{html.escape(method_label(a.method) or a.method)}, "
                          f"from <i>{html.escape(a.source)}</i>, recorded "
                          f"{fmt_time_long(a.recorded_at)}")
        aid = int(a.id)
        self._state.client.call("would retire", lambda e: e.would_retire(aid),
                                lambda rows: self._on_retires(aid, rows), failure=lambda _e: None)

    def _on_retires(self, aid: int, rows: list[Any]) -> None:
        cur = self.current()
        if cur is None or int(cur.id) != aid:
            return
        self.retires.clear()
        for r in rows:
            self.retires.addItem(f"#{int(r.id)}  {r.subject} · {r.relation} = {r.object}   "
                                 f"({r.text})")
        if not rows:
            self.retires.addItem("nothing (a new value, or the same as the current one)")
        elif any(r.object == cur.object for r in rows):  # same value retired: a removal
            self.info.setText(self.info.text() + "<br><b>Proposed removal</b>: the sentence says "
                              "this value no longer holds; approving retracts it.")

    def start_edit(self) -> None:
        if self.current() is not None:
            self.object.setFocus()
            self.object.selectAll()

    def approve(self) -> None:
        a = self.current()
        if a is None:
            return
        aid = int(a.id)
        edits = {k: (w.text().strip() or None) for k, w in
                 (("subject", self.subject), ("relation", self.relation), ("object", self.object))}
        edits = {k: v for k, v in edits.items() if v is not None and v != getattr(a, k)}
        self._decide("approved", aid, lambda e: e.approve(aid, **edits))

    def reject(self) -> None:
        a = self.current()
        if a is not None:
            aid = int(a.id)
            self._decide("rejected", aid, lambda e: e.reject(aid))

    def _decide(self, what: str, aid: int, fn: Any) -> None:
        if self._state.read_only:  # the keyboard shortcuts reach here too
            self._state.client.error.emit(f"Review is off: the ledger is read-only "
                                          f"({self._state.read_only})")
            return
        self.approve_button.setEnabled(False)
        self.reject_button.setEnabled(False)
        self._state.client.submit(Operation(
            what, fn, lambda _r: self.decided.emit(what, aid), self._on_failed,
            writes=("ledger", "review")))

    def _on_failed(self, exc: BaseException) -> None:
        self._show(self.current())
        self._state.client.error.emit(f"Review failed: {exc}")

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            self.reload()
