"""File → Import gives the per-statement account the CLI prints: what each statement retired,
what went to review, what was not stored and why; a filter for what changed something; Copy."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QGuiApplication

T0 = datetime(2026, 4, 1, 9, 0, tzinfo=UTC)
NOTES = [  # (text, days after T0)
    ("The api-gateway listens on port 8080.", 0),
    ("The api-gateway listens on port 8443.", 1),  # retires 8080
    ("In prod the request timeout is 30 seconds.", 2),
    ("In staging the request timeout is 20 seconds.", 3),
    ("The request timeout is 45 seconds everywhere now.", 4),  # to review: every context
    ("Which port does the api-gateway use?", 5),  # a question: not stored
    ("We deploy on Fridays.", 6),  # plain text
]


@pytest.fixture
def win(tmp_path: Path, make_window: Any) -> Any:
    return make_window(tmp_path / "ledger.db")


def notes_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps({"text": t, "at": (T0 + timedelta(days=d)).isoformat()})
                            + "\n" for t, d in NOTES), "utf-8")
    return path


def test_import_shows_each_statement_with_what_became_of_it(qtbot: Any, win: Any,
                                                            tmp_path: Path) -> None:
    ing = win.ingest
    with qtbot.waitSignal(ing.import_finished, timeout=60000) as finished:
        ing.import_file(notes_file(tmp_path))
    assert finished.args == ["done", len(NOTES)]
    report = ing.report
    assert report is not None and report.isVisible()
    assert ing.report_button.isVisibleTo(ing)

    # the line under the button and the report's summary count what happened
    status = ing.import_status.text()
    assert status != f"Imported {len(NOTES)} statements."
    for words in ("1 superseded", "1 sent to review", "1 not stored", "1 older value retired"):
        assert words in status, status
    assert report.summary.text().startswith(f"Imported {len(NOTES)} statements:")

    # every statement, in file order, with its line, time, outcome and why
    report.set_filter("all")
    table = report.table
    rows = [[table.item(r, c).text() for c in range(table.columnCount())]
            for r in range(table.rowCount())]
    assert [r[0] for r in rows] == [str(i) for i in range(1, len(NOTES) + 1)]
    by_line = {int(r[0]): r for r in rows}
    assert by_line[1][2] == "novel"
    assert by_line[2][2] == "superseded" and "api-gateway · port = 8443" in by_line[2][3]
    assert "retired #1 (8080)" in by_line[2][4]
    assert by_line[5][2] == "quarantined"
    assert "waits in the review queue" in by_line[5][4]
    assert "stated for every context" in by_line[5][4]
    assert by_line[6][2] == "not stored" and "a question" in by_line[6][4]
    assert by_line[7][2] == "prose"
    assert by_line[3][1].startswith("2026-04-03")  # its own time, from the file

    # the filter: only what retired, superseded or went to review
    report.set_filter("changed")
    changed = [table.item(r, 0).text() for r in range(table.rowCount())]
    assert changed == ["2", "5"]
    assert report.count.text() == f"2 of {len(NOTES)} sentences"
    report.set_filter("skipped")
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["6"]

    # Copy: the CLI's account of the rows shown
    report.set_filter("changed")
    report.copy_button.click()
    text = QGuiApplication.clipboard().text()
    assert text.splitlines()[0] == report.summary.text().replace("&amp;", "&")
    assert "line 2 (said 2026-04-02" in text
    assert "“The api-gateway listens on port 8443.”" in text
    assert "superseded" in text and "retired #1 (8080)" in text
    assert "line 5" in text and "quarantined" in text
    assert "line 6" not in text and "We deploy" not in text  # filtered out


def test_a_cancelled_import_keeps_the_account_of_what_it_wrote(qtbot: Any, win: Any) -> None:
    ing = win.ingest
    items = [(f"service-{i} listens on port {10000 + i}.", None) for i in range(256)]
    ing.progress.valueChanged.connect(lambda v: v > 0 and ing.cancel_button.click())
    with qtbot.waitSignal(ing.import_finished, timeout=60000) as finished:
        ing.import_items(items, name="many.txt")
    how, n = finished.args
    assert how == "cancelled" and 0 < n < len(items)
    report = ing.report
    assert report is not None and report.isVisible()
    assert report.summary.text().startswith(f"Cancelled after {n:,} of {len(items):,}")
    report.set_filter("all")
    assert report.table.rowCount() == n  # one sentence per statement written
    assert report.table.item(n - 1, 2).text() == "novel"
    assert len(report.run.results) == n
    qtbot.waitUntil(lambda: win.ledger.model.total >= n, timeout=10000)  # they stay
