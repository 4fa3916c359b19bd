"""The error-span exports (:mod:`evalkit.span_export`): every stored span in the spans CSV and in the Pearmut-shaped
JSONL, UTF-16 offsets after an emoji, the [missing] token, a document of two segments scored per segment, a deleted
suggestion, a tutorial, hostile text made safe in the CSV, a trashed session kept with its status, the command line,
and a round trip through :func:`evalkit.spans.from_pearmut` back to the stored code-point spans."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evalkit.__main__ import main
from evalkit.analysis import items_of
from evalkit.config import open_study, study_summary
from evalkit.question import Question
from evalkit.sampling import plan
from evalkit.span_export import SPANS_CSV_COLUMNS, pearmut_jsonl, spans_csv
from evalkit.spans import Span, from_pearmut, to_utf16
from evalkit.store import Store, open_store
from evalkit.tasks.spans import record_spans

TEXT = "The dog 👍 walked outside."  # code points after the emoji are one less than UTF-16 units
EVIL = "=cmd|' /C calc'!A0 dog"
SEG = "One 😀 two."
ITEMS = [
    {"id": "e1", "src": "Der Hund 👍 lief hinaus.", "tgt": {"mA": TEXT, "mB": EVIL},
     "error_spans": {"mA": [{"start_i": 11, "end_i": 16, "severity": "minor", "category": None}]}},
    {"id": "doc", "segments": [{"input": "Eins 😀 zwei.", "outputs": {"mA": SEG, "mB": "Won."}, "reference": "One."},
                               {"input": "Zwei.", "outputs": {"mA": "Two.", "mB": "Too."}}]},
    {"id": "tut1", "src": "Der Hund ist rausgerannt.", "tgt": {"mA": "The dog walked outside."},
     "check": {"expect": {"mA": {"error_spans": [{"start_i": [7, 9], "end_i": [12, 14], "severity": "minor"}]}},
               "feedback": "Please mark \"walked\" as a minor error."}},
]


def study(tmp: Path) -> Path:
    (tmp / "mt.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in ITEMS), encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text("""
[study]
title = "Spans"
database = "r.sqlite"
seed = 3

[[tasks]]
kind = "spans"
id = "esa"
items = "mt.jsonl"
systems = ["mA", "mB"]
questions = 2
missing_token = true
prefill = true
tutorial = ["tut1"]

