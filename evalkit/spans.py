"""Error spans on a text: :class:`Span` (a half-open range of Unicode code points with a severity and, for MQM, a
category), the conversion of a browser's UTF-16 offsets to code points and back, Pearmut's span shape
(``start_i`` / ``end_i`` with the end inclusive) in and out, the server-side check of what a page sends
(:func:`check_spans`: bounds, no overlap, allowed severity and category) and the character-level agreement of two
annotations (:func:`char_f1`).

Offsets are code points of the text as stored, i.e. Python's string indices: a span after an emoji (two UTF-16
units, one code point) or a combining accent (one code point of its own) still covers the same characters in the
browser and on the server. Nothing a page sends is trusted: every value is checked here and a
:class:`SpanError` names the span and what is wrong with it.

Written by hand: no maintained library checks annotation spans against a text and a taxonomy (the conversion is
the standard library's UTF-16 encoding). Floor: core (``.importlinter``). Imports nothing from evalkit.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FREE", "MISSING_TOKEN", "Expected", "Span", "SpanError", "Utf16Offsets", "char_f1", "check_spans",
           "expected_spans", "from_pearmut", "from_pearmut_index", "from_utf16", "marked_text", "to_pearmut",
           "to_pearmut_index", "to_utf16", "unmet"]

#: The token after a text that an omission is marked on (``missing_token = true``): code point ``len(text)``.
MISSING_TOKEN = "[missing]"
#: ``categories = "free"``: any category the evaluator types (one line, at most this many characters)
FREE = "free"
MAX_FREE_CATEGORY = 100


class SpanError(ValueError):
    """A span the server refuses; the message names the span and the problem."""


@dataclass(frozen=True, slots=True)
class Span:
    """Code points ``start`` (inclusive) to ``end`` (exclusive) of a text, with a severity and, for MQM, a category
    (``"Accuracy/Omission"``: the top-level category and a subcategory, or a top-level category alone)."""

    start: int
    end: int
    severity: str
    category: str | None = None

    def describe(self) -> str:
        """``span 7-13 (minor)``: how messages name the span (the end as Pearmut writes it, inclusive)."""
        what = f"{self.severity}{', ' + self.category if self.category else ''}"
        return f"span {self.start}-{self.end - 1} ({what[:60] + '…' if len(what) > 60 else what})"


def _index(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpanError(f"{what} must be a whole number, got {value!r}"[:200])
    return value


class Utf16Offsets:
    """The code point of every UTF-16 offset of one text, computed once (a page sends many offsets into the same
    output: walking the text again for each, a hostile page sending thousands could make it cost seconds)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._points: dict[int, int] = {}
        units = 0
        for index, char in enumerate(text):
            self._points[units] = index
            units += 2 if ord(char) > 0xFFFF else 1
        self._points[units] = len(text)
        self.units = units

    def code_point(self, offset: Any, *, missing_token: bool = False) -> int:
        """The code point at UTF-16 ``offset`` (:func:`from_utf16`), in constant time."""
        offset = _index(offset, "an offset")
        point = self._points.get(offset)
        if point is not None:
            return point
        if missing_token and offset == self.units + 1:
            return len(self.text) + 1
        if offset < 0:
            raise SpanError(f"offset {offset} is before the start of the text")
        if offset < self.units:
            raise SpanError(f"offset {offset} falls inside character {self._points[offset - 1]} of the text")
        raise SpanError(f"offset {offset} is past the end of the text ({self.units} UTF-16 units)"[:200])


def from_utf16(text: str, offset: Any, *, missing_token: bool = False) -> int:
    """The code-point index of a UTF-16 ``offset`` into ``text`` (a browser's ``selectionStart``); SpanError when
    the offset is not a number, lies outside the text or falls inside a character (between the two halves of an
    emoji's surrogate pair). With ``missing_token``, the offset one past the end (the end of the [missing] token
    after the text) is ``len(text) + 1``. (Many offsets into one text: :class:`Utf16Offsets`, built once.)"""
    return Utf16Offsets(text).code_point(offset, missing_token=missing_token)


def to_utf16(text: str, index: int, *, missing_token: bool = False) -> int:
    """The UTF-16 offset of code point ``index`` of ``text`` (what a page's JavaScript indexes by); with
    ``missing_token``, ``len(text) + 1`` (the end of the [missing] token) is one past the text's units."""
    if missing_token and index == len(text) + 1:
        return to_utf16(text, len(text)) + 1
    if not 0 <= index <= len(text):
        raise SpanError(f"code point {index} is outside the text ({len(text)} code points)")
    return index + sum(1 for char in text[:index] if ord(char) > 0xFFFF)


def _pearmut_units(char: str) -> int:
    """How many of Pearmut's character indexes ``char`` takes: a line break none (Pearmut draws it as ``<br>``, not
    as a character), a character beyond the Basic Multilingual Plane two (JavaScript's ``split("")``), else one."""
    return 0 if char == "\n" else 2 if ord(char) > 0xFFFF else 1


