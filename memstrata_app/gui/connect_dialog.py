"""Connect a tool: the endpoint's base URL per API, each tool's configuration snippet with copy
buttons, and a test request through the running endpoint that shows the block it injected."""

from __future__ import annotations

import contextlib
import html
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from .. import __version__
from ..connect import TOOLS, base_urls
from .style import heading, muted
from .worker import Operation

log = logging.getLogger(__name__)
TEST_AGENT = f"memstrata-app-connect-test/{__version__}"  # how the request log names it
DEFAULT_QUESTION = "What should I know about this project?"
LOG_WAIT_S = 3.0  # the endpoint queues its log entry for the writer: wait this long for it


@dataclass
class TestOutcome:
    """What the test request came back with, and the block the endpoint injected."""

    url: str
    status: int = 0  # HTTP status; 0: the endpoint did not answer
    body: str = ""
    memory: str = ""  # X-Memstrata-Memory: injected | empty | off | skipped | error
    facts: int | None = None  # X-Memstrata-Facts
    space: str = ""
    error: str = ""  # why there was no answer at all
    started: float = field(default_factory=time.time)
    block: str = ""  # the injected block, from the request log
    logged: dict[str, Any] | None = None  # the request log's entry

    @property
    def reply(self) -> str:
        """The model's answer (Ollama's /api/chat), or the error the endpoint returned."""
        try:
            data = json.loads(self.body)
        except ValueError:
            return self.body.strip()[:400]
        if isinstance(data, dict):
            msg = data.get("message")
            if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                return msg["content"]
            if isinstance(data.get("error"), str | dict):
                err = data["error"]
                return str(err.get("message", err) if isinstance(err, dict) else err)
        return self.body.strip()[:400]


