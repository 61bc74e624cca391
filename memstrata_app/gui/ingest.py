"""Ingest tab: remember a statement by hand (with its `at` time), or bulk-import a file."""

from __future__ import annotations

import html
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QDateTimeEdit,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..notes_file import read_statements
from ..understood import by_sentence, render, retired_values, summary_line
from .import_report import ImportReport, ImportRun, tally
from .state import AppState
from .style import from_qdatetime, heading, muted, themed_status_color, to_qdatetime
from .worker import Operation

log = logging.getLogger(__name__)
Item = tuple[str, datetime | None]
IMPORT_CHUNK = 64  # statements per engine call: a cancel stops between two, keeping the account
# A result line takes the colour of the status its action leaves the row in (grey otherwise).
ACTION_COLOURS = {"novel": "active", "superseded": "active", "reinforced": "active",
                  "quarantined": "quarantined", "prose": "plain", "retracted": "retracted"}


class IngestView(QWidget):
    """Write path by hand; bulk imports run on the worker with progress and a Cancel button."""

    ingested = Signal(object)  # IngestResult
    import_finished = Signal(str, int)  # ("done" | "cancelled" | "failed", items written)

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self._job: Operation | None = None
        self.text = QPlainTextEdit()
        self.text.setObjectName("ingest_text")
        self.text.setTabChangesFocus(True)  # Tab moves on; a statement needs no tab character
        self.text.setPlaceholderText("The api-gateway listens on port 8443.\n"
                                     "From 1 March the rate limit is 500 requests per minute.")
        self.source = QLineEdit("app")
        self.source.setMaximumWidth(160)
        self.now = QCheckBox("now")
        self.now.setChecked(True)
        self.at = QDateTimeEdit(to_qdatetime(datetime.now(UTC)))
        self.at.setCalendarPopup(True)
        self.at.setDisplayFormat("yyyy-MM-dd HH:mm")
        self.at.setEnabled(False)
        self.now.toggled.connect(lambda on: self.at.setEnabled(not on))
        self.remember = QPushButton("&Remember")
        self.remember.setDefault(True)
        self.remember.setToolTip("Store what is typed above (Ctrl+Enter)")
        send = QShortcut(QKeySequence("Ctrl+Return"), self.text, self.submit_text)
        send.setContext(Qt.ShortcutContext.WidgetShortcut)
        self.remember.clicked.connect(self.submit_text)
        row = QHBoxLayout()
        source_label, at_label = QLabel("S&ource:"), QLabel("Said a&t:")
        source_label.setBuddy(self.source)
        at_label.setBuddy(self.now)
        row.addWidget(source_label)
        row.addWidget(self.source)
        row.addWidget(at_label)
        row.addWidget(self.now)
        row.addWidget(self.at)
        row.addStretch(1)
        row.addWidget(self.remember)
        self.results = QListWidget()
        self.results.setObjectName("ingest_results")
        self.import_button = QPushButton("Import fil&e…")
        self.import_button.clicked.connect(self._pick_file)
        self.progress = QProgressBar()
        self.progress.setObjectName("import_progress")
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_import)
        self.import_status = muted()
        self.last_import: ImportRun | None = None
        self.report: ImportReport | None = None
        self.report_button = QPushButton("Show the &last import's report")
        self.report_button.setObjectName("import_report_button")
        self.report_button.setToolTip("Each statement of the last import and what became of it")
        self.report_button.clicked.connect(self.show_report)
        self.report_button.setVisible(False)
        bulk = QHBoxLayout()
        bulk.addWidget(self.import_button)
        bulk.addWidget(self.progress, 1)
        bulk.addWidget(self.cancel_button)
        bulk.addWidget(self.report_button)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Tell memory something"))
        layout.addWidget(self.text, 1)
        layout.addLayout(row)
        layout.addWidget(heading("What the write path did"))
        layout.addWidget(self.results, 2)
        layout.addWidget(heading("Bulk import"))
        layout.addWidget(muted("A text file (one statement per line) or JSON lines with "
                               "{\"text\": …, \"at\": ISO time}. Runs in the background."))
        layout.addLayout(bulk)
        layout.addWidget(self.import_status)

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the text, source, time, Remember, results, import."""
        return [self.text, self.source, self.now, self.at, self.remember, self.results,
                self.import_button, self.cancel_button, self.report_button]

    def submit_text(self) -> None:
        text = self.text.toPlainText().strip()
        if not text:
            return
        source = self.source.text().strip() or "app"
        at, space = self.said_at(), self._state.space  # the switcher's space (None: global)
        self.remember.setEnabled(False)

        def run(e: Any) -> tuple[Any, dict[int, str | None]]:
            result = e.ingest(text, source, at, space)
            return result, retired_values(e, [result])  # "retired #3 (8080)"

        def done(out: tuple[Any, dict[int, str | None]]) -> None:
            result, olds = out
            self.remember.setEnabled(True)
            self.text.clear()
            self._show_result(result, text, olds)
            self.ingested.emit(result)

        def fail(exc: BaseException) -> None:
            self.remember.setEnabled(True)
            self.results.insertItem(0, f"Not stored: {exc}")

        self._state.client.submit(Operation("ingest", run, done, fail,
                                            writes=("ledger", "review")))

    def _show_result(self, result: Any, text: str = "",
                     old_values: dict[int, str | None] | None = None) -> None:
        """One line per submitted sentence, newest submission on top, sentences in order."""
        outcomes = by_sentence(result, text)
        for o in reversed(outcomes):
            self.results.insertItem(0, summary_line(o, old_values=old_values))
            item = self.results.item(0)
            item.setForeground(themed_status_color(ACTION_COLOURS.get(o.action, "superseded")))
            detail = "\n".join(render([o], old_values=old_values, judged=True))
            item.setToolTip(f"<pre>{html.escape(detail)}</pre>")  # the CLI's aligned lines
        if not outcomes:
            self.results.insertItem(0, "Nothing stored: no statements found")

    # --- bulk import --------------------------------------------------------------------------
    def _pick_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import statements", "",
                                              "Statements (*.txt *.md *.jsonl *.ndjson *.csv"
                                              " *.tsv);;All (*)")
        if path:
            self.import_file(Path(path))

    def said_at(self) -> datetime | None:
        """The "Said at" field's time, or None for now."""
        return None if self.now.isChecked() else from_qdatetime(self.at.dateTime())

    def import_file(self, path: Path) -> None:
        """Statements without their own time take the "Said at" field's."""
        try:
            items = read_statements(path)
        except (OSError, ValueError) as e:
            self.import_status.setText(f"Could not read {path.name}: {e}")
            return
        at = self.said_at()
        self.import_items([(text, t or at) for text, t in items], source=f"import:{path.name}",
                          name=path.name)

    def import_items(self, items: list[Item], source: str = "import",
                     name: str = "import") -> Operation:
        """Run `ingest_many` on the worker, a batch at a time (a cancel keeps the account of the
        batches written); progress shows here and Cancel stops it. When it ends, the import's
        report lists each statement with what became of it."""
        op = Operation("import", lambda e: None, writes=("ledger", "review"))
        space = self._state.space  # the switcher's space (None: global)

        def report(n: int, total: int) -> None:
            if op.report is not None:
                op.report(n, total)

        def run(e: Any) -> ImportRun:
            done = ImportRun(items, name=name)
            for start in range(0, len(items), IMPORT_CHUNK):
                if op.cancel.is_set():
                    done.cancelled = True
                    break
                done.results += e.ingest_many(
                    items[start:start + IMPORT_CHUNK], source, space=space,
                    progress=lambda n, _t, start=start: report(start + n, len(items)))
            done.old_values = retired_values(e, done.results)  # "retired #3 (8080)"
            return done

        op.fn = run
        op.progress = self._on_progress
        op.success = self._on_imported
        op.failure = self._on_import_failed
        self._job = op
        self.progress.setRange(0, max(len(items), 1))
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.cancel_button.setEnabled(True)
        self.import_button.setEnabled(False)
        self.import_status.setText(f"Importing {len(items)} statements…")
        return self._state.client.submit(op)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.import_status.setText(f"Imported {done:,} of {total:,}…")

    def cancel_import(self) -> None:
        if self._job is not None:
            self._job.cancel.set()
            self.cancel_button.setEnabled(False)
            self.import_status.setText("Cancelling…")

    def _on_import_failed(self, exc: BaseException) -> None:
        if type(exc).__name__ == "Cancelled":
            self._finish("cancelled", self.progress.value())
        else:
            self.import_status.setText(f"Import failed: {exc}")
            self._finish("failed", self.progress.value())

    def _on_imported(self, run: ImportRun) -> None:
        """Say what the import did, in a line here and statement by statement in its report."""
        self.last_import = run
        self.report_button.setVisible(True)
        self.report_button.setEnabled(True)
        self._finish("cancelled" if run.cancelled else "done", len(run.results))
        self.import_status.setText(tally(run.rows(), run) + " The report lists each statement.")
        self.show_report()

    def show_report(self) -> ImportReport | None:
        """Open (or bring forward) the last import's report."""
        if self.last_import is None:
            return None
        if self.report is not None:
            self.report.close()
            self.report.deleteLater()
        self.report = ImportReport(self.last_import, self)
        self.report.show()
        return self.report

    def _finish(self, how: str, n: int) -> None:
        self._job = None
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.import_button.setEnabled(True)
        if how == "done":
            self.import_status.setText(f"Imported {n:,} statements.")
        elif how == "cancelled":
            self.import_status.setText(f"Cancelled after {n:,} statements; "
                                       "those stay in the ledger.")
        self.import_finished.emit(how, n)
