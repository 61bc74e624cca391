"""Optional answer level: an Ollama model answers each current-value question from each
system's context at temperature 0; answers are scored by exact value match."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

from .generators import Question
from .matching import contains_tokens, tokens

MODES = {
    "may_abstain": "If the context does not give the value, reply UNKNOWN.",
    "forced": "You must reply with a value from the context; never reply that you do not know.",
}
SYSTEM = ("You answer questions about a software project using only the context lines given. "
          "Reply with the value alone, no explanation. ")


def _client(host: str | None) -> Any:
    import ollama

    return ollama.Client(host=host or os.environ.get("OLLAMA_HOST"), timeout=120)


def reachable(model: str, host: str | None = None) -> str | None:
    """None when Ollama answers and has `model`; otherwise why not."""
    try:
        listed = _client(host).list()
    except Exception as e:
        where = host or os.environ.get("OLLAMA_HOST") or "the default host"
        return f"no Ollama answered at {where} ({e})"
    names = {getattr(m, "model", None) or m.get("model", "") for m in listed.get("models", [])}
    if not any(n == model or n.split(":")[0] == model for n in names):
        return f"Ollama has no model {model!r} (pull it first)"
    return None


def judge(answer: str, q: Question) -> str:
    """correct | stale | abstained | wrong, by whole-token value match."""
    toks = tokens(answer)
    if any(contains_tokens(toks, tokens(w)) for w in q.wrong):
        return "stale"
    if all(contains_tokens(toks, tokens(v)) for v in q.expected):
        return "correct"
    return "abstained" if "unknown" in toks else "wrong"


def answer_level(model: str, questions: list[Question], contexts: dict[str, list[list[str]]],
                 limit: int = 60, seed: int = 7, host: str | None = None,
                 log: Callable[[str], None] = lambda _m: None) -> dict[str, Any]:
    """Scores per system and mode, or {"message": why it was skipped}."""
    why = reachable(model, host)
    if why:
        return {"message": f"answer level skipped: {why}."}
    client = _client(host)
    idx = [i for i, q in enumerate(questions) if q.kind == "current"]
    idx = sorted(random.Random(seed).sample(idx, min(limit, len(idx))))
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for system, ctx in contexts.items():
        for mode, rule in MODES.items():
            c = counts.setdefault((system, mode), {"correct": 0, "stale": 0, "abstained": 0,
                                                   "wrong": 0})
            log(f"answer level: {system}, {mode}, {len(idx)} questions ...")
            for i in idx:
                lines = "\n".join(f"- {t}" for t in ctx[i]) or "(empty)"
                try:
                    resp = client.chat(model=model, messages=[
                        {"role": "system", "content": SYSTEM + rule},
                        {"role": "user",
                         "content": f"Context:\n{lines}\n\nQuestion: {questions[i].query}"},
                    ], options={"temperature": 0, "seed": seed})
                except Exception as e:  # the server went away or refused mid-run
                    return {"message": f"answer level stopped: {model} failed ({e})."}
                c[judge(resp["message"]["content"], questions[i])] += 1
    n = len(idx)
    table = [["system", "mode", "correct", "stale answer", "abstained", "other wrong"]]
    for (system, mode), c in counts.items():
        table.append([system, mode, *(f"{100 * c[k] / n:.1f}%" for k in
                                      ("correct", "stale", "abstained", "wrong"))])
    return {"model": model, "questions": n, "counts": {f"{s}/{m}": c for (s, m), c in
                                                        counts.items()}, "table": table}