def from_pearmut_index(text: str, index: int) -> int:
    """The code point of ``text`` at Pearmut's character ``index`` (its ``start_i`` / ``end_i``: UTF-16 units
    without the line breaks, which Pearmut draws as ``<br>``; ``utils.ts:contentToCharSpans``); an index inside
    a character is its first code point's, past the end one per index (a check's tolerance may reach past its
    text: Pearmut only compares numbers), so the [missing] token after the text is ``len(text)``."""
    units = 0
    for position, char in enumerate(text):
        width = _pearmut_units(char)
        if width and units + width > index:
            return position
        units += width
    return len(text) + index - units


def to_pearmut_index(text: str, index: int) -> int:
    """Pearmut's character index of code point ``index`` of ``text`` (see :func:`from_pearmut_index`); one past the
    text is the [missing] token's."""
    head = text[:index]
    return sum(_pearmut_units(char) for char in head) + max(0, index - len(text))


def from_pearmut(span: Mapping[str, Any], text: str | None = None) -> Span:
    """A span in Pearmut's shape (``{"start_i": 0, "end_i": 5, "severity": "minor", "category": null}``, the end
    inclusive) as a :class:`Span`; SpanError when a key is missing or of the wrong type. Pearmut indexes a text by
    JavaScript's ``split("")``, i.e. by UTF-16 units, leaving out line breaks: with the ``text`` given, its offsets
    are converted to code points (:func:`from_pearmut_index`; they differ after an emoji or a line break); ``end_i``
    one past the text's last index is the [missing] token after it."""
    if not isinstance(span, Mapping):
        raise SpanError(f"a span must be an object with start_i, end_i and severity, got {span!r}"[:200])
    missing = [key for key in ("start_i", "end_i", "severity") if key not in span]
    if missing:
        raise SpanError(f"a span has no {', '.join(missing)}: {dict(span)!r}"[:200])
    start, end = _index(span["start_i"], "start_i"), _index(span["end_i"], "end_i")
    severity, category = span["severity"], span.get("category")
    if not isinstance(severity, str):
        raise SpanError(f"severity must be text, got {severity!r}"[:200])
    if category is not None and not isinstance(category, str):
        raise SpanError(f"category must be text or null, got {category!r}"[:200])
    if text is not None:
        start, end = from_pearmut_index(text, start), from_pearmut_index(text, end)
    return Span(start, end + 1, severity, category or None)


def to_pearmut(span: Span) -> dict[str, Any]:
    """``span`` in Pearmut's shape (``end_i`` inclusive), as its annotation logs hold it."""
    return {"start_i": span.start, "end_i": span.end - 1, "severity": span.severity, "category": span.category}


def _check_category(span: Span, categories: str | Mapping[str, Sequence[str]] | None) -> None:
    category = span.category
    if categories is None:
        if category is not None:
            raise SpanError(f"{span.describe()}: this task has no categories")
        return
    if category is None or not category.strip():
        raise SpanError(f"{span.describe()}: choose a category")
    if categories == FREE:
        if len(category) > MAX_FREE_CATEGORY or "\n" in category:
            raise SpanError(f"{span.describe()}: a category is one line of at most {MAX_FREE_CATEGORY} characters")
        return
    assert isinstance(categories, Mapping)
    top, _, sub = category.partition("/")
    if top not in categories:
        raise SpanError(f"{span.describe()}: category {top!r} is not one of {', '.join(categories)}"[:300])
    subs = categories[top]
    if sub and sub not in subs:
        allowed = ", ".join(subs) if subs else "none"
        raise SpanError(f"{span.describe()}: {top!r} has no subcategory {sub!r} (its subcategories: {allowed})"[:300])
    if not sub and subs:
        raise SpanError(f"{span.describe()}: choose a subcategory of {top!r}: {', '.join(subs)}"[:300])


def check_spans(text: str, spans: Iterable[Span], *, severities: Sequence[str],
                categories: str | Mapping[str, Sequence[str]] | None = None, missing_token: bool = False,
                max_spans: int = 1000) -> list[Span]:
    """The spans of one output, checked against its ``text`` and sorted: each inside the text (code points; with
    ``missing_token`` also the token after it, code point ``len(text)``, on which an omission is marked), none
    empty, none overlapping another, each severity one of ``severities`` and each category allowed
    (``categories``: None for no categories, :data:`FREE` for any typed one, or ``{top: [subcategories]}``).
    SpanError on the first problem."""
    limit = len(text) + (1 if missing_token else 0)
    checked: list[Span] = []
    for span in spans:
        if len(checked) >= max_spans:
            raise SpanError(f"more than {max_spans} spans on one output")
        if not isinstance(span, Span):
            raise SpanError(f"not a span: {span!r}"[:200])
        _index(span.start, "a span's start")
        _index(span.end, "a span's end")
        if not 0 <= span.start < span.end <= limit:
            where = f"the text's {len(text)} characters" + (" and the [missing] token" if missing_token else "")
            raise SpanError(f"{span.describe()} is not within {where}")
        if span.severity not in severities:
            raise SpanError(f"{span.describe()}: severity {span.severity!r} is not one of {', '.join(severities)}"
                            [:300])
        _check_category(span, categories)
        checked.append(span)
    checked.sort(key=lambda span: (span.start, span.end))
    for before, after in itertools.pairwise(checked):
        if after.start < before.end:
            raise SpanError(f"{before.describe()} and {after.describe()} overlap: spans may not overlap")
    return checked


