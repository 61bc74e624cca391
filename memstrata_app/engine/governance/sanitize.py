"""Defuses text that could pose as the memory block's delimiter or a chat template's role marker.

Stored text is quoted into every prompt, so nothing a user, a pasted document, a tool or a model
wrote may close the `<memstrata-memory>` block or open a turn of its own. Detection runs on a
folded view (NFKC, invisible characters and combining marks removed, look-alikes of `< > / |`
mapped to ASCII); only the matched spans of the original text are rewritten.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

BLOCK_NAME = "memstrata-memory"
BLOCK_TAG_REASON = "the memory block's own tag; never stored as a fact"

# Invisible characters: zero-width, joiners, bidi controls, soft hyphen, variation selectors and
# Unicode tag characters (which can carry hidden ASCII). Removed everywhere, not only in markers.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]")

# Look-alikes NFKC leaves alone, for the characters that make markers and for the letters of
# the role names (Cyrillic and Greek homoglyphs). Used only to find markers, never stored.
_CONFUSABLES = str.maketrans({
    **dict.fromkeys("\u02c2\u1438\u2039\u2329\u276c\u276e\u27e8\u29fc\u3008\u300a\ufe64"
                    "\u2264\u227a", "<"),
    **dict.fromkeys("\u02c3\u1433\u203a\u232a\u276d\u276f\u27e9\u29fd\u3009\u300b\ufe65"
                    "\u2265\u227b", ">"),
    **dict.fromkeys("\u2044\u2215\u2571\u29f8\u3033\u1735\u2cc6\u30ce\u4e3f", "/"),
    **dict.fromkeys("\u01c0\u05c0\u2223\u2502\u23d0\u2758\uffe8\u07c0", "|"),
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
    "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u04bb": "h", "\u04cf": "l",
    "\u0501": "d", "\u0261": "g", "\u043c": "m", "\u0442": "t", "\u0433": "r",
    "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
    "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0425": "X", "\u0405": "S",
    "\u0406": "I", "\u0408": "J",
    "\u03b1": "a", "\u03bf": "o", "\u03c1": "p", "\u03c5": "u", "\u03b9": "i", "\u03ba": "k",
    "\u03bd": "v", "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H",
    "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P",
    "\u03a4": "T", "\u03a5": "Y", "\u03a7": "X",
})


def _spread(word: str) -> str:
    """`word` with up to three separators (spaces, dashes, dots...) allowed between letters."""
    sep = r"(?:[^\w<>\n]|_){0,3}"
    return sep.join(re.escape(c) for c in word)


_NAME = _spread("memstrata") + r"(?:[^\w<>\n]|_){0,3}" + _spread("memory")
_ROLES = (r"system|assistant|human|developer|instructions?|im_start|im_end|im_sep"
          r"|start_of_turn|end_of_turn|bos|eos|s")
# Every repetition is bounded: the scan stays linear on hostile input (long runs of spaces).
_MARKERS = re.compile(
    # the block's own tag, in any case, spacing or look-alike, even without its closing bracket
    rf"(?P<block><[\s/\\]{{0,4}}{_NAME}(?:[^<>\n]{{0,80}}>)?|/?\s{{0,8}}{_NAME}[^\w<>\n]{{0,3}}>)"
    # special tokens of the chat templates: <|im_start|>, <|eot_id|>, <｜begin▁of▁sentence｜> ...
    r"|(?P<token><\s{0,8}\|[^<>|\n]{1,40}\|\s{0,8}>"
    r"|<\s{0,8}\|\s{0,8}(?:im_start|im_end|system|user|assistant|start_header_id|end_header_id"
    r"|eot_id|begin_of_text|endoftext|channel|message)\b"
    # Llama 2 / Mistral: [INST] [/INST] <<SYS>> [SYSTEM_PROMPT] [TOOL_CALLS]
    r"|\[\s{0,8}/?\s{0,8}(?:inst|sys|system_prompt|available_tools|tool_calls|tool_results)\s{0,8}\]"
    r"|<<\s{0,8}/?\s{0,8}sys\s{0,8}>>"
    # role tags: <system>, </s>, <start_of_turn>, <system-reminder>; <user>/<tool> only when
    # they are not a generic type argument such as List<User>
    rf"|<\s{{0,8}}/?\s{{0,8}}(?:{_ROLES})\b[^<>\n]{{0,60}}>"
    r"|(?:(?<![\w.])<\s{0,8}|<\s{0,8}/\s{0,8})(?:user|tool|model|function|context)\b[^<>\n]{0,60}>)"
    # transcript speakers at the start of a line (Human: / Assistant:)
    r"|^[ \t>*#\-]{0,16}(?P<speaker>human|assistant)[ \t]{0,8}(?=:)",
    re.I | re.M)
# Cheap pre-check on the raw text: without any of these, nothing can match.
_MAYBE = re.compile(r"[<\[/|>]|human|assistant|[^\x00-\x7f]", re.I)
_DEFUSE = str.maketrans({"<": "‹", ">": "›", "|": "¦", "[": "(", "]": ")"})


@dataclass(frozen=True, slots=True)
class Neutralized:
    """Text safe to store and to quote into a prompt, and the block tags taken out of it."""

    text: str
    removed: tuple[str, ...] = ()


def fold(text: str) -> tuple[str, list[int]]:
    """The detection view of `text` and, for each of its characters, the index it came from."""
    if text.isascii():
        return text, list(range(len(text)))
    out: list[str] = []
    index: list[int] = []
    for i, c in enumerate(text):
        if c.isascii():
            out.append(c)
            index.append(i)
            continue
        if _INVISIBLE.match(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            continue
        folded = unicodedata.normalize("NFKC", c).translate(_CONFUSABLES)
        folded = "".join(ch for ch in folded if unicodedata.category(ch) not in ("Mn", "Me"))
        out.append(folded)
        index.extend([i] * len(folded))
    return "".join(out), index


def neutralize(text: str) -> Neutralized:
    """Remove the block's own tags and defuse role markers (`<system>` → `‹system›`).

    Idempotent: neutralizing the result again changes nothing."""
    text = _INVISIBLE.sub("", text)
    if not _MAYBE.search(text):
        return Neutralized(text)
    view, index = fold(text)
    parts: list[str] = []
    removed: list[str] = []
    pos = 0
    for m in _MARKERS.finditer(view):
        group = m.lastgroup or "token"
        start, end = m.span(group)
        if start == end:
            continue
        lo = index[start]
        hi = index[end] if end < len(index) else len(text)
        if hi <= index[end - 1]:  # the match ended inside one character's expansion
            hi = index[end - 1] + 1
        if lo < pos:
            continue
        parts.append(text[pos:lo])
        if group == "block":  # taken out; one space keeps the words either side apart
            removed.append(text[lo:hi])
            before, after = text[lo - 1:lo] if lo else "", text[hi:hi + 1]
            if before and after and not before.isspace() and not after.isspace():
                parts.append(" ")
        elif group == "speaker":
            parts.append(f"‹{view[start:end]}›")
        else:
            parts.append(view[start:end].translate(_DEFUSE))
        pos = hi
    if not parts:
        return Neutralized(text)
    parts.append(text[pos:])
    return Neutralized("".join(parts), tuple(removed))


def defuse(text: str) -> str:
    """`neutralize(text).text`: for text on its way into a prompt."""
    return neutralize(text).text

