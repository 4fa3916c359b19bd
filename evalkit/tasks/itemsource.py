"""Where the questions of ``compare``, ``score``, ``rank`` and ``realfake`` tasks come from: an items file
(:mod:`evalkit.items`), one item (an input and several systems' outputs) per question.

How a question is *answered* is the kind's business (:mod:`evalkit.tasks.responses`); this module only
says which item and which systems, in which display order, an evaluator gets.

The plan of one task for one evaluator
--------------------------------------
* Its own random stream, ``Mulberry32(derive_seed("evalkit-plan", task id, evaluator seed))``: adding or
  changing an items task never changes another task's questions (nor the review pools' plan).
* Systems are *balanced within the evaluator's questions*: the combinations of ``n`` systems (pairs for
  ``compare``, single systems for ``score`` with one output per question, ...) are dealt in rounds, each
  round every combination once in a shuffled order, so over ``q`` questions each combination comes
  ``floor(q / c)`` or ``ceil(q / c)`` times.
* Positions: for pairs, the first time a pair comes its order is drawn, then it alternates, so each system
  of a pair is on the left as often as on the right (within one). For three or more outputs the display
  order is shuffled per question.
* With the evaluator's *arrival* (the number of sessions created before theirs; :mod:`evalkit.balance`) the
  plan is balanced *across* evaluators too: the ``q mod c`` combinations an evaluator gets once more than
  the others are the next ones of a cycle through all ``c`` (:func:`evalkit.balance.extras`), so over
  consecutive evaluators every combination (every pair of systems) comes equally often; and the display
  order is a row of a Williams design instead of a draw: occurrence ``m`` (counted over all evaluators in
  arrival order) of combination ``j`` of ``k`` systems gets ``row_for(m, j, k)``. For a pair that is an
  alternation across evaluators; for three or more outputs every system is in every position equally
  often, and (even ``k``) follows every other equally often.
* The item of each question is drawn uniformly among the items that have an output for every system of
  the combination, never one the evaluator already has in this task, never an attention-check item (one
  with ``check``). A draw is O(1) expected (rejection from a cached candidate list), so a plan does not
  grow with the items file.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from ..assignments import AssignmentError, lists_from_items, read_assignments
from ..assignments import describe as describe_lists
from ..balance import extras, extras_before, row_for
from ..items import Item, ItemSet
from ..question import Question
from ..rng import Mulberry32, derive_seed, shuffle
from .base import Common, ConfigError, PlanInputs, QueueSpec, Table, TaskKind

__all__ = ["ItemsSource", "OutputsKind", "PlanError", "QueueSpec", "balanced", "card_labels", "check_fixed",
           "check_source", "deal", "fixed_lists", "fixed_questions", "items_source", "missing_outputs", "outline",
           "plan_items", "queued_questions", "systems_of"]

#: The longest ``input_label`` / ``output_label``: a card's heading, one short line.
MAX_LABEL = 40

_REJECTION_TRIES = 16
T = TypeVar("T")


class PlanError(Exception):
    """The items cannot fill an evaluator's plan (fewer eligible items than questions)."""


@dataclass(frozen=True)
class ItemsSource:
    """The keys of an items-based task that say where its questions come from."""

    items: Path
    systems: tuple[str, ...]  # () = every system of the file
    questions: int  # (0 with fixed assignments: a participant's list sets it)
    queue: QueueSpec | None = None  # judgments_per_item: items from the shared queue, not the evaluator's seed
    #: ``assignment = "fixed"``: participant id -> item ids in order (None: the seeded, balanced plan)
    fixed: Mapping[str, tuple[str, ...]] | None = None
    #: where the fixed lists come from (the ``assignments`` CSV, or the items file), for messages
    fixed_file: Path | None = None
    #: with fixed lists: shuffle each question's outputs (seeded per participant), else the item's order
    shuffle: bool = True
    #: ``require_full_play``: an answer is refused until every audio clip and video of its question was played to
    #: the end (:mod:`evalkit.tasks.media_log`)
    require_full_play: bool = False

    def warnings(self, task_id: str, items: Mapping[Path, ItemSet], folder: Path) -> list[str]:
        """``evalkit check``'s warnings about this source's items file (:func:`missing_outputs`)."""
        return missing_outputs(task_id, self, items[self.items], folder)


