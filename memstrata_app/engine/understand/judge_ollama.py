"""The update judge on the user's GPU: the Ollama model they configured answers the same
question as the built-in model (an opt-in backend, `--backend ollama:MODEL`).

The model returns one label and its confidence as structured JSON (temperature 0); the
confidence becomes that label's probability and the rest is shared by the other two labels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .judge import LABELS, Verdict
from .ollama_client import base_url

SYSTEM = (
    "You compare two statements from a software team's chat. OLD is a fact on record; NEW "
    "was said later. Answer label 'updates' when NEW makes OLD no longer true: it gives the "
    "same thing (same subject, attribute and environment) another value, corrects, reverts, "
    "renames, removes or hands it over. 'restates' when NEW says the same with the same "
    "value. 'compatible' when both stay true: another environment or component, another "
    "attribute, one more member of a set, a plan, a hedge, a question, a temporary stand-in, "
    "or an unrelated fact. confidence is from 0 to 1.")
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": list(LABELS)},
                   "confidence": {"type": "number"}},
    "required": ["label", "confidence"],
}


class OllamaJudge:
    """`judge(pairs)` by asking an Ollama model, one pair per request."""

    def __init__(self, model: str, host: str | None = None):
        import ollama


        self.model = model
        self.name = f"ollama:{model}"
        self._client = ollama.Client(host=base_url(host), timeout=120)

    def judge(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        return [self._one(old, new) for old, new in pairs]

    def _one(self, old: str, new: str) -> Verdict:
        resp = self._client.chat(
            model=self.model, format=SCHEMA, options={"temperature": 0}, stream=False,
            messages=[{"role": "system", "content": SYSTEM},
                      {"role": "user", "content": f"OLD: {old}\nNEW: {new}"}])
        try:
            data = json.loads(resp.message.content or "")
            label = str(data["label"])
            conf = min(1.0, max(0.0, float(data["confidence"])))
        except (ValueError, KeyError, TypeError):
            return Verdict(0.0, 0.0, 1.0)  # an unreadable answer retires nothing
        if label not in LABELS:
            return Verdict(0.0, 0.0, 1.0)
        probs = [(1 - conf) / 2] * 3
        probs[LABELS.index(label)] = conf
        return Verdict(*probs)
