"""Build a realistic ledger in a temp dir, open the app on it and save a PNG of each view.

Run under a display (e.g. `xvfb-run -a -s "-screen 0 1600x1000x24" python scripts/screenshots.py`);
PNGs go to docs/screenshots/.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

log = logging.getLogger("screenshots")
OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
START = datetime(2026, 9, 7, 9, 30, tzinfo=UTC)

# (days after START, statement): a project's facts over ~11 weeks, values changing as it goes
SEED: tuple[tuple[float, str], ...] = (
    (0, "The api-gateway listens on port 8080."),
    (0, "The billing service uses Postgres 14."),
    (0.1, "The auth service's owner is Maria."),
    (0.2, "payments timeout: 30 seconds"),
    (0.3, "staging region: eu-west-1"),
    (1, "The checkout service uses redis."),
    (1, "cache ttl = 300"),
    (1.2, "log level: info"),
    (2, "Node version is 18."),
    (2, "We deploy on Fridays after the standup."),
    (3, "The web app depends on React 17."),
    (3.5, "The web app uses jQuery."),
    (4.5, "The billing service depends on kafka."),
    (4, "The search service uses Elasticsearch 7."),
    (5, "Rename getUser to fetchUser."),
    (9, "The api-gateway listens on port 8443."),
    (10, "Node version is 20."),
    (11, "cache ttl = 600"),
    (12, "The web app depends on React 18."),
    (15, "The orders service was renamed to checkout-api."),
    (17, "The auth service's owner is Dev."),
    (20, "The billing service uses Postgres 15."),
    (22, "payments timeout: 45 seconds"),
    (24, "Release notes live in docs/releases.md."),
    (28, "log level: debug"),
    (31, "The search service uses Elasticsearch 8."),
    (35, "The api-gateway listens on port 9443."),
    (38, "staging region: us-east-2"),
    (41, "cache ttl = 900"),
    (44, "The billing service uses Postgres 16."),
    (47, "payments timeout: 60 seconds"),
    (50, "log level: warn"),
    (53, "Node version is 22."),
    (56, "The auth service's owner is Priya."),
    (60, "The worker queue is RabbitMQ."),
    (70, "The api-gateway listens on port 8443."),
    (72, "Our incident channel is #ops-alerts."),
)
# Statements a reviewer should see: seeded with a threshold that sends them to the review queue.
REVIEW: tuple[tuple[float, str], ...] = (
    (66, "The checkout service is not using redis."),
    (67, "The web app is not using jQuery."),
    (68, "The billing service does not depend on kafka."),
    (74, "The api-gateway listens on port 9000."),
)
QUERIES = ("which port does the api gateway listen on?", "what postgres version does billing use?",
           "who owns the auth service?", "what is the payments timeout?", "cache ttl",
           "which node version do we use?", "log level", "where do release notes live?")


def seed(db: Path) -> None:
    from memstrata_app.engine import MemoryEngine

    for statements, threshold in ((SEED, 0.6), (REVIEW, 0.99)):
        with MemoryEngine.open(db, embedder="local", quarantine_threshold=threshold) as eng:
            for days, text in statements:
                res = eng.ingest(text, source="chat", at=START + timedelta(days=days))
                log.info("%-55s %s", text, [a.action.value for a in res])


def wait(app: Any, cond: Callable[[], bool], timeout: float = 30.0) -> None:
    """Spin the event loop until `cond()` holds (a script, so polling is fine here)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("the app did not reach the expected state")
        app.processEvents()
        time.sleep(0.02)
    for _ in range(10):
        app.processEvents()
        time.sleep(0.02)


