"""Shared look: status colours, time formatting, small widget helpers."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import QDateTime, QEvent, QObject, QTimeZone
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

STATUS_COLORS: dict[str, str] = {
    "active": "#2e9d6e",
    "superseded": "#8a94a6",
    "quarantined": "#e0a030",
    "rejected": "#c8553d",
    "plain": "#4a7fc1",
    "retracted": "#9b6fb5",
}


def status_color(status: object) -> QColor:
    """The colour a status is drawn in everywhere (ledger, timeline, badges)."""
    return QColor(STATUS_COLORS.get(str(getattr(status, "value", status)), "#666666"))


def status_text(status: object) -> str:
    return str(getattr(status, "value", status))


def fmt_time(t: datetime | None, empty: str = "—") -> str:
    """Local-time display of an aware datetime, minutes precision."""
    if t is None:
        return empty
    return t.astimezone().strftime("%Y-%m-%d %H:%M")


def fmt_time_long(t: datetime | None, empty: str = "open") -> str:
    if t is None:
        return empty
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def to_qdatetime(t: datetime) -> QDateTime:
    return QDateTime.fromMSecsSinceEpoch(int(t.timestamp() * 1000), QTimeZone.systemTimeZone())


def from_qdatetime(q: QDateTime) -> datetime:
    return datetime.fromtimestamp(q.toMSecsSinceEpoch() / 1000, tz=UTC)


def heading(text: str) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("font-weight: 600; color: palette(text); margin-top: 4px;")
    return label


class HintLabel(QLabel):
    """Secondary text in `hint_color`, re-coloured when the palette (theme) changes."""

    def __init__(self, text: str = ""):
        super().__init__(text)
        self.setWordWrap(True)
        self.recolor()

    def recolor(self) -> None:
        p = self.palette()
        p.setColor(QPalette.ColorRole.WindowText, hint_color(_palette()))
        self.setPalette(p)

    def changeEvent(self, event: object) -> None:
        from PySide6.QtCore import QEvent

        if getattr(event, "type", lambda: None)() == QEvent.Type.ApplicationPaletteChange:
            self.recolor()
        super().changeEvent(event)  # type: ignore[arg-type]


class _ResizeWatch(QObject):
    def __init__(self, target: QWidget, callback: Callable[[], None]):
        super().__init__(target)
        self._callback = callback
        target.installEventFilter(self)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._callback()
        return False


def on_resize(target: QWidget, callback: Callable[[], None]) -> None:
    """Call `callback` whenever `target` is resized (a table's viewport: fit its columns to
    the width it really has, which its parent's resize event does not know yet)."""
    _ResizeWatch(target, callback)


def muted(text: str = "") -> QLabel:
    return HintLabel(text)


# --- palette-derived colours (they follow the light or dark theme) ------------------------------
def _palette() -> QPalette:
    app = QApplication.instance()
    return app.palette() if isinstance(app, QApplication) else QPalette()


def is_dark(palette: QPalette | None = None) -> bool:
    p = palette or _palette()
    return p.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def blend(a: QColor, b: QColor, f: float) -> QColor:
    """`a` moved a fraction `f` of the way to `b`."""
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * f,
                           a.greenF() + (b.greenF() - a.greenF()) * f,
                           a.blueF() + (b.blueF() - a.blueF()) * f)


def hint_color(palette: QPalette | None = None) -> QColor:
    """Secondary text: between the text and the background, still well over 4.5:1 contrast."""
    p = palette or _palette()
    return blend(p.color(QPalette.ColorRole.WindowText), p.color(QPalette.ColorRole.Window), 0.35)


def accent_color(palette: QPalette | None = None) -> QColor:
    """The as-of colour (a past instant is being shown): amber, brighter on dark backgrounds."""
    return QColor("#f0a050") if is_dark(palette) else QColor("#a85a12")


def grid_color(palette: QPalette | None = None) -> QColor:
    p = palette or _palette()
    return blend(p.color(QPalette.ColorRole.Base), p.color(QPalette.ColorRole.Text), 0.18)


