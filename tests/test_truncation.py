"""evalkit.truncation: word-boundary cuts and length normalisation."""

from __future__ import annotations

import pytest

from evalkit.rng import Mulberry32
from evalkit.truncation import (
    MIN_FRAGMENT_WORDS,
    last_sentence_end,
    normalise_lengths,
    truncate_at_word,
    truncation_factors,
)


def test_text_that_fits_is_unchanged() -> None:
    assert truncate_at_word("Short text.", 11) == "Short text."
    assert truncate_at_word("Short text.", 50) == "Short text."


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("The screen is bright and sharp.", 16, "The screen is..."),      # cut inside 'bright'
    ("The screen is bright and sharp.", 14, "The screen is..."),      # cut right after a word
    ("The screen is bright and sharp.", 13, "The screen is..."),      # cut exactly at word end
    ("Great food, friendly staff.", 12, "Great food..."),             # dangling comma dropped
    ("Great. Really great. Yes.", 21, "Great. Really..."),            # never a complete sentence before '...'
    ("Supercalifragilistic word", 5, "Super..."),                    # one long word: hard cut
    ("Two\nlines here", 6, "Two..."),
])
def test_truncate_at_word(text: str, limit: int, expected: str) -> None:
    out = truncate_at_word(text, limit)
    assert out == expected
    body = out[: -len("...")]
    assert len(body) <= limit
    assert text.startswith(body)


def test_truncate_never_splits_a_word_property() -> None:
    text = ("I bought this laptop for work and the battery easily lasts a full day, "
            "although the speakers are tinny and the webcam is grainy in low light.")
    words = set(text.replace(",", "").replace(".", "").split())
    for limit in range(4, len(text)):
        out = truncate_at_word(text, limit)
        assert out.endswith("...")
        body = out[:-3]
        assert len(body) <= limit and text.startswith(body)
        last = body.split()[-1].rstrip(",.")
        assert last in words, (limit, out)
    with pytest.raises(ValueError):
        truncate_at_word(text, -1)


def test_normalise_lengths_targets_the_shortest_text() -> None:
    texts = ["word " * 40, "word " * 30, "word " * 25]
    texts = [t.strip() + "." for t in texts]
    shortest = min(len(t) for t in texts)
    rng = Mulberry32(1)
    for _ in range(200):
        factors = truncation_factors(3, rng, 0.85, 1.0)
        assert all(0.85 <= f < 1.0 for f in factors)
        out = normalise_lengths(texts, factors)
        for text, f, o in zip(texts, factors, out, strict=True):
            assert o.endswith("...")
            body = o[:-3]
            assert len(body) <= int(f * shortest)
            assert len(body) >= int(f * shortest) - len("word ")  # at most one word lost
            assert text.startswith(body)


def test_which_text_looks_longest_varies() -> None:
    """With equal-length inputs the longest output is sometimes each one."""
    texts = ["alpha beta gamma delta " * 6, "one two three four five " * 5 + "six", "red green blue pink " * 7]
    rng = Mulberry32(3)
    longest = set()
    for _ in range(300):
        out = normalise_lengths(texts, truncation_factors(3, rng))
        longest.add(max(range(3), key=lambda k: len(out[k])))
    assert longest == {0, 1, 2}


def test_normalise_lengths_validates() -> None:
    assert normalise_lengths([], []) == []
    with pytest.raises(ValueError):
        normalise_lengths(["a"], [0.9, 0.9])


def test_no_one_word_fragment_and_no_complete_sentence_before_the_ellipsis() -> None:
    """The issue's example: '... is expensive. In...' left a one-word fragment of the next sentence."""
    text = "The screen is sharp and the battery lasts all day, but it is expensive. In the end I kept it anyway."
    limit = text.index("In the end") + len("In")  # a plain word cut would leave "In"
    assert truncate_at_word(text, limit) == "The screen is sharp and the battery lasts all day, but it is..."
    at_end = text.index(" In the end")  # a plain word cut would end with the complete sentence
    assert truncate_at_word(text, at_end) == "The screen is sharp and the battery lasts all day, but it is..."
    three_in = text.index(" I kept")  # three words into the next sentence: kept as it is
    assert truncate_at_word(text, three_in) == text[:three_in] + "..."


def test_every_cut_lands_inside_a_sentence_property() -> None:
    text = ("Good value. The keyboard is firm and quiet, e.g. for typing at night. Battery lasts a day! "
            "Speakers are tinny. Webcam is grainy in low light, sadly.")
    for limit in range(30, len(text)):  # below that the "never cut away half" guard may keep a short text
        out = truncate_at_word(text, limit)
        body = out[:-3]
        assert out.endswith("...") and text.startswith(body) and limit // 2 <= len(body) <= limit, (limit, out)
        # never a complete sentence before the ellipsis ("e.g." cut to "e.g..." is no sentence end)
        assert last_sentence_end(text, len(body) + 1, len(body) + 3) is None, (limit, out)
        end = last_sentence_end(body + " ", 1, len(body))
        if end is not None:
            assert len(body[end:].split()) >= MIN_FRAGMENT_WORDS, (limit, out)


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("It works, e.g. for email and then some text", 18, "It works, e.g. for..."),  # 'e.g.' is no sentence end
    ("Version 2.5 is fine and then more", 20, "Version 2.5 is fine..."),         # no whitespace after '.'
    ("Great! Really good and more words", 25, "Great! Really good and..."),     # three words in: kept
])
def test_what_counts_as_a_sentence_end(text: str, limit: int, expected: str) -> None:
    assert truncate_at_word(text, limit) == expected


def test_last_sentence_end_bounds() -> None:
    text = "One. Two three. Four five six. Seven"
    assert last_sentence_end(text, 0, len(text)) == len("One. Two three. Four five six.")
    assert last_sentence_end(text, 0, 20) == len("One. Two three.")
    assert last_sentence_end(text, 16, 20) is None
    assert last_sentence_end("", 0, 10) is None
    assert last_sentence_end(text, 10, 5) is None  # an empty range