def card_labels(t: Table, output: str = "Response") -> tuple[str, str]:
    """The optional ``input_label`` (default "Input") and ``output_label`` (default ``output``): what the cards of a
    question are headed, e.g. "News text" and "Headline" (cards "Headline A", "Headline B", ...); the page's
    widgets and messages name the outputs by it too. Each is one line of at most :data:`MAX_LABEL` characters."""
    labels = []
    for key, default in (("input_label", "Input"), ("output_label", output)):
        value = " ".join(t.str(key, default).split())  # one line: the config's text, spaces tidied
        if len(value) > MAX_LABEL:
            t.fail(key, f"must be at most {MAX_LABEL} characters (a card's heading), got {len(value)}")
        labels.append(value)
    return labels[0], labels[1]


def items_source(t: Table, common: Common, *, systems_key: bool = True, queue: bool = True,
                 fixed: bool = False) -> ItemsSource:
    """Read ``items``, ``systems`` and ``questions`` (the file must exist; its content is checked later), with
    ``queue`` the optional ``judgments_per_item`` / ``claim_minutes``, and with ``fixed`` the optional
    ``assignment`` (``"balanced"``, the default, or ``"fixed"``: each participant's own list, from the
    ``assignments`` CSV or the items' ``participants``; see :mod:`evalkit.assignments`) and ``shuffle``; and
    ``require_full_play`` (default false)."""
    full_play = t.get("require_full_play", False)
    if not isinstance(full_play, bool):
        t.fail("require_full_play", f"must be true or false, got {full_play!r}"[:200])
    return replace(_items_source(t, common, systems_key=systems_key, queue=queue, fixed=fixed),
                   require_full_play=full_play)


def _items_source(t: Table, common: Common, *, systems_key: bool, queue: bool, fixed: bool) -> ItemsSource:
    """:func:`items_source` but ``require_full_play``."""
    rel, path = common.path(t, "items")
    if not path.is_file():
        t.fail("items", f"items file {rel!r} not found (looked for {path})")
    systems: tuple[str, ...] = ()
    if systems_key and t.get("systems", None) is not None:
        systems = t.strs("systems")
        if len(set(systems)) != len(systems):
            t.fail("systems", f"names a system twice: {list(systems)}")
    if fixed and t.choice("assignment", ("balanced", "fixed"), "balanced") == "fixed":
        return _fixed_source(t, common, path, systems)
    for key in ("assignments", "shuffle"):
        if key in t.data:
            t.fail_later(key, "only applies to a task with assignment = \"fixed\"")
    questions = t.int("questions", minimum=1)
    spec = None
    if queue and t.get("judgments_per_item", None) is not None:
        spec = QueueSpec(k=t.int("judgments_per_item", minimum=1),
                         claim_minutes=t.float("claim_minutes", 30, low=1, high=7 * 24 * 60))
    elif "claim_minutes" in t.data:  # (reported after the unknown keys: judgments_per_item may be misspelt)
        t.fail_later("claim_minutes", "only applies to a task with judgments_per_item")
    return ItemsSource(items=path, systems=systems, questions=questions, queue=spec)


def _fixed_source(t: Table, common: Common, path: Path, systems: tuple[str, ...]) -> ItemsSource:
    """An items source with fixed lists: ``assignments`` (a CSV) read now; without it, the items' own
    ``participants`` are collected when the items file is checked (:meth:`OutputsKind.check`)."""
    for key, why in (("questions", "each participant's list sets how many questions they get"),
                     ("judgments_per_item", "the lists say who judges which item")):
        if key in t.data:
            t.fail(key, f"does not go with assignment = \"fixed\": {why}")
    lists: Mapping[str, tuple[str, ...]] | None = None
    file = path
    if t.get("assignments", None) is not None:
        _rel, file = common.path(t, "assignments")
        try:
            lists = read_assignments(file)
        except AssignmentError as exc:
            t.fail("assignments", str(exc))
    shuffle_ = t.get("shuffle", True)
    if not isinstance(shuffle_, bool):
        t.fail("shuffle", f"must be true or false, got {shuffle_!r}")
    return ItemsSource(items=path, systems=systems, questions=0, fixed=lists if lists is not None else {},
                       fixed_file=file, shuffle=shuffle_)


