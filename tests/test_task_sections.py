"""Every task is one section of the report, analysed by its kind's module (``evalkit/tasks/<kind>_analysis.py``)
through the registry, shown in study order by one loop in the Markdown report, the results CSV, the charts and
the results page; the Bradley–Terry over all pairwise tasks follows the last pairwise task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evalkit import tasks
from evalkit.analysis import AllPairsResult, Block, Options, TaskContext, analyse
from evalkit.charts import report_specs
from evalkit.export import main_results, markdown_report, results_csv, section_headings
from evalkit.tasks import KINDS
from evalkit.tasks.pairwise_analysis import PairwiseResult
from evalkit.tasks.rating_analysis import RatingResult
from evalkit.tasks.triplet_analysis import TripletResult
from tests.helpers import ROOT
from tests.test_analysis import PAIRS, RATING, TRIPLET, frames_for_report, rating_frame, triplet_rows

FIXTURES = Path(__file__).parent / "fixtures"


def test_the_markdown_sections_of_triplet_pairwise_and_rating_tasks_are_pinned() -> None:
    """The text the report printed when these kinds were analysed in analysis.py and written out in export.py
    (checked against that code): headings, tables, sentences and notes, in order."""
    md = markdown_report(analyse(frames_for_report()))
    assert md[: md.index("## Evaluators")] == (FIXTURES / "report_sections.md").read_text(encoding="utf-8")


def test_sections_follow_the_study_order() -> None:
    frames = frames_for_report()
    frames.studies = {"v": {"title": "Demo", "tasks": [RATING, PAIRS, TRIPLET]}}
    report = analyse(frames)
    assert [(r.kind, r.task) for r in report.tasks] == [("rating", "n"), ("pairwise", "p"), ("triplet", "t")]
    assert [(r.kind, r.task) for r in report.sections()] == [("rating", "n"), ("pairwise", "p"), ("pairwise", ""),
                                                             ("triplet", "t")]
    assert isinstance(report.sections()[2], AllPairsResult)
    md = markdown_report(report)
    assert [line for line in md.splitlines() if line.startswith("## ")] == [
        "## Rate (`n`, rating): 5 ratings of 2 items", "## Natural (`p`, pairwise, choice)",
        "## Bradley–Terry over all pairwise tasks", "## Spot it (`t`, triplet): which one is r?", "## Evaluators"]
    assert list(dict.fromkeys(main_results(report)["section"])) == [
        "Rate: mean score (1–5)", "Natural: win rate (vs 50%)", "Bradley–Terry log-strength (all pairs)",
        "Spot it: picked as r (chance 33.3%)"]
    assert list(report_specs(report))[:4] == ["rating:n", "wins:p", "bradley_terry", "selection:t"]
    # the read-only views callers used before
    assert [r.task for r in report.triplets] == ["t"] and [r.task for r in report.pairwise] == ["p"]
    assert [r.task for r in report.ratings] == ["n"] and report.item_tasks == []
    assert report.bradley_terry_all is report.across[0].bradley_terry


def test_without_a_pairwise_task_there_is_no_bradley_terry_over_all_pairs() -> None:
    frames = frames_for_report()
    frames.evaluations = frames.evaluations[frames.evaluations["kind"] != "pairwise"]
    frames.studies = {"v": {"title": "Demo", "tasks": [TRIPLET, RATING]}}
    report = analyse(frames)
    assert report.across == [] and report.bradley_terry_all.empty
    assert [r.kind for r in report.sections()] == ["triplet", "rating"]
    assert "Bradley–Terry" not in markdown_report(report) and "Bradley" not in results_csv(report)
    assert "bradley_terry" not in report_specs(report)


def test_a_pairwise_task_without_answers_still_gets_its_bradley_terry_section() -> None:
    frames = frames_for_report()
    frames.evaluations = frames.evaluations[frames.evaluations["kind"] != "pairwise"]
    report = analyse(frames)  # the study still has the pairwise task
    [bt] = report.across
    assert bt.bradley_terry.empty and bt.main_rows() == [] and bt.charts() == {}
    page = [b for b in bt.blocks() if b.shown == "page"]
    assert [(b.table, b.note) for b in page] == [(None, "No pairwise comparison yet.")]
    assert "## Bradley–Terry over all pairwise tasks\n\n_No data yet._" in markdown_report(report)


def test_the_three_kinds_are_analysed_by_their_own_modules_through_the_registry() -> None:
    ev = triplet_rows()  # no pairwise answers: its win-rate chart is left out, and its block names none
    context = TaskContext(Options(familiarity_weighted=True), ratings=rating_frame())
    expected = {"triplet": (TRIPLET, TripletResult), "pairwise": (PAIRS, PairwiseResult),
                "rating": (RATING, RatingResult)}
    for name, (task, cls) in expected.items():
        assert KINDS[name].analysis == f"{name}_analysis"
        result = tasks.results(KINDS[name], ev, task, context)
        assert isinstance(result, cls) and result.kind == name and result.task == task["id"]
        keys = set(result.charts())
        for block in result.blocks():
            assert isinstance(block, Block) and block.shown in ("both", "page", "report")
            assert not block.chart or block.chart in keys  # a block names only charts its result draws
        page, heading = section_headings(result)
        assert page.startswith(task["title"]) and heading.startswith(f"{task['title']} (`{task['id']}`, {name}")
    rating = tasks.results(KINDS["rating"], ev, RATING, context)
    assert rating.n_item_ratings == 5 and rating.tab == "Ratings" and rating.options.familiarity_weighted
    assert rating.main_rows()[0]["section"] == "Rate: mean score (1–5), familiarity-weighted"
    assert rating.main_rows()[0]["value"] == rating.mos["weighted_mean"].iloc[0]
    # no rating rows given (a caller without ratings): the task is there, with nothing counted
    empty = tasks.results(KINDS["rating"], ev, RATING, TaskContext(Options()))
    assert empty.n_item_ratings == 0 and empty.agreement["note"].tolist() == ["no scores yet"]
    assert empty.distribution["count"].eq(0).all() and list(empty.charts()) == ["rating:n"]
    assert section_headings(empty)[1] == "Rate (`n`, rating): 0 ratings of 0 items"


def test_the_survey_never_loads_the_analysis_and_a_report_loads_only_the_kinds_it_has() -> None:
    code = """
