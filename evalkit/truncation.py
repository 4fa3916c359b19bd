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

Floor: core (``.importlinter``). May import :mod:`evalkit.rng` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .rng import Mulberry32

ELLIPSIS = "..."
#: A cut lands at least this many words into a sentence (never right after a sentence end, never 1-2 words in).
MIN_FRAGMENT_WORDS = 3
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


def truncate_at_word(text: str, max_chars: int, ellipsis: str = ELLIPSIS, *,
                     min_fragment_words: int = MIN_FRAGMENT_WORDS) -> str:
    """Cut ``text`` to at most ``max_chars`` characters at a word boundary and append ``ellipsis``.

    A text that already fits is returned unchanged. The cut never splits a word
    (unless the first word alone is longer than ``max_chars``); trailing spaces
    and dangling punctuation before the ellipsis are dropped. The cut always
    lands inside a sentence, at least ``min_fragment_words`` words into it:
    "... is expensive. In" and "... is expensive." become "... is...". So no
    shown text ends with a one-word fragment, and none with a complete sentence
    (see :func:`normalise_lengths` for why not cut *at* the sentence end). The
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
    cut = cut.rstrip()
    while min_fragment_words > 0:
        end = last_sentence_end(cut + " ", 1, len(cut))
        if end is None or len(cut[end:].split()) >= min_fragment_words:
            break
        shorter = cut[:end].rstrip().rsplit(None, 1)[0] if len(cut[:end].split()) > 1 else ""
        if len(shorter) < max_chars // 2:  # keep the length normalisation: never cut away half the target
            break
        cut = shorter
    cut = cut.rstrip(_TRAILING)
    if not cut:  # nothing sensible left (e.g. max_chars == 0): hard cut
        cut = text[:max_chars]
    return cut + ellipsis


def truncation_factors(n: int, rng: Mulberry32, low: float = 0.85, high: float = 1.0) -> list[float]:
    """``n`` factors drawn uniformly from [low, high) with ``rng`` (one draw each, in order)."""
    return [low + (high - low) * rng.random() for _ in range(n)]


def normalise_lengths(texts: Sequence[str], factors: Sequence[float]) -> list[str]:
    """Truncate each text to ``floor(factor * shortest length)`` characters, inside a sentence.

    Every cut text ends mid-sentence, at least ``MIN_FRAGMENT_WORDS`` words in
    (see :func:`truncate_at_word`), whatever its source. Cutting at a sentence
    end when one is in range was tried and measured: sources differ in how long
    their sentences are, so a complete sentence before "..." became a tell (on
    the demo study, texts ending in a complete sentence: real 10 %, cera 27 %,
    heuristic 18 %; plain word-boundary cuts already gave 5 / 11 / 8 %). Cutting
    inside a sentence everywhere makes that 0 % for every source and removes
    the "... expensive. In..." fragments. No random draw happens here.
    """
    if len(texts) != len(factors):
        raise ValueError("one factor per text is needed")
    if not texts:
        return []
    shortest = min(len(t) for t in texts)
    return [truncate_at_word(t, int(f * shortest)) for t, f in zip(texts, factors, strict=True)]
