"""Kind ``score``: absolute ratings of systems' outputs on one or more scales (Likert levels with anchor texts,
or a direct-assessment slider), one output per question or several of one item side by side (Pearmut's
listwise view), optionally with a comment or a post-edit of each output.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..text import lone_surrogate_at
from .base import Common, SurveyError, Table
from .itemsource import (
    ItemsSource,
    OutputsKind,
    card_labels,
    items_source,
    outline,
)
from .media_log import with_media
from .responses import in_sentence, save_answer

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..items import ItemSet
    from ..question import Question
    from ..store import Answer, Session, Store

__all__ = ["COMMENT_CHARS", "KIND", "POST_EDIT_CHARS", "Scale", "ScoreTask", "missing_scores", "parse_scales",
           "record_scores"]

TextField = Literal["none", "comment", "post-edit"]


@dataclass(frozen=True)
class Scale:
    """One scale: ``likert`` (levels 1..len(anchors), each shown with its anchor) or ``slider`` (min..max)."""

    id: str
    label: str
    type: Literal["likert", "slider"]
    anchors: tuple[str, ...] = ()
    min: int = 0
    max: int = 100

    @property
    def low(self) -> int:
        """The lowest allowed score."""
        return 1 if self.type == "likert" else self.min

    @property
    def high(self) -> int:
        """The highest allowed score."""
        return len(self.anchors) if self.type == "likert" else self.max


@dataclass(frozen=True)
class ScoreTask:
    """Absolute scores of outputs, ``outputs_per_question`` of one item per question, on every scale."""

    id: str
    title: str
    instructions: str
    question: str
    source: ItemsSource
    scales: tuple[Scale, ...]
    outputs_per_question: int = 1
    textfield: TextField = "none"
    input_label: str = "Input"  # the input's card
    output_label: str = "Response"  # the outputs' cards: "Response", or "Response A", "Response B" side by side
    kind: Literal["score"] = "score"


def _scale(data: Any, file: Path, where: str) -> Scale:
    t = Table(data, file, where)
    scale_id = t.ident("id")
    label = t.str("label", scale_id.replace("_", " ").capitalize())
    kind = t.choice("type", ("likert", "slider"))
    if kind == "likert":
        anchors = t.strs("anchors")
        if len(anchors) < 2:
            t.fail("anchors", "needs at least two levels (one anchor text per level)")
        scale = Scale(scale_id, label, "likert", anchors=anchors)
    else:
        low, high = t.int("min", 0), t.int("max", 100)
        if low >= high:
            t.fail("max", f"must be greater than min ({low}), got {high}")
        scale = Scale(scale_id, label, "slider", min=low, max=high)
    t.done()
    return scale


def parse_scales(t: Table, common: Common, default: Any = None) -> tuple[Scale, ...]:
    """The task's ``[[tasks.scales]]`` (``default``, raw tables, when the key is absent; at least one needed)."""
    raw = t.get("scales", default)
    if not isinstance(raw, list) or not raw:
        t.fail("scales", "needs at least one [[tasks.scales]] table (id, type, and anchors or min/max)")
    scales = tuple(_scale(s, common.file, f"{common.label} scale #{k}") for k, s in enumerate(raw, start=1))
    ids = [s.id for s in scales]
    if len(set(ids)) != len(ids):
        t.fail("scales", f"scale ids must be unique, got {ids}")
    return scales


class ScoreKind(OutputsKind):
    """Absolute scores of outputs; systems balanced within an evaluator's questions."""

    name = "score"
    analysis = "score_analysis"
    analysis_columns = ("sources", "item_ids", "score_detail")
    choice_in_review_source = False
    response_varies = False
    summary_line = ("absolute scores (Likert levels with anchors, or a 0-100 slider) of systems' outputs for an "
                    "item's input (items file), one at a time or several side by side")

    def parse(self, t: Table, common: Common) -> ScoreTask:
        source = items_source(t, common, fixed=True)
        per_question = self.outputs_per_question(t, source)
        scales = parse_scales(t, common)
        input_label, output_label = card_labels(t)
        one = in_sentence(output_label)
        return ScoreTask(
            id=common.id, title=common.title, instructions=common.instructions, source=source, scales=scales,
            input_label=input_label, output_label=output_label,
            question=t.str("question", f"How good is this {one}?" if per_question == 1 else
                           f"How good is each {one}?"),
            outputs_per_question=per_question, textfield=t.choice("textfield", ("none", "comment", "post-edit"),
                                                                  "none"))

    def describe(self, task: ScoreTask) -> dict[str, Any]:
        return {"systems": list(task.source.systems), "questions": task.source.questions,
                "assignment": "fixed" if task.source.fixed is not None else "balanced",
                "outputs_per_question": task.outputs_per_question, "textfield": task.textfield,
                "scales": [{"id": s.id, "label": s.label, "type": s.type, "min": s.low, "max": s.high}
                           for s in task.scales]}

    def outline(self, task: ScoreTask, items: Mapping[Path, ItemSet]) -> str:
        n = task.outputs_per_question
        what = "one output" if n == 1 else f"{n} outputs side by side" if n else "every output of its item"
        return outline(task.source, items[task.source.items], f"{what}, scales {', '.join(s.id for s in task.scales)}")


def missing_scores(task: ScoreTask, question: Question,
                   scores: Mapping[str, Sequence[int | None]]) -> list[tuple[int, Scale]]:
    """(position, scale) of every score not given yet, in display order (an untouched slider is not a score)."""
    return [(k, scale) for k in range(len(question.texts)) for scale in task.scales
            if _at(scores.get(scale.id), k) is None]


