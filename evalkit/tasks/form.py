"""Kind ``form``: a background form (native language, age, experience, ...) filled in once per session, before or
after the judgment tasks (its place in ``tasks`` decides). It counts as one step of the study's progress.

Every answer is checked on the server against the config (:func:`check_answers`): required fields filled,
numbers in range (and whole when they must be), choices among the options, text within its length cap; a
submission with any problem stores nothing and names every invalid field. A valid one is stored per field in
one transaction (:meth:`evalkit.store.Store.record_form`), exactly once.

How a value is stored (``form_answers.value``, text): ``text`` as typed (never cut: longer than ``max_length``
is refused), ``number`` as a decimal (``"25"``, ``"1.5"``), ``choice`` the option's text, ``multichoice`` a
JSON list of the chosen options in the config's order (``["English", "German"]``: unambiguous whatever the
options contain), ``likert`` the level as an integer (``"4"``). An optional field left empty is stored as NULL.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .base import Common, SurveyError, Table, TaskKind, type_name

if TYPE_CHECKING:
    from ..question import Question
    from ..store import FormAnswer, Progress, Session, Store

__all__ = ["FIELD_TYPES", "KIND", "MAX_TEXT", "Field", "FormInvalid", "FormTask", "check_answers", "record_form"]

FieldType = Literal["text", "number", "choice", "multichoice", "likert"]
FIELD_TYPES: tuple[str, ...] = ("text", "number", "choice", "multichoice", "likert")
#: Default and largest ``max_length`` of a text field (characters).
DEFAULT_TEXT = 1000
MAX_TEXT = 10_000
#: Keys a field may have, per type (besides id, label, type, optional, help).
_TYPE_KEYS = {"text": ("max_length",), "number": ("min", "max", "integer"), "choice": ("options",),
              "multichoice": ("options",), "likert": ("anchors", "min", "max", "min_label", "max_label")}


@dataclass(frozen=True)
class Field:
    """One field of a form. ``levels`` are a likert field's values (1..len(anchors), or min..max)."""

    id: str
    label: str
    type: FieldType
    optional: bool = False
    help: str = ""
    max_length: int = DEFAULT_TEXT  # text
    min: float | None = None  # number
    max: float | None = None
    integer: bool = True
    options: tuple[str, ...] = ()  # choice, multichoice
    anchors: tuple[str, ...] = ()  # likert: one text per level (or only the ends' labels, below)
    levels: tuple[int, ...] = ()
    min_label: str = ""
    max_label: str = ""

    def level_label(self, level: int) -> str:
        """How a likert level is shown: ``"4 · Agree"``, or the bare number between labelled ends."""
        if self.anchors:
            return f"{level} · {self.anchors[level - self.levels[0]]}"
        if level == self.levels[0] and self.min_label:
            return f"{level} · {self.min_label}"
        if level == self.levels[-1] and self.max_label:
            return f"{level} · {self.max_label}"
        return str(level)

    def describe(self) -> dict[str, Any]:
        """JSON-ready description (stored with the study; the results page and the export read it)."""
        out: dict[str, Any] = {"id": self.id, "label": self.label, "type": self.type, "optional": self.optional}
        if self.type == "number":
            out.update(min=self.min, max=self.max, integer=self.integer)
        elif self.type in ("choice", "multichoice"):
            out["options"] = list(self.options)
        elif self.type == "likert":
            out["levels"] = list(self.levels)
            out["labels"] = [self.level_label(v) for v in self.levels]
        elif self.type == "text":
            out["max_length"] = self.max_length
        return out


@dataclass(frozen=True)
class FormTask:
    """A background form: its fields, answered once per session."""

    id: str
    title: str
    instructions: str
    fields: tuple[Field, ...]
    submit: str = "Continue"
    kind: Literal["form"] = "form"


class FormInvalid(SurveyError):
    """A submitted form with invalid fields; ``errors`` maps each field id to what is wrong with it."""

    def __init__(self, errors: Mapping[str, str]) -> None:
        n = len(errors)
        super().__init__(f"{n} {'field needs' if n == 1 else 'fields need'} your attention: "
                         f"{'it is' if n == 1 else 'they are'} marked above.")
        self.errors = dict(errors)


def _bool(t: Table, key: str, default: bool) -> bool:
    value = t.get(key, default)
    if not isinstance(value, bool):
        t.fail(key, f"must be true or false, got {type_name(value)} {value!r}")
    return value


