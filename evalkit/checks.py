"""Tutorials and attention checks, decided on the server; pass / fail of a session and its completion code.

A task of any kind that shows items (compare, score, rank, realfake over an items file) or reviews from the
pools (triplet, pairwise, realfake over the pools) may name check questions:

* ``tutorial = ["gold1", ...]``: shown first, in this order; a wrong answer shows the check's feedback and
  must be corrected before going on (``tutorial_skippable = true`` offers a skip button instead).
* ``attention_checks = ["gold3", ...]``: mixed into the questions at seeded positions (per evaluator,
  reproducible), looking like any other question. Silent (``attention_feedback = false``: recorded only) or
  with feedback (``true``: a wrong first answer shows the feedback and the evaluator answers once more).
  Whether the **first** answer was right decides pass or fail.

Items kinds name items of their items file that carry a ``check`` object (``{"expect": ..., "feedback":
...}``). Pool kinds name entries of a small JSONL checks file (``checks = "datasets/checks.jsonl"`` on the
task): ``{"id": "pc1", "reviews": ["real/laptop/12", ...], "expect": "real", "feedback": "..."}``. A score or
spans check may expect something per system, in Pearmut's ``validation`` shape (a score range, spans, and
``score_greaterthan``: an order between two outputs); :func:`check_problems` decides it, line by output.

The expected answer lives in the plan (:class:`CheckSpec` on the :class:`~evalkit.question.Question`), never
in a page. :func:`record_check` stores every try (``check_tries``) and writes the evaluations row with the
check type and whether the first try was right. :func:`session_outcome` decides pass / fail from the stored
rows and ``[study.quality] max_failed_checks``; :func:`completion_code` picks the study-level code.

Floor: the study (``.importlinter``). May import the task kinds' framework (:mod:`evalkit.tasks`),
:mod:`evalkit.question` and the core; never the config (it reads the study through the :class:`Study` protocol).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .question import CheckSpec, Question
from .rng import Mulberry32, derive_seed, shuffle
from .spans import SpanError, expected_spans, from_pearmut_index
from .tasks.base import Common, ConfigError, Table, type_name
from .tasks.check_answers import (
    CheckFeedback,
    check_problems,
    correct,
    pending_feedback,
    record_check,
    skip_tutorial,
)
from .tasks.itemsource import fixed_lists, systems_of

if TYPE_CHECKING:
    from .datasets import Review
    from .items import Item, ItemSet
    from .store import Answer, Participant, Progress, Session

__all__ = ["CHECK_TYPES", "OUTCOMES", "CheckFeedback", "CheckSpec", "Outcome", "PoolCheck", "TaskChecks", "add_checks",
           "check_problems", "completion_code", "correct", "outcome_of", "parse_max_failed_checks",
           "parse_task_checks", "passes", "pending_feedback",
           "record_check", "session_outcome", "skip_tutorial", "validate_checks"]

class Study(Protocol):
    """What the checks read of a study (:class:`evalkit.config.Study` has it all): its tasks and their check
    keys, its file (for messages) and its completion codes. A protocol, because the config is a floor above the
    checks: it parses each task's check keys with :func:`parse_task_checks`."""

    path: Path
    tasks: Sequence[Any]
    completion_code_pass: str
    completion_code_fail: str
    completion_code_full: str

    def task_checks(self, task_id: str) -> TaskChecks | None:
        """The parsed check keys of one task (None: it has none)."""


CHECK_TYPES = ("tutorial", "attention")
#: The kinds that take checks, and what their questions show: items of an items file, or reviews of the pools.
CHECK_KINDS = ("compare", "score", "spans", "rank", "realfake", "triplet", "pairwise")
DEFAULT_FEEDBACK = "That is not the answer we expected. Please read the texts again."
_REAL_FAKE = ("real", "generated")


@dataclass(frozen=True)
class PoolCheck:
    """One line of a pool kind's checks file: the reviews shown (``source/domain/id``) and the expectation."""

    id: str
    reviews: tuple[str, ...]
    expect: str
    feedback: str
    line: int


@dataclass(frozen=True)
class TaskChecks:
    """A task's check keys (config), and for pool kinds its parsed checks file."""

    tutorial: tuple[str, ...] = ()
    tutorial_skippable: bool = False
    attention_checks: tuple[str, ...] = ()
    attention_feedback: bool = False
    file: Path | None = None
    entries: tuple[PoolCheck, ...] = ()


# ----------------------------------------------------------------------------- config


def _flag(t: Table, key: str) -> bool:
    value = t.get(key, False)
    if not isinstance(value, bool):
        t.fail(key, f"must be true or false, got {value!r}")
    return value


