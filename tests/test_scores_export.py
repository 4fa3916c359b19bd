"""``python -m evalkit export scores``: every score as a number, one row each, for the kinds that score (score on
the direct-assessment example, rating on the GraphMind example); and the evaluations CSV's plain system columns
for the newer kinds, CERA's columns kept for the CERA kinds."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from evalkit.analysis import evaluations_csv, load_frames
from evalkit.config import open_study, study_summary
from evalkit.export import SCORES_CSV_COLUMNS, scores_csv
from evalkit.store import open_store
from tests.helpers import ROOT, answer_items_tasks, make_demo_with_items_tasks
from tests.test_cli import run

DIRECT = ROOT / "examples" / "direct-assessment" / "config.toml"
GRAPHMIND = ROOT / "examples" / "graphmind" / "config.toml"


@pytest.fixture(scope="module")
def direct_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The direct-assessment example (a 0-100 slider and two 1-5 Likert scales, one summary per question)
    answered by four evaluators, one of them named like a spreadsheet formula."""
    db = tmp_path_factory.mktemp("direct") / "db.sqlite"
    loaded = open_study(DIRECT, database=db)
    rng = random.Random(5)
    with open_store(db) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for name in ("Ann", "Bo", "=HYPERLINK(\"x\")", "Cy"):
            answer_items_tasks(store, loaded, store.create_session(study_version=loaded.version,
                                                                   evaluator_name=name), rng)
    return db


def _read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def test_export_scores_of_a_score_task_opens_in_pandas_with_numeric_scores(direct_db: Path) -> None:
    out = run("export", "scores", "--db", str(direct_db))
    assert out.returncode == 0, out.stderr
    scores = _read(out.stdout)
    assert list(scores.columns) == SCORES_CSV_COLUMNS
    for column in ("score", "scale_min", "scale_max", "question_index", "position", "time_spent_ms"):
        assert pd.api.types.is_numeric_dtype(scores[column]), (column, scores[column].dtype)
    assert scores["score"].dtype.kind == "i"  # whole numbers as integers, no JSON to parse
    with open_store(direct_db) as store:
        answers = [a for a in store.answers() if a.kind == "score"]
    assert len(scores) == len(answers) * 3  # one row per (answer, output, scale): one output, three scales
    assert set(scores["kind"]) == {"score"} and set(scores["task"]) == {"da"}
    assert set(scores["system"]) <= {"extractive", "abstractive", "human"} and (scores["position"] == 0).all()
    ranges = scores.groupby("scale")[["scale_min", "scale_max"]].first().to_dict("index")
    assert ranges == {"overall": {"scale_min": 0, "scale_max": 100}, "fluency": {"scale_min": 1, "scale_max": 5},
                      "faithfulness": {"scale_min": 1, "scale_max": 5}}
    # every stored score, on its row: the same value, system, item and time
    by_key = scores.set_index(["session_id", "question_index", "scale"])
    for a in answers:
        for scale, values in a.detail["scores"].items():
            row = by_key.loc[(a.session_id, a.question_index, scale)]
            assert (row["score"], row["system"], row["item_id"], row["time_spent_ms"]) == (
                values[0], a.sources[0], a.item_ids[0], a.time_spent_ms)
    # a tidy table: means per system in one line of pandas
    assert scores.pivot_table(index="system", columns="scale", values="score", aggfunc="mean").shape[1] == 3
    # the evaluator columns as in the other exports, text made safe for a spreadsheet
    assert set(scores["evaluator"]) == {"Ann", "Bo", "'=HYPERLINK(\"x\")", "Cy"}
    assert set(scores["session_status"]) == {"active"}


