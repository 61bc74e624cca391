"""How each declared setting is shown in the Settings dialog: its label in words, the widget for
its kind (a spin box with its range and unit, a list of choices, a check box, a text field) and
the section it belongs to. The declaration (memstrata_app/settings.py) stays the one check of
every value; tests/gui/test_settings_dialog.py fails when the two disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OLLAMA = "ollama:"  # a choice that names an Ollama model: "ollama:<model>"


@dataclass(frozen=True)
class Field:
    label: str
    kind: str  # "int" | "float" | "bool" | "text" | "choice" | "path"
    section: str
    lo: float = 0
    hi: float = 1
    step: float = 0.05
    suffix: str = ""
    special: str = ""  # what the lowest value means ("off"), shown instead of the number
    choices: tuple[tuple[str, str], ...] = ()  # (value, words); OLLAMA: a model follows
    model_hint: str = ""  # the model offered when the Ollama choice is picked
    placeholder: str = ""
    check_text: str = ""  # a check box's own words
    decimals: int = 2
    hint: str = ""  # the line under the field, where the declaration's help names raw values


SECTIONS = ("Endpoint", "Memory and retrieval", "Update judge", "Ollama",
            "Ledger and governance", "App")

FIELDS: dict[str, Field] = {
    "endpoint_port": Field("Endpoint port", "int", "Endpoint", 1024, 65535, 1),
    "start_endpoint": Field("Start with the app", "bool", "Endpoint",
                            check_text="Start the local endpoint when MemStrata starts"),
    "memory_enabled": Field("Memory injection", "bool", "Endpoint",
                            check_text="Inject memory into requests (off: pass-through)"),
    "injection_k": Field("Facts per request", "int", "Endpoint", 1, 50, 1, " facts"),
    "injection_min_score": Field("Relevance floor", "float", "Endpoint", 0.0, 1.0, 0.05),
    "ingest_assistant_turns": Field("Assistant turns", "bool", "Endpoint",
                                    check_text="Also remember what the assistant says"),
    "embedder": Field("Embedder", "choice", "Memory and retrieval", choices=(
        ("local", "Local: all-MiniLM-L6-v2 (int8) on the CPU (the default)"),
        ("static", "Static: model2vec, the fastest, a little less exact"),
        ("auto", "Automatic: Ollama's nomic-embed-text when it answers, else local"),
        (OLLAMA, "An Ollama embedding model…")), model_hint="nomic-embed-text",
        hint="How sentences become vectors for finding them by meaning; changing it offers to "
             "re-embed the ledger."),
    "retrieval": Field("Retrieval", "choice", "Memory and retrieval", choices=(
        ("hybrid", "Hybrid: exact terms (parse_cfg, 8443) and meaning"),
        ("vector", "Vector: the embedding's meaning alone")),
        hint="How the facts for a question are found."),
    "quarantine_threshold": Field("Review below confidence", "float", "Memory and retrieval",
                                  0.0, 1.0, 0.05),
    "update_judge": Field("Update judge", "choice", "Update judge", choices=(
        ("builtin", "Built-in model, on the CPU (the default)"),
        ("off", "Off: the rules alone"),
        (OLLAMA, "An Ollama model, on your GPU…")), model_hint="qwen2.5:7b",
        hint="What decides that a new statement updates an older one where the rules "
             "cannot."),
    "judge_supersede": Field("Retire when this sure", "float", "Update judge", 0.5, 1.0, 0.005,
                             decimals=3),
    "judge_review": Field("Review from", "float", "Update judge", 0.0, 1.0, 0.005,
                          decimals=3),
    "judge_veto": Field("Veto a rule's retirement from", "float", "Update judge", 0.5, 1.0,
                        0.005, decimals=3),
    "judge_relate": Field("Act only on sentences this close", "float", "Update judge", 0.0,
                          1.0, 0.05, decimals=2),
    "judge_one_sided": Field("Ignore an older sentence that reads as changed above", "float",
                             "Update judge", 0.0, 1.0, 0.05, decimals=2),
    "ollama_url": Field("Ollama URL", "text", "Ollama", placeholder="http://127.0.0.1:11434"),
    "chat_model": Field("Chat model for tests", "text", "Ollama",
                        placeholder="empty: the tool chooses"),
    "extraction_model": Field("Extraction model", "text", "Ollama",
                              placeholder="empty: off; e.g. qwen2.5:7b"),
    "judge_threshold": Field("Ask the model from similarity", "float", "Ollama", 0.0, 1.0,
                             0.05),
    "ledger": Field("Ledger at start", "path", "Ledger and governance",
                    placeholder="empty: memstrata.db in the data folder"),
    "audit_log_days": Field("Keep the request log", "int", "Ledger and governance", 0, 3650, 1,
                            " days", special="off (no log)"),
    "authority_order": Field("Authority order", "text", "Ledger and governance",
                             placeholder="reviewer > user > import > tool > assistant"),
    "retention": Field("Retention rules", "text", "Ledger and governance",
                       placeholder="empty: keep everything; e.g. assistant=90d"),
    "start_at_login": Field("Start at login", "bool", "App",
                            check_text="Start MemStrata when I log in"),
}


def field_for(s: Any) -> Field:
    """The field of a declared setting; one not described here yet gets a plain one of its
    kind (tests/gui/test_settings_dialog.py asks for a real one)."""
    f = FIELDS.get(s.name)
    if f is not None:
        return f
    label = s.name.replace("_", " ").capitalize()
    if isinstance(s.default, bool):
        return Field(label, "bool", "App", check_text=s.help)
    return Field(label, "text", "App")


def range_words(f: Field, name: str = "") -> str:
    """What a number field takes, in words: "a port number between 1024 and 65535"."""
    if name == "endpoint_port":
        return f"must be a port number between {int(f.lo)} and {int(f.hi)}"
    if f.kind == "int":
        unit = f.suffix.strip()
        return (f"must be a whole number from {int(f.lo)} to {int(f.hi)}"
                + (f" ({unit})" if unit else ""))
    return f"must be a number from {f.lo:.{f.decimals}f} to {f.hi:.{f.decimals}f}"


_PY_ERRORS = re.compile(r"invalid literal for (int|float)\(\)|could not convert|"
                        r"object has no attribute|unsupported operand|not supported between")


def in_words(name: str, reason: str) -> str:
    """A refusal as people read it: the declaration's own words, never Python's."""
    f = FIELDS.get(name)
    if _PY_ERRORS.search(reason):
        if f is not None and f.kind in ("int", "float"):
            return range_words(f, name)
        return "is not a value this setting takes"
    return reason


def model_error(model: str) -> str | None:
    """Why an Ollama model name is refused (None: it is fine)."""
    if not model:
        return "needs a model name, such as nomic-embed-text or qwen2.5:7b"
    if any(c.isspace() for c in model):
        return "must be an Ollama model name without spaces, such as qwen2.5:7b"
    return None
