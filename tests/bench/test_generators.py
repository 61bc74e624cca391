"""The generated data: deterministic, large enough, and free of currency markers."""

from __future__ import annotations

import re

import pytest

from memstrata_app.bench.generators import EVOLVING, build
from memstrata_app.bench.matching import contains_tokens, tokens

MARKERS = re.compile(
    r"\b(now|currently|current|old|older|new|newer|newest|latest|deprecated|updated?|changed?|"
    r"previously|formerly|no longer|anymore|recent|recently|today|yesterday|legacy|obsolete|"
    r"outdated|instead|still|replaced|was|were|used to|since|until|as of|january|february|march|"
    r"april|may|june|july|august|september|october|november|december)\b"
    r"|\[|\]|\b(19|20)\d\d\b|\d{4}-\d\d-\d\d", re.IGNORECASE)


@pytest.fixture(scope="module")
def full():
    return build(seed=7)


def test_same_seed_same_data_other_seed_other_data() -> None:
    a, b, c = build(11, quick=True), build(11, quick=True), build(12, quick=True)
    assert [(s.text, s.at) for s in a.stream] == [(s.text, s.at) for s in b.stream]
    assert a.questions == b.questions and a.pairs == b.pairs
    assert [s.text for s in a.stream] != [s.text for s in c.stream]


def test_every_family_has_at_least_60_items_in_full_mode(full) -> None:
    counts: dict[str, int] = {}
    for it in full.items:
        counts[it.family] = counts.get(it.family, 0) + 1
    assert set(counts) == {*EVOLVING, "static", "near_duplicate", "multi_valued"}
    assert min(counts.values()) >= 60, counts
    assert len(build(7, quick=True).items) < len(full.items)


def test_value_changes_are_textually_identical_but_for_the_value(full) -> None:
    for it in full.items:
        if it.family not in EVOLVING:
            continue
        assert 2 <= len(it.values) <= 5
        masked = {"\x00".join(st.text.rsplit(st.value, 1)) for st in it.statements}
        assert len(masked) == 1, (it.id, masked)
        frame = next(iter(masked))
        assert "\x00" in frame
        for v in it.values:  # no value also occurs in the sentence around it
            assert not contains_tokens(tokens(frame), tokens(v)), (it.id, v)


def test_no_currency_markers_in_any_assertion(full) -> None:
    for st in full.stream:
        if st.removal:
            continue  # an explicit removal says "no longer" by design (multi-valued only)
        hit = MARKERS.search(st.text.replace(st.value, " "))
        assert hit is None, (st.text, hit.group(0) if hit else None)


def test_removals_only_in_multi_valued_items(full) -> None:
    items = full.by_id()
    assert any(st.removal for st in full.stream)
    assert all(items[st.item].family == "multi_valued" for st in full.stream if st.removal)


def test_values_never_match_each_other_on_tokens(full) -> None:
    for it in full.items:
        for i, a in enumerate(it.values):
            for j, b in enumerate(it.values):
                if i != j:
                    assert not contains_tokens(tokens(b), tokens(a)), (it.id, a, b)


def test_questions_do_not_leak_values_and_cover_every_state(full) -> None:
    items = full.by_id()
    as_of: dict[str, int] = {}
    for q in full.questions:
        for v in q.expected + q.wrong:
            assert not contains_tokens(tokens(q.query), tokens(v)), (q.query, v)
        if q.kind == "as_of":
            as_of[q.item] = as_of.get(q.item, 0) + 1
            it = items[q.item]
            i = it.values.index(q.expected[0])
            times = it.state_times()
            assert times[i] <= q.as_of and (i + 1 == len(times) or q.as_of < times[i + 1])
    for it in full.items:
        if it.family in EVOLVING:
            assert as_of[it.id] == len(it.values)


def test_stream_is_in_time_order_but_for_late_arrivals_at_the_end(full) -> None:
    n_late = sum(s.late for s in full.stream)
    assert n_late >= 20 and all(s.late for s in full.stream[-n_late:])
    on_time = full.stream[:-n_late]
    assert not any(s.late for s in on_time)
    times = [s.at for s in on_time]
    assert times == sorted(times)
    items = full.by_id()
    for s in full.stream[-n_late:]:  # said before a newer state of its item, ingested after it
        it = items[s.item]
        assert it.late and s.state < len(it.values) - 1
        assert sum(st.state == s.state for st in it.statements) == 1
    first_items = [s.item for s in full.stream[:40]]
    assert len(set(first_items)) > 20


def test_near_duplicate_pairs_differ_only_in_subject(full) -> None:
    items = full.by_id()
    pairs = [it for it in full.items if it.family == "near_duplicate"]
    assert pairs and all(items[it.sibling].template == it.template for it in pairs)
    same = sum(items[it.sibling].values == it.values for it in pairs)
    assert 0 < same < len(pairs)


def test_calibration_pairs_are_labelled_both_ways(full) -> None:
    labels = [p.label for p in full.pairs]
    assert labels.count("duplicate") == labels.count("contradiction") >= 100


def test_every_evolving_category_has_held_out_items_with_unseen_phrasings(full) -> None:
    import random

    from memstrata_app.bench.generators.evolving import Names, categories
    from memstrata_app.bench.generators.heldout import HELD_OUT

    dev = {c.name: set(c.templates) for c in categories(Names(random.Random(0)))}
    assert set(HELD_OUT) == set(dev)
    for name, tpls in HELD_OUT.items():
        assert not set(tpls) & dev[name]
    split = {(it.category, it.split) for it in full.items if it.family in EVOLVING}
    assert all((name, "held_out") in split and (name, "dev") in split for name in dev)
    for it in full.items:
        if it.split == "held_out":
            assert it.template in HELD_OUT[it.category]
