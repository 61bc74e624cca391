"""Build a realistic ledger in a temp dir, open the app on it and save a PNG of each view.

Run under a display (e.g. `xvfb-run -a -s "-screen 0 1920x1080x24" python scripts/screenshots.py`);
PNGs go to docs/screenshots/: every view (the first-run empty state, ledger, timeline, review,
query, ingest, latency, audit and the settings dialog) at 1920×1080 and at 800×600, in the light
and the dark theme (`review.png`, `review_dark.png`, `review_800.png`, `review_800_dark.png`, …),
and the tray; the Models tab in its states (`models`: Ollama with models, one split between GPU
and CPU; `models_missing`: no Ollama; `models_pulling`: a pull under way; `models_error`: a
model not found, offered for pulling) and the latency tab's per-request split
(`latency_split`); and, from scripts/screenshot_dialogs.py, the dialogs drawn over the window
(the import's report, Connect a tool, Where my data lives, About, Settings) and the failure
banners, a key with a context, and the latency tab after one query.
`--only models,latency_split` shoots just those groups.
`--home DIR` keeps the seeded ledger in DIR and reuses it on the next run. The
ledger is made of two chat stories from the bench (ordinary statements as people type them, at
the times they were said) in the spaces "backend" and "firmware"; the endpoint's request log
holds a few requests made from the stories' rows (a superseded fact left out, its successor
injected).
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import screenshot_dialogs as dialogs  # beside this script (sys.path[0])

log = logging.getLogger("screenshots")
OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
STORIES = Path(__file__).resolve().parent.parent / "memstrata_app" / "bench" / "data" / "stories"
# Two chat stories (ordinary statements as people type them), each in its own space.
SPACES = (("backend", "backend.tsv"), ("firmware", "firmware.tsv"))
# A few low-confidence extractions said later, seeded with a threshold that sends them to review.
REVIEW: tuple[tuple[str, str, str], ...] = (
    ("backend", "2026-05-20T09:10", "prod Postgres is 16.2 now, upgraded over the weekend"),
    ("backend", "2026-05-21T11:30", "gunicorn might be on 12 workers per pod, not sure"),
    ("firmware", "2026-05-22T16:05", "Zephyr is pinned at v3.6.0 in west.yml"),
)
QUERIES = ("what postgres version is prod on?", "how many gunicorn workers per pod?",
           "which MCU do rev B boards use?", "which Zephyr version are we pinned to?",
           "what is the default branch?", "which toolchain do we build with?")


def story(name: str) -> list[tuple[datetime, str]]:
    lines = (STORIES / name).read_text(encoding="utf-8").splitlines()
    return [(datetime.fromisoformat(t).replace(tzinfo=UTC), text)
            for t, _, text in (line.partition("\t") for line in lines) if text.strip()]


def seed(db: Path) -> None:
    from memstrata_app.engine import MemoryEngine

    with MemoryEngine.open(db, embedder="local") as eng:
        for space, name in SPACES:
            for at, text in story(name):
                res = eng.ingest(text, source="chat", at=at, space=space)
                log.info("%-9s %-60.60s %s", space, text, [a.action.value for a in res])
    with MemoryEngine.open(db, embedder="local", quarantine_threshold=0.99) as eng:
        for space, t, text in REVIEW:
            eng.ingest(text, source="chat", at=datetime.fromisoformat(t).replace(tzinfo=UTC),
                       space=space)


# Requests for the audit log: (api, model, tool, the question). Each injects the successor of a
# superseded fact from the stories and records the superseded one as left out.
AUDIT: tuple[tuple[str, str, str, str, str], ...] = (  # (…, a word of the fact it is about)
    ("openai", "gpt-4.1", "aider/0.86.1", "which postgres version is prod on?", "postgres"),
    ("anthropic", "claude-sonnet-4-5", "claude-cli/1.0.113", "how many gunicorn workers?",
     "gunicorn"),
    ("ollama", "qwen2.5-coder:14b", "continue/1.2.3", "which MCU is on rev B?", "rev b"),
    ("anthropic", "claude-sonnet-4-5", "claude-cli/1.0.113", "who is on call this week?",
     "on call"),
)
AUDIT_SETTINGS = {"injection_k": 5, "injection_min_score": 0.3, "embedder": "all-MiniLM-L6-v2",
                  "memory": "on"}


def seed_audit(eng: Any) -> None:
    """Log a few requests (once per ledger): each injects the value that superseded an older
    one, the older one left out as no longer valid, plus another current fact of its space."""
    if any(e.get("tool") in {a[2] for a in AUDIT} for e in eng.injections(limit=500)):
        return
    rows = eng.list_assertions(None, 0, 5000, "id", False)
    by_id = {int(a.id): a for a in rows}
    pairs = [(a, by_id[int(a.superseded_by)]) for a in rows
             if a.status.value == "superseded" and a.superseded_by is not None
             and int(a.superseded_by) in by_id and a.text
             and by_id[int(a.superseded_by)].status.value == "active"]
    for i, (api, model, tool, question, word) in enumerate(AUDIT):
        if not pairs:
            break
        old, new = next(((o, n) for o, n in pairs if word in o.text.lower()),
                        pairs[(i * 3) % len(pairs)])  # the pair the question is about
        other = next((a for a in rows if a.status.value == "active" and a.space == new.space
                      and a.id != new.id and a.key != new.key and a.text), None)
        injected = [(int(new.id), 0.81 - 0.03 * i)]
        if other is not None:
            injected.append((int(other.id), 0.46 - 0.02 * i))
        eng.log_injection(api, question, injected=injected,
                          filtered=[(int(old.id), 0.77 - 0.03 * i, int(new.id))],
                          settings=AUDIT_SETTINGS, model=model, space=new.space, tool=tool)


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
    save_pixmap(widget.grab(), name)


def save_pixmap(pixmap: Any, name: str) -> None:
    from PySide6.QtGui import QImage

    path = OUT / name
    image = pixmap.toImage()
    image.save(str(path), "PNG", 0)  # 0: smallest file (strongest zlib level)
    if path.stat().st_size > 300_000:  # 15-bit colour: the same to the eye, a third smaller
        image = image.convertToFormat(QImage.Format.Format_RGB555)
        image.convertToFormat(QImage.Format.Format_RGB888).save(str(path), "PNG", 0)
    log.info("saved %s (%d KB)", path, path.stat().st_size // 1024)


def start_endpoint(app: Any, win: Any) -> Any:
    """Host the endpoint before the Ollama stand-in and send it a few chats (for the charts)."""
    import json
    import socket
    import urllib.request

    if not win.endpoint.available:
        return None
    from memstrata_app.bench.standin import OllamaStandIn

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


VARIANTS = (("", "light", (1920, 1080)), ("_dark", "dark", (1920, 1080)),
            ("_800", "light", (800, 600)), ("_800_dark", "dark", (800, 600)))


def theme(app: Any, win: Any, name: str, size: tuple[int, int]) -> None:
    from memstrata_app.gui.style import apply_theme

    apply_theme(app, name)
    win.resize(*size)
    wait(app, lambda: True)


def variants(app: Any, win: Any, view: str, prepare: Callable[[], None] | None = None) -> None:
    """Save `view` (the file's stem) at 1920×1080 and 800×600, light and dark."""
    for suffix, name, size in VARIANTS:
        theme(app, win, name, size)
        if prepare is not None:
            prepare()
            wait(app, lambda: True)
        save(win, f"{view}{suffix}.png")
    theme(app, win, "light", (1920, 1080))


def models_shots(app: Any, win: Any, upstream: Any) -> None:
    """The Models tab: reachable (one model split GPU/CPU, a "Try it" result), Ollama missing,
    a pull under way, and a model that is not installed (offered for pulling)."""
    import socket

    from memstrata_app.bench.standin import CHAT_MODEL

    models = win.models
    upstream.installed.append("qwen2.5:7b")  # as if pulled earlier
    upstream.vram["qwen2.5:7b"] = 0.62  # did not fit in GPU memory: 38% on the CPU
    import httpx

    httpx.post(upstream.url + "/api/generate", json={"model": "qwen2.5:7b", "keep_alive": "1h"})
    win.show_view("models")
    tried: list[Any] = []
    models.tried.connect(tried.append)
    models.select_model(CHAT_MODEL)
    models.try_model(CHAT_MODEL)
    wait(app, lambda: bool(tried) and not models.bg.busy)
    models.select_model(CHAT_MODEL)
    models.pull_name.setText("nomic-embed-text")
    variants(app, win, "models")

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    url = win.state.settings.get("ollama_url")
    win.state.settings.set("ollama_url", f"http://127.0.0.1:{closed}")
    models.refresh()
    wait(app, lambda: models.missing.isVisible() and not models.bg.busy)
    variants(app, win, "models_missing")
    win.state.settings.set("ollama_url", url)
    models.refresh()
    wait(app, lambda: not models.missing.isVisible() and not models.bg.busy)

    upstream.pull_delay = 2.0
    models.pull("nomic-embed-text")
    wait(app, lambda: models.progress.value() >= 500, 60)
    variants(app, win, "models_pulling")
    done: list[Any] = []
    models.pull_finished.connect(lambda *a: done.append(a))
    models.cancel_pull()
    wait(app, lambda: bool(done) and not models.bg.busy, 30)
    upstream.pull_delay = 0.0

    failed: list[str] = []
    models.action_failed.connect(failed.append)
    models.try_model("qwen2.5-coder:7b")
    wait(app, lambda: bool(failed) and not models.bg.busy)
    models.pull_status.setText("")
    variants(app, win, "models_error")


def latency_split_shots(app: Any, win: Any, upstream: Any) -> None:
    """A few more chats, one after the model was unloaded (it had to load), then the split."""
    import httpx

    from memstrata_app.bench.standin import CHAT_MODEL
    from memstrata_app.gui.latency import SPLIT

    upstream.chunk_delay = 0.02
    for i, q in enumerate(QUERIES):
        if i == 3:
            httpx.post(upstream.url + "/api/generate", json={"model": CHAT_MODEL,
                                                             "keep_alive": 0})
        with httpx.stream("POST", f"{win.endpoint.url}/api/chat", timeout=30, json={
                "model": "standin-chat", "messages": [{"role": "user", "content": q}]}) as r:
            r.read()
        wait(app, lambda: True)
    win.show_view("latency")
    wait(app, lambda: win.latency is not None)
    win.latency.series.setCurrentText(SPLIT)
    wait(app, lambda: win.latency.split.rowCount() > 0)
    variants(app, win, "latency_split", win.latency.redraw)


def retrieve(engine: Any, q: str) -> Any:
    return engine.retrieve(q, 5)


def pick_superseded(ledger: Any) -> int:
    """The row of a superseded value (a detail pane with a chain to show)."""
    rows = [r for r in range(ledger.model.rowCount())
            if (a := ledger.model.assertion(r)).status.value == "superseded"
            and getattr(a, "context", None) is None]
    return rows[0] if rows else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--home", type=Path, help="reuse this data folder (seeded on first use)")
    p.add_argument("--only", help="comma-separated groups to shoot: empty, latency_one, ledger, "
                                  "timeline, context, review, query, ingest, latency, "
                                  "latency_split, audit, models, tray, settings, notices, "
                                  "connect, data_places, import_report (default: all)")
    args = p.parse_args()
    only = set(args.only.split(",")) if args.only else None

    def wanted(group: str) -> bool:
        return only is None or group in only
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    home = args.home or Path(tempfile.mkdtemp(prefix="memstrata-shots-"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["MEMSTRATA_HOME"] = str(home)
    args.out.mkdir(parents=True, exist_ok=True)
    globals()["OUT"] = args.out
    db = home / "memstrata.db"

    from PySide6.QtWidgets import QApplication

    from memstrata_app.gui.state import AppState
    from memstrata_app.gui.style import apply_theme
    from memstrata_app.gui.window import MainWindow
    from memstrata_app.gui.worker import EngineClient
    from memstrata_app.settings import Settings

    app = QApplication([])
    apply_theme(app, "light")
    settings = Settings.load()
    settings.set("start_endpoint", False)

    # the first run: an empty ledger says how to add facts
    if wanted("empty"):
        (home / "empty.db").unlink(missing_ok=True)
        client = EngineClient.for_path(home / "empty.db", embedder="local")
        empty = MainWindow(AppState(client, settings), tray_available=False)
        empty.resize(1920, 1080)
        empty.show()
        wait(app, lambda: empty.ledger.stack.currentWidget() is empty.ledger.empty_hint, 60)
        variants(app, empty, "empty")
        if wanted("latency_one"):
            dialogs.latency_one_shots(app, empty, variants, wait)
        empty.shutdown()
        empty.hide()

    if not db.exists():
        seed(db)
    client = EngineClient.for_path(db, embedder="local")
    win = MainWindow(AppState(client, settings), tray_available=False)
    win.resize(1920, 1080)
    win.show()
    wait(app, lambda: win.ledger.model.rowCount() > 0 and client.is_warm, 60)

    for q in QUERIES * 6:  # real samples for the latency charts, spread over a few seconds
        client.call("retrieve", functools.partial(retrieve, q=q))
        wait(app, lambda: client.pending == 0)
        time.sleep(0.1)
    upstream = start_endpoint(app, win)
    settle = time.monotonic() + 2.0  # the endpoint's writes reach the views within a second
    wait(app, lambda: time.monotonic() > settle and client.pending == 0)

    ledger = win.ledger
    row = pick_superseded(ledger)
    ledger.select_row(row)
    wait(app, lambda: ledger.detail.chain.count() > 0)
    picked = ledger.model.assertion(row)
    if wanted("ledger"):
        variants(app, win, "ledger",
                 lambda: ledger.table.scrollTo(ledger.model.index(row, 0)))

    if wanted("timeline"):
        timeline_shots(app, win, picked)
    if wanted("context"):
        dialogs.context_shots(app, win, variants, wait)
    if wanted("review"):
        review_shots(app, win)
    if wanted("query"):
        win.show_view("query")
        win.query.question.setText(QUERIES[0])
        win.query.run()
        wait(app, lambda: bool(win.query.hits))
        variants(app, win, "query")
    if wanted("ingest"):
        win.show_view("ingest")
        win.ingest.text.setPlainText("prod Postgres is 16.3 on RDS now.\n"
                                     "From Monday the release branch is cut on Thursdays.")
        win.ingest.submit_text()
        wait(app, lambda: win.ingest.results.count() >= 2)
        variants(app, win, "ingest")
    if wanted("latency"):
        win.show_view("latency")
        wait(app, lambda: win.latency is not None and win.latency.point_count("retrieve") > 10)
        if upstream is not None:
            win.latency.series.setCurrentText("endpoint.total")
        win.latency.redraw()
        wait(app, lambda: True)
        variants(app, win, "latency", win.latency.redraw)
    if upstream is not None and wanted("latency_split"):
        latency_split_shots(app, win, upstream)
    if upstream is not None and wanted("models"):
        models_shots(app, win, upstream)
    if wanted("audit"):
        audit_shots(app, win)
    if wanted("tray"):
        save(tray_sheet(win), "tray.png")
    if wanted("settings"):
        dialogs.settings_shots(app, win, save_pixmap, wait)
    if wanted("notices"):
        dialogs.notices_shots(app, win, variants, wait)
    if upstream is not None and wanted("connect"):
        dialogs.connect_shots(app, win, save_pixmap, wait)
    if wanted("data_places"):
        dialogs.data_shots(app, win, save_pixmap, wait)
    if wanted("import_report"):
        dialogs.import_report_shots(app, win, home, save_pixmap, wait)
    apply_theme(app, "light")

    win.shutdown()
    if upstream is not None:
        upstream.stop()
    return 0


def timeline_shots(app: Any, win: Any, picked: Any) -> None:
    win.state.pick_key(picked.subject, picked.relation, getattr(picked, "space", None))
    wait(app, lambda: len(win.timeline.canvas.rows) >= 2)
    t = picked.valid_from + (picked.valid_to - picked.valid_from) / 2
    win.asof.set_time(t)
    wait(app, lambda: win.state.as_of == t and "as of" in win.timeline.caption.text())
    variants(app, win, "timeline",
             lambda: win.timeline.keys.scrollToItem(win.timeline.keys.currentItem())
             if win.timeline.keys.currentItem() is not None else None)
    win.asof.go_now()
    wait(app, lambda: win.state.as_of is None)


def review_shots(app: Any, win: Any) -> None:
    win.show_view("review")
    wait(app, lambda: bool(win.review.rows))
    for i in range(len(win.review.rows)):  # the first row that approving would retire from
        loaded: list[int] = []
        win.review.retires_loaded.connect(loaded.append)
        win.review.table.clearSelection()
        win.review.table.selectRow(i)
        wait(app, functools.partial(bool, loaded))
        win.review.retires_loaded.disconnect(loaded.append)
        if loaded[-1] > 0:
            break
    variants(app, win, "review")


def audit_shots(app: Any, win: Any) -> None:
    client = win.client
    client.call("log requests", seed_audit, writes=("ledger",))  # after the endpoint's own
    wait(app, lambda: client.pending == 0)
    win.show_view("audit")
    wait(app, lambda: any(e.get("filtered") for e in win.audit.entries))
    audit = win.audit
    shown = next((i for i, e in enumerate(audit.entries) if e.get("filtered")), 0)
    variants(app, win, "audit", lambda: audit.table.selectRow(shown))


if __name__ == "__main__":
    raise SystemExit(main())
