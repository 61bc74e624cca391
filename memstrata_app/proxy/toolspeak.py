"""What coding tools add around the person's words, and requests that are not the person
talking at all. Recognised from requests captured from the tools themselves
(tests/clients/captured/): text a tool wraps around or appends to a user turn is not a
statement to remember, and a title, summary, compaction, quota or autocomplete request is
neither stored nor given memory.
"""

from __future__ import annotations

import re
from typing import Any

_S = re.S
_SI = re.S | re.I

# Context a tool puts into a user turn: Claude Code's <system-reminder>, Codex's
# <environment_context>, Cline's <environment_details>, IDE selections and command echoes.
_WRAPPED_CONTEXT = re.compile(
    r"<(system-reminder|environment_context|environment_details|user_instructions|"
    r"ide_selection|ide_opened_file|ide_diagnostics|command-name|command-message|"
    r"command-args|local-command-stdout|local-command-stderr|context|file_content|"
    r"repo_map|skills_instructions|permissions\s+instructions)\b[^>]*>.*?</\1\s*>",
    _SI,
)
# The person's words inside a wrapper (Cline's <task>, <feedback>, <user_message>).
_UNWRAP = re.compile(
    r"<(task|feedback|user_message|user_query|query)>\s*(.*?)(?:(?<!\s)\s+)?</\1>", _SI)

# Aider appends its edit-format instructions to every user message (litellm, Ollama chat);
# everything from the first of these lines on is the tool's, not the person's.
_APPENDED = re.compile(
    r"^(?:To suggest changes to a file you MUST return|Once you understand the request you "
    r"MUST:|# \*SEARCH/REPLACE block\* Rules|ONLY EVER RETURN CODE IN A \*SEARCH/REPLACE BLOCK\*|"
    r"You MUST use this \*file listing\* format|Every \*file listing\* MUST use this format|"
    r"Reply in [A-Z][a-z]+\.\s*$|Always reply to the user in [A-Z][a-z]+\.|"
    r"To suggest changes to a file you MUST use|Think step-by-step and explain the needed "
    r"changes)",
    re.M,
)
# Whole user messages a tool sends in its own voice (Aider's repository notes).
_TOOL_VOICE = re.compile(
    r"^(?:I have \*added these files to the chat\*|Here are summaries of some files present in "
    r"my git repository|I am not sharing any files that you can edit|I switched to a new code "
    r"base|I spoke to you previously about|Ok, any changes I propose will be to those files)",
    re.I,
)


def person_words(text: str) -> str:
    """The part of a user turn the person wrote: tool context, wrappers and appended
    instructions taken out."""
    if not text:
        return ""
    t = _WRAPPED_CONTEXT.sub("", text)
    m = _UNWRAP.search(t)
    if m:
        t = m.group(2)
    m = _APPENDED.search(t)
    if m:
        t = t[:m.start()]
    t = t.strip()
    if _TOOL_VOICE.match(t):
        return ""
    return t


# --- requests that are not the person talking ----------------------------------------------

# a title request: Claude Code's <session> shape, or a prompt that opens by asking for a
# short title ("Generate a concise, 3-5 word title …"); in a system prompt, any such ask
# when the request offers no tools
_TITLE_USER = re.compile(
    r"^<session>.*</session>\s*Write the title|"
    r"^(?:###\s*Task:\s*)?(?:Generate|Create|Write|Suggest)\s+a\s+(?:concise|short|brief)"
    r"[^.\n]{0,40}\btitle\b", _S)
_TITLE_SYSTEM = re.compile(
    r"\b(?:generate|write|create|suggest)\b[^.\n]{0,60}\btitle\b", _SI)
_SUMMARY = re.compile(
    r"\b(?:create|write|produce|provide|generate)\s+(?:a|an)\s+(?:detailed\s+|concise\s+|"
    r"brief\s+|short\s+)?summary\s+of\s+(?:the|this|our)\s+(?:conversation|session|chat)|"
    r"\bCONTEXT\s+CHECKPOINT\s+COMPACTION\b|\bcompact(?:ing)?\s+the\s+conversation\b|"
    r"\bsummari[sz]e\s+(?:the|this)\s+(?:conversation|session|chat)\b", _SI)
_FIM = re.compile(r"<\|fim_(?:prefix|suffix|middle)\|>|<fim_(?:prefix|suffix|middle)>|"
                  r"\[(?:PREFIX|SUFFIX|MIDDLE)\]|<PRE>\s|<SUF>|<MID>")
_QUOTA = re.compile(r"^\s*quota\s*$", re.I)


def _texts(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_texts(p.get("text") if isinstance(p, dict) and "text" in p
                                else p.get("content") if isinstance(p, dict) else p)
                         for p in value)
    return ""


def _last_user(data: dict[str, Any]) -> str:
    items = data.get("messages")
    if not isinstance(items, list):
        items = data.get("input") if isinstance(data.get("input"), list) else []
    for m in reversed(items):
        if isinstance(m, dict) and m.get("role") == "user":
            return _texts(m.get("content"))
    if isinstance(data.get("input"), str):
        return data["input"]
    return data.get("prompt") if isinstance(data.get("prompt"), str) else ""


def background_request(data: dict[str, Any]) -> str | None:
    """Why a request is a tool's own background job (a session title, a summary or
    compaction, a quota probe, autocomplete), or None when it is the person talking."""
    system = "\n".join(filter(None, (_texts(data.get("system")), _texts(data.get("instructions")),
                                     *(_texts(m.get("content")) for m in data.get("messages") or []
                                       if isinstance(m, dict) and m.get("role") in
                                       ("system", "developer")))))
    user = _last_user(data)
    if data.get("suffix") or _FIM.search(user):
        return "autocomplete"
    if _TITLE_USER.search(user.strip()) or (_TITLE_SYSTEM.search(system)
                                            and data.get("tools") in (None, [])):
        return "title"
    if _SUMMARY.search(user) or _SUMMARY.search(system):
        return "summary"
    if _QUOTA.match(user) and int(data.get("max_tokens") or 0) <= 1:
        return "quota"
    return None
