"""AppTest tests of kind ``form`` on the example study tests/fixtures/form_study (a background form, two compare
questions, a closing form): the instructions, every invalid field marked under it with what is wrong (and nothing
stored), typed values kept, the stored rows, the next task, a database that is down, a second tab with other
answers, a bad form config, and the Forms tab of the results page."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from evalkit.store import Unavailable
from tests.apptest.conftest import Harness, button, has_button, progress_lines, texts
from tests.apptest.fragments import fragment_run
from tests.apptest.test_results_page import capture_downloads, results_app, unlock
from tests.helpers import ROOT

EXAMPLE = ROOT / "tests" / "fixtures" / "form_study"
P = "background-form"


@pytest.fixture
def h(make_harness, tmp_path: Path) -> Harness:
    folder = tmp_path / "form_study"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("data"))
    text = (folder / "config.toml").read_text(encoding="utf-8").replace("../../../datasets", str(ROOT / "datasets"))
    (folder / "config.toml").write_text(text, encoding="utf-8")
    return make_harness(config=folder / "config.toml")


def start(h: Harness):
    """Agree on the consent page, see the form's instructions, click "Begin"; returns the AppTest on the form."""
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    assert not at.exception
    assert at.header[0].value == "About you" and "A few questions about you" in texts(at)
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def submit(at, key: str = f"{P}-submit"):
    at.button(key=key).click()
    fragment_run(at)
    assert not at.exception
    return at


def fill(at, **values):
    for field, value in values.items():
        widget = next(w for w in (*at.text_input, *at.number_input, *at.radio, *at.multiselect)
                      if w.key == f"{P}-{field}")
        widget.set_value(value)
    return at


GOOD = {"native_language": "Deutsch", "age": 34, "english": "Fluent", "platforms": ["Travel sites", "Social media"],
        "trust": 4}


def errors(at) -> list[str]:
    """The "what is missing" marks and their summary line (yellow), then the failures (red)."""
    return [e.value for e in at.warning] + [e.value for e in at.error]


def test_the_form_comes_first_and_an_empty_submit_marks_every_required_field(h: Harness) -> None:
    at = start(h)
    assert progress_lines(at) == ("Task 1 of 3 · About you", "Form · 0% of the study done")
    assert at.subheader[0].value == "About you"
    assert at.text_input(key=f"{P}-native_language").label == "What is your native language?"
    assert at.number_input(key=f"{P}-age").label == "How old are you? (optional)"
    assert at.radio(key=f"{P}-trust").options == ["1 · Not at all", "2 · A little", "3 · Somewhat", "4 · Mostly",
                                                  "5 · Completely"]
    assert errors(at) == []
    submit(at)
    assert errors(at) == ["Please answer this question.", "Please choose one option.",
                          "Please choose at least one option.", "Please choose a level.",
                          "4 answers need your attention: they are marked above. Nothing has been saved yet."]
    assert h.store.form_answers() == [] and h.store.progress(at.query_params["s"]).finished == set()


def test_each_invalid_value_says_what_is_wrong_keeps_what_was_typed_and_clears_when_fixed(h: Harness) -> None:
    at = start(h)
    # (a text longer than max_length cannot be typed: the widget stops at it; the server's own check of it is
    # in tests/test_form.py)
    fill(at, **{**GOOD, "age": 150, "native_language": "", "english": None})
    submit(at)
    assert errors(at) == ["Please answer this question.",
                          "Please enter a whole number from 18 to 99; 150 is outside that range.",
                          "Please choose one option.",
                          "3 answers need your attention: they are marked above. Nothing has been saved yet."]
    assert at.number_input(key=f"{P}-age").value == 150  # what was typed stays
    assert at.radio(key=f"{P}-trust").value == 4 and at.multiselect(key=f"{P}-platforms").value == [
        "Travel sites", "Social media"]
    assert h.store.form_answers() == []
    fill(at, age=17)
    fragment_run(at)
    assert "Please enter a whole number from 18 to 99; 17 is outside that range." in errors(at)
    fill(at, native_language="Deutsch", age=None, english="Good")  # age is optional: empty is fine
    fragment_run(at)
    assert errors(at) == []  # fixing a field removes its mark at once, before the next click


def test_a_valid_form_is_stored_per_field_and_the_judgment_task_follows(h: Harness) -> None:
    at = start(h)
    fill(at, **GOOD)
    submit(at)
    token = at.query_params["s"]
    stored = {r.field: r.value for r in h.store.form_answers(token, "background")}
    assert stored == {"native_language": "Deutsch", "age": "34", "english": "Fluent",
                      "platforms": json.dumps(["Travel sites", "Social media"]), "trust": "4"}
    assert all(r.time_spent_ms is not None for r in h.store.form_answers())
    assert progress_lines(at) == ("Task 2 of 3 · Compare two replies", "Question 1 of 2 · 25% of the study done")
    for index in range(2):
        at.radio(key=f"help-{index}-choice").set_value("A")
        button(at, "Next").click()
        fragment_run(at)
        assert not at.exception
    # the closing form (no instructions: no "Begin")
    assert at.subheader[0].value == "Before you go" and not has_button(at, "Begin")
    at.radio(key="feedback-form-difficulty").set_value(3)
    submit(at, "feedback-form-submit")
    assert at.title[0].value == "Thank you!"
    assert h.store.get_session(token).status == "completed"
    assert {r.field: r.value for r in h.store.form_answers(token, "feedback")} == {"difficulty": "3", "comment": None}


