"""The account of a bulk import: each statement with what became of it (what it retired, what
went to review, what was not stored and why), filterable, and copied as the CLI prints it."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..understood import (
    SentenceOutcome,
    action_word,
    by_sentence,
    details,
    key_text,
    quote,
    render,
)
from .style import fmt_time, muted, on_resize, themed_status_color

HEADERS = ("Line", "Said at", "Outcome", "Key and value", "What happened", "Sentence")
# The action words that change what memory holds: a value retired, or a proposal for review.
CHANGING = frozenset({"superseded", "retracted", "quarantined"})
FILTERS = (  # (label, predicate name)
    ("Every statement", "all"),
    ("What changed something (retired, superseded, sent to review)", "changed"),
    ("Sent to review", "review"),
    ("Not stored", "skipped"),
)
OUTCOME_COLOURS = {"novel": "active", "superseded": "active", "reinforced": "active",
                   "quarantined": "quarantined", "prose": "plain", "retracted": "retracted",
                   "not stored": "rejected"}


@dataclass(frozen=True)
class ReportRow:
    """One sentence of one imported statement (its line in the file) and its outcome."""

    line: int  # 1-based: the statement's place in the import
    at: datetime | None  # when it was said (None: now)
    outcome: SentenceOutcome

    @property
    def changed(self) -> bool:
        """It retired a value, superseded one, or went to the review queue."""
        o = self.outcome
        return o.stored and any(action_word(a) in CHANGING or a.retired for a in o.actions)

    @property
    def to_review(self) -> bool:
        return self.outcome.stored and any(action_word(a) == "quarantined"
                                           for a in self.outcome.actions)

    def shown_by(self, which: str) -> bool:
        return {"all": True, "changed": self.changed, "review": self.to_review,
                "skipped": not self.outcome.stored}[which]


@dataclass
class ImportRun:
    """What a bulk import did: per statement its result; cancelled after `len(results)`."""

    items: Sequence[tuple[str, datetime | None]]
    results: list[Any] = field(default_factory=list)  # IngestResult, one per finished item
    old_values: dict[int, str | None] = field(default_factory=dict)
    cancelled: bool = False
    name: str = "import"

    def rows(self) -> list[ReportRow]:
        out = []
        for n, ((text, at), res) in enumerate(zip(self.items, self.results, strict=False), 1):
            outcomes = by_sentence(res, text)
            if not outcomes:  # nothing read from it at all
                out.append(ReportRow(n, at, SentenceOutcome(text, skipped=_NothingFound())))
            out.extend(ReportRow(n, at, o) for o in outcomes)
        return out


@dataclass(frozen=True)
class _NothingFound:
    kind: str = "empty"
    reason: str = "no statement found in it"
    text: str = ""


def what_happened(o: SentenceOutcome, old_values: Mapping[int, str | None]) -> str:
    """The parenthetical facts of each action (retired #3 (8080); why; how it was read), or
    why the sentence was not stored."""
    if not o.stored:
        return str(o.skipped.reason or o.skipped.kind)
    parts = []
    for a in o.actions:
        said = details(a, old_values=old_values)
        if action_word(a) == "quarantined":
            said.insert(0, "waits in the review queue")
        parts.append("; ".join(said))
    return " | ".join(p for p in parts if p)


def tally(rows: Sequence[ReportRow], run: ImportRun) -> str:
    """One line: how many statements, and what became of their sentences."""
    words: Counter[str] = Counter()
    retired = 0
    for r in rows:
        if not r.outcome.stored:
            words["not stored"] += 1
            continue
        for a in r.outcome.actions:
            words[action_word(a)] += 1
            retired += len(a.retired)
    done = len(run.results)
    head = (f"Cancelled after {done:,} of {len(run.items):,} statements (those stay in the "
            "ledger)" if run.cancelled
            else f"Imported {done:,} statement{'s' if done != 1 else ''}")
    order = ("novel", "superseded", "reinforced", "quarantined", "retracted", "history",
             "prose", "duplicate", "not stored")
    counted = [f"{words[w]:,} {'sent to review' if w == 'quarantined' else w}"
               for w in (*order, *sorted(set(words) - set(order))) if words[w]]
    tail = f"; {retired:,} older value{'s' if retired != 1 else ''} retired" if retired else ""
    return f"{head}: {', '.join(counted) or 'nothing stored'}{tail}."


def report_text(rows: Sequence[ReportRow], run: ImportRun) -> str:
    """The account as the CLI prints it: per statement its line and time, then each sentence
    quoted and one aligned line per action (`understood.render`)."""
    lines = [tally(run.rows(), run)]
    last = None
    for r in rows:
        if r.line != last:
            last = r.line
            lines.append(f"line {r.line}" + (f" (said {fmt_time(r.at)})" if r.at else ""))
        lines.extend("  " + x for x in render([r.outcome], old_values=run.old_values))
    return "\n".join(lines) + "\n"


class ImportReport(QDialog):
    """Non-modal: the import's statements in a table, a filter, and Copy."""

    def __init__(self, run: ImportRun, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("import_report")
        self.setWindowTitle(f"What the import did: {run.name}")
        self.run = run
        self.all_rows = run.rows()
        self.shown: list[ReportRow] = []
        self.summary = QLabel(html.escape(tally(self.all_rows, run)))
        self.summary.setObjectName("import_summary")
        self.summary.setWordWrap(True)
        self.summary.setStyleSheet("font-weight: 600;")
        self.filter = QComboBox()
        self.filter.setObjectName("import_filter")
        for label, which in FILTERS:
            self.filter.addItem(label, which)
        self.filter.currentIndexChanged.connect(lambda _i: self._fill())
        show = QLabel("&Show:")
        show.setBuddy(self.filter)
        self.count = muted()
        top = QHBoxLayout()
        top.addWidget(show)
        top.addWidget(self.filter)
        top.addWidget(self.count, 1)
        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("import_rows")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)  # what happened
        header.setStretchLastSection(False)
        for col, w in ((0, 44), (1, 124), (2, 96), (3, 230), (5, 280)):
            self.table.setColumnWidth(col, w)
        on_resize(self.table.viewport(), self._fit_columns)
        self.table.itemSelectionChanged.connect(self._show_selected)
        self.detail = QPlainTextEdit()
        self.detail.setObjectName("import_detail")
        self.detail.setReadOnly(True)
        self.detail.setTabChangesFocus(True)
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.detail.setPlaceholderText("Select a statement: how it was read, as `memstrata "
                                       "ingest` prints it.")
        self.detail.setFixedHeight(self.detail.fontMetrics().lineSpacing() * 6 + 14)
        self.copy_button = QPushButton("&Copy the report")
        self.copy_button.setObjectName("copy_import_report")
        self.copy_button.setToolTip("Copy the statements shown, as `memstrata ingest` prints "
                                    "them, to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.detail)
        layout.addLayout(buttons)
        self.resize(1100, 560)
        if run.cancelled or any(r.changed for r in self.all_rows):
            self.filter.setCurrentIndex(1 if any(r.changed for r in self.all_rows) else 0)
        self._fill()

    def focus_chain(self) -> list[QWidget]:
        return [self.filter, self.table, self.detail, self.copy_button]

    def _fit_columns(self) -> None:
        """Narrow: the sentence gives way (it is in the detail below, and in the copy)."""
        w = self.table.viewport().width()
        self.table.setColumnHidden(5, w < 1000)
        self.table.setColumnHidden(1, w < 640)
        self.table.setColumnWidth(3, max(160, min(260, int(w * 0.24))))  # the key and value

    def _show_selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.shown):
            self.detail.clear()
            return
        r = self.shown[rows[0].row()]
        when = f" (said {fmt_time(r.at)})" if r.at else ""
        self.detail.setPlainText("\n".join([f"line {r.line}{when}", *render(
            [r.outcome], old_values=self.run.old_values, judged=True)]))

    def set_filter(self, which: str) -> None:
        self.filter.setCurrentIndex(next(i for i, (_l, w) in enumerate(FILTERS) if w == which))

    def _fill(self) -> None:
        which = str(self.filter.currentData())
        self.shown = [r for r in self.all_rows if r.shown_by(which)]
        self.table.setRowCount(len(self.shown))
        olds = self.run.old_values
        for i, r in enumerate(self.shown):
            o = r.outcome
            keys = "; ".join(key_text(a) for a in o.actions) if o.stored else ""
            cells = (str(r.line), fmt_time(r.at, "now"), o.action, keys,
                     what_happened(o, olds), quote(o.sentence))
            tip = "\n".join(render([o], old_values=olds, judged=True))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setToolTip(f"<pre>{html.escape(tip)}</pre>")
                if j == 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if j == 2:
                    item.setForeground(themed_status_color(
                        OUTCOME_COLOURS.get(o.action, "superseded")))
                self.table.setItem(i, j, item)
        total = len(self.all_rows)
        self.count.setText(f"{len(self.shown):,} of {total:,} sentence{'s' if total != 1 else ''}"
                           if which != "all" else f"{total:,} sentence{'s' if total != 1 else ''}")
        if self.shown:
            self.table.selectRow(0)
        self._show_selected()

    def text(self) -> str:
        return report_text(self.shown, self.run)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
        self.count.setText(self.count.text().split(" · copied")[0] + " · copied")
