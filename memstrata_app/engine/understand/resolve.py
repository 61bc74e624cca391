"""Key resolution beyond spelling, against the ledger as it stands.

A change statement that names the old value ("from nose to pytest", "replaced axios with
ky", "bumped workers from 8 to 12") is keyed through the active fact that holds that value
in that context; a rollback ("rolled back to 8") through the key whose history holds the
value it returns to. A resolution is *certain* when exactly one key qualifies; when several
do, the statement waits for review with the candidates shown. Nothing here is a similarity
threshold: candidates are found by value, context and shared subject words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..ledger.keys import Triple, make_key
from .normalize import normalize_object
from .vocabulary import DEFAULT_VOCABULARY

Query = Callable[[str, tuple], list[tuple]]

_STOP = frozenset((
    "the", "a", "an", "is", "are", "was", "on", "in", "of", "for", "to", "at", "by", "with",
    "and", "or", "our", "we", "it", "its", "…", "now", "value", "version", "uses", "per",
    "from", "as", "be", "this", "that", "runs", "run", "set", "default", "current", "new",
    "old", "main", "all", "has", "have", "x", "s", "after", "out", "up", "gives", "is", "now",
))
_WORD = re.compile(r"[a-z0-9][a-z0-9.+#]*")
_JS = re.compile(r"\.?js$")
VERSION_TAIL = re.compile(r"^v?\d+(?:\.\d+)*\S*$", re.I)
_CORE = re.compile(r"^v?(\d[\d.,]*\d|\d)(?:\s*(?P<unit>[a-zµ%/]+))?", re.I)


@dataclass(frozen=True, slots=True)
class Candidate:
    row_id: int
    subject: str
    subject_norm: str
    relation: str
    relation_norm: str
    object_norm: str
    context: str


@dataclass(frozen=True, slots=True)
class Resolution:
    triple: Triple
    candidates: tuple[Candidate, ...] = ()  # several keys could be meant: ask in review
    plain_row: int | None = None  # a plain (unkeyed) fact the change replaces
    via: str = ""  # how the key was found, for the user ("value reference #12")
    old_norm: str | None = None  # the stored form of the old value, when one was found


_ABBREV = {"conns": "connection", "conn": "connection", "max": "maximum", "min": "minimum",
           "repo": "repository", "db": "database", "env": "environment", "cfg": "config",
           "configuration": "config", "msg": "message", "msgs": "message", "num": "number",
           "auth": "authentication", "k8s": "kubernetes", "pg": "postgres",
           "postgresql": "postgres", "mem": "memory", "svc": "service", "dir": "directory"}


def _stem(w: str) -> str:
    w = _ABBREV.get(w, w)
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    return _ABBREV.get(w, w)


# Attribute phrasings that name one attribute ("times out after" = timeout): folded before
# the words of two key phrases are compared.
_PHRASES = tuple((re.compile(p, re.I), r) for p, r in (
    (r"\btimes?\s+out(?:\s+after)?\b|\btimeouts?\b", " timeout "),
    (r"\b(?:listens|listening|serves|serving|bound|binds)\s+(?:on|to)(?:\s+port)?\b", " port "),
    (r"\bgives?\s+up\s+after\b|\bmax(?:imum)?\b", " "),
    (r"\b(?:retries|retry|attempts)\b", " retry "),
    (r"\bexpires?\s+after\b|\bretention\b|\btime\s+to\s+live\b", " ttl "),
    (r"\bruns?\s+(?:with|at)\b", " "),
))


def words(s: str | None) -> set[str]:
    """Content words of a key phrase, attribute phrasings, abbreviations and plurals folded."""
    t = (s or "").lower()
    for rx, rep in _PHRASES:
        t = rx.sub(rep, t)
    return {_stem(w.strip(".")) for w in _WORD.findall(t)} - _STOP


def value_core(v: str) -> tuple[str, str] | None:
    """(number, unit) of a numeric value: "8 workers" -> ("8", "workers")."""
    m = _CORE.match(v.strip())
    if not m:
        return None
    return m.group(1).replace(",", ""), (m.group("unit") or "").lower()


def same_value(a: str, b: str) -> bool:
    """One value said two ways: "8" and "8 workers", "RabbitMQ" and "RabbitMQ 3.12",
    "moment" and "moment.js"."""
    if a == b:
        return True
    a, b = _JS.sub("", a), _JS.sub("", b)
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if long_.startswith(short + " ") and VERSION_TAIL.match(long_[len(short) + 1:]):
        return True
    ca, cb = value_core(a), value_core(b)
    if ca is None or cb is None or ca[0] != cb[0]:
        return False
    # "8" and "8 workers" agree; "8 s" and "8 gb" do not
    return not ca[1] or not cb[1] or ca[1][:1] == cb[1][:1]


def _rows_holding(q: Query, value: str, *, active: bool, space: str) -> list[tuple]:
    norm = normalize_object(value)
    core = value_core(value)
    probes = {norm}
    if core:
        probes.add(core[0])
    out = []
    status = "status='active'" if active else "status IN ('active','superseded')"
    for p in probes:
        # every value that starts with the probe: "14" finds "14 days" and "14d" (a
        # duration's normal form); same_value below keeps only the same value ("140" goes)
        out += q(
            "SELECT id, subject, subject_norm, relation, relation_norm, object_norm,"
            f" COALESCE(context, '') FROM assertions WHERE {status} AND key IS NOT NULL"
            " AND object_norm >= ? AND object_norm < ? AND +space=?",
            (p, p + "~", space))
    seen: set[int] = set()
    uniq = []
    for r in out:
        if r[0] not in seen and same_value(r[5], norm):
            seen.add(r[0])
            uniq.append(r)
    return uniq


def _compatible(row_ctx: str, ctx: str) -> bool:
    return not ctx or row_ctx == ctx


def _by_subject(rows: list[tuple], subj_words: set[str]) -> list[tuple]:
    if not subj_words:
        return rows
    return [r for r in rows if subj_words & (words(r[2]) | words(r[4].replace("_", " ")))]


def _candidates(rows: list[tuple]) -> tuple[Candidate, ...]:
    by_key: dict[str, Candidate] = {}
    for r in rows:
        c = Candidate(r[0], r[1], r[2], r[3], r[4], r[5], r[6])
        by_key.setdefault(make_key(c.subject_norm, c.relation_norm, c.context), c)
    return tuple(by_key.values())


def resolve(q: Query, tr: Triple, *, old: str | None, rollback: bool, by_value: bool,
            t: float) -> Resolution:
    """The key a change statement belongs to (see the module docstring)."""
    subj_words = set() if by_value else words(tr.subject) | words(
        tr.relation_norm.replace("_", " "))
    if old:
        own = q("SELECT object_norm FROM assertions WHERE key=? AND status='active'", (tr.key,))
        for (o,) in own:
            if same_value(o, normalize_object(old)):
                return Resolution(tr, via="its own key holds the old value", old_norm=o)
        rows = [r for r in _rows_holding(q, old, active=True, space=tr.space)
                if _compatible(r[6], tr.context)]
        cands = _candidates(_by_subject(rows, subj_words))
        if not cands and value_kind(old) in ("word", "ident") and len(old) >= 3:
            # a product's name identifies its slot by itself ("migrated the firmware from
            # FreeRTOS to Zephyr 3.6" after "the RTOS is FreeRTOS 10.5"); a number does not
            everywhere = _candidates(rows)
            cands = everywhere if len(everywhere) == 1 else ()
        if len(cands) == 1:
            return Resolution(_retarget(tr, cands[0]),
                              via=f"value reference: #{cands[0].row_id} held {old}",
                              old_norm=cands[0].object_norm)
        if len(cands) > 1:
            return Resolution(tr, candidates=cands)
        return _plain_reference(q, tr, old, subj_words, t)
    if rollback:
        if q("SELECT 1 FROM assertions WHERE key=? AND status IN ('active','superseded')"
             " LIMIT 1", (tr.key,)):
            return Resolution(tr, via="rollback to an earlier value of this key")
        past = [r for r in _rows_holding(q, tr.object, active=False, space=tr.space)
                if _compatible(r[6], tr.context)]
        cands = _candidates(_by_subject(past, subj_words))
        if len(cands) == 1:
            return Resolution(_retarget(tr, cands[0]),
                              via=f"rollback: #{cands[0].row_id} held {tr.object} before")
        if len(cands) > 1:
            return Resolution(tr, candidates=cands)
    return Resolution(tr)


_KINDS = (
    ("url", re.compile(r"^[a-z][a-z0-9+.\-]*://", re.I)),
    ("time", re.compile(r"^\d{1,2}:\d{2}\b")),
    ("version", re.compile(r"^v?\d+(?:\.\d+)+\S*$|^v\d+$", re.I)),
    ("int", re.compile(r"^\d+$")),
)
_IDENT_SHAPE = re.compile(r"[\d_/.:\-]|[a-z][A-Z]")


def value_kind(v: str) -> str:
    """A coarse shape of a value: url, time, version, int, num:<unit>, ident or word."""
    v = v.strip().strip("`'\"")
    for name, rx in _KINDS:
        if rx.match(v):
            return name
    core = value_core(v)
    if core and core[1]:
        return f"num:{core[1][:1]}"
    if _IDENT_SHAPE.search(v) and " " not in v:
        return "ident"
    return "word"


def _kinds_agree(a: str, b: str, relations: tuple[str, ...], key_words: set[str]) -> bool:
    """Two values of one slot have one shape; "8 replicas" fits a `replicas` slot holding
    "6"; "16.2" fits a version slot holding "14"."""
    ka, kb = value_kind(a), value_kind(b)
    if ka == kb:
        return True
    if "version" in relations and {ka, kb} <= {"int", "version"}:
        return True
    if {ka, kb} & {"int"} and any(k.startswith("num:") for k in (ka, kb)):
        unit = value_core(a if ka != "int" else b)
        return bool(unit and unit[1] and _stem(unit[1]) in key_words)
    return False


def _distinct_relations(a: str, b: str) -> bool:
    """Two named attributes of the vocabulary ("port", "version") are two slots, however
    alike their values look: "bumped the API to version 2.1" is not the API's port."""
    return (a != b and "value" not in (a, b) and a in DEFAULT_VOCABULARY
            and b in DEFAULT_VOCABULARY)


