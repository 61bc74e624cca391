"""Settings declared once as data: validation, persistence, and nothing undocumented."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata_app import paths
from memstrata_app.cli import build_parser
from memstrata_app.settings import SETTINGS, Settings, SettingsError, ollama_host_url

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("name", "value", "reason"), [
    ("endpoint_port", 80, "between 1024 and 65535"),
    ("endpoint_port", "eleven", "invalid literal"),
    ("ollama_url", "ftp://box", "http(s) URL"),
    ("injection_k", 0, "between 1 and 50"),
    ("quarantine_threshold", 1.5, "between 0.0 and 1.0"),
    ("embedder", "openai:gpt", '"auto", "local", "static" or "ollama:<model>"'),
    ("memory_enabled", "maybe", "true or false"),
    ("retrieval", "bm25", '"hybrid"'),
    ("no_such_setting", 1, "unknown setting"),
])
def test_invalid_values_are_refused_with_the_reason(name, value, reason):
    s = Settings()
    with pytest.raises(SettingsError, match=None) as e:
        s.set(name, value)
    assert reason in str(e.value)


def test_saved_settings_round_trip_and_bad_saved_values_fall_back(memstrata_home):
    s = Settings.load()
    s.set("endpoint_port", "12000")
    s.set("memory_enabled", "off")
    s.save()
    again = Settings.load()
    assert again["endpoint_port"] == 12000 and again["memory_enabled"] is False
    paths.settings_path().write_text(json.dumps({"endpoint_port": 5, "injection_k": 7}))
    third = Settings.load()
    assert third["endpoint_port"] == 11435 and third["injection_k"] == 7


def test_the_retrieval_setting_turns_the_lexical_side_on_and_off(engine):
    from memstrata_app.settings import apply_governance

    engine.ingest("load_cfg reads the settings from environment variables.")
    engine.ingest("parse_cfg reads the settings from the YAML file.")
    s = Settings()
    assert s["retrieval"] == "hybrid"
    apply_governance(engine, s)
    fused = engine.retrieve("what is load_cfg for?", k=1)[0]
    s.set("retrieval", "vector")
    apply_governance(engine, s)
    assert engine.hybrid is False
    plain = next(h for h in engine.retrieve("what is load_cfg for?", k=2)
                 if h.text == fused.text)
    assert plain.score < fused.score  # the cosine alone, without the term coverage


def test_ollama_host_overrides_the_url(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:11999")
    assert Settings()["ollama_url"] == "http://127.0.0.1:11999"
    assert ollama_host_url("http://gpu-box:8000") == "http://gpu-box:8000"
    assert ollama_host_url("::1") == "http://[::1]:11434"


def test_every_setting_has_help_and_a_valid_default():
    for s in SETTINGS:
        assert s.help.strip().endswith("."), s.name
        assert s.check(s.default) == s.default, s.name


def test_every_cli_command_is_documented_in_the_readme():
    readme = (ROOT / "README.md").read_text("utf-8")
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:
        assert f"memstrata {name}" in readme, f"README does not show `memstrata {name}`"
    for action in sub._choices_actions:
        assert action.help, f"{action.dest} has no help text"
