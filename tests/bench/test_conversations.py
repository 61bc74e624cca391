"""The conversational benchmark: loaders, the probe scorer with the plain baseline, and the
write-path counts on real engine ledgers."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata_app.bench import cli, conversations_report, verdict
from memstrata_app.bench import conversations as conv
from memstrata_app.bench.conversations import Case, ConversationDataError, Probe
from memstrata_app.bench.systems import CachedEmbedder
from memstrata_app.engine import MemoryEngine


def _t(day: int, hour: int = 9) -> datetime:
    return datetime(2026, 1, day, hour, tzinfo=UTC)


def _item(**over) -> dict:
    d = {"id": "port-1", "family": "config",
         "turns": [["2026-01-05T09:00", "The auth service port is 8080."],
                   ["2026-02-05T09:00", "maybe we should move auth to 7070?"],
                   ["2026-03-05T09:00", "The auth service port is 9090 now."]],
         "probes": [{"q": "auth port?", "want": ["9090"], "forbid": ["8080"]}],
         "final": {"active": ["9090"], "retired": ["8080"], "not_facts": ["7070"]}}
    d.update(over)
    return d


def _write(tmp_path: Path, items: list[dict]) -> Path:
    p = tmp_path / "items.json"
    p.write_text(json.dumps(items))
    return p


@pytest.fixture(scope="module")
def emb(local_embedder) -> CachedEmbedder:
    return CachedEmbedder(local_embedder)


# --- loaders ---------------------------------------------------------------------------------
def test_items_load_with_utc_times_and_probes(tmp_path: Path) -> None:
    [case] = conv.load_items(_write(tmp_path, [_item()]))
    assert case.turns[0][0] == datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert case.probes[0] == Probe("auth port?", ("9090",), ("8080",), None)
    assert case.final is not None and case.final["mixed"] == ()


@pytest.mark.parametrize(("bad", "message"), [
    ({"probes": [{"q": "p?", "want": ["6060"], "forbid": []}]}, "'6060' matches 0 turns"),
    ({"probes": [{"q": "p?", "want": ["auth"], "forbid": []}]}, "'auth' matches 3 turns"),
    ({"final": {"active": ["9090"], "retired": ["8080"], "not_facts": []}}, "not classified"),
    ({"final": {"active": ["9090", "port is 9090"], "retired": ["8080"], "not_facts": ["7070"]}},
     "classified twice"),
    ({"final": {"active": ["9090"], "retired": ["8080"], "nonsense": ["7070"]}}, "final takes"),
])
def test_items_loader_rejects_bad_substrings_and_unclassified_turns(
        tmp_path: Path, bad: dict, message: str) -> None:
    with pytest.raises(ConversationDataError, match="item 'port-1'") as err:
        conv.load_items(_write(tmp_path, [_item(**bad)]))
    assert message in str(err.value)


def test_story_loader_rejects_a_substring_that_names_no_line(tmp_path: Path) -> None:
    (tmp_path / "s.tsv").write_text("2026-01-05T09:12\tthe repo is `harbor`\n"
                                    "2026-01-06T09:12\tthe branch is `trunk`\n")
    (tmp_path / "s_probes.json").write_text(json.dumps(
        [{"q": "branch?", "want": ["`main`"], "forbid": []}]))
    with pytest.raises(ConversationDataError, match="story s: probe 0"):
        conv.load_story(tmp_path / "s.tsv")


def test_the_shipped_dev_stories_load() -> None:
    stories = conv.load_set("stories")
    assert {c.id for c in stories} == {"backend", "firmware", "gamedev", "warehouse"}
    assert all(40 <= len(c.turns) <= 45 and len(c.probes) >= 18 for c in stories)
    assert all(c.final is not None and c.final["active"] for c in stories)
    assert [c.id for c in conv.load_set("stories", limit=1, family="firmware")] == ["firmware"]


def test_the_blind_stories_load() -> None:
    blind = conv.load_set("blind1")
    assert len(blind) == 8
    assert all(len(c.turns) >= 40 and len(c.probes) >= 20 for c in blind)
    assert {c.id for c in blind}.isdisjoint({"backend", "firmware", "gamedev", "warehouse"})
    blind2 = conv.load_set("blind2")
    assert len(blind2) == 8 and all(len(c.probes) >= 18 for c in blind2)
    assert {c.id for c in blind2}.isdisjoint({c.id for c in blind})
    blind3 = conv.load_set("blind3")
    assert len(blind3) == 8 and all(len(c.turns) >= 38 and len(c.probes) >= 20 for c in blind3)
    assert {c.id for c in blind3}.isdisjoint({c.id for c in blind} | {c.id for c in blind2})
    blind4 = conv.load_set("blind4")
    assert len(blind4) == 4 and all(len(c.turns) >= 38 and len(c.probes) >= 20 for c in blind4)
    assert {c.id for c in blind4}.isdisjoint({c.id for c in (*blind, *blind2, *blind3)})
    blind5 = conv.load_set("blind5")
    assert len(blind5) == 6 and all(len(c.turns) >= 38 and len(c.probes) >= 20 for c in blind5)
    assert {c.id for c in blind5}.isdisjoint({c.id for c in (*blind, *blind2, *blind3, *blind4)})


def test_a_story_is_scored_on_its_write_path_from_its_current_probes() -> None:
    case = conv.story_final(Case("s", "s", (
        (_t(1), "The api port is 8080."), (_t(2), "The api port is 9090 now."),
        (_t(3), "Redis runs 7.2."), (_t(4), "The api listens on 9090, says the load balancer.")),
        (Probe("api port?", ("9090 now",), ("8080",)),
         Probe("redis?", ("7.2",), ()),
         Probe("api then?", ("8080",), ("9090 now",), _t(1) + (_t(2) - _t(1)) / 2),
         Probe("who says 9090?", ("load balancer",), ("says the load",)))))
    # as-of probes say nothing about the end; a line wanted and forbidden is left out
    assert case == {"active": ("7.2", "9090 now"), "retired": ("8080",),
                    "not_facts": (), "mixed": ()}


def test_a_story_whose_true_line_was_retired_counts_a_false_retirement(
        engine: MemoryEngine) -> None:
    story = Case("st", "st", ((_t(1), "The api port is 8080."),
                              (_t(2), "The worker port is 7070.")),
                 (Probe("api port?", ("8080",), ()), Probe("worker?", ("7070",), ())))
    story = replace(story, final=conv.story_final(story))
    ids = conv.replay(engine, story)
    engine.forget(ids[0][0])
    wp = conv.ledger_write_path(engine, story, ids)
    assert [f["line"] for f in wp["false_retirements"]] == ["The api port is 8080."]


# --- scoring with the plain baseline -------------------------------------------------------------
def test_plain_baseline_keeps_the_stale_value_and_fails_the_current_probe(emb) -> None:
    case = Case("tiny", "config", ((_t(5), "The auth service port is 8080."),
                                   (_t(20), "The auth service port is 9090.")), ())
    base = conv.PlainStore(emb)
    base.load_turns(case.turns)
    now = Probe("Which port does the auth service use?", ("9090",), ("8080",))
    ok, missing, present = conv.score_probe(base.retrieve(now.q, 5), now)
    assert (ok, missing, present) == (False, [], ["8080"])
    # a plain store only knows what was said by then, so the past question passes
    past = Probe(now.q, ("8080",), ("9090",), _t(10))
    assert conv.score_probe(base.retrieve(past.q, 5, past.as_of), past)[0]
    assert conv.score_probe(["x 9090 y"], now) == (True, [], [])


# --- write-path counts on real ledgers ----------------------------------------------------------
def test_forgetting_a_true_line_is_a_false_retirement_and_a_kept_stale_one_is_missed(
        engine: MemoryEngine) -> None:
    case = Case("ops-1", "ops", (
        (_t(5), "The billing service runs on host alpha-7."),
        (_t(6), "We review the billing dashboards every Monday morning."),
        (_t(7), "The billing queue is called jobs-old.")), (),
        {"active": ("alpha-7", "dashboards"), "retired": ("jobs-old",), "not_facts": (),
         "mixed": ()})
    ids = conv.replay(engine, case)
    for row in engine.list_assertions(limit=100):  # take reviews out of the picture
        if row.status == "quarantined":
            engine.approve(row.id)
    for row in engine.list_assertions(limit=100):
        if "dashboards" in row.text and row.status in ("active", "plain"):
            engine.forget(row.id)
    wp = conv.ledger_write_path(engine, case, ids)
    [false] = wp["false_retirements"]
    assert false["item"] == "ops-1" and "dashboards" in false["line"]
    assert false["by"] and "retracted" in false["by"][0]
    assert [m["line"] for m in wp["missed_retirements"]] == [case.turns[2][1]]
    assert wp["in_review"] == [] and wp["not_stored"] == []


def _row(i: int, text: str, status: str, day: int, **kw) -> dict:
    r = {"id": i, "kind": "fact", "text": text, "status": status,
         "valid_from": _t(day).isoformat(), "recorded_at": _t(day).isoformat()}
    return r | kw


def _assertion(i: int, text: str, status: str, day: int, obj: str, **kw) -> dict:
    return _row(i, text, status, day, kind="assertion", key="auth|port", subject="auth",
                relation="port", object=obj, subject_norm="auth", relation_norm="port",
                object_norm=obj, **kw)


def test_hedges_that_retire_and_lines_in_review_are_counted(engine: MemoryEngine) -> None:
    """An exported ledger restored exactly (statuses and chains) through the engine's import."""
    engine.import_records([
        _assertion(1, "The auth port is 8080.", "superseded", 5, "8080",
                   valid_to=_t(6).isoformat(), superseded_by=2),
        _assertion(2, "maybe the auth port should be 9090?", "active", 6, "9090"),
        _row(3, "Deploys happen on Tuesdays.", "quarantined", 7),
        _row(4, "The queue is jobs-old.", "superseded", 8, valid_to=_t(9).isoformat(),
             superseded_by=5),
        _row(5, "should we rename the queue to jobs-new?", "plain", 9),
        _row(6, "The cache TTL is 60 seconds.", "plain", 10),
    ])
    turns = tuple((_t(d), r) for d, r in [
        (5, "The auth port is 8080."), (6, "maybe the auth port should be 9090?"),
        (7, "Deploys happen on Tuesdays."), (8, "The queue is jobs-old."),
        (9, "should we rename the queue to jobs-new?"), (10, "The cache TTL is 60 seconds.")])
    case = Case("mix-1", "hedges", turns, (), {
        "active": ("8080", "Tuesdays", "TTL"), "retired": ("jobs-old",),
        "not_facts": ("9090", "jobs-new"), "mixed": ()})
    wp = conv.ledger_write_path(engine, case, [[] for _ in turns])
    got = {(f["line"], f["cause"], tuple(f["by"])) for f in wp["false_retirements"]}
    assert got == {("The auth port is 8080.", "retired",
                    ("maybe the auth port should be 9090?",)),
                   ("The queue is jobs-old.", "not_fact",
                    ("should we rename the queue to jobs-new?",))}
    assert [r["line"] for r in wp["in_review"]] == ["Deploys happen on Tuesdays."]
    assert [r["line"] for r in wp["not_facts_as_facts"]] == [turns[1][1]]
    assert wp["missed_retirements"] == []