def marked_text(text: str, span: Span) -> str:
    """The characters a span covers (:data:`MISSING_TOKEN` for the token after the text)."""
    inside = text[span.start: min(span.end, len(text))]
    return inside + (MISSING_TOKEN if span.end > len(text) else "")


def char_f1(first: Iterable[Span], second: Iterable[Span]) -> float:
    """Character-level F1 of two annotations of one text: the characters both marked, over the characters each
    marked (2·|A∩B| / (|A| + |B|), severities ignored); 1.0 when neither marked anything (they agree that the
    text has no error). Symmetric, so neither annotation is the reference."""
    a = {c for span in first for c in range(span.start, span.end)}
    b = {c for span in second for c in range(span.start, span.end)}
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


@dataclass(frozen=True, slots=True)
class Expected:
    """A span a tutorial or attention-check answer must contain, as Pearmut's ``validation`` writes it: each of
    ``start`` and ``end`` a (low, high) range of code points (Pearmut's inclusive ``end_i``, so ``end`` is the last
    marked character), or None for any; ``severity`` None for any."""

    start: tuple[int, int] | None
    end: tuple[int, int] | None
    severity: str | None
    #: MQM: the category the span must have ("Accuracy" is met by "Accuracy" and any of its subcategories); None
    #: for any (Pearmut does not check categories: evalkit does when the expectation names one)
    category: str | None = None

    def matches(self, span: Span) -> bool:
        """Whether ``span`` meets this expectation (Pearmut's ``spanMatches``: every given bound, inclusive; and the
        category when one is expected)."""
        last = span.end - 1
        return ((self.start is None or self.start[0] <= span.start <= self.start[1])
                and (self.end is None or self.end[0] <= last <= self.end[1])
                and (self.severity is None or span.severity == self.severity)
                and (self.category is None or span.category == self.category
                     or (span.category or "").startswith(self.category + "/")))

    def describe(self, text: str) -> str:
        """The expectation in words for a feedback message: ``a minor error on "walked"``, ``a major Accuracy/Omission
        error on the [missing] token``."""
        kind = " ".join(x for x in (self.severity, self.category) if x)
        what = f"a {kind} error" if kind else "an error"
        if self.start is None or self.end is None:
            return what
        start, last = sum(self.start) // 2, min(sum(self.end) // 2, len(text) - 1)  # the middle of each tolerance
        if start >= len(text):
            return f"{what} on the {MISSING_TOKEN} token"
        words = text[start: last + 1]
        # a tolerance reaching past a word takes in its space or full stop: not named when there is a word
        words = words.strip(" .,;:!?") or words
        return f"{what} on \"{words}\"" if start <= last else what


def _bounds(value: Any, what: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, list | tuple) and len(value) == 2:
        low, high = _index(value[0], what), _index(value[1], what)
    else:
        low = high = _index(value, what)
    if low > high:
        raise SpanError(f"{what} range [{low}, {high}] is empty")
    return low, high


def expected_spans(value: Any) -> list[Expected]:
    """The ``error_spans`` of a check's expectation in Pearmut's shape (``[{"start_i": [7, 9], "end_i": [12, 14],
    "severity": "minor"}]``; a bound is a number or an inclusive [low, high] range, each key optional) as
    :class:`Expected` spans; SpanError naming what is malformed."""
    if not isinstance(value, list):
        raise SpanError(f"error_spans must be a list of spans, got {value!r}"[:200])
    out = []
    for k, entry in enumerate(value, start=1):
        if not isinstance(entry, Mapping):
            raise SpanError(f"error_spans #{k} must be an object, got {entry!r}"[:200])
        unknown = sorted(set(entry) - {"start_i", "end_i", "severity", "category"})
        if unknown:
            raise SpanError(f"error_spans #{k}: unknown key {unknown[0]!r} (known: start_i, end_i, severity, category)")
        severity = entry.get("severity")
        if severity is not None and not isinstance(severity, str):
            raise SpanError(f"error_spans #{k}: severity must be text, got {severity!r}"[:200])
        category = entry.get("category")
        if category is not None and (not isinstance(category, str) or not category.strip()):
            raise SpanError(f"error_spans #{k}: category must be text, got {category!r}"[:200])
        out.append(Expected(_bounds(entry.get("start_i"), f"error_spans #{k}: start_i"),
                            _bounds(entry.get("end_i"), f"error_spans #{k}: end_i"), severity, category))
    return out


def unmet(expected: Iterable[Expected], spans: Sequence[Span]) -> list[Expected]:
    """The expected spans that no given span meets, in order: empty when the answer passes. As Pearmut decides it
    (each expected span must be met by at least one span given; spans beyond those expected are allowed), but
    on the server, and saying which expectation failed so the feedback can point at it."""
    return [want for want in expected if not any(want.matches(span) for span in spans)]
