"""In-memory timing series (retrieve, ingest, endpoint) for benchmarks and the app's charts."""

from __future__ import annotations

import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable

Listener = Callable[[str, float, float], None]  # (series, unix time, milliseconds)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    if not values:
        return float("nan")
    s = sorted(values)
    idx = min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))
    return s[idx]


class Metrics:
    """Thread-safe ring buffers of (time, ms) per series, with listeners for live views.

    Series used across the app: "retrieve", "ingest", "endpoint.total",
    "endpoint.first_byte", "endpoint.retrieve", "endpoint.ingest".
    """

    def __init__(self, capacity: int = 5000):
        self._capacity = capacity
        self._series: dict[str, deque[tuple[float, float]]] = {}
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    def record(self, series: str, ms: float, at: float | None = None) -> None:
        t = time.time() if at is None else at
        with self._lock:
            buf = self._series.get(series)
            if buf is None:
                buf = self._series[series] = deque(maxlen=self._capacity)
            buf.append((t, ms))
            listeners = list(self._listeners)
        for cb in listeners:
            with contextlib.suppress(Exception):  # a broken view must not break the engine
                cb(series, t, ms)

    def samples(self, series: str) -> list[tuple[float, float]]:
        with self._lock:
            return list(self._series.get(series, ()))

    def series_names(self) -> list[str]:
        with self._lock:
            return sorted(self._series)

    def summary(self) -> dict[str, dict[str, float]]:
        """Per series: count, p50, p95 and last value, in milliseconds."""
        with self._lock:
            data = {k: [ms for _, ms in v] for k, v in self._series.items()}
        return {
            k: {
                "count": len(v),
                "p50": round(percentile(v, 50), 3),
                "p95": round(percentile(v, 95), 3),
                "last": round(v[-1], 3),
            }
            for k, v in data.items()
            if v
        }

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` on every new sample (from the recording thread); returns unsubscribe."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    class _Timer:
        def __init__(self, metrics: Metrics, series: str):
            self.metrics, self.series = metrics, series

        def __enter__(self) -> Metrics._Timer:
            self.t0 = time.perf_counter()
            return self

        def __exit__(self, *exc: object) -> None:
            self.ms = (time.perf_counter() - self.t0) * 1000
            self.metrics.record(self.series, self.ms)

    def timer(self, series: str) -> Metrics._Timer:
        """`with metrics.timer("retrieve"): ...` records the block's wall time."""
        return Metrics._Timer(self, series)
