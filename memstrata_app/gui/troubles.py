"""Every failure of the endpoint, the embedder, the ledger and Ollama reaches the window: a
status-bar line and a banner saying what to do, with buttons that do it (never only the log)."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QGuiApplication

from . import notices as words
from .notices import Notice, NoticeBanner

log = logging.getLogger(__name__)
STATUS_MS = 20000


class Troubles(QObject):
    """Listens to the engine client, the endpoint and the Ollama probe of `win`; shows each
    failure on `win.notices` and in its status bar, and takes the banner down once it is fixed."""

    def __init__(self, win: Any):
        super().__init__(win)
        self.win = win
        self.endpoint_problem: str | None = None  # the status bar's word for a failed start
        self._ollama_said = False  # dismissed or shown once: again only after it answered
        client, endpoint = win.client, win.endpoint
        client.warm_failed.connect(self.embedder_failed)
        client.warm.connect(lambda: win.notices.dismiss("embedder"))
        client.store_failed.connect(self.ledger_failed)
        client.reopen_failed.connect(self.ledger_failed)
        endpoint.start_failed.connect(self.endpoint_failed)
        endpoint.state_changed.connect(self._endpoint_changed)

    # --- showing ------------------------------------------------------------------------------
    def show(self, notice: Notice) -> NoticeBanner:
        log.warning("%s %s", notice.headline, notice.status)
        actions = [(self._button_text(a), self._bind(notice, a)) for a in notice.actions]
        banner = self.win.notices.show_notice(notice, actions)
        self.win.statusBar().showMessage(notice.status, STATUS_MS)
        self.win.refresh_focus_chain()
        return banner

    @staticmethod
    def _button_text(action: str) -> str:
        if action.startswith("copy:"):
            return f"Copy “{action[5:]}”"
        return words.BUTTON_TEXT[action].replace("&", "")  # no Alt letter: the views own those

    def _bind(self, notice: Notice, action: str) -> Any:
        win = self.win
        if action == "settings":
            return win.open_settings
        if action == "open_ledger":
            return win.choose_ledger
        if action.startswith("copy:"):
            text = action[5:]
            return lambda: QGuiApplication.clipboard().setText(text)
        retry = {"endpoint": self.retry_endpoint, "embedder": self.retry_embedder,
                 "ollama": self.retry_ollama}
        return retry.get(notice.kind, lambda: None)

    # --- the endpoint -------------------------------------------------------------------------
    def endpoint_failed(self, message: str, port: Any) -> None:
        notice = words.endpoint_failed(message, port)
        in_use = "already in use" in message.lower()
        self.endpoint_problem = (f"port {port} in use" if in_use else
                                 "not installed" if "not installed" in message else "failed")
        self.show(notice)
        self.win.show_endpoint_state()

    def retry_endpoint(self) -> None:
        self.win.notices.dismiss("endpoint")
        self.win.endpoint.stop()
        self.win.endpoint.start()

    def _endpoint_changed(self) -> None:
        if self.win.endpoint.running:
            self.endpoint_problem = None
            self.win.notices.dismiss("endpoint")

    def check_endpoint(self) -> None:
        """The endpoint's thread ended without being stopped: say so."""
        ep = self.win.endpoint
        if ep.died and self.win.notices.notice("endpoint") is None:
            port = ep.server.url.rsplit(":", 1)[-1] if ep.server is not None else "?"
            ep.stop()
            self.endpoint_problem = "stopped unexpectedly"
            self.show(words.endpoint_stopped(port))
            self.win.show_endpoint_state()

    # --- the embedder -------------------------------------------------------------------------
    def embedder_failed(self, exc: BaseException) -> None:
        spec = str(getattr(getattr(self.win.client.engine, "embedder", None), "name", "")
                   or self.win.state.settings.get("embedder"))
        self.win.engine_label.setText("Embedder not loaded")
        self.show(words.embedder_failed(str(exc), spec))

    def retry_embedder(self) -> None:
        self.win.notices.dismiss("embedder")
        self.win.engine_label.setText("Loading the embedder…")
        self.win.client.warm_up()

    # --- the ledger ---------------------------------------------------------------------------
    def ledger_failed(self, exc: BaseException) -> None:
        notice = words.ledger_failed(exc)
        if type(exc).__name__ == "StoreReadOnly" and self.win.state.read_only:
            self.win.statusBar().showMessage(notice.status, STATUS_MS)  # the banner says it
            return
        self.show(notice)

    # --- Ollama -------------------------------------------------------------------------------
    def ollama_status(self, st: Any) -> None:
        """Ollama unreachable while something needs it: a banner once (again only after it
        answered in between); reachable: the banner goes."""
        if st.reachable:
            self._ollama_said = False
            self.win.notices.dismiss("ollama")
            return
        needs = self.ollama_needed()
        if not needs or self._ollama_said:
            return
        self._ollama_said = True
        self.show(words.ollama_unreachable(st.url, self.win.endpoint.running
                                           or self.win.endpoint.starting))

    def ollama_needed(self) -> list[str]:
        """What would use Ollama now: the endpoint, an Ollama embedder, the extraction model,
        an Ollama update judge."""
        s = self.win.state.settings
        out = []
        if self.win.endpoint.running or self.win.endpoint.starting or (
                s.get("start_endpoint") and self.win.endpoint.available):
            out.append("endpoint")
        if str(s.get("embedder")).startswith("ollama:"):
            out.append("embedder")
        if s.get("extraction_model"):
            out.append("extraction")
        if str(s.get("update_judge")).startswith("ollama:"):
            out.append("judge")
        return out

    def retry_ollama(self) -> None:
        self.win.notices.dismiss("ollama")
        self._ollama_said = False
        self.win.models.refresh()
