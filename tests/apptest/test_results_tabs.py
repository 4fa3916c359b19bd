"""AppTest tests of the results page as a researcher reads it: a rating-only study's Overview points to its Ratings
tab, the downloads offered are those the database has data for (no empty ratings CSV; a scores CSV where there are
scores, numeric), the Forms tab leaves out the evaluators who failed their attention checks like every other table,
and the LaTeX preview is shown as it is exported, without a LaTeX highlighter greying what follows a ``\\%``."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pandas as pd
import pytest

import ui
from evalkit.config import open_study, study_summary
from evalkit.sampling import plan
from evalkit.tasks.form import record_form
from evalkit.tasks.responses import record_choice
from tests.apptest.conftest import Harness, texts
from tests.apptest.test_results_page import capture_downloads, fill, results_app, unlock
from tests.helpers import ROOT, answer_items_tasks
from tests.item_study import make_items_study, task_block

GRAPHMIND = ROOT / "examples" / "graphmind" / "config.toml"


@pytest.fixture(autouse=True)
def no_env_password(monkeypatch):
    monkeypatch.delenv("EVALKIT_RESULTS_PASSWORD", raising=False)
    monkeypatch.setattr(ui.resources, "login_sleep", lambda seconds: None)


def _answered(h: Harness, n: int = 3, seed: int = 2) -> None:
    """``n`` evaluators answer every items question of the harness's study."""
    loaded = h.loaded
    h.store.register_study(loaded.version, study_summary(loaded.study))
    rng = random.Random(seed)
    for e in range(n):
        answer_items_tasks(h.store, loaded, h.store.create_session(study_version=loaded.version,
                                                                   evaluator_name=f"E{e}"), rng)


def _downloads(at) -> list[str]:
    return [d.proto.label for d in at.get("download_button")]


def test_a_rating_only_study_points_from_the_overview_to_its_ratings_tab(make_harness) -> None:
    h = make_harness(config=GRAPHMIND)
    loaded = h.loaded
    h.store.register_study(loaded.version, study_summary(loaded.study))
    at = unlock(results_app(h))
    assert not at.exception
    overview = at.tabs[0]
    assert overview.label == "Overview" and not overview.subheader  # no task of this study has its section here
    assert [i.value for i in overview.info] == ["The results of this study's tasks are in the **Ratings** tab."]
    assert [s.value for s in at.tabs[1].subheader] == ["Rate GraphMind's novelty assessments · 0 ratings of 0 items"]


def test_a_study_with_tasks_in_the_overview_gets_no_pointer(harness: Harness) -> None:
    fill(harness, 2)
    at = unlock(results_app(harness))
    assert not at.tabs[0].info and at.tabs[0].subheader


def test_no_ratings_csv_is_offered_without_ratings_and_the_scores_csv_with_scores(make_harness, tmp_path: Path,
                                                                                  monkeypatch) -> None:
    compare = make_harness(config=make_items_study(tmp_path / "compare", task_block("compare")))
    _answered(compare)
    at = unlock(results_app(compare))
    assert not at.exception
    assert _downloads(at) == ["Evaluations (CSV)", "Main results (CSV)", "Download the LaTeX table"]
    assert "ratings CSV" not in texts(at) and "scores CSV" not in texts(at)

    scored = make_harness(config=make_items_study(tmp_path / "score", task_block("score", per_question=2)),
                          database=tmp_path / "score.sqlite")
    _answered(scored)
    generators = capture_downloads(monkeypatch)
    at = unlock(results_app(scored))
    assert _downloads(at) == ["Evaluations (CSV)", "Scores (CSV)", "Main results (CSV)",
                              "Annotations, Pearmut's shape (JSONL)", "Download the LaTeX table"]
    scores = pd.read_csv(io.StringIO(generators["scores.csv"]()))
    pearmut = [json.loads(line) for line in generators["annotations.pearmut.jsonl"]().splitlines()]
    assert len(pearmut) == 3 * 6 and all(len(line["annotation"][0]) == 2 for line in pearmut)  # (Pearmut's DA)
    assert len(scores) == 3 * 6 * 2 * 2  # evaluators x questions x outputs x scales
    assert scores["score"].dtype.kind == "i" and set(scores["scale"]) == {"fluency", "overall"}
    assert scores.groupby("scale")["scale_max"].first().to_dict() == {"fluency": 5, "overall": 100}
    assert any("scores CSV has one row per score" in c.value for c in at.caption)


FORM = """
[[tasks]]
kind = "form"
id = "bg"
title = "About you"

[[tasks.fields]]
id = "english"
label = "How well do you read English?"
type = "choice"
options = ["Basic", "Fluent"]
"""