# --- the CLI, the report and the verdict ----------------------------------------------------------
def test_cli_runs_an_items_set_end_to_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emb,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "conversations").mkdir()
    (tmp_path / "conversations" / "dev.json").write_text(json.dumps(
        [_item(), _item(id="port-2", family="other")]))
    monkeypatch.setattr(conv, "DATA", tmp_path)
    monkeypatch.setattr("memstrata_app.engine.retrieve.embedders.shared_local_embedder",
                        lambda: emb.inner)
    assert conv.available_sets() == ["dev"]
    assert cli.main(["conversations", "--set", "all", "--limit", "1", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "conversations: dev" in out and "false retirements" in out
    assert "config" in out and "other" in out and "total" in out
    assert cli.main(["conversations", "--set", "dev", "--family", "config", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    t = res["sets"]["dev"]["totals"]
    assert t["items"] == 1 and t["probes"] == 1 and t["baseline_pass"] == 0
    assert t["scored_write"] == 1


def test_cli_embedder_option_replays_with_the_static_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from memstrata_app.engine.retrieve.embedders import static_model_dir

    if not (static_model_dir() / "model.safetensors").is_file():
        pytest.skip("the static embedder is not built (scripts/build_static_embedder.py)")
    (tmp_path / "conversations").mkdir()
    (tmp_path / "conversations" / "dev.json").write_text(json.dumps([_item()]))
    monkeypatch.setattr(conv, "DATA", tmp_path)
    assert cli.main(["conversations", "--set", "dev", "--embedder", "static", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["embedder"] == "static:minilm-m2v"
    t = res["sets"]["dev"]["totals"]
    assert t["items"] == 1 and t["probes"] == 1 and t["engine_pass"] == 1
    assert t["false_retirements"] == 0


def test_a_false_retirement_fails_the_verdict_and_shows_in_the_report() -> None:
    totals = conv.summarize([])
    fr = {"item": "port-1", "line": "The auth port is 8080.", "by": ["maybe 9090?"],
          "cause": "retired"}
    conv_res = {"k": 5, "limit_per_family": None, "totals": totals, "sets": {"dev": {
        "families": {"config": totals}, "totals": totals, "has_final": True, "details": [],
        "false_retirements": [fr], "missed_retirements": [], "in_review": []}}}
    report = {"engine": {"supersession_recall": {}, "false_supersession_categories": {},
                         "phrasings": []},
              "by_category": {"memstrata": {}, "naive_rag": {}}, "conversations": conv_res}
    [f] = verdict.failing(report)
    assert f["category"] == "conversations: false retirements"
    assert "port-1" in f["reasons"][1]
    assert "| family | items | probes |" in conversations_report.markdown(
        conv_res, lambda rows: "| " + " | ".join(rows[0]) + " |\n")
    assert "FALSE RETIREMENT port-1" in conversations_report.text(conv_res, verbose=True)


def test_no_development_story_line_is_in_the_item_sets() -> None:
    # the development stories stay their own set: no line of theirs in another data file
    lines = {ln.split("\t", 1)[1].strip()
             for f in (conv.DATA / "stories").glob("*.tsv")
             for ln in f.read_text(encoding="utf-8").splitlines() if "\t" in ln}
    lines = {s for s in lines if len(s) > 20}
    assert lines
    for name in conv.ITEM_SETS:
        text = (conv.DATA / "conversations" / f"{name}.json").read_text(encoding="utf-8")
        assert not [s for s in lines if s in text], name


def test_approving_the_judges_review_items_retires_what_they_propose(tmp_path, local_embedder):
    """--approve-judge: a reviewer who accepts every judge proposal; other quarantined rows
    (a low-confidence extraction) are left alone."""
    from memstrata_app.engine.understand.judge import Thresholds, builtin_judge

    if builtin_judge() is None:
        pytest.skip("the update judge is not installed")
    with MemoryEngine.open(tmp_path / "l.db", embedder=local_embedder) as eng:
        eng.judge_thresholds = Thresholds(supersede=1.0, review=0.0, veto=1.0)
        first = eng.ingest("The Dockerfile uses python 3.11.", at=_t(1)).actions[0]
        eng.ingest("bumped the Dockerfile to python 3.12", at=_t(2))
        assert eng.get(first.assertion_id).status.value == "active"
        assert conv.approve_judge_reviews(eng) == 1
        assert eng.get(first.assertion_id).status.value == "superseded"
        assert conv.approve_judge_reviews(eng) == 0  # nothing left to approve


def test_a_set_given_as_a_path_runs(tmp_path, local_embedder):
    """--set /some/folder/items.json: the set's name holds slashes (the ledgers' temp folder
    was named after it, and the run failed)."""
    path = _write(tmp_path, [_item()])
    res = conv.run_set(str(path), CachedEmbedder(local_embedder))
    assert res["totals"]["probes"] == 1 and not res.get("error")