def _of(question: Question, k: int, noun: str = "Response") -> str:
    """ " for response B" when the question shows several outputs, else nothing (``noun``: the task's
    ``output_label``)."""
    return f" for {in_sentence(noun)} {question.labels[k]}" if len(question.texts) > 1 else ""


def missing_mark(question: Question, k: int, scale: Scale, noun: str = "Response") -> str:
    """The mark right under a missing score's widget, naming the scale (and the output when there are several)."""
    if scale.type == "slider":
        return (f"The slider '{scale.label}'{_of(question, k, noun)} has not been moved yet: please drag it to your "
                "score (where it starts is not an answer).")
    return f"Please choose a level for '{scale.label}'{_of(question, k, noun)}."


def score_name(question: Question, k: int, scale: Scale, noun: str = "Response") -> str:
    """How :func:`missing_summary` names one score: the scale's label, and the output when there are several
    ("Fluency for response B")."""
    return f"{scale.label}{_of(question, k, noun)}"


def missing_summary(question: Question, missing: Sequence[tuple[int, Scale]], noun: str = "Response") -> str:
    """The line above "Next" after a click with scores missing: how many, and which ("2 scores are still
    missing (Overall quality; Fluency for response B): they are marked above.")."""
    m = len(missing)
    names = "; ".join(score_name(question, k, scale, noun) for k, scale in missing)
    return (f"{m} {'score is' if m == 1 else 'scores are'} still missing ({names}): "
            f"{'it is' if m == 1 else 'they are'} marked above. Nothing has been saved yet.")


#: the most characters a comment and a post-edit may hold (the widget's text boxes have these limits too; the
#: server refuses longer ones: the browser is not trusted)
COMMENT_CHARS, POST_EDIT_CHARS = 5000, 20000


def _one_newline(text: str) -> str:
    """``\r\n`` and ``\r`` as ``\n`` (what a browser's text box sends, whatever the text it was filled with)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _at(values: Sequence[int | None] | None, k: int) -> int | None:
    return values[k] if values is not None and k < len(values) else None


def record_scores(store: Store, session: Session, task: ScoreTask, question: Question,
                  scores: Mapping[str, Sequence[int | None]], texts: Sequence[str] | None,
                  time_spent_ms: int | None, *, media: Any = None) -> Answer:
    """Store every score of a question (each scale for each output, in display order), exactly once.

    ``scores`` maps a scale id to one value per output; all must be given and in range (SurveyError naming
    the first missing one otherwise). ``texts`` are the comments (``textfield = "comment"``, may be blank)
    or the post-edits (``"post-edit"``, pre-filled with the output) in display order. Stored: response
    ``"scored"``, the systems as sources (``review_source`` too for one output), ``detail`` =
    ``{"scores": {scale: [value per output]}, "texts": [...], "edited": [...]}``, and ``"media"``, the play log of
    the question's clips (``media`` as the page sent it, :mod:`evalkit.tasks.media_log`; ``require_full_play``
    refuses the answer until each was played to the end). A media output's post-edit box starts empty.
    """
    n = len(question.texts)
    missing = missing_scores(task, question, scores)
    if missing:
        k, scale = missing[0]
        what = "move the slider" if scale.type == "slider" else "choose a level"
        raise SurveyError(f"Please {what} for '{scale.label}'{_of(question, k, task.output_label)} before "
                          "continuing.")
    if set(scores) != {scale.id for scale in task.scales}:  # (a page sends exactly the task's scales)
        raise SurveyError("These scores do not match this question's scales; please reload the page.")
    clean: dict[str, list[int]] = {}
    for scale in task.scales:
        values = list(scores[scale.id])
        if len(values) != n:  # one value per output shown, no more
            raise SurveyError("These scores do not match this question's outputs; please reload the page.")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int) or not scale.low <= v <= scale.high:
                raise SurveyError(f"'{scale.label}' takes whole numbers from {scale.low} to {scale.high}.")
        clean[scale.id] = values
    detail: dict[str, Any] = {"scores": clean}
    if task.textfield != "none":
        given = list(texts or [])
        if len(given) != n or not all(isinstance(x, str) for x in given):
            raise SurveyError(f"Please fill in the text box of every {in_sentence(task.output_label)}.")
        limit = POST_EDIT_CHARS if task.textfield == "post-edit" else COMMENT_CHARS
        given = [_one_newline(x) for x in given]
        for x in given:
            if len(x) > limit:
                raise SurveyError(f"A text box holds at most {limit:,} characters; this one has {len(x):,}.")
            if "\x00" in x or lone_surrogate_at(x) is not None:
                raise SurveyError("A text box holds a character that cannot be stored (half of a surrogate pair or "
                                  "a NUL); please retype the text.")
        detail["texts"] = given
        if task.textfield == "post-edit":  # (line ends compared alike: a browser's text box sends \n for \r\n)
            detail["edited"] = [given[k] != ("" if question.media_of(k) else _one_newline(question.texts[k]))
                                for k in range(n)]
    detail = with_media(question, detail, media, full_play=task.source.require_full_play, noun=task.output_label,
                        input_label=task.input_label) or detail
    return save_answer(store, session, question, "scored", review_source=question.sources[0] if n == 1 else None,
                       time_spent_ms=time_spent_ms, detail=detail)


KIND = ScoreKind()
