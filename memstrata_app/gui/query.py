"""Query tab: ask a question and see exactly what the endpoint would inject, with scores."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..understood import doubted
from .state import AppState
from .style import accent_color, fmt_time, heading, muted, on_resize
from .worker import Operation

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 1000  # as the endpoint: it embeds only the end of a long turn
HEADERS = ("#", "Score", "Sentence", "Key", "Valid from", "Valid to", "ID")


Formatter = Callable[[list[Any], datetime | None, dict[int, int] | None], str]


def _fallback_block(hits: list[Any], as_of: datetime | None,
                    pending: dict[int, int] | None = None) -> str:
    lines = [f"Current facts (as of {as_of or datetime.now(UTC):%Y-%m-%d %H:%M}):"]
    lines += [f"- {h.text}" + (" (may be outdated: awaiting review)"
                               if pending and int(h.assertion_id) in pending else "")
              for h in hits]
    return "\n".join(lines)


def injection_formatter() -> Formatter:
    """The endpoint's own block renderer (`proxy.injection.format_block`), else a local stand-in."""
    try:
        from memstrata_app.proxy.injection import format_block
    except Exception as e:  # the endpoint's extra is not installed
        log.info("endpoint not importable, showing a plain block: %s", e)
        return _fallback_block

    def render(hits: list[Any], as_of: datetime | None,
               pending: dict[int, int] | None = None) -> str:
        return format_block(hits, now=as_of, pending=pending) or ""

    return render