import json, sys
import evalkit.config, evalkit.sampling, evalkit.survey, evalkit.tasks
loaded = lambda: sorted(m for m in sys.modules if m.endswith("_analysis") or m in ("scipy", "altair",
                                                                                  "evalkit.analysis"))
survey = loaded()
import pandas as pd
from evalkit.analysis import EVALUATION_COLUMNS, RATING_COLUMNS, SESSION_COLUMNS, Frames, analyse
session = dict.fromkeys(SESSION_COLUMNS, "") | {"session_id": "e1", "status": "completed", "seed": 1,
                                                 "started_at": "2026-01-01T00:00:00Z", "completed_at": None}
answer = dict.fromkeys(EVALUATION_COLUMNS) | {"id": 1, "session_id": "e1", "task": "t", "kind": "triplet",
    "question_index": 0, "slot": 0, "response": "A", "review_source": "r", "domain": "a", "time_spent_ms": 900,
    "matched": 1, "created_at": "2026-01-01T00:00:01Z"}
frames = Frames(pd.DataFrame([session]), pd.DataFrame([answer]), pd.DataFrame(columns=RATING_COLUMNS),
                {"v": {"title": "T", "tasks": [{"id": "t", "kind": "triplet", "title": "T", "sources": ["r", "g"],
                                               "target": "r"}]}})
analyse(frames)
print(json.dumps([survey, loaded()]))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    survey, report = json.loads(done.stdout)
    assert survey == []
    assert "evalkit.tasks.triplet_analysis" in report and "evalkit.tasks.rating_analysis" not in report
    assert "evalkit.tasks.pairwise_analysis" not in report and "altair" not in report  # charts: only when drawn
