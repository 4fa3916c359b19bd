"""k judgments per item: a queue of items shared by all evaluators (``judgments_per_item = k`` on a compare,
score or rank task), Pearmut's "single stream" with claims that expire.

How it works
------------
* The task's **units** are every item (of its items file, attention-check items left out) together with one
  set of systems a question shows (:meth:`TaskKind.combos`): with two systems a unit is an item; with three
  systems compared in pairs, an item has three units (A-B, A-C, B-C). They are registered in the store once per
  process (:func:`register`), in an order shuffled by the study seed, which breaks ties between equally judged
  units (so the items file's order does not decide who is judged first).
* An evaluator's plan has ``questions`` placeholders for the task (:func:`~evalkit.tasks.itemsource.queued_questions`).
  When the evaluator reaches one, :func:`resolve_step` claims a unit for it in one store transaction
  (:meth:`Store.claim`): the unit the **deal** gives that question (:func:`deal`) if it has fewer than ``k``
  claims and this evaluator never had it, else the least judged unit (answered plus live claims) that meets the
  same conditions; page reruns and reloads get the same unit back (the claim is keyed by the question).
* The deal makes "every unit gets exactly k judgments" hold whatever the order in which evaluators' claims
  interleave: the units, in the queue's order, are dealt round by round (k rounds), evaluator by evaluator in
  arrival order, ``questions`` at a time. Any ``units x k / questions`` consecutive arrivals that all finish
  take every unit exactly k times, and no evaluator gets a unit twice (with ``questions`` <= units). Greedy
  least-judged claiming alone does not: near the end, the last open slot can be on a unit the last evaluator
  already judged, and they end a question short. The deal is also least-judged first for evaluators who arrive
  and answer in order; the least-judged pick fills what the deal cannot (claims given back by evaluators who left
  or failed, arrivals lost to deleted sessions).
* A claim not answered within ``claim_minutes`` goes back to the queue; a session that completes gives its open
  claims back at once (:func:`evalkit.survey.finish_session`).
* When no unit is left for an evaluator, the task ends for them early (marked finished: the progress bar skips
  the missing steps). Its attention checks are not queue units: an evaluator who made judgments in the task
  still answers every check planned for them (:func:`evalkit.tasks.base.open_checks`); one who made none skips
  them too, and a session that ends without any judgment gets the "study is full" outcome, never the pass code
  (:func:`evalkit.checks.session_outcome`). When every queued task of the study has no open slot, new
  evaluators see "this study is full" on the consent page (:func:`is_full`) and no session is created.

The answer is stored like any other: item id (``review_ids``) and systems in display order; the analysis does not
know the items came from a queue.

Floor: app services (``.importlinter``). May import the survey flow, the study (config, sampling, checks), the task
kinds and the core; never the command line.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .balance import arrival_of, row_for
from .rng import Mulberry32, derive_seed, shuffle
from .survey import Step, session_step
from .tasks import kind_of

if TYPE_CHECKING:
    from .config import Study
    from .items import ItemSet
    from .question import Question
    from .store import Progress, QueueStatus, Session, Store
    from .tasks.base import QueueSpec

log = logging.getLogger("evalkit.queue")
#: how many units in a row may fail to match the items file before a claim gives up (see claim_question)
_RETIRE_TRIES = 50

__all__ = ["claim_question", "count_units", "deal", "dealt_questions", "fill", "is_full", "is_queued", "parse_unit",
           "queued_tasks", "register", "register_in_background", "registering", "resolve_step", "statuses",
           "summary", "unit_key", "units", "wait_registered"]


def unit_key(item_id: str, systems: Sequence[str]) -> str:
    """The store's key of one unit: a JSON list ``[item id, system, ...]`` (unambiguous whatever the names)."""
    return json.dumps([item_id, *systems], ensure_ascii=False, separators=(",", ":"))


#: the characters :func:`json.dumps` escapes in a string when ``ensure_ascii=False``
_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def _unit_keys(ids: Sequence[str], systems: Sequence[str]) -> list[str]:
    """:func:`unit_key` of each id with the same ``systems``: the JSON text written directly for ids that JSON
    writes as they are (no quote, backslash or control character), :func:`unit_key` for the others. Equal to
    :func:`unit_key` character for character (tested); about ten times faster over a large items file."""
    tail = unit_key("", systems)[3:]  # ',"gpt4","human"]'
    escaped = _ESCAPED.search
    return [unit_key(i, systems) if escaped(i) else f'["{i}"{tail}' for i in ids]


