"""A key with a context reaches the timeline whole; the latency charts read right with one
sample; request-log entries and facts are named apart ("audit 12" against "#12")."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import seed

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("In prod gunicorn runs 8 workers.", T0),
                              ("In prod gunicorn runs 12 workers.", T0 + timedelta(days=2)),
                              ("gunicorn uses 4 workers.", T0 + timedelta(days=3))])
    return make_window(db)


def row_of(ledger: Any, value: str) -> int:
    model = ledger.model
    return next(r for r in range(model.rowCount()) if model.assertion(r).object == value)


@pytest.mark.parametrize("how", ["button", "double-click"])
def test_show_in_timeline_opens_the_key_with_its_context(qtbot: Any, win: Any, how: str
                                                          ) -> None:
    ledger, tl = win.ledger, win.timeline
    qtbot.waitUntil(lambda: ledger.model.rowCount() == 3)
    with qtbot.waitSignal(ledger.detail.chain_loaded):
        ledger.select_row(row_of(ledger, "12"))
    assert ledger.detail.fields["Key"].text() == "gunicorn · workers · prod"
    with qtbot.waitSignal(tl.drawn, timeout=10000):
        if how == "button":
            ledger.detail.timeline_button.click()
        else:
            ledger.table.doubleClicked.emit(ledger.model.index(row_of(ledger, "12"), 0))
    assert win.tabs.currentWidget() is tl
    assert (tl.key, tl.key_context) == (("gunicorn", "workers"), "prod")
    assert sorted(a.object for a in tl.canvas.rows) == ["12", "8"]  # not an empty chart
    assert tl.shown_values() == ["12"]
    assert tl.title.text() == "gunicorn · workers · prod"
    qtbot.waitUntil(lambda: tl.keys.currentItem() is not None, timeout=5000)
    current = tl.keys.currentItem()
    assert current is not None and current.text() == "gunicorn · workers · prod"

    # the key without a context is its own chart
    with qtbot.waitSignal(ledger.detail.chain_loaded):
        ledger.select_row(row_of(ledger, "4"))
    assert ledger.detail.fields["Key"].text() == "gunicorn · workers"
    with qtbot.waitSignal(tl.drawn, timeout=10000):
        ledger.detail.timeline_button.click()
    assert [a.object for a in tl.canvas.rows] == ["4"] and tl.key_context == ""


# --- latency ----------------------------------------------------------------------------------
def latency_view(qtbot: Any, samples: dict[str, list[tuple[float, float]]]) -> Any:
    from memstrata_app.engine.metrics import Metrics
    from memstrata_app.gui.latency import LatencyView, MetricsBridge

    metrics = Metrics()
    for name, points in samples.items():
        for t, ms in points:
            metrics.record(name, ms, t)
    bridge = MetricsBridge(metrics)
    view = LatencyView(bridge)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    view.series.setCurrentText("retrieve")
    view.redraw()
    qtbot.wait(50)
    return view


def axis_labels(plot: Any, name: str) -> list[str]:
    axis = plot.getAxis(name)
    lo, hi = plot.getViewBox().viewRange()[0 if name == "bottom" else 1]
    ticks = axis.tickValues(lo, hi, axis.width() if name == "bottom" else axis.height())
    values = [v for _spacing, vs in ticks for v in vs]
    return [s for _spacing, vs in ticks for s in axis.tickStrings(vs, 1.0, _spacing)], values


def test_one_sample_reads_right(qtbot: Any) -> None:
    now = time.time()
    view = latency_view(qtbot, {"retrieve": [(now, 12.5)]})
    labels, _ = axis_labels(view.plot, "bottom")
    shown = [s for s in labels if s]
    assert shown and len(shown) == len(set(shown)), f"time labels repeat: {labels}"
    lo, hi = view.plot.getViewBox().viewRange()[0]
    assert hi - lo >= 59 and lo < now < hi
    assert view.p50.isVisible() and not view.p95.isVisible()  # one line, not two on top
    assert "p50 = p95" in view.p50.label.format
    _, counts = axis_labels(view.hist, "left")
    assert counts and all(float(c).is_integer() for c in counts), counts


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.floats(0.1, 5000, allow_nan=False), min_size=1, max_size=40),
       st.floats(0.0, 600.0))
def test_count_ticks_are_whole_and_time_labels_never_repeat(qtbot: Any, ms: list[float],
                                                            spread: float) -> None:
    now = time.time()
    times = [now - spread * i / max(1, len(ms) - 1) for i in range(len(ms))]
    view = latency_view(qtbot, {"retrieve": sorted(zip(times, ms, strict=True))})
    try:
        labels, _ = axis_labels(view.plot, "bottom")
        shown = [s for s in labels if s]
        assert len(shown) == len(set(shown)), labels
        _, counts = axis_labels(view.hist, "left")
        assert all(float(c).is_integer() for c in counts), counts
        if view.p95.isVisible():  # two lines: their labels do not sit on one another
            a, b = view.p50.label.sceneBoundingRect(), view.p95.label.sceneBoundingRect()
            assert not a.intersects(b), (a, b)
    finally:
        view.shutdown()
        view.close()


def test_request_log_entries_are_not_named_like_facts(qtbot: Any, tmp_path: Path,
                                                      local_embedder: Any,
                                                      make_window: Any) -> None:
    from memstrata_app.engine import MemoryEngine

    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [("The api-gateway listens on port 8080.", T0),
                              ("The api-gateway listens on port 8443.", T0 + timedelta(1))])
    with MemoryEngine.open(db, embedder=local_embedder) as eng:
        entry = eng.log_injection("openai", "which port?", injected=[(2, 0.8)],
                                  filtered=[(1, 0.7, 2)], settings={"k": 5}, tool="curl/8")
    w = make_window(db)
    w.show_view("audit")
    qtbot.waitUntil(lambda: bool(w.audit.entries), timeout=10000)
    title = w.audit.entry_title.text()
    assert title.startswith(f"audit {entry}:") and f"#{entry}" not in title
    assert w.audit.table.item(0, 0).toolTip().startswith(f"audit {entry} ·")
    assert w.audit.injected.item(0, 3).text() == "#2"  # a fact is #N
    assert w.audit.filtered.item(0, 3).text() == "retired by #2"
