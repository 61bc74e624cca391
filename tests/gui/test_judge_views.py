"""The update judge in the app: its decisions in the Ingest view, its review items in the
Review view (and approving one), its method in a fact's detail."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata_app.engine import Status
from memstrata_app.engine.understand.judge import Thresholds, builtin_judge

from .conftest import seed

pytestmark = pytest.mark.skipif(builtin_judge() is None,
                                reason="the update judge is not installed")

OLD = "The Dockerfile uses python 3.11."
NEW = "bumped the Dockerfile to python 3.12"


@pytest.fixture
def win(tmp_path: Path, local_embedder: Any, make_window: Any) -> Any:
    db = tmp_path / "ledger.db"
    seed(db, local_embedder, [(OLD, datetime(2026, 11, 16, tzinfo=UTC))])
    return make_window(db)


def set_thresholds(qtbot: Any, win: Any, th: Thresholds) -> None:
    done: list[Any] = []
    win.client.call("thresholds", lambda e: setattr(e, "judge_thresholds", th),
                    lambda _r: done.append(1))
    qtbot.waitUntil(lambda: bool(done))


def remember_then_review(qtbot: Any, win: Any, text: str) -> Any:
    """Remember `text` in the Ingest view, then open its one review item in the Review view."""
    ing = win.ingest
    win.show_view("ingest")
    ing.text.setPlainText(text)
    with qtbot.waitSignal(ing.ingested):
        ing.remember.click()
    review = win.review
    review.reload()
    qtbot.waitUntil(lambda: len(review.rows) == 1)
    win.show_view("review")
    review.table.selectRow(0)
    qtbot.waitUntil(lambda: review.retires.count() > 0)
    return review


def test_the_ingest_view_shows_what_the_judge_read(qtbot: Any, win: Any) -> None:
    set_thresholds(qtbot, win, Thresholds(supersede=0.0, review=0.0, veto=1.0))
    ing = win.ingest
    win.show_view("ingest")
    ing.text.setPlainText(NEW)
    with qtbot.waitSignal(ing.ingested) as got:
        ing.remember.click()
    act = got.args[0].actions[0]
    assert act.method.startswith("judge:") and act.retired
    line = ing.results.item(0).text()
    assert line.startswith("SUPERSEDED")
    tip = ing.results.item(0).toolTip()
    assert "judged #1" in tip and "updates" in tip and "→ superseded" in tip


def test_a_judge_review_item_explains_itself_and_approving_retires(qtbot: Any,
                                                                   win: Any) -> None:
    set_thresholds(qtbot, win, Thresholds(supersede=1.0, review=0.0, veto=1.0))
    review = remember_then_review(qtbot, win, NEW)
    assert OLD in review.retires.item(0).text()
    assert "update judge is not sure" in review.why.text()
    assert "update judge" in review.info.text()
    with qtbot.waitSignal(review.decided), qtbot.waitSignal(review.loaded):
        review.approve_button.click()
    done: list[Any] = []
    win.client.call("get", lambda e: e.get(1), done.append)
    qtbot.waitUntil(lambda: bool(done))
    assert done[0].status is Status.SUPERSEDED


GRADLE = "build.gradle so far: `compileSdk 34`, `okhttp: 4.11.0`, `room: 2.6.0`, `coil: 2.5.0`"


def test_a_part_review_item_says_only_that_part_retires(qtbot: Any, tmp_path: Path,
                                                         local_embedder: Any,
                                                         make_window: Any) -> None:
    db = tmp_path / "parts.db"
    seed(db, local_embedder, [(GRADLE, datetime(2026, 11, 20, tzinfo=UTC))])
    win = make_window(db)
    set_thresholds(qtbot, win, Thresholds(supersede=0.999, review=0.9, veto=1.0))
    review = remember_then_review(qtbot, win, "okhttp upgraded to 4.12.0 (the http2 stall fix)")
    line = review.retires.item(0).text()
    assert "only “`okhttp: 4.11.0`”" in line and "the rest stays current" in line
    assert "`room: 2.6.0`" in line and "`okhttp: 4.11.0`," not in line.split("current:")[1]
    assert "rest of its sentence stays current" in review.why.text()
    with qtbot.waitSignal(review.decided), qtbot.waitSignal(review.loaded):
        review.approve_button.click()
    done: list[Any] = []
    win.client.call("retrieve", lambda e: [h.text for h in e.retrieve("okhttp version", k=10)],
                    done.append)
    qtbot.waitUntil(lambda: bool(done))
    assert GRADLE not in done[0] and any("`coil: 2.5.0`" in t and "…" in t for t in done[0])
