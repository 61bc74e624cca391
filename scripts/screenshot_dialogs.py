"""The screenshots of the dialogs and states `scripts/screenshots.py` adds to the views: the
import's report, the failure banners, Connect a tool (after a test request), Where my data
lives, About, Settings, a key with a context in the ledger and the timeline, and the latency tab
with one sample.

A dialog is shown over the window as people see it: the window at 1920×1080 or 800×600 with the
dialog drawn centred on it (sized to fit), light and dark. Run through screenshots.py
(`--only import_report,notices,connect,data_places,settings,context,latency_one`).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

VARIANTS = (("", "light", (1920, 1080)), ("_dark", "dark", (1920, 1080)),
            ("_800", "light", (800, 600)), ("_800_dark", "dark", (800, 600)))
NOTES = (  # a day's notes replayed through File → Import (JSON lines with their times)
    ("the staging API listens on port 8080", 0),
    ("staging API moved to 8443 because of the proxy clash", 1),
    ("gunicorn runs 16 workers per web pod in prod now", 0),
    ("public API rate limit in prod is 240 requests/min per API key", 1),
    ("statement_timeout is 45s everywhere now", 2),
    ("which Postgres version is staging on?", 3),
    ("Let's look at the flaky checkout test tomorrow.", 4),
    ("feature flag `new_checkout` is off in prod again after the incident", 5),
)


def composite(win: Any, dlg: Any, size: tuple[int, int]) -> Any:
    """The window at `size` with `dlg` drawn centred over it (at most 90% of it)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtGui import QColor, QPainter

    win.resize(*size)
    w = min(dlg.width(), int(size[0] * 0.94))
    h = min(dlg.height(), int(size[1] * 0.92))
    dlg.resize(w, h)
    base = win.grab()
    shot = dlg.grab()
    p = QPainter(base)
    p.fillRect(base.rect(), QColor(0, 0, 0, 70))  # the window behind a modal dialog
    at = QPoint((base.width() - shot.width()) // 2, (base.height() - shot.height()) // 2)
    p.fillRect(at.x() - 1, at.y() - 1, shot.width() + 2, shot.height() + 2, QColor(0, 0, 0, 120))
    p.drawPixmap(at, shot)
    p.end()
    return base


def dialog_variants(app: Any, win: Any, make: Callable[[], Any], name: str, save_pixmap: Any,
                    wait: Any, natural: tuple[int, int] | None = None,
                    prepare: Callable[[Any], None] | None = None) -> None:
    """`make()` a fresh dialog per variant (it follows the theme as built), shoot it over the
    window at each size and theme."""
    from memstrata_app.gui.style import apply_theme

    for suffix, theme, size in VARIANTS:
        apply_theme(app, theme)
        win.resize(*size)
        wait(app, lambda: True)
        dlg = make()
        dlg.show()
        if natural is not None:
            dlg.resize(*natural)
        dlg.resize(min(dlg.width(), int(size[0] * 0.94)), min(dlg.height(), int(size[1] * 0.92)))
        wait(app, lambda: True)  # at its final size before it is prepared (scrolled, filled)
        if prepare is not None:
            prepare(dlg)
        wait(app, lambda: True)
        save_pixmap(composite(win, dlg, size), f"{name}{suffix}.png")
        dlg.hide()
    apply_theme(app, "light")
    win.resize(1920, 1080)


def import_report_shots(app: Any, win: Any, home: Path, save_pixmap: Any, wait: Any) -> None:
    from memstrata_app.gui.import_report import ImportReport

    t0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
    notes = home / "notes-june.jsonl"
    notes.write_text("".join(json.dumps({"text": t, "at": (t0 + timedelta(hours=i)).isoformat()})
                             + "\n" for i, (t, _h) in enumerate(NOTES)), "utf-8")
    win.state.set_space("backend")
    win.show_view("ingest")
    done: list[Any] = []
    win.ingest.import_finished.connect(lambda *a: done.append(a))
    win.ingest.import_file(notes)
    wait(app, lambda: bool(done) and win.ingest.report is not None, 240)
    run = win.ingest.last_import
    win.ingest.report.close()
    win.state.set_space(None)
    dialog_variants(app, win, lambda: ImportReport(run, win), "import_report", save_pixmap,
                    wait, natural=(1240, 560))
    dialog_variants(app, win, lambda: ImportReport(run, win), "import_report_all", save_pixmap,
                    wait, natural=(1240, 560), prepare=lambda d: d.set_filter("all"))


def notices_shots(app: Any, win: Any, variants: Any, wait: Any) -> None:
    """The endpoint's port in use and Ollama not running, as banners over the ledger."""
    from memstrata_app.gui import notices

    running = win.endpoint.running
    win.endpoint.stop()  # as if it had not started
    t = win.troubles
    t.endpoint_problem = "port 11435 in use"
    t.show(notices.endpoint_failed("port 11435 on 127.0.0.1 is already in use", 11435))
    t.show(notices.ollama_unreachable("http://127.0.0.1:11434", True))
    win.show_endpoint_state()
    win.show_view("ledger")
    variants(app, win, "notices")
    t.show(notices.embedder_failed("Ollama embedding with 'nomic-embed-text' failed: "
                                   "[Errno 111] Connection refused", "ollama:nomic-embed-text"))
    t.show(notices.ledger_failed(_locked()))
    variants(app, win, "notices_more")
    for kind in list(win.notices.banners):
        win.notices.dismiss(kind)
    t.endpoint_problem = None
    win.show_endpoint_state()
    win.statusBar().clearMessage()
    if running:
        win.endpoint.start()
        wait(app, lambda: win.endpoint.running, 30)


def _locked() -> Exception:
    from memstrata_app.engine import StoreLocked

    return StoreLocked("the ledger /home/ana/.local/share/memstrata/memstrata.db is locked by "
                       "another process; close it or try again shortly")


def connect_shots(app: Any, win: Any, save_pixmap: Any, wait: Any) -> None:
    """Connect a tool after a test request through the running endpoint."""
    from memstrata_app.gui.connect_dialog import ConnectDialog

    outcome: list[Any] = []

    def prepare(dlg: Any) -> None:
        dlg.question.setText("how many gunicorn workers per pod in prod?")
        dlg.model.setCurrentText("standin-chat:latest")
        dlg.space.setCurrentText("backend")
        if not outcome:
            dlg.tested.connect(outcome.append)
            dlg.send_test()
            wait(app, lambda: bool(outcome), 60)
        else:
            dlg.outcome = outcome[0]
            dlg._finish(outcome[0])
        dlg.tool.setCurrentIndex(1)  # Codex CLI: a TOML provider

    dialog_variants(app, win, lambda: ConnectDialog(win), "connect", save_pixmap, wait,
                    natural=(980, 900), prepare=prepare)


def data_shots(app: Any, win: Any, save_pixmap: Any, wait: Any) -> None:
    from PySide6.QtWidgets import QMessageBox

    from memstrata_app.gui.help import DataPlacesDialog, about_text

    dialog_variants(app, win, lambda: DataPlacesDialog(win.client.engine, win), "data_places",
                    save_pixmap, wait)

    def about() -> Any:
        from PySide6.QtCore import Qt

        box = QMessageBox(win)
        box.setWindowTitle("About MemStrata")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(about_text(win.client.engine))
        box.setIconPixmap(win.windowIcon().pixmap(64))
        return box

    dialog_variants(app, win, about, "about", save_pixmap, wait)


def settings_shots(app: Any, win: Any, save_pixmap: Any, wait: Any) -> None:
    """Settings refusing a port and a URL, in words; and scrolled to the token (hidden)."""
    from memstrata_app.gui.settings_dialog import SettingsDialog

    def bad(dlg: Any) -> None:
        dlg.set_value("endpoint_port", "80")
        dlg.set_value("ollama_url", "localhost:11434")

    def bottom(dlg: Any) -> None:
        wait(app, lambda: True)  # laid out: the scroll range is known
        dlg.scroll.verticalScrollBar().setValue(dlg.scroll.verticalScrollBar().maximum())

    make = lambda: SettingsDialog(win.state.settings, win)  # noqa: E731
    dialog_variants(app, win, make, "settings", save_pixmap, wait, natural=(900, 1000),
                    prepare=bad)
    dialog_variants(app, win, make, "settings_end", save_pixmap, wait, natural=(900, 1000),
                    prepare=bottom)


def context_shots(app: Any, win: Any, variants: Any, wait: Any) -> None:
    """The ledger's detail on a value with a context, then Show in timeline: its chain."""
    ledger = win.ledger
    win.show_view("ledger")

    def prod_row() -> int:
        m = ledger.model
        return next((r for r in range(m.rowCount()) if (a := m.assertion(r)).context == "prod"
                     and (a.subject or "").startswith("gunicorn") and a.status.value == "active"),
                    -1)

    wait(app, lambda: prod_row() >= 0, 30)
    ledger.select_row(prod_row())
    wait(app, lambda: ledger.detail.chain.count() >= 2, 30)
    variants(app, win, "context_ledger")
    drawn: list[int] = []
    win.timeline.drawn.connect(lambda: drawn.append(1))
    ledger.detail.timeline_button.click()
    wait(app, lambda: bool(drawn) and len(win.timeline.canvas.rows) >= 2)
    keys = win.timeline.keys
    variants(app, win, "context_timeline",
             lambda: keys.scrollToItem(keys.currentItem()) if keys.currentItem() else None)


def latency_one_shots(app: Any, win: Any, variants: Any, wait: Any) -> None:
    """The latency tab of a fresh window after its first (and only) query."""
    done: list[Any] = []
    win.client.call("one query", lambda e: e.retrieve("which port?", 5), done.append)
    wait(app, lambda: bool(done), 180)  # the first query loads the embedder
    win.show_view("latency")
    wait(app, lambda: win.latency is not None and win.latency.point_count("retrieve") == 1)
    win.latency.series.setCurrentText("retrieve")
    variants(app, win, "latency_one", win.latency.redraw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
