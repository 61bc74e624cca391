"""What the Ollama tier asks a model and what it accepts back: prompts, JSON schemas, and a
strict check of each reply (a reply that breaks the schema is refused whole)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .context import ENVIRONMENTS, PLATFORMS

_NULLABLE_TEXT = {"type": ["string", "null"]}

CLAIMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "claims": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "subject": {"type": "string"},
                    "attribute": {"type": "string"},
                    "value": {"type": "string"},
                    "context": _NULLABLE_TEXT,
                    "old_value": _NULLABLE_TEXT,
                    "confidence": {"type": "number"},
                },
                "required": ["subject", "attribute", "value", "context", "old_value",
                             "confidence"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["claims"],
    "additionalProperties": False,
}

JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "updates": {"type": "boolean"},
        "new_value": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": ["updates", "new_value", "confidence"],
    "additionalProperties": False,
}

EXTRACT_SYSTEM = (
    "You read one sentence from a developer's chat and list the facts it states about a "
    "software project or system. Each claim has: subject, the thing the fact is about (a "
    "service, library, file, setting, team or person), in a few words; attribute, what about "
    "it, in one or two words, preferably one of port, url, host, version, name, owner, "
    "maintainer, lead, location, region, timeout, database, language, framework, depends_on, "
    "uses, value; value, copied from the sentence; context, the environment, platform or "
    "component the fact is limited to (such as prod, staging, ios), else null; old_value, the "
    "earlier value when the sentence says it replaced one, copied from the sentence, else "
    "null; confidence, from 0 to 1, how sure you are that the sentence states this fact as "
    "true now. Opinions, feelings, questions, requests, plans and guesses are not facts: "
    "return {\"claims\": []} for them.")

JUDGE_SYSTEM = (
    "You compare two statements about a software project. OLD is a fact on record; NEW was "
    "said later. updates is true only when NEW gives a different value for exactly the same "
    "thing OLD is about (same subject, same attribute, same environment), so that OLD is no "
    "longer true. new_value is that value, copied from NEW (empty when updates is false). "
    "confidence is from 0 to 1.")

MAX_CLAIMS = 8
MAX_TEXT = 300  # longer fields are not a value from one sentence


@dataclass(frozen=True, slots=True)
class Claim:
    subject: str
    attribute: str
    value: str
    context: str | None
    old_value: str | None
    confidence: float


@dataclass(frozen=True, slots=True)
class Verdict:
    updates: bool
    new_value: str
    confidence: float


def judge_prompt(old_text: str, old_key: str, old_value: str, new_text: str) -> str:
    return f"OLD: {old_text}\nOLD records: {old_key} = {old_value}\nNEW: {new_text}"


def schema_error(value: Any, schema: dict[str, Any], where: str = "reply") -> str | None:
    """Why `value` breaks `schema` (the subset the tier's schemas use), or None."""
    types = schema.get("type")
    allowed = types if isinstance(types, list) else [types]
    kind = _json_type(value)
    if kind not in allowed and not (kind == "integer" and "number" in allowed):
        return f"{where} is {kind}, expected {' or '.join(map(str, allowed))}"
    if kind == "object":
        props = schema.get("properties", {})
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            return f"{where} lacks {', '.join(missing)}"
        extra = [k for k in value if k not in props]
        if extra and schema.get("additionalProperties") is False:
            return f"{where} has unexpected {', '.join(extra)}"
        for k, sub in props.items():
            if k in value:
                err = schema_error(value[k], sub, f"{where}.{k}")
                if err:
                    return err
    if kind == "array" and "items" in schema:
        for i, item in enumerate(value):
            err = schema_error(item, schema["items"], f"{where}[{i}]")
            if err:
                return err
    return None


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object" if isinstance(v, dict) else type(v).__name__


def _load(content: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    try:
        data = json.loads(content)
    except ValueError as e:
        return None, f"not JSON ({e})"
    return data, schema_error(data, schema)


def parse_claims(content: str) -> tuple[list[Claim], str | None]:
    """The claims of an extraction reply, or ([], why it was refused)."""
    data, err = _load(content, CLAIMS_SCHEMA)
    if err:
        return [], err
    items = data["claims"]
    if len(items) > MAX_CLAIMS:
        return [], f"{len(items)} claims from one sentence (at most {MAX_CLAIMS})"
    out = []
    for i, c in enumerate(items):
        texts = [c["subject"], c["attribute"], c["value"], c["context"] or "",
                 c["old_value"] or ""]
        if not all(t.strip() for t in texts[:3]):
            return [], f"claim {i} has an empty subject, attribute or value"
        if any(len(t) > MAX_TEXT for t in texts):
            return [], f"claim {i} has a field over {MAX_TEXT} characters"
        if not 0 <= c["confidence"] <= 1:
            return [], f"claim {i} has confidence {c['confidence']} outside 0..1"
        out.append(Claim(c["subject"].strip(), c["attribute"].strip(), c["value"].strip(),
                         (c["context"] or "").strip() or None,
                         (c["old_value"] or "").strip() or None, float(c["confidence"])))
    return out, None


def parse_verdict(content: str) -> tuple[Verdict | None, str | None]:
    """The judge's answer, or (None, why it was refused)."""
    data, err = _load(content, JUDGE_SCHEMA)
    if err:
        return None, err
    if not 0 <= data["confidence"] <= 1:
        return None, f"confidence {data['confidence']} outside 0..1"
    if len(data["new_value"]) > MAX_TEXT:
        return None, f"new_value over {MAX_TEXT} characters"
    return Verdict(data["updates"], data["new_value"].strip(), float(data["confidence"])), None


_QUOTES = re.compile(r"[`'\"“”‘’]")


def _squash(s: str) -> str:
    return " ".join(_QUOTES.sub("", s).casefold().split())


def mentioned(value: str, sentence: str) -> bool:
    """The value is in the sentence (case, quotes and spacing aside): a model's value must
    come from what was said, not from its own knowledge."""
    v = _squash(value)
    return bool(v) and v in _squash(sentence)


_CONTEXT_SEPARATOR = re.compile(r"[;,]")


def canonical_context(context: str | None) -> str:
    """A model's context ("Production", "iOS, staging") in the rules' key form ("prod")."""
    parts = []
    for raw in _CONTEXT_SEPARATOR.split(context or ""):
        p = " ".join(raw.split()).casefold()
        if p:
            parts.append(ENVIRONMENTS.get(p, PLATFORMS.get(p, p)).casefold())
    return "; ".join(dict.fromkeys(parts))
