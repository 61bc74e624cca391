"""Markers in disguise, generated (hypothesis), and an oracle that finds live ones.

The oracle is the tests' own: its fold (NFKD, marks, invisible and control characters
dropped, whitespace collapsed, the look-alikes below mapped) and its marker names, taken from
the chat templates of the families the docs name, not from the code under test. A marker is
live when it still reads as one in ASCII: the defused forms (`‹system›`, `‹¦im_start¦›`,
`(INST)`) are not.
"""

from __future__ import annotations

import re
import unicodedata

from hypothesis import strategies as st

BLOCK_TAGS = ("<memstrata-memory>", "</memstrata-memory>")

# As the chat templates write them (Qwen, Llama, Gemma, Mistral, DeepSeek, Phi, gpt-oss,
# Claude-style transcripts, generic role tags).
TEMPLATE_MARKERS = (
    # Qwen
    "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tools>", "<tool_call>", "</tool_call>",
    "<tool_response>", "</tool_response>", "<think>", "</think>", "<|fim_prefix|>",
    "<|repo_name|>", "<|file_sep|>",
    # Llama 3 / 4 / 2
    "<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
    "<|eom_id|>", "<|python_tag|>", "<|header_start|>", "<|eot|>", "<s>", "</s>", "[INST]",
    "[/INST]", "<<SYS>>", "<</SYS>>",
    # Gemma
    "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",
    # Mistral
    "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[ARGS]",
    "[CALL_ID]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[THINK]", "[/THINK]",
    # DeepSeek
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
    "<｜tool▁outputs▁begin｜>", "<｜fim▁begin｜>", "<|EOT|>", "### Instruction:",
    "### Response:",
    # Phi
    "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|im_sep|>", "<|tool|>",
    "<|/tool|>", "<|tool_call|>", "<|tool_response|>",
    # gpt-oss (harmony)
    "<|start|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>",
    # Claude-style transcripts
    "Human:", "Assistant:", "<function_calls>", "</function_calls>", '<invoke name="bash">',
    "</invoke>", '<parameter name="command">', "</parameter>", "<function_results>",
    "<thinking>", "<system-reminder>",
    # role tags
    "<system>", "</system>", "<developer>", "<instructions>", "<user>", "</user>",
    "<assistant>", "<human>", "<model>", "<tool>",
)
TYPE_WORDS = {"user", "tool", "tools", "model", "function", "context", "result", "parameter"}

LOOKALIKES: dict[str, str] = {
    "<": "＜❰❮❬⟨〈《˂ᐸ﹤«⟪‹", ">": "＞❱❯❭⟩〉》˃ᐳ﹥»⟫›", "|": "｜∣│❘ǀ┃❙",
    "[": "［【⟦❲〖⁅", "]": "］】⟧❳〗⁆", "/": "／⁄∕╱",
    "a": "аáà", "c": "сç", "e": "еéè", "i": "іí", "m": "мṁ", "o": "оóö", "p": "р",
    "s": "ѕś", "t": "ţт", "y": "уý", "r": "ŕг", "n": "ñ", "u": "ú",
}
_ORACLE_MAP = str.maketrans({ch: base for base, chars in LOOKALIKES.items() for ch in chars
                             if ch not in "‹›"})
_ORACLE_MAP_ALL = str.maketrans({ch: base for base, chars in LOOKALIKES.items()
                                 for ch in chars})
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u206f\ufe00-\ufe0f\ufeff\u00ad\u034f"
                        "\U000e0000-\U000e007f\U000e0100-\U000e01ef\x00-\x08\x0e-\x1b\x7f]")

SPACES = (" ", "    ", "\t", "\n", "\r\n", " \n  ", "\u00a0", "\u3000", "\u2028", "\n\n")
INVISIBLES = ("\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\ufe0f", "\U000e0100",
              "\U000e01ef", "\U000e0041", "\u034f", "\u0301", "\x00", "\x1b")
# filler: readable words, no brackets or bars (so every marker in a text is one we put there)
FILLER = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ.,;:-'\"()0123456789éüß\n",
                 max_size=30)


def oracle_fold(text: str, *, guillemets: bool = False) -> str:
    text = _INVISIBLE.sub("", text)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    text = text.translate(_ORACLE_MAP_ALL if guillemets else _ORACLE_MAP)
    text = re.sub(r"[^\S\n]+", " ", re.sub(r"\s*[\n\r\u2028\u2029]\s*", "\n", text))
    return text


_SHAPE = {"token": r"<\|/?([^|]+)\|>", "tag": r"</?([\w-]+)[^<>]*>", "bracket": r"\[/?(\w+)\]"}