def check_fixed(file: Path, task_id: str, source: ItemsSource, items: ItemSet) -> Mapping[str, tuple[str, ...]]:
    """A fixed source's lists, checked against the items file (ConfigError naming what is wrong): each item
    exists and has an output of the task's systems (a check item must be named by the task's checks, see
    :func:`evalkit.checks.validate_checks`); without an ``assignments`` CSV, the
    lists are the items' ``participants``, and at least one item must have them."""
    where = f"{file.name}: [[tasks]] id {task_id!r}"
    items.check_systems(source.systems, f"{where}: key 'systems'", ConfigError)
    lists = source.fixed or {}
    if source.fixed_file == source.items:
        try:
            lists = lists_from_items(items.path, ((i.id, i.line, i.participants) for i in items if i.participants))
        except AssignmentError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if not lists:
            raise ConfigError(f"{where}: assignment = \"fixed\" needs each participant's list: an 'assignments' "
                              f"CSV (participant_id,item_id) or items with \"participants\" in {items.path.name}")
    wanted = set(source.systems)
    for pid, ids in lists.items():
        for item_id in ids:
            position = items.index.get(item_id)
            if position is None:
                raise ConfigError(f"{where}: {source.fixed_file.name if source.fixed_file else ''}: the list of "
                                  f"{pid!r} names item {item_id!r}, which {items.path.name} does not have")
            item = items[position]
            if wanted and not wanted & set(item.outputs):
                raise ConfigError(f"{where}: the list of {pid!r} names item {item_id!r}, which has no output of the "
                                  f"task's systems ({', '.join(source.systems)})")
    return lists


def fixed_questions(task_id: str, kind: str, source: ItemsSource, items: ItemSet, participant: str | None,
                    seed: int) -> list[Question]:
    """A participant's questions in a fixed task: one per item of their list, in order, each showing the item's
    outputs of the task's systems (shuffled with the participant's seed unless ``shuffle = false``). A
    participant without a list (or a session not started from a private link) gets none."""
    ids = fixed_lists(source, items).get(participant or "", ())
    rng = task_rng(task_id, seed)
    out: list[Question] = []
    for index, item_id in enumerate(ids):
        position = items.index[item_id]
        item = items[position]
        systems = [s for s in (source.systems or item.outputs) if s in item.outputs]
        if source.shuffle:
            systems = shuffle(systems, rng)
        out.append(Question(
            task=task_id, kind=kind, index=index, slot=position, domain="", review_ids=(item.id,) * len(systems),
            sources=tuple(systems), texts=tuple(item.outputs[s] for s in systems), matched=True,
            input=item.input or None, title=item.title, media=item.media_for(systems), input_media=item.input_media))
    return out


def fixed_lists(source: ItemsSource, items: ItemSet) -> Mapping[str, tuple[str, ...]]:
    """A fixed source's lists (participant id -> item ids in order): the ``assignments`` CSV's, or the items'
    own ``participants`` (collected once per item set: a plan is made per session); empty for other sources."""
    if source.fixed is None:
        return {}
    if source.fixed_file != source.items:
        return source.fixed
    cached = items.derived.get("fixed_lists")
    if cached is None:
        cached = items.derived["fixed_lists"] = lists_from_items(
            items.path, ((i.id, i.line, i.participants) for i in items if i.participants))
    return cached


def systems_of(source: ItemsSource, items: ItemSet) -> tuple[str, ...]:
    """The systems taking part: the configured ones, or every system with outputs outside attention checks."""
    return source.systems or items.regular_systems()