def test_the_forms_tab_leaves_out_evaluators_who_failed_the_attention_checks(make_harness, tmp_path: Path) -> None:
    """Two evaluators fill in the form; one fails the attention checks. With "Leave out failed evaluators" (on by
    default) the Forms tab counts only the other, as the Overview does; switched off, both."""
    config = make_items_study(tmp_path, task_block("compare") + 'attention_checks = ["gold0", "gold1"]\n' + FORM,
                              gold=2)
    h = make_harness(config=config)
    loaded = open_study(config, database=h.database)
    h.store.register_study(loaded.version, study_summary(loaded.study))
    form = loaded.study.task("bg")
    for name, right, english in (("Passes", True, "Fluent"), ("Fails", False, "Basic")):
        session = h.store.create_session(study_version=loaded.version, evaluator_name=name)
        for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets):
            if q.kind != "compare":
                continue
            want = q.sources[0] if q.check is None else ("good" if right else "bad")
            record_choice(h.store, session, q, q.labels[q.sources.index(want)], 1000)
        record_form(h.store, session, form, {"english": english}, 2000)
    at = unlock(results_app(h))
    assert not at.exception
    assert at.get("metric")[0].value == "1"  # "Evaluators counted": the failed one is left out

    def forms(at):
        [tab] = [t for t in at.tabs if t.label == "Forms"]
        return [s.value for s in tab.subheader], [df.value for df in tab.dataframe]

    heads, [english] = forms(at)
    assert heads == ["About you · form · 1 submitted"]
    assert english.iloc[:, 1].tolist() == [0, 1]  # Basic 0, Fluent 1: the failed evaluator's "Basic" left out
    at.toggle(key="opt_failed_checks").set_value(False).run()
    heads, [english] = forms(at)
    assert heads == ["About you · form · 2 submitted"] and english.iloc[:, 1].tolist() == [1, 1]


def test_the_latex_preview_is_the_exported_table_without_latex_highlighting(harness: Harness, monkeypatch) -> None:
    """A LaTeX highlighter reads the % of ``\\%`` as the start of a comment and greys the rest of the line (every
    rate, interval and p-value of a row); the preview is shown as plain text, exactly the table exported."""
    fill(harness, 3)
    generators = capture_downloads(monkeypatch)
    at = unlock(results_app(harness))
    [code] = [c for c in at.code if "\\toprule" in c.value]
    latex = generators["results.tex"]()
    assert "\\%" in latex and code.value.strip() == latex.strip()  # the table as exported, \% escapes included
    assert code.language in ("", None, "text", "plaintext")


def test_a_compare_study_of_two_systems_reads_right_with_one_evaluator_then_two(make_harness, tmp_path: Path) -> None:
    """What a newcomer saw: one unfinished evaluator with one answer. The LaTeX caption counts "1 evaluator" and
    names only the intervals its rows have (no scores: no Student t); both timelines draw their single points;
    the Exports tab says what the CERA columns are. A second evaluator: "2 evaluators"."""
    import json

    config = make_items_study(tmp_path, task_block("compare").replace('["gpt4", "t5", "human"]', '["gpt4", "t5"]'))
    h = make_harness(config=config)
    loaded = h.loaded
    h.store.register_study(loaded.version, study_summary(loaded.study))
    session = h.store.create_session(study_version=loaded.version, evaluator_name="Tester")
    q = next(q for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets) if q.kind == "compare")
    record_choice(h.store, session, q, q.labels[0], 1500)
    at = unlock(results_app(h))
    assert not at.exception
    [latex] = [c.value for c in at.code if "\\toprule" in c.value]
    assert "(1 evaluator, 0 completed)." in latex and "Student" not in latex
    assert "Rates in \\%, 95\\% Wilson intervals" in latex
    timelines = {spec["title"]["text"]: spec for spec in (json.loads(c.proto.spec) for c in at.get("vega_lite_chart"))
                 if "over time" in str(spec.get("title"))}
    assert set(timelines) == {"Answers over time (cumulative)", "Evaluators over time (cumulative)"}
    for title, spec in timelines.items():  # one answer, one evaluator started: a dot each, not an empty chart
        assert "point" in [layer["mark"]["type"] for layer in spec["layer"]], title
    [exports] = [t for t in at.tabs if t.label == "Exports"]
    note = next(c.value for c in exports.caption if c.value.startswith("The evaluations CSV"))
    assert "column names of the CERA study's original export" in note and "analysis scripts read this file" in note
    _answered(h, 1)
    at.run()
    [latex] = [c.value for c in at.code if "\\toprule" in c.value]
    assert "(2 evaluators, 0 completed)." in latex


def test_an_error_span_study_shows_its_sections_and_offers_both_span_exports(make_harness, tmp_path: Path,
                                                                             monkeypatch) -> None:
    """The ESA-AI example answered by three evaluators: the task's span sections on the overview (errors per
    severity, MQM, agreement, what became of the suggestions, times), and the spans CSV and the Pearmut-shaped
    JSONL among the downloads, each holding every stored span."""
    h = make_harness(config=ROOT / "examples" / "esa-ai" / "config.toml", database=tmp_path / "spans.sqlite")
    _answered(h)
    generators = capture_downloads(monkeypatch)
    at = unlock(results_app(h))
    assert not at.exception
    assert "Spans (CSV)" in _downloads(at) and "Annotations, Pearmut's shape (JSONL)" in _downloads(at)
    shown = " ".join(texts(at)) + " ".join(m.value for m in at.markdown)
    for heading in ("Errors per system by severity", "MQM score per system", "Agreement on the spans",
                    "ESA-AI: suggested spans kept, changed and deleted", "Time per span and per segment"):
        assert heading in shown, heading
    stored = h.store.spans()
    assert stored and len(pd.read_csv(io.StringIO(generators["spans.csv"]()))) == len(stored)
    lines = generators["annotations.pearmut.jsonl"]().splitlines()
    assert len(lines) == len([a for a in h.store.answers() if a.kind == "spans"])