def save(widget: Any, name: str) -> None:
    path = OUT / name
    widget.grab().save(str(path), "PNG", 0)  # 0: smallest file (strongest zlib level)
    log.info("saved %s (%d KB)", path, path.stat().st_size // 1024)


def start_endpoint(app: Any, win: Any) -> Any:
    """Host the endpoint before the Ollama stand-in and send it a few chats (for the charts)."""
    import json
    import socket
    import urllib.request

    if not win.endpoint.available:
        return None
    from memstrata_app.proxy.standin import OllamaStandIn

    upstream = OllamaStandIn(chunk_delay=0.01).start()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    win.state.settings.set("ollama_url", upstream.url)
    win.state.settings.set("endpoint_port", port)
    win.endpoint.start()
    wait(app, lambda: win.endpoint.running)
    for q in QUERIES * 4:
        body = {"model": "standin-chat", "stream": True,
                "messages": [{"role": "user", "content": q}]}
        req = urllib.request.Request(f"{win.endpoint.url}/api/chat", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()
        wait(app, lambda: True)
    return upstream


def tray_sheet(win: Any) -> Any:
    """The tray icon in each state next to its menu (a tray itself cannot be grabbed)."""
    from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

    from memstrata_app.gui.icons import strata_pixmap

    sheet = QWidget()
    sheet.setStyleSheet("background: white;")
    grid = QGridLayout(sheet)
    states = (("memory on, endpoint up", True, True), ("memory off (pass-through)", False, True),
              ("memory on, endpoint down", True, False), ("endpoint not installed", True, None))
    for i, (text, mem, up) in enumerate(states):
        icon = QLabel()
        icon.setPixmap(strata_pixmap(48, mem, up))
        grid.addWidget(icon, i, 0)
        grid.addWidget(QLabel(text), i, 1)
    menu = QLabel()
    win.tray.menu.adjustSize()
    menu.setPixmap(win.tray.menu.grab())
    grid.addWidget(menu, 0, 2, len(states), 1)
    sheet.adjustSize()
    return sheet


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    home = Path(tempfile.mkdtemp(prefix="memstrata-shots-"))
    os.environ["MEMSTRATA_HOME"] = str(home)
    args.out.mkdir(parents=True, exist_ok=True)
    globals()["OUT"] = args.out
    db = home / "memstrata.db"
    seed(db)

    from PySide6.QtWidgets import QApplication

    from memstrata_app.gui.settings_dialog import SettingsDialog
    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient
    from memstrata_app.settings import Settings

    app = QApplication([])
    settings = Settings.load()
    settings.set("start_endpoint", False)
    client = EngineClient.for_path(db, embedder="local")
    win = MainWindow(AppState(client, settings), tray_available=False)
    win.resize(1440, 860)
    win.show()
    wait(app, lambda: win.ledger.model.rowCount() > 0 and client.is_warm, 60)

    for q in QUERIES * 6:  # real samples for the latency charts, spread over a few seconds
        client.call("retrieve", lambda e, q=q: e.retrieve(q, 5))
        wait(app, lambda: client.pending == 0)
        time.sleep(0.1)
    upstream = start_endpoint(app, win)

    ledger = win.ledger
    row = next(r for r in range(ledger.model.rowCount())
               if (a := ledger.model.assertion(r)).subject == "api-gateway"
               and a.status.value == "superseded")
    ledger.select_row(row)
    wait(app, lambda: ledger.detail.chain.count() > 0)
    save(win, "ledger.png")

    win.state.pick_key("api-gateway", "port")
    wait(app, lambda: len(win.timeline.canvas.rows) > 2)
    save(win, "timeline.png")

    t = START + timedelta(days=45)
    win.asof.set_time(t)
    wait(app, lambda: win.state.as_of == t and "as of" in win.timeline.caption.text())
    save(win, "asof.png")
    win.show_view("ledger")
    wait(app, lambda: ledger.model.filter is not None and ledger.model.filter.as_of == t
         and ledger.model.rowCount() > 0)
    ledger.select_row(next(r for r in range(ledger.model.rowCount())
                           if ledger.model.assertion(r).subject == "api-gateway"))
    wait(app, lambda: ledger.detail.chain.count() > 0)
    save(win, "ledger_asof.png")
    win.asof.go_now()
    wait(app, lambda: win.state.as_of is None)

    win.show_view("review")
    wait(app, lambda: win.review.retires.count() > 0)
    row = next((i for i, a in enumerate(win.review.rows) if a.relation == "uses"), 0)
    win.review.table.selectRow(row)
    wait(app, lambda: win.review.retires.count() > 0)
    save(win, "review.png")

    win.show_view("query")
    win.query.question.setText("which port does the api gateway listen on?")
    win.query.run()
    wait(app, lambda: bool(win.query.hits))
    save(win, "query.png")

    win.show_view("ingest")
    win.ingest.text.setPlainText("The api-gateway listens on port 8443.\n"
                                 "From 1 December the payments timeout is 90 seconds.")
    win.ingest.submit_text()
    wait(app, lambda: win.ingest.results.count() > 0)
    save(win, "ingest.png")

    win.show_view("latency")
    wait(app, lambda: win.latency is not None and win.latency.point_count("retrieve") > 10)
    if upstream is not None:
        win.latency.series.setCurrentText("endpoint.total")
    win.latency.redraw()
    wait(app, lambda: True)
    save(win, "latency.png")

    save(tray_sheet(win), "tray.png")

    dlg = SettingsDialog(settings, win)
    dlg.show()
    dlg.set_value("endpoint_port", "80")
    dlg.set_value("ollama_url", "localhost:11434")
    dlg.save()
    wait(app, lambda: bool(dlg.message.text()))
    save(dlg, "settings.png")
    dlg.reject()

    win.shutdown()
    if upstream is not None:
        upstream.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