def themed_status_color(status: object, palette: QPalette | None = None) -> QColor:
    """A status colour that stays readable on the theme's base colour."""
    c = status_color(status)
    dark = is_dark(palette)
    for _ in range(8):  # step towards enough contrast with the background
        if dark and c.lightnessF() < 0.62:
            c = c.lighter(112)
        elif not dark and c.lightnessF() > 0.42:
            c = c.darker(112)
        else:
            break
    return c


# --- themes -------------------------------------------------------------------------------------
THEMES = ("system", "light", "dark")


def dark_palette() -> QPalette:
    p = QPalette()
    role, grp = QPalette.ColorRole, QPalette.ColorGroup
    # fields (Base) well apart from the window, so line edits, check boxes and lists stand out
    for r, c in ((role.Window, "#26292d"), (role.WindowText, "#e6e6e6"), (role.Base, "#15171a"),
                 (role.AlternateBase, "#1e2124"), (role.Text, "#e6e6e6"),
                 (role.Button, "#34383d"), (role.ButtonText, "#e6e6e6"),
                 (role.ToolTipBase, "#2b2f33"), (role.ToolTipText, "#e6e6e6"),
                 (role.Highlight, "#3d7bd9"), (role.HighlightedText, "#ffffff"),
                 (role.Link, "#79aef2"), (role.PlaceholderText, "#9aa0a6"),
                 (role.Mid, "#50555b"), (role.Midlight, "#3a3f44"), (role.Dark, "#141618"),
                 (role.Light, "#4a4f55"), (role.Shadow, "#000000"), (role.BrightText, "#ff6b6b")):
        p.setColor(r, QColor(c))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(grp.Disabled, r, QColor("#80868c"))
    return p


def light_palette() -> QPalette:
    p = QPalette()
    role, grp = QPalette.ColorRole, QPalette.ColorGroup
    for r, c in ((role.Window, "#f3f3f3"), (role.WindowText, "#1d1d1f"), (role.Base, "#ffffff"),
                 (role.AlternateBase, "#f5f7fa"), (role.Text, "#1d1d1f"),
                 (role.Button, "#ececec"), (role.ButtonText, "#1d1d1f"),
                 (role.ToolTipBase, "#ffffdc"), (role.ToolTipText, "#1d1d1f"),
                 (role.Highlight, "#2f6fd0"), (role.HighlightedText, "#ffffff"),
                 (role.Link, "#1f5fbf"), (role.PlaceholderText, "#6b6f75"),
                 (role.Mid, "#b8bcc2"), (role.Midlight, "#e3e3e3"), (role.Dark, "#9a9ea4"),
                 (role.Light, "#ffffff"), (role.Shadow, "#6e6e6e"), (role.BrightText, "#c00000")):
        p.setColor(r, QColor(c))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(grp.Disabled, r, QColor("#8a8d91"))
    return p


def apply_theme(app: QApplication, theme: str = "system") -> str:
    """"light" or "dark" forces that palette (Fusion style, same on every platform); "system"
    follows the desktop's colour scheme (QStyleHints.colorScheme, Qt ≥ 6.5). Returns the scheme
    in use ("light" or "dark")."""
    from PySide6.QtCore import Qt

    if theme not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}")
    if theme == "system":
        hints = app.styleHints()
        scheme = hints.colorScheme() if hasattr(hints, "colorScheme") else None
        if scheme == Qt.ColorScheme.Dark:
            theme = "dark"
        elif scheme == Qt.ColorScheme.Light:
            theme = "light"
        else:
            return "dark" if is_dark(app.palette()) else "light"
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if theme == "dark" else light_palette())
    for w in app.allWidgets():  # style sheets resolve palette(...) when set: resolve again
        if w.styleSheet():
            w.setStyleSheet(w.styleSheet())
        if isinstance(w, HintLabel):
            w.recolor()
        on_theme = getattr(w, "on_theme", None)  # colours derived in code (notices.py)
        if callable(on_theme):
            on_theme()
    return theme