def parse_task_checks(t: Table, common: Common, kind: str, pools: bool) -> TaskChecks | None:
    """The check keys of one ``[[tasks]]`` table (None when it has none); ConfigError naming the key.

    ``pools``: the task shows reviews of the pools (its checks come from a ``checks`` file)."""
    present = [k for k in ("tutorial", "tutorial_skippable", "attention_checks", "attention_feedback", "checks")
               if k in t.data]
    if not present:
        return None
    if kind not in CHECK_KINDS:
        t.fail(present[0], f"{kind} tasks have no tutorials or attention checks (only {', '.join(CHECK_KINDS)})")
    tutorial = t.strs("tutorial", [], nonempty=False)
    attention = t.strs("attention_checks", [], nonempty=False)
    for key, ids in (("tutorial", tutorial), ("attention_checks", attention)):
        if len(set(ids)) != len(ids):
            t.fail(key, f"names a check twice: {list(ids)}")
    both = sorted(set(tutorial) & set(attention))
    if both:
        t.fail("attention_checks", f"{both[0]!r} is also a tutorial question")
    file, entries = None, ()
    if pools:
        if not (tutorial or attention) and "checks" not in t.data:
            return TaskChecks(tutorial_skippable=_flag(t, "tutorial_skippable"),
                              attention_feedback=_flag(t, "attention_feedback"))
        rel = t.str("checks")
        file = (common.base / rel).resolve()
        if not file.is_file():
            t.fail("checks", f"checks file {rel!r} not found (looked for {file})")
        entries = _read_pool_checks(file)
    elif "checks" in t.data:
        t.fail("checks", "is for tasks over the review pools; this task's checks are items of its items file "
                         "(with a 'check' object)")
    known = {e.id for e in entries}
    for key, ids in (("tutorial", tutorial), ("attention_checks", attention)):
        for i in ids if pools else ():
            if i not in known:
                t.fail(key, f"{i!r} is not an id of the checks file {file.name if file else ''}")
    return TaskChecks(tutorial=tutorial, tutorial_skippable=_flag(t, "tutorial_skippable"),
                      attention_checks=attention, attention_feedback=_flag(t, "attention_feedback"),
                      file=file, entries=entries)


