"""The as-of bar: a slider that steps through the instants where the ledger changed, plus a
date-time field for any exact instant."""

from __future__ import annotations

import bisect
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QDateTime, Qt, QTimer
from PySide6.QtWidgets import (
    QDateTimeEdit,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QToolButton,
    QWidget,
)

from .state import AppState
from .style import accent_color, from_qdatetime, to_qdatetime
from .worker import Change

TICKS = 1000  # the slider's range while no change instants are known (an even spread)
NO_TIME = QDateTime.fromMSecsSinceEpoch(0)  # the field's value while there is no ledger time


def change_instants(engine: Any) -> list[datetime]:
    """Every instant at which some row became or stopped being valid (rejected rows never are),
    oldest first: the only places where the ledger as of t can differ from its neighbours."""
    readers = getattr(engine, "_readers", None)
    if readers is None:
        return []
    rows = readers.query(
        "SELECT valid_from FROM assertions WHERE status NOT IN ('rejected')"
        " UNION SELECT valid_to FROM assertions WHERE status NOT IN ('rejected')"
        " AND valid_to IS NOT NULL ORDER BY 1")
    return [datetime.fromtimestamp(float(r[0]), tz=UTC) for r in rows if r[0] is not None]


def known_instants(engine: Any) -> list[datetime]:
    """Every instant at which the ledger's record changed (a row written, retired, relabelled):
    the steps of the slider in known-at mode."""
    readers = getattr(engine, "_readers", None)
    if readers is None:
        return []
    try:
        rows = readers.query("SELECT DISTINCT at FROM row_versions ORDER BY 1")
    except Exception:  # a ledger without versions: fall back to the valid-time steps
        return change_instants(engine)
    return [datetime.fromtimestamp(float(r[0]), tz=UTC) for r in rows if r[0] is not None]