def parse_unit(unit: str) -> tuple[str, tuple[str, ...]]:
    """(item id, systems) of a unit key; ValueError when it is not one."""
    value = json.loads(unit)
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
        raise ValueError(f"not a queue unit: {unit!r}")
    return value[0], tuple(value[1:])


def queued_tasks(study: Study) -> list[tuple[Any, QueueSpec]]:
    """The study's tasks that take their items from the shared queue, with their settings."""
    out = []
    for task in study.tasks:
        spec = kind_of(task.kind).queue_spec(task)
        if spec is not None:
            out.append((task, spec))
    return out


def units(task: Any, items: Mapping[Path, ItemSet], study_seed: int) -> list[str]:
    """Every unit of a queued task, in the queue's order (shuffled by the study seed): the order of the deal and
    of ties between equally judged units. Cached per task, items file and seed (a list of 100,000 units is made
    once per process, for :func:`register` and the claims' deals); do not change the list returned."""
    kind = kind_of(task.kind)
    (path,) = kind.items_files(task)
    its = items[path]
    key = (id(task), id(its), study_seed)
    with _UNITS_LOCK:
        hit = _UNITS.get(key)
    if hit is not None and hit[0] is task and hit[1] is its:
        return hit[2]
    items_of = its.items
    keys = [key for combo in kind.combos(task, items)
            for key in _unit_keys([items_of[p].id for p in its.candidates(combo)], combo)]
    found = shuffle(keys, Mulberry32(derive_seed("evalkit-queue", task.id, study_seed)))
    with _UNITS_LOCK:  # (Streamlit's script threads share this cache)
        if len(_UNITS) >= 64:  # (a study reloaded many times in one process: forget the oldest)
            _UNITS.pop(next(iter(_UNITS)))
        _UNITS[key] = (task, its, found)  # (task and its kept alive: their ids cannot be reused meanwhile)
    return found


def count_units(task: Any, items: Mapping[Path, ItemSet]) -> int:
    """How many units a queued task has (``len(units(...))``, without making their keys or shuffling them)."""
    kind = kind_of(task.kind)
    (path,) = kind.items_files(task)
    return sum(len(items[path].candidates(combo)) for combo in kind.combos(task, items))


#: units() by (id(task), id(items file), study seed)
_UNITS: dict[tuple[int, int, int], tuple[Any, ItemSet, list[str]]] = {}
_UNITS_LOCK = threading.Lock()


def deal(queue: Sequence[str], arrival: int, ordinal: int, per_session: int) -> str:
    """The unit dealt to the ``ordinal``-th queued question (0-based) of the evaluator who arrived ``arrival``-th,
    when each evaluator has ``per_session`` queued questions of the task: slot ``arrival x per_session + ordinal``
    of the queue's units repeated round after round. Consecutive arrivals take consecutive slots, so
    ``len(queue) x k / per_session`` of them cover every unit exactly k times, and one evaluator's slots are
    distinct units when ``per_session <= len(queue)``."""
    if not queue:
        raise ValueError("the queue has no units")
    return queue[(arrival * per_session + ordinal) % len(queue)]


def register_in_background(store: Store, study: Study, items: Mapping[Path, ItemSet]) -> threading.Thread:
    """:func:`register` on a thread of its own, so that a freshly started server draws its first page at once (a
    million units take seconds to register). Until it is done, :func:`is_full` says "not full" and a claim waits
    for it (:func:`wait_registered`). A registration that fails is logged; claims then try it themselves."""
    done = threading.Event()
    _REGISTERING[store] = done
    _FAILED.discard(store)

    def run() -> None:
        try:
            register(store, study, items)
        except Exception:  # (every claim registers again and reports the problem to its page)
            log.exception("registering the queue units failed")
            _FAILED.add(store)
        finally:
            done.set()

    thread = threading.Thread(target=run, name="evalkit-register-queues", daemon=True)
    thread.start()
    return thread


def registering(store: Store) -> bool:
    """Whether :func:`register_in_background` is still at work for this store, or failed (then the queue's units
    may be missing, and a claim registers them itself: :func:`wait_registered`)."""
    done = _REGISTERING.get(store)
    return done is not None and (not done.is_set() or store in _FAILED)


