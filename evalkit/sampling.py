"""The evaluator's questions: ``plan(study, pools, seed)``, a pure function.

The plan is never stored: it is recomputed from the session's seed, the study
and the pools, so it must depend on nothing else (no global random state, no
set iteration order, no clock).

Bias controls
-------------
* Same domain within a question; one review per source of the question.
* No review appears twice in one evaluator's plan, across all tasks.
* Length matching at selection: the most constrained source (fewest unused
  eligible reviews in the domain; ties go to the source named first) is drawn
  first, uniformly, as the anchor; every other source is drawn uniformly among
  its unused reviews within ``+-length_tolerance`` of the anchor's characters
  and ``+-sentence_tolerance`` sentences. When none fits, the closest unused
  review by characters (then sentences) is taken and the question is marked
  ``matched=False``.
* Length normalisation at display (:mod:`evalkit.truncation`).
* Positions (which text is A, B, C) shuffled per question; question order
  within a task shuffled per evaluator unless the task says ``order = "fixed"``.
  With ``[study] positions = "rotation"`` and the evaluator's ``arrival``, the
  positions come from a Williams design instead (:mod:`evalkit.balance`):
  occurrence ``m`` (over all evaluators in arrival order) of the task's
  ``j``-th distinct source combination is shown in the order
  ``row_for(m, j, k)``. The shuffle is still drawn (and ignored), so every
  other draw, and so the texts, stay those of the shuffled plan.

Selection modes
---------------
``per-evaluator`` (default): the evaluator's seed draws their own reviews.
``shared``: the reviews *and their display texts* are drawn once from the
study seed, so every evaluator judges identical items; each evaluator still
gets their own question order and positions. Shared tasks are drawn first, so
per-evaluator tasks avoid the shared reviews.

Random draws happen in this order, which is part of the contract (changing it
changes every plan): shared selections (study-seeded stream), then
per-evaluator selections in task order, then per task: question order, then per
question: positions, then truncation factors (per-evaluator tasks only).

Floor: study services (``.importlinter``). May import the config, the checks, the task kinds (:mod:`evalkit.tasks`),
:mod:`evalkit.resultkit` and the core; never the survey flow, the exports or the command line.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from .balance import row_for
from .checks import add_checks
from .config import BiasControls, PairwiseTask, RatingTask, Study, TripletTask
from .datasets import PoolIndex, Pools, Review
from .items import ItemSet
from .question import LABELS, Question
from .rating_items import RatingItem
from .rng import Mulberry32, derive_seed, shuffle
from .tasks import KINDS
from .tasks.base import PlanInputs
from .tasks.itemsource import PlanError as ItemsPlanError
from .truncation import normalise_lengths, truncation_factors

__all__ = ["LABELS", "PlanError", "Question", "item_order", "plan", "questions_by_task"]

_REJECTION_TRIES = 16


PlanError = ItemsPlanError
"""The pools or items cannot fill the plan (e.g. a pool ran out of unused reviews)."""


class _Selector:
    """Draws length-matched, never-repeated reviews from indexed pools."""

    def __init__(self, pools: Pools, bias: BiasControls) -> None:
        self.pools = pools
        self.bias = bias
        self.used: set[str] = set()
        self.used_per_pool: Counter[tuple[str, str]] = Counter()

    def _take(self, review: Review) -> Review:
        self.used.add(review.key)
        self.used_per_pool[(review.source, review.domain)] += 1
        return review

    def available(self, source: str, domain: str) -> int:
        return len(self.pools.get((source, domain), ())) - self.used_per_pool[(source, domain)]

    def _exhausted(self, source: str, domain: str) -> PlanError:
        return PlanError(
            f"no unused eligible review left for source {source!r} in domain {domain!r} "
            f"({len(self.pools.get((source, domain), ()))} eligible in all)"
        )

    def draw_any(self, source: str, domain: str, rng: Mulberry32) -> Review:
        reviews = self.pools.get((source, domain), [])
        if self.available(source, domain) <= 0:
            raise self._exhausted(source, domain)
        for _ in range(_REJECTION_TRIES):  # O(1) expected: the used set is tiny next to a pool
            r = reviews[rng.randbelow(len(reviews))]
            if r.key not in self.used:
                return self._take(r)
        free = [r for r in reviews if r.key not in self.used]
        return self._take(free[rng.randbelow(len(free))])

    def draw_matched(self, source: str, domain: str, anchor: Review, rng: Mulberry32) -> Review | None:
        index = self.pools.index(source, domain)
        a = anchor.n_chars
        tol = self.bias.length_tolerance
        lo = math.ceil(a * (1 - tol) - 1e-9)
        hi = math.floor(a * (1 + tol) + 1e-9)
        st = self.bias.sentence_tolerance
        ranges = index.window(lo, hi, anchor.n_sentences - st, anchor.n_sentences + st)
        total = sum(stop - start for _, start, stop in ranges)
        if total == 0:
            return None
        for _ in range(_REJECTION_TRIES):
            k = rng.randbelow(total)
            for positions, start, stop in ranges:
                if k < stop - start:
                    r = index.reviews[positions[start + k]]
                    break
                k -= stop - start
            if r.key not in self.used:
                return self._take(r)
        free = [index.reviews[positions[i]] for positions, start, stop in ranges for i in range(start, stop)]
        free = [r for r in free if r.key not in self.used]
        if not free:
            return None
        return self._take(free[rng.randbelow(len(free))])

    def closest(self, source: str, domain: str, anchor: Review) -> Review:
        """The unused review nearest to the anchor in characters, then sentences, then file order."""
        index: PoolIndex = self.pools.index(source, domain)
        best: tuple[int, int, int] | None = None
        best_review: Review | None = None
        a = anchor.n_chars
        for n, (lengths, positions) in index.by_sentences.items():
            mid = bisect.bisect_left(lengths, a)
            # Walk outwards from the anchor's length; stop on each side at the first unused review.
            for step in (-1, 1):
                i = mid if step == 1 else mid - 1
                while 0 <= i < len(lengths):
                    r = index.reviews[positions[i]]
                    if r.key not in self.used:
                        cand = (abs(lengths[i] - a), abs(n - anchor.n_sentences), positions[i])
                        if best is None or cand < best:
                            best, best_review = cand, r
                        break
                    i += step
        if best_review is None:
            raise self._exhausted(source, domain)
        return self._take(best_review)

    def select(self, sources: Sequence[str], domain: str, rng: Mulberry32) -> tuple[list[Review], bool]:
        """One review per source (in ``sources`` order), length-matched to the most constrained source."""
        anchor_source = min(sources, key=lambda s: (self.available(s, domain), sources.index(s)))
        anchor = self.draw_any(anchor_source, domain, rng)
        picked = {anchor_source: anchor}
        matched = True
        for s in sources:
            if s == anchor_source:
                continue
            r = self.draw_matched(s, domain, anchor, rng)
            if r is None:
                r = self.closest(s, domain, anchor)
                matched = False
            picked[s] = r
        return [picked[s] for s in sources], matched


_Selection = list[tuple[list[Review], bool, list[str] | None]]


def _select_task(task: TripletTask | PairwiseTask, selector: _Selector, rng: Mulberry32,
                 study: Study, fix_texts: bool) -> _Selection:
    out: _Selection = []
    for sources, domain in task.slots():
        reviews, matched = selector.select(sources, domain, rng)
        texts = None
        if fix_texts:
            b = study.bias
            texts = normalise_lengths([r.text for r in reviews],
                                      truncation_factors(len(reviews), rng, b.truncate_low, b.truncate_high))
        out.append((reviews, matched, texts))
    return out


def plan(study: Study, pools: Mapping[tuple[str, str], list[Review]], seed: int,
         items: Mapping[Path, ItemSet] | None = None, arrival: int | None = None,
         participant: str | None = None) -> list[Question]:
    """The evaluator's questions, task by task (in config order), each task's in display order.

    A pure function of ``(study, pools, seed, items, arrival, participant)``. ``participant`` (an invited
    participant's id) picks their list in a task with ``assignment = "fixed"``; without it such a task has
    no questions. ``arrival`` (the number of sessions
    created before this one, :func:`evalkit.balance.arrival_of`) balances display orders and, for the items
    kinds, the combinations of systems across evaluators (:mod:`evalkit.balance`) for the kinds
    :meth:`Study.rotates`; None gives the plan an evaluator always had (sessions created before arrivals were
    stored). Pass the :class:`Pools` that
    :func:`evalkit.datasets.load_pools` returns: its length index is built once
    and reused, which makes a plan cost O(questions x log(pool size)).
    Rating blocks have no planned questions (the evaluator picks the items).
    Kinds whose questions come from items files (``compare``, ``score``, ``rank``,
    ``realfake``) plan their own, each from its own seeded stream
    (:mod:`evalkit.tasks.itemsource`), after the triplet and pairwise tasks: so they
    never change those tasks' questions. ``items`` maps each items file's resolved
    path to its :class:`~evalkit.items.ItemSet` (:attr:`LoadedStudy.item_sets`).
    """
    if not isinstance(pools, Pools):
        pools = Pools(pools)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError("seed must be an int")
    if arrival is not None and (isinstance(arrival, bool) or not isinstance(arrival, int) or arrival < 0):
        raise ValueError(f"arrival must be an integer >= 0 or None, got {arrival!r}")
    selector = _Selector(pools, study.bias)
    tasks = study.sampled_tasks
    selections: dict[str, _Selection] = {}
    shared_rng = Mulberry32(derive_seed("evalkit-shared", study.seed))
    for task in tasks:
        if task.selection == "shared":
            selections[task.id] = _select_task(task, selector, shared_rng, study, fix_texts=True)
    rng = Mulberry32(seed & 0xFFFFFFFF)
    for task in tasks:
        if task.selection != "shared":
            selections[task.id] = _select_task(task, selector, rng, study, fix_texts=False)

    per_task: dict[str, list[Question]] = {}
    for task in tasks:
        questions = per_task[task.id] = []
        selection = selections[task.id]
        slots = list(range(len(selection)))
        if task.order == "shuffled":
            slots = shuffle(slots, rng)
        rotate = arrival is not None and study.rotates(task.kind)
        if rotate:  # occurrences of each source combination before this evaluator (every plan has the same slots)
            combos = list(dict.fromkeys(sources for sources, _domain in task.slots()))
            per_evaluator = Counter(sources for sources, _domain in task.slots())
            seen = {c: arrival * per_evaluator[c] for c in combos}
        for index, slot in enumerate(slots):
            reviews, matched, texts = selection[slot]
            perm = shuffle(list(range(len(reviews))), rng)
            if rotate:
                combo = task.slots()[slot][0]
                perm = row_for(seen[combo], combos.index(combo), len(reviews))
                seen[combo] += 1
            if texts is None:
                b = study.bias
                texts = normalise_lengths([r.text for r in reviews],
                                          truncation_factors(len(reviews), rng, b.truncate_low, b.truncate_high))
            questions.append(Question(
                task=task.id, kind=task.kind, index=index, slot=slot, domain=reviews[0].domain,
                review_ids=tuple(reviews[p].key for p in perm),
                sources=tuple(reviews[p].source for p in perm),
                texts=tuple(texts[p] for p in perm),
                matched=matched,
            ))
    own = [t for t in study.tasks if KINDS[t.kind].source == "items"]
    if own:
        needed = {path for t in own for path in KINDS[t.kind].items_files(t)}
        missing = sorted(str(p) for p in needed if items is None or p not in items)
        if missing:
            raise PlanError(f"the items files {missing} are not loaded: pass LoadedStudy.item_sets to plan()")
        for task in own:
            inputs = PlanInputs(seed=seed, items=items or {}, draw=selector.draw_any,
                                arrival=arrival if study.rotates(task.kind) else None, participant=participant)
            per_task[task.id] = KINDS[task.kind].plan(task, inputs)
    add_checks(study, per_task, pools, items, seed)
    return [q for t in study.tasks for q in per_task.get(t.id, ())]


def item_order(task: RatingTask, items: Sequence[RatingItem], seed: int) -> list[RatingItem]:
    """The rating items in this evaluator's order (seeded), so the first items listed differ between evaluators."""
    return shuffle(list(items), Mulberry32(derive_seed("evalkit-items", task.id, seed)))


def questions_by_task(questions: Sequence[Question]) -> dict[str, list[Question]]:
    """Group a plan by task id, keeping the order."""
    out: dict[str, list[Question]] = {}
    for q in questions:
        out.setdefault(q.task, []).append(q)
    return out

