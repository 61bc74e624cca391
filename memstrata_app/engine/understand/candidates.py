"""The update judge's stage of the write path: which judge, its thresholds, and before the
writer's transaction each new statement read beside its candidate active sentences (the
nearest by the vector and term sides, retrieve/); inside it, the verdicts applied
(judging.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..ledger.transaction import WriteContext
from ..metrics import Metrics
from ..retrieve.retriever import Retriever
from ..timeutil import to_ts
from ..types import EngineError, IngestAction
from .claims import pasted_lines
from .clauses import ELLIPSIS, elide, part_spans
from .extract import text_hash
from .judge import (
    Judge,
    JudgedPair,
    Thresholds,
    builtin_judge,
    default_thresholds,
    judge_dir,
)
from .judge_ollama import OllamaJudge
from .judging import apply_judgement, replacements, shares_a_name
from .ollama_client import probe
from .statements import Statement, dt

log = logging.getLogger(__name__)

# each new statement is judged beside its nearest active sentences: at most this many, each
# scoring at least the floor (cosine, plus the term side's share); measured on the corpus'
# updates: the floor keeps 96% of them, six candidates hold the true one 85% of the time
JUDGE_CANDIDATES = 6
JUDGE_FLOOR = 0.35
# sentences about nothing a ledger holds: an older sentence that reads as "updated" beside
# these reads so beside anything (it tells of a change itself: "switched from X to Y",
# "correction: it's 8 minutes"), and its verdict beside a real statement is no evidence
NULL_PARTNERS = ("Lunch is at noon on Fridays.", "The weather was nice this weekend.",
                 "Thanks for the help earlier.")
_CACHE = 4096  # sentences whose vector and one-sided reading are kept between statements


def resolve_judge(spec: str, host: str | None = None) -> tuple[Judge | None, str | None]:
    """(judge, None) for "builtin" or "ollama:MODEL" when it can answer, else (None, why)."""
    if spec in ("builtin", "auto"):
        j = builtin_judge()
        return (j, None) if j is not None else (
            None, f"the built-in judge is not installed in {judge_dir()}"
                  " (scripts/train_judge.py builds it)")
    if spec.startswith("ollama:") and spec != "ollama:":
        model = spec.split(":", 1)[1]
        why = probe(model, host)
        if why:
            return None, f"the Ollama judge cannot run: {why}"
        return OllamaJudge(model, host), None
    return None, f"unknown judge backend {spec!r}: use builtin or ollama:MODEL"


class Judging:
    """The update judge in use (None: the rules alone) and how many candidates it reads."""

    def __init__(self, retriever: Retriever, metrics: Metrics):
        self.retriever = retriever
        self.metrics = metrics
        # the update judge (understand/judge.py, judging.py): None reads by the rules alone
        self.judge: Judge | None = builtin_judge()
        self.judge_thresholds: Thresholds = default_thresholds()
        self.judge_candidates = JUDGE_CANDIDATES  # active sentences judged per statement
        self.judge_floor = JUDGE_FLOOR  # below this retrieval score, not a candidate
        self.judge_pairs = 0  # pairs judged by this engine (benchmarks report pairs/s)
        self._vectors: dict[str, np.ndarray] = {}  # by sentence, for `_embedder`
        self._embedder: Any = None
        self._alone: dict[tuple[str, str], float] = {}  # (judge, sentence): P beside nothing

    def use(self, judge: Any) -> None:
        """"auto" (built-in), None/"off" (rules alone), "ollama:<model>" or a Judge."""
        if judge in (None, "off", False):
            self.judge = None
        elif judge in ("auto", "builtin"):
            self.judge = builtin_judge()
        elif isinstance(judge, str) and judge.startswith("ollama:"):
            self.judge, why = resolve_judge(judge)
            if self.judge is None:
                raise EngineError(str(why))
        elif hasattr(judge, "judge"):
            self.judge = judge
        else:
            raise EngineError(f"unknown judge {judge!r}: use 'auto', 'off' or a Judge")

    def apply(self, ctx: WriteContext, st: Statement,
              acts: list[IngestAction]) -> list[IngestAction]:
        """Inside the writer's transaction: the statement's verdicts as actions."""
        judge = self.judge
        if judge is None:
            return acts
        return apply_judgement(ctx, st, acts, self.judge_thresholds, judge.name, judge.judge)

    def prepare(self, prepared: list[Statement], earlier: list[Statement],
                budget: int | None = None, now: float | None = None,
                written: bool = False) -> list[Statement]:
        """Each new statement beside its candidate active sentences (the nearest by the
        vector and term sides in its space, valid at its time; and the statements before it
        in this batch and the one before, not yet committed), judged in one batch. A judge
        that fails leaves the rules alone to decide; it never fails an ingest. `budget`: at
        most this many pairs (the closest), for a chat turn. `written`: the statements are in
        the ledger already (a turn judged after its write, later.py; `now` the time it was
        written): the search leaves out their own rows, which the batch's order decides
        instead (a statement is judged against those before it, never after)."""
        judge = self.judge
        todo = [i for i, st in enumerate(prepared) if st.vector is not None]
        if judge is None or not todo:
            return prepared
        t0 = time.perf_counter()
        pending = [st for st in (*earlier, *prepared) if st.vector is not None]
        offset = len(pending) - len(todo)
        mat = np.stack([st.vector for st in pending]) if pending else None
        per: list[list[tuple[str, str, float, bool]]] = []
        now = time.time() if now is None else now
        batch = {st.text_hash for st in pending} if written else set()
        search = self.retriever.search
        for n, i in enumerate(todo):
            st = prepared[i]
            found: dict[str, tuple[str, float, bool]] = {}
            for h in search(st.vector, self.judge_candidates, dt(st.at), (st.space,),
                            query=st.sentence):
                if (h.score >= self.judge_floor and h.text != st.sentence
                        and (not batch or text_hash(h.text) not in batch)):
                    found.setdefault(text_hash(h.text), (h.text, float(h.score), False))
            if st.at < now - 1:  # a late statement: what was said after it may retire it
                for h in search(st.vector, self.judge_candidates, None, (st.space,),
                                query=st.sentence):
                    if (h.score >= self.judge_floor and h.text != st.sentence
                            and to_ts(h.valid_from) > st.at  # type: ignore[operator]
                            and (not batch or text_hash(h.text) not in batch)):
                        found.setdefault(text_hash(h.text), (h.text, float(h.score), True))
            if mat is not None and offset + n > 0:
                sims = mat[:offset + n] @ st.vector
                for j in np.argsort(-sims)[:self.judge_candidates]:
                    other = pending[int(j)]
                    if (sims[j] >= self.judge_floor and other.space == st.space
                            and other.at <= st.at and other.text_hash != st.text_hash):
                        found.setdefault(other.text_hash,
                                         (other.sentence, float(sims[j]), False))
            best = sorted(found.items(), key=lambda kv: -kv[1][1])[:self.judge_candidates]
            per.append([(h, txt, sc, later) for h, (txt, sc, later) in best])
        if budget is not None and sum(map(len, per)) > budget:
            scores = sorted((c[2] for cands in per for c in cands), reverse=True)
            cut = scores[budget - 1] if budget > 0 else float("inf")
            per = [[c for c in cands if c[2] >= cut] for cands in per]
        pairs = [(prepared[i].sentence, txt) if later else (txt, prepared[i].sentence)
                 for i, cands in zip(todo, per, strict=True) for _, txt, _, later in cands]
        try:
            verdicts = iter(judge.judge(pairs)) if pairs else iter(())
        except Exception:  # a broken judge must not lose the user's statement
            log.exception("the update judge failed; these statements are decided by the rules")
            return prepared
        out = list(prepared)
        for i, cands in zip(todo, per, strict=True):
            out[i] = replace(prepared[i], judged=tuple(
                JudgedPair(h, txt, sc, next(verdicts), later) for h, txt, sc, later in cands))
        try:
            n_parts = self._read_parts(out, todo)
        except Exception:  # the parts only refine a verdict; without them it stands whole
            log.exception("the update judge failed on a sentence's parts; judged whole")
            n_parts = 0
        try:
            self._span_rests(out, todo)
        except Exception:  # without them a rule retires such a sentence's line as before
            log.exception("the sentences without their pasted lines could not be embedded")
        try:
            self._ground(out, todo)  # (its pairs are counted by ungrounded)
        except Exception:  # without the check a reading stands as the judge gave it
            log.exception("the update judge's grounding check failed; verdicts stand")
        self.metrics.record("judge", (time.perf_counter() - t0) * 1000)
        self.judge_pairs += len(pairs) + n_parts
        return out

    def ungrounded(self, pairs: Sequence[tuple[str, str]],
                   known: Mapping[str, np.ndarray] | None = None) -> list[str | None]:
        """For each (older, newer) pair whose verdict reads as an update, whether that reading
        comes from the pair: None when it does, else why not — "unrelated" (the sentences'
        vectors closer than `relate` in cosine: another subject altogether) or "one-sided"
        (the older sentence reads as updated beside sentences about nothing, NULL_PARTNERS,
        more surely than `one_sided`: its own words tell of a change, whatever follows it).
        `known`: vectors already at hand, by sentence (the rest are embedded, and kept).
        Measured on chat histories: most of the judge's confident readings between lines of
        different subjects fail one of the two (docs/JUDGE.md)."""
        judge, th = self.judge, self.judge_thresholds
        if judge is None or not pairs or (th.relate <= 0.0 and th.one_sided >= 1.0):
            return [None] * len(pairs)
        have: Mapping[str, np.ndarray] = known or {}
        self._embed_kept([t for pair in pairs for t in pair if t not in have])
        olds = list(dict.fromkeys(a for a, _ in pairs))
        if len(self._alone) + len(olds) > _CACHE:
            self._alone.clear()
        olds = [a for a in olds if (judge.name, a) not in self._alone]
        if olds and th.one_sided < 1.0:
            probs = iter(v.updates for v in judge.judge(
                [(a, n) for a in olds for n in NULL_PARTNERS]))
            for a in olds:
                self._alone[(judge.name, a)] = float(np.mean(
                    [next(probs) for _ in NULL_PARTNERS]))
            self.judge_pairs += len(olds) * len(NULL_PARTNERS)
        def vector(t: str) -> np.ndarray:
            return have[t] if t in have else self._vectors[t]

        out: list[str | None] = []
        for a, b in pairs:
            cos = float(np.dot(vector(a), vector(b)))
            alone = self._alone.get((judge.name, a), 0.0)
            out.append(f"unrelated (cosine {cos:.2f})" if cos < th.relate else
                       f"one-sided (reads {alone:.2f} beside any sentence)"
                       if alone > th.one_sided else None)
        return out

    def _embed_kept(self, texts: Sequence[str]) -> None:
        """Embed the texts not kept yet, and keep them (for this embedder)."""
        embedder = self.retriever.embedder
        texts = list(dict.fromkeys(texts))
        if embedder is not self._embedder or len(self._vectors) + len(texts) > _CACHE:
            self._vectors.clear()  # (another embedder: another vector space)
            self._embedder = embedder
        need = [t for t in texts if t not in self._vectors]
        if need:
            self._vectors.update(zip(need, embedder.embed(need), strict=True))

    def _ground(self, out: list[Statement], todo: list[int]) -> None:
        """Mark the verdicts that read as updates (≥ review) but not from the pair."""
        th = self.judge_thresholds
        picked = [(i, k) for i in todo for k, jp in enumerate(out[i].judged)
                  if jp.verdict.updates >= th.review]
        if not picked:
            return
        pairs = [(out[i].sentence, out[i].judged[k].text) if out[i].judged[k].later
                 else (out[i].judged[k].text, out[i].sentence) for i, k in picked]
        for (i, k), why in zip(picked, self.ungrounded(pairs, _vectors(out, todo)),
                               strict=True):
            if why is not None:
                judged = list(out[i].judged)
                judged[k] = replace(judged[k], ungrounded=why)
                out[i] = replace(out[i], judged=tuple(judged))

    def _span_rests(self, out: list[Statement], todo: list[int]) -> None:
        """For each candidate pasting two or more config lines, the sentence without each
        line, embedded (JudgedPair.span_rests)."""
        jobs: list[tuple[int, int, list[tuple[str, str]]]] = []
        for i in todo:
            for k, jp in enumerate(out[i].judged):
                lines = pasted_lines(jp.text)
                if len(lines) >= 2 and not jp.later:
                    jobs.append((i, k, [(ln, " ".join(jp.text.replace(ln, ELLIPSIS, 1).split()))
                                        for ln in dict.fromkeys(lines)]))
        if not jobs:
            return
        # (a candidate comes back beside statement after statement: its rests are kept)
        self._embed_kept([r for *_, rs in jobs for _, r in rs])
        for i, k, rs in jobs:
            judged = list(out[i].judged)
            judged[k] = replace(judged[k], span_rests=tuple(
                (ln, rest, self._vectors[rest]) for ln, rest in rs))
            out[i] = replace(out[i], judged=tuple(judged))

    def _read_parts(self, out: list[Statement], todo: list[int]) -> int:
        """A candidate the judge reads as (maybe) updated that divides into parts, read part
        by part beside the new statement: each part alone, and the sentence without it. A
        part is the update when it reads as one alone (≥ supersede) and the sentence without
        it no longer does (< review), while every other part alone plainly does not
        (< review); then the rest is kept in its own words, embedded here, to stay current
        once that part retires (judging.py). Returns the pairs judged."""
        judge, th = self.judge, self.judge_thresholds
        assert judge is not None
        jobs: list[tuple[int, int, list[tuple[int, int]]]] = []
        for i in todo:
            for k, jp in enumerate(out[i].judged):
                if jp.later or (jp.verdict.updates < th.review
                                and not shares_a_name(jp.text, out[i].sentence)):
                    continue  # read whole, a sentence of many facts hides the one that changed
                spans = part_spans(jp.text)
                if len(spans) >= 2:
                    jobs.append((i, k, spans))
        if not jobs:
            return 0
        pairs = []
        for i, k, spans in jobs:
            text, new = out[i].judged[k].text, out[i].sentence
            pairs += [(text[a:b], new) for a, b in spans]
            pairs += [(elide(text, spans, [n]), new) for n in range(len(spans))]
        probs = iter([v.updates for v in judge.judge(pairs)])
        read = [(tuple(next(probs) for _ in spans), [next(probs) for _ in spans])
                for _, _, spans in jobs]
        # a part that reads as an update, but not from the pair, counts as plainly not one
        sure: list[tuple[int, int]] = []  # (job, part)
        sure_pairs: list[tuple[str, str]] = []
        for j, ((i, k, spans), (alone, _)) in enumerate(zip(jobs, read, strict=True)):
            for n, (a, b) in enumerate(spans):
                if alone[n] >= th.review:
                    sure.append((j, n))
                    sure_pairs.append((out[i].judged[k].text[a:b], out[i].sentence))
        whys = self.ungrounded(sure_pairs, _vectors(out, todo))
        for (k, n), why in zip(sure, whys, strict=True):
            if why is not None:
                alone = read[k][0]
                read[k] = ((*alone[:n], 0.0, *alone[n + 1:]), read[k][1])
        rests: list[tuple[int, int, tuple[float, ...], str | None, int | None, str | None]] = []
        for (i, k, spans), (alone, without) in zip(jobs, read, strict=True):
            hit = [n for n in range(len(spans))
                   if alone[n] >= th.supersede and without[n] < th.review]
            clear = all(alone[n] < th.review for n in range(len(spans)) if n not in hit)
            rest = (elide(out[i].judged[k].text, spans, hit)
                    if len(hit) == 1 and clear else None)
            maybe = [n for n in range(len(spans))
                     if th.review <= alone[n] < th.supersede and without[n] < th.review]
            review = (maybe[0] if not hit and len(maybe) == 1 and all(
                alone[n] < th.review for n in range(len(spans)) if n != maybe[0]) else None)
            soft = [n for n in range(len(spans))
                    if alone[n] >= th.review and without[n] < th.review]
            rule_rest = (elide(out[i].judged[k].text, spans, soft) if rest is None
                         and len(soft) == 1 and all(alone[n] < th.review for n in
                                                    range(len(spans)) if n != soft[0])
                         else None)
            if rest is None and rule_rest is None:
                # the statement names the value it replaced, and one part alone holds it:
                # where a rule retires that value, the other parts are the rest
                text = out[i].judged[k].text
                olds = {was for was, _, _ in replacements(out[i]) if len(was) > 1}
                held = [n for n, (a, b) in enumerate(spans)
                        if any(o in text[a:b].casefold() for o in olds)]
                if len(held) == 1:
                    rule_rest = elide(text, spans, held)
            rests.append((i, k, alone, rest, review, rule_rest))
        texts = [r for *_, r, _, _ in rests if r is not None]
        texts += [r for *_, r in rests if r is not None]
        vecs = iter(self.retriever.embedder.embed(texts) if texts else [])
        for i, k, ps, rest, review, _ in rests:
            judged = list(out[i].judged)
            judged[k] = replace(judged[k], parts=ps, remainder=rest, review_part=review,
                                remainder_vector=next(vecs) if rest is not None else None)
            out[i] = replace(out[i], judged=tuple(judged))
        for i, k, _, _, _, rule_rest in rests:
            if rule_rest is not None:
                judged = list(out[i].judged)
                judged[k] = replace(judged[k], rule_rest=rule_rest, rule_rest_vector=next(vecs))
                out[i] = replace(out[i], judged=tuple(judged))
        return len(pairs)


def _vectors(out: Sequence[Statement], todo: Sequence[int]) -> dict[str, np.ndarray]:
    """The new statements' own vectors, by sentence."""
    return {out[i].sentence: out[i].vector for i in todo if out[i].vector is not None}
