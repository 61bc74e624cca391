"""`memstrata bench governance` runs its cases on real ledgers and reports every check."""

from __future__ import annotations

from memstrata_app.bench import governance


def test_every_governance_case_holds(local_embedder, capsys):
    results = governance.run(local_embedder)
    assert set(results) == set(governance.CASES)
    failed = [(case, what, detail) for case, checks in results.items()
              for what, ok, detail in checks if not ok]
    assert failed == []
    assert sum(len(v) for v in results.values()) >= 20