[[tasks]]
kind = "spans"
id = "seg"
items = "mt.jsonl"
systems = ["mA", "mB"]
questions = 2
score_per = "segment"
[[tasks.scales]]
id = "quality"
type = "slider"
[[tasks.scales]]
id = "fluency"
type = "slider"
""", encoding="utf-8")
    return config


def u(text: str, start: int, end: int, severity: str = "minor", **kw: Any) -> dict:
    """A span as the page sends it: code points ``start``-``end`` of ``text`` in UTF-16 units."""
    return {"start": to_utf16(text, start, missing_token=True), "end": to_utf16(text, end, missing_token=True),
            "severity": severity, **kw}


def fill(store: Store, config: Path) -> dict[str, Any]:
    """Three answers: a tutorial and an ESA answer of two outputs (session "P1", a deleted suggestion, a span after
    the emoji, the [missing] token, a formula), and a document scored per segment on two scales (a trashed
    session)."""
    loaded = open_study(config)
    esa, seg = loaded.study.tasks
    items = loaded.item_sets[esa.source.items]
    store.register_study("v", study_summary(loaded.study))  # as the app does: the scales' order comes from it
    ann = store.create_session(study_version="v", evaluator_name="Ann", external_id="P1")
    tutorial = next(q for q in plan(loaded.study, loaded.pools, 5, items=loaded.item_sets) if q.check is not None)
    tut = items.by_id("tut1")
    walked = {"start": 8, "end": 14, "severity": "minor"}
    record_spans(store, ann, esa, tutorial, tut, {"spans": [[[walked]]], "scores": {"quality": [80]}}, 900)
    e1 = items.by_id("e1")
    question = Question(task="esa", kind="spans", index=1, slot=0, domain="", review_ids=("e1", "e1"),
                        sources=("mA", "mB"), texts=(TEXT, EVIL), matched=True)
    n = len(TEXT)
    value = {"spans": [[[u(TEXT, 4, 7), u(TEXT, 17, 24, "major"), u(TEXT, n, n + 1, "major"),
                         u(TEXT, 10, 16, origin="suggested-deleted", suggestion=0)]],
                       [[u(EVIL, 0, 4, "major")]]],
             "scores": {"quality": [60, 30]},
             "actions": [{"t": 1000, "action": "create", "output": 0, "segment": 0, **u(TEXT, 17, 24, "major")},
                         {"t": 2000, "action": "delete", "output": 0, "segment": 0, **u(TEXT, 10, 16)},
                         {"t": 2500, "action": "change", "output": 1, "segment": 0, **u(EVIL, 0, 4, "major")},
                         {"t": 3000, "action": "score", "output": 1, "segment": 0}]}
    answer = record_spans(store, ann, esa, question, e1, value, 5000)
    bob = store.create_session(study_version="v", evaluator_name="Bob")
    doc = items.by_id("doc")
    question = Question(task="seg", kind="spans", index=0, slot=1, domain="", review_ids=("doc",),
                        sources=("mA",), texts=(SEG,), matched=True)
    record_spans(store, bob, seg, question, doc,
                 {"spans": [[[u(SEG, 6, 9)], [u("Two.", 0, 3, "major")]]],
                  "scores": {"quality": [[40, 70]], "fluency": [[50, 80]]}, "actions": []}, None)
    store.set_session_status(bob.session_id, "trashed", actor="test")
    return {"loaded": loaded, "answer": answer, "ann": ann, "bob": bob}


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_spans_csv_has_every_span_made_safe(tmp_path: Path) -> None:
    config = study(tmp_path)
    with open_store(tmp_path / "r.sqlite") as store:
        fill(store, config)
        text = spans_csv(store)
        stored = store.spans()
    rows = sorted(rows_of(text), key=lambda r: (r["task"], r["questionIndex"]))  # (answers of one clock tick)
    assert list(rows[0]) == list(SPANS_CSV_COLUMNS) and len(rows) == len(stored) == 8
    got = [(r["task"], r["sessionStatus"], r["system"], r["segment"], r["n"], r["start"], r["end"], r["severity"],
            r["text"], r["origin"], r["check"]) for r in rows]
    n = str(len(TEXT))
    assert got == [
        ("esa", "active", "mA", "0", "0", "8", "14", "minor", "walked", "added", "tutorial"),
        ("esa", "active", "mA", "0", "0", "4", "7", "minor", "dog", "added", ""),
        ("esa", "active", "mA", "0", "1", "17", "24", "major", "outside", "added", ""),
        ("esa", "active", "mA", "0", "2", n, str(len(TEXT) + 1), "major", "[missing]", "added", ""),
        ("esa", "active", "mA", "0", "3", "10", "16", "minor", "walked", "suggested-deleted", ""),
        ("esa", "active", "mB", "0", "0", "0", "4", "major", "'=cmd", "added", ""),  # the formula is shown, not run
        ("seg", "trashed", "mA", "0", "0", "6", "9", "minor", "two", "added", ""),
        ("seg", "trashed", "mA", "1", "0", "0", "3", "major", "Two", "added", ""),
    ]
    assert {(r["evaluatorName"], r["externalId"]) for r in rows} == {("Ann", "P1"), ("Bob", "")}
    assert {r["itemId"] for r in rows} == {"tut1", "e1", "doc"} and all(r["createdAt"].endswith("Z") for r in rows)


def test_the_pearmut_jsonl_in_utf16_with_the_items(tmp_path: Path) -> None:
    config = study(tmp_path)
    with open_store(tmp_path / "r.sqlite") as store:
        made = fill(store, config)
        lines = [json.loads(line) for line in pearmut_jsonl(store, items_of(made["loaded"])).splitlines()]
        stored = store.spans()
    assert [list(line) for line in lines] == [["annotation", "actions", "item", "user_id", "item_i", "evalkit"]] * 3
    tutorial, esa, doc = lines
    assert tutorial["item_i"] == "welcome_0" and tutorial["evalkit"]["check"] == "tutorial"
    assert [s["start_i"] for s in tutorial["annotation"][0]["mA"]["error_spans"]] == [8]
    # an answer of two outputs, display order; the deleted suggestion is not among the error spans
    [annotation] = esa["annotation"]
    assert list(annotation) == ["mA", "mB"] and esa["user_id"] == "P1" and esa["item_i"] == 0
    n16 = len(TEXT.encode("utf-16-le")) // 2
    assert annotation["mA"] == {"score": 60, "textfield": None, "error_spans": [
        {"start_i": 4, "end_i": 6, "category": None, "severity": "minor"},
        {"start_i": 18, "end_i": 24, "category": None, "severity": "major"},  # after the emoji: one more unit
        {"start_i": n16, "end_i": n16, "category": None, "severity": "major"}]}  # the [missing] token
    assert annotation["mB"]["score"] == 30 and "scores" not in annotation["mB"]
    assert esa["item"] == [{"item_id": "e1", "src": "Der Hund 👍 lief hinaus.", "tgt": {"mA": TEXT, "mB": EVIL},
                            "error_spans": {"mA": [{"start_i": 11, "end_i": 16, "category": None,
                                                    "severity": "minor"}], "mB": []}}]
    # the actions: Pearmut's names, seconds, load = stored minus time spent
    shown = made["answer"]
    actions = esa["actions"]
    assert [a["action"] for a in actions] == ["load", "create_span", "delete_span", "change_span", "score",
                                                 "submit"]
    times = [a["time"] for a in actions]
    assert times[1] - times[0] == pytest.approx(1.0) and times[-1] - times[0] == pytest.approx(5.0)
    assert actions[1] | {"time": 0} == {"time": 0, "action": "create_span", "index": 0, "model": "mA", "start_i": 18,
                                        "end_i": 24, "severity": "major"}
    assert actions[3]["model"] == "mB" and (actions[3]["start_i"], actions[3]["end_i"]) == (0, 3)
    assert actions[4] | {"time": 0} == {"time": 0, "action": "score", "index": 0, "model": "mB", "value": None}
    assert actions[-1]["time"] == pytest.approx(datetime.fromisoformat(shown.created_at).timestamp())
    # a document: one entry per segment, the segment's own scores, the second scale beside the first
    assert [list(a) for a in doc["annotation"]] == [["mA"], ["mA"]]
    assert [a["mA"]["score"] for a in doc["annotation"]] == [40, 70]
    assert [a["mA"]["sliders"] for a in doc["annotation"]] == [{"fluency": 50}, {"fluency": 80}]
    assert [i["item_id"] for i in doc["item"]] == ["doc", "doc#1"] and doc["item"][0]["ref"] == "One."
    assert doc["annotation"][0]["mA"]["error_spans"] == [{"start_i": 7, "end_i": 9, "category": None,
                                                         "severity": "minor"}]
    assert doc["user_id"] == "Bob" and doc["evalkit"]["session_status"] == "trashed"
    assert [a["action"] for a in doc["actions"]] == ["load", "submit"]
    # the round trip: every kept span read back with from_pearmut and the item's text is the stored span
    back = set()
    for line in lines:
        for s, (segment, item) in enumerate(zip(line["annotation"], line["item"], strict=True)):
            for system, value in segment.items():
                for span in value["error_spans"]:
                    got = from_pearmut(span, item["tgt"][system])
                    back.add((line["evalkit"]["task"], line["evalkit"]["question_index"], system, s, got))
    assert back == {(r["task"], r["question_index"], r["system"], r["segment"],
                     Span(r["start_char"], r["end_char"], r["severity"], r["category"]))
                    for r in stored if r["origin"] != "suggested-deleted"}


def test_without_the_items_offsets_are_code_points(tmp_path: Path) -> None:
    config = study(tmp_path)
    with open_store(tmp_path / "r.sqlite") as store:
        fill(store, config)
        _, esa, doc = (json.loads(line) for line in pearmut_jsonl(store).splitlines())
        # items given for one answer only: that line in Pearmut's indexes, the others in code points, said why
        only = [json.loads(line) for line in pearmut_jsonl(
            store, {"doc": open_study(config).item_sets[tmp_path / "mt.jsonl"].by_id("doc")}).splitlines()]
    assert [x["evalkit"]["offsets"] for x in only] == ["code points", "code points", "pearmut"]
    assert "'tut1' is not among the items given" in only[0]["evalkit"]["note"] and "note" not in only[2]["evalkit"]
    assert esa["evalkit"]["offsets"] == "code points" and esa["item"] == [{"item_id": "e1"}]
    assert [(s["start_i"], s["end_i"]) for s in esa["annotation"][0]["mA"]["error_spans"]] == [
        (4, 6), (17, 23), (len(TEXT), len(TEXT))]
    assert len(doc["annotation"]) == 2 and [i["item_id"] for i in doc["item"]] == ["doc", "doc#1"]


def test_an_item_that_changed_since_is_written_in_code_points_with_the_reason(tmp_path: Path) -> None:
    config = study(tmp_path)
    with open_store(tmp_path / "r.sqlite") as store:
        fill(store, config)
        changed = [{"id": "e1", "src": "Der Hund.", "tgt": {"mA": "Short.", "mB": EVIL}}, *ITEMS[1:]]
        (tmp_path / "mt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in changed), encoding="utf-8")
        changed_set = open_study(config).item_sets[tmp_path / "mt.jsonl"]
        lines = [json.loads(line) for line in pearmut_jsonl(store, changed_set).splitlines()]
        unchanged = [json.loads(line) for line in pearmut_jsonl(store).splitlines()]
    e1 = [k for k, x in enumerate(lines) if x["evalkit"]["item_id"] == "e1"]
    assert e1 and all("were the items changed" in lines[k]["evalkit"]["note"] for k in e1)
    assert all(lines[k]["annotation"] == unchanged[k]["annotation"] for k in e1)  # the stored spans, code points
    assert all("note" not in x["evalkit"] for k, x in enumerate(lines) if k not in e1)


def test_both_backends(db_url: str, tmp_path: Path) -> None:
    config = study(tmp_path)
    store = open_store(db_url)
    try:
        made = fill(store, config)
        rows = rows_of(spans_csv(store))
        lines = pearmut_jsonl(store, made["loaded"].item_sets[tmp_path / "mt.jsonl"]).splitlines()
    finally:
        store.close()
    rows.sort(key=lambda r: (r["task"], r["questionIndex"]))
    assert [r["text"] for r in rows] == ["walked", "dog", "outside", "[missing]", "walked", "'=cmd", "two", "Two"]
    assert [json.loads(line)["item_i"] for line in lines] == ["welcome_0", 0, 1]
    assert json.loads(lines[1])["annotation"][0]["mA"]["error_spans"][1]["start_i"] == 18


def test_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = study(tmp_path)
    db = tmp_path / "r.sqlite"
    with open_store(db) as store:
        fill(store, config)
        expected_csv, expected_jsonl = spans_csv(store), pearmut_jsonl(store, open_study(config).item_sets[
            tmp_path / "mt.jsonl"])
    capsys.readouterr()
    assert main(["export", "spans", "--db", str(db)]) == 0
    assert capsys.readouterr().out == expected_csv
    assert main(["export", "pearmut", "--db", str(db), "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out == expected_jsonl and out.isascii()
    assert json.loads(out.splitlines()[1])["evalkit"]["offsets"] == "pearmut"
    written = tmp_path / "annotations.jsonl"
    assert main(["export", "pearmut", "--db", str(db), "-o", str(written)]) == 0
    assert json.loads(written.read_text(encoding="utf-8").splitlines()[1])["evalkit"]["offsets"] == "code points"
    assert main(["export", "spans", "--db", str(tmp_path / "none.sqlite")]) == 1