def alias(q: Query, tr: Triple) -> Resolution:
    """A change stated in other words ("orders api moved to 8085" after "the orders api
    listens on 8080 in docker-compose"): the one active single-valued key in this context
    whose subject words include all of this claim's, with a value of the same shape.
    Only for claims that say they change something; several candidates go to review.
    A frame whose value leads the sentence ("3.12 breaks the flash-attn wheel build" keys
    "… breaks the flash-attn wheel build") says what the value does, not whose value it
    is: its words holding the claim's subject ("flash-attn pinned to 2.5.8") is no
    evidence."""
    if q("SELECT 1 FROM assertions WHERE key=? AND status IN ('active','superseded') LIMIT 1",
         (tr.key,)):
        return Resolution(tr)
    mine = words(tr.subject) | words(tr.relation_norm.replace("_", " "))
    if not mine:
        return Resolution(tr)
    # the look-up needs a word as stored ("auth"), not its folded form ("authentication")
    raw = [w.strip(".") for w in _WORD.findall(tr.subject_norm.lower()) if w not in _STOP]
    if not raw:
        return Resolution(tr)
    probe = max(raw, key=len)
    rows = q("SELECT id, subject, subject_norm, relation, relation_norm, object_norm,"
             " COALESCE(context, '') FROM assertions WHERE status='active' AND key IS NOT NULL"
             " AND kind='assertion' AND subject_norm LIKE ? AND space=?",
             (f"%{probe}%", tr.space))
    fits = [r for r in rows
            if mine <= (words(_slot_clause(r[2])) | words(r[4].replace("_", " ")))
            and not (r[1] or "").startswith("…")  # the value leads: the frame is its doing
            and not _OTHER_VALUE.search(r[2])
            and r[4] not in _MULTI_HINT
            and not _distinct_relations(r[4], tr.relation_norm)
            and _kinds_agree(r[5], tr.object_norm, (r[4], tr.relation_norm),
                             words(r[2]) | words(r[4].replace("_", " ")))]
    same = [r for r in fits if r[6] == tr.context]
    pool = same if same or tr.context else fits
    cands = _candidates(pool)
    if len(cands) == 1:
        c = cands[0]
        return Resolution(_retarget(tr, c), via=f"same slot in other words as #{c.row_id}")
    if len(cands) > 1:
        return Resolution(tr, candidates=cands)
    return Resolution(tr)


