"""Review queue: quarantined extractions to approve (optionally edited) or reject."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from memstrata_app.engine.understand.judging import held_part
from memstrata_app.understood import method_label, part_retired

from .state import AppState
from .style import (
    fmt_time,
    fmt_time_long,
    heading,
    hint_color,
    muted,
    status_text,
    themed_status_color,
)
from .worker import Change, Operation

HEADERS = ("ID", "Conf.", "Key", "Sentence", "Recorded")
ROW_HEIGHT = 24
NARROW = 700  # below this width the two columns of the work area stack
CANDIDATE_ROLE = Qt.ItemDataRole.UserRole + 4
BROAD = "stated for every context:"  # the engine's reason prefix for "everywhere now"


def key_words(a: Any) -> str:
    """subject · relation · context = value, as people read a key."""
    parts = [p for p in (a.subject, (a.relation or "").replace("_", " "),
                         getattr(a, "context", None)) if p]
    key = " · ".join(parts) if parts else "(no key)"
    return f"{key} = {a.object}" if a.object else key


def row_words(r: Any) -> str:
    return f"#{int(r.id)}  {key_words(r)}   ({status_text(r.status)}) “{r.text}”"


def why_in_review(a: Any) -> str:
    """The engine's reason for holding a row, in words (HTML)."""
    reason = (a.reason or "").strip()
    method = a.method or ""
    conf = f"{a.confidence:.2f}"
    if reason.startswith("which one is meant"):
        return ("<b>Ambiguous key.</b> Several facts could be the one this sentence changes; "
                "approving as shown retires what is listed under “Approving would retire”. "
                "To use a candidate's key instead, pick it under Candidates (Enter), then "
                "approve.")
    m = re.match(r"lower authority:\s*(\w+) contradicts #(\d+), stated by (\w+)", reason)
    if m:
        mine, rid, theirs = (html.escape(g) for g in m.groups())
        return (f"<b>Lower authority.</b> This was stated by the <b>{mine}</b> and contradicts "
                f"#{rid}, stated by the <b>{theirs}</b>: a lower authority never retires a "
                f"higher one on its own. Approving (a reviewer's decision) retires #{rid}; "
                "rejecting keeps it.")
    if reason.startswith(BROAD):
        return ("<b>Stated for every context.</b> Approving also retires the narrower values "
                "listed below (other environments or variants of the same key).")
    if reason == "removal":
        return ("<b>Proposed removal.</b> The sentence says a value no longer holds; "
                f"the extraction's confidence ({conf}) was below the quarantine threshold.")
    if reason.startswith("judge:"):
        model, _, rest = reason[len("judge:"):].partition(" ")
        head = rest.split(" — ")[0]
        if "still true" in head:
            return (f"<b>The update judge disagrees with a rule.</b> A rule would retire the "
                    f"fact listed below, but the judge ({html.escape(model)}) "
                    f"{html.escape(head)}. Approving retires it; rejecting keeps both.")
        if held_part(reason) is not None:
            return (f"<b>The update judge is not sure.</b> The judge ({html.escape(model)}) "
                    f"{html.escape(head)}: below its threshold for retiring on its own. "
                    "Approving retires that part of the fact listed below, and the rest of "
                    "its sentence stays current; rejecting keeps it whole.")
        return (f"<b>The update judge is not sure.</b> The judge ({html.escape(model)}) "
                f"{html.escape(head)}: below its threshold for retiring on its own. "
                "Approving retires the fact listed below; rejecting keeps it current.")
    if method.startswith("llm:"):
        return (f"<b>Proposed by the model {html.escape(method[4:])}.</b> Extractions by a "
                f"language model always wait for review (confidence capped at {conf}).")
    if reason.startswith("low confidence") or not reason:
        return (f"<b>Low confidence ({conf}).</b> The extraction scored below the quarantine "
                "threshold when it was written, so it is not retrieved and retires nothing "
                "until approved.")
    return html.escape(reason)


