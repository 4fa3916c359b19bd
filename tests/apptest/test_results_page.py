"""AppTest tests of the results page: the password gate, the statistics, admin actions and exports."""

from __future__ import annotations

import io
import random

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

import ui
from evalkit.sampling import plan
from evalkit.survey import finish_rating, record_choice, record_item_rating
from tests.apptest.conftest import APP, Harness, button, texts


def fill(h: Harness, n: int = 6, seed: int = 1) -> list[str]:
    """n evaluators who finished the study; returns their session ids."""
    loaded, store = h.loaded, h.store
    from evalkit.config import study_summary

    store.register_study(loaded.version, study_summary(loaded.study))
    rng = random.Random(seed)
    task = loaded.study.task("novelty")
    items = loaded.items["novelty"]
    ids = []
    for e in range(n):
        session = store.create_session(study_version=loaded.version, evaluator_name=f"Eval {e}")
        for q in plan(loaded.study, loaded.pools, session.seed):
            if q.kind == "pairwise" and loaded.study.task(q.task).response == "slider":
                from evalkit.survey import record_slider

                record_slider(store, session, q, rng.randint(-100, 100), "accept", 3000)
            else:
                record_choice(store, session, q, rng.choice(q.labels), rng.randint(500, 9000))
        scores = {m.id: rng.randint(1, 5) for m in [task.familiarity, *task.metrics]}
        record_item_rating(store, session, task, 0, items[e % 2].id, scores, "", 4000, items)
        finish_rating(store, session, task)
        store.complete_session(session.session_id)
        ids.append(session.session_id)
    return ids


