"""CLI routing and the optional answer level, without an engine run or a real Ollama."""

from __future__ import annotations

import sys
import types

import pytest

from memstrata_app.bench import cli
from memstrata_app.bench.generators import Question
from memstrata_app.bench.llm import answer_level, judge


@pytest.mark.parametrize("sub", ["perf", "ttfb", "embedders", "retrieval"])
def test_subcommands_route_to_their_modules(sub: str, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    fake = types.ModuleType(f"memstrata_app.bench.{sub}")
    fake.main = lambda argv: seen.append(argv) or 3  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, f"memstrata_app.bench.{sub}", fake)
    import memstrata_app.bench as pkg

    monkeypatch.setattr(pkg, sub, fake, raising=False)
    assert cli.main([sub, "--x", "1"]) == 3
    assert seen == [["--x", "1"]]


def test_help_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out and "--llm" in out and "--write-docs" in out
    assert "--embedder" in out


def _q() -> Question:
    return Question("x", "dependency_bump", "version", "current", "Which version of httpx?",
                    "httpx", ("0.27.0",), ("0.26.1",))


def test_answers_are_judged_by_whole_value_tokens() -> None:
    assert judge("0.27.0", _q()) == "correct"
    assert judge("httpx 0.27.0.", _q()) == "correct"
    assert judge("0.26.1", _q()) == "stale"
    assert judge("0.27.0 or 0.26.1", _q()) == "stale"
    assert judge("UNKNOWN", _q()) == "abstained"
    assert judge("0.27", _q()) == "wrong"


def test_answer_level_skips_with_a_message_when_no_ollama_answers() -> None:
    res = answer_level("llama3.2", [_q()], {"naive_rag": [["x"]]}, host="http://127.0.0.1:9")
    assert "skipped" in res["message"] and "table" not in res


def test_answer_level_against_the_ollama_stand_in() -> None:
    pytest.importorskip("starlette")
    from memstrata_app.bench.standin import OllamaStandIn

    q = _q()
    contexts = {"naive_rag": [["Bumped httpx to 0.26.1.", "Bumped httpx to 0.27.0."]],
                "memstrata": [["Bumped httpx to 0.27.0."]]}
    with OllamaStandIn() as up:  # it echoes the prompt back, so the context decides the answer
        res = answer_level("standin-chat", [q], contexts, host=up.url)
        sent = up.last("/api/chat").json
    assert sent["options"]["temperature"] == 0
    assert res["questions"] == 1
    assert res["counts"]["naive_rag/forced"]["stale"] == 1
    assert res["counts"]["memstrata/may_abstain"]["correct"] == 1
    assert len(res["table"]) == 1 + 2 * 2


def test_answer_level_reports_a_model_failure_instead_of_crashing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import memstrata_app.bench.llm as llm

    class Broken:
        def chat(self, **_kw):
            raise ConnectionError("connection reset")

    monkeypatch.setattr(llm, "reachable", lambda *_a: None)
    monkeypatch.setattr(llm, "_client", lambda _h: Broken())
    res = answer_level("m", [_q()], {"naive_rag": [["x"]]})
    assert res["message"].startswith("answer level stopped")
    assert "connection reset" in res["message"]