def _read_pool_checks(path: Path) -> tuple[PoolCheck, ...]:
    """A pool kind's checks file: JSONL of ``{"id", "reviews", "expect", "feedback"?}``; ConfigError naming the
    file and line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path.name}: cannot read the checks file: {exc}") from None
    out: list[PoolCheck] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path.name}: line {n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise ConfigError(f"{where}: must be a JSON object")
        extra = sorted(set(obj) - {"id", "reviews", "expect", "feedback"})
        if extra:
            raise ConfigError(f"{where}: key {extra[0]!r} is not known (id, reviews, expect, feedback)")
        cid, reviews, expect = obj.get("id"), obj.get("reviews"), obj.get("expect")
        if not isinstance(cid, str) or not cid.strip():
            raise ConfigError(f"{where}: key 'id' must be a non-empty string")
        if cid in seen:
            raise ConfigError(f"{where}: id {cid!r} is also on line {seen[cid]}")
        seen[cid] = n
        if not isinstance(reviews, list) or not reviews or not all(
                isinstance(r, str) and r.count("/") >= 2 for r in reviews):
            raise ConfigError(f"{where}: key 'reviews' must be a list of review keys 'source/domain/id'")
        if not isinstance(expect, str) or not expect.strip():
            raise ConfigError(f"{where}: key 'expect' must be a non-empty string (a source, or real / generated)")
        feedback = obj.get("feedback", DEFAULT_FEEDBACK)
        if not isinstance(feedback, str) or not feedback.strip():
            raise ConfigError(f"{where}: key 'feedback' must be a non-empty string")
        out.append(PoolCheck(cid, tuple(reviews), expect, feedback, n))
    if not out:
        raise ConfigError(f"{path.name}: the checks file has no entries")
    return tuple(out)


# ----------------------------------------------------------------------------- what a check question shows


def _items_of(task: Any, items: Mapping[Path, ItemSet]) -> ItemSet:
    return items[task.source.items]


def _item_spec(task: Any, item: Item, items: ItemSet, where: str, *, tutorial: bool = False,
               ) -> tuple[tuple[str, ...], str, str]:
    """(systems shown, rule, want) of an items check; ConfigError when ``expect`` does not fit the kind.

    A score or spans check shows the item's outputs: as many as the task's questions (an attention check looks
    like the others), or any number for a tutorial question and in a task with fixed lists (as Pearmut shows an
    item's every model)."""

    check = item.check
    if not isinstance(check, Mapping) or "expect" not in check:
        raise ConfigError(f"{where}: item {item.id!r} (line {item.line}) has no 'check' object with an 'expect'")
    extra = sorted(set(check) - {"expect", "feedback"})
    if extra:
        raise ConfigError(f"{where}: item {item.id!r}: check key {extra[0]!r} is not known (expect, feedback)")
    fb = check.get("feedback", DEFAULT_FEEDBACK)
    if not isinstance(fb, str) or not fb.strip():
        raise ConfigError(f"{where}: item {item.id!r}: check key 'feedback' must be a non-empty string")
    expect = check["expect"]
    outputs = tuple(item.outputs)
    kind = task.kind
    if kind in ("compare", "rank"):
        n = 2 if kind == "compare" else task.shown(systems_of(task.source, items))
        if len(outputs) != n:
            raise ConfigError(f"{where}: check item {item.id!r} has {len(outputs)} outputs; a {kind} question of "
                              f"this task shows {n}, so the check must have {n} (to look like the others)")
        if not isinstance(expect, str) or expect not in outputs:
            raise ConfigError(f"{where}: check item {item.id!r}: 'expect' must name one of its systems "
                              f"({', '.join(outputs)}), got {expect!r}")
        return outputs, "source", expect
    any_count = tutorial or not getattr(task, "outputs_per_question", 1)  # (0: fixed lists; score and spans only)
    if kind == "spans":
        return outputs, "spans", json.dumps(_system_expectations(task, item, expect, where, spans=True,
                                                                 any_count=any_count), sort_keys=True)
    if kind == "score":
        n = task.outputs_per_question
        if len(outputs) != n and not any_count:
            raise ConfigError(f"{where}: check item {item.id!r} has {len(outputs)} outputs; a question of this "
                              f"task shows {n}")
        scales = {s.id: s for s in task.scales}
        if not isinstance(expect, dict) or not expect:
            raise ConfigError(f"{where}: check item {item.id!r}: 'expect' must be per-scale ranges, e.g. "
                              f'{{"{next(iter(scales))}": [0, 30]}}, or per system, e.g. {{"{outputs[0]}": '
                              f'{{"score": [0, 30]}}}}, got {expect!r}'[:400])
        if _per_system(expect, scales, outputs, f"{where}: check item {item.id!r}"):
            return outputs, "systems", json.dumps(_system_expectations(task, item, expect, where, spans=False,
                                                                       any_count=any_count), sort_keys=True)
        for scale_id, rng in expect.items():
            s = scales[scale_id]
            if not _within(rng, s):
                raise ConfigError(f"{where}: check item {item.id!r}: the range of scale {scale_id!r} must be "
                                  f"[low, high] within {s.low}..{s.high}, got {rng!r}")
        return outputs, "ranges", json.dumps(expect, sort_keys=True)
    # realfake over an items file
    if expect in _REAL_FAKE:
        if len(outputs) != 1:
            raise ConfigError(f"{where}: check item {item.id!r}: with 'expect' = {expect!r} the item must have "
                              f"exactly one output (the text shown), it has {len(outputs)}")
        return outputs, "response", expect
    if isinstance(expect, str) and expect in outputs:
        return (expect,), "response", "real" if expect == task.target else "generated"
    raise ConfigError(f"{where}: check item {item.id!r}: 'expect' must be 'real', 'generated' or one of its "
                      f"systems ({', '.join(outputs)}), got {expect!r}")


def _within(value: Any, scale: Any) -> bool:
    """Whether ``value`` is a score range ``[low, high]`` of finite numbers within the scale's ends."""
    return (isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in value)
        and scale.low <= value[0] <= value[1] <= scale.high)


def _per_system(expect: Mapping[str, Any], scales: Mapping[str, Any], systems: Sequence[str], where: str) -> bool:
    """Which shape a score check's ``expect`` has, told apart by its keys: every key a scale of the task (False:
    ``{scale: [low, high]}``, for every output) or every key a system of the item (True: Pearmut's per-system
    ``{system: {"score": ..., "score_greaterthan": ...}}``); ConfigError naming a key that is both, or neither,
    or keys of both shapes mixed."""
    for key, value in expect.items():
        if key in scales and key in systems:
            raise ConfigError(f"{where}: 'expect' key {key!r} is both a scale of the task and a system of the item, "
                              "so the shape of 'expect' (per scale or per system) cannot be told: rename one")
        if key not in scales and key not in systems:
            if isinstance(value, dict):
                raise ConfigError(f"{where}: 'expect' names system {key!r}, which the item has no output of "
                                  f"({', '.join(systems)}) (nor is it a scale of the task)")
            raise ConfigError(f"{where}: 'expect' names scale {key!r}, which the task does not have "
                              f"({', '.join(scales)}) (nor is it a system of the item: {', '.join(systems)})")
    per_system = [key for key in expect if key in systems]
    if per_system and len(per_system) != len(expect):
        per_scale = next(key for key in expect if key not in systems)
        raise ConfigError(f"{where}: 'expect' mixes a scale ({per_scale!r}) and a system ({per_system[0]!r}): give "
                          "either ranges per scale (for every output) or expectations per system")
    return bool(per_system)