def mentioned_ids(reason: str | None) -> list[int]:
    """Row ids the engine's reason names ("could retire #3 (…), #7 (…)")."""
    return [int(m) for m in re.findall(r"#(\d+)", reason or "")]


def fit_list(lw: QListWidget, rows: int, most: int = 5) -> None:
    """A list as tall as its rows (at most `most`): no tall empty box."""
    h = lw.sizeHintForRow(0) if lw.count() else ROW_HEIGHT
    lw.setFixedHeight(max(1, min(rows, most)) * max(h, 18) + 2 * lw.frameWidth() + 4)


class ReviewView(QWidget):
    """Lists `engine.quarantined()`; approve applies the assertion with supersession.

    The queue is a compact table on top; below it, the selected row as a work surface: its
    sentence, why it waits, the proposed key and value (editable), what approving would retire
    and, for an ambiguous key, the candidates."""

    loaded = Signal(int)  # rows in the queue
    retires_loaded = Signal(int)  # what approving the selected row would retire, loaded
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
        self.table.setTabKeyNavigation(False)  # Tab leaves the table for the next control
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(ROW_HEIGHT)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        for col, w in ((0, 50), (1, 50), (2, 260), (4, 130)):
            self.table.setColumnWidth(col, w)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.itemSelectionChanged.connect(self._on_select)
        self.empty = QLabel("<p style='font-size:15px'><b>Nothing to review.</b></p>"
                            "<p>Every extraction so far was confident enough. Statements the "
                            "rules read with low confidence, ambiguous changes and model "
                            "proposals wait here before they can retire anything.</p>")
        self.empty.setObjectName("review_empty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setContentsMargins(24, 24, 24, 24)

        self.sentence = QLabel()
        self.sentence.setObjectName("review_sentence")
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sentence.setStyleSheet("font-size: 15px; padding: 6px; background: palette(base);"
                                    "border: 1px solid palette(mid); border-radius: 4px;")
        self.why = QLabel()
        self.why.setObjectName("review_why")
        self.why.setWordWrap(True)
        self.subject, self.relation, self.object = QLineEdit(), QLineEdit(), QLineEdit()
        triple = (("subject", self.subject), ("relation", self.relation), ("object", self.object))
        form = QFormLayout()
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
        for (name, w), text in zip(triple, ("Su&bject:", "Re&lation:", "Valu&e:"), strict=True):
            w.setObjectName(f"review_{name}")
            w.setClearButtonEnabled(True)
            w.returnPressed.connect(self.approve)  # Enter in a field approves, edits included
            w.setToolTip("Edit, then press Enter (or Approve) to approve with this value")
            label = QLabel(text)
            label.setBuddy(w)
            form.addRow(label, w)
        self.info = QLabel()
        self.info.setObjectName("review_info")
        self.info.setWordWrap(True)
        self.retires = QListWidget()
        self.retires.setObjectName("would_retire")
        self.retires.setWordWrap(False)
        self.retires.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.retires.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.candidates = QListWidget()
        self.candidates.setObjectName("review_candidates")
        self.candidates.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.candidates.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.candidates.itemActivated.connect(self._use_candidate)
        self.candidates.setToolTip("Enter (or double-click) uses this fact's key for the proposal")
        self.candidates_heading = heading("Candidates (the key may be one of these)")
        self.approve_button = QPushButton("Approve  (A)")
        self.approve_button.setObjectName("review_approve")
        self.approve_button.setToolTip("Apply the assertion as shown (edits included): A, "
                                       "Ctrl+Enter, or Enter in a field")
        self.approve_button.clicked.connect(self.approve)
        self.edit_button = QPushButton("Edit and approve…  (E)")
        self.edit_button.setObjectName("review_edit")
        self.edit_button.setToolTip("Jump to the value to correct it; Enter then approves")
        self.edit_button.clicked.connect(self.start_edit)
        self.reject_button = QPushButton("Reject  (R)")
        self.reject_button.setObjectName("review_reject")
        self.reject_button.setToolTip("Keep it out of memory (the row stays for audit): R or "
                                      "Delete")
        self.reject_button.clicked.connect(self.reject)
        buttons = QHBoxLayout()
        buttons.addWidget(self.approve_button)
        buttons.addWidget(self.edit_button)
        buttons.addWidget(self.reject_button)
        buttons.addSpacing(12)

        left = QVBoxLayout()
        left.addWidget(heading("Why it is in review"))
        left.addWidget(self.why)
        left.addWidget(heading("Proposed key and value (editable)"))
        left.addLayout(form)
        left.addWidget(self.info)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(heading("Approving would retire"))
        right.addWidget(self.retires)
        right.addWidget(self.candidates_heading)
        right.addWidget(self.candidates)
        right.addStretch(1)
        buttons.addWidget(muted("Approve applies it with supersession, as if it had been "
                                "confident; reject keeps the row for audit, out of memory."), 1)
        self.columns = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.columns.setSpacing(18)
        self.columns.addLayout(left, 1)
        self.columns.addLayout(right, 1)
        self.work = QWidget()
        self.work.setObjectName("review_work")
        wv = QVBoxLayout(self.work)
        wv.setContentsMargins(0, 0, 0, 0)
        wv.addWidget(heading("Sentence"))
        wv.addWidget(self.sentence)
        wv.addLayout(self.columns)
        scroll = QScrollArea()  # a short window scrolls the work area instead of crushing it
        scroll.setWidget(self.work)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroll = scroll
        self.queue_heading = heading("Awaiting review")
        layout = QVBoxLayout(self)
        layout.addWidget(self.queue_heading)
        layout.addWidget(self.table)
        layout.addWidget(self.empty, 1)
        layout.addWidget(scroll, 1)
        self.decisions = QWidget()  # outside the scrolled part: always in view
        self.decisions.setLayout(buttons)
        buttons.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.decisions)
        layout.addStretch(0)  # a tall window: the room the work area does not need, below
        for keys, slot in ((("A", "Ctrl+Return", "Ctrl+Enter"), self.approve),
                           (("R", "Delete"), self.reject), (("E",), self.start_edit)):
            for k in keys:
                sc = QShortcut(QKeySequence(k), self, slot)
                sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        state.client.changed.connect(self._on_changed)
        self._fit_table()
        self._show(None)

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the queue, the proposal's fields, the decisions, then
        what approving would retire and the candidates."""
        return [self.table, self.subject, self.relation, self.object, self.approve_button,
                self.edit_button, self.reject_button, self.retires, self.candidates]

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        narrow = self.width() < NARROW
        self.columns.setDirection(QBoxLayout.Direction.TopToBottom if narrow
                                  else QBoxLayout.Direction.LeftToRight)
        self.table.setColumnHidden(4, narrow)  # the recorded time: in the info line too
        self.table.setColumnWidth(2, 200 if narrow else 300)
        self._fit_work()

    def _fit_work(self) -> None:
        """The work area no taller than its content (the buttons follow it); a short window
        scrolls it."""
        lay = self.work.layout()
        w = self.scroll.viewport().width()
        h = lay.totalHeightForWidth(w) if lay.hasHeightForWidth() else lay.sizeHint().height()
        self.scroll.setMaximumHeight(max(h, 60) + 2)

    def _fit_table(self) -> None:
        """The queue table as tall as its rows (a few at least, a dozen at most)."""
        n = max(3, min(12, len(self.rows)))
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height()
                                  + n * ROW_HEIGHT + 2 * self.table.frameWidth() + 2)
        self.table.setVisible(bool(self.rows))
        self.queue_heading.setVisible(bool(self.rows))
        self.empty.setVisible(not self.rows)
        self.scroll.setVisible(bool(self.rows))
        self.decisions.setVisible(bool(self.rows))

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
            cells = (str(int(a.id)), f"{a.confidence:.2f}", key_words(a), a.text,
                     fmt_time(a.recorded_at))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setToolTip(f"{key_words(a)}\n“{a.text}”")
                self.table.setItem(i, j, item)
        self._fit_table()
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
            if self._state.read_only:
                w.setToolTip("Off: the ledger is read-only")
        self.retires.clear()
        self.candidates.clear()
        self.candidates.setVisible(False)
        self.candidates_heading.setVisible(False)
        fit_list(self.retires, 1)
        if not has:
            self.sentence.setText("")
            self.info.setText("")
            self.why.setText("")
            for w in (self.subject, self.relation, self.object):
                w.setText("")
            return
        self.sentence.setText(a.text)
        self.why.setText(why_in_review(a))
        self._fit_work()
        self.subject.setText(a.subject or "")
        self.relation.setText(a.relation or "")
        self.object.setText(a.object or "")
        context = getattr(a, "context", None)
        where = f"context <b>{html.escape(context)}</b>, " if context else ""
        self.info.setText(f"#{int(a.id)} · {where}space <b>{html.escape(a.space)}</b> · "
                          f"confidence <b>{a.confidence:.2f}</b> by "
                          f"{html.escape(method_label(a.method) or a.method)} · from "
                          f"<i>{html.escape(a.source)}</i>, said {fmt_time(a.valid_from)}, "
                          f"recorded {fmt_time(a.recorded_at)}")
        self.info.setToolTip(f"Recorded {fmt_time_long(a.recorded_at)}; method {a.method}")
        aid = int(a.id)
        named = mentioned_ids(a.reason)

        def look(e: Any) -> tuple[list[Any], list[Any]]:
            others = []
            for i in named:
                try:
                    others.append(e.get(i))
                except Exception:  # purged or gone since: nothing to show for it
                    continue
            return list(e.would_retire(aid)), others

        self._state.client.call("would retire", look,
                                lambda out: self._on_retires(aid, *out), failure=lambda _e: None)

    def _on_retires(self, aid: int, rows: list[Any], named: list[Any] | None = None) -> None:
        cur = self.current()
        if cur is None or int(cur.id) != aid:
            return
        named = named or []
        broad = (cur.reason or "").startswith(BROAD)
        if broad:  # "everywhere now": the narrower values close on approval as well
            seen = {int(r.id) for r in rows}
            rows = rows + [r for r in named if int(r.id) not in seen]
        self.retires.clear()
        for r in rows:
            part = part_retired(cur.reason, r.text or "")
            words = (f"#{r.id}, only “{part[0]}” — the rest stays current: “{part[1]}”"
                     if part is not None else row_words(r))
            item = QListWidgetItem(words)
            item.setToolTip(f"{words}\nvalid {fmt_time(r.valid_from)} → "
                            f"{fmt_time(r.valid_to, 'open')}")
            item.setForeground(themed_status_color(r.status))
            self.retires.addItem(item)
        if not rows:
            self.retires.addItem("nothing: a new key, or the same value as the current one")
            self.retires.item(0).setForeground(hint_color())
        elif any(r.object == cur.object for r in rows):  # same value retired: a removal
            self.info.setText(self.info.text() + "<br><b>Proposed removal</b>: the sentence says "
                              "this value no longer holds; approving retracts it.")
        fit_list(self.retires, len(rows))
        ambiguous = (cur.reason or "").startswith("which one is meant")
        cands = named if ambiguous else []
        for r in cands:
            item = QListWidgetItem(row_words(r))
            item.setToolTip(f"{row_words(r)}\nEnter: use this key")
            item.setData(CANDIDATE_ROLE, (r.subject or "", r.relation or ""))
            self.candidates.addItem(item)
        self.candidates.setVisible(bool(cands))
        self.candidates_heading.setVisible(bool(cands))
        fit_list(self.candidates, len(cands))
        self._fit_work()
        self.retires_loaded.emit(len(rows))

    def _use_candidate(self, item: QListWidgetItem) -> None:
        subject, relation = item.data(CANDIDATE_ROLE)
        self.subject.setText(subject)
        self.relation.setText(relation)
        self.object.setFocus()
        self.object.selectAll()

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
