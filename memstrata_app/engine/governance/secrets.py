"""Secrets in what people paste: find them and put a typed placeholder in their place.

`redact(text)` runs before anything of a text is hashed, embedded, extracted or stored, so a
key, token or password said in chat never reaches the ledger, the vector index, a query
answer or an injected block. Each secret becomes `[secret:<type>]`:

    "the deploy token is ghp_…"  ->  "the deploy token is [secret:github-token]"

Detection is detect-secrets' (Yelp) maintained rule set, used as a library and offline:
- its format plugins (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, basic
  auth in URLs, npm, PyPI, SendGrid, Twilio, Discord, Telegram, Mailchimp, Azure, IBM, …),
  run over the text with their own expressions (never their network verification);
- its keyword detector's assignment forms (`password = …`, `api_key: "…"`), with its
  heuristic filters (templates, `$VAR`, UUIDs, sequential strings, indirect references);
- its Shannon entropy measure for unlabelled random strings, held to a shape that leaves
  out git SHAs, UUIDs, versions and identifiers (see `_random_looking`).
What it lacks is added here: chat phrasing ("the password is …", "the token for staging:
…"), in English and in twenty-one other languages (secret_languages.py: "Das Passwort für die
Datenbank ist …", "密码是…"), the password of any URL's userinfo (any scheme, no user,
percent-encoded), current token prefixes its 1.5 release predates (`sk-proj-`, `sk-ant-`,
`github_pat_`, …), and whole private-key blocks (the plugin flags only the header line).

Pure: no I/O, no network, no logging of values (only types and counts).
"""

from __future__ import annotations

import itertools
import logging
import math
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from . import secret_languages as languages
from .secret_patterns import (
    _AUTH_HEADER,
    _DESCRIPTION,
    _EXTRA_FORMATS,
    _GENERIC_PLUGINS,
    _JWT_TAIL,
    _KEYWORDS,
    _LONG_RUN,
    _NOT_A_VALUE,
    _PHRASES,
    _PLACEHOLDER_WORDS,
    _PLUGIN_KINDS,
    _PRIVATE_KEY_BLOCK,
    _PUTTY_KEY,
    _SKIPPED_PLUGINS,
    _TOKEN_RE,
    _URL_PLACEHOLDER,
    _URL_USERINFO,
    _WORDS,
    ENTROPY_LIMIT,
    KEYWORD_FORMS,
    LINEAR_DENYLISTS,
)

log = logging.getLogger(__name__)

PLACEHOLDER_RE = re.compile(r"\[secret:[a-z0-9-]{1,40}\]")

# The detectors' small checks, compiled here where tests/security/test_pattern_cost.py finds
# them (it refuses patterns written inside functions).
_KEYWORD_SEPARATORS = re.compile(r"[ _-]+")
_AWS_SECRET_KEY = re.compile(r"[A-Za-z0-9/+]{40}")
_VALUE_PARTS = re.compile(r"[/_=-]")
_FOUR_CONSONANTS = re.compile("[^aeiouy]{4}")
_VENDOR_NAMES = {kind: re.compile(rx, re.IGNORECASE) for kind, rx in _GENERIC_PLUGINS.items()}
PLACEHOLDER_MARK = "[secret:"
_DIGIT = re.compile(r"\d")
_UPPER = re.compile("[A-Z]")
_LOWER = re.compile("[a-z]")
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT_OR_SYMBOL = re.compile(r"\d|[^\w-]")
_FIRST_WORD = re.compile(r"\S+")
_AWS_KEY_ID = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
# a word (or hyphenated words) ending in ! ? . …: prose, not a value; only at a word's start,
# so a long run of letters is read once, not from every position
_EXCLAIMED = re.compile(r"(?<![^\W\d_])[^\W\d_]{1,200}(?:-[^\W\d_]{1,200}){0,8}[.!?…]{1,8}")


def placeholder(kind: str) -> str:
    return f"[secret:{kind}]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret found in a text: where it was, what kind, and which rule said so.

    The secret value itself is not kept: callers only ever need its place and type.
    """

    start: int
    end: int
    kind: str  # the placeholder's type: "github-token", "password", …
    rule: str  # the detector that found it ("GitHub Token", "keyword", "entropy", …)


class _Detectors:
    """detect-secrets' plugins and filters, loaded once (the import pulls in requests)."""

    def __init__(self) -> None:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.filters import heuristic
        from detect_secrets.plugins.base import RegexBasedDetector
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

        self.plugins: list[tuple[str, Any]] = []
        mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
        for secret_type, cls in sorted(mapping.items()):
            if secret_type in _SKIPPED_PLUGINS or not issubclass(cls, RegexBasedDetector):
                continue
            plugin = cls()
            if secret_type in LINEAR_DENYLISTS:  # theirs are quadratic (secret_patterns.py)
                plugin.denylist = LINEAR_DENYLISTS[secret_type]
            self.plugins.append((secret_type, plugin))
        # detect-secrets' keyword forms, rewritten to run in linear time (secret_patterns.py)
        self.keyword_forms: list[tuple[re.Pattern[str], int]] = list(KEYWORD_FORMS)
        self.entropy = Base64HighEntropyString(limit=ENTROPY_LIMIT)
        self.heuristic = heuristic
        self.extra = [(kind, re.compile(rx)) for kind, rx in _EXTRA_FORMATS]


