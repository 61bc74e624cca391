"""The app's settings dialog shows the install's token, read-only, with a copy button."""

from __future__ import annotations

from typing import Any

import pytest

from memstrata_app import access
from memstrata_app.settings import Settings

pytest.importorskip("PySide6")

pytestmark = pytest.mark.timeout(30)


def test_settings_dialog_shows_and_copies_the_token(qtbot: Any) -> None:
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QLineEdit, QPushButton

    from memstrata_app.gui.settings_dialog import SettingsDialog

    dlg = SettingsDialog(Settings(None))
    qtbot.addWidget(dlg)
    field = dlg.findChild(QLineEdit, "access_token")
    copy = dlg.findChild(QPushButton, "copy_access_token")
    assert field is not None and copy is not None
    assert field.isReadOnly() and field.text() == access.load_token()
    copy.click()
    assert QGuiApplication.clipboard().text() == access.load_token()
