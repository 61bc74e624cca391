"""The update judge's corpus: its size and spread as the judge issue asks, the calibration
writers kept whole, and the development stories and the blind sets kept out."""

from __future__ import annotations

from collections import Counter

from memstrata_app.bench import judge_corpus as jc
from memstrata_app.bench.conversations import DATA

HARD = jc.HARD_KINDS


def test_the_corpus_is_large_varied_and_mostly_hard_negatives():
    pairs = jc.load_pairs()
    assert len(pairs) >= 10_000
    assert len({p.writer for p in pairs}) >= 12
    assert len({p.domain for p in pairs}) >= 40
    labels = Counter(p.label for p in pairs)
    assert set(labels) == {"updates", "restates", "compatible"}
    negatives = [p for p in pairs if p.label != "updates"]
    assert sum(p.kind in HARD for p in negatives) >= len(negatives) / 2


def test_calibration_writers_are_whole_and_out_of_training():
    train, cal = jc.split(jc.load_pairs())
    assert {p.writer for p in cal} == set(jc.CALIBRATION_WRITERS)
    assert not {p.writer for p in train} & set(jc.CALIBRATION_WRITERS)


def test_no_development_story_or_blind_line_is_in_the_corpus():
    story_lines = {line.split("\t", 1)[1].strip()
                   for folder in ("stories", "blind1", "blind2", "blind3", "blind4", "blind5")
                   for f in (DATA / folder).glob("*.tsv")
                   for line in f.read_text(encoding="utf-8").splitlines() if "\t" in line}
    story_lines = {s for s in story_lines if len(s) > 30}
    assert story_lines
    text = {s for p in jc.load_pairs() for s in (p.old, p.new)}
    corpus = "\n".join(text)
    assert not [s for s in story_lines if s in corpus]


def test_review_corrections_apply(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "w01.jsonl").write_text(
        '{"id": "w01-0001", "old": "a is 1", "new": "a is 2", "label": "updates", "kind": "x"}\n'
        '{"id": "w01-0002", "old": "b is 1", "new": "b is 2 in staging", "label": "updates",'
        ' "kind": "x"}\n')
    (tmp_path / "review").mkdir()
    (tmp_path / "review" / "w01.jsonl").write_text(
        '{"id": "w01-0002", "label": "compatible", "note": "another context"}\n')
    got = {p.id: p.label for p in jc.load_pairs(tmp_path)}
    assert got == {"w01-0001": "updates", "w01-0002": "compatible"}
    assert {p.id: p.label for p in jc.load_pairs(tmp_path, reviewed=False)}["w01-0002"] \
        == "updates"
    assert jc.digest(tmp_path) != jc.digest(tmp_path / "nowhere")


def test_value_swaps_turn_an_update_into_restatements_of_the_same_value():
    up = jc.Pair("x1", "w01", "d", "The Dockerfile uses python 3.11.",
                 "bumped the Dockerfile to python 3.12", "updates", "change")
    two = jc.Pair("x2", "w01", "d", "api on 8080, db on 5432", "api moved to 9090, db to 5433",
                  "updates", "change")
    keep = jc.Pair("x3", "w01", "d", "The Dockerfile uses python 3.11.",
                   "the Dockerfile stays on python 3.11", "restates", "restatement")
    swaps = jc.value_swaps([up, two, keep])
    assert [(p.old, p.new, p.label) for p in swaps] == [
        ("The Dockerfile uses python 3.12.", "bumped the Dockerfile to python 3.12", "restates"),
        ("The Dockerfile uses python 3.11.", "bumped the Dockerfile to python 3.11", "restates")]
    # made from training writers only: the calibration writers' pairs never get swaps
    train, _cal = jc.split(jc.load_pairs())
    made = {p.writer for p in jc.value_swaps(train)}
    assert made and made.isdisjoint(jc.CALIBRATION_WRITERS)
