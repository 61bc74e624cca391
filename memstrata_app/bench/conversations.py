"""Conversational benchmark: chat histories replayed into fresh ledgers, then probed.

Two kinds of data, both under `bench/data/`:
- stories (`stories/NAME.tsv` + `NAME_probes.json`): long chats with probes only; their write
  path is scored from the current-time probes (`story_final`);
- items files (`conversations/dev.json`, `heldout.json`, `heldout2.json`): short chats,
  each with probes and a `final` classification of its lines, which also scores the write
  path (false and missed retirements, lines left in review, hedges stored as facts).
Each story or item gets its own ledger; a plain cosine store over every turn is the baseline.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..engine.understand.clauses import ELLIPSIS
from .systems import CachedEmbedder, VectorRag

DATA = Path(__file__).parent / "data"
ITEM_SETS = ("dev", "heldout", "heldout2")
# folders of stories (NAME.tsv + NAME_probes.json): the development stories; "blind1", eight
# histories by writers who saw neither the rules nor the corpus, reported blind once and then
# used for choices (a development set since); "blind2", eight more in other voices, the same
# (blind until 2026-12-02); "blind3", eight more in four new voices, reported once
# (2026-12-02) and looked into since; "blind4", four more in two new voices, written after the
# judge's 2026-12-03 corpus and never used for any choice; "blind5", six more in three new
# voices (2026-12-04), the same (bench/data/blind*/README.md)
STORY_SETS = ("stories", "blind1", "blind2", "blind3", "blind4", "blind5")
SETS = (*STORY_SETS, *ITEM_SETS)
FINAL_KINDS = ("active", "retired", "not_facts", "mixed")
RETIRED = {"superseded", "retracted"}  # closed by a later statement or a removal
REVIEW = {"quarantined"}  # waiting for a reviewer: not retrievable, retires nothing
Log = Callable[[str], None]


class ConversationDataError(ValueError):
    """A story or item file that breaks the format (names the file and the item)."""


@dataclass(frozen=True, slots=True)
class Probe:
    q: str
    want: tuple[str, ...]
    forbid: tuple[str, ...]
    as_of: datetime | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One chat replayed into its own ledger: a story or an item."""

    id: str
    family: str
    turns: tuple[tuple[datetime, str], ...]
    probes: tuple[Probe, ...]
    final: dict[str, tuple[str, ...]] | None = None

    def turn_of(self, sub: str) -> int:
        """Index of the one turn containing `sub` (validated on load)."""
        return next(i for i, (_, t) in enumerate(self.turns) if sub in t)


# --- loading -------------------------------------------------------------------------------
def parse_time(value: str, where: str) -> datetime:
    """`YYYY-MM-DDTHH:MM[...]`; naive times are UTC."""
    try:
        t = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConversationDataError(f"{where}: unreadable time {value!r}") from None
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


def _strings(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(s, str) and s for s in v):
        raise ConversationDataError(f"{where}: expected a list of non-empty strings")
    return tuple(v)


def _probe(p: Any, where: str) -> Probe:
    if not isinstance(p, dict) or not isinstance(p.get("q"), str) or not p["q"].strip():
        raise ConversationDataError(f"{where}: a probe needs a question `q`")
    extra = set(p) - {"q", "want", "forbid", "as_of"}
    if extra:
        raise ConversationDataError(f"{where}: unknown probe keys {sorted(extra)}")
    as_of = parse_time(p["as_of"], where) if p.get("as_of") else None
    return Probe(p["q"], _strings(p.get("want"), f"{where} want"),
                 _strings(p.get("forbid", []), f"{where} forbid"), as_of)


def validate(case: Case, where: str) -> None:
    """Every substring names exactly one turn; with `final`, every turn is classified once."""
    texts = [t for _, t in case.turns]

    def one(sub: str, what: str) -> int:
        hits = [i for i, t in enumerate(texts) if sub in t]
        if len(hits) != 1:
            raise ConversationDataError(
                f"{where}: {what} {sub!r} matches {len(hits)} turns (must match exactly one)")
        return hits[0]

    for n, p in enumerate(case.probes):
        for sub in p.want:
            one(sub, f"probe {n} ({p.q!r}) want")
        for sub in p.forbid:
            one(sub, f"probe {n} ({p.q!r}) forbid")
    if case.final is None:
        return
    owner: dict[int, str] = {}
    for kind in FINAL_KINDS:
        for sub in case.final[kind]:
            i = one(sub, f"final.{kind}")
            if i in owner:
                raise ConversationDataError(
                    f"{where}: turn {i} ({texts[i]!r}) is classified twice "
                    f"({owner[i]} and {kind})")
            owner[i] = kind
    missing = [f"{i} ({t!r})" for i, t in enumerate(texts) if i not in owner]
    if missing:
        raise ConversationDataError(
            f"{where}: turn(s) not classified in final: {', '.join(missing)}")