def wait_registered(store: Store, study: Study, items: Mapping[Path, ItemSet], timeout: float = 600.0) -> None:
    """Before a claim: wait for this store's background registration (:func:`register_in_background`), if one
    was started; when it failed, register here, so that the problem reaches the page that claims."""
    done = _REGISTERING.get(store)
    if done is None:
        return  # (registered by whoever opened the store, or nothing to wait for)
    done.wait(timeout)
    if store in _FAILED:  # (raises again if the problem is still there: the claiming page shows it)
        register(store, study, items)
        _FAILED.discard(store)


#: the background registrations by store (weakly: a closed store's entry goes with it)
_REGISTERING: weakref.WeakKeyDictionary[Store, threading.Event] = weakref.WeakKeyDictionary()
#: the stores whose background registration failed (until a claim registers their units)
_FAILED: weakref.WeakSet[Store] = weakref.WeakSet()


def register(store: Store, study: Study, items: Mapping[Path, ItemSet]) -> dict[str, int]:
    """Register the units of every queued task (idempotent); returns how many were new, by task. Units whose item
    (or a system's output) left the items file since are retired, and retired ones that are back are taken back
    (:meth:`Store.add_queue_units` with ``retire_missing``): the deal no longer reaches units that are not in
    the file, so they would otherwise stay open slots for good."""
    return {task.id: store.add_queue_units(task.id, units(task, items, study.seed), retire_missing=True)
            for task, _ in queued_tasks(study)}


def statuses(store: Store, study: Study) -> list[tuple[Any, QueueSpec, QueueStatus]]:
    """Each queued task with its settings and the queue's state (units, judgments, live claims, open slots)."""
    return [(task, spec, store.queue_status(task.id, spec.k)) for task, spec in queued_tasks(study)]


def is_full(store: Store, study: Study) -> bool:
    """Whether the study has queued tasks and none of them has an open slot (nor a claim past its expiry, which
    the next claim gives back): a new evaluator would get no item. A few index lookups (the consent page asks)."""
    found = queued_tasks(study)
    if not found or registering(store):  # (units still being registered: not full)
        return False
    return not any(store.has_open_slot(task.id, spec.k, spec.claim_minutes * 60) for task, spec in found)


def is_queued(question: Question) -> bool:
    """Whether a planned question is a queue placeholder (its item is claimed when the evaluator reaches it)."""
    return question.slot < 0 and not question.texts


def fill(question: Question, unit: str, its: ItemSet, seed: int, arrival: int | None = None) -> Question:
    """The placeholder ``question`` with the claimed unit's item and outputs, the systems in display order.

    With the evaluator's ``arrival`` (:mod:`evalkit.balance`), the order is row ``arrival + question index`` of
    the Williams design for the unit's systems: consecutive evaluators, and one evaluator's consecutive
    questions, walk through the rows, so over the study each system sits in each position about equally often
    (a pair alternates sides). Without one (``[study] positions = "shuffle"``, or a session from before
    arrivals), a shuffle seeded by the evaluator's seed and the question. Either way a rerun or a reload shows
    the same order."""
    item_id, systems = parse_unit(unit)
    item = its.by_id(item_id)
    if arrival is not None:
        order = [systems[p] for p in row_for(arrival, question.index, len(systems))]
    else:
        order = shuffle(list(systems),
                        Mulberry32(derive_seed("evalkit-queue-order", question.task, seed, question.index)))
    return replace(question, slot=its.index[item_id], review_ids=(item.id,) * len(order), sources=tuple(order),
                   texts=tuple(item.outputs[s] for s in order), input=item.input or None, title=item.title,
                   media=item.media_for(order), input_media=item.input_media)


def dealt_questions(study: Study, questions: Sequence[Question], task_id: str) -> list[int]:
    """The plan indexes of ``task_id``'s queued questions that an evaluator reaches: every one, or with a
    ``[study.session] questions`` limit those before the limit, counting judgments (tutorial questions do not
    count, as in :func:`evalkit.survey.judged`) over the plan in the study's task order. The deal gives each
    evaluator this many slots, so that evaluators who stop at the limit leave no slot behind. (Exact when the
    tasks before this one have a fixed number of questions; a ``max_minutes`` limit cannot be foreseen.)"""
    limit = study.session.questions
    order = {t.id: n for n, t in enumerate(study.tasks)}
    made, mine = 0, []
    for q in sorted(questions, key=lambda q: (order.get(q.task, len(order)), q.index)):
        if limit is not None and made >= limit:
            break
        if q.task == task_id and is_queued(q):
            mine.append(q.index)
        if q.check is None or q.check.type != "tutorial":
            made += 1
    return mine