def send_test_request(url: str, question: str, model: str, space: str | None,
                      timeout: float = 60.0) -> TestOutcome:
    """POST one non-streamed Ollama-native chat to the endpoint at `url` (blocking)."""
    out = TestOutcome(url)
    body = json.dumps({"model": model, "stream": False,
                       "messages": [{"role": "user", "content": question}]}).encode()
    headers = {"Content-Type": "application/json", "User-Agent": TEST_AGENT}
    if space:
        headers["X-Memstrata-Space"] = space
    req = urllib.request.Request(f"{url}/api/chat", body, headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            out.status, out.body = resp.status, resp.read().decode("utf-8", "replace")
            h = resp.headers
    except urllib.error.HTTPError as e:
        out.status, out.body, h = e.code, e.read().decode("utf-8", "replace"), e.headers
    except (OSError, ValueError) as e:
        out.error = str(getattr(e, "reason", e))
        return out
    out.memory = h.get("x-memstrata-memory", "")
    facts = h.get("x-memstrata-facts")
    out.facts = int(facts) if facts and facts.isdigit() else None
    out.space = h.get("x-memstrata-space", "")
    return out


def logged_block(engine: Any, since: float, wait_s: float = LOG_WAIT_S
                 ) -> tuple[dict[str, Any] | None, str]:
    """The request log's entry for the test request (newest by its tool name, at or after
    `since`) and the block it injected, written as the endpoint writes it."""
    from memstrata_app.proxy.injection import format_block

    t0 = datetime.fromtimestamp(since - 1, tz=UTC)
    deadline = time.monotonic() + wait_s
    while True:
        entry = next((e for e in engine.injections(since=t0, limit=20)
                      if e.get("tool") == TEST_AGENT), None)
        if entry is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if entry is None:
        return None, ""
    hits = []
    for f in entry.get("injected") or []:
        try:
            hits.append(engine.get(int(f["id"])))
        except Exception:  # erased or gone since: the block would not carry it now either
            continue
    return entry, format_block(hits, now=entry.get("at")) or ""


class _Bridge(QObject):
    done = Signal(object)  # TestOutcome, from the request's thread


class ConnectDialog(QDialog):
    """Memory → Connect a tool…: everything a tool needs, and a check that it works."""

    tested = Signal(object)  # TestOutcome, once its block is looked up

    def __init__(self, win: Any, parent: QWidget | None = None):
        super().__init__(parent or win)
        self.setObjectName("connect_dialog")
        self.setWindowTitle("Connect a tool to MemStrata")
        self.win = win
        self.endpoint = win.endpoint
        self.settings = win.state.settings
        self._bridge = _Bridge(self)
        self._bridge.done.connect(self._on_response)
        self._thread: threading.Thread | None = None
        self.outcome: TestOutcome | None = None
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        self.state_line = QLabel()
        self.state_line.setObjectName("connect_state")
        self.state_line.setWordWrap(True)
        self.start_button = QPushButton("Start the endpoint")
        self.start_button.clicked.connect(self._start_endpoint)
        state_row = QHBoxLayout()
        state_row.addWidget(self.state_line, 1)
        state_row.addWidget(self.start_button)

        grid = QGridLayout()
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(3, 2)
        self.address_fields: dict[str, QLineEdit] = {}
        self._address_notes: list[QLabel] = []
        for i, b in enumerate(base_urls(self.port)):
            name = QLabel(f"<b>{html.escape(b.api)}</b>")
            field_ = QLineEdit(b.address)
            field_.setReadOnly(True)
            field_.setFont(mono)
            field_.setObjectName(f"address_{b.api.split()[0].lower()}")
            copy = QPushButton("Copy")
            copy.setToolTip(f"Copy the {b.api} address")
            copy.clicked.connect(lambda _c=False, f=field_: self._copy(f.text()))
            note = muted(b.note)  # beside the address: one row per API
            field_.setToolTip(b.note)
            field_.setMinimumWidth(180)
            grid.addWidget(name, i, 0)
            grid.addWidget(field_, i, 1)
            grid.addWidget(copy, i, 2)
            grid.addWidget(note, i, 3)
            self.address_fields[b.api] = field_
            self._address_notes.append(note)

        self.tool = QComboBox()
        self.tool.setObjectName("connect_tool")
        for t in TOOLS:
            self.tool.addItem(t.tool)
        self.tool.currentIndexChanged.connect(lambda _i: self._show_tool())
        tool_label = QLabel("&Tool:")
        tool_label.setBuddy(self.tool)
        self.where = muted()
        self.snippet = QPlainTextEdit()
        self.snippet.setObjectName("connect_snippet")
        self.snippet.setReadOnly(True)
        self.snippet.setFont(mono)
        self.snippet.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.snippet.setTabChangesFocus(True)
        self.copy_snippet = QPushButton("&Copy the snippet")
        self.copy_snippet.setObjectName("copy_snippet")
        self.copy_snippet.clicked.connect(lambda: self._copy(self.snippet.toPlainText()))
        tool_row = QHBoxLayout()
        tool_row.addWidget(tool_label)
        tool_row.addWidget(self.tool, 1)
        tool_row.addWidget(self.where, 2)
        tool_row.addWidget(self.copy_snippet)

        self.question = QLineEdit(DEFAULT_QUESTION)
        self.question.setObjectName("connect_question")
        self.question.setToolTip("A question is not stored; a statement would be remembered, "
                                 "as from any tool")
        q_label = QLabel("&Question:")
        q_label.setBuddy(self.question)
        self.model = QComboBox()
        self.model.setObjectName("connect_model")
        self.model.setEditable(True)
        self.model.setMinimumContentsLength(14)
        for name in self._models():
            self.model.addItem(name)
        m_label = QLabel("&Model:")
        m_label.setBuddy(self.model)
        self.space = QComboBox()
        self.space.setObjectName("connect_space")
        self.space.setToolTip("The space the request reads (sent as X-Memstrata-Space, as a "
                              "tool would): its facts and the global ones")
        names = ["global", *(n for n in getattr(win.spaces, "counts", {}) if n != "global")]
        for space in dict.fromkeys(names):
            self.space.addItem(space)
        if win.state.space:
            self.space.setCurrentText(win.state.space)
        s_label = QLabel("S&pace:")
        s_label.setBuddy(self.space)
        self.send = QPushButton("Send a test &request")
        self.send.setObjectName("connect_send")
        self.send.setToolTip("Send the question through the running endpoint (Ollama's "
                             "/api/chat) and show the memory block it injected")
        self.send.clicked.connect(self.send_test)
        test_row = QHBoxLayout()
        test_row.addWidget(q_label)
        test_row.addWidget(self.question, 3)
        test_row.addWidget(s_label)
        test_row.addWidget(self.space)
        test_row.addWidget(m_label)
        test_row.addWidget(self.model, 1)
        test_row.addWidget(self.send)
        self.outcome_line = QLabel()
        self.outcome_line.setObjectName("connect_result")
        self.outcome_line.setWordWrap(True)
        self.outcome_line.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.block = QPlainTextEdit()
        self.block.setObjectName("connect_block")
        self.block.setReadOnly(True)
        self.block.setFont(mono)
        self.block.setTabChangesFocus(True)
        self.block.setPlaceholderText("The <memstrata-memory> block the endpoint injects "
                                      "appears here.")

        body = QWidget()
        v = QVBoxLayout(body)
        v.addLayout(state_row)
        v.addWidget(heading("Base URL per API"))
        v.addLayout(grid)
        v.addWidget(heading("Configure a tool"))
        v.addLayout(tool_row)
        v.addWidget(self.snippet)
        v.addWidget(heading("Check it"))
        v.addLayout(test_row)
        v.addWidget(self.outcome_line)
        v.addWidget(self.block, 1)
        scroll = QScrollArea()
        scroll.setWidget(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(buttons)
        self.endpoint.state_changed.connect(self._refresh_state)
        self._show_tool()
        self._refresh_state()
        self.resize(920, 780)

    # --- what is shown ------------------------------------------------------------------------
    @property
    def port(self) -> int:
        server = getattr(self.endpoint, "server", None)
        if self.endpoint.running and server is not None:
            return int(str(server.url).rsplit(":", 1)[1])
        return int(self.settings.get("endpoint_port"))

    def _models(self) -> list[str]:
        chosen = str(self.settings.get("chat_model") or "")
        st = getattr(getattr(self.win, "models", None), "status", None)
        installed = [m.name for m in getattr(st, "models", []) or []
                     if "embed" not in m.name]
        names = [n for n in (chosen, *installed) if n]
        return list(dict.fromkeys(names)) or ["llama3.2"]

    def _refresh_state(self) -> None:
        running = self.endpoint.running
        if not self.endpoint.available:
            self.state_line.setText("<b>The local endpoint is not installed</b> (pip install "
                                    "memstrata-desktop[proxy]).")
        elif running:
            self.state_line.setText(f"<b>The endpoint listens on {html.escape(self.endpoint.url)}"
                                    "</b> and forwards to Ollama at "
                                    f"{html.escape(str(self.settings.get('ollama_url')))}.")
        else:
            self.state_line.setText(
                f"<b>The endpoint is stopped</b> (it would listen on port {self.port}). Start "
                "it here or with Memory → Local endpoint (Ctrl+Shift+P) before testing.")
        self.start_button.setVisible(self.endpoint.available and not running)
        self.send.setEnabled(running and self._thread is None)
        self.send.setToolTip("" if running else "Start the endpoint first")
        for b in base_urls(self.port):
            self.address_fields[b.api].setText(b.address)
        self._show_tool()

    def _show_tool(self) -> None:
        t = TOOLS[max(0, self.tool.currentIndex())]
        self.where.setText(f"Where: {t.where}")
        self.snippet.setPlainText(t.text(self.port))
        lines = t.text(self.port).count("\n") + 1
        self.snippet.setFixedHeight(self.snippet.fontMetrics().lineSpacing() * min(lines, 14)
                                    + 14)

    def _copy(self, text: str) -> None:
        QGuiApplication.clipboard().setText(text)
        self.outcome_line.setText("Copied to the clipboard.")

    def _start_endpoint(self) -> None:
        self.endpoint.start()

    # --- the test request ---------------------------------------------------------------------
    def send_test(self) -> None:
        if not self.endpoint.running or self._thread is not None:
            return
        url = str(self.endpoint.url)
        question = self.question.text().strip() or DEFAULT_QUESTION
        model = self.model.currentText().strip() or "llama3.2"
        space = self.space.currentText() or None
        bridge = self._bridge
        self.send.setEnabled(False)
        self.block.clear()
        self.outcome_line.setText(f"Sending “{html.escape(question)}” to "
                                  f"{html.escape(url)}/api/chat…")

        def run() -> None:
            outcome = send_test_request(url, question, model, space)
            with contextlib.suppress(RuntimeError):  # the dialog was closed meanwhile
                bridge.done.emit(outcome)

        self._thread = threading.Thread(target=run, name="connect-test", daemon=True)
        self._thread.start()

    def _on_response(self, outcome: TestOutcome) -> None:
        self._thread = None
        self.outcome = outcome
        if outcome.status == 0:
            self._finish(outcome)
            return
        self.win.client.submit(Operation(
            "the test request's log entry", lambda e: logged_block(e, outcome.started),
            lambda found: self._on_logged(outcome, found),
            lambda exc: self._finish(outcome, f"(the request log could not be read: {exc})")))

    def _on_logged(self, outcome: TestOutcome, found: tuple[dict[str, Any] | None, str]) -> None:
        outcome.logged, outcome.block = found
        self._finish(outcome)

    def _finish(self, o: TestOutcome, note: str = "") -> None:
        self._refresh_state()
        self.outcome_line.setText(self.words(o) + (f" {html.escape(note)}" if note else ""))
        if o.block:
            self.block.setPlainText(o.block)
        elif o.status:
            self.block.setPlainText(self._no_block(o))
        self.tested.emit(o)

    def _no_block(self, o: TestOutcome) -> str:
        if o.memory == "off":
            return "(nothing injected: memory injection is off)"
        if o.logged is None and not int(self.settings.get("audit_log_days") or 0):
            return ("(the request log is off — Settings → Keep the request log — so the block "
                    f"cannot be shown; the endpoint injected {o.facts or 0} facts)")
        return "(nothing injected: no stored fact is close enough to the question)"

    def words(self, o: TestOutcome) -> str:
        """What happened, in words, and what to do."""
        if o.status == 0:
            return (f"<b>The endpoint did not answer</b> at {html.escape(o.url)} "
                    f"({html.escape(o.error)}). Start it (Memory → Local endpoint) and try again.")
        n = len((o.logged or {}).get("injected") or []) if o.logged else (o.facts or 0)
        facts = f"{n} fact{'s' if n != 1 else ''}"
        where = f" (space {html.escape(o.space or str((o.logged or {}).get('space') or 'global'))})"
        if o.status == 200:
            reply = o.reply if len(o.reply) <= 240 else o.reply[:239] + "…"
            return (f"<b>It works.</b> The endpoint injected {facts}{where} and Ollama answered "
                    f"(HTTP 200): “{html.escape(reply)}”")
        upstream = str(self.settings.get("ollama_url"))
        if o.status in (502, 503, 504):
            return (f"<b>The endpoint did its part; Ollama did not answer</b> (HTTP {o.status}: "
                    f"{html.escape(o.reply)}). It injected {facts}{where}, shown below. Start "
                    f"Ollama (<code>ollama serve</code>) at {html.escape(upstream)}, or set its "
                    "URL in Settings, for your tools to get answers.")
        if o.status == 404:
            return (f"<b>Ollama does not have the model</b> (HTTP 404: {html.escape(o.reply)}). "
                    f"Pick an installed model (the Models tab pulls one). The endpoint injected "
                    f"{facts}{where}, shown below.")
        return (f"<b>The request was refused</b> (HTTP {o.status}: {html.escape(o.reply)}). The "
                f"endpoint injected {facts}{where}.")

    def focus_chain(self) -> list[QWidget]:
        return [self.tool, self.copy_snippet, self.question, self.space, self.model, self.send,
                self.block]

    def done(self, r: int) -> None:
        with contextlib.suppress(RuntimeError, TypeError):
            self.endpoint.state_changed.disconnect(self._refresh_state)
        super().done(r)
