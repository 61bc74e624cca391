"""For every single-valued key, at most one row is valid at any instant (random histories)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata_app.engine import MemoryEngine, Status

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SUBJECTS = ["auth service", "billing service"]
VALUES = ["8080", "9090", "7070", "6060"]

statement = st.tuples(
    st.sampled_from(SUBJECTS),
    st.sampled_from(VALUES),
    st.integers(min_value=0, max_value=40),  # day: repeats and late arrivals are likely
    st.sampled_from(
        ["The {s} port is {v}.", "{s} listens on port {v}", "Set the {s} port to {v}."]),
)


def check_invariant(eng: MemoryEngine) -> None:
    rows = eng.list_assertions(limit=100_000, order="id", descending=False)
    by_key: dict[str, list] = {}
    for r in rows:
        if r.key and r.status in (Status.ACTIVE, Status.SUPERSEDED):
            by_key.setdefault(r.key, []).append(r)
    for key, chain in by_key.items():
        chain.sort(key=lambda r: (r.valid_from, r.id))
        assert sum(r.valid_to is None for r in chain) <= 1, key
        for a, b in itertools.pairwise(chain):
            assert a.valid_to is not None, (key, a, b)
            assert a.valid_to <= b.valid_from, f"{key}: {a.valid_from}-{a.valid_to} overlaps {b}"
        for r in chain:
            assert r.valid_to is None or r.valid_from <= r.valid_to


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(statement, min_size=1, max_size=12))
def test_single_valued_keys_never_overlap(tmp_path_factory, local_embedder, history):
    path = tmp_path_factory.mktemp("inv") / "ledger.db"
    with MemoryEngine.open(path, embedder=local_embedder) as eng:
        for subj, val, d, template in history:
            eng.ingest(template.format(s=subj, v=val), at=T0 + timedelta(days=d))
            check_invariant(eng)
        # and at every instant that matters, retrieval agrees with the ledger
        for d in range(0, 42, 3):
            t = T0 + timedelta(days=d, hours=12)
            for subj in SUBJECTS:
                valid = [r for r in eng.history(subj, "port") if r.valid_at(t)]
                assert len(valid) <= 1