def test_a_database_that_is_down_says_so_keeps_the_form_and_stores_nothing(h: Harness, monkeypatch) -> None:
    at = start(h)
    store_class = type(h.store)
    real = store_class.record_form

    def down(self, *args, **kwargs):
        raise Unavailable("server closed the connection")

    monkeypatch.setattr(store_class, "record_form", down)
    fill(at, **GOOD)
    submit(at)
    assert errors(at) == ["Your answer could not be saved. Please try again in a moment."]
    assert at.text_input(key=f"{P}-native_language").value == "Deutsch" and h.store.form_answers() == []
    monkeypatch.setattr(store_class, "record_form", real)
    submit(at)  # the same click again, once the database is back
    assert len(h.store.form_answers()) == 5 and progress_lines(at)[0] == "Task 2 of 3 · Compare two replies"


def test_a_second_tab_with_other_answers_keeps_the_first_and_says_so(h: Harness) -> None:
    first = start(h)
    token = first.query_params["s"]
    second = h.app(s=token)
    button(second, "Begin").click().run()
    fill(first, **GOOD)
    submit(first)
    fill(second, **{**GOOD, "native_language": "English"})
    submit(second)
    assert "already been answered, so your first answer was kept" in texts(second)
    assert {r.field: r.value for r in h.store.form_answers()}["native_language"] == "Deutsch"
    assert progress_lines(second)[0] == "Task 2 of 3 · Compare two replies"


def test_a_bad_form_config_is_a_clear_set_up_error(make_harness, tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "datasets").mkdir()
    (folder / "config.toml").write_text(
        '[study]\ntitle = "x"\ndatasets = "datasets"\n\n[[tasks]]\nkind = "form"\nid = "bg"\n\n'
        '[[tasks.fields]]\nid = "age"\ntype = "number"\nmin = 50\nmax = 18\n', encoding="utf-8")
    at = make_harness(config=folder / "config.toml").app()
    assert not at.exception
    assert "config.toml: [[tasks]] #1 (id 'bg') field #1 (id 'age'): key 'min': (50) is greater than max (18)" \
        in texts(at)


def test_the_results_page_summarises_each_field_and_exports_the_forms(h: Harness, monkeypatch) -> None:
    for name, values in (("Ada", GOOD), ("Bob", {**GOOD, "native_language": "<b>Français</b>", "age": None,
                                                 "english": "Native", "platforms": ["Travel sites"], "trust": 2})):
        at = h.app()
        at.checkbox(key="consent_agree").check()
        at.text_input(key="consent_name").input(name)
        at.button[0].click().run()
        button(at, "Begin").click().run()
        submit(fill(at, **values))
    downloads = capture_downloads(monkeypatch)
    at = unlock(results_app(h))
    [forms] = [t for t in at.tabs if t.label == "Forms"]
    shown = "\n".join(str(e.value) for e in (*forms.subheader, *forms.markdown, *forms.caption))
    assert "About you · form · 2 submitted" in shown and "Before you go · form · 0 submitted" in shown
    assert "number · 1 answer, 1 left it empty" in shown
    language, age, english, platforms, trust, difficulty = (df.value for df in forms.dataframe)  # no empty texts
    assert language.iloc[:, 0].tolist() == ["Deutsch", "<b>Français</b>"]  # shown as text in a table cell
    assert age.iloc[0, :4].tolist() == [1, 34, 34, 34]  # n, min, median, max
    assert english.iloc[:, 1].tolist() == [0, 0, 1, 1]  # Basic, Good, Fluent, Native
    assert platforms.iloc[:, 1].tolist() == [0, 0, 2, 1] and platforms.iloc[:, 2].tolist() == ["0.0", "0.0",
                                                                                                "100.0", "50.0"]
    assert trust.iloc[:, 1].tolist() == [0, 1, 0, 1, 0] and len(difficulty) == 7
    assert "text · 0 answers" in shown and not [e for e in forms.expander if "0 texts" in e.label]
    rows = list(csv.DictReader(io.StringIO(downloads["forms.csv"]())))
    assert len(rows) == 10 and {r["evaluatorName"] for r in rows} == {"Ada", "Bob"}
    assert [e["action"] for e in h.store.admin_log()][-1] == "export"
