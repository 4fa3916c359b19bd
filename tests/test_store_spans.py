"""The ``spans`` table on both backends: an answer and its spans are written in one transaction (both or neither),
read back in order, deleted with their session, and a repeated answer does not write its spans twice."""

from __future__ import annotations

import pytest

from evalkit.store import AnswerConflict, Store, open_store


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def span(n: int, start: int, end: int, **kw: object) -> dict:
    row = {"item_id": "i1", "segment": 0, "system": "m", "n": n, "start_char": start, "end_char": end,
           "severity": "minor", "category": None, "text": "x" * (end - start), "origin": "added"}
    return {**row, **kw}


def test_an_answer_and_its_spans(store: Store) -> None:
    a = store.create_session(study_version="v")
    spans = [span(0, 0, 3), span(1, 5, 9, severity="major", category="Accuracy/Omission", text="Hund 👍"),
             span(2, 10, 12, origin="suggested-deleted")]
    answer = store.record_answer(a.session_id, "esa", 0, "annotated", kind="spans", detail={"scores": {"q": [70]}},
                                 spans=spans)
    assert answer.created
    rows = store.spans()
    assert [(r["n"], r["start_char"], r["end_char"], r["severity"], r["category"], r["text"], r["origin"])
            for r in rows] == [(0, 0, 3, "minor", None, "xxx", "added"),
                               (1, 5, 9, "major", "Accuracy/Omission", "Hund 👍", "added"),
                               (2, 10, 12, "minor", None, "xx", "suggested-deleted")]
    assert {(r["session_id"], r["task"], r["question_index"], r["created_at"]) for r in rows} == {
        (a.session_id, "esa", 0, answer.created_at)}
    # the same answer again (a double click): stored once, its spans once
    again = store.record_answer(a.session_id, "esa", 0, "annotated", kind="spans", detail={"scores": {"q": [70]}},
                                spans=spans)
    assert not again.created and len(store.spans()) == 3
    with pytest.raises(AnswerConflict):
        store.record_answer(a.session_id, "esa", 0, "annotated", kind="spans", detail={"scores": {"q": [10]}},
                            spans=spans[:1])
    assert len(store.spans()) == 3 and store.spans(task="other") == []
    assert store.delete_session(a.session_id, actor="researcher")["spans"] == 3
    assert store.spans() == []


def test_spans_that_cannot_be_stored_take_the_answer_with_them(store: Store) -> None:
    a = store.create_session(study_version="v")
    twice = [span(0, 0, 3), span(0, 4, 6)]  # the same (output, segment, n) twice: the primary key refuses it
    with pytest.raises(Exception):  # noqa: B017 - the backend's own integrity error
        store.record_answer(a.session_id, "esa", 0, "annotated", kind="spans", spans=twice)
    assert store.answers() == [] and store.spans() == []  # neither half was kept
    store.record_answer(a.session_id, "esa", 0, "annotated", kind="spans", spans=twice[:1])
    assert len(store.answers()) == 1 and len(store.spans(a.session_id, "esa")) == 1
