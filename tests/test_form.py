"""Kind ``form`` (background forms): parsing and every config mistake, the server-side checks of every field type,
recording (once, conflicts, nothing on invalid input), the form as one progress step before or after the judgment
tasks, the summaries and the forms CSV (also through ``python -m evalkit export forms``)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.config import load_study, open_study, study_summary
from evalkit.sampling import plan
from evalkit.store import AnswerConflict, open_store
from evalkit.survey import current_step, progress_label
from evalkit.tasks import ConfigError, FormTask, kind_of
from evalkit.tasks.form import FormInvalid, check_answers, record_form
from evalkit.tasks.form_analysis import FORMS_CSV_COLUMNS, form_descriptions, forms_csv, forms_frame, summarise
from tests.helpers import ROOT

EXAMPLE = ROOT / "tests" / "fixtures" / "form_study" / "config.toml"

HEAD = """
[study]
title = "Form study"
datasets = "datasets"
database = "responses.sqlite"

[[tasks]]
kind = "form"
id = "background"
title = "About you"
"""

FIELDS = """
[[tasks.fields]]
id = "lang"
label = "Native language"
type = "text"
max_length = 10

[[tasks.fields]]
id = "age"
type = "number"
min = 18
max = 99
optional = true

[[tasks.fields]]
id = "hours"
type = "number"
integer = false
min = 0

[[tasks.fields]]
id = "english"
type = "choice"
options = ["Basic", "Good", "Fluent, native"]

[[tasks.fields]]
id = "sites"
type = "multichoice"
options = ["Shops", "Maps, e.g. Google", "Travel"]
optional = true

[[tasks.fields]]
id = "trust"
type = "likert"
anchors = ["No", "Little", "Some", "Much"]

[[tasks.fields]]
id = "ease"
type = "likert"
min = 0
max = 6
min_label = "Very hard"
max_label = "Very easy"
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "datasets").mkdir(exist_ok=True)
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def form_of(tmp_path: Path, fields: str = FIELDS) -> FormTask:
    task = load_study(write(tmp_path, HEAD + fields)).tasks[0]
    assert isinstance(task, FormTask)
    return task


VALID = {"lang": "Deutsch", "age": 30, "hours": 2.5, "english": "Fluent, native", "sites": ["Travel", "Shops"],
         "trust": 3, "ease": 0}


# ----------------------------------------------------------------------------- parsing


def test_a_form_parses_with_every_field_type(tmp_path: Path) -> None:
    task = form_of(tmp_path)
    assert [f.id for f in task.fields] == ["lang", "age", "hours", "english", "sites", "trust", "ease"]
    lang, age, hours, english, sites, trust, ease = task.fields
    assert (lang.type, lang.max_length, lang.optional, lang.label) == ("text", 10, False, "Native language")
    assert (age.min, age.max, age.integer, age.optional, age.label) == (18, 99, True, True, "Age")
    assert (hours.integer, hours.min, hours.max) == (False, 0.0, None)
    assert english.options == ("Basic", "Good", "Fluent, native") and sites.optional
    assert trust.levels == (1, 2, 3, 4) and trust.level_label(2) == "2 · Little"
    assert ease.levels == tuple(range(7)) and ease.level_label(0) == "0 · Very hard" and ease.level_label(3) == "3"
    assert ease.level_label(6) == "6 · Very easy"
    described = kind_of("form").describe(task)["fields"]
    assert described[5] == {"id": "trust", "label": "Trust", "type": "likert", "optional": False,
                            "levels": [1, 2, 3, 4], "labels": ["1 · No", "2 · Little", "3 · Some", "4 · Much"]}


