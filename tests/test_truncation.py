"""evalkit.truncation: word-boundary cuts and length normalisation."""

from __future__ import annotations

import pytest

from evalkit.rng import Mulberry32
from evalkit.truncation import last_sentence_end, normalise_lengths, truncate_at_word, truncation_factors


def test_text_that_fits_is_unchanged() -> None:
    assert truncate_at_word("Short text.", 11) == "Short text."
    assert truncate_at_word("Short text.", 50) == "Short text."


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("The screen is bright and sharp.", 16, "The screen is..."),      # cut inside 'bright'
    ("The screen is bright and sharp.", 14, "The screen is..."),      # cut right after a word
    ("The screen is bright and sharp.", 13, "The screen is..."),      # cut exactly at word end
    ("Great food, friendly staff.", 12, "Great food..."),             # dangling comma dropped
    ("Great. Really great. Yes.", 21, "Great. Really great..."),      # no '....'
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


def test_a_sentence_end_in_range_is_preferred_to_a_one_word_fragment() -> None:
    """The issue's example: '... is expensive. In...' left a one-word fragment of the next sentence."""
    text = "The screen is sharp and the battery lasts all day, but it is expensive. In the end I kept it anyway."
    limit = text.index("In the end") + len("In")  # the word cut would leave "In"
    assert truncate_at_word(text, limit).endswith("but it is expensive. In...")
    low = int(0.85 * limit)
    out = truncate_at_word(text, limit, min_chars=low)
    assert out == "The screen is sharp and the battery lasts all day, but it is expensive..."
    assert low <= len(out) - 3 <= limit
    # a sentence end below the allowed range is not used: the word cut stays
    assert truncate_at_word(text, limit, min_chars=limit - 1).endswith("expensive. In...")


@pytest.mark.parametrize(("text", "limit", "low", "expected"), [
    ("Great. Really great! And then some more words.", 26, 10, "Great. Really great!..."),   # '!' kept
    ("Great. Really great. And more", 26, 5, "Great. Really great..."),     # the last end in range
    ("It works, e.g. for email. Then some text", 30, 10, "It works, e.g. for email..."),  # 'e.g.' is no end
    ("It works, e.g. for email and text", 30, 10, "It works, e.g. for email and..."),
    ("Version 2.5 is fine and then more", 20, 5, "Version 2.5 is fine..."),   # no whitespace after '.'
])
def test_sentence_end_cuts(text: str, limit: int, low: int, expected: str) -> None:
    assert truncate_at_word(text, limit, min_chars=low) == expected


def test_last_sentence_end_bounds_and_bad_input() -> None:
    text = "One. Two three. Four five six. Seven"
    assert last_sentence_end(text, 0, len(text)) == len("One. Two three. Four five six.")
    assert last_sentence_end(text, 0, 20) == len("One. Two three.")
    assert last_sentence_end(text, 16, 20) is None
    assert last_sentence_end("", 0, 10) is None
    assert last_sentence_end(text, 10, 5) is None  # an empty range
    with pytest.raises(ValueError):
        truncate_at_word(text, -1, min_chars=0)


def test_normalise_lengths_with_low_cuts_at_sentences_and_stays_in_range() -> None:
    texts = ["The food was good and the service was slow but friendly to us. We came back twice.",
             "Rooms are clean and quiet. The staff helped with everything we asked. Good value.",
             "Nice place overall. Breakfast was fine and the view was great from the top floor."]
    shortest = min(len(t) for t in texts)
    low = int(0.85 * shortest)
    rng = Mulberry32(11)
    at_sentence = 0
    for _ in range(200):
        factors = truncation_factors(3, rng, 0.85, 1.0)
        for text, f, out in zip(texts, factors, normalise_lengths(texts, factors, 0.85), strict=True):
            body, target = out[:-3], int(f * shortest)
            assert out.endswith("...") and text.startswith(body) and len(body) <= target
            end = last_sentence_end(text, low, target)
            if end is not None:  # a sentence end in range: cut there, no fragment of the next sentence
                assert body == text[:end].rstrip(".")
                at_sentence += 1
    assert at_sentence > 0