def results_app(h: Harness, *, secret: str | None = "pw", **secrets: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if secret is not None:
        at.secrets["results_password"] = secret
    for k, v in secrets.items():
        at.secrets[k] = v
    at.run()
    return at.switch_page("pages/results.py").run()


def unlock(at: AppTest, password: str = "pw") -> AppTest:
    at.text_input(key="results_password_input").input(password)
    button(at, "Unlock").click().run()
    assert not at.exception
    return at

def capture_downloads(monkeypatch) -> dict[str, object]:
    """The generators of the page's on-click downloads, by file name (filled when the page renders them)."""
    generators: dict[str, object] = {}
    original_deferred = MediaFileManager.add_deferred

    def capture_deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        generators[file_name] = data_callable
        return original_deferred(self, data_callable, mimetype, coordinates, file_name=file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture_deferred)
    return generators



@pytest.fixture(autouse=True)
def no_env_password(monkeypatch):
    monkeypatch.delenv("EVALKIT_RESULTS_PASSWORD", raising=False)
    monkeypatch.setattr(ui.resources, "login_sleep", lambda seconds: None)  # the limiter's waits: observed, not waited


def test_locked_without_the_password(harness: Harness) -> None:
    fill(harness, 2)
    at = results_app(harness)
    assert not at.exception
    assert at.text_input(key="results_password_input").proto.type == 1  # PASSWORD: typed characters hidden
    assert not at.subheader and not at.dataframe and not at.get("download_button")
    assert "Eval 0" not in texts(at)


class FakeTime:
    """The login limiter's clock, moved by hand; its sleeps are recorded and pass no time."""

    def __init__(self) -> None:
        self.now, self.waits = 5000.0, []

    def __call__(self) -> float:
        return self.now


def fake_clock(monkeypatch) -> FakeTime:
    """The results page's clock and sleep (its back-off after wrong passwords) replaced by a FakeTime."""
    clock = FakeTime()
    monkeypatch.setattr(ui.resources, "login_clock", clock)
    monkeypatch.setattr(ui.resources, "login_sleep", clock.waits.append)
    return clock


def test_wrong_password_is_refused_and_guesses_are_limited_across_sessions(harness: Harness, monkeypatch) -> None:
    fill(harness, 2)
    clock = fake_clock(monkeypatch)
    at = results_app(harness)
    for _ in range(3):
        unlock(at, "guess")
        assert "Wrong password" in texts(at)
        assert not at.subheader and not at.dataframe
        assert at.text_input(key="results_password_input").value == ""  # what was typed is not kept
    # a new browser session shares the budget (one limiter per process): 2 more free guesses, then refused
    other = results_app(harness)
    for _ in range(2):
        unlock(other, "guess again")
        assert "Wrong password" in texts(other)
    unlock(other, "pw")  # even the right password is not compared now (that would be a free guess)
    assert "Too many login attempts just now: try again in 1 s." in texts(other) and not other.subheader
    assert clock.waits == []  # refused at once, nobody sleeps behind the attack
    clock.now += 0.5
    unlock(other, "pw")
    assert other.subheader  # the right password works, after a wait of at most 1.5 s
    assert clock.waits == [pytest.approx(1.5)]


def test_no_password_configured_shows_nothing(harness: Harness) -> None:
    fill(harness, 2)
    at = results_app(harness, secret=None, unrelated="x")
    assert not at.exception
    assert "no password is configured" in at.error[0].value
    assert not at.text_input and not at.dataframe


def test_password_from_the_environment(harness: Harness, monkeypatch) -> None:
    fill(harness, 2)
    monkeypatch.setenv("EVALKIT_RESULTS_PASSWORD", "from-env")
    at = results_app(harness, secret=None, unrelated="x")
    unlock(at, "pw")
    assert "Wrong password" in texts(at)
    unlock(at, "from-env")
    assert at.subheader


def test_the_password_is_checked_again_on_every_run(harness: Harness) -> None:
    fill(harness, 2)
    at = unlock(results_app(harness))
    assert at.subheader
    at.secrets["results_password"] = "rotated"
    at.run()
    assert not at.subheader and at.text_input(key="results_password_input") is not None
    button(unlock(at, "rotated"), "Lock this page").click().run()
    assert not at.subheader


def test_statistics_are_shown(harness: Harness) -> None:
    fill(harness, 6)
    at = unlock(results_app(harness))
    heads = [s.value for s in at.subheader]
    assert "Spot the human · which one is srcHumanQ7?" in heads
    assert any(h.startswith("More natural") for h in heads)
    assert "Bradley–Terry strengths over all pairs" in heads
    assert "Rate an assessment · 6 ratings of 2 items" in heads  # each evaluator rated one of two papers
    metrics = {m.label: m.value for m in at.get("metric")}
    assert metrics["Evaluators counted"] == "6" and metrics["Answers"] == "30"
    assert metrics["Item ratings"] == "6" and metrics["Items rated"] == "2"
    assert len(at.get("vega_lite_chart")) >= 5
    assert "Fleiss' kappa" in texts(at)


def test_every_items_task_gets_its_section(make_harness, tmp_path) -> None:
    """A study with every items kind (compare with ties and the slider, score, rank best-of-n and full ranking,
    realfake): one section per task with its tables and charts, the metric correlations from the study's items
    file, and the same main results as ``evalkit report --config``."""
    from evalkit.analysis import analyse, items_of, load_frames
    from evalkit.config import study_summary
    from evalkit.export import results_csv
    from tests.helpers import answer_items_tasks, make_demo_with_items_tasks

    h = make_harness(config=make_demo_with_items_tasks(tmp_path / "items"))
    loaded = h.loaded
    h.store.register_study(loaded.version, study_summary(loaded.study))
    rng = random.Random(8)
    for e in range(6):
        answer_items_tasks(h.store, loaded, h.store.create_session(study_version=loaded.version,
                                                                   evaluator_name=f"Eval {e}"), rng)
    at = unlock(results_app(h))
    assert not at.exception
    heads = [s.value for s in at.subheader]
    for title in ("Which reply is better? · compare, choice-tie · 36 answers",
                  "Slide towards the better reply · compare, slider · 18 answers",
                  "Score the replies · score, 2 outputs per question · 24 answers",
                  "The best reply · rank, best of n · 18 answers",
                  "Order the replies · rank, full ranking · 18 answers",
                  "Written by the owner? · real or generated, real = human · 36 answers"):
        assert title in heads, (title, heads)
    shown = texts(at)
    for needle in ("Win rates (sign test, ties left out; and ties as half)", "Slider: mean preference",
                   "Slider scales: mean z-score per system", "Krippendorff's alpha per scale",
                   "Paired comparisons on the same items", "Plackett–Luce strengths", "Calibration of the confidence",
                   "Sensitivity (d') and bias", "Dixon & Mood 1946", "Graham et al. 2013", "Hautus 1995"):
        assert needle in shown, needle
    assert "Fisher 1921" in shown and "were not given to the analysis" not in shown  # the page has the metrics
    assert len(at.get("vega_lite_chart")) >= 14  # every items task has at least two charts
    report = analyse(load_frames(h.store), items=items_of(loaded))
    assert "Score the replies: correlation with bleu (item level)" in results_csv(report)


def _status(h: Harness, sid: str) -> str:
    return h.store.get_session(sid).status


def test_exclude_include_trash_restore_and_delete(harness: Harness) -> None:
    ids = fill(harness, 3)
    at = unlock(results_app(harness))
    at.selectbox(key="admin_session").select(ids[0]).run()
    button(at, "Exclude from the results").click().run()
    assert _status(harness, ids[0]) == "excluded"
    assert {m.label: m.value for m in at.get("metric")}["Evaluators counted"] == "2"
    button(at, "Include again").click().run()
    assert _status(harness, ids[0]) == "completed"
    button(at, "Move to trash").click().run()
    assert _status(harness, ids[0]) == "trashed"
    button(at, "Restore from trash").click().run()
    assert _status(harness, ids[0]) == "completed"
    button(at, "Delete permanently").click().run()  # the confirmation step comes first: said under the button
    assert "tick “Delete permanently: I understand this cannot be undone” first" in at.warning[0].value
    assert harness.store.get_session(ids[0]) is not None
    at.checkbox(key=f"confirm_delete_{ids[0]}").check().run()
    button(at, "Delete permanently").click().run()
    assert not at.exception
    assert harness.store.get_session(ids[0]) is None
    assert harness.store.answers(ids[0]) == [] and harness.store.ratings(ids[0]) == []
    assert len(harness.store.answers()) == 10
    log = harness.store.admin_log()
    actions = [(e["action"], e["detail"].get("to")) for e in log if e["actor"] == "results page"]
    assert actions == [("session_status", "excluded"), ("session_status", "completed"),
                       ("session_status", "trashed"), ("session_status", "completed"), ("delete_session", None)]


def test_study_controls_take_effect_for_evaluators(harness: Harness) -> None:
    fill(harness, 1)
    at = unlock(results_app(harness))
    button(at, "Pause new evaluators").click().run()
    assert harness.store.survey_state() == "paused"
    assert "paused" in texts(harness.app())  # an evaluator opening the study now
    button(at, "Resume: let new evaluators start").click().run()
    assert harness.store.survey_state() == "open"
    button(at, "End the study").click().run()  # the box is not ticked: nothing ends, and the page says why
    assert harness.store.survey_state() == "open"
    assert at.warning[0].value == ("Nothing was done: tick “I want to end the study for everyone” first, then click "
                                   "“End the study” again.")
    at.checkbox(key="confirm_end").check().run()
    button(at, "End the study").click().run()
    assert harness.store.survey_state() == "ended"
    assert "This study is complete" in texts(harness.app())
    button(at, "Reopen the study").click().run()
    assert harness.store.survey_state() == "open"
    log = [(e["action"], e["detail"]["to"]) for e in harness.store.admin_log() if e["action"] == "setting"]
    assert log == [("setting", "paused"), ("setting", "open"), ("setting", "ended"), ("setting", "open")]


def test_exports_are_downloadable_and_parseable(harness: Harness, monkeypatch) -> None:
    ids = fill(harness, 4)
    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def capture(self, path_or_data, mimetype, kind, filename=None):
        if filename:
            files[filename] = path_or_data if isinstance(path_or_data, bytes) else path_or_data.encode()
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", capture)
    generators = capture_downloads(monkeypatch)
    at = unlock(results_app(harness))
    buttons = at.get("download_button")
    labels = [d.proto.label for d in buttons]
    assert labels == ["Evaluations (CSV)", "Ratings (CSV)", "Scores (CSV)", "Main results (CSV)",
                      "Download the LaTeX table"]
    # every export is generated when clicked (deferred), not on every rerun of the page, and a click does not
    # rerun the page: a rerun started by the click replaced the deferred file while the browser fetched it
    assert all(d.proto.deferred_file_id and d.proto.ignore_rerun for d in buttons) and not files
    assert set(generators) == {"evaluations.csv", "ratings.csv", "scores.csv", "results.csv", "results.tex"}
    assert not [e for e in harness.store.admin_log() if e["action"] == "export"]
    for name, generate in generators.items():  # what Streamlit calls when the button is clicked
        files[name] = generate().encode()
    logged = [e["detail"]["what"] for e in harness.store.admin_log() if e["action"] == "export"]
    assert sorted(logged) == sorted(generators)  # each export logged when its file was made
    evaluations = pd.read_csv(io.BytesIO(files["evaluations.csv"]))
    assert list(evaluations.columns[:11]) == ["evaluatorName", "sessionId", "task", "questionIndex", "response",
                                              "reviewSource", "domain", "timeSpentMs", "leftSource", "rightSource",
                                              "createdAt"]
    assert len(evaluations) == 20 and set(evaluations["sessionId"]) == set(ids)
    ratings = pd.read_csv(io.BytesIO(files["ratings.csv"]))
    assert len(ratings) == 4 * 3 and set(ratings["metric"]) == {"familiarity", "specificity", "factuality"}
    scores = pd.read_csv(io.BytesIO(files["scores.csv"]))  # the same scores, one row each, as numbers
    assert len(scores) == 4 * 3 and scores["score"].dtype.kind == "i" and set(scores["kind"]) == {"rating"}
    results = pd.read_csv(io.BytesIO(files["results.csv"]))
    assert {"section", "label", "value", "low", "high", "p_value", "n"} <= set(results.columns)
    latex = files["results.tex"].decode()
    assert "\\toprule" in latex and "\\bottomrule" in latex
    assert any(c.value.strip() == latex.strip() for c in at.code)  # the same table, shown to copy


def test_a_failed_read_is_reported_not_raised(harness: Harness, monkeypatch) -> None:
    from evalkit.store import SQLiteStore, StoreError

    fill(harness, 2)

    def broken(self, requests, **kwargs):
        raise StoreError("reading evaluations from x.sqlite failed: MemoryError")

    monkeypatch.setattr(SQLiteStore, "read_tables", broken)
    at = unlock(results_app(harness))
    assert not at.exception
    assert any("could not be read" in e.value and "MemoryError" in e.value for e in at.error)
    assert any(b.label == "Lock this page" for b in at.button)


def test_results_page_is_not_linked_from_evaluator_screens(harness: Harness) -> None:
    at = harness.app()
    assert not at.page_link and "results" not in str(at._tree).lower().replace("results_password", "")


def test_results_page_before_any_answer(harness: Harness) -> None:
    at = unlock(results_app(harness))
    assert not at.exception
    metrics = {m.label: m.value for m in at.get("metric")}
    assert metrics["Evaluators counted"] == "0" and metrics["Answers"] == "0"
    assert "No evaluator has started yet." in texts(at)
    assert any("\\toprule" in c.value for c in at.code)  # the LaTeX table still renders (with no rows)


def test_tables_have_readable_column_names_and_local_times(harness: Harness) -> None:
    fill(harness, 3)
    harness.store.log("someone", "setting", {"to": "paused"})
    at = results_app(harness)
    at.context["timezone"] = "Asia/Tokyo"  # the browser's time zone, as st.context reports it
    at = unlock(at)
    frames = [d.value for d in at.dataframe]
    columns = {c for f in frames for c in f.columns}
    assert not [c for c in columns if "_" in str(c)]  # no code names such as needed_total, longest_same_run
    assert {"Judgments needed (total)", "Max identical run", "Majority agreement %", "Started",
            "Completed"} <= columns
    [evaluators] = [f for f in frames if "Max identical run" in f.columns]
    stored = {s.evaluator_name: s for s in harness.store.sessions()}
    row = evaluators.set_index("Evaluator").loc["Eval 0"]
    started = pd.Timestamp(stored["Eval 0"].started_at)
    assert str(row["Started"].tz) == "Asia/Tokyo" and row["Started"] == started  # same instant, shown in Tokyo
    assert row["Started"].utcoffset() == pd.Timedelta(hours=9)
    [log] = [f for f in frames if "Action" in f.columns]
    assert str(log["Time"].dt.tz) == "Asia/Tokyo" and log["Action"].iloc[0] == "setting"  # newest first
    assert "Times in Asia/Tokyo" in texts(at)
    assert any("(Asia/Tokyo)" in c.value for c in at.caption if c.value.startswith("Updated"))


def test_times_are_utc_and_labelled_without_a_browser_time_zone(harness: Harness) -> None:
    fill(harness, 1)
    at = unlock(results_app(harness))
    [evaluators] = [d.value for d in at.dataframe if "Started" in d.value.columns]
    assert str(evaluators["Started"].dt.tz) == "UTC"
    assert "Times in UTC" in texts(at)


def _frames_shown(at: AppTest) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe]