def test_export_scores_of_a_rating_task_opens_in_pandas_with_numeric_scores(tmp_path: Path) -> None:
    from evalkit.survey import finish_rating, record_item_rating

    db = tmp_path / "db.sqlite"
    loaded = open_study(GRAPHMIND, database=db)
    task, items = loaded.study.task("novelty"), loaded.items["novelty"]
    rng = random.Random(1)
    with open_store(db) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for e in range(3):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"E{e}")
            for q in range(2):
                scores = {m.id: rng.randint(1, 5) for m in task.questions}
                record_item_rating(store, session, task, q, items[(e + q) % len(items)].id, scores, "a comment",
                                   3000 + q, items)
            finish_rating(store, session, task)
    out = run("export", "scores", "--db", str(db))
    assert out.returncode == 0, out.stderr
    scores = _read(out.stdout)
    assert list(scores.columns) == SCORES_CSV_COLUMNS and len(scores) == 3 * 2 * 5  # familiarity and 4 metrics
    assert scores["score"].dtype.kind == "i" and scores["score"].between(1, 5).all()
    assert pd.api.types.is_numeric_dtype(scores["scale_max"]) and pd.api.types.is_numeric_dtype(scores["time_spent_ms"])
    assert set(scores["kind"]) == {"rating"} and scores["system"].isna().all()  # one system rated: none named
    metrics = scores[scores["scale"] != "familiarity"]
    assert set(metrics["scale"]) == {"label_correctness", "evidence", "specificity", "graph_usefulness"}
    assert (metrics["scale_min"] == 1).all() and (metrics["scale_max"] == 5).all()
    assert scores.loc[scores["scale"] == "familiarity", "scale_max"].isna().all()  # its range is not stored
    with open_store(db) as store:
        stored = {(r.session_id, r.question_index, r.metric): r.score for r in store.ratings() if r.score is not None}
    assert {(r.session_id, r.question_index, r.scale): r.score for r in scores.itertuples()} == stored


def test_scores_csv_has_a_header_and_no_rows_without_scores(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.sqlite") as store:
        text = scores_csv(load_frames(store, full=True))
    assert text.strip() == ",".join(SCORES_CSV_COLUMNS)


def test_evaluations_csv_names_the_systems_of_newer_kinds_plainly_and_keeps_cera_columns(tmp_path: Path) -> None:
    """Triplet and pairwise answers keep CERA's reviewSource / leftSource / rightSource; compare, score, rank and
    realfake answers have those empty and say it as system / preferred_system / left_system / right_system."""
    from evalkit.sampling import plan
    from evalkit.survey import record_choice

    loaded = open_study(make_demo_with_items_tasks(tmp_path / "study"), database=tmp_path / "db.sqlite")
    rng = random.Random(3)
    with open_store(tmp_path / "db.sqlite") as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for e in range(2):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"E{e}")
            for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets):
                if q.kind in ("triplet", "pairwise"):
                    record_choice(store, session, q, rng.choice(q.labels), 1000)
            answer_items_tasks(store, loaded, session, rng)
        stored = {(a.session_id, a.task, a.question_index): a for a in store.answers()}
        ev = pd.read_csv(io.StringIO(evaluations_csv(load_frames(store, full=True))), keep_default_na=False)
    assert list(ev.columns[:11]) == ["evaluatorName", "sessionId", "task", "questionIndex", "response",
                                     "reviewSource", "domain", "timeSpentMs", "leftSource", "rightSource", "createdAt"]
    assert {"system", "preferred_system", "left_system", "right_system"} <= set(ev.columns)
    assert set(ev["kind"]) == {"triplet", "pairwise", "compare", "score", "rank", "realfake"}
    for row in ev.itertuples():
        a = stored[(row.sessionId, row.task, row.questionIndex)]
        if a.kind in ("triplet", "pairwise"):  # CERA's columns, exactly as stored; the plain ones empty
            assert (row.reviewSource, row.leftSource, row.rightSource) == (
                a.review_source or "", a.left_source or "", a.right_source or "")
            assert row.system == row.preferred_system == row.left_system == row.right_system == ""
            continue
        assert row.reviewSource == row.leftSource == row.rightSource == ""
        assert (row.left_system, row.right_system) == (a.left_source or "", a.right_source or "")
        if a.kind in ("score", "realfake"):  # the text shown
            assert (row.system, row.preferred_system) == (a.review_source or "", "")
        else:  # compare, rank: the system chosen (empty for a tie or a draw)
            assert (row.system, row.preferred_system) == ("", a.review_source or "")
    compare = ev[(ev["kind"] == "compare") & (ev["response"].isin(["A", "B"]))]
    assert len(compare) and (compare["preferred_system"] != "").all()
    assert (json.loads(compare["sources"].iloc[0]) == [compare["left_system"].iloc[0], compare["right_system"].iloc[0]])