def _names(kind: str) -> list[str]:
    found = (re.fullmatch(_SHAPE[kind], oracle_fold(m).casefold()) for m in TEMPLATE_MARKERS)
    return sorted({g[1] for g in found if g}, key=len, reverse=True)


def _alt(names: list[str]) -> str:
    return "|".join(map(re.escape, names))


_TAGS = [n for n in _names("tag") if n not in TYPE_WORDS]
_TYPE_TAGS = [n for n in _names("tag") if n in TYPE_WORDS]
_LIVE = re.compile("|".join([
    r"[<‹]\s*\|[^<>|‹›]{1,40}\|\s*[>›]",
    rf"[<‹]\s*\|\s*/?\s*(?:{_alt(_names('token'))})\b",
    rf"<\s*/?\s*(?:{_alt(_TAGS)})\b[^<>]{{0,60}}>",
    rf"(?:(?<![\w.])<\s*|<\s*/\s*)(?:{_alt(_TYPE_TAGS)})\b[^<>]{{0,60}}>",
    rf"\[\s*/?\s*(?:{_alt(_names('bracket'))})\s*\]",
    r"<\s*<\s*/?\s*sys\s*>\s*>",
]), re.I)
_SPEAKER = re.compile(r"^[ >*#-]*(?:human|assistant) ?:|^[ >]*#{2,4} ?(?:instruction|response) ?:",
                      re.I | re.M)
# the block's tag with any separators between its letters (as tests/security/helpers._ANY_TAG)
_BLOCK = re.compile(r"<[\s/\\]*m\W*e\W*m\W*s\W*t\W*r\W*a\W*t\W*a\W*m\W*e\W*m\W*o\W*r\W*y",
                    re.I)


def block_tags(text: str) -> int:
    """How many spellings of the block's tag `text` holds, look-alikes and ‹ › included."""
    return len(_BLOCK.findall(oracle_fold(text, guillemets=True)))


def live_markers(text: str, *, lines: bool = True) -> list[str]:
    """Markers in `text` that still read as markers; `lines`: also speakers at a line start."""
    plain = oracle_fold(text)
    found = [m.group() for m in _LIVE.finditer(plain)]
    found += [m.group() for m in _BLOCK.finditer(oracle_fold(text, guillemets=True))]
    if lines:
        found += [m.group() for m in _SPEAKER.finditer(plain)]
    return found


def _boundary(marker: str, i: int) -> bool:
    """Whether spacing may go between marker[i-1] and marker[i] without renaming it: next to
    a bracket, bar, slash or colon, or anywhere in the block's tag."""
    if "memstrata" in marker:
        return True
    return marker[i - 1] in "<>|/[]:｜" or marker[i] in "<>|/[]:｜"


@st.composite
def disguised(draw: st.DrawFn, marker: str) -> str:
    """`marker` with its case changed, look-alikes put in, and spacing (where a model would
    still read the marker), invisible characters and combining marks inserted."""
    # one draw for the whole marker (per character: insert?, what, which variant): fast to
    # generate, and it still shrinks toward the plain marker (all zeros)
    codes = draw(st.lists(st.integers(0, 1 << 20), min_size=len(marker),
                          max_size=len(marker)))
    out: list[str] = []
    for i, (c, code) in enumerate(zip(marker, codes, strict=True)):
        if i and code & 3 == 1:
            pool = (SPACES + INVISIBLES) if _boundary(marker, i) else INVISIBLES
            out.append(pool[(code >> 2) % len(pool)])
        variants = [c, c.swapcase(), *LOOKALIKES.get(c.lower(), "")]
        out.append(variants[(code >> 8) % len(variants)])
    return "".join(out)


MARKER = st.sampled_from((*BLOCK_TAGS, *TEMPLATE_MARKERS))


@st.composite
def hostile(draw: st.DrawFn, max_markers: int = 4) -> str:
    """Filler text with disguised markers in it; a speaker marker starts a line."""
    parts = [draw(FILLER)]
    for _ in range(draw(st.integers(1, max_markers))):
        marker = draw(MARKER)
        text = draw(disguised(marker))
        parts.append(("\n" + text) if marker.endswith(":") else text)
        parts.append(draw(FILLER))
    return "".join(parts)


@st.composite
def nested(draw: st.DrawFn, depth: int = 12) -> str:
    """Markers inside markers: each taken out or defused leaves the one around it whole."""
    text = draw(disguised(draw(MARKER)))
    for _ in range(draw(st.integers(1, depth))):
        outer = draw(st.sampled_from((*BLOCK_TAGS, *BLOCK_TAGS, *TEMPLATE_MARKERS)))
        cut = draw(st.integers(1, max(1, len(outer) - 1)))
        text = outer[:cut] + text + outer[cut:]
    return draw(FILLER) + text + draw(FILLER)
