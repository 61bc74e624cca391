"""Settings dialog built from the declared `SETTINGS`: each shown as its kind wants
(settings_fields.py), in sections, with its help; a refused value says why in words."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from memstrata_app import access, paths
from memstrata_app.settings import BY_NAME, SETTINGS, Setting, Settings, SettingsError

from .settings_fields import (
    FIELDS,
    OLLAMA,
    SECTIONS,
    Field,
    field_for,
    in_words,
    model_error,
    range_words,
)
from .style import heading, muted

LABELS = {s.name: field_for(s).label for s in SETTINGS}
ERROR_STYLE = "color: #c8553d;"
Editor = QSpinBox | QDoubleSpinBox | QCheckBox | QLineEdit | QComboBox


class SettingsDialog(QDialog):
    """One row per declared setting; Save validates every value first and saves only if all
    pass (and stays off while a field is refused)."""

    def __init__(self, settings: Settings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("settings_dialog")
        self.setWindowTitle("MemStrata settings")
        self.setMinimumWidth(560)
        self.settings = settings
        self.changed: dict[str, Any] = {}
        self.editors: dict[str, Editor] = {}
        self.models: dict[str, QLineEdit] = {}  # the model of an "ollama:<model>" choice
        self.errors: dict[str, QLabel] = {}
        self._initial = settings.as_dict()
        body = QWidget()
        body.setObjectName("settings_body")
        form = QFormLayout(body)  # one form: the labels of every section line up
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        declared = {s.name: s for s in SETTINGS}
        ordered = [n for n in FIELDS if n in declared] + [n for n in declared if n not in FIELDS]
        for section in SECTIONS:
            names = [n for n in ordered if field_for(declared[n]).section == section]
            form.addRow(heading(section))
            for name in names:
                s, f = declared[name], field_for(declared[name])
                label = QLabel(f.label + ":")
                label.setToolTip(s.help)
                row = self._row(s, f)
                label.setBuddy(self.editors[s.name])
                form.addRow(label, row)
            if section == "App":
                home = QLabel(str(paths.data_dir()))
                home.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                home.setToolTip(f"Set {paths.ENV_HOME} to keep the ledger and settings "
                                "elsewhere.")
                form.addRow("Data folder:", home)
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

    # --- building ---------------------------------------------------------------------------
    def _token_row(self) -> QWidget:
        """The install's token, hidden until Show, with a copy button (for scripts and MCP)."""
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        field = QLineEdit()
        field.setObjectName("access_token")
        field.setReadOnly(True)
        field.setEchoMode(QLineEdit.EchoMode.Password)
        field.setToolTip("The management API (/memstrata/v1/*) asks for it as "
                         "'Authorization: Bearer <token>'; MCP configs may set it as "
                         f"{access.ENV_TOKEN}. Stored in {paths.TOKEN_NAME} in the data folder.")
        try:
            field.setText(access.load_token())
        except access.TokenError as e:
            field.setPlaceholderText(str(e))
        show = QPushButton("Show")
        show.setObjectName("show_access_token")
        show.setCheckable(True)
        show.setEnabled(bool(field.text()))
        show.setToolTip("Show the token (anyone who sees it can change the ledger through the "
                        "management API)")

        def toggled(on: bool) -> None:
            field.setEchoMode(QLineEdit.EchoMode.Normal if on else QLineEdit.EchoMode.Password)
            show.setText("Hide" if on else "Show")

        show.toggled.connect(toggled)
        copy = QPushButton("Copy")
        copy.setObjectName("copy_access_token")
        copy.setEnabled(bool(field.text()))
        copy.setToolTip("Copy the token to the clipboard (it stays hidden here)")
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(field.text()))
        row.addWidget(field, 1)
        row.addWidget(show)
        row.addWidget(copy)
        self.token_field, self.show_token_button = field, show
        return box

    def _editor(self, s: Setting, f: Field) -> tuple[Editor, QWidget]:
        """The widget for the setting's kind, and what goes in the form (it, or a row of it)."""
        name, value = s.name, self.settings.get(s.name)
        editor: Editor
        if f.kind == "bool":
            editor = QCheckBox(s.help)  # its help is its sentence: no hint line under it
            editor.setChecked(bool(value))
            return editor, editor
        if f.kind in ("int", "float"):
            if f.kind == "int":
                editor = QSpinBox()
                editor.setRange(int(f.lo), int(f.hi))
                editor.setSingleStep(int(f.step))
                editor.setValue(int(value))
            else:
                editor = QDoubleSpinBox()
                editor.setDecimals(f.decimals)
                editor.setRange(f.lo, f.hi)
                editor.setSingleStep(f.step)
                editor.setValue(float(value))
            editor.setSuffix(f.suffix)
            editor.setSpecialValueText(f.special)
            editor.setGroupSeparatorShown(False)
            editor.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToPreviousValue)
            editor.setMinimumWidth(140)
            editor.lineEdit().textChanged.connect(lambda _t, n=name: self._validate(n))
            editor.valueChanged.connect(lambda _v, n=name: self._validate(n))  # set, not typed
            editor.editingFinished.connect(lambda n=name: self._validate(n))
            return editor, _left(editor)
        if f.kind == "choice":
            editor = QComboBox()
            for choice, words in f.choices:
                editor.addItem(words, choice)
            model = QLineEdit()
            model.setObjectName(f"setting_{name}_model")
            model.setPlaceholderText(f"model, e.g. {f.model_hint}")
            model.setToolTip("The Ollama model's name, as `ollama list` shows it")
            model.textChanged.connect(lambda _t, n=name: self._validate(n))
            self.models[name] = model
            editor.currentIndexChanged.connect(lambda _i, n=name: self._on_choice(n))
            box = QWidget()
            row = QHBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(editor, 2)
            row.addWidget(model, 1)
            self.editors[name] = editor
            self._set_choice(name, str(value))
            return editor, box
        editor = QLineEdit(str(value))
        editor.setPlaceholderText(f.placeholder)
        editor.textChanged.connect(lambda _t, n=name: self._validate(n))
        if f.kind != "path":
            return editor, editor
        browse = QPushButton("Browse…")
        browse.setToolTip("Pick a ledger file (a new name creates one when the app next starts)")
        browse.clicked.connect(lambda: self._browse(editor))
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(editor, 1)
        row.addWidget(browse)
        return editor, box

    def _row(self, s: Setting, f: Field) -> QWidget:
        editor, shown = self._editor(s, f)
        editor.setObjectName(f"setting_{s.name}")
        editor.setToolTip(s.help)
        self.editors[s.name] = editor
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(1)
        v.addWidget(shown)
        if f.kind != "bool":
            v.addWidget(muted(f.hint or s.help))  # theme-aware, at readable contrast
        error = QLabel()
        error.setObjectName(f"error_{s.name}")
        error.setStyleSheet(ERROR_STYLE)
        error.setWordWrap(True)
        error.setVisible(False)
        self.errors[s.name] = error
        v.addWidget(error)
        return box

    def _browse(self, editor: QLineEdit) -> None:
        start = editor.text().strip() or str(paths.db_path())
        path, _ = QFileDialog.getSaveFileName(
            self, "The ledger to open at start", start,
            "Ledgers (*.db *.sqlite *.sqlite3);;All files (*)",
            options=QFileDialog.Option.DontConfirmOverwrite)
        if path:
            editor.setText(path)

    # --- choices with a model -----------------------------------------------------------------
    def _set_choice(self, name: str, value: str) -> None:
        combo = self.editors[name]
        assert isinstance(combo, QComboBox)
        if value.startswith(OLLAMA):
            choice, model = OLLAMA, value[len(OLLAMA):]
        else:
            choice, model = ("static" if value.startswith("static") else value), ""
        i = combo.findData(choice)
        combo.setCurrentIndex(i if i >= 0 else 0)
        if name in self.models:
            self.models[name].setText(model or (self.models[name].text() if i < 0 else ""))
        self._on_choice(name)

    def _on_choice(self, name: str) -> None:
        combo, model = self.editors.get(name), self.models.get(name)
        if not isinstance(combo, QComboBox) or model is None:
            return
        ollama = combo.currentData() == OLLAMA
        model.setVisible(ollama)
        if ollama and not model.text():
            model.setText(field_for(BY_NAME[name]).model_hint)
        if name in self.errors:
            self._validate(name)

    # --- values -------------------------------------------------------------------------------
    def value(self, name: str) -> Any:
        editor = self.editors[name]
        if isinstance(editor, QCheckBox):
            return editor.isChecked()
        if isinstance(editor, QSpinBox):
            return editor.value()
        if isinstance(editor, QDoubleSpinBox):
            before = self._initial.get(name)  # shown rounded: untouched, it keeps its digits
            if isinstance(before, float) and round(before, editor.decimals()) == editor.value():
                return before
            return editor.value()
        if isinstance(editor, QComboBox):
            choice = str(editor.currentData())
            return choice + self.models[name].text().strip() if choice == OLLAMA else choice
        return editor.text().strip()

    def set_value(self, name: str, value: Any) -> None:
        """Put `value` in the field as if typed (a number out of range stays, refused)."""
        editor = self.editors[name]
        if isinstance(editor, QCheckBox):
            editor.setChecked(bool(value))
        elif isinstance(editor, QSpinBox | QDoubleSpinBox):
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = None
            if number is not None and editor.minimum() <= number <= editor.maximum():
                if isinstance(editor, QSpinBox):
                    editor.setValue(int(number))
                else:
                    editor.setValue(number)
            else:
                editor.lineEdit().setText(str(value))
        elif isinstance(editor, QComboBox):
            self._set_choice(name, str(value))
        else:
            editor.setText(str(value))
        self._validate(name)

    def _validate(self, name: str) -> str | None:
        """Check one field; show and return the reason it is refused, in words."""
        editor, f = self.editors[name], field_for(BY_NAME[name])
        reason: str | None = None
        if isinstance(editor, QSpinBox | QDoubleSpinBox) and not editor.hasAcceptableInput():
            reason = range_words(f, name)
        elif isinstance(editor, QComboBox) and editor.currentData() == OLLAMA:
            reason = model_error(self.models[name].text().strip())
        if reason is None:
            try:
                Settings(None).set(name, self.value(name))
            except SettingsError as e:
                reason = in_words(name, str(e).split(": ", 1)[-1])
        error = self.errors.get(name)
        if error is not None:
            error.setText(reason or "")
            error.setVisible(reason is not None)
        target = self.models.get(name) if isinstance(editor, QComboBox) else editor
        if target is not None:
            target.setProperty("refused", reason is not None)
            target.setStyleSheet("" if reason is None else "border: 1px solid #c8553d;")
        self._refused_changed()
        return reason

    def _refused_changed(self) -> None:
        bad = [n for n, e in self.errors.items() if e.text()]
        if not hasattr(self, "save_button"):
            return
        self.save_button.setEnabled(not bad)
        self.save_button.setToolTip("" if not bad else "Fix the fields marked in red first")
        if bad:
            self.message.setText("Not saved yet: " + "; ".join(
                f"{LABELS[n]} {self.errors[n].text()}" for n in bad))
        elif self.message.text().startswith("Not saved"):
            self.message.setText("")

    def save(self) -> None:
        """Refuse (and say why) if any value is invalid; otherwise store all and save the file."""
        bad = {name: r for name in self.editors if (r := self._validate(name)) is not None}
        if bad:
            self.message.setText("Not saved: " + "; ".join(
                f"{LABELS[n]} {r}" for n, r in bad.items()))
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


def _left(widget: QWidget) -> QWidget:
    """`widget` at its own width, on the left of the form's field column."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(widget)
    row.addStretch(1)
    return box

