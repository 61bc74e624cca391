"""`memstrata bench retrieval`: both modes on the same ledgers, figures that can fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata_app.bench import retrieval
from memstrata_app.bench.systems import CachedEmbedder


def test_identifier_questions_rank_their_statement_first_more_often_with_terms(
        local_embedder) -> None:
    out = retrieval.identifiers(CachedEmbedder(local_embedder), k=5, log=lambda _m: None)
    vec, hyb = out["vector"], out["hybrid"]
    assert vec["token"][1] == hyb["token"][1] == 60 and hyb["meaning"][1] == 12
    # the term side is what tells near-duplicates apart by the token they name
    assert hyb["token_first"][0] > vec["token_first"][0]
    assert hyb["token"][0] >= vec["token"][0]


@pytest.mark.slow
def test_the_report_and_its_docs_section(tmp_path: Path, local_embedder, monkeypatch) -> None:
    from memstrata_app.engine.retrieve import embedders

    monkeypatch.setattr(embedders, "resolve_embedder", lambda spec, *a, **k: local_embedder)
    doc = tmp_path / "R.md"
    doc.write_text(f"# R\n\n{retrieval.BEGIN}\nold\n{retrieval.END}\n\ntail\n")
    assert retrieval.main(["--quick", "--embedders", "local", "--write-docs", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and text.endswith("tail\n")
    assert "| identifier questions: statement first |" in text
    assert "local vector | local hybrid" in text
