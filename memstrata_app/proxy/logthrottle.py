"""Log lines that may repeat without bound (one per connection or disconnect) are rate-limited.

The first line of a kind is written at once; more of the same kind within the window are
counted and reported with the next line written. Network errors lose their traceback: a
client hanging up is an event, not a bug.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

WINDOW_S = 10.0
# Exceptions that only say a peer went away or the machine ran short; logged as one line.
_NETWORK_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError)


class Throttle:
    """At most one line per `window` seconds per key, with a count of the ones held back."""

    def __init__(self, window: float = WINDOW_S):
        self.window = window
        self._state: dict[str, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> int | None:
        """None: hold this line back; else write it, noting this many held back before it."""
        now = time.monotonic()
        with self._lock:
            last, held = self._state.get(key, (float("-inf"), 0))
            if now - last < self.window:
                self._state[key] = (last, held + 1)
                return None
            if len(self._state) > 1000:  # keys are kinds of event, but stay bounded anyway
                self._state.clear()
            self._state[key] = (now, 0)
            return held

    def reset(self) -> None:
        with self._lock:
            self._state.clear()

    def log(self, logger: logging.Logger, level: int, key: str, msg: str, *args: Any) -> None:
        if not logger.isEnabledFor(level):
            return
        held = self.allow(key)
        if held is None:
            return
        if held:
            msg += " (and %d more like this in the last %.0f s)"
            args = (*args, held, self.window)
        logger.log(level, msg, *args)


THROTTLE = Throttle()


class ThrottleFilter(logging.Filter):
    """For a library's logger: repeated messages rate-limited, network tracebacks cut to a line."""

    def __init__(self, throttle: Throttle | None = None):
        super().__init__()
        self.throttle = throttle or Throttle()

    def filter(self, record: logging.LogRecord) -> bool:
        held = self.throttle.allow(f"{record.name}:{record.msg}")
        if held is None:
            return False
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None and isinstance(exc, _NETWORK_ERRORS):
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {exc})"
            record.args = None
            record.exc_info = record.exc_text = None
        if held:
            record.msg = f"{record.getMessage()} (and {held} more like this in the last " \
                         f"{self.throttle.window:.0f} s)"
            record.args = None
        return True


def install() -> None:
    """Throttle uvicorn's and asyncio's own lines (idempotent)."""
    for name in ("uvicorn.error", "asyncio"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, ThrottleFilter) for f in logger.filters):
            logger.addFilter(ThrottleFilter())