def _slot_clause(frame: str) -> str:
    """A value-slot frame up to the end of the phrase that holds its slot: "the admin
    dashboard runs on port …, separate from the api" is the dashboard's port, and the API
    it names after the comma is no subject of it ("The API now listens on port 8443" must
    not retire the dashboard's 3000)."""
    at = frame.find("…")
    if at < 0:
        return frame
    end = _AFTER_SLOT.search(frame, at + 1)
    return frame[:end.start()] if end else frame


_AFTER_SLOT = re.compile(r"[,;:()]|\s[—–-]\s")

# a key phrase that itself holds a value ("we fine-tune llama-3-8b with lora rank …") states
# more than one fact: retiring it on a paraphrase would hide the other one
_OTHER_VALUE = re.compile(r"`|\b[a-z]*\d[\w.\-]*\b", re.I)

_MULTI_HINT = frozenset(("uses", "depends_on", "supports", "integrates_with", "contains",
                         "imports", "calls", "exposes", "connects_to", "reads_from",
                         "writes_to", "member", "maintainer", "name"))


def _plain_reference(q: Query, tr: Triple, old: str, subj_words: set[str],
                     t: float) -> Resolution:
    """The old value named by a change may sit in a plain fact the rules could not key
    ("our python tests run under nose"). When exactly one current plain fact names it (as a
    whole word, not beside the new value, sharing the claim's subject and context words),
    the change replaces that fact; its frame with the old value masked becomes the key."""
    low = old.casefold().strip("`'\"")
    if len(low) < 2:
        return Resolution(tr)
    rows = q("SELECT id, text, method, subject FROM assertions WHERE valid_to IS NULL"
             " AND valid_from <= ? AND ((status='plain' AND method='plain') OR (status='active'"
             " AND method='frame:value-slot')) AND instr(lower(text), ?) > 0 AND space=?",
             (t, low, tr.space))
    word = re.compile(rf"(?<![\w.\-]){re.escape(low)}(?![\w\-]|\.\w)")
    # A frame-keyed sentence is replaced only when the old value owns its slot ("app logs
    # ship to elasticsearch …" holds elasticsearch's version); "the export writes CSV to …"
    # keys the bucket, a fact the CSV→parquet change leaves true.
    owns_slot = re.compile(rf"(?<![\w.\-]){re.escape(low)}\s+…")
    rows = [(i, txt) for i, txt, method, frame in rows
            if method == "plain" or owns_slot.search((frame or "").casefold())]
    new = tr.object.casefold().strip("`'\"")
    need = subj_words | words(tr.context)
    fits = [(i, txt) for i, txt in rows
            if word.search(txt.casefold()) and (new == low or new not in txt.casefold())
            and (not need or need <= words(txt) or (subj_words and subj_words & words(txt)
                                                    and words(tr.context) <= words(txt)))]
    if len(fits) != 1:
        return Resolution(tr)
    row_id, txt = fits[0]
    m = word.search(txt.casefold())
    assert m is not None
    frame = " ".join((txt[:m.start()] + "…" + txt[m.end():]).split()).rstrip(" .!;,")
    from .normalize import normalize_entity
    keyed = replace(tr, subject=frame, subject_norm=normalize_entity(frame),
                    relation="value", relation_norm="value", context=tr.context)
    return Resolution(keyed, via=f"value reference: #{row_id} said {old}", plain_row=row_id)


