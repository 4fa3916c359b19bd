"""Word-boundary truncation and length normalisation of the texts shown together.

Length is the easiest tell in a "which one is real?" question. After length
matching at selection (see :mod:`evalkit.sampling`), every text of a triplet or
pair is cut, with ``...`` appended, to a target drawn per text uniformly from
``low..high`` of the *shortest* text's length. The cut is at the last sentence
end between ``low`` x shortest and the target when there is one (so no
one-word fragment of a next sentence is left), otherwise at a word boundary.
Either way the text ends in ``...`` (a sentence's final ``.`` merges into it),
so every text ends the same way and which source looks longest varies from
question to question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .rng import Mulberry32

ELLIPSIS = "..."
_TRAILING = " \t\r\n,;:.-–—(\"'"
# A sentence end: '.', '!' or '?' (possibly repeated, possibly followed by a closing quote or bracket),
# then whitespace. Common abbreviations ("e.g. ", "Mr. ") are not sentence ends.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|approx|incl|Mr|Mrs|Ms|Dr|St|No)|\b[A-Za-z])\.$")


def last_sentence_end(text: str, low: int, high: int) -> int | None:
    """The largest ``n`` with ``low <= n <= high`` such that ``text[:n]`` ends a sentence, or None.

    A sentence ends at ``.``, ``!`` or ``?`` (and any closing quote or bracket
    right after it) followed by whitespace; an abbreviation such as ``e.g.`` or
    a single initial does not end one.
    """
    best = None
    for match in _SENTENCE_END.finditer(text, 0, min(len(text), high + 1)):
        end = match.end()
        if end > high:
            break
        if end >= low and not _ABBREVIATION.search(text[:match.start() + 1]):
            best = end
    return best


def truncate_at_word(text: str, max_chars: int, ellipsis: str = ELLIPSIS, *, min_chars: int | None = None) -> str:
    """Cut ``text`` to at most ``max_chars`` characters and append ``ellipsis``.

    A text that already fits is returned unchanged. With ``min_chars``, a
    sentence end between ``min_chars`` and ``max_chars`` characters is preferred
    (the last one). Otherwise the cut is at a word boundary and never splits a
    word (unless the first word alone is longer than ``max_chars``). Trailing
    spaces and dangling punctuation (``,;:.-``) before the ellipsis are dropped,
    so a sentence's final period becomes the ellipsis (``"... is expensive..."``).
    The returned body (without the ellipsis) is never longer than ``max_chars``.
    """
    if max_chars < 0:
        raise ValueError("max_chars must be >= 0")
    if len(text) <= max_chars:
        return text
    sentence = None if min_chars is None else last_sentence_end(text, max(min_chars, 1), max_chars)
    if sentence is not None:
        cut = text[:sentence]
    else:
        cut = text[:max_chars]
        if not text[max_chars].isspace():
            # We are inside a word: go back to the last whitespace, if there is one.
            space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
            if space > 0:
                cut = cut[:space]
    cut = cut.rstrip(_TRAILING)
    if not cut:  # nothing sensible left (e.g. max_chars == 0): hard cut
        cut = text[:max_chars]
    return cut + ellipsis


def truncation_factors(n: int, rng: Mulberry32, low: float = 0.85, high: float = 1.0) -> list[float]:
    """``n`` factors drawn uniformly from [low, high) with ``rng`` (one draw each, in order)."""
    return [low + (high - low) * rng.random() for _ in range(n)]


def normalise_lengths(texts: Sequence[str], factors: Sequence[float], low: float | None = None) -> list[str]:
    """Truncate each text to ``floor(factor * shortest length)`` characters.

    With ``low`` (the lower bound the factors were drawn from), a text is cut
    at a sentence end when one lies between ``floor(low * shortest)`` and its
    target; otherwise at a word boundary. No random draw happens here.
    """
    if len(texts) != len(factors):
        raise ValueError("one factor per text is needed")
    if not texts:
        return []
    shortest = min(len(t) for t in texts)
    floor = None if low is None else int(low * shortest)
    return [truncate_at_word(t, int(f * shortest), min_chars=floor) for t, f in zip(texts, factors, strict=True)]
