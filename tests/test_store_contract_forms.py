"""The storage contract of background forms (``form_answers``), on both backends (SQLite file, real PostgreSQL):
one transaction per form with its finished mark, exactly once, conflicts refused, racing submits, deletes, the
data version, the migration that adds the table, and ``evalkit copy`` in both directions."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from evalkit.store import AnswerConflict, FormAnswer, Store, StoreError, UnknownSession, open_store
from tests.test_store_contract import raw

FORM = {"lang": "Deutsch", "age": "30", "sites": '["Maps, e.g. Google", "Travel"]', "comment": None}


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def test_a_form_is_stored_once_with_its_finished_mark(store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    version = store.data_version()
    rows = store.record_form(sid, "background", FORM, time_spent_ms=4200)
    assert [(r.field, r.value) for r in rows] == list(FORM.items())  # in the order given; None stays None
    assert all(isinstance(r, FormAnswer) and r.session_id == sid and r.time_spent_ms == 4200 for r in rows)
    assert store.progress(sid).finished == {"background"} and store.data_version() != version
    again = store.record_form(sid, "background", dict(reversed(FORM.items())), time_spent_ms=1)  # same answers
    assert {(r.field, r.value, r.time_spent_ms) for r in again} == {(r.field, r.value, 4200) for r in rows}
    for different in ({**FORM, "lang": "English"}, {**FORM, "comment": "hi"}, {"lang": "Deutsch"}):
        with pytest.raises(AnswerConflict, match="already submitted"):
            store.record_form(sid, "background", different)
    assert store.form_answers() == store.form_answers(sid, "background") and len(store.form_answers()) == 4
    assert store.form_answers(task="other") == [] and store.form_answers(session_id="0" * 32) == []
    assert {r.field: r.value for r in store.form_answers()} == FORM
    other = store.create_session(study_version="v").session_id  # another session answers the same form
    store.record_form(other, "background", {**FORM, "lang": "English"})
    assert [r.value for r in store.form_answers(other) if r.field == "lang"] == ["English"]


def test_bad_forms_are_refused_and_store_nothing(store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    with pytest.raises(UnknownSession):
        store.record_form("f" * 32, "background", FORM)
    for bad in ({}, {"": "x"}, {"age": 30}):
        with pytest.raises(ValueError):
            store.record_form(sid, "background", bad)  # type: ignore[arg-type]
    assert store.form_answers() == [] and store.progress(sid).finished == set()


def test_racing_submits_of_one_form_store_one_form(store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    barrier = threading.Barrier(12, timeout=60)
    outcomes: list[str] = []
    lock = threading.Lock()

    def submit(k: int) -> None:
        values = FORM if k % 2 else {**FORM, "lang": f"L{k}"}
        barrier.wait()
        try:
            store.record_form(sid, "background", values)
            outcome = "stored"
        except AnswerConflict:
            outcome = "conflict"
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stored = store.form_answers()
    assert len(stored) == 4 and len(outcomes) == 12
    winner = {r.field: r.value for r in stored}["lang"]
    # everyone who sent the winner's answers got them back; everyone else a conflict
    expected_stored = 6 if winner == "Deutsch" else 1
    assert outcomes.count("stored") == expected_stored and outcomes.count("conflict") == 12 - expected_stored


def test_deleting_a_session_deletes_its_forms(store: Store) -> None:
    a, b = (store.create_session(study_version="v").session_id for _ in range(2))
    store.record_form(a, "background", FORM)
    store.record_form(b, "background", FORM)
    counts = store.delete_session(a, actor="researcher")
    assert counts["form_answers"] == 4 and counts["task_status"] == 1
    assert {r.session_id for r in store.form_answers()} == {b}


def test_a_version_2_database_gets_the_forms_table(db_url: str) -> None:
    with open_store(db_url) as store:
        sid = store.create_session(study_version="v").session_id
        store.record_answer(sid, "t", 0, "A")
    # back to version 2, as evalkit's previous schema left it (without what migrations 3, 4 and 5 add)
    for statement in ("DROP TABLE form_answers", "DROP TABLE participants", "DROP TABLE check_tries",
                      "DROP INDEX evaluations_checks", "ALTER TABLE evaluations DROP COLUMN check_type",
                      "ALTER TABLE evaluations DROP COLUMN check_passed"):
        raw(db_url, statement)
    raw(db_url, "UPDATE settings SET value = '2' WHERE key = 'schema_version'")
    with open_store(db_url) as store:
        assert [a.response for a in store.answers()] == ["A"]
        store.record_form(sid, "background", FORM)
        assert len(store.form_answers()) == 4 and store.table("form_answers")[0]["session_id"] == sid


@pytest.mark.parametrize("direction", ["sqlite->postgres", "postgres->sqlite"])
def test_copy_keeps_the_forms(direction: str, tmp_path: Path, pg_url: str) -> None:
    sqlite_path = str(tmp_path / "pilot.sqlite")
    src_url, dst_url = (sqlite_path, pg_url) if direction == "sqlite->postgres" else (pg_url, sqlite_path)
    with open_store(src_url) as src:
        sid = src.create_session(study_version="v").session_id
        src.record_form(sid, "background", FORM, time_spent_ms=7)
        with open_store(dst_url) as dst:
            assert dst.import_from(src)["form_answers"] == 4
            assert dst.table("form_answers") == src.table("form_answers")
            assert dst.progress(sid).finished == {"background"}
            with pytest.raises(AnswerConflict):
                dst.record_form(sid, "background", {**FORM, "age": "31"})
            with pytest.raises(StoreError, match="already holds study data"):
                dst.import_from(src)