def load_story(tsv: Path) -> Case:
    """`NAME.tsv` (`time<TAB>statement` per line) with its `NAME_probes.json`."""
    name = tsv.stem
    turns = []
    for n, raw in enumerate(tsv.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        parts = raw.split("\t")
        if len(parts) != 2 or not parts[1].strip():
            raise ConversationDataError(f"{tsv.name}:{n}: expected `time<TAB>statement`")
        turns.append((parse_time(parts[0], f"{tsv.name}:{n}"), parts[1].strip()))
    probes_file = tsv.with_name(f"{name}_probes.json")
    raw_probes = json.loads(probes_file.read_text(encoding="utf-8"))
    if not isinstance(raw_probes, list):
        raise ConversationDataError(f"{probes_file.name}: expected a JSON list of probes")
    probes = tuple(_probe(p, f"{probes_file.name} probe {i}") for i, p in enumerate(raw_probes))
    case = Case(name, name, tuple(turns), probes)
    validate(case, f"story {name}")
    return replace(case, final=story_final(case))


def story_final(case: Case) -> dict[str, tuple[str, ...]]:
    """A story's write path, read from its current-time probes: what one wants must still be
    current at the end (a retirement of it is false), what one forbids must be retired (left
    current, a missed retirement). A line wanted by one probe and forbidden by another is
    left out; as-of probes say nothing about the end."""
    want = {w for p in case.probes if p.as_of is None for w in p.want}
    forbid = {f for p in case.probes if p.as_of is None for f in p.forbid}
    lines = {s: case.turn_of(s) for s in want | forbid}
    both = {lines[s] for s in want} & {lines[s] for s in forbid}
    return {"active": tuple(sorted(s for s in want if lines[s] not in both)),
            "retired": tuple(sorted(s for s in forbid if lines[s] not in both)),
            "not_facts": (), "mixed": ()}


def _item(d: Any, where: str) -> Case:
    if not isinstance(d, dict) or not isinstance(d.get("id"), str):
        raise ConversationDataError(f"{where}: an item needs a string `id`")
    where = f"{where} item {d['id']!r}"
    turns = []
    for n, t in enumerate(d.get("turns") or []):
        if not (isinstance(t, list | tuple) and len(t) == 2 and isinstance(t[1], str)):
            raise ConversationDataError(f"{where}: turn {n} must be [time, text]")
        turns.append((parse_time(t[0], f"{where} turn {n}"), t[1]))
    if not turns:
        raise ConversationDataError(f"{where}: no turns")
    probes = tuple(_probe(p, f"{where} probe {i}") for i, p in enumerate(d.get("probes") or []))
    final = None
    if d.get("final") is not None:
        f = d["final"]
        if not isinstance(f, dict) or set(f) - set(FINAL_KINDS):
            raise ConversationDataError(f"{where}: final takes only {', '.join(FINAL_KINDS)}")
        final = {k: _strings(f.get(k, []), f"{where} final.{k}") for k in FINAL_KINDS}
    case = Case(d["id"], str(d.get("family") or "unknown"), tuple(turns), probes, final)
    validate(case, where)
    return case


def load_items(path: Path) -> list[Case]:
    """An items file: a JSON list of {id, family, turns, probes, final?}."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ConversationDataError(f"{path}: expected a JSON list of items")
    cases = [_item(d, Path(path).name) for d in data]
    seen: set[str] = set()
    for c in cases:
        if c.id in seen:
            raise ConversationDataError(f"{Path(path).name}: item id {c.id!r} used twice")
        seen.add(c.id)
    return cases


def available_sets(root: Path | None = None) -> list[str]:
    """The sets whose files are on disk."""
    root = root or DATA
    out = [s for s in STORY_SETS if any((root / s).glob("*_probes.json"))]
    return out + [s for s in ITEM_SETS if (root / "conversations" / f"{s}.json").exists()]


def load_set(name: str, family: str | None = None, limit: int | None = None,
             root: Path | None = None) -> list[Case]:
    """One set's cases; `family` filters, `limit` keeps the first N per family."""
    root = root or DATA
    given = Path(name).expanduser()
    if name not in SETS and given.is_dir():  # a folder of stories (NAME.tsv + probes)
        cases = [load_story(p) for p in sorted(given.glob("*.tsv"))]
    elif name not in SETS and given.suffix == ".json" and given.is_file():
        cases = load_items(given)
    elif name in STORY_SETS:
        cases = [load_story(p) for p in sorted((root / name).glob("*.tsv"))]
    elif name in ITEM_SETS:
        cases = load_items(root / "conversations" / f"{name}.json")
    else:
        raise ValueError(f"unknown set {name!r}; one of: {', '.join(SETS)}")
    if family:
        cases = [c for c in cases if c.family == family]
    if limit is not None:
        per: dict[str, int] = {}
        kept = []
        for c in cases:
            per[c.family] = per.get(c.family, 0) + 1
            if per[c.family] <= limit:
                kept.append(c)
        cases = kept
    return cases


# --- scoring -------------------------------------------------------------------------------
class PlainStore(VectorRag):
    """Every turn as said, cosine top-k; as_of only hides what was said after it."""

    name = "plain_cosine"

    def load_turns(self, turns: Sequence[tuple[datetime, str]]) -> None:
        self.texts = [t for _, t in turns]
        self.vecs = self.emb.embed(self.texts)
        self.times = np.array([at.timestamp() for at, _ in turns], dtype=np.float64)

    def retrieve(self, query: str, k: int, as_of: datetime | None = None) -> list[str]:
        if not self.texts:
            return []
        s = self._scores(query)
        if as_of is not None:
            s = np.where(self.times <= as_of.timestamp(), s, -np.inf)
        order = [int(i) for i in np.argsort(-s, kind="stable") if np.isfinite(s[i])]
        return [self.texts[i] for i in order[:k]]


def score_probe(texts: Sequence[str], probe: Probe) -> tuple[bool, list[str], list[str]]:
    """(passed, wants missing from `texts`, forbids present in them)."""
    missing = [w for w in probe.want if not any(w in t for t in texts)]
    present = [f for f in probe.forbid if any(f in t for t in texts)]
    return not missing and not present, missing, present


def _retrievable(a: Any) -> bool:
    return a.valid_to is None and a.status not in RETIRED | REVIEW | {"rejected"}


def write_path(case: Case, rows: list[Any], turn_ids: list[list[int]]) -> dict[str, Any]:
    """False/missed retirements, lines in review and hedges stored as facts, from the ledger.

    A line's rows are those whose text contains it; when none does (a duplicate absorbed into
    an earlier row), the rows its ingest actions point to."""
    assert case.final is not None
    by_id = {int(a.id): a for a in rows}

    def rows_of(sub: str) -> list[Any]:
        found = [a for a in rows if sub in a.text]
        return found or [by_id[i] for i in turn_ids[case.turn_of(sub)] if i in by_id]

    def why(a: Any) -> str:
        if a.superseded_by is not None and int(a.superseded_by) in by_id:
            return by_id[int(a.superseded_by)].text
        return f"({a.status} {a.reason or ''})".replace(" )", ")")

    def rests_of(found: list[Any]) -> list[Any]:
        """The remainders the judge left of these rows (what stays of a sentence once one of
        its parts retired: its other words, elided with "…")."""
        nxt = [by_id.get(int(a.superseded_by)) for a in found if a.superseded_by is not None]
        return [r for r in nxt if r is not None and ELLIPSIS in r.text
                and r.text not in {a.text for a in found}]

    out: dict[str, Any] = {"false_retirements": [], "missed_retirements": [], "in_review": [],
                           "not_stored": [], "not_facts_as_facts": []}
    counted: set[int] = set()
    for kind in ("active", "mixed", "retired"):
        for sub in case.final[kind]:
            found = rows_of(sub)
            line = case.turns[case.turn_of(sub)][1]
            if not found:
                if kind != "retired":
                    out["not_stored"].append({"item": case.id, "line": line})
            elif all(a.status in REVIEW for a in found):
                out["in_review"].append({"item": case.id, "line": line, "kind": kind})
            elif kind == "retired":
                if any(_retrievable(a) for a in (*found, *rests_of(found))):
                    out["missed_retirements"].append({"item": case.id, "line": line})
            elif not any(_retrievable(a) for a in (
                    *found, *(rests_of(found) if kind == "mixed" else ()))):
                # a line of several facts of which some changed ("mixed") may live on in its
                # remainder; a line whose facts all still hold ("active") may not
                gone = [a for a in found if a.status in RETIRED]
                counted.update(int(a.id) for a in gone)
                out["false_retirements"].append({
                    "item": case.id, "line": line, "by": [why(a) for a in gone],
                    "cause": "retired"})
    hedge_ids: dict[int, str] = {}
    for sub in case.final["not_facts"]:
        for a in rows_of(sub):
            hedge_ids[int(a.id)] = a.text
            if a.kind == "assertion" and a.status == "active":
                out["not_facts_as_facts"].append({"item": case.id, "line": a.text})
    for a in rows:
        sb = a.superseded_by
        if sb is not None and int(sb) in hedge_ids and int(a.id) not in counted:
            counted.add(int(a.id))
            out["false_retirements"].append({"item": case.id, "line": a.text,
                                             "by": [hedge_ids[int(sb)]], "cause": "not_fact"})
    return out


def replay(eng: Any, case: Case) -> list[list[int]]:
    """Ingest every turn in order at its own time; the assertion ids each turn touched."""
    return [[int(a.assertion_id) for a in eng.ingest(text, source="chat", at=at)]
            for at, text in case.turns]


def ledger_write_path(eng: Any, case: Case, turn_ids: list[list[int]]) -> dict[str, Any]:
    """`write_path` over every row of the engine's ledger."""
    rows = eng.list_assertions(None, limit=1_000_000, order="id", descending=False)
    return write_path(case, rows, turn_ids)


@dataclass(frozen=True, slots=True)
class Extractor:
    """The Ollama tier for each ledger (`--extractor ollama:MODEL`); `approve` plays a
    reviewer who accepts every model claim before the probes."""

    model: str
    approve: bool = False
    host: str | None = None


def settle_model_claims(eng: Any, ex: Extractor) -> None:
    """Wait for the tier's queue; with `approve`, approve each model claim in review."""
    tier = eng.llm_tier
    if tier is None or not tier.drain(1800):
        raise RuntimeError(f"the Ollama tier ({ex.model}) stopped or did not finish in 30 min")
    if ex.approve:
        from memstrata_app.engine import EngineError

        for a in eng.quarantined():
            if a.method.startswith("llm:"):
                with contextlib.suppress(EngineError):  # an earlier approval settled it
                    eng.approve(a.id)
        tier.drain(60)


def approve_judge_reviews(eng: Any) -> int:
    """Approve every review item of the judge, oldest first, as a reviewer who trusts them
    all (an item an earlier approval settled is passed over). Returns how many."""
    from memstrata_app.engine import EngineError
    from memstrata_app.engine.understand.judging import JUDGE_REVIEW

    done = 0
    for a in sorted(eng.quarantined(), key=lambda a: int(a.id)):
        if (a.reason or "").startswith(JUDGE_REVIEW):
            with contextlib.suppress(EngineError):
                eng.approve(a.id)
                done += 1
    return done


def run_case(case: Case, emb: CachedEmbedder, folder: Path, k: int = 5,
             extractor: Extractor | None = None, hybrid: bool = True,
             judge: Any = "auto", approve_judge: bool = False) -> dict[str, Any]:
    """Replay one case into a fresh ledger and the plain store; score every probe.
    `approve_judge`: a reviewer approves every review item of the judge before the probes
    (what the review queue is worth, and the retirements a reviewer who trusts it makes)."""
    from memstrata_app.engine import MemoryEngine

    base = PlainStore(emb)
    base.load_turns(case.turns)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in case.id)
    thresholds = None
    if isinstance(judge, tuple):  # (judge, Thresholds): other thresholds than the model's
        judge, thresholds = judge
    with MemoryEngine.open(folder / f"{safe}.db", embedder=emb, judge=judge) as eng:
        if thresholds is not None:
            eng.judge_thresholds = thresholds
        eng.hybrid = hybrid
        if extractor is not None:
            eng.enable_llm_tier(extractor.model, host=extractor.host)
        turn_ids = replay(eng, case)
        if extractor is not None:
            settle_model_claims(eng, extractor)
        if approve_judge:
            approve_judge_reviews(eng)
        probes = []
        for p in case.probes:
            got = [h.text for h in eng.retrieve(p.q, k=k, as_of=p.as_of)]
            ok, missing, present = score_probe(got, p)
            b_ok = score_probe(base.retrieve(p.q, k, p.as_of), p)[0]
            probes.append({"q": p.q, "as_of": p.as_of.isoformat() if p.as_of else None,
                           "engine": ok, "baseline": b_ok, "missing": missing,
                           "forbidden_present": present, "top": got})
        wp = ledger_write_path(eng, case, turn_ids) if case.final is not None else None
        llm = sum(1 for a in eng.list_assertions(None, limit=1_000_000)
                  if a.method.startswith("llm:"))
    return {"id": case.id, "family": case.family, "turns": len(case.turns), "probes": probes,
            "write_path": wp, "llm_claims": llm}


