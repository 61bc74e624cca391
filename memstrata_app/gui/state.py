"""What the views share: the engine client, settings, the as-of instant and the picked key."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, Signal

from .worker import EngineClient


class AppState(QObject):
    """Passed to every view; views talk to each other only through its signals."""

    as_of_changed = Signal(object)  # datetime | None (None: now, i.e. active rows)
    key_picked = Signal(str, str)  # (subject, relation): show it in the timeline
    show_view = Signal(str)  # ask the window to bring a tab forward
    review_count = Signal(int)
    space_changed = Signal(object)  # str | None (None: every space)

    def __init__(self, client: EngineClient, settings: Any, parent: QObject | None = None):
        super().__init__(parent)
        self.client = client
        self.settings = settings
        self._as_of: datetime | None = None
        self._space: str | None = None  # the space switcher's choice; None: all spaces
        self.key_space: str | None = None  # the space of the key last picked for the timeline
        # why the ledger is read-only, once it is open read-only (views keep writes off)
        self.read_only: str | None = None

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

    def pick_key(self, subject: str, relation: str, space: str | None = None) -> None:
        self.key_space = space
        self.key_picked.emit(subject, relation)
        self.show_view.emit("timeline")