_lock = threading.Lock()


@lru_cache(maxsize=1)
def _detectors() -> _Detectors:
    with _lock:
        return _Detectors()


def warm_up() -> None:
    """Load the rule set now (about 0.1 s), off the path of the first ingest."""
    _detectors()


def find_secrets(text: str) -> list[Finding]:
    """Every secret in `text`, as non-overlapping spans in text order."""
    if not text or not isinstance(text, str):
        return []
    d = _detectors()
    protected = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
    long_run = _LONG_RUN.search(text) is not None  # every format below is one run of 11+
    found: list[Finding] = []  # in order of preference where two cover the same span
    found += _private_keys(text)
    if long_run:
        found += _plugin_hits(d, text, generic=False)
        found += _extra_hits(d, text)
        found += _plugin_hits(d, text, generic=True)
    found += _keyword_hits(d, text)
    found += _language_hits(d, text)
    found += _url_passwords(text)
    if long_run:
        found += _entropy_hits(d, text)
    return _merge(found, protected)


def redact(text: str) -> tuple[str, list[Finding]]:
    """`text` with each secret replaced by `[secret:<type>]`, and what was replaced (with
    positions in the original text)."""
    findings = find_secrets(text)
    if not findings:
        return text, []
    out, pos = [], 0
    for f in findings:
        out.append(text[pos:f.start])
        out.append(placeholder(f.kind))
        pos = f.end
    out.append(text[pos:])
    log.debug("redacted %d secret(s): %s", len(findings),
              ", ".join(sorted({f.kind for f in findings})))
    return "".join(out), findings


def count_placeholders(texts: Iterable[str]) -> int:
    return sum(len(PLACEHOLDER_RE.findall(t)) for t in texts if t)


# --- the detectors -----------------------------------------------------------------------------
def _private_keys(text: str) -> list[Finding]:
    if "PRIVATE KEY" not in text and "PuTTY-User-Key-File" not in text:
        return []
    out = [Finding(m.start(), m.end(), "private-key", "Private Key")
           for m in _PRIVATE_KEY_BLOCK.finditer(text)]
    out += [Finding(m.start(), m.end(), "private-key", "Private Key")
            for m in _PUTTY_KEY.finditer(text)]
    return out


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    """What a plugin's expression reports as the secret: its last non-empty group, as
    detect-secrets' own `analyze_string` does, else the whole match; a group that only
    captures the prefix (GitHub's `(ghp|gho|…)_…`) stands for the whole match."""
    for g in range(m.re.groups, 0, -1):
        if m.group(g):
            return m.span() if m.start(g) == m.start() else m.span(g)
    return m.span()


def _plugin_hits(d: _Detectors, text: str, generic: bool) -> list[Finding]:
    out = []
    for secret_type, plugin in d.plugins:
        if secret_type == "Private Key" or (secret_type in _GENERIC_PLUGINS) != generic:
            continue  # private keys: whole blocks, above
        for rx in plugin.denylist:
            for m in rx.finditer(text):
                s, e = _secret_span(m)
                value = text[s:e].strip()
                if not value:
                    continue
                s = text.index(value, s)
                e = s + len(value)
                if _filtered(d, value):
                    continue
                if secret_type == "Artifactory Credentials" and not _DIGIT.search(value):
                    continue  # "APACRegion…": the AP… password form needs a digit to be one
                if secret_type == "JSON Web Token":  # its expression stops before the
                    tail = _JWT_TAIL.match(text, e)  # signature (a lazy tail)
                    e = tail.end() if tail else e
                kind = _PLUGIN_KINDS.get(secret_type, _slug(secret_type))
                if generic and not _VENDOR_NAMES[secret_type].search(m.group()):
                    kind = "api-key"  # "API_KEY=<44 chars>" fits IBM's form; say what it is
                out.append(Finding(s, e, kind, secret_type))
    return out


def _extra_hits(d: _Detectors, text: str) -> list[Finding]:
    out = []
    for kind, rx in d.extra:
        for m in rx.finditer(text):
            value = m.group()
            if kind == "api-key" and not (_DIGIT.search(value) and _UPPER.search(value)):
                continue  # "sk-" followed by a long lowercase word is not a key
            out.append(Finding(m.start(), m.end(), kind, "format"))
    return out


