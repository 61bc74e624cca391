"""The Help menu's answers: where the documentation is, which version this is, and where the
data lives (the data folder, the ledger, the settings and the token), with Open-folder buttons."""

from __future__ import annotations

import html
import platform
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from .. import __version__, access, paths
from .style import muted

ROOT = Path(__file__).resolve().parent.parent.parent  # a source checkout: README.md, docs/
DOCS = {"readme": "README.md", "app": "docs/APP.md", "connect": "docs/CONNECT.md",
        "security": "docs/SECURITY.md"}


def doc_path(which: str = "readme") -> Path | None:
    """The document on this machine (a source checkout or an install that ships docs/), or
    None where this copy has none."""
    for base in (ROOT, Path(getattr(sys, "_MEIPASS", ROOT))):
        p = base / DOCS[which]
        if p.is_file():
            return p
    return None


def open_doc(parent: QWidget, which: str = "readme") -> bool:
    """Open the document in the desktop's viewer; say where it is when this copy has none."""
    p = doc_path(which)
    if p is not None and QDesktopServices.openUrl(QUrl.fromLocalFile(str(p))):
        return True
    box = QMessageBox(QMessageBox.Icon.Information, "Documentation",
                      (f"Could not open {p}: no program to show it is set up on this desktop."
                       if p is not None else
                       "This copy of MemStrata has no documentation files installed. The "
                       f"guide is {DOCS[which]} in MemStrata's source; `memstrata --help` lists "
                       "the commands, and Memory → Connect a tool… shows each tool's set-up."),
                      parent=parent)
    box.setObjectName("docs_box")
    box.open()
    return False


def about_text(engine: Any) -> str:
    from PySide6 import __version__ as pyside

    loc = getattr(engine, "location", None) or getattr(engine, "path", "") or "not open"
    emb = getattr(getattr(engine, "embedder", None), "name", "")
    return (f"<h3>MemStrata desktop {html.escape(__version__)}</h3>"
            "<p>A local memory layer for AI coding tools that knows which facts are still "
            "true.</p>"
            f"<p>Ledger: {html.escape(str(loc))}"
            + (f"<br>Embedder: {html.escape(emb)}" if emb else "")
            + f"<br>Python {html.escape(platform.python_version())} · PySide6 "
            f"{html.escape(pyside)} · Qt {html.escape(_qt_version())} · "
            f"{html.escape(platform.system())}</p>")


def _qt_version() -> str:
    from PySide6.QtCore import qVersion

    return str(qVersion())


def show_about(parent: QWidget, engine: Any) -> QMessageBox:
    box = QMessageBox(parent)
    box.setObjectName("about_box")
    box.setWindowTitle("About MemStrata")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_text(engine))
    box.setIconPixmap(parent.windowIcon().pixmap(64))
    box.open()
    return box


def data_places(engine: Any) -> list[tuple[str, str, Path | None, str]]:
    """(what, shown text, the folder to open or None, a note) for each place data lives."""
    home = paths.data_dir()
    ledger_path = getattr(engine, "path", None) if engine is not None else None
    location = getattr(engine, "location", None) if engine is not None else None
    places: list[tuple[str, str, Path | None, str]] = [
        ("Data folder", str(home), home,
         f"Holds the default ledger, the settings and the token; {paths.ENV_HOME}=DIR moves it.")]
    if ledger_path is not None:
        lp = Path(ledger_path)
        places.append(("Ledger in use", str(lp), lp.parent,
                       "One SQLite file (with -wal and -shm beside it while open): every fact "
                       "and its history."))
    elif location:
        places.append(("Ledger in use", str(location), None,
                       "A team ledger on a PostgreSQL server: nothing of it is kept here."))
    places.append(("Settings", str(paths.settings_path()), home,
                   "settings.json: what File → Settings… saves."))
    places.append(("Access token", str(paths.token_path()), home,
                   f"For the management API and the MCP write tools ({access.ENV_TOKEN}); "
                   "readable by you only."))
    return places


class DataPlacesDialog(QDialog):
    """Help → Where my data lives: each place with its path, Open folder and Copy."""

    def __init__(self, engine: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("data_places")
        self.setWindowTitle("Where my data lives")
        self.opened: list[Path] = []
        grid = QGridLayout()
        grid.setColumnStretch(1, 1)
        self.fields: dict[str, QLineEdit] = {}
        self.open_buttons: dict[str, QPushButton] = {}
        for i, (what, text, folder, note) in enumerate(data_places(engine)):
            grid.addWidget(QLabel(f"<b>{html.escape(what)}</b>"), 2 * i, 0)
            field = QLineEdit(text)
            field.setReadOnly(True)
            field.setCursorPosition(0)
            field.setToolTip(text)
            grid.addWidget(field, 2 * i, 1)
            copy = QPushButton("Copy")
            copy.setToolTip(f"Copy the path of the {what.lower()}")
            copy.clicked.connect(lambda _c=False, t=text: QGuiApplication.clipboard().setText(t))
            grid.addWidget(copy, 2 * i, 2)
            if folder is not None:
                open_button = QPushButton("Open folder")
                open_button.setToolTip(f"Show {folder} in the file manager")
                open_button.clicked.connect(lambda _c=False, f=folder: self.open_folder(f))
                grid.addWidget(open_button, 2 * i, 3)
                self.open_buttons[what] = open_button
            grid.addWidget(muted(note), 2 * i + 1, 1, 1, 3)
            self.fields[what] = field
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(muted("Nothing leaves this machine. A backup is a copy of the ledger "
                               "file taken while MemStrata is closed, or what <code>memstrata "
                               "export</code> writes."))
        layout.addLayout(grid)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self.resize(760, self.sizeHint().height())

    def open_folder(self, folder: Path) -> bool:
        self.opened.append(folder)
        return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))))
