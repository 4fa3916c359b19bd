"""One planned question: :class:`Question` (what an evaluator is asked, with its server-side sources) and, for a
tutorial or attention-check question, its :class:`CheckSpec` (what counts as right); :func:`question_columns`,
what every stored answer records about its question.

The vocabulary every layer above shares: the planner makes questions (:mod:`evalkit.sampling`), the task kinds
plan and record them (:mod:`evalkit.tasks`), the checks decide them (:mod:`evalkit.checks`). May import
:mod:`evalkit.media` only (an items question's images, audio clips and videos).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from .media import Media

__all__ = ["LABELS", "CheckSpec", "Question", "question_columns"]

#: Display labels of a question's texts, in order: A, B, C, ...
LABELS = string.ascii_uppercase


@dataclass(frozen=True)
class CheckSpec:
    """What a planned check question is (server-side only): its type, id, and what counts as right.

    ``rule``: ``source`` (the chosen / best / preferred text's source must be ``want``), ``response`` (the
    stored response must be ``want``) or ``ranges`` (``want`` is JSON ``{scale: [low, high]}``; every score of
    the scale must lie in it).
    """

    type: str
    id: str
    rule: str
    want: str
    feedback: str
    skippable: bool = False
    retry: bool = False


@dataclass(frozen=True, slots=True)
class Question:
    """One question of an evaluator's plan.

    ``sources`` and ``review_ids`` are server-side only: pages show ``texts``
    under ``labels``. ``slot`` is the question's position in the config's list
    (the same slot means the same items across evaluators in ``shared`` mode).
    """

    task: str
    kind: str
    index: int
    slot: int
    domain: str
    review_ids: tuple[str, ...]
    sources: tuple[str, ...]
    texts: tuple[str, ...]
    matched: bool
    input: str | None = None  # an items question: the item's input, shown above the outputs
    title: str | None = None  # ... and its heading
    #: a tutorial or attention-check question: what counts as right (server-side only, never on a page)
    check: CheckSpec | None = None
    #: an items question's media: per text (display order) its :class:`~evalkit.media.Media` or None (the text is a
    #: text); empty when none is a media value. ``texts`` then holds the values' paths or URLs, never shown
    media: tuple[Media | None, ...] = ()
    #: ... and the input's, when the input is a media value (``input`` is then its path or URL, never shown)
    input_media: Media | None = None

    def media_of(self, k: int) -> Media | None:
        """The media value of text ``k`` (display order), None when it is a text."""
        return self.media[k] if k < len(self.media) else None

    @property
    def labels(self) -> tuple[str, ...]:
        """Display labels: A, B, C, ..."""
        return tuple(LABELS[: len(self.texts)])

    def source_of(self, label: str) -> str:
        """The source behind a display label (server-side)."""
        return self.sources[self.labels.index(label)]

    def as_dict(self, *, with_sources: bool = True) -> dict:
        """JSON-ready form; ``with_sources=False`` gives only what a page may show."""
        shown = []
        for k, label in enumerate(self.labels):
            entry: dict = {"label": label, "text": self.texts[k]}
            if self.media_of(k) is not None:
                entry["media"] = self.media[k].as_json()  # type: ignore[union-attr]
            if with_sources:
                entry.update(source=self.sources[k], review_id=self.review_ids[k])
            shown.append(entry)
        out: dict = {"task": self.task, "kind": self.kind, "index": self.index, "domain": self.domain,
                     "texts": shown}
        if self.input is not None:
            out["input"] = self.input
        if self.input_media is not None:
            out["input_media"] = self.input_media.as_json()
        if self.title is not None:
            out["title"] = self.title
        if self.slot < 0 and not self.texts:  # judgments_per_item: the item is claimed from the queue when reached
            out["queued"] = True
        if with_sources:
            out.update(slot=self.slot, matched=self.matched)
            if self.check is not None:
                out["check"] = {"type": self.check.type, "id": self.check.id}
        return out


def question_columns(question: Question) -> dict:
    """What every stored answer says about its question: kind, slot, domain, the sources (systems) in display
    order, the item ids (an items question's one id, or one review id per text), and for two texts the
    CERA-style ``left_source`` / ``right_source``."""
    out = {"kind": question.kind, "slot": question.slot, "domain": question.domain or None,
           "sources": list(question.sources), "item_ids": list(dict.fromkeys(question.review_ids)),
           "matched": question.matched}
    if len(question.sources) == 2:
        out.update(left_source=question.sources[0], right_source=question.sources[1])
    return out