def test_results_page_explains_its_statistics(harness: Harness) -> None:
    """Issue #10: kappa under per-evaluator selection says what it measures, alpha says why it is missing,
    rating intervals stay on the scale (and say so), Bradley–Terry strengths come with bootstrap intervals."""
    loaded, store = harness.loaded, harness.store
    fill(harness, 5)
    # one more evaluator rates a third paper alone, with the top score on every metric
    from evalkit.config import study_summary

    store.register_study(loaded.version, study_summary(loaded.study))
    task = loaded.study.task("novelty")
    session = store.create_session(study_version=loaded.version, evaluator_name="Solo")
    record_item_rating(store, session, task, 0, loaded.items["novelty"][2].id,
                       {m.id: 5 for m in [task.familiarity, *task.metrics]}, "", 4000, loaded.items["novelty"])
    at = unlock(results_app(harness))
    shown = texts(at)
    assert "measures how consistently they pick the same source" in shown  # the turing task is per-evaluator
    assert "percentile bootstrap, evaluators resampled 1,000 times" in shown
    assert "Student t, clipped to the rating scale (1–5)" in shown
    bt = next(f for f in _frames_shown(at) if "Log-strength" in f.columns)
    assert "95% CI" in bt.columns and bt["95% CI"].str.startswith("[").all()
    mos = next(f for f in _frames_shown(at) if "Familiarity-weighted mean" in f.columns)
    for ci in mos["95% CI"]:
        if ci != "–":
            low, high = (float(x) for x in ci.rstrip(" †").strip("[]").split(", "))
            assert 1 <= low <= high <= 5, ci


