"""The engine worker: order, threads, callbacks, change notices, cancel and shutdown."""

from __future__ import annotations

import threading
from typing import Any

from memstrata_app.engine import Cancelled
from memstrata_app.gui.worker import EngineClient, Operation

from .fake_engine import FakeEngine, make_rows


def test_operations_run_in_order_on_the_worker_and_report_back(qtbot: Any) -> None:
    engine = FakeEngine(make_rows(10))
    client = EngineClient(lambda: engine)
    qtbot.waitSignal(client.ready).wait()
    gui = threading.get_ident()
    ran: list[tuple[str, int]] = []
    results: list[Any] = []
    errors: list[BaseException] = []

    def step(name: str) -> Any:
        return lambda e: ran.append((name, threading.get_ident())) or e.count_assertions()

    client.call("a", step("a"), lambda r: results.append((r, threading.get_ident())))
    client.call("b", lambda e: 1 / 0, failure=errors.append)
    with qtbot.waitSignal(client.changed) as changed:
        client.call("c", step("c"), writes=("ledger", "review"))
    assert [n for n, _ in ran] == ["a", "c"]
    assert all(ident != gui for _, ident in ran)
    assert results == [(10, gui)]
    assert isinstance(errors[0], ZeroDivisionError)
    assert changed.args[0].touches("review") and changed.args[0].op == "c"
    assert client.pending == 0

    gate = threading.Event()
    client.call("hold", lambda e: gate.wait(5))
    skipped: list[BaseException] = []
    op = client.submit(Operation("skipped", lambda e: ran.append(("skipped", 0)),
                                 failure=skipped.append))
    op.cancel.set()
    gate.set()
    qtbot.waitUntil(lambda: bool(skipped))
    assert isinstance(skipped[0], Cancelled) and ("skipped", 0) not in ran

    held = threading.Event()
    client.call("hold again", lambda e: held.wait(5))
    client.call("queued", step("queued"))
    release = threading.Timer(0.2, held.set)
    release.start()
    client.shutdown()  # cancels queued work, then closes the ledger on the worker
    release.join()
    assert "queued" not in [n for n, _ in ran] and engine.closed
    client.call("after", step("after"))  # ignored once shut down
    assert "after" not in [n for n, _ in ran]