class AsOfBar(QWidget):
    """Moving the slider (or editing the field) sets `AppState.as_of`; the right end means now.

    With the ledger's change instants known, each slider step is one of them (PgUp/PgDn and the
    arrow keys walk from change to change); the field takes any instant and leaves it as typed."""

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self._lo: datetime | None = None
        self._hi: datetime | None = None
        self.instants: list[datetime] = []
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("as_of_slider")
        self.slider.setRange(0, TICKS)
        self.slider.setValue(TICKS)
        self.slider.setToolTip("Drag left (or use the arrow keys) to see the ledger as it stood "
                               "at an earlier time; each step is an instant where something "
                               "changed")
        self.slider.setPageStep(1)
        self.edit = QDateTimeEdit()
        self.edit.setObjectName("as_of_edit")
        self.edit.setCalendarPopup(True)
        self.edit.setDisplayFormat("yyyy-MM-dd HH:mm:ss")
        self.edit.setTimeZone(to_qdatetime(datetime.now(UTC)).timeZone())
        self.edit.setToolTip("The exact instant to see the ledger at")
        self.edit.setMinimumDateTime(NO_TIME)
        self.edit.setSpecialValueText("now")  # shown while there is no range (empty ledger)
        self.edit.setDateTime(NO_TIME)
        self.now_button = QPushButton("&Now")
        self.now_button.setToolTip("Back to the present: only currently valid facts (Ctrl+0)")
        self.now_button.clicked.connect(self.go_now)
        # the switch: is the instant valid time (what was true then) or transaction time
        # (what the ledger knew then)?
        self.valid_button = QToolButton(text="Vali&d at", checkable=True, checked=True)
        self.valid_button.setObjectName("as_of_valid_mode")
        self.valid_button.setToolTip("Valid time: the facts that were true at the instant, as "
                                     "the ledger knows them now (later corrections included)")
        self.known_button = QToolButton(text="&Known at", checkable=True)
        self.known_button.setObjectName("as_of_known_mode")
        self.known_button.setToolTip("Transaction time: the ledger as it was known at the "
                                     "instant: statements and corrections recorded later are "
                                     "not seen (what the endpoint would have injected then)")
        # exclusive by hand: a QButtonGroup would let Tab reach only the checked one
        for b, known in ((self.valid_button, False), (self.known_button, True)):
            b.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            b.setStyleSheet("QToolButton { padding: 2px 6px; }"
                            f"QToolButton:checked {{ background: {accent_color().name()};"
                            " color: white; border-radius: 3px; }")
            b.clicked.connect(lambda _c=False, known=known: self.set_known_mode(known))
        self.label = QLabel("&As of: <b>now</b>")
        self.label.setBuddy(self.slider)
        self.label.setMinimumWidth(170)
        self._debounce = QTimer(self, singleShot=True, interval=150)
        self._debounce.timeout.connect(self._emit)
        self.slider.valueChanged.connect(self._on_slider)
        self.edit.dateTimeChanged.connect(self._on_edit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.edit)
        layout.addWidget(self.now_button)
        switch = QHBoxLayout()
        switch.setSpacing(0)
        switch.addWidget(self.valid_button)
        switch.addWidget(self.known_button)
        layout.addLayout(switch)
        self._pending: datetime | None = None
        self._show_label(None)
        state.client.changed.connect(self._on_changed)
        self.setEnabled(False)

    def refresh_range(self) -> None:
        """Ask the worker for the ledger's time range and span the slider over it (to now)."""
        known = self.known_mode

        def span(e: Any) -> tuple[Any, list[datetime]]:
            rng = e.time_range()
            if rng is None:
                return rng, []
            return rng, (known_instants(e) if known else change_instants(e))

        self._state.client.call("time range", span, self._set_span, failure=lambda _e: None)

    def _set_span(self, result: tuple[Any, list[datetime]]) -> None:
        rng, instants = result
        now = datetime.now(UTC)
        self.instants = [t for t in instants if t < now]
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(self.instants) if self.instants else TICKS)
        self.slider.blockSignals(False)
        self._set_range(rng)

    def _set_range(self, rng: tuple[datetime, datetime] | None) -> None:
        now = datetime.now(UTC)
        if rng is None:
            self.edit.blockSignals(True)
            self.edit.setMinimumDateTime(NO_TIME)
            self.edit.setSpecialValueText("now")
            self.edit.setDateTime(NO_TIME)
            self.edit.blockSignals(False)
            self.setEnabled(False)
            return
        self._lo, self._hi = rng[0], max(rng[1], now)
        self.setEnabled(True)
        self.edit.blockSignals(True)
        self.edit.setSpecialValueText("")
        self.edit.setDateTimeRange(to_qdatetime(self._lo), to_qdatetime(self._hi))
        self.edit.setDateTime(to_qdatetime(self._state.as_of or now))
        self.edit.blockSignals(False)
        self._place_slider(self._state.as_of)

    def _place_slider(self, t: datetime | None) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self.slider.maximum() if t is None else self._tick(t))
        self.slider.blockSignals(False)

    def _tick(self, t: datetime) -> int:
        if self.instants:  # the last change at or before t (the ledger as of t looks like it)
            return max(0, bisect.bisect_right(self.instants, t) - 1)
        if self._lo is None or self._hi is None or self._hi <= self._lo:
            return TICKS
        f = (t - self._lo) / (self._hi - self._lo)
        return max(0, min(TICKS, round(f * TICKS)))

    def time_at(self, tick: int) -> datetime | None:
        """The instant a slider position stands for (None at the right end: now)."""
        if self.instants:
            return self.instants[tick] if 0 <= tick < len(self.instants) else None
        if tick >= TICKS or self._lo is None or self._hi is None:
            return None
        return self._lo + (self._hi - self._lo) * (tick / TICKS)

    def set_time(self, t: datetime | None) -> None:
        """Programmatic equivalent of picking `t` in the field (None: now)."""
        self.edit.blockSignals(True)
        self.edit.setDateTime(to_qdatetime(t or datetime.now(UTC)))
        self.edit.blockSignals(False)
        self._place_slider(t)
        self._schedule(t)

    def _on_slider(self, tick: int) -> None:
        t = self.time_at(tick)
        self.edit.blockSignals(True)
        self.edit.setDateTime(to_qdatetime(t or datetime.now(UTC)))
        self.edit.blockSignals(False)
        self._schedule(t)

    def _on_edit(self, q: Any) -> None:
        t = from_qdatetime(q)
        if self._hi is not None and t >= self._hi:
            t = None  # the field's maximum is now
        self._place_slider(t)
        self._schedule(t)

    def go_now(self) -> None:
        self.set_time(None)

    @property
    def known_mode(self) -> bool:
        return self.known_button.isChecked()

    def set_known_mode(self, on: bool) -> None:
        """Known at (True: the instant is transaction time) or Valid at (False); the same as
        clicking the switch."""
        for b, checked in ((self.known_button, on), (self.valid_button, not on)):
            b.blockSignals(True)
            b.setChecked(checked)
            b.blockSignals(False)
        self._show_label(self._pending if self._debounce.isActive() else self._state.as_of)
        changed = on != self._state.known_mode
        self._state.set_known_mode(on)
        if changed and self.isEnabled():
            self.refresh_range()  # the slider steps through recorded instants, or valid ones

    def _show_label(self, t: datetime | None) -> None:
        mode = "known at" if self.known_mode else "valid at"
        if t is None:
            self.label.setText(f"&As of: <b>now</b> ({mode})")
        else:
            self.label.setText(f"&As of: <b style='color:{accent_color().name()}'>"
                               f"{t.astimezone():%Y-%m-%d %H:%M}</b> ({mode})")
        self.label.setToolTip("The ledger as it was known (recorded) at this instant"
                              if self.known_mode else "The facts valid at this instant")

    def _schedule(self, t: datetime | None) -> None:
        self._pending = t
        self._show_label(t)
        self._debounce.start()

    def _emit(self) -> None:
        self._state.set_as_of(self._pending)

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            self.refresh_range()

    def shutdown(self) -> None:
        self._debounce.stop()