def _number(t: Table, key: str, *, whole: bool) -> float | None:
    value = t.get(key, None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        t.fail(key, f"must be a number, got {type_name(value)} {value!r}")
    if whole and value != int(value):
        t.fail(key, f"must be a whole number (the field takes whole numbers: integer = true), got {value!r}")
    return int(value) if whole else float(value)


def _options(t: Table, key: str) -> tuple[str, ...]:
    if key not in t.data:
        t.fail(key, "is required for this type: a list of the options, e.g. options = [\"Yes\", \"No\"]")
    options = t.strs(key)
    if len(options) < 2:
        t.fail(key, f"needs at least two options, got {list(options)}")
    repeated = sorted({o for o in options if options.count(o) > 1})
    if repeated:
        t.fail(key, f"lists {', '.join(repr(o) for o in repeated)} more than once")
    return options


def _field(data: Any, file: Path, where: str) -> Field:
    probe = data if isinstance(data, dict) else {}
    if isinstance(probe.get("id"), str):
        where = f"{where} (id {probe['id']!r})"
    t = Table(data, file, where)
    field_id = t.ident("id")
    label = t.str("label", field_id.replace("_", " ").capitalize())
    if "type" not in t.data:
        t.fail("type", f"is required: one of {', '.join(FIELD_TYPES)}")
    kind: FieldType = t.choice("type", FIELD_TYPES)  # type: ignore[assignment]
    for other, keys in _TYPE_KEYS.items():  # a key of another type: say which, rather than "unknown"
        for key in keys:
            if key in t.data and key not in _TYPE_KEYS[kind]:
                t.fail(key, f"is for {other} fields, not {kind} fields")
    common: dict[str, Any] = {"id": field_id, "label": label, "type": kind,
                              "optional": _bool(t, "optional", False), "help": t.str("help", "", nonempty=False)}
    if kind == "text":
        field = Field(**common, max_length=t.int("max_length", DEFAULT_TEXT, minimum=1))
        if field.max_length > MAX_TEXT:
            t.fail("max_length", f"must be at most {MAX_TEXT}, got {field.max_length}")
    elif kind == "number":
        integer = _bool(t, "integer", True)
        low, high = _number(t, "min", whole=integer), _number(t, "max", whole=integer)
        if low is not None and high is not None and low > high:
            t.fail("min", f"({low}) is greater than max ({high})")
        field = Field(**common, min=low, max=high, integer=integer)
    elif kind in ("choice", "multichoice"):
        field = Field(**common, options=_options(t, "options"))
    else:  # likert: anchors (one per level), or min..max with optional labels of the ends
        if "anchors" in t.data:
            for key in ("min", "max", "min_label", "max_label"):
                if key in t.data:
                    t.fail(key, "cannot be combined with 'anchors' (give anchors, or min and max)")
            anchors = t.strs("anchors")
            if len(anchors) < 2:
                t.fail("anchors", "needs at least two levels (one text per level)")
            field = Field(**common, anchors=anchors, levels=tuple(range(1, len(anchors) + 1)))
        else:
            if "min" not in t.data or "max" not in t.data:
                t.fail("anchors", "is required for a likert field (one text per level), or give 'min' and 'max'")
            low, high = t.int("min"), t.int("max")
            if low >= high:
                t.fail("min", f"({low}) must be less than max ({high})")
            if high - low > 10:
                t.fail("max", f"a likert field has at most 11 levels; min {low} to max {high} gives {high - low + 1}")
            field = Field(**common, levels=tuple(range(low, high + 1)),
                          min_label=t.str("min_label", "", nonempty=False),
                          max_label=t.str("max_label", "", nonempty=False))
    t.done()
    return field


class FormKind(TaskKind):
    """A background form, one step of the study; validated and stored per field on the server."""

    name = "form"
    source = "picked"  # no questions in the plan: the form is one step of its own
    choice_in_review_source = False
    response_varies = False
    summary_line = "a background form (text, number, choice, multiple choice and Likert fields), filled in once"

    def parse(self, t: Table, common: Common) -> FormTask:
        raw = t.get("fields", None)
        if not isinstance(raw, list) or not raw:
            t.fail("fields", "needs at least one [[tasks.fields]] table (id, label, type)")
        fields = tuple(_field(f, common.file, f"{common.label} field #{k}") for k, f in enumerate(raw, start=1))
        ids = [f.id for f in fields]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            t.fail("fields", f"field ids must be unique; {', '.join(repr(i) for i in repeated)} is used more than once")
        return FormTask(id=common.id, title=common.title, instructions=common.instructions, fields=fields,
                        submit=t.str("submit", "Continue"))

    def describe(self, task: FormTask) -> dict[str, Any]:
        return {"fields": [f.describe() for f in task.fields]}

    def outline(self, task: FormTask, items: Mapping[Path, Any]) -> str:
        return f"a form of {len(task.fields)} fields ({', '.join(f.id for f in task.fields)})"

    def step_label(self, task: FormTask, index: int, n_questions: int, rated: int, what: str) -> str:
        return "Form"

    def progress(self, task: FormTask, questions: Sequence[Question], progress: Progress) -> tuple[int, int]:
        """One step: done once the form is stored (its rows and the task's finished mark are one transaction)."""
        return 1, int(task.id in progress.finished)

    def next_question(self, task: FormTask, questions: Sequence[Question],
                      progress: Progress) -> tuple[int, Question | None, int, Mapping[int, str]] | None:
        return None if task.id in progress.finished else (0, None, 1, {})


KIND = FormKind()


# ----------------------------------------------------------------------------- checking and storing answers


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip()) or \
        (isinstance(value, list | tuple) and not value)


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _range_text(field: Field) -> str:
    low, high = (None if v is None else _format_number(v) for v in (field.min, field.max))
    whole = "a whole number" if field.integer else "a number"
    if low is not None and high is not None:
        return f"{whole} from {low} to {high}"
    if low is not None:
        return f"{whole} of at least {low}"
    if high is not None:
        return f"{whole} of at most {high}"
    return whole


