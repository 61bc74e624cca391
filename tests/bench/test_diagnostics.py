"""False-supersession and supersession-recall counting on hand-made engine results."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstrata_app.bench.diagnostics import store_shape, write_path
from memstrata_app.bench.generators import Dataset, Item, Statement
from memstrata_app.engine.types import Action, AssertionId, IngestAction, IngestResult

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _item(id_: str, family: str, values: list[str], tpl: str = "{s} port {v}") -> Item:
    it = Item(id_, family, "port", id_, "?", tpl, values)
    it.statements = [Statement(tpl.format(s=id_, v=v), T0 + timedelta(days=i), id_, i, v)
                     for i, v in enumerate(values)]
    return it


def _res(action: Action, aid: int, retired: tuple[int, ...] = ()) -> IngestResult:
    return IngestResult((IngestAction(action, AssertionId(aid), "x",
                                      retired=tuple(AssertionId(r) for r in retired)),))


def test_right_and_wrong_retirements_are_told_apart() -> None:
    evo = _item("a", "config_migration", ["1", "2", "3"])
    near = _item("b", "near_duplicate", ["1"])
    data = Dataset(1, True, [evo, near], [], [], [])
    stream = [evo.statements[0], near.statements[0], evo.statements[1], evo.statements[2]]
    results = [_res(Action.NOVEL, 1), _res(Action.NOVEL, 2),
               _res(Action.SUPERSEDED, 3, (1,)),  # right: a's old value
               _res(Action.SUPERSEDED, 4, (3, 2))]  # right for 3, wrong for b's row 2
    d = write_path(data, stream, results)
    assert d["supersession_recall"] == {"config_migration/port": 1.0}
    assert d["false_supersessions"] == 1
    assert d["false_supersession_categories"] == {"near_duplicate/port": 1}
    assert d["false_supersession_examples"][0]["retired"] == near.statements[0].text


def test_a_missed_value_change_lowers_supersession_recall() -> None:
    evo = _item("a", "dependency_bump", ["1", "2", "3"])
    data = Dataset(1, True, [evo], [], [], [])
    results = [_res(Action.NOVEL, 1), _res(Action.PROSE, 2), _res(Action.SUPERSEDED, 3, (1,))]
    d = write_path(data, evo.statements, results)
    assert d["supersession_recall"]["dependency_bump/port"] == 0.5
    assert d["phrasings"][0]["actions"] == {"novel": 1, "prose": 1, "superseded": 1}


def test_store_shape_counts_retired_rows() -> None:
    s = store_shape({"total": 10, "by_status": {"active": 5, "plain": 1, "superseded": 3,
                                                "retracted": 1}}, 12)
    assert s["rows"] == 10 and s["active_rows"] == 6 and s["retired_share"] == 0.4


def test_out_of_order_statements_must_be_filed_as_history() -> None:
    from dataclasses import replace

    evo = _item("a", "config_migration", ["1", "2", "3"])
    late = replace(evo.statements[1], late=True)
    evo.statements[1] = late
    data = Dataset(1, True, [evo], [], [], [])
    stream = [evo.statements[0], evo.statements[2], late]
    good = write_path(data, stream, [_res(Action.NOVEL, 1), _res(Action.SUPERSEDED, 3, (1,)),
                                     _res(Action.HISTORY, 2)])
    assert good["late_filed_as_history"] == 1.0 and good["false_supersessions"] == 0
    assert good["supersession_recall"] == {"config_migration/port": 1.0}
    bad = write_path(data, stream, [_res(Action.NOVEL, 1), _res(Action.SUPERSEDED, 3, (1,)),
                                    _res(Action.SUPERSEDED, 2, (3,))])
    assert bad["late_filed_as_history"] == 0.0 and bad["false_supersessions"] == 1
    # closing the older neighbour's interval when the late state is slotted in is right
    ok = write_path(data, stream, [_res(Action.NOVEL, 1), _res(Action.SUPERSEDED, 3, (1,)),
                                   _res(Action.HISTORY, 2, (1,))])
    assert ok["false_supersessions"] == 0 and ok["late_filed_as_history"] == 1.0