COUNTS = ("false_retirements", "missed_retirements", "in_review", "not_stored",
          "not_facts_as_facts")


def summarize(results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Probe pass counts (all, current, as-of) and write-path counts over some cases."""
    s: dict[str, Any] = {"items": 0, "probes": 0, "baseline_pass": 0, "engine_pass": 0,
                         "current_probes": 0, "current_baseline_pass": 0,
                         "current_engine_pass": 0, "as_of_probes": 0,
                         "as_of_baseline_pass": 0, "as_of_engine_pass": 0, "scored_write": 0,
                         "llm_claims": 0}
    s.update({c: 0 for c in COUNTS})
    for r in results:
        s["items"] += 1
        s["llm_claims"] += r.get("llm_claims", 0)
        for p in r["probes"]:
            tag = "as_of" if p["as_of"] else "current"
            s["probes"] += 1
            s[f"{tag}_probes"] += 1
            s["baseline_pass"] += p["baseline"]
            s["engine_pass"] += p["engine"]
            s[f"{tag}_baseline_pass"] += p["baseline"]
            s[f"{tag}_engine_pass"] += p["engine"]
        if r["write_path"] is not None:
            s["scored_write"] += 1
            for c in COUNTS:
                s[c] += len(r["write_path"][c])
    return s


def run_set(name: str, emb: CachedEmbedder, family: str | None = None, limit: int | None = None,
            k: int = 5, log: Log = lambda _m: None, extractor: Extractor | None = None,
            hybrid: bool = True, judge: Any = "auto",
            approve_judge: bool = False) -> dict[str, Any]:
    """Every case of one set: per-family (or per-story) summaries, totals and details."""
    cases = load_set(name, family, limit)
    emb.warm([t for c in cases for _, t in c.turns] + [p.q for c in cases for p in c.probes])
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"memstrata-conv-{Path(name).name}-") as tmp:
        results = [run_case(c, emb, Path(tmp), k, extractor, hybrid, judge, approve_judge)
                   for c in cases]
    log(f"conversations/{name}: {len(cases)} cases in {time.perf_counter() - t0:.1f} s")
    families: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        families.setdefault(r["family"], []).append(r)
    lists = {c: [x for r in results if r["write_path"] for x in r["write_path"][c]]
             for c in COUNTS}
    details = [{"item": r["id"], "q": p["q"], "as_of": p["as_of"], "missing": p["missing"],
                "forbidden_present": p["forbidden_present"], "top": p["top"]}
               for r in results for p in r["probes"] if not p["engine"]]
    return {"families": {f: summarize(rs) for f, rs in families.items()},
            "totals": summarize(results), "has_final": any(c.final for c in cases),
            "details": details, **lists}


def run_sets(emb: CachedEmbedder, sets: Sequence[str] | None = None, family: str | None = None,
             limit: int | None = None, k: int = 5, log: Log = lambda _m: None,
             extractor: Extractor | None = None, hybrid: bool = True,
             judge: Any = "auto", approve_judge: bool = False) -> dict[str, Any]:
    """The named sets (default: all on disk) and the grand totals; `hybrid=False` reads
    by cosine alone; `judge="off"` decides by the rules alone; `approve_judge`: every review
    item of the judge approved before the probes."""
    names = list(sets) if sets is not None else available_sets()
    out: dict[str, Any] = {"k": k, "limit_per_family": limit, "sets": {},
                           "approve_judge": approve_judge,
                           "extractor": (f"llm:{extractor.model}" + (" (all approved)"
                                         if extractor.approve else "")) if extractor else None}
    for n in names:
        try:
            out["sets"][n] = run_set(n, emb, family, limit, k, log, extractor, hybrid, judge,
                                     approve_judge)
        except (ConversationDataError, json.JSONDecodeError, OSError) as e:
            log(f"conversations/{n}: skipped, {e}")
            out["sets"][n] = {"error": f"{type(e).__name__}: {e}"}
    totals = summarize([])
    for s in out["sets"].values():
        for key, v in s.get("totals", {}).items():
            totals[key] += v
    out["totals"] = totals
    return out