def _keyword_hits(d: _Detectors, text: str) -> list[Finding]:
    low = text.lower()
    if not any(k in low for k in ("pass", "pwd", "secret", "key", "token", "cred", "login",
                                  "bearer", "basic", "bot", "contrase")):
        return []
    out: list[Finding] = []
    # detect-secrets' keyword detector: `password = …`, `api_key: "…"`, per line
    offset = 0
    for line in text.splitlines(keepends=True):
        if len(line) <= 2000:
            for rx, group in d.keyword_forms:
                for m in rx.finditer(line):
                    s, e = m.span(group)
                    if d.heuristic.is_indirect_reference(line):
                        break  # `password = os.environ["DB_PASSWORD"]`
                    if m.start() > 0 and line[m.start() - 1] in ":/.-":
                        continue  # inside a name: "arn:aws:secretsmanager:…"
                    f = _value_finding(d, line, s, e, _kind_of(line[:s], m.group(0)),
                                       "keyword", quoted=_quoted(line, s, e))
                    if f is not None:
                        out.append(Finding(f.start + offset, f.end + offset, f.kind, f.rule))
        offset += len(line)
    for m in _AUTH_HEADER.finditer(text):
        s, e = m.span("val")
        f = _value_finding(d, text, s, e, "token", "header", quoted=False)
        if f is not None:
            out.append(f)
    # chat phrasing
    for rx in _PHRASES:
        for m in rx.finditer(text):
            s, e = m.span("val")
            kind = _KEYWORDS.get(_KEYWORD_SEPARATORS.sub(" ", m.group("kw").lower()), "secret")
            f = _value_finding(d, text, s, e, kind, "phrase", quoted=bool(m.group("q")))
            if f is not None:
                out.append(f)
    return out


def _language_hits(d: _Detectors, text: str) -> list[Finding]:
    """Chat phrasing in any of the languages of secret_languages.py ("Das Passwort für die
    Datenbank ist …", "密码是…", "पासवर्ड … है")."""
    out = []
    for rx in languages.PHRASES:
        for m in rx.finditer(text):
            s, e = m.span("val")
            if languages.TEMPLATED.search(m.group("val")):
                continue
            quoted = languages.quoted(text, m.group("q"), e)
            if m.groupdict().get("bare") is not None and not quoted:  # no copula: not prose
                value = m.group("val").rstrip(".,;:)]}>!?")
                if languages.NAME_LIKE.fullmatch(value):
                    continue
            f = _value_finding(d, text, s, e, languages.kind_of(m.group("kw")), "phrase",
                               quoted=quoted)
            if f is not None:
                out.append(f)
    return out


def _url_passwords(text: str) -> list[Finding]:
    """The password of every URL's userinfo, whatever its scheme and even with no user."""
    if "://" not in text:
        return []
    out = []
    for m in _URL_USERINFO.finditer(text):
        if not _URL_PLACEHOLDER.match(m.group("val")):
            out.append(Finding(m.start("val"), m.end("val"), "password", "url"))
    return out


def _quoted(line: str, s: int, e: int) -> bool:
    return s > 0 and e < len(line) and line[s - 1] in "\"'`" and line[e] == line[s - 1]


def _kind_of(before: str, assignment: str) -> str:
    low = assignment.lower()
    if "aws" in before.lower() and "secret" in low:
        return "aws-secret-key"
    for word, kind in (("pass", "password"), ("pwd", "password"), ("contrase", "password"),
                       ("priv", "private-key"), ("token", "token"), ("key", "api-key"),
                       ("secret", "secret")):
        if word in low:
            return kind
    return "secret"


def _value_finding(d: _Detectors, text: str, s: int, e: int, kind: str, rule: str,
                   quoted: bool) -> Finding | None:
    """The value after a keyword, trimmed to one token, if it can be a secret at all."""
    raw = text[s:e]
    if not quoted:  # the keyword forms run to the end of the line: keep the first word
        m = _FIRST_WORD.match(raw)
        if m is None:
            return None
        raw = m.group()
        raw = raw.rstrip(".,;:)]}>\"'`?([{")
    else:
        raw = raw.strip()
    if not raw:
        return None
    s = text.index(raw, s)
    e = s + len(raw)
    if not _can_be_secret(d, raw, quoted, kind):
        return None
    if kind in ("secret", "api-key", "token") and _aws_secret_shape(raw, text):
        kind = "aws-secret-key"
    return Finding(s, e, kind, rule)


def _aws_secret_shape(value: str, text: str) -> bool:
    """AWS secret access keys: 40 base64 characters, said near "AWS" or an access key id."""
    return (len(value) == 40 and _AWS_SECRET_KEY.fullmatch(value) is not None
            and (("aws" in text.lower()) or _AWS_KEY_ID.search(text)
                 is not None))