def check_source(file: Path, task_id: str, source: ItemsSource, items: ItemSet, per_question: int,
                 combos: Sequence[tuple[str, ...]]) -> None:
    """ConfigError unless the file has the systems and enough items that no evaluator's plan runs dry."""
    where = f"{file.name}: [[tasks]] id {task_id!r}"
    items.check_systems(source.systems, f"{where}: key 'systems'", ConfigError)
    systems = systems_of(source, items)
    if len(systems) < per_question:
        raise ConfigError(f"{where}: needs at least {per_question} systems with outputs, "
                          f"got {len(systems)} ({', '.join(systems) or 'none'}) in {items.path.name}")
    if source.queue is not None:  # the queue deals units (an item with a set of systems), not balanced combinations
        total = sum(len(items.candidates(c)) for c in combos)
        if total < source.questions:
            raise ConfigError(f"{where}: key 'questions' = {source.questions} but the shared queue has only {total} "
                              f"units (items with the outputs a question shows) in {items.path.name}; ask fewer "
                              "questions or add items")
        return
    need = math.ceil(source.questions / len(combos))
    for combo in combos:
        have = len(items.candidates(combo))
        if have < need:
            raise ConfigError(
                f"{where}: key 'questions' = {source.questions} needs up to {need} items with outputs of "
                f"{' and '.join(combo)}, but {items.path.name} has {have}; ask fewer questions or add items")
    union = set().union(*(items.candidates(c) for c in combos))
    if len(union) < source.questions:
        raise ConfigError(f"{where}: key 'questions' = {source.questions} but {items.path.name} has only "
                          f"{len(union)} items with the outputs this task shows; ask fewer questions or add items")


#: ``evalkit check`` shows at most this many missing outputs per task (then how many more)
MISSING_SHOWN = 10


def _file_name(items: ItemSet, folder: Path) -> Path:
    """The items file as a warning names it: relative to ``folder`` (the config's) when it is inside it."""
    return items.path.relative_to(folder) if items.path.is_relative_to(folder) else items.path


def _capped(found: Iterator[str], more: Callable[[int], str]) -> list[str]:
    """The first :data:`MISSING_SHOWN` warnings of ``found``, then ``more(n)`` for the n left (if any)."""
    out = list(itertools.islice(found, MISSING_SHOWN))
    left = sum(1 for _ in found)
    return [*out, more(left)] if left else out


def missing_outputs(task_id: str, source: ItemsSource, items: ItemSet, folder: Path) -> list[str]:
    """``evalkit check``'s warnings for the items (attention checks aside: they show fewer outputs) that lack an
    output of a system the task lists in ``systems``: such an item is never shown with that system, so the
    task has fewer units than the file suggests. The file is named relative to ``folder`` (the config's)."""
    if not source.systems:  # every system of the file: an item shows those it has
        return []
    by_system, n = items.by_system, len(items)
    if all(len(by_system.get(name, ())) == n for name in source.systems):
        return []
    name = _file_name(items, folder)
    found = (f"{name}, line {item.line} (item {item.id!r}): key 'outputs': no output for system {system!r} "
             f"(listed in task {task_id!r})"
             for item in items if item.check is None for system in source.systems if system not in item.outputs)
    return _capped(found, lambda more: f"{name}: {more} more missing output(s) of systems listed in task "
                                       f"{task_id!r} (only the first {MISSING_SHOWN} are shown)")


#: ``evalkit check`` warns about a text (an input, output or reference) longer than this many characters: a
#: question sends its texts to every evaluator's browser, and nobody reads 100,000 characters in one question
LONG_TEXT = 100_000