def claim_question(store: Store, study: Study, items: Mapping[Path, ItemSet], session: Session,
                   question: Question, progress: Progress | None = None,
                   questions: Sequence[Question] | None = None) -> Question | None:
    """A queued placeholder filled with the unit the session holds for it (``progress.claims``), or else with
    one claimed now (:meth:`Store.claim`); None when the queue has nothing left for this evaluator. With the
    session's plan (``questions``) and arrival, the claim prefers the unit :func:`deal` gives this question.

    A unit that no longer matches the items file (its item was removed, or a system's output; the study's data
    changed under it) is retired from the queue (:meth:`Store.retire_queue_unit`, logged) and another one is
    claimed, so an evaluator is never stuck on a question that cannot be shown."""
    task = study.task(question.task)
    kind = kind_of(task.kind)
    spec = kind.queue_spec(task)
    assert spec is not None, f"task {task.id!r} has no queue"
    (path,) = kind.items_files(task)
    arrived = arrival_of(session.meta)
    arrival = arrived if study.rotates(task.kind) else None
    unit = progress.claims.get(task.id, {}).get(question.index) if progress is not None else None
    prefer = None
    if unit is None and arrived is not None and questions is not None:
        mine = dealt_questions(study, questions, task.id)
        queue = units(task, items, study.seed)
        if question.index in mine and queue:
            prefer = deal(queue, arrived, mine.index(question.index), len(mine))
    if unit is None:
        wait_registered(store, study, items)
    for _ in range(_RETIRE_TRIES):
        if unit is None:
            unit = store.claim(task.id, session.session_id, question.index, k=spec.k,
                               expire_seconds=spec.claim_minutes * 60, prefer=prefer)
            prefer = None  # (a retired unit's replacement is the least judged one)
        if unit is None:
            return None
        try:
            return fill(question, unit, items[path], session.seed, arrival)
        except (KeyError, ValueError) as exc:  # the unit's item or an output is gone from the items file
            log.warning("task %r: queue unit %s no longer matches %s (%s): retired", task.id, unit, path.name, exc)
            store.retire_queue_unit(task.id, unit)
            unit = None
    raise RuntimeError(f"task {task.id!r}: {_RETIRE_TRIES} queue units in a row do not match {path.name}; "
                       "run `python -m evalkit check` on the study")


def resolve_step(store: Store, study: Study, items: Mapping[Path, ItemSet], session: Session,
                 questions: Sequence[Question], progress: Progress,
                 hold: Callable[[Step], bool] | None = None) -> Step:
    """Where the session stands (:func:`evalkit.survey.session_step`: its ``[study.session]`` limits applied),
    with a queued question's item claimed from the store and filled in. A queued task with nothing left for this
    evaluator is marked finished and the next step is taken instead (the task's open attention checks, when the
    evaluator made judgments in it, else the next task's first step). ``hold(step)`` true (a break screen is
    due): the step is returned unclaimed, so no claim's time runs out while the evaluator rests."""
    for _ in range(len(study.tasks) + 1):
        step = session_step(study, session, questions, progress)
        if step.question is None or step.task is None or not is_queued(step.question):
            return step
        if hold is not None and hold(step):
            return step
        filled = claim_question(store, study, items, session, step.question, progress, questions)
        if filled is not None:
            return replace(step, question=filled)
        store.finish_task(session.session_id, step.task.id)  # the queue has nothing left for this evaluator
        progress = store.progress(session.session_id)
    raise RuntimeError("the queued tasks did not settle")  # cannot happen: each pass finishes one task


def summary(task: Any, spec: QueueSpec, status: QueueStatus) -> str:
    """One line for the results page: how far a queued task is from k judgments of every unit."""
    wanted = status.units * spec.k
    spread = ", ".join(f"{status.judgments.get(n, 0):,} with {n}" for n in range(spec.k + 1))
    more = sum(count for n, count in status.judgments.items() if n > spec.k)
    if more:  # (an answer after its claim expired, or an evaluator taken back in)
        spread += f", {more:,} with more than {spec.k}"
    state = "**full**: every unit has its judgments or a live claim" if status.full else \
        f"{status.open_slots:,} open slot(s)"
    return (f"**{task.title}** ({task.id}): {status.judged:,} of {wanted:,} judgments given "
            f"({status.units:,} units x k = {spec.k}), {status.live:,} claimed now, {state}. Units by judgments: "
            f"{spread}.")