def _can_be_secret(d: _Detectors, value: str, quoted: bool, kind: str) -> bool:
    if PLACEHOLDER_RE.search(value) or value.startswith("[secret"):
        return False
    low = value.lower()
    if (_NOT_A_VALUE.match(value) or low.strip("-_") in _PLACEHOLDER_WORDS
            or _DESCRIPTION.match(low) or _filtered(d, value)):
        return False
    if quoted:
        return len(value) >= 4
    if len(value) < 6 or (not _LETTER.search(value) and not value.isdigit()):
        return False
    # A bare word ("the password is required", "the token is per-environment", "le mot de
    # passe est changé") is prose, not a secret: an unquoted value needs a digit or a symbol
    # (a letter of any script is neither). Quote an all-letter password to have it caught
    # ("the password is 'swordfish'").
    if not _DIGIT_OR_SYMBOL.search(value) or _EXCLAIMED.fullmatch(value):
        return False
    if kind == "password":
        return True  # people's passwords: "hunter2", "Tr0ub4dor&3"
    # keys and tokens are made by machines: long, and not made of words ("base64url")
    return len(value) >= 12 and not _wordy(value)


# a word that ends a sentence, not a symbol in a password: "Das Passwort ist erforderlich!"


def _wordy(value: str) -> bool:
    return sum(len(w) for w in _WORDS.findall(value) if _wordlike(w)) >= 0.5 * len(value)


def _filtered(d: _Detectors, value: str) -> bool:
    """detect-secrets' own heuristic filters (those that apply to text, not files)."""
    h = d.heuristic
    try:
        return (h.is_sequential_string(value) or h.is_potential_uuid(value)
                or h.is_templated_secret(value) or h.is_prefixed_with_dollar_sign(value)
                or h.is_not_alphanumeric_string(value))
    except Exception:  # pragma: no cover - a filter failing must not stop ingest
        return False


def _entropy_hits(d: _Detectors, text: str) -> list[Finding]:
    out = []
    for m in _TOKEN_RE.finditer(text):
        value = m.group()
        if _random_looking(d, value):
            kind = "aws-secret-key" if _aws_secret_shape(value, text) else "token"
            out.append(Finding(m.start(), m.end(), kind, "entropy"))
    return out


def _random_looking(d: _Detectors, value: str) -> bool:
    """A long unlabelled string that is random, not a name.

    Git SHAs, hashes and UUIDs (hex, one case), versions and paths (dots, slashes between
    words) and identifiers (camelCase, snake_case: few switches between letter cases and
    digits) all fall short of one of these.
    """
    if len(value) < 24 or len(value) > 1000:
        return False
    if not (_LOWER.search(value) and _UPPER.search(value) and _DIGIT.search(value)):
        return False
    if _filtered(d, value):
        return False
    if d.entropy.calculate_shannon_entropy(value) < min(ENTROPY_LIMIT,
                                                         math.log2(len(value)) - 0.6):
        return False
    classes = [_char_class(c) for c in value]
    switches = sum(1 for a, b in itertools.pairwise(classes) if a != b)
    if switches < 0.3 * len(value):
        return False
    # made of words ("TestUserAccountServiceImplV2Handler"): in random text, runs of four
    # or more letters that read like syllables (a vowel in every four) cover far less
    if _wordy(value):
        return False
    # a path or a dotted name between words ("src/app/Button2Handler") is not random
    parts = [p for p in _VALUE_PARTS.split(value) if p]
    return not (len(parts) >= 3 and all(len(p) < 12 for p in parts))


def _wordlike(run: str) -> bool:
    vowels = sum(1 for c in run.lower() if c in "aeiouy")
    return vowels * 4 >= len(run) and not _FOUR_CONSONANTS.search(run.lower())


def _char_class(c: str) -> int:
    if c.islower():
        return 0
    if c.isupper():
        return 1
    if c.isdigit():
        return 2
    return 3


def _merge(found: list[Finding], protected: list[tuple[int, int]]) -> list[Finding]:
    """Non-overlapping findings, the widest first where two overlap; nothing inside an
    existing placeholder."""
    def inside_placeholder(f: Finding) -> bool:
        return any(f.start < pe and ps < f.end for ps, pe in protected)

    order = sorted((f for f in found if not inside_placeholder(f)),
                   key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    for f in order:
        if out and f.start < out[-1].end:
            last = out[-1]
            if f.end > last.end:  # overlapping: cover both with the first one's type
                out[-1] = Finding(last.start, f.end, last.kind, last.rule)
            continue
        out.append(f)
    return out


def _slug(secret_type: str) -> str:
    return _NOT_SLUG.sub("-", secret_type.lower()).strip("-")[:40] or "secret"