def test_alpha_says_why_it_is_missing_on_the_page(harness: Harness) -> None:
    loaded, store = harness.loaded, harness.store
    from evalkit.config import study_summary

    store.register_study(loaded.version, study_summary(loaded.study))
    task = loaded.study.task("novelty")
    for k in range(2):  # two evaluators, each rating a different paper: no item rated twice
        session = store.create_session(study_version=loaded.version, evaluator_name=f"E{k}")
        record_item_rating(store, session, task, 0, loaded.items["novelty"][k].id,
                           {m.id: 3 for m in [task.familiarity, *task.metrics]}, "", 4000, loaded.items["novelty"])
    at = unlock(results_app(harness))
    alpha = next(f for f in _frames_shown(at) if "Krippendorff's alpha" in f.columns)
    assert (alpha["Krippendorff's alpha"] == "–").all()
    assert "Alpha is undefined for every metric: needs items rated by two or more evaluators." in texts(at)
    assert "Rate an assessment · 2 ratings of 2 items" in [h.value for h in at.subheader]


def test_downloaded_csvs_neutralise_formulas(harness: Harness, monkeypatch) -> None:
    loaded, store = harness.loaded, harness.store
    from evalkit.config import study_summary

    store.register_study(loaded.version, study_summary(loaded.study))
    task = loaded.study.task("novelty")
    session = store.create_session(study_version=loaded.version, evaluator_name="=HYPERLINK(\"http://x\",\"y\")",
                                   external_id="@SUM(1+1)")
    for q in plan(loaded.study, loaded.pools, session.seed):
        record_choice(store, session, q, q.labels[0], 1500)
    record_item_rating(store, session, task, 0, loaded.items["novelty"][0].id,
                       {m.id: 2 for m in [task.familiarity, *task.metrics]}, "-1+1 \x1b[2J", 4000,
                       loaded.items["novelty"])
    generators = capture_downloads(monkeypatch)
    unlock(results_app(harness))
    evaluations = pd.read_csv(io.StringIO(generators["evaluations.csv"]()), keep_default_na=False)
    assert set(evaluations["evaluatorName"]) == {"'=HYPERLINK(\"http://x\",\"y\")"}
    assert set(evaluations["externalId"]) == {"'@SUM(1+1)"}
    text = generators["ratings.csv"]()
    assert "\x1b" not in text
    ratings = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert set(ratings["itemComment"]) == {"'-1+1 [2J"} and "comment" not in set(ratings["metric"])
    assert ratings["score"].dtype.kind == "i"