def long_texts(items: ItemSet, folder: Path, limit: int = LONG_TEXT) -> list[str]:
    """``evalkit check``'s warnings for the items whose input, an output or the reference is longer than
    ``limit`` characters (at most :data:`MISSING_SHOWN` lines, then a count). One pass over the texts' lengths."""
    name = _file_name(items, folder)

    def texts(item: Item) -> Iterator[tuple[str, str]]:
        yield "key 'input'", item.input
        yield "key 'reference'", item.reference or ""
        for system, text in item.outputs.items():
            yield f"key 'outputs': system {system!r}", text

    found = (f"{name}, line {item.line} (item {item.id!r}): {where}: {len(text):,} characters, more than "
             f"{limit:,}: a question this long is slow to load and hard to read"
             for item in items for where, text in texts(item) if len(text) > limit)
    return _capped(found, lambda more: f"{name}: {more} more text(s) longer than {limit:,} characters (only the "
                                       f"first {MISSING_SHOWN} are shown)")


def outline(source: ItemsSource, items: ItemSet, shown: str) -> str:
    """``evalkit check``'s line for an items task: questions, file, items, systems, what a question shows."""
    if source.fixed is not None:
        lists = fixed_lists(source, items)
        return (f"fixed lists ({describe_lists(lists)}), {shown}, from {items.path.name} ({len(items)} items; "
                f"systems {', '.join(systems_of(source, items))})")
    return (f"{source.questions} questions per evaluator, {shown}, from {items.path.name} ({len(items)} items; "
            f"systems {', '.join(systems_of(source, items))})")


def deal(choices: Sequence[T], n: int, rng: Mulberry32) -> list[T]:
    """``n`` of ``choices`` dealt in rounds: each round every choice once, shuffled (so each comes
    ``floor(n / c)`` or ``ceil(n / c)`` times)."""
    dealt: list[T] = []
    while len(dealt) < n:
        dealt.extend(shuffle(list(choices), rng))
    return dealt[:n]


def balanced(combos: Sequence[tuple[str, ...]], questions: int, rng: Mulberry32,
             arrival: int | None = None) -> list[tuple[str, ...]]:
    """``questions`` combinations dealt in rounds (:func:`deal`), then put in display order: a pair
    alternates its order after a random first, larger combinations are shuffled.

    With ``arrival`` (see :mod:`evalkit.balance`): full rounds (each shuffled), then the evaluator's extras
    (:func:`~evalkit.balance.extras`, shuffled), each in the display order of a Williams design row keyed by
    the combination's occurrence over all evaluators (:func:`~evalkit.balance.row_for`)."""
    if arrival is None:
        return _balanced_alone(combos, questions, rng)
    c = len(combos)
    full, rest = divmod(questions, c)
    dealt: list[int] = []
    for _ in range(full):
        dealt.extend(shuffle(list(range(c)), rng))
    dealt.extend(shuffle(extras(arrival, rest, c), rng))
    seen = [arrival * full + extras_before(arrival, rest, c, j) for j in range(c)]
    out: list[tuple[str, ...]] = []
    for j in dealt:
        combo = combos[j]
        out.append(tuple(combo[p] for p in row_for(seen[j], j, len(combo))))
        seen[j] += 1
    return out


def _balanced_alone(combos: Sequence[tuple[str, ...]], questions: int, rng: Mulberry32) -> list[tuple[str, ...]]:
    """Today's plan of an evaluator without an arrival (kept bit for bit)."""
    dealt = deal(combos, questions, rng)
    flipped: dict[tuple[str, ...], bool] = {}
    out: list[tuple[str, ...]] = []
    for combo in dealt:
        if len(combo) == 2:
            flip = flipped[combo] = (not flipped[combo]) if combo in flipped else rng.randbelow(2) == 1
            out.append((combo[1], combo[0]) if flip else combo)
        elif len(combo) > 2:
            out.append(tuple(shuffle(list(combo), rng)))
        else:
            out.append(combo)
    return out