def _system_expectations(task: Any, item: Item, expect: Any, where: str, *, spans: bool,
                         any_count: bool = False) -> dict[str, Any]:
    """A per-system check's ``expect`` as Pearmut's ``validation`` writes it, ``{system: {"score": [lo, hi] (the
    first scale) or {scale: [lo, hi]}, "score_greaterthan": other system, and for the spans kind (``spans``)
    "error_spans": [{"start_i": n or [lo, hi], "end_i": ..., "severity": ...}], "extra_spans": bool}}``, checked
    against the task and the item, with span offsets turned from Pearmut's character indexes into code points of
    the output; ConfigError naming what does not fit.

    ``score_greaterthan`` follows Pearmut (``validateResponse`` in ``web/src/utils.ts``): it compares the main
    score (Pearmut's ``score``; here the task's first scale, as a list ``score`` range is), strictly (equal
    scores fail), and a missing score on either side fails. It is kept as ``{"than": system, "scale": id,
    "scale_label": label (several scales) or "", "noun": the outputs' label}``, for the feedback's words."""
    where = f"{where}: check item {item.id!r}"
    if item.segments:
        raise ConfigError(f"{where}: a check item is one segment (this one is a document)")
    n = task.outputs_per_question
    if len(item.outputs) != n and not any_count:
        raise ConfigError(f"{where} has {len(item.outputs)} outputs; a question of this task shows {n}")
    if not isinstance(expect, dict) or not expect:
        raise ConfigError(f"{where}: 'expect' must be per system, e.g. {{\"{next(iter(item.outputs))}\": "
                          '{"score": [70, 90], "error_spans": [{"start_i": [7, 9], "end_i": [12, 14], '
                          f'"severity": "minor"}}]}}}}, got {expect!r}'[:400])
    scales = {s.id: s for s in task.scales}
    known = ("score", "score_greaterthan", "feedback", *(("error_spans", "extra_spans") if spans else ()))
    out: dict[str, Any] = {}
    for system, rule in expect.items():
        if system not in item.outputs:
            raise ConfigError(f"{where}: 'expect' names system {system!r}, which the item has no output of "
                              f"({', '.join(item.outputs)})")
        extra = sorted(set(rule) - set(known)) if isinstance(rule, dict) else ["(not an object)"]
        if extra:
            raise ConfigError(f"{where}: 'expect' of {system!r}: {extra[0]!r} is not known ({', '.join(known)})")
        allow_extra = rule.get("extra_spans", True)
        if not isinstance(allow_extra, bool):
            raise ConfigError(f"{where}: 'expect' of {system!r}: \"extra_spans\" must be true or false")
        score, than = rule.get("score"), rule.get("score_greaterthan")
        if score is None and than is None and not rule.get("error_spans") and allow_extra:
            raise ConfigError(f"{where}: 'expect' of {system!r} expects nothing: give a \"score\" range" + (
                ", a \"score_greaterthan\" or the \"error_spans\" to be marked (an empty list asks for nothing, as "
                "in Pearmut; with \"extra_spans\": false, for no span at all)" if spans else
                " or a \"score_greaterthan\""))
        if score is not None and not isinstance(score, list | dict):
            raise ConfigError(f"{where}: 'expect' of {system!r}: \"score\" must be [low, high] or "
                              f"{{scale: [low, high]}}, got {score!r}"[:300])
        if (score is not None or than is not None) and not scales:
            raise ConfigError(f"{where}: 'expect' of {system!r} gives a score"
                              f"{'' if than is None else ' order (score_greaterthan)'}; this task has no scales")
        if isinstance(score, list):
            score = {next(iter(scales)): score}
        ranges: dict[str, list[float]] = {}
        for scale_id, bounds in (score or {}).items():
            s = scales.get(scale_id)
            if s is None or not _within(bounds, s):
                raise ConfigError(f"{where}: 'expect' of {system!r}: a score range is [low, high] within a scale "
                                  f"of the task ({', '.join(f'{x.id} {x.low}..{x.high}' for x in scales.values())})"
                                  f", got {scale_id}: {bounds!r}")
            ranges[scale_id] = list(bounds)
        entry: dict[str, Any] = {"score": ranges, "error_spans": _expected_spans(task, item, system, rule, where),
                                 "extra_spans": allow_extra}
        feedback = rule.get("feedback")
        if feedback is not None:  # shown next to this output when it misses (Pearmut's per-model "warning")
            if not isinstance(feedback, str) or not feedback.strip():
                raise ConfigError(f"{where}: 'expect' of {system!r}: \"feedback\" must be a non-empty text")
            entry["feedback"] = feedback
        if than is not None:
            others = [s for s in item.outputs if s != system]
            if than == system:
                raise ConfigError(f"{where}: 'expect' of {system!r}: \"score_greaterthan\" compares {system!r} with "
                                  f"itself (name another system of the item: {', '.join(others) or 'it has none'})")
            if not isinstance(than, str) or than not in item.outputs:
                raise ConfigError(f"{where}: 'expect' of {system!r}: \"score_greaterthan\" must name another system "
                                  f"of the item ({', '.join(others) or 'it has none'}), got {than!r}"[:300])
            first = task.scales[0]
            entry["greater_than"] = {"than": than, "scale": first.id, "noun": task.output_label,
                                     "scale_label": first.label if len(task.scales) > 1 else ""}
        out[system] = entry
    _no_order_cycle(out, where)
    return out