@pytest.mark.parametrize(("fields", "message"), [
    ("", r"key 'fields': needs at least one \[\[tasks.fields\]\]"),
    ('[[tasks.fields]]\nid = "x"\ntype = "date"\n', r"field #1 \(id 'x'\): key 'type': must be one of 'text'"),
    ('[[tasks.fields]]\nid = "x"\n', r"field #1 \(id 'x'\): key 'type': is required"),
    ('[[tasks.fields]]\ntype = "text"\n', r"field #1: key 'id': is required"),
    ('[[tasks.fields]]\nid = "a b"\ntype = "text"\n', r"key 'id': must be letters"),
    ('[[tasks.fields]]\nid = "x"\ntype = "choice"\n', r"\(id 'x'\): key 'options': is required for this type"),
    ('[[tasks.fields]]\nid = "x"\ntype = "multichoice"\noptions = ["a"]\n', r"key 'options': needs at least two"),
    ('[[tasks.fields]]\nid = "x"\ntype = "choice"\noptions = ["a", "b", "a"]\n', r"'a' more than once"),
    ('[[tasks.fields]]\nid = "x"\ntype = "choice"\noptions = ["a", ""]\n', r"list of non-empty strings"),
    ('[[tasks.fields]]\nid = "x"\ntype = "number"\nmin = 10\nmax = 5\n', r"key 'min': \(10\) is greater than max"),
    ('[[tasks.fields]]\nid = "x"\ntype = "number"\nmin = 1.5\n', r"key 'min': must be a whole number"),
    ('[[tasks.fields]]\nid = "x"\ntype = "number"\nmax = "9"\n', r"key 'max': must be a number, got a string"),
    ('[[tasks.fields]]\nid = "x"\ntype = "number"\ninteger = "yes"\n', r"key 'integer': must be true or false"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\noptional = 1\n', r"key 'optional': must be true or false"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\nmax_length = 0\n', r"key 'max_length': must be at least 1"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\nmax_length = 20000\n', r"key 'max_length': must be at most 10000"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\noptions = ["a", "b"]\n',
     r"\(id 'x'\): key 'options': is for choice fields, not text fields"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\nlabl = "X"\n', r"key 'labl': is not a known setting \(did you mean "
                                                                 r"'label'\?\)"),
    ('[[tasks.fields]]\nid = "x"\ntype = "likert"\n', r"key 'anchors': is required for a likert field"),
    ('[[tasks.fields]]\nid = "x"\ntype = "likert"\nanchors = ["only"]\n', r"key 'anchors': needs at least two"),
    ('[[tasks.fields]]\nid = "x"\ntype = "likert"\nanchors = ["a", "b"]\nmin = 1\n', r"key 'min': cannot be combined"),
    ('[[tasks.fields]]\nid = "x"\ntype = "likert"\nmin = 5\nmax = 5\n', r"key 'min': \(5\) must be less than max"),
    ('[[tasks.fields]]\nid = "x"\ntype = "likert"\nmin = 0\nmax = 20\n', r"key 'max': a likert field has at most 11"),
    ('[[tasks.fields]]\nid = "x"\ntype = "text"\n[[tasks.fields]]\nid = "x"\ntype = "number"\n',
     r"\[\[tasks\]\] #1 \(id 'background'\): key 'fields': field ids must be unique; 'x'"),
    ("fields = 3\n", r"key 'fields': needs at least one"),
])
def test_every_config_mistake_names_the_file_the_task_and_the_field(tmp_path: Path, fields: str,
                                                                      message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load_study(write(tmp_path, HEAD + fields))
    assert str(caught.value).startswith("config.toml: [[tasks]] #1 (id 'background')")


# ----------------------------------------------------------------------------- server-side checks


def test_a_valid_form_is_stored_as_documented(tmp_path: Path) -> None:
    values, errors = check_answers(form_of(tmp_path), VALID)
    assert errors == {}
    assert values == {"lang": "Deutsch", "age": "30", "hours": "2.5", "english": "Fluent, native",
                      "sites": json.dumps(["Shops", "Travel"]), "trust": "3", "ease": "0"}  # options in config order
    values, errors = check_answers(form_of(tmp_path), {**VALID, "age": None, "sites": [], "extra": "ignored"})
    assert errors == {} and values["age"] is None and values["sites"] is None and "extra" not in values


@pytest.mark.parametrize(("field", "value", "message"), [
    ("lang", None, "Please answer this question."),
    ("lang", "   ", "Please answer this question."),
    ("lang", "x" * 11, "Please shorten your answer to at most 10 characters (it has 11)."),
    ("lang", 5, "Please type your answer as text."),
    ("age", 17, "Please enter a whole number from 18 to 99; 17 is outside that range."),
    ("age", 100, "Please enter a whole number from 18 to 99; 100 is outside that range."),
    ("age", 30.5, "Please enter a whole number (a whole number from 18 to 99)."),
    ("age", "thirty", "Please enter a whole number from 18 to 99."),
    ("age", True, "Please enter a whole number from 18 to 99."),
    ("age", float("nan"), "Please enter a whole number from 18 to 99."),
    ("hours", None, "Please enter a number."),
    ("hours", -0.5, "Please enter a number of at least 0; -0.5 is outside that range."),
    ("english", None, "Please choose one option."),
    ("english", "Fluent", "Please choose one of the options shown."),
    ("sites", ["Shops", "Moon"], "Please choose only among the options shown."),
    ("sites", "Shops", "Please choose only among the options shown."),
    ("trust", None, "Please choose a level."),
    ("trust", 5, "Please choose a level from 1 to 4."),
    ("trust", "3", "Please choose a level from 1 to 4."),
    ("ease", 7, "Please choose a level from 0 to 6."),
])
def test_each_invalid_field_says_exactly_what_is_wrong(tmp_path: Path, field: str, value: object,
                                                       message: str) -> None:
    values, errors = check_answers(form_of(tmp_path), {**VALID, field: value})
    assert errors == {field: message} and field not in values


def test_numbers_given_as_text_are_read(tmp_path: Path) -> None:
    values, errors = check_answers(form_of(tmp_path), {**VALID, "age": " 42 ", "hours": "1e1"})
    assert errors == {} and values["age"] == "42" and values["hours"] == "10"


# ----------------------------------------------------------------------------- recording and progress


def test_record_form_once_refuses_a_different_second_form_and_stores_nothing_invalid(tmp_path: Path) -> None:
    task = form_of(tmp_path)
    with open_store(tmp_path / "r.sqlite") as store:
        session = store.create_session(study_version="v")
        with pytest.raises(FormInvalid) as caught:
            record_form(store, session, task, {**VALID, "lang": "", "trust": 9})
        assert set(caught.value.errors) == {"lang", "trust"} and "2 fields need" in str(caught.value)
        assert store.form_answers() == [] and store.progress(session.session_id).finished == set()
        rows = record_form(store, session, task, VALID, time_spent_ms=1234)
        assert [(r.field, r.value) for r in rows][:2] == [("lang", "Deutsch"), ("age", "30")]
        assert {r.time_spent_ms for r in rows} == {1234}
        again = record_form(store, session, task, VALID, time_spent_ms=99)  # a double click: stored once
        assert again == rows and len(store.form_answers()) == 7
        with pytest.raises(AnswerConflict):
            record_form(store, session, task, {**VALID, "lang": "English"})
        assert {r.field: r.value for r in store.form_answers()}["lang"] == "Deutsch"


def test_the_form_is_one_step_before_or_after_the_judgment_tasks() -> None:
    loaded = open_study(EXAMPLE, database=":memory:")
    study = loaded.study
    assert [t.kind for t in study.tasks] == ["form", "compare", "form"]
    questions = plan(study, loaded.pools, 5, loaded.item_sets)
    assert {q.task for q in questions} == {"help"}  # forms have no planned questions
    from evalkit.store import Progress

    progress = Progress(answered={}, rated={}, finished=set())
    step = current_step(study, questions, progress)
    assert (step.kind, step.task.id, step.answered, step.total) == ("form", "background", 0, 4)
    assert progress_label(step) == (0.0, "Form · 0% of the study done")
    progress.finished.add("background")
    step = current_step(study, questions, progress)
    assert (step.kind, step.index, step.answered) == ("compare", 0, 1)
    progress.answered["help"] = {0, 1}
    step = current_step(study, questions, progress)
    assert (step.task.id, step.task_number, step.answered, step.total) == ("feedback", 3, 3, 4)
    assert progress_label(step)[1] == "Form · 75% of the study done"
    progress.finished.add("feedback")
    assert current_step(study, questions, progress).kind == "done"


# ----------------------------------------------------------------------------- summaries and the CSV


def test_summaries_and_the_forms_csv(tmp_path: Path) -> None:
    task = form_of(tmp_path)
    study = load_study(tmp_path / "config.toml")
    db = tmp_path / "r.sqlite"
    with open_store(db) as store:
        store.register_study("v", study_summary(study))
        answers = [VALID, {**VALID, "lang": "=A1+B1", "age": None, "sites": ["Maps, e.g. Google"],
                           "trust": 1, "hours": 10},
                   {**VALID, "lang": "Čeština", "age": 50, "sites": [], "trust": 3}]
        sessions = []
        for k, given in enumerate(answers):
            session = store.create_session(study_version="v", evaluator_name=f"E{k}")
            record_form(store, session, task, given)
            sessions.append(session)
        store.set_session_status(sessions[2].session_id, "excluded")
        frame = forms_frame(store.form_answers(), store.sessions())
        [summary] = summarise(frame, form_descriptions(store.studies()))
        assert summary.submitted == 2  # the excluded session is not counted
        by_id = {f.id: f for f in summary.fields}
        assert by_id["age"].answered == 1 and by_id["age"].skipped == 1
        assert by_id["age"].table.iloc[0][["n", "min", "median", "max"]].tolist() == [1, 30, 30, 30]
        assert by_id["hours"].table.iloc[0][["min", "median", "max"]].tolist() == [2.5, 6.25, 10]
        assert by_id["english"].table.set_index("option")["count"].to_dict() == {
            "Basic": 0, "Good": 0, "Fluent, native": 2}
        sites = by_id["sites"].table.set_index("option")
        assert sites["count"].to_dict() == {"Shops": 1, "Maps, e.g. Google": 1, "Travel": 1}
        assert sites["share"].tolist() == [0.5, 0.5, 0.5]
        assert by_id["trust"].table["count"].tolist() == [1, 0, 1, 0] and by_id["trust"].note == "Median level 2."
        # in the order given; two sessions made within the clock's tick tie, so compare as a multiset
        assert sorted(by_id["lang"].table["text"]) == ["=A1+B1", "Deutsch"]
        assert [s.submitted for s in summarise(frame, form_descriptions(store.studies()), completed_only=True)] == [0]
        text = forms_csv(store)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == FORMS_CSV_COLUMNS and len(rows) == 21
    assert [r["field"] for r in rows[:7]] == ["lang", "age", "hours", "english", "sites", "trust", "ease"]
    second = [r for r in rows if r["evaluatorName"] == "E1"]
    by_field = {r["field"]: r for r in second}
    assert by_field["lang"]["value"] == "'=A1+B1"  # made inert for spreadsheets
    assert by_field["age"]["value"] == "" and by_field["age"]["fieldType"] == "number"
    assert json.loads(by_field["sites"]["value"]) == ["Maps, e.g. Google"]  # a comma inside an option survives
    assert {r["sessionStatus"] for r in rows if r["evaluatorName"] == "E2"} == {"excluded"}
    assert "Čeština" in text
    out = tmp_path / "forms.csv"
    assert main(["export", "forms", "--db", str(db), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == text
