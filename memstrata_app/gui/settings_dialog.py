"""Settings dialog built from the declared `SETTINGS`; invalid values refused with the reason."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from memstrata_app import access, paths
from memstrata_app.settings import SETTINGS, Setting, Settings, SettingsError

from .style import muted

LABELS = {
    "ollama_url": "Ollama URL",
    "chat_model": "Chat model",
    "ledger": "Ledger",
    "embedder": "Embedder",
    "endpoint_port": "Endpoint port",
    "retrieval": "Retrieval",
    "injection_k": "Facts injected (k)",
    "injection_min_score": "Relevance floor",
    "ingest_assistant_turns": "Remember assistant turns",
    "memory_enabled": "Memory injection",
    "quarantine_threshold": "Quarantine threshold",
    "extraction_model": "Extraction model",
    "judge_threshold": "Update-judge threshold",
    "start_at_login": "Start at login",
    "start_endpoint": "Start endpoint with the app",
}
ERROR_STYLE = "color: #c8553d;"


class SettingsDialog(QDialog):
    """One row per declared setting; Save validates every value first and saves only if all pass."""

    def __init__(self, settings: Settings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("MemStrata settings")
        self.setMinimumWidth(560)
        self.settings = settings
        self.changed: dict[str, Any] = {}
        self.editors: dict[str, QLineEdit | QCheckBox] = {}
        self.errors: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        for s in SETTINGS:
            form.addRow(LABELS.get(s.name, s.name) + ":", self._row(s))
        home = QLabel(str(paths.data_dir()))
        home.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        home.setToolTip(f"Set {paths.ENV_HOME} to keep the ledger and settings elsewhere.")
        form.addRow("Data directory:", home)
        form.addRow("Access token:", self._token_row())
        self.message = QLabel()
        self.message.setObjectName("settings_message")
        self.message.setStyleSheet(ERROR_STYLE)
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        body = QWidget()
        body.setObjectName("settings_body")
        body.setLayout(form)
        scroll = QScrollArea()  # a small screen scrolls the settings, the buttons stay in view
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scroll = scroll
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry().size() if screen is not None else None
        want_h = body.sizeHint().height() + buttons.sizeHint().height() + 24
        if room is not None:
            self.resize(min(900, room.width() - 40), min(want_h, room.height() - 60))

    def _token_row(self) -> QWidget:
        """The install's token, read-only, with a copy button (for scripts and MCP configs)."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        field = QLineEdit()
        field.setObjectName("access_token")
        field.setReadOnly(True)
        field.setToolTip("The management API (/memstrata/v1/*) asks for it as "
                         "'Authorization: Bearer <token>'; MCP configs may set it as "
                         f"{access.ENV_TOKEN}. Stored in {paths.TOKEN_NAME} in the data directory.")
        try:
            field.setText(access.load_token())
        except access.TokenError as e:
            field.setPlaceholderText(str(e))
        copy = QPushButton("Copy")
        copy.setObjectName("copy_access_token")
        copy.setEnabled(bool(field.text()))
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(field.text()))
        row.addWidget(field, 1)
        row.addWidget(copy)
        self.token_field = field
        return box

    def _row(self, s: Setting) -> QWidget:
        value = self.settings.get(s.name)
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(1)
        editor: QLineEdit | QCheckBox
        if isinstance(s.default, bool):
            editor = QCheckBox(s.help)
            editor.setChecked(bool(value))
        else:
            editor = QLineEdit(str(value))
            editor.setToolTip(s.help)
            editor.textChanged.connect(lambda _t, name=s.name: self._validate(name))
        editor.setObjectName(f"setting_{s.name}")
        error = QLabel()
        error.setStyleSheet(ERROR_STYLE)
        policy = error.sizePolicy()
        policy.setRetainSizeWhenHidden(not isinstance(editor, QCheckBox))  # room kept for a reason
        error.setSizePolicy(policy)
        error.setVisible(False)
        self.editors[s.name], self.errors[s.name] = editor, error
        v.addWidget(editor)
        if not isinstance(editor, QCheckBox):
            hint = muted(s.help)  # theme-aware secondary text at readable contrast
            v.addWidget(hint)
        v.addWidget(error)
        return box

    def value(self, name: str) -> Any:
        editor = self.editors[name]
        return editor.isChecked() if isinstance(editor, QCheckBox) else editor.text().strip()

    def set_value(self, name: str, value: Any) -> None:
        editor = self.editors[name]
        if isinstance(editor, QCheckBox):
            editor.setChecked(bool(value))
        else:
            editor.setText(str(value))

    def _validate(self, name: str) -> str | None:
        """Check one field against its declaration; show and return the reason it is refused."""
        try:
            Settings(None).set(name, self.value(name))
            reason = None
        except SettingsError as e:
            reason = str(e).split(": ", 1)[-1]
        error, editor = self.errors[name], self.editors[name]
        error.setText(reason or "")
        error.setVisible(reason is not None)
        editor.setStyleSheet("" if reason is None else "border: 1px solid #c8553d;")
        return reason

    def save(self) -> None:
        """Refuse (and say why) if any value is invalid; otherwise store all and save the file."""
        bad = {name: r for name in self.editors if (r := self._validate(name)) is not None}
        if bad:
            self.message.setText("Not saved: " + "; ".join(
                f"{LABELS.get(n, n)} {r}" for n, r in bad.items()))
            first = next(iter(bad))
            self.editors[first].setFocus()
            return
        before = self.settings.as_dict()
        for name in self.editors:
            self.settings.set(name, self.value(name))
        after = self.settings.as_dict()
        self.changed = {k: v for k, v in after.items() if before.get(k) != v}
        self.settings.save()
        self.message.setText("")
        self.accept()

