"""Attributes of the engine's facade that live in one of its services (core.py): read and set
there, so `engine.judge_thresholds = …` reaches the judging service itself."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Via(Generic[T]):
    """An attribute of the engine that lives in one of its services (read and set there)."""

    def __init__(self, service: str, name: str | None = None):
        self.service, self.name = service, name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    def __get__(self, obj: Any, owner: type | None = None) -> T:
        return getattr(getattr(obj, self.service), self.name)  # type: ignore[arg-type]

    def __set__(self, obj: Any, value: T) -> None:
        setattr(getattr(obj, self.service), self.name, value)  # type: ignore[arg-type]


class Deferred(Via[T]):
    """A setting of the understanding layer: set before the layer is built, it is kept and
    applied when it is (reading it builds the layer)."""

    def __set__(self, obj: Any, value: T) -> None:
        if obj._pipeline is None:
            obj._pending[(self.service, self.name)] = value
        else:
            super().__set__(obj, value)