class QueryView(QWidget):
    """Runs `engine.retrieve(q, k, as_of)` on the worker and shows hits and the injected block."""

    answered = Signal(list)  # the hits

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.hits: list[Any] = []
        self.pending: dict[int, int] = {}  # hit: the newer fact a review item may retire it for
        self.question = QLineEdit(placeholderText="Ask what a coding tool would ask, e.g. "
                                                  "“which port does the api gateway use?”")
        self.question.returnPressed.connect(self.run)
        self.k = QSpinBox()
        self.k.setRange(1, 50)
        self.k.setValue(int(state.settings.get("injection_k")))
        self.k.setPrefix("k = ")
        self.ask = QPushButton("&Retrieve")
        self.ask.clicked.connect(self.run)
        self.when = QLabel()

        top = QHBoxLayout()
        top.addWidget(self.question, 1)
        top.addWidget(self.k)
        top.addWidget(self.ask)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("query_hits")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().setDefaultSectionSize(24)
        for col, w in ((0, 30), (1, 60), (3, 260), (4, 120), (5, 120), (6, 50)):
            self.table.setColumnWidth(col, w)
        on_resize(self.table.viewport(), self._fit_columns)
        self.block = QPlainTextEdit()
        self.block.setObjectName("injected_block")
        self.block.setReadOnly(True)
        self.block.setTabChangesFocus(True)
        self.block.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.timing = muted()
        self.note = muted("A preview: it stores nothing. The endpoint first remembers the turn "
                          "(so a turn that states a new value is answered with it), then "
                          "retrieves exactly like this.")
        split = QSplitter()
        split.setOrientation(split.orientation().Vertical)
        top_w = QWidget()
        tv = QVBoxLayout(top_w)
        tv.setContentsMargins(0, 0, 0, 0)
        tv.addWidget(heading("Retrieved (what passes the ledger's validity filter)"))
        tv.addWidget(self.table)
        bottom_w = QWidget()
        bv = QVBoxLayout(bottom_w)
        bv.setContentsMargins(0, 0, 0, 0)
        bv.addWidget(heading("Injected into the request"))
        bv.addWidget(self.block)
        split.addWidget(top_w)
        split.addWidget(bottom_w)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.when)
        layout.addWidget(split, 1)
        layout.addWidget(self.timing)
        layout.addWidget(self.note)
        state.as_of_changed.connect(self._on_as_of)
        state.space_changed.connect(lambda _s: self._on_as_of(self._state.as_of))
        state.known_at_changed.connect(lambda _k: self._on_as_of(self._state.as_of))
        self._format: Formatter | None = None
        self._on_as_of(state.as_of)

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the question, k, Retrieve, the hits, the block."""
        return [self.question, self.k, self.ask, self.table, self.block]

    def _fit_columns(self) -> None:
        """A narrow window: the sentence keeps room; ID and valid-to give way (in the block)."""
        w = self.table.viewport().width()
        self.table.setColumnHidden(6, w < 900)
        self.table.setColumnHidden(5, w < 820)
        self.table.setColumnWidth(3, max(150, min(420, int(w * 0.26))))

    def _on_as_of(self, t: datetime | None) -> None:
        if t and self._state.known_mode:
            parts = [f"Answering as the ledger knew it at {fmt_time(t)}: statements and "
                     "corrections recorded later are not seen"]
        else:
            parts = ([f"Answering as of {fmt_time(t)} (move the as-of slider to change)"]
                     if t else [])
        space = self._state.space
        if space:
            parts.append(f"reading the space {space} and the global space, as a request "
                         f"in {space} would" if space != "global" else
                         "reading the global space only")
        self.when.setStyleSheet(f"color: {accent_color().name()}; font-weight: 600;")
        self.when.setText("; ".join(parts))
        self.when.setVisible(bool(parts))  # no empty line under the question

    def run(self) -> None:
        q = self.question.text().strip()[-MAX_QUERY_CHARS:]
        if not q:
            return
        k, space = self.k.value(), self._state.space
        as_of, known_at = self._state.valid_at, self._state.known_at
        started = time.perf_counter()
        self.ask.setEnabled(False)
        if not self._state.client.is_warm:
            self.timing.setText("Loading the embedder…")

        def done(got: tuple[list[Any], dict[int, int]]) -> None:
            self.ask.setEnabled(True)
            self._show(got[0], as_of or known_at, (time.perf_counter() - started) * 1000,
                       got[1])

        def fail(exc: BaseException) -> None:
            self.ask.setEnabled(True)
            self.timing.setText(f"Retrieval failed: {exc}")

        def retrieve(e: Any) -> tuple[list[Any], dict[int, int]]:
            if known_at is not None:
                return e.retrieve(q, k, space=space, known_at=known_at), {}
            hits = e.retrieve(q, k, as_of, space) if space else e.retrieve(q, k, as_of)
            return hits, doubted(e, hits, as_of)

        self._state.client.submit(Operation("retrieve", retrieve, done, fail))

    def _show(self, hits: list[Any], as_of: datetime | None, ms: float,
              pending: dict[int, int] | None = None) -> None:
        self.hits = list(hits)
        self.pending = dict(pending or {})
        self.table.setRowCount(len(hits))
        for i, h in enumerate(hits):
            key = f"{h.subject} · {h.relation} = {h.object}" if h.subject else "(plain fact)"
            newer = self.pending.get(int(h.assertion_id))
            text = h.text if newer is None else (
                f"{h.text}  — may be outdated: #{newer} may replace it (in review)")
            cells = (str(i + 1), f"{h.score:.3f}", text, key, fmt_time(h.valid_from),
                     fmt_time(h.valid_to, "open"), str(int(h.assertion_id)))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setToolTip(text)
                self.table.setItem(i, j, item)
        if self._format is None:  # imported on first use: the endpoint package is not light
            self._format = injection_formatter()
        floor = float(self._state.settings.get("injection_min_score"))
        kept = [h for h in hits if h.score >= floor]  # the endpoint's relevance floor
        self.block.setPlainText(self._format(kept, as_of, self.pending) if kept
                                else "(nothing is injected)")
        cut = len(hits) - len(kept)
        self.timing.setText(f"{len(hits)} hit{'s' if len(hits) != 1 else ''} in {ms:.0f} ms "
                            "(round trip through the worker)"
                            + (f"; {cut} below the relevance floor {floor:.2f} not injected"
                               if cut else ""))
        self.answered.emit(self.hits)