def check_field(field: Field, value: Any) -> tuple[str | None, str | None]:
    """(value as stored, None) for a valid answer (None stored for an optional field left empty), or
    (None, what is wrong, in words for the evaluator)."""
    if _blank(value):
        if field.optional:
            return None, None
        return None, {"text": "Please answer this question.", "number": "Please enter a number.",
                      "choice": "Please choose one option.", "multichoice": "Please choose at least one option.",
                      "likert": "Please choose a level."}[field.type]
    if field.type == "text":
        if not isinstance(value, str):
            return None, "Please type your answer as text."
        if len(value) > field.max_length:
            return None, f"Please shorten your answer to at most {field.max_length} characters (it has {len(value)})."
        return value, None
    if field.type == "number":
        number: float | None = None
        if isinstance(value, int | float) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str):
            try:
                number = float(value.strip())
            except ValueError:
                number = None
        if number is None or not math.isfinite(number):
            return None, f"Please enter {_range_text(field)}."
        if field.integer and not number.is_integer():
            return None, f"Please enter a whole number ({_range_text(field)})."
        if (field.min is not None and number < field.min) or (field.max is not None and number > field.max):
            return None, f"Please enter {_range_text(field)}; {_format_number(number)} is outside that range."
        return _format_number(number), None
    if field.type == "choice":
        if not isinstance(value, str) or value not in field.options:
            return None, "Please choose one of the options shown."
        return value, None
    if field.type == "multichoice":
        chosen = list(value) if isinstance(value, list | tuple) else None
        if chosen is None or not all(isinstance(v, str) and v in field.options for v in chosen):
            return None, "Please choose only among the options shown."
        return json.dumps([o for o in field.options if o in chosen], ensure_ascii=False), None
    if isinstance(value, bool) or not isinstance(value, int) or value not in field.levels:
        return None, f"Please choose a level from {field.levels[0]} to {field.levels[-1]}."
    return str(value), None


def check_answers(task: FormTask, given: Mapping[str, Any]) -> tuple[dict[str, str | None], dict[str, str]]:
    """Every field of ``task`` checked against what was ``given`` (field id -> widget value; keys that are not
    fields are ignored): (values as stored, field id -> what is wrong). Stored only when the second is empty."""
    values: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for field in task.fields:
        value, error = check_field(field, given.get(field.id))
        if error:
            errors[field.id] = error
        else:
            values[field.id] = value
    return values, errors


def record_form(store: Store, session: Session, task: FormTask, given: Mapping[str, Any],
                time_spent_ms: int | None = None) -> list[FormAnswer]:
    """Check and store a submitted form: every field in one transaction, exactly once (the same submission
    again returns the stored rows; a different one raises :class:`~evalkit.store.AnswerConflict`).
    :class:`FormInvalid` (nothing stored) names every invalid field."""
    values, errors = check_answers(task, given)
    if errors:
        raise FormInvalid(errors)
    return store.record_form(session.session_id, task.id, values, time_spent_ms=time_spent_ms)
