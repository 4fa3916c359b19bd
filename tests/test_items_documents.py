"""Items files' suggested error spans (``error_spans``, Pearmut's shape) and documents (``segments``, or a line that
is Pearmut's list of items): loaded as code-point spans and segments; every broken one named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.items import SEGMENT_JOIN, ItemError, load_items
from evalkit.spans import Span


def write(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    return path


def error(tmp_path: Path, *lines: Any) -> str:
    with pytest.raises(ItemError) as info:
        load_items(write(tmp_path, *lines))
    return str(info.value)


def test_suggested_spans_load_as_code_points_after_an_emoji(tmp_path: Path) -> None:
    text = "Great 👍 dog runned away"
    start16 = len(text[:text.index("runned")].encode("utf-16-le")) // 2  # Pearmut's JavaScript index
    item = {"id": "a", "src": "Toller Hund", "tgt": {"m": text, "n": "ok"},
            "error_spans": {"m": [{"start_i": start16, "end_i": start16 + 5, "severity": "major", "category": None}]}}
    [loaded] = load_items(write(tmp_path, item))
    [span] = loaded.error_spans["m"]
    assert text[span.start:span.end] == "runned"  # one code point earlier than the UTF-16 index
    assert span == Span(text.index("runned"), text.index("runned") + 6, "major")
    assert "n" not in loaded.error_spans and loaded.segments == ()


@pytest.mark.parametrize(("spans", "says"), [
    ({"zz": []}, "system 'zz' has no output in this item"),
    ({"m": {"start_i": 0}}, "system 'm': must be a list of spans, got an object"),
    ({"m": [{"start_i": 0, "end_i": 99, "severity": "minor"}]}, "is not within the text's 5 characters"),
    ({"m": [{"start_i": 0, "end_i": 2, "severity": "minor"}, {"start_i": 2, "end_i": 3, "severity": "major"}]},
     "overlap"),
    ({"m": [{"end_i": 2, "severity": "minor"}]}, "has no start_i"),
    ({"m": ["x"]}, "a span must be an object, got a string"),
    ([1], "must be an object mapping system names to lists of spans, got an array"),
])
def test_broken_suggestions_are_named(tmp_path: Path, spans: Any, says: str) -> None:
    message = error(tmp_path, {"id": "a", "outputs": {"m": "hello"}, "error_spans": spans})
    assert message.startswith(f"{tmp_path / 'items.jsonl'}, line 1: key 'error_spans': ") and says in message, message


def test_a_document_joins_its_segments_and_keeps_each(tmp_path: Path) -> None:
    doc = {"id": "d1", "segments": [
        {"input": "Eins.", "outputs": {"m": "One.", "n": "Won."}, "error_spans": {"n": [
            {"start_i": 0, "end_i": 2, "severity": "minor"}]}},
        {"src": "Zwei.", "tgt": {"m": "Two.", "n": "To."}, "ref": "Two."}]}
    [item] = load_items(write(tmp_path, doc))
    assert [s.input for s in item.segments] == ["Eins.", "Zwei."]
    assert item.outputs == {"m": f"One.{SEGMENT_JOIN}Two.", "n": f"Won.{SEGMENT_JOIN}To."}
    assert item.input == f"Eins.{SEGMENT_JOIN}Zwei." and item.segments[1].reference == "Two."
    assert item.segments[0].error_spans["n"] == (Span(0, 3, "minor"),) and not item.segments[1].error_spans


def test_pearmuts_document_line_is_one_item(tmp_path: Path) -> None:
    line = [{"item_id": "doc_#_1", "src": "A.", "tgt": {"m": "B."}},
            {"item_id": "doc_#_2", "src": "C.", "tgt": {"m": "D."}}]
    items = load_items(write(tmp_path, line, {"id": "x", "outputs": {"m": "y"}}))
    assert [i.id for i in items] == ["doc_#_1", "x"]
    assert [s.outputs["m"] for s in items[0].segments] == ["B.", "D."]


@pytest.mark.parametrize(("doc", "says"), [
    ({"id": "d", "segments": []}, "key 'segments': must be a non-empty list"),
    ({"id": "d", "outputs": {"m": "x"}, "segments": [{"outputs": {"m": "x"}}]}, "key 'outputs': a document"),
    ({"id": "d", "segments": [{"outputs": {"m": "x"}}, {"outputs": {"n": "y"}}]}, "every segment of a document"),
    ({"id": "d", "segments": [{"outputs": {"m": " "}}]}, "segment 1: 'outputs': system 'm'"),
    ({"id": "d", "segments": [{"outputs": {"m": "x"}, "score": 3}]}, "segment 1: 'score': is not a key"),
    ({"id": "d", "segments": ["x"]}, "segment 1 must be an object"),
    ([], "a line that is an array must be a document"),
    ([3], "a line that is an array must be a document"),
])
def test_broken_documents_are_named(tmp_path: Path, doc: Any, says: str) -> None:
    message = error(tmp_path, doc)
    assert message.startswith(f"{tmp_path / 'items.jsonl'}, line 1: ") and says in message, message
