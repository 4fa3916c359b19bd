"""evalkit.spans: code-point offsets against the browser's UTF-16 ones (emoji, combining accents, right-to-left
text), Pearmut's span shape, the server's check of hostile spans, and character-level F1."""

from __future__ import annotations

import pytest

from evalkit.spans import (
    FREE,
    MISSING_TOKEN,
    Expected,
    Span,
    SpanError,
    char_f1,
    check_spans,
    expected_spans,
    from_pearmut,
    from_utf16,
    marked_text,
    to_pearmut,
    to_utf16,
    unmet,
)

SEVERITIES = ("minor", "major")
EMOJI = "Great 😀 dog ran"  # the emoji is one code point, two UTF-16 units
ACCENT = "cafe\u0301 was closed"  # e + a combining acute: two code points, two UTF-16 units


def test_utf16_offsets_after_an_emoji_become_code_points_and_back() -> None:
    dog_utf16 = len("Great 😀 ".encode("utf-16-le")) // 2  # what the browser's selectionStart says: 9
    assert dog_utf16 == 9 and EMOJI.index("dog") == 8
    assert from_utf16(EMOJI, dog_utf16) == 8 and to_utf16(EMOJI, 8) == 9
    span = Span(from_utf16(EMOJI, 9), from_utf16(EMOJI, 12), "minor")
    assert marked_text(EMOJI, span) == "dog"
    for index in range(len(EMOJI) + 1):  # the two conversions are inverse at every character boundary
        assert from_utf16(EMOJI, to_utf16(EMOJI, index)) == index


def test_an_offset_inside_a_surrogate_pair_or_past_the_end_is_refused() -> None:
    with pytest.raises(SpanError, match="inside character 6"):
        from_utf16(EMOJI, 7)  # between the emoji's two halves
    with pytest.raises(SpanError, match="past the end"):
        from_utf16(EMOJI, 99)
    for hostile in (-1, True, 2.5, "3", None):
        with pytest.raises(SpanError):
            from_utf16(EMOJI, hostile)
    with pytest.raises(SpanError, match="outside the text"):
        to_utf16(EMOJI, len(EMOJI) + 1)


def test_a_combining_accent_and_right_to_left_text_keep_their_characters() -> None:
    word = Span(0, ACCENT.index(" "), "minor")  # "café" as stored: five code points
    assert marked_text(ACCENT, word) == "cafe\u0301" and to_utf16(ACCENT, word.end) == 5
    hebrew = "הכלב רץ החוצה"  # right to left: offsets are still in logical (stored) order
    dog = Span(0, 4, "major")
    assert marked_text(hebrew, dog) == "הכלב" and from_utf16(hebrew, 4) == 4


def test_pearmut_spans_have_an_inclusive_end() -> None:
    """Pearmut's ESA tutorial marks "walked" in "The dog walked outside." with start_i 8 and end_i 13."""
    text = "The dog walked outside."
    span = from_pearmut({"start_i": 8, "end_i": 13, "severity": "minor", "category": None})
    assert span == Span(8, 14, "minor") and marked_text(text, span) == "walked"
    assert to_pearmut(span) == {"start_i": 8, "end_i": 13, "severity": "minor", "category": None}
    assert from_pearmut({"start_i": 0, "end_i": 2, "severity": "major", "category": "Accuracy/Omission"}).category \
        == "Accuracy/Omission"
    for broken in ({"start_i": 0, "severity": "minor"}, {"start_i": "0", "end_i": 2, "severity": "minor"},
                   {"start_i": 0, "end_i": 2, "severity": 3},
                   {"start_i": 0, "end_i": 2, "severity": "m", "category": 1}, [0, 2, "minor"]):
        with pytest.raises(SpanError):
            from_pearmut(broken)


def test_check_spans_sorts_and_accepts_spans_that_touch() -> None:
    text = "The dog walked outside."
    spans = check_spans(text, [Span(8, 14, "minor"), Span(0, 3, "major"), Span(3, 4, "minor")], severities=SEVERITIES)
    assert [(s.start, s.end) for s in spans] == [(0, 3), (3, 4), (8, 14)]
    assert check_spans(text, [], severities=SEVERITIES) == []


@pytest.mark.parametrize(("spans", "message"), [
    ([Span(0, 5, "minor"), Span(4, 8, "major")], r"span 0-4 \(minor\) and span 4-7 \(major\) overlap"),
    ([Span(3, 3, "minor")], "is not within"),
    ([Span(-1, 2, "minor")], "is not within"),
    ([Span(20, 24, "minor")], "is not within the text's 23 characters"),
    ([Span(0, 3, "critical")], "severity 'critical' is not one of minor, major"),
    ([Span(0, 3, "minor", "Accuracy")], "this task has no categories"),
    ([Span(True, 3, "minor")], "must be a whole number"),
    ([(0, 3, "minor")], "not a span"),
])
def test_check_spans_refuses_what_a_page_must_not_send(spans: list[Span], message: str) -> None:
    with pytest.raises(SpanError, match=message):
        check_spans("The dog walked outside.", spans, severities=SEVERITIES)


