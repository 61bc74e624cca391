"""Waiting for a request's timings: the server records them when its side of the stream
closes, which can be a moment after the client has read the last chunk."""

from __future__ import annotations

import time
from typing import Any


def wait_for(engine: Any, series: str, count: int = 1) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(engine.metrics.samples(series)) < count:
        time.sleep(0.02)
    assert len(engine.metrics.samples(series)) >= count, series
