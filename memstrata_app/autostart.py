"""Start at login: a desktop entry (Linux), a LaunchAgent (macOS), a Run key (Windows)."""

from __future__ import annotations

import contextlib
import os
import plistlib
import shlex
import sys
from pathlib import Path

APP_ID = "memstrata"


def launch_command() -> list[str]:
    """How to start the app from a login session: the installed bundle or this Python."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "gui", "--tray"]
    return [sys.executable, "-m", "memstrata_app", "gui", "--tray"]


def _linux_entry() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "autostart" / f"{APP_ID}.desktop"


def _mac_agent() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"app.{APP_ID}.plist"


def is_enabled() -> bool:
    if sys.platform == "win32":
        import winreg

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _RUN_KEY) as key:
                winreg.QueryValueEx(key, "MemStrata")
            return True
        except OSError:
            return False
    return (_mac_agent() if sys.platform == "darwin" else _linux_entry()).exists()


_RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


def set_enabled(enabled: bool) -> Path | str:
    """Register or remove the login item; returns where it lives."""
    cmd = launch_command()
    if sys.platform == "win32":
        import winreg

        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, _RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            if enabled:
                winreg.SetValueEx(key, "MemStrata", 0, winreg.REG_SZ,
                                  " ".join(f'"{c}"' for c in cmd))
            else:
                with contextlib.suppress(FileNotFoundError):
                    winreg.DeleteValue(key, "MemStrata")
        return f"HKCU\\{_RUN_KEY}\\MemStrata"
    if sys.platform == "darwin":
        path = _mac_agent()
        content = plistlib.dumps({"Label": f"app.{APP_ID}", "ProgramArguments": cmd,
                                  "RunAtLoad": True, "ProcessType": "Interactive"})
    else:
        path = _linux_entry()
        content = ("[Desktop Entry]\nType=Application\nName=MemStrata\n"
                   "Comment=Memory for AI coding tools\n"
                   f"Exec={shlex.join(cmd)}\nIcon=memstrata\nTerminal=false\n"
                   "X-GNOME-Autostart-enabled=true\n").encode()
    if enabled:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    else:
        path.unlink(missing_ok=True)
    return path
