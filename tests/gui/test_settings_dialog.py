"""The Settings dialog: every setting with a label in words and the widget its kind wants (spin
boxes with the declared range, lists for fixed choices), refusals in words (never Python's), and
the access token hidden until shown."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from memstrata_app.settings import SETTINGS, Settings, SettingsError

PYTHON_WORDS = re.compile(r"invalid literal|could not convert|base 10|Traceback|object has no|"
                          r"NoneType|unsupported operand|\bint\(\)|\bfloat\(\)")


@pytest.fixture
def dialog(qtbot: Any, settings: Any) -> Any:
    from memstrata_app.gui.settings_dialog import SettingsDialog

    dlg = SettingsDialog(settings)
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def accepted(name: str, value: Any) -> bool:
    try:
        Settings(None).set(name, value)
    except SettingsError:
        return False
    return True


def test_every_setting_has_words_and_the_widget_its_kind_wants(dialog: Any) -> None:
    from memstrata_app.gui.settings_dialog import LABELS
    from memstrata_app.gui.settings_fields import FIELDS, OLLAMA

    assert set(FIELDS) == {s.name for s in SETTINGS}, "a setting without its field"
    for s in SETTINGS:
        label, editor = LABELS[s.name], dialog.editors[s.name]
        assert "_" not in label and label[0].isupper(), label
        assert editor.toolTip() == s.help
        f = FIELDS[s.name]
        if f.kind in ("int", "float"):
            assert isinstance(editor, QSpinBox if f.kind == "int" else QDoubleSpinBox), s.name
            lo, hi = editor.minimum(), editor.maximum()
            assert accepted(s.name, lo) and accepted(s.name, hi), s.name  # the declared range
            step = 1 if f.kind == "int" else 10 ** -f.decimals
            assert not accepted(s.name, lo - step) and not accepted(s.name, hi + step), s.name
        elif f.kind == "choice":
            assert isinstance(editor, QComboBox) and not editor.isEditable(), s.name
            for i in range(editor.count()):  # every choice is a value the setting takes
                value = editor.itemData(i)
                assert accepted(s.name, value + f.model_hint if value == OLLAMA else value)
        elif f.kind == "bool":
            assert isinstance(editor, QCheckBox)
        else:
            assert isinstance(editor, QLineEdit)
    assert isinstance(dialog.editors["embedder"], QComboBox)
    assert isinstance(dialog.editors["retrieval"], QComboBox)
    assert isinstance(dialog.editors["update_judge"], QComboBox)
    assert dialog.editors["audit_log_days"].suffix() == " days"
    assert dialog.editors["audit_log_days"].specialValueText() == "off (no log)"
    assert dialog.editors["injection_k"].suffix() == " facts"


def test_a_word_in_a_number_field_is_refused_in_words(qtbot: Any, dialog: Any) -> None:
    spin = dialog.editors["injection_k"]
    spin.lineEdit().setText("five")  # what a paste (or a script) can put there
    dialog._validate("injection_k")
    error = dialog.errors["injection_k"].text()
    assert error == "must be a whole number from 1 to 50 (facts)"
    assert not dialog.save_button.isEnabled()
    dialog.save()
    assert dialog.isVisible() and not PYTHON_WORDS.search(dialog.message.text())
    assert "Facts per request must be a whole number from 1 to 50" in dialog.message.text()
    assert Settings.load().get("injection_k") == 5  # nothing saved
    spin.setValue(7)
    assert not dialog.errors["injection_k"].isVisible() and dialog.save_button.isEnabled()


def test_an_untouched_dialog_changes_nothing(dialog: Any) -> None:
    dialog.save()
    assert dialog.changed == {}  # the judge's 0.985 is not rounded to the spin box's digits


def test_the_embedder_and_the_judge_are_chosen_from_a_list(qtbot: Any, dialog: Any) -> None:
    from memstrata_app.gui.settings_fields import OLLAMA

    combo, model = dialog.editors["embedder"], dialog.models["embedder"]
    assert combo.currentData() == "local" and not model.isVisible()
    combo.setCurrentIndex(combo.findData(OLLAMA))
    assert model.isVisible() and model.text() == "nomic-embed-text"
    model.setText("")
    assert dialog.errors["embedder"].text().startswith("needs a model name")
    model.setText("nomic embed")
    assert "without spaces" in dialog.errors["embedder"].text()
    model.setText("mxbai-embed-large")
    judge = dialog.editors["update_judge"]
    judge.setCurrentIndex(judge.findData("off"))
    dialog.editors["retrieval"].setCurrentIndex(dialog.editors["retrieval"].findData("vector"))
    dialog.save()
    assert not dialog.isVisible()
    saved = Settings.load()
    assert saved.get("embedder") == "ollama:mxbai-embed-large"
    assert saved.get("update_judge") == "off" and saved.get("retrieval") == "vector"
    assert dialog.changed == {"embedder": "ollama:mxbai-embed-large", "update_judge": "off",
                              "retrieval": "vector"}


def test_the_token_is_hidden_until_shown_and_copies(qtbot: Any, dialog: Any) -> None:
    from memstrata_app import access

    token = access.load_token()
    field = dialog.token_field
    assert field.echoMode() == QLineEdit.EchoMode.Password
    assert token not in field.displayText()
    dialog.show_token_button.click()
    assert field.echoMode() == QLineEdit.EchoMode.Normal and field.displayText() == token
    dialog.show_token_button.click()
    assert field.echoMode() == QLineEdit.EchoMode.Password
    dialog.findChild(type(dialog.show_token_button), "copy_access_token").click()
    assert QGuiApplication.clipboard().text() == token


TEXT_FIELDS = [s.name for s in SETTINGS if isinstance(s.default, str)]
NUMBER_FIELDS = [s.name for s in SETTINGS
                 if isinstance(s.default, int | float) and not isinstance(s.default, bool)]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(TEXT_FIELDS + NUMBER_FIELDS), typed=st.text(max_size=40))
def test_whatever_is_typed_the_answer_is_in_words(dialog: Any, name: str, typed: str) -> None:
    """Any text in any field: accepted, or refused with the declaration's words."""
    dialog.set_value(name, typed)
    reason = dialog._validate(name)
    if reason is not None:
        assert not PYTHON_WORDS.search(reason), (name, typed, reason)
        assert len(reason) > 12, (name, typed, reason)
        assert not dialog.save_button.isEnabled()
    dialog.set_value(name, Settings(None).get(name))  # back to a good value for the next
    assert dialog._validate(name) is None


def test_what_waits_for_a_restart_is_named_in_words(qtbot: Any, tmp_path: Any,
                                                    make_window: Any) -> None:
    from memstrata_app.gui.dialogs import apply_settings

    win = make_window(tmp_path / "ledger.db")
    apply_settings(win, {"ollama_url": "http://127.0.0.1:11500", "chat_model": "llama3.2"})
    message = win.statusBar().currentMessage()
    assert message.startswith("Saved. Ollama URL and Chat model for tests take effect")
    assert "_" not in message