def test_the_missing_token_takes_an_omission_after_the_text() -> None:
    text = "The dog ran."
    omission = Span(len(text), len(text) + 1, "major")
    assert check_spans(text, [omission], severities=SEVERITIES, missing_token=True) == [omission]
    assert marked_text(text, omission) == MISSING_TOKEN
    with pytest.raises(SpanError, match=r"not within the text's 12 characters$"):
        check_spans(text, [omission], severities=SEVERITIES)


def test_categories_a_taxonomy_free_text_or_none() -> None:
    taxonomy = {"Accuracy": ["Mistranslation", "Omission"], "Fluency": []}
    ok = [Span(0, 3, "minor", "Accuracy/Omission"), Span(4, 7, "major", "Fluency")]
    assert check_spans("The dog ran.", ok, severities=SEVERITIES, categories=taxonomy) == ok
    for category, message in (("Style", "not one of Accuracy, Fluency"), ("Accuracy/Grammar", "no subcategory"),
                              ("Accuracy", "choose a subcategory of 'Accuracy'"), (None, "choose a category"),
                              ("Fluency/Spelling", r"its subcategories: none")):
        with pytest.raises(SpanError, match=message):
            check_spans("The dog ran.", [Span(0, 3, "minor", category)], severities=SEVERITIES, categories=taxonomy)
    assert check_spans("The dog ran.", [Span(0, 3, "minor", "my own")], severities=SEVERITIES, categories=FREE)
    with pytest.raises(SpanError, match="one line of at most 100"):
        check_spans("The dog ran.", [Span(0, 3, "minor", "x" * 101)], severities=SEVERITIES, categories=FREE)


def test_too_many_spans_are_refused() -> None:
    text = "x" * 3000
    with pytest.raises(SpanError, match="more than 1000 spans"):
        check_spans(text, [Span(i, i + 1, "minor") for i in range(1001)], severities=SEVERITIES)


def test_character_f1_by_hand() -> None:
    a = [Span(0, 4, "minor")]  # characters 0-3
    b = [Span(2, 6, "major")]  # characters 2-5: two shared, 2·2 / (4 + 4)
    assert char_f1(a, b) == pytest.approx(0.5) and char_f1(b, a) == char_f1(a, b)
    assert char_f1([], []) == 1.0 and char_f1(a, []) == 0.0 and char_f1(a, a) == 1.0


def test_expected_spans_are_decided_as_pearmut_decides_them_with_what_failed_named() -> None:
    """Pearmut's rule (``spanMatches``): every expected span must be met by at least one span given; bounds are
    inclusive ranges on start_i and the inclusive end_i; spans beyond those expected are allowed."""
    text = "The dog walked outside."
    want = expected_spans([{"start_i": [7, 9], "end_i": [12, 14], "severity": "minor"}])
    assert want == [Expected((7, 9), (12, 14), "minor")]
    assert want[0].describe(text) == 'a minor error on "walked"'
    walked = Span(8, 14, "minor")
    assert unmet(want, [walked]) == [] and unmet(want, [Span(0, 3, "major"), walked]) == []
    assert unmet(want, [Span(8, 14, "major")]) == want  # the severity is wrong
    assert unmet(want, [Span(8, 16, "minor")]) == want  # ends two characters late, outside the tolerance
    assert unmet(want, []) == want and unmet([], []) == []
    assert unmet(expected_spans([{"severity": "major"}]), [Span(3, 4, "major")]) == []  # any place, that severity
    for broken, message in (({"start_i": [9, 7]}, "range .* is empty"), ({"end": 3}, "unknown key 'end'"),
                            ("walked", "must be a list"), ([{"start_i": "7"}], "whole number")):
        with pytest.raises(SpanError, match=message):
            expected_spans(broken if isinstance(broken, list | str) else [broken])


def test_pearmut_offsets_are_utf16_units_and_convert_with_the_text() -> None:
    """Pearmut splits a text with JavaScript's split(""): after an emoji its offsets are one more than the code
    points'."""
    span = from_pearmut({"start_i": 9, "end_i": 11, "severity": "minor"}, EMOJI)  # "dog" in UTF-16 units
    assert (span.start, span.end) == (8, 11) and marked_text(EMOJI, span) == "dog"
    assert from_pearmut({"start_i": 9, "end_i": 11, "severity": "minor"}) == Span(9, 12, "minor")  # no text: as is


