"""The timeline follows a renamed subject both ways, and File → Import reads files through
the same reader as `memstrata ingest --file`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .conftest import seed

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RENAMED = [("The orders service port is 8080.", T0),
           ("The checkout owner is Dana.", T0 + timedelta(days=14)),  # the new name, early
           ("Renamed the orders service to checkout.", T0 + timedelta(days=31)),
           ("The checkout port is 9090.", T0 + timedelta(days=59))]


def test_the_timeline_follows_a_renamed_subject_both_ways(
        qtbot: Any, tmp_path: Path, local_embedder: Any, make_window: Any) -> None:
    db = tmp_path / "renamed.db"
    seed(db, local_embedder, RENAMED)
    w = make_window(db)
    tl = w.timeline
    w.show_view("timeline")
    for subject, relation, values in (("checkout", "port", ["8080", "9090"]),
                                      ("orders service", "port", ["8080", "9090"]),
                                      ("orders service", "owner", ["Dana"]),
                                      ("checkout", "owner", ["Dana"])):
        with qtbot.waitSignal(tl.drawn, timeout=20000):
            tl.show_key(subject, relation)
        drawn = [a.object for a in tl.canvas.rows if a.status.value != "quarantined"]
        assert drawn == values, (subject, relation)


def test_file_import_and_ingest_file_share_one_reader() -> None:
    from memstrata_app import notes_file
    from memstrata_app.gui import ingest

    assert ingest.read_statements is notes_file.read_statements