def _retarget(tr: Triple, c: Candidate) -> Triple:
    return replace(tr, subject=c.subject or tr.subject, subject_norm=c.subject_norm,
                   relation=c.relation or tr.relation, relation_norm=c.relation_norm,
                   context=c.context)


_GENERIC_HEAD = re.compile(
    r"(?<!\s)\s+(?:table|service|namespace|function|func|method|topic|flag|feature\s+flag|model|type|"
    r"class|module|file|field|column|queue|bucket|repo|repository|branch|job|dag|endpoint|"
    r"env(?:ironment)?\s+var(?:iable)?|variable|var|setting|key|package|crate|lib(?:rary)?|"
    r"component|hook|scene|index|view|schema|database|db|stream|channel|image|chart)$", re.I)
_GENERIC_LEAD = re.compile(
    r"^(?:(?:the|our|a|k8s|kubernetes|graphql|dbt|sql|python|js|react|redis|kafka|s3|gcs|"
    r"table|service|namespace|function|topic|flag|model|type|class|module|file|field|column|"
    r"queue|bucket|branch|job|dag|endpoint|export|hook|component|scene|index|view|schema)\s+)+",
    re.I)


def name_core(s: str) -> str:
    """The identifier a name phrase is about: "the k8s service orders-api" -> "orders-api",
    "`sensor_read()`" -> "sensor_read"."""
    t = s.strip().strip("`'\"")
    t = _GENERIC_HEAD.sub("", _GENERIC_LEAD.sub("", t)).strip().strip("`'\"")
    if t.endswith("()"):
        t = t[:-2]
    return t.casefold()


