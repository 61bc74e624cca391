"""Desktop app entry point: `memstrata` with no arguments, or `python -m memstrata_app.gui`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

_T0 = time.perf_counter()
log = logging.getLogger(__name__)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="memstrata", description="MemStrata desktop app")
    p.add_argument("--db", default=None, metavar="LEDGER",
                   help="a ledger file or a team ledger's postgresql:// URI (default: the "
                        "`ledger` setting, else memstrata.db in the data folder)")
    p.add_argument("--tray", action="store_true",
                   help="start in the system tray without opening the window (start at login)")
    p.add_argument("--theme", choices=("system", "light", "dark"),
                   default=os.environ.get("MEMSTRATA_THEME", "system"),
                   help="colour theme (default: follow the system; MEMSTRATA_THEME sets it too)")
    p.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    # quit once the embedder has loaded too (launch figures: time and resident memory)
    p.add_argument("--exit-when-warm", action="store_true", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Open the window at once; the ledger opens and the embedder loads on the worker thread."""
    args = parse_args(argv)
    from PySide6.QtWidgets import QApplication

    from memstrata_app.settings import (
        Settings,
        apply_governance,
        ledger_location,
        start_extraction,
    )

    from .state import AppState
    from .style import apply_theme
    from .window import MainWindow
    from .worker import EngineClient

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("MemStrata")
    app.setOrganizationName("MemStrata")
    app.setDesktopFileName("memstrata")  # Wayland matches the window to memstrata.desktop
    app.setQuitOnLastWindowClosed(False)
    apply_theme(app, args.theme)
    if args.theme == "system":  # the desktop switched between light and dark: follow it
        app.styleHints().colorSchemeChanged.connect(lambda _s: apply_theme(app, "system"))
    settings = Settings.load()
    db = ledger_location(args.db)

    def governance(eng: Any) -> None:
        apply_governance(eng, settings)

    def extraction_tier(eng: Any) -> None:
        start_extraction(eng, settings)

    # on the ledger opened now, and on each one File → Open ledger… switches to
    client = EngineClient(lambda: open_ledger(db, settings, first=True),
                          open_path=lambda where: open_ledger(where, settings),
                          after_open=(governance, extraction_tier))
    state = AppState(client, settings)
    win = MainWindow(state)
    if not (args.tray and win.tray.available):
        win.show()
    shown_ms = (time.perf_counter() - _T0) * 1000
    log.info("window shown %.0f ms after the app module loaded", shown_ms)

    def on_interactive() -> None:
        ms = (time.perf_counter() - _T0) * 1000
        log.info("interactive (ledger on screen) %.0f ms after the app module loaded, "
                 "resident %.0f MB", ms, _rss_mb())
        if args.exit_when_ready:
            win.quit()

    def on_warm() -> None:
        ms = (time.perf_counter() - _T0) * 1000
        log.info("embedder loaded %.0f ms after the app module loaded, resident %.0f MB",
                 ms, _rss_mb())
        if args.exit_when_warm:
            win.quit()

    win.interactive.connect(on_interactive)
    client.warm.connect(on_warm)
    client.open_failed.connect(lambda _m: args.exit_when_ready and win.quit())
    if not win.tray.available:
        app.setQuitOnLastWindowClosed(True)
    app.aboutToQuit.connect(win.shutdown)
    _quit_on_signals(app, win.quit)
    code = app.exec()
    win.shutdown()
    return int(code)


def open_ledger(where: Path | str, settings: Any, first: bool = False) -> Any:
    """Open a ledger for the app with the settings in force now. At start the `embedder`
    setting chooses; a ledger opened later (File → Open ledger…) that already holds vectors
    opens with its own embedder, so any ledger can be opened."""
    from memstrata_app.engine import MemoryEngine

    team = str(where).startswith(("postgresql:", "postgres:"))
    path = Path(where).expanduser() if not team else None
    has_vectors = path is None or (path.exists() and path.stat().st_size > 0)
    embedder = settings.get("embedder") if first or not has_vectors else "auto"
    return MemoryEngine.open(path if path is not None else where, embedder=embedder,
                             quarantine_threshold=settings.get("quarantine_threshold"),
                             ollama_host=settings.get("ollama_url"))


def _rss_mb() -> float:
    """This process's resident memory in MB (Linux's /proc; elsewhere the peak so far)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    try:
        import resource  # macOS reports bytes, Linux kilobytes; Windows has no such module
    except ImportError:
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def _quit_on_signals(app: object, quit_app: object) -> None:
    """Ctrl-C or SIGTERM closes cleanly (Python sees signals only when it runs: tick a timer)."""
    import signal

    from PySide6.QtCore import QTimer

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: quit_app())  # type: ignore[operator]
    tick = QTimer(app, interval=250)  # type: ignore[call-overload]
    tick.timeout.connect(lambda: None)
    tick.start()


if __name__ == "__main__":
    raise SystemExit(main())