def _no_order_cycle(want: Mapping[str, Any], where: str) -> None:
    """ConfigError when the ``score_greaterthan`` of a check go round in a circle (A > B > A: never met)."""
    for start in want:
        seen, at = [start], want[start]
        while "greater_than" in at:
            nxt = at["greater_than"]["than"]
            if nxt == start:
                raise ConfigError(f"{where}: 'expect': \"score_greaterthan\" goes round in a circle "
                                  f"({' > '.join([*seen, nxt])}), so no answer can meet it")
            if nxt in seen or nxt not in want:
                break
            seen.append(nxt)
            at = want[nxt]


def _expected_spans(task: Any, item: Item, system: str, rule: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The ``error_spans`` of one system's expectation (spans kind), checked against the task, with Pearmut's
    character indexes turned into code points of the output; ConfigError naming what does not fit."""
    text = item.outputs[system]
    spans = []
    try:
        for exp in expected_spans(rule.get("error_spans", [])):
            if exp.severity is not None and exp.severity not in task.severities:
                raise SpanError(f"severity {exp.severity!r} is not one of {', '.join(task.severities)}")
            if exp.category is not None:  # a category of the taxonomy, or one of its top-level ones
                top, _, sub = exp.category.partition("/")
                if task.categories is None:
                    raise SpanError(f"category {exp.category!r}: this task has no categories")
                if isinstance(task.categories, Mapping) and (
                        top not in task.categories or (sub and sub not in task.categories[top])):
                    raise SpanError(f"category {exp.category!r} is not in the task's taxonomy")
            start, end = ([from_pearmut_index(text, v) for v in bounds] if bounds is not None else None
                          for bounds in (exp.start, exp.end))
            spans.append({"start_i": start, "end_i": end, "severity": exp.severity, "category": exp.category})
    except SpanError as exc:
        raise ConfigError(f"{where}: 'expect' of {system!r}: error_spans: {exc}") from None
    return spans


def _pool_spec(task: Any, entry: PoolCheck, reviews: Sequence[Review], where: str) -> tuple[str, str]:
    """(rule, want) of a pool check; ConfigError when it does not fit the task."""
    sources = [r.source for r in reviews]
    n = {"triplet": len(getattr(task, "sources", ())), "pairwise": 2, "realfake": 1}[task.kind]
    if len(reviews) != n:
        raise ConfigError(f"{where}: check {entry.id!r} (line {entry.line}) shows {len(reviews)} reviews; a "
                          f"question of this task shows {n}")
    if task.kind == "realfake":
        if entry.expect in _REAL_FAKE:
            return "response", entry.expect
        if entry.expect == sources[0]:
            return "response", "real" if entry.expect == task.target else "generated"
        raise ConfigError(f"{where}: check {entry.id!r}: 'expect' must be 'real', 'generated' or the review's "
                          f"source {sources[0]!r}, got {entry.expect!r}")
    if entry.expect not in sources:
        raise ConfigError(f"{where}: check {entry.id!r}: 'expect' must be the source of one of its reviews "
                          f"({', '.join(sources)}), got {entry.expect!r}")
    if len(set(sources)) != len(sources):
        raise ConfigError(f"{where}: check {entry.id!r}: its reviews must come from different sources")
    return "source", entry.expect


def _find_review(pools: Mapping[tuple[str, str], Sequence[Review]], key: str) -> Review | None:
    source, domain, rid = key.split("/", 2)
    for r in pools.get((source, domain), ()):
        if r.id == rid:
            return r
    return None


def validate_checks(study: Study, pools: Mapping[tuple[str, str], Sequence[Review]],
                    items: Mapping[Path, ItemSet]) -> None:
    """ConfigError unless every tutorial and attention-check id exists, carries a check, and its ``expect`` fits
    the task's kind (called when the study opens, with the loaded items and pools)."""
    for task in study.tasks:
        tc = study.task_checks(task.id)
        if _fixed(task):
            _check_lists(study, task, tc, items)
        if tc is None or not (tc.tutorial or tc.attention_checks):
            continue
        where = f"{study.path.name}: [[tasks]] id {task.id!r}"
        if tc.file is not None:
            by_id = {e.id: e for e in tc.entries}
            for key, ids in (("tutorial", tc.tutorial), ("attention_checks", tc.attention_checks)):
                for cid in ids:
                    entry = by_id[cid]
                    found = [_find_review(pools, k) for k in entry.reviews]
                    for k, r in zip(entry.reviews, found, strict=True):
                        if r is None:
                            raise ConfigError(f"{where}: key {key!r}: check {cid!r} (line {entry.line} of "
                                              f"{tc.file.name}) names review {k!r}, which is not an eligible "
                                              "review of the pools (source/domain/id, within the [pool] filters)")
                    _pool_spec(task, entry, found, f"{where}: {tc.file.name}")  # type: ignore[arg-type]
            continue
        its = _items_of(task, items)
        for key, ids in (("tutorial", tc.tutorial), ("attention_checks", tc.attention_checks)):
            for cid in ids:
                if cid not in its.index:
                    raise ConfigError(f"{where}: key {key!r}: {cid!r} is not an item of {its.path.name}")
                item = its[its.index[cid]]
                if item.check is None:
                    raise ConfigError(f"{where}: key {key!r}: item {cid!r} of {its.path.name} has no 'check' "
                                      "object (a check needs {\"expect\": ..., \"feedback\": ...})")
                _item_spec(task, item, its, f"{where}: key {key!r}", tutorial=key == "tutorial")


def _check_lists(study: Study, task: Any, tc: TaskChecks | None, items: Mapping[Path, ItemSet]) -> None:
    """ConfigError when a participant's fixed list names a check item the task does not name as a check (it is
    asked where the list has it, as the tutorial or attention check the task names it)."""
    its = _items_of(task, items)
    named = set(tc.tutorial) | set(tc.attention_checks) if tc is not None else set()
    for pid, ids in fixed_lists(task.source, its).items():
        for cid in ids:
            if its[its.index[cid]].check is not None and cid not in named:
                raise ConfigError(f"{study.path.name}: [[tasks]] id {task.id!r}: the list of {pid!r} names item "
                                  f"{cid!r}, a check item: name it in 'tutorial' or 'attention_checks' too (it is "
                                  "asked where the list has it)")


# ----------------------------------------------------------------------------- plan


def _check_questions(task: Any, tc: TaskChecks, ids: Sequence[str], kind: str, rng: Mulberry32,
                     pools: Mapping[tuple[str, str], Sequence[Review]],
                     items: Mapping[Path, ItemSet]) -> list[Question]:
    out: list[Question] = []
    for cid in ids:
        if tc.file is not None:
            entry = next(e for e in tc.entries if e.id == cid)
            reviews = [_find_review(pools, k) for k in entry.reviews]
            rule, want = _pool_spec(task, entry, reviews, cid)  # type: ignore[arg-type]
            order = shuffle(list(range(len(reviews))), rng)
            shown = [reviews[p] for p in order]
            spec = CheckSpec(kind, cid, rule, want, entry.feedback, tc.tutorial_skippable and kind == "tutorial",
                             tc.attention_feedback and kind == "attention")
            out.append(Question(task=task.id, kind=task.kind, index=0, slot=-1, domain=shown[0].domain,  # type: ignore[union-attr]
                                review_ids=tuple(r.key for r in shown), sources=tuple(r.source for r in shown),  # type: ignore[union-attr]
                                texts=tuple(r.text for r in shown), matched=True, check=spec))  # type: ignore[union-attr]
            continue
        its = _items_of(task, items)
        item = its[its.index[cid]]
        systems, rule, want = _item_spec(task, item, its, cid, tutorial=kind == "tutorial")
        if getattr(getattr(task, "source", None), "shuffle", True):  # (fixed lists with shuffle = false: as given)
            systems = tuple(shuffle(list(systems), rng))
        fb = item.check.get("feedback", DEFAULT_FEEDBACK) if item.check else DEFAULT_FEEDBACK
        spec = CheckSpec(kind, cid, rule, want, fb, tc.tutorial_skippable and kind == "tutorial",
                         tc.attention_feedback and kind == "attention")
        out.append(Question(task=task.id, kind=task.kind, index=0, slot=its.index[cid], domain="",
                            review_ids=(item.id,) * len(systems), sources=systems,
                            texts=tuple(item.outputs[s] for s in systems), matched=True,
                            input=item.input or None, title=item.title, check=spec,
                            media=item.media_for(systems), input_media=item.input_media))
    return out


def _fixed(task: Any) -> bool:
    """Whether the task gives each participant a fixed list (``assignment = "fixed"``)."""
    return getattr(getattr(task, "source", None), "fixed", None) is not None


def _place_in_list(task: Any, tc: TaskChecks, questions: list[Question], rng: Mulberry32,
                   items: Mapping[Path, ItemSet]) -> set[str] | None:
    """In a task with fixed lists, the check items a participant's list names become check questions where the
    list has them (in place, in ``questions``). Returns the checks not to add at the start or at seeded positions:
    those placed, and those on other participants' lists only (a check that is on no list is everyone's); None
    when the participant has no list (no question of the task, checks included). Elsewhere: an empty set."""
    if not _fixed(task):
        return set()
    if not questions:
        return None
    named = {**{c: "tutorial" for c in tc.tutorial}, **{c: "attention" for c in tc.attention_checks}}
    placed: set[str] = set()
    for k, q in enumerate(questions):
        cid = q.review_ids[0] if q.review_ids else ""
        if cid in named and cid not in placed:
            [questions[k]] = _check_questions(task, tc, [cid], named[cid], rng, {}, items)
            placed.add(cid)
    listed = {i for ids in fixed_lists(task.source, _items_of(task, items)).values() for i in ids}
    return placed | (listed & set(named))


def add_checks(study: Study, per_task: dict[str, list[Question]], pools: Mapping[tuple[str, str], Sequence[Review]],
               items: Mapping[Path, ItemSet] | None, seed: int) -> None:
    """Put each task's check questions into its planned questions (in place): the tutorial first (config order),
    the attention checks at seeded positions among the others; then number the task's questions 0, 1, ...

    Its own random stream per task and evaluator, so the other questions stay what they were."""
    for task in study.tasks:
        tc = study.task_checks(task.id)
        if tc is None or not (tc.tutorial or tc.attention_checks):
            continue
        rng = Mulberry32(derive_seed("evalkit-checks", task.id, seed))
        regular = list(per_task.get(task.id, []))
        placed = _place_in_list(task, tc, regular, rng, items or {})
        if placed is None:  # a participant without a list in a fixed task: nothing of it
            continue
        tutorial = _check_questions(task, tc, [c for c in tc.tutorial if c not in placed], "tutorial", rng, pools,
                                    items or {})
        attention = _check_questions(task, tc, [c for c in tc.attention_checks if c not in placed], "attention", rng,
                                     pools, items or {})
        for q in shuffle(attention, rng):
            regular.insert(rng.randbelow(len(regular) + 1), q)
        per_task[task.id] = [replace(q, index=i) for i, q in enumerate([*tutorial, *regular])]


# ----------------------------------------------------------------------------- outcome


#: A session's outcome (:func:`session_outcome`): ``passed``; ``failed`` its attention checks; ``full``: it could
#: not get work (the k-per-item queue had nothing left for it); ``incomplete``: it ended without the judgments or
#: the attention checks its plan asked for (e.g. a time limit ran out before its first judgment).
OUTCOMES = ("passed", "failed", "full", "incomplete")


@dataclass(frozen=True)
class Outcome:
    """A session's attention checks: how many were answered, how many failed, whether it passed, and why not.

    ``required``: the attention checks the session had to answer (None when its plan was not given);
    ``judged``: the judgments it made, check questions left out (None likewise); ``status``: one of
    :data:`OUTCOMES`."""

    checks: int
    failed: int
    passed: bool
    required: int | None = None
    judged: int | None = None
    status: str = ""

    def __post_init__(self) -> None:
        if not self.status:
            object.__setattr__(self, "status", "passed" if self.passed else "failed")


def passes(failed: int, max_failed_checks: int | float, checks: int | None = None) -> bool:
    """The rule: a session passes unless it failed more attention checks than ``max_failed_checks``: a count (an
    integer), or a proportion (a float strictly between 0 and 1) of its ``checks`` (the attention checks it
    answered): 0.2 of 5 checks passes 1 failed, fails 2. The share is compared exactly, as the decimal written
    in the config (0.3 of 10 passes 3 failed)."""
    if isinstance(max_failed_checks, float) and 0 < max_failed_checks < 1:
        if checks is None:
            raise ValueError("a proportion of failed attention checks needs the number of checks")
        return failed == 0 or (checks > 0 and Fraction(failed, checks) <= Fraction(repr(max_failed_checks)))
    return failed <= max_failed_checks


def parse_max_failed_checks(t: Table) -> int | float:
    """``[study.quality] max_failed_checks``: a count (an integer ≥ 0, default 0) or a proportion (a number strictly
    between 0 and 1); ConfigError naming the key otherwise (1.0, a negative number, NaN, a string, ...)."""
    value = t.get("max_failed_checks", 0)
    share = "a proportion strictly between 0 and 1 (e.g. 0.2: more than a fifth of the attention checks wrong fails)"
    if isinstance(value, bool) or not isinstance(value, int | float):
        t.fail("max_failed_checks", f"must be a count (an integer ≥ 0) or {share}, got {type_name(value)} {value!r}")
    if isinstance(value, int):
        if value < 0:
            t.fail("max_failed_checks", f"must be at least 0, got {value}")
        return value
    if math.isfinite(value) and 0 < value < 1:
        return value
    if math.isfinite(value) and value >= 0 and value.is_integer():
        t.fail("max_failed_checks", f"a count is written as an integer ({int(value)}, not {value!r}); or give {share}")
    t.fail("max_failed_checks", f"must be a count (an integer ≥ 0) or {share}, got {value!r}")
    raise AssertionError  # (t.fail raises)


def session_outcome(answers: Sequence[Answer], max_failed_checks: int | float,
                    questions: Sequence[Question] | None = None, progress: Progress | None = None,
                    limit: str | None = None) -> Outcome:
    """Pass or fail from a session's stored answers: more failed attention checks (first try wrong) than
    ``max_failed_checks`` (a count, or a proportion of the attention checks answered: :func:`passes`) fails.
    Tutorial questions never fail a session (they teach).

    With the session's plan (``questions``) and ``progress``, passing also needs work done: at least one
    judgment (an answer to a question that is not a check, or a rated item) when the plan has questions to
    judge, and an answer to every attention check the plan asks for. A queued task that ran out before the
    evaluator's first judgment in it asks for none of its checks (:func:`evalkit.tasks.base.open_checks`).
    A session with no judgment whose every task with questions to judge ran out is ``full``; one that ended
    without its judgments or checks otherwise is ``incomplete``. A ``[study.session]`` ``limit`` that ended the
    session excuses the checks it did not reach (the evaluator is not at fault); a ``time`` limit does not excuse
    the judgment, a ``questions`` limit does (it counts attention checks: an evaluator whose one allowed answer
    was a check did what was asked)."""
    attention = [a for a in answers if a.check == "attention"]
    failed = sum(1 for a in attention if not a.check_passed)
    if questions is None or progress is None:
        return Outcome(len(attention), failed, passes(failed, max_failed_checks, len(attention)))
    judged_in: dict[str, int] = {}
    for a in answers:
        if a.check is None:
            judged_in[a.task] = judged_in.get(a.task, 0) + 1
    judged = sum(judged_in.values()) + sum(len(rated) for rated in progress.rated.values())
    ran_out = {q.task for q in questions if q.task in progress.finished and q.check is None}
    asked = [q for q in questions if q.check is not None and q.check.type == "attention"
             and not (q.task in ran_out and not judged_in.get(q.task))]  # (see open_checks)
    answered = {(a.task, a.question_index) for a in attention}
    missing = sum(1 for q in asked if (q.task, q.index) not in answered)
    required = len(asked)
    if not passes(failed, max_failed_checks, len(attention)):
        status = "failed"
    elif judged == 0 and limit != "questions" and (work := {q.task for q in questions if q.check is None}):
        status = "full" if work <= ran_out else "incomplete"  # full: every task with work to give ran out
    elif missing and limit is None:
        status = "incomplete"
    else:
        status = "passed"
    return Outcome(len(attention), failed, status == "passed", required, judged, status)


def outcome_of(session: Session) -> str:
    """The outcome stored when the session completed (:func:`evalkit.survey.finish_session`): one of
    :data:`OUTCOMES`, or ``""`` (not completed, or completed before outcomes were stored)."""
    value = session.meta.get("outcome", "") if session.completed_at else ""
    return value if value in OUTCOMES else ""


def completion_code(study: Study, outcome: Outcome, participant: Participant | None = None) -> str | None:
    """The code for this outcome, ``""`` for no code at all, or None for a per-session code.

    ``passed``: ``completion_code_pass``; ``failed`` and ``incomplete``: ``completion_code_fail``; ``full``:
    ``completion_code_full`` (a platform's screen-out code), else no code (the evaluator is asked to return
    the study). An invited ``participant`` with their own pass / fail code (``evalkit invite --csv`` with
    ``code_pass`` / ``code_fail``, a Pearmut campaign's tokens) gets it instead of the study's. An outcome
    without a configured code gets a per-session code, except ``full``."""
    if outcome.status == "full":
        return study.completion_code_full
    own = participant and (participant.code_pass if outcome.passed else participant.code_fail)
    code = own or (study.completion_code_pass if outcome.passed else study.completion_code_fail)
    return code or None