@pytest.mark.shared_data
def test_pearmuts_esa_tutorial_expectations_read_as_pearmut_reads_them() -> None:
    """Pearmut's own ESA tutorial (../shared/data/pearmut/tutorials/esa_deen.json): its expected spans, read with
    the inclusive end_i, cover the words its instructions name; an answer marking them passes, one missing them or
    with the wrong severity fails, and its [missing] expectation is the token after the text (code point len)."""
    import json

    from tests.helpers import SHARED_DATA

    campaign = json.loads((SHARED_DATA / "pearmut" / "tutorials" / "esa_deen.json").read_text(encoding="utf-8"))
    def flat(node: object) -> list[dict]:  # a task's items, and a document's segments, are nested lists
        return [leaf for child in node for leaf in flat(child)] if isinstance(node, list) else [node]  # type: ignore[union-attr]

    items = {item["item_id"]: item for item in flat(campaign["data"])}
    checked = 0
    for item in items.values():
        for model, rule in item["validation"].items():
            text, want = item["tgt"][model], expected_spans(rule["error_spans"])
            answer = [Span(sum(w.start) // 2, sum(w.end) // 2 + 1, w.severity or "minor") for w in want]
            check_spans(text, answer, severities=("minor", "major"), missing_token=True)
            assert unmet(want, answer) == []
            if want:
                checked += 1
                assert unmet(want, []) == want
                flipped = [Span(s.start, s.end, "major" if s.severity == "minor" else "minor") for s in answer]
                assert unmet(want, flipped) == want
    assert checked == 4  # walked, stayed inside, [missing], the attention check's wrong location
    walked, stayed = (expected_spans(items[f"deen_#_tutorial_#_{k}"]["validation"]["model-tutorial"]["error_spans"])
                      for k in (2, 3))
    assert walked[0].describe("The dog walked outside.") == 'a minor error on "walked"'
    assert stayed[0].describe("The dog stayed inside.") == 'a major error on "stayed inside"'
    missing = items["deen_#_tutorial_#_5"]
    token = expected_spans(missing["validation"]["model-tutorial"]["error_spans"])[0]
    assert token.start == (len(missing["tgt"]["model-tutorial"]),) * 2  # the [missing] token after the text


def test_pearmuts_indexes_leave_out_line_breaks_and_count_emoji_twice() -> None:
    """Pearmut draws a line break as <br>, not as a character, and indexes by JavaScript's split(""): its index of
    "cd" in "ab\ncd" is 2, of "x" after "👍\n" 2; the [missing] token is one past its last index."""
    from evalkit.spans import from_pearmut_index, to_pearmut_index

    text = "ab\ncd 👍\nx"
    assert [to_pearmut_index(text, text.index(c)) for c in "abcdx"] == [0, 1, 2, 3, 7]
    assert [from_pearmut_index(text, i) for i in (0, 1, 2, 3, 4, 5, 6, 7)] == [0, 1, 3, 4, 5, 6, 6, 8]
    assert to_pearmut_index(text, len(text)) == 8 and from_pearmut_index(text, 8) == len(text)  # [missing]
    assert from_pearmut({"start_i": 2, "end_i": 3, "severity": "minor"}, text) == Span(3, 5, "minor")
    assert from_pearmut({"start_i": 8, "end_i": 8, "severity": "major"}, text) == Span(len(text), len(text) + 1,
                                                                                        "major")
    for start in range(len(text)):  # every span there and back
        for end in range(start + 1, len(text) + 2):
            if "\n" in text[start:start + 1] or "\n" in text[end - 1:end]:
                continue  # (a span cannot start or end on a line break in Pearmut: it is not a character there)
            there = {"start_i": to_pearmut_index(text, start), "end_i": to_pearmut_index(text, end) - 1,
                     "severity": "minor"}
            assert from_pearmut(there, text) == Span(start, end, "minor"), (start, end, there)


def test_utf16_offsets_agree_with_from_utf16_everywhere() -> None:
    from evalkit.spans import Utf16Offsets

    offsets = Utf16Offsets(EMOJI)
    units = len(EMOJI.encode("utf-16-le")) // 2
    for offset in [*range(-2, units + 3), "3", None, True, 2.0]:
        for token in (False, True):
            try:
                want = from_utf16(EMOJI, offset, missing_token=token)
            except SpanError as exc:
                with pytest.raises(SpanError) as got:
                    offsets.code_point(offset, missing_token=token)
                assert str(got.value).split(" ")[0] == str(exc).split(" ")[0]
            else:
                assert offsets.code_point(offset, missing_token=token) == want