def combinations(systems: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """Every set of ``n`` systems, in config order."""
    return list(itertools.combinations(systems, n))


def queued_questions(task_id: str, kind: str, questions: int) -> list[Question]:
    """A queued task's plan: ``questions`` placeholders (no item yet; :func:`evalkit.queue.is_queued`), each
    filled with the item claimed from the shared queue when the evaluator reaches it (:mod:`evalkit.queue`)."""
    return [Question(task=task_id, kind=kind, index=i, slot=-1, domain="", review_ids=(), sources=(), texts=(),
                     matched=True) for i in range(questions)]


def task_rng(task_id: str, seed: int) -> Mulberry32:
    """The random stream of one items task for one evaluator."""
    return Mulberry32(derive_seed("evalkit-plan", task_id, seed))


def plan_items(task_id: str, kind: str, items: ItemSet, shown: Sequence[tuple[str, ...]],
               rng: Mulberry32) -> list[Question]:
    """One question per entry of ``shown`` (systems in display order): a fresh item having all their outputs."""
    used: set[int] = set()
    out: list[Question] = []
    for index, systems in enumerate(shown):
        candidates = items.candidates(systems)
        position = -1
        for _ in range(_REJECTION_TRIES):  # O(1) expected: an evaluator's questions are few next to a file
            if not candidates:
                break
            p = candidates[rng.randbelow(len(candidates))]
            if p not in used:
                position = p
                break
        if position < 0:
            free = [p for p in candidates if p not in used]
            if not free:
                raise PlanError(f"task {task_id!r}: no unused item left with outputs of {', '.join(systems)} "
                                f"in {items.path.name} ({len(candidates)} in all)")
            position = free[rng.randbelow(len(free))]
        used.add(position)
        item = items[position]
        out.append(Question(
            task=task_id, kind=kind, index=index, slot=position, domain="", review_ids=(item.id,) * len(systems),
            sources=tuple(systems), texts=tuple(item.outputs[s] for s in systems), matched=True,
            input=item.input or None, title=item.title, media=item.media_for(systems), input_media=item.input_media))
    return out


class OutputsKind(TaskKind):
    """What the kinds that show ``outputs_per_question`` outputs of one item per question share (score, spans):
    the items file, its check, the shared queue, the system combinations and the balanced plan. Their task classes
    have ``source`` (:class:`ItemsSource`) and ``outputs_per_question``."""

    source = "items"

    @staticmethod
    def outputs_per_question(t: Table, source: ItemsSource) -> int:
        """The task's ``outputs_per_question`` (default 1), at most the number of its systems; with fixed
        assignments 0 (each question shows every output the item has of the task's systems)."""
        if source.fixed is not None:
            if "outputs_per_question" in t.data:
                t.fail("outputs_per_question", "does not go with assignment = \"fixed\": a question shows every "
                                               "output its item has (of the task's systems)")
            return 0
        per_question = t.int("outputs_per_question", 1, minimum=1)
        if source.systems and per_question > len(source.systems):
            t.fail("outputs_per_question", f"({per_question}) is more than the {len(source.systems)} systems")
        return per_question

    def items_files(self, task: Any) -> tuple[Path, ...]:
        return (task.source.items,)

    def check(self, task: Any, file: Path, items: Mapping[Path, ItemSet]) -> None:
        its = items[task.source.items]
        if task.source.fixed is not None:
            check_fixed(file, task.id, task.source, its)
            return
        n = task.outputs_per_question
        check_source(file, task.id, task.source, its, n, combinations(systems_of(task.source, its), n))

    def queue_spec(self, task: Any) -> QueueSpec | None:
        return task.source.queue

    def combos(self, task: Any, items: Mapping[Path, ItemSet]) -> list[tuple[str, ...]]:
        if task.source.fixed is not None:  # (no balancing over combinations: the lists are the design)
            return []
        return combinations(systems_of(task.source, items[task.source.items]), task.outputs_per_question)

    def plan(self, task: Any, inputs: PlanInputs) -> list[Question]:
        if task.source.queue is not None:  # the items come from the shared queue when the question is reached
            return queued_questions(task.id, self.name, task.source.questions)
        its = inputs.items[task.source.items]
        if task.source.fixed is not None:
            return fixed_questions(task.id, self.name, task.source, its, inputs.participant, inputs.seed)
        rng = task_rng(task.id, inputs.seed)
        combos = combinations(systems_of(task.source, its), task.outputs_per_question)
        return plan_items(task.id, self.name, its, balanced(combos, task.source.questions, rng, inputs.arrival), rng)
