"""Start at login writes (and removes) the platform's login item."""

from __future__ import annotations

import sys

import pytest

from memstrata_app import autostart


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="Linux desktop entry")
def test_linux_autostart_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert not autostart.is_enabled()
    path = autostart.set_enabled(True)
    assert path == tmp_path / "autostart" / "memstrata.desktop"
    text = path.read_text()
    assert "Exec=" in text and "memstrata_app" in text and sys.executable in text
    assert autostart.is_enabled()
    autostart.set_enabled(False)
    assert not path.exists() and not autostart.is_enabled()
    autostart.set_enabled(False)  # removing twice is fine
