"""The Models tab's widgets and layout (what Qt Designer's setupUi would hold): `build` makes
them as attributes of the view; the view (models.py) connects them and holds the behaviour."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from .style import heading, muted

KEEP_ALIVE = (("5 minutes", "5m"), ("30 minutes", "30m"), ("1 hour", "1h"),
              ("until Ollama stops", -1))
BANNER = {"error": "background: #f8d7da; color: #58151c; border: 1px solid #e4a5ab;",
          "warn": "background: #fff3cd; color: #4d3a02; border: 1px solid #e0c36a;",
          "ok": "background: #d1e7dd; color: #0a3622; border: 1px solid #9fd1b8;"}


class ModelsLayout(QWidget):
    """The tab's widgets, named for the tests and the focus chain, and their layout."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)

        self.status_label = QLabel("Looking for Ollama…")
        self.status_label.setObjectName("ollama_status")
        self.status_label.setWordWrap(True)
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.refresh_button = QPushButton("Check a&gain")
        self.refresh_button.setObjectName("ollama_refresh")
        top = QHBoxLayout()
        top.addWidget(self.status_label, 1)
        top.addWidget(self.refresh_button)

        self.missing = QLabel()  # not reachable: what to do on this OS
        self.missing.setObjectName("ollama_missing")
        self.missing.setWordWrap(True)
        self.missing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.missing.setStyleSheet("QLabel { border: none; background: transparent; "
                                   "color: #4d3a02; }")
        self.url_button = QPushButton("Set the Ollama U&RL…")
        self.url_button.setObjectName("ollama_url_button")
        self.url_button.setToolTip("Where Ollama runs (Settings → Ollama URL; OLLAMA_HOST "
                                   "overrides it)")
        self.copy_button = QPushButton("&Copy the install command")
        self.copy_button.setObjectName("ollama_copy_install")
        self.missing_box = QFrame()
        self.missing_box.setObjectName("ollama_missing_box")
        self.missing_box.setStyleSheet(f"QFrame#ollama_missing_box {{ {BANNER['warn']} }}")
        mb = QVBoxLayout(self.missing_box)
        mb.setContentsMargins(10, 8, 10, 8)
        mb.addWidget(self.missing)
        mrow = QHBoxLayout()
        mrow.addWidget(self.url_button)
        mrow.addWidget(self.copy_button)
        mrow.addStretch(1)
        mb.addLayout(mrow)
        self.missing_box.hide()

        self.advice = QLabel()  # an error in plain words (Ollama's text: never rich text)
        self.advice.setObjectName("ollama_advice")
        self.advice.setTextFormat(Qt.TextFormat.PlainText)
        self.advice.setWordWrap(True)
        self.advice_pull = QPushButton("Pull it")
        self.advice_pull.setObjectName("ollama_advice_pull")
        self.advice_box = QFrame()
        ab = QHBoxLayout(self.advice_box)
        ab.setContentsMargins(8, 6, 8, 6)
        ab.addWidget(self.advice, 1)
        ab.addWidget(self.advice_pull)
        self.advice_box.hide()

        self.needed = muted()
        self.needed.setObjectName("ollama_needed")
        self.needed.setWordWrap(True)

        self.installed = _table("ollama_installed",
                                     ("Model", "Size", "Parameters", "Quantization", "Use"))
        self.use_button = QPushButton("Use for e&xtraction and judging")
        self.use_button.setObjectName("ollama_use")
        self.use_button.setToolTip("The model the understanding layer asks, in the background, "
                                   "to structure prose and judge updates (Settings → Extraction "
                                   "model)")
        self.try_button = QPushButton("&Try it")
        self.try_button.setObjectName("ollama_try")
        self.try_button.setToolTip("A short prompt: time to first token and tokens/s")
        self.try_result = QLabel()
        self.try_result.setObjectName("ollama_try_result")
        self.try_result.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.use_button)
        row.addWidget(self.try_button)
        row.addWidget(self.try_result, 1)

        self.loaded = _table("ollama_loaded",
                                  ("Loaded model", "Memory", "Runs on", "On the GPU", "Until"))
        self.unload_button = QPushButton("&Unload")
        self.unload_button.setObjectName("ollama_unload")
        self.keep_alive = QComboBox()
        self.keep_alive.setObjectName("ollama_keep_alive")
        for text, value in KEEP_ALIVE:
            self.keep_alive.addItem(text, value)
        self.keep_button = QPushButton("Keep &loaded")
        self.keep_button.setObjectName("ollama_keep")
        self.keep_button.setToolTip("Load the selected installed model (else the selected "
                                    "loaded one) and keep it in memory this long")
        krow = QHBoxLayout()
        krow.addWidget(self.unload_button)
        krow.addWidget(QLabel("Keep:"))
        krow.addWidget(self.keep_alive)
        krow.addWidget(self.keep_button)
        krow.addStretch(1)

        self.pull_name = QLineEdit()
        self.pull_name.setObjectName("ollama_pull_name")
        self.pull_name.setPlaceholderText("model to pull, e.g. nomic-embed-text")
        self.pull_button = QPushButton("&Pull")
        self.pull_button.setObjectName("ollama_pull")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("ollama_cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setObjectName("ollama_progress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.progress.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.pull_status = muted()
        self.pull_status.setObjectName("ollama_pull_status")
        prow = QHBoxLayout()
        prow.addWidget(self.pull_name, 1)
        prow.addWidget(self.pull_button)
        prow.addWidget(self.progress, 2)
        prow.addWidget(self.cancel_button)

        self.missing_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.advice_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        outer = QVBoxLayout(self)
        outer.addLayout(top)
        outer.addWidget(self.missing_box)
        outer.addWidget(self.advice_box)
        self.body = QWidget()  # what needs a reachable Ollama; hidden without one
        outer.addWidget(self.body, 1)
        outer.addStretch(0)  # takes the room when the body is hidden
        layout = QVBoxLayout(self.body)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(heading("Installed models"))
        layout.addWidget(self.installed, 3)
        layout.addLayout(row)
        layout.addWidget(self.needed)
        layout.addWidget(heading("Loaded now (GPU or CPU)"))
        layout.addWidget(self.loaded, 2)
        layout.addLayout(krow)
        layout.addWidget(heading("Pull a model"))
        layout.addLayout(prow)
        layout.addWidget(self.pull_status)


def _table(name: str, headers: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().hide()
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    t.setTabKeyNavigation(False)
    t.setAlternatingRowColors(True)
    t.verticalHeader().setDefaultSectionSize(24)
    h = t.horizontalHeader()
    h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for col in range(1, len(headers)):
        h.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
    return t
