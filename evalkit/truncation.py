"""Word-boundary truncation and length normalisation of the texts shown together.

Length is the easiest tell in a "which one is real?" question. After length
matching at selection (see :mod:`evalkit.sampling`), every text of a triplet or
pair is cut, at a word boundary and with ``...`` appended, to a target drawn
per text uniformly from ``low..high`` of the *shortest* text's length. So every
text ends in ``...`` and which source looks longest varies from question to
question.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rng import Mulberry32

ELLIPSIS = "..."
_TRAILING = " \t\r\n,;:.-–—(\"'"


def truncate_at_word(text: str, max_chars: int, ellipsis: str = ELLIPSIS) -> str:
    """Cut ``text`` to at most ``max_chars`` characters at a word boundary and append ``ellipsis``.

    A text that already fits is returned unchanged. The cut never splits a word
    (unless the first word alone is longer than ``max_chars``); trailing spaces
    and dangling punctuation (``,;:.-``) before the ellipsis are dropped. The
    returned body (without the ellipsis) is never longer than ``max_chars``.
    """
    if max_chars < 0:
        raise ValueError("max_chars must be >= 0")
    if len(text) <= max_chars:
        return text
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


def normalise_lengths(texts: Sequence[str], factors: Sequence[float]) -> list[str]:
    """Truncate each text to ``floor(factor * shortest length)`` characters at a word boundary."""
    if len(texts) != len(factors):
        raise ValueError("one factor per text is needed")
    if not texts:
        return []
    shortest = min(len(t) for t in texts)
    return [truncate_at_word(t, int(f * shortest)) for t, f in zip(texts, factors, strict=True)]
