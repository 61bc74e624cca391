"""What the views share: the engine client, settings, the as-of instant and the picked key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, Signal

from .worker import EngineClient


class AppState(QObject):
    """Passed to every view; views talk to each other only through its signals."""

    as_of_changed = Signal(object)  # datetime | None (None: now, i.e. active rows)
    key_picked = Signal(str, str, str)  # (subject, relation, context): show it in the timeline
    show_view = Signal(str)  # ask the window to bring a tab forward
    review_count = Signal(int)
    space_changed = Signal(object)  # str | None (None: every space)
    known_at_changed = Signal(bool)  # the as-of instant is transaction time (True) or valid time
    row_picked = Signal(int)  # an assertion id: select it in the ledger

    def __init__(self, client: EngineClient, settings: Any, parent: QObject | None = None):
        super().__init__(parent)
        self.client = client
        self.settings = settings
        self._as_of: datetime | None = None
        self._space: str | None = None  # the space switcher's choice; None: all spaces
        self.key_space: str | None = None  # the space of the key last picked for the timeline
        # why the ledger is read-only, once it is open read-only (views keep writes off)
        self.read_only: str | None = None
        self._known = False  # the as-of instant reads as "known at" (transaction time)

    @property
    def known_mode(self) -> bool:
        """The as-of bar is in known-at mode: its instant is transaction time."""
        return self._known

    def set_known_mode(self, on: bool) -> None:
        if bool(on) != self._known:
            self._known = bool(on)
            self.known_at_changed.emit(self._known)

    @property
    def known_at(self) -> datetime | None:
        """The transaction-time instant to read at (None: as the ledger is now)."""
        return self._as_of if self._known else None

    @property
    def valid_at(self) -> datetime | None:
        """The valid-time instant to read at (None: now). In known-at mode this is None and
        the engine reads validity at the known-at instant itself."""
        return None if self._known else self._as_of

    @property
    def as_of(self) -> datetime | None:
        return self._as_of

    def set_as_of(self, t: datetime | None) -> None:
        if t != self._as_of:
            self._as_of = t
            self.as_of_changed.emit(t)

    @property
    def space(self) -> str | None:
        return self._space

    def set_space(self, name: str | None) -> None:
        if name != self._space:
            self._space = name
            self.space_changed.emit(name)

    def pick_key(self, subject: str, relation: str, space: str | None = None,
                 context: str | None = None) -> None:
        """Show the key `subject::relation@context` of `space` in the timeline."""
        self.key_space = space
        self.key_picked.emit(subject, relation, context or "")
        self.show_view.emit("timeline")

    def pick_row(self, assertion_id: int) -> None:
        """Show this row in the ledger (its tab brought forward)."""
        self.show_view.emit("ledger")
        self.row_picked.emit(int(assertion_id))