def renamed_values(q: Query, old_name: str, t: float, context: str,
                   space: str) -> tuple[list[tuple], list]:
    """Facts whose value is a name that was just renamed: (keyed rows, plain rows).

    A rename of an identifier changes every fact that names it as a value ("the imu read
    function is `sensor_read()`" after "sensor_read() renamed to imu_sample()"). Only
    identifier-like names (not one lowercase word) and only single-valued facts."""
    core = name_core(old_name)
    if len(core) < 3 or (core.isalpha() and core.islower()):
        return [], []
    token = re.compile(rf"(?<![\w.\-]){re.escape(core)}(?:\(\))?(?![\w\-]|\.\w)")
    rows = q("SELECT id, subject, subject_norm, relation, relation_norm, object_norm,"
             " COALESCE(context, '') FROM assertions WHERE status='active' AND kind='assertion'"
             " AND relation_norm != 'name' AND valid_from <= ? AND instr(object_norm, ?) > 0"
             " AND +space=?", (t, core, space))
    keyed = [r for r in rows if token.search(r[5]) and _compatible(r[6], context)
             and r[4] not in _MULTI_HINT]
    plain = q("SELECT id, text FROM assertions WHERE status='plain' AND method='plain'"
              " AND valid_to IS NULL AND valid_from <= ? AND instr(lower(text), ?) > 0"
              " AND space=?", (t, core, space))
    plain = [p for p in plain if token.search(p[1].casefold())]
    return keyed[:5], plain if len(plain) == 1 else []


def reverted_value(q: Query, tr: Triple) -> str | None:
    """The value a key held before `tr.object`, when `tr.object` is its current value
    ('Revert "upgrade torch to 2.4.0"' puts back what 2.4.0 replaced)."""
    cur = q("SELECT id, object_norm FROM assertions WHERE key=? AND status='active'", (tr.key,))
    for row_id, obj in cur:
        if same_value(obj, tr.object_norm):
            prev = q("SELECT object FROM assertions WHERE superseded_by=? AND key=?"
                     " ORDER BY valid_from DESC LIMIT 1", (row_id, tr.key))
            return prev[0][0] if prev else None
    return None


def product_reference(q: Query, tr: Triple) -> Resolution:
    """ "upgraded prod mysql to 8.0.36" after "prod db is mysql 5.7": a version claim for a
    product whose own key has no history continues the one active fact (same context)
    whose value is that product at another version."""
    if tr.relation_norm != "version" or q(
            "SELECT 1 FROM assertions WHERE key=? AND status IN ('active','superseded') LIMIT 1",
            (tr.key,)):
        return Resolution(tr)
    name = tr.subject_norm
    if len(name) < 2:
        return Resolution(tr)
    rows = q("SELECT id, subject, subject_norm, relation, relation_norm, object_norm,"
             " COALESCE(context, '') FROM assertions WHERE status='active' AND kind='assertion'"
             " AND object_norm > ? AND object_norm < ? AND +space=?",
             (name + " ", name + " ~", tr.space))
    rows = [r for r in rows if r[6] == tr.context and VERSION_TAIL.match(r[5][len(name) + 1:])
            and r[4] not in _MULTI_HINT]
    cands = _candidates(rows)
    if len(cands) != 1:
        return Resolution(tr)
    c = cands[0]
    keyed = replace(_retarget(tr, c), object=f"{tr.subject} {tr.object}",
                    object_norm=normalize_object(f"{tr.subject} {tr.object}"))
    return Resolution(keyed, via=f"product version: #{c.row_id} held {tr.subject}")
