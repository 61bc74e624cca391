"""One small real run shared by the bench tests that need a report."""

from __future__ import annotations

import pytest

SMALL = {"per_family": 5, "static": 8, "near_pairs": 4, "multi": 6}


@pytest.fixture(scope="session")
def bench_run(local_embedder):
    """(report, contexts) of a small seeded run on the real engine and embedder."""
    from memstrata_app.bench.runner import run

    return run(seed=3, quick=True, k=5, embedder=local_embedder, scale=SMALL, latency_n=5,
               latency_runs=1)
