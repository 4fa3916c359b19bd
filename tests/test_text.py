"""evalkit.text: headings without doubled punctuation, control characters, CSV injection."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from evalkit.text import csv_safe, join_title, safe_cell, strip_controls


@pytest.mark.parametrize(("title", "suffix", "expected"), [
    ("Which sounds more natural?", "win rates", "Which sounds more natural? Win rates"),
    ("Spot it!", "picked as r", "Spot it! Picked as r"),
    ("Rate a paper.", "mean score (1–5)", "Rate a paper. Mean score (1–5)"),
    ("Natural", "win rates", "Natural: win rates"),
    ("Natural:", "win rates", "Natural: win rates"),
    ("Natural: ", "win rates", "Natural: win rates"),
    ("Natural -", "win rates", "Natural: win rates"),
    ("", "win rates", "Win rates"),
    ("Natural", "", "Natural"),
])
def test_join_title_never_doubles_punctuation(title: str, suffix: str, expected: str) -> None:
    assert join_title(title, suffix) == expected
    assert "?:" not in join_title(title, suffix) and "::" not in join_title(title, suffix)


def test_strip_controls_keeps_text_and_line_breaks() -> None:
    evil = "Bob\x1b[31mRED\x1b[0m\x00 \u202eevil\u202c\x7f\x9b"
    assert strip_controls(evil) == "Bob[31mRED[0m evil"
    assert strip_controls("line one\nline two\tend") == "line one\nline two\tend"
    assert strip_controls("Zoë, 東京, مرحبا") == "Zoë, 東京, مرحبا"


@pytest.mark.parametrize(("cell", "expected"), [
    ('=HYPERLINK("http://x","click")', '\'=HYPERLINK("http://x","click")'),
    ("@SUM(1+1)", "'@SUM(1+1)"),
    ("+1+cmd", "'+1+cmd"),
    ("-2+3", "'-2+3"),
    ("\t=1", "'\t=1"),
    ("\r=1", "'\r=1"),
    ("\x00=1", "'=1"),  # a NUL in front does not hide the formula
    ("-40", "-40"),  # a slider response stored as text: a plain number, read as a number
    ("+3.5e2", "+3.5e2"),
    ("plain", "plain"),
    ("a=b", "a=b"),
])
def test_safe_cell_applies_owasps_rule(cell: str, expected: str) -> None:
    assert safe_cell(cell) == expected


def test_csv_safe_touches_text_columns_only() -> None:
    frame = pd.DataFrame({
        "name": ["=1+1", "ok", None, "@x"],
        "cat": pd.Categorical(["-cmd", "a", "a", "-cmd"]),
        "score": [-3, 4, 5, -1],
        "value": [-0.5, np.nan, 2.0, 1.0],
        "count": pd.array([-2, None, 3, 4], dtype="Int64"),
        "flag": [True, False, True, False],
    })
    out = csv_safe(frame)
    assert list(out["name"]) == ["'=1+1", "ok", None, "'@x"]
    assert list(out["cat"]) == ["'-cmd", "a", "a", "'-cmd"]
    for col in ("score", "value", "count", "flag"):
        pd.testing.assert_series_equal(out[col], frame[col])
    back = pd.read_csv(io.StringIO(out.to_csv(index=False)))
    assert list(back["score"]) == [-3, 4, 5, -1] and back["score"].dtype.kind == "i"
    assert frame["name"].iloc[0] == "=1+1"  # the input is not changed


@pytest.mark.parametrize("hostile", ["*walked*", "[link](javascript:alert(1))", "![img](http://x/y.png)", "<b>x</b>",
                                     "x\r===", "a\n# heading", "`code`", "&lt;b&gt;", "1. list", "- item", "__u__",
                                     "|a|b|\n|-|-|", "$x^2$", ":smile:", "~~gone~~"])
def test_markdown_literal_shows_untrusted_text_as_typed(hostile: str) -> None:
    """Rendered by a CommonMark implementation (Streamlit renders Markdown by CommonMark's rules), the escaped text is
    one paragraph of the characters typed (line breaks as spaces): no emphasis, link, image, HTML, heading, list,
    code or entity."""
    import html

    from markdown_it import MarkdownIt

    from evalkit.text import markdown_literal

    rendered = MarkdownIt("commonmark").render(markdown_literal(hostile)).strip()
    shown = " ".join(hostile.replace("\r", "\n").split("\n"))
    assert rendered == f"<p>{html.escape(shown, quote=False)}</p>", rendered
