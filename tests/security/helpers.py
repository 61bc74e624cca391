"""Checks shared by the security tests: what reached the upstream model, and is it contained."""

from __future__ import annotations

import re
from typing import Any

from memstrata_app.bench.standin import OllamaStandIn
from memstrata_app.engine.governance.sanitize import fold, neutralize

OPEN, CLOSE = "<memstrata-memory>", "</memstrata-memory>"
# any spelling of the block tag, once look-alikes, spacing and case are folded away (‹ › are
# not folded: the defused markers are written with them)
_ANY_TAG = re.compile(
    r"[<‹][\s/\\]*m\W*e\W*m\W*s\W*t\W*r\W*a\W*t\W*a\W*m\W*e\W*m\W*o\W*r\W*y", re.I)


def system_text(body: dict[str, Any], path: str) -> str:
    """The system prompt a model call carried, in any of the three APIs."""
    if path in ("/v1/messages", "/api/generate"):
        system = body.get("system") or ""
        if isinstance(system, list):
            system = "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
        return system
    first = body["messages"][0]
    content = first.get("content") if first.get("role") in ("system", "developer") else ""
    if isinstance(content, list):
        content = "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def last_model_call(up: OllamaStandIn) -> tuple[str, dict[str, Any]]:
    req = next(r for r in reversed(up.requests)
               if r.method == "POST" and r.path in ("/api/chat", "/api/generate",
                                                    "/v1/chat/completions", "/v1/messages"))
    return req.path, req.json


def assert_contained(up: OllamaStandIn, attacker: str = "rm -rf") -> str:
    """The latest model call holds exactly one block, and `attacker` text only inside it.

    Returns the block's body."""
    path, body = last_model_call(up)
    system = system_text(body, path)
    assert system.count(OPEN) == 1 and system.count(CLOSE) == 1, system
    folded, _ = fold(system)
    assert len(_ANY_TAG.findall(folded)) == 2, f"look-alike block tags in: {system!r}"
    start, end = system.index(OPEN), system.index(CLOSE)
    assert start < end
    inside, outside = system[start + len(OPEN):end], system[:start] + system[end:]
    assert attacker in inside, system
    assert attacker not in outside, system
    # nothing left inside that would read as a tag or a role marker
    assert neutralize(inside).text == inside, inside
    assert "<system>" not in inside.lower() and "</system>" not in inside.lower()
    # every fact line is a quoted JSON string
    facts = inside.strip().splitlines()[1:]
    assert facts and all(re.match(r'^\d+\. "', ln) for ln in facts), inside
    # the whole request holds one block: a re-sent one in the history was taken out
    everything = str(body)
    assert everything.count(OPEN) == 1 and everything.count(CLOSE) == 1
    return inside


def stored_texts(engine: Any) -> list[str]:
    return [a.text for a in engine.list_assertions(limit=1000)]


def assert_no_block_tag_stored(engine: Any) -> None:
    for text in stored_texts(engine):
        assert not _ANY_TAG.search(fold(text)[0]), text
