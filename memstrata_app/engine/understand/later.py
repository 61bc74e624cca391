"""A chat turn judged after its request has gone upstream.

The endpoint's memory step stands between a coding tool and its model: whatever it does
before the request goes on is added to the time to first byte. The rules take milliseconds;
the update judge reads each new statement beside up to eight candidates, ~7 ms a pair on two
cores. So for a chat turn (`ingest_and_retrieve(..., judge_later=True)`) the rules write the
turn at once (what they key is retired at once), retrieval answers from that ledger, and the
judge reads the turn afterwards, here: one worker thread, turns in the order they came, each
released by the relay once its request is upstream (or after RELEASE_WAIT seconds, whichever
comes first). Its verdicts are applied as the write path applies them (judging.py: retire,
hold for review, veto a rule), in a writer job of their own.

Until a turn is judged, what the judge will retire is still current, and that one request's
injected block may quote it beside the turn's own sentence: the block then marks the lines the
latest message stated and says that they are newer than the rest (proxy/injection.py). A
statement that something else replaced before its judging ran is not judged. `settle(timeout)` waits
for every queued turn (closing the engine does, so a turn written is a turn judged).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..types import EngineError

log = logging.getLogger(__name__)

RELEASE_WAIT = 2.0  # seconds a turn waits for its request to go upstream before it is judged

Run = Callable[[Sequence[Any], Sequence[Any], float], Any]


@dataclass
class _Turn:
    statements: Sequence[Any]
    actions: Sequence[Any]
    written_at: float  # time.time() when the rules wrote it: the judge's "now"
    queued: float = field(default_factory=time.perf_counter)
    released: threading.Event = field(default_factory=threading.Event)


class LaterJudging:
    """The queue of chat turns written by the rules and waiting for the judge."""

    def __init__(self, run: Run, record: Callable[[str, float], None] | None = None):
        self._run = run
        self._record = record
        self._queue: deque[_Turn] = deque()
        self._cv = threading.Condition()
        self._waiting = 0  # turns queued or being judged
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def waiting(self) -> int:
        with self._cv:
            return self._waiting

    def queue(self, statements: Sequence[Any], actions: Sequence[Any],
              written_at: float) -> Callable[[], None]:
        """Queue a turn's judging; the returned function releases it (idempotent)."""
        turn = _Turn(statements, actions, written_at)
        with self._cv:
            if self._closed:
                raise EngineError("the engine is closed")
            self._queue.append(turn)
            self._waiting += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="memstrata-judge-later",
                                                daemon=True)
                self._thread.start()
            self._cv.notify_all()
        return turn.released.set

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._queue and not self._closed:
                    self._cv.wait()
                if not self._queue:
                    return
                turn = self._queue.popleft()
            turn.released.wait(RELEASE_WAIT)
            try:
                self._run(turn.statements, turn.actions, turn.written_at)
            except Exception:  # the turn stays as the rules wrote it
                log.exception("judging a chat turn after the fact failed; the rules' reading"
                              " stands")
            finally:
                if self._record is not None:
                    self._record("judge.later", (time.perf_counter() - turn.queued) * 1000)
                with self._cv:
                    self._waiting -= 1
                    self._cv.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Release every queued turn and wait until all are judged; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cv:
            for turn in self._queue:
                turn.released.set()
            while self._waiting:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cv.wait(left)
        return True

    def close(self, timeout: float | None = 30.0) -> None:
        """Judge what is queued (at most `timeout` seconds), then stop the worker."""
        if not self.settle(timeout):
            log.warning("closing with %d chat turn(s) not yet judged: the rules' reading"
                        " stands for them", self.waiting)
        with self._cv:
            self._closed = True
            self._cv.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)