def test_tables_with_evaluator_text_are_neutralised_for_streamlits_own_csv_download(harness: Harness) -> None:
    """Every st.dataframe has a "Download as CSV" button that writes cells as they are: the evaluator table and
    the admin log (names, ids typed by evaluators) are shown neutralised."""
    loaded, store = harness.loaded, harness.store
    store.create_session(study_version=loaded.version, evaluator_name='=HYPERLINK("http://x","y")',
                         external_id="@SUM(1+1)\x1b[2J")
    store.log('+cmd|"/c calc"', "setting", {"to": "paused"})
    at = unlock(results_app(harness))
    frames = [d.value for d in at.dataframe]
    [evaluators] = [f for f in frames if "Max identical run" in f.columns]
    row = evaluators.iloc[0]
    assert row["Evaluator"] == '\'=HYPERLINK("http://x","y")' and row["External id"] == "'@SUM(1+1)[2J"
    [log] = [f for f in frames if "Action" in f.columns]
    assert log["Who"].iloc[0] == "'+cmd|\"/c calc\""


def test_each_task_has_its_section_in_its_tab_with_the_blocks_meant_for_the_page(harness: Harness) -> None:
    """One loop over the report's sections: triplet, pairwise and the Bradley–Terry over all pairs in the Overview,
    the rating task in the Ratings tab; the page shows its own lines (accuracy, kappa, power), the per-domain
    table folded, and none of the report-only tables (Turing view, the task's own Bradley–Terry)."""
    fill(harness, 6)
    at = unlock(results_app(harness))
    overview, ratings = at.tabs[0], at.tabs[1]
    assert (overview.label, ratings.label) == ("Overview", "Ratings")
    heads = [s.value for s in overview.subheader]
    assert len(heads) == 3 and heads[0] == "Spot the human · which one is srcHumanQ7?"
    assert heads[1].endswith(" · pairwise (choice)") and heads[2] == "Bradley–Terry strengths over all pairs"
    assert [s.value for s in ratings.subheader] == ["Rate an assessment · 6 ratings of 2 items"]
    shown = texts(at)
    for line in ("**Accuracy** (found the srcHumanQ7 text):", "**Fleiss' kappa** over question slots:",
                 "**Power**: judgments needed per comparison", "**Krippendorff's alpha** (ordinal)",
                 "Intervals: percentile bootstrap, evaluators resampled 1,000 times"):
        assert line in shown, line
    for report_only in ("Turing view", "Bradley–Terry log-strengths of this task", "Mean scores (MOS)",
                        "Selection rate per source"):
        assert report_only not in shown, report_only
    assert [e.label for e in overview.expander] == ["Per domain"]
    assert len(overview.get("vega_lite_chart")) == 3 and len(ratings.get("vega_lite_chart")) == 1


def test_a_study_without_a_rating_task_has_no_ratings_tab_or_counters(tmp_path, monkeypatch) -> None:
    """The Ratings tab and the item-rating counters belong to studies with a rating task: a compare study's page
    shows Overview, Evaluators and Exports, and three counters."""
    import streamlit as st

    from tests.helpers import ROOT

    monkeypatch.setenv("EVALKIT_CONFIG", str(ROOT / "examples" / "help" / "config.toml"))
    monkeypatch.setenv("EVALKIT_DATABASE", str(tmp_path / "help.sqlite"))
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=60)
    at.secrets["results_password"] = "pw"
    at.run()
    at = unlock(at.switch_page("pages/results.py").run())
    assert [tab.label for tab in at.tabs] == ["Overview", "Evaluators", "Exports"]
    assert [m.label for m in at.metric] == ["Evaluators counted", "Completed", "Answers"]
    # nor the switches that need rating tasks or attention checks (this study has neither)
    assert [t.label for t in at.toggle] == ["Completed sessions only"]
    st.cache_resource.clear()


def test_admin_actions_say_what_they_did_and_the_picker_shows_the_new_status(harness: Harness) -> None:
    """Each action (exclude, include, trash, restore, delete) says what it did under the picker, for one run; the
    picker's label is sent again with the session's new status (the browser keeps the label it was sent); the
    irreversible delete is a plain button, and a line under the buttons says how the three differ."""
    ids = fill(harness, 2)
    odd = harness.store.create_session(study_version=harness.loaded.version, evaluator_name="*Ann* [x](y)")
    at = unlock(results_app(harness))
    sid, short = ids[0], ids[0][:8]

    def picker():
        return at.selectbox(key="admin_session")

    def act(label: str) -> str:
        button(at, label).click().run()
        assert not at.exception
        [message] = [s.value for s in at.success]
        return message

    picker().select(sid).run()
    assert picker().value == sid and f"{short} · Eval 0 · completed" in picker().options
    assert not at.success  # nothing done yet, nothing said
    delete = button(at, "Delete permanently")
    assert delete.proto.type == "secondary"  # not the most prominent: it cannot be undone
    primary = [b.label for b in at.button if b.proto.type == "primary"]
    assert "Move to trash" not in primary and "Delete permanently" not in primary
    note = next(c.value for c in at.caption if c.value.startswith("**Exclude**"))
    assert "not counted" in note and "Restore brings it back" in note and "gone for good" in note
    assert act("Move to trash") == f"Moved {short} (Eval 0) to the trash: it no longer counts; Restore brings it back."
    assert picker().proto.set_value and picker().proto.raw_value == f"{short} · Eval 0 · trashed"  # sent again
    assert f"{short} · Eval 0 · trashed" in picker().options and f"{short} · Eval 0 · completed" not in picker().options
    at.run()  # a message for one run: a later run does not repeat it
    assert not at.success and not picker().proto.set_value and picker().value == sid
    assert act("Restore from trash") == (f"Restored {short} (Eval 0) from the trash: it is completed and counts as "
                                         "before.")
    assert picker().proto.raw_value == f"{short} · Eval 0 · completed"
    assert act("Exclude from the results") == (f"Excluded {short} (Eval 0) from the results: it is kept but no "
                                               "longer counts; Include again brings it back.")
    assert picker().proto.raw_value == f"{short} · Eval 0 · excluded"
    assert act("Include again") == f"Included {short} (Eval 0) again: it is completed and counts as before."
    at.checkbox(key=f"confirm_delete_{sid}").check().run()
    assert act("Delete permanently") == f"Deleted {short} (Eval 0) and all its answers for good."
    assert harness.store.get_session(sid) is None and picker().value is None
    picker().select(odd.session_id).run()  # a name typed by an evaluator is shown as typed, not as Markdown
    assert act("Move to trash").startswith(f"Moved {odd.session_id[:8]} (\\*Ann\\* \\[x\\]\\(y\\)) to the trash")


def test_an_unfinished_session_has_an_empty_completed_cell_not_none(harness: Harness) -> None:
    """The evaluator table's missing values (a session not completed yet) show as the en dash of the other empty
    cells, in every table of the page, not as Streamlit's grey "None"."""
    loaded, store = harness.loaded, harness.store
    session = store.create_session(study_version=loaded.version, evaluator_name="Tester")
    q = plan(loaded.study, loaded.pools, session.seed)[0]
    record_choice(store, session, q, q.labels[0], 1500)
    at = unlock(results_app(harness))
    [evaluators] = [d for d in at.dataframe if "Max identical run" in d.value.columns]
    assert pd.isna(evaluators.value["Completed"].iloc[0]) and evaluators.value["Majority agreement %"].iloc[0] == "–"
    assert {d.proto.placeholder for d in at.dataframe} == {"–"}
