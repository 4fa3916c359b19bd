"""Every registered task kind, end to end from the ready-made studies in examples/: each kind is used by at
least one example; for each example, evaluators' plans are answered through the kinds' record functions,
stored once each, analysed, and shown in the report, the results CSV and the evaluations CSV.

(Rendering and answering each kind on its page are in tests/apptest/test_item_kinds.py and the graphmind /
survey AppTest files; completing each example in a browser is tests/e2e/test_examples.py.)
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pandas as pd
import pytest

from evalkit import tasks
from evalkit.analysis import analyse, evaluations_csv, items_of, load_frames
from evalkit.config import open_study, study_summary
from evalkit.export import main_results, markdown_report
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.tasks import RatingTask, responses
from evalkit.tasks.rating import finish_rating, record_item_rating
from tests.helpers import ROOT, answer_items_tasks

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.toml"))


#: studies under tests/ that use a kind no example uses yet (none: the crowd example has the form kind now)
TEST_STUDIES: list[Path] = []


def test_every_registered_kind_has_a_ready_made_study() -> None:
    configs = [ROOT / "examples" / name / "config.toml" for name in EXAMPLES] + TEST_STUDIES
    used = {t.kind for config in configs for t in open_study(config).study.tasks}
    assert used == set(tasks.KINDS), f"kinds without an example study: {set(tasks.KINDS) - used}"


def answer_everything(store, loaded, session, rng: random.Random) -> int:
    """Answer every step of the session's plan; returns the number of answers and ratings stored."""
    questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
    stored = sum(1 for q in questions if q.kind in ("compare", "score", "spans", "rank", "realfake"))
    for q in questions:
        if q.kind in ("triplet", "pairwise"):
            task = loaded.study.task(q.task)
            if q.kind == "pairwise" and task.response == "slider":
                responses.record_slider(store, session, q, rng.randint(-100, 100), "accept", 4000)
            else:
                responses.record_choice(store, session, q, rng.choice(q.labels), 4000)
            stored += 1
    answer_items_tasks(store, loaded, session, rng)
    for task in loaded.study.tasks:
        if isinstance(task, RatingTask):
            items = loaded.items[task.id]
            for index, item in enumerate(items[: task.min_items]):
                scores = {m.id: rng.randint(1, len(m.anchors)) for m in task.questions}
                record_item_rating(store, session, task, index, item.id, scores, "", 9000, items)
                stored += 1
            finish_rating(store, session, task)
    return stored


@pytest.mark.parametrize("name", EXAMPLES)
def test_an_example_study_runs_from_plan_to_report(name: str, tmp_path: Path) -> None:
    loaded = open_study(ROOT / "examples" / name / "config.toml", database=tmp_path / "db.sqlite")
    rng = random.Random(name)
    with open_store(tmp_path / "db.sqlite") as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        expected = 0
        for k in range(6):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"e{k}")
            expected += answer_everything(store, loaded, session, rng)
            store.complete_session(session.session_id)
        answers, ratings = store.answers(), store.ratings()
        rated_items = {(r.session_id, r.item_id) for r in ratings}
        assert len(answers) + len(rated_items) == expected
        assert len({(a.session_id, a.task, a.question_index) for a in answers}) == len(answers)  # once each
        for a in answers:
            assert a.item_ids and a.sources
            if len(a.sources) == 2:
                assert (a.left_source, a.right_source) == a.sources
        frames = load_frames(store)
    report = analyse(frames, items=items_of(loaded))
    md = markdown_report(report)
    sections = set(main_results(report)["section"])
    for task in loaded.study.tasks:  # every task has its section in the report and rows in the results table
        if tasks.kind_of(task.kind).analysis is None:  # forms: their own summaries and CSV, not the report
            continue
        assert task.title in md, (name, task.id)
        assert any(s.startswith(task.title) for s in sections), (name, task.id, sorted(sections)[:5])
    exported = pd.read_csv(io.StringIO(evaluations_csv(load_frames_full(tmp_path / "db.sqlite"))))
    assert len(exported) == len(answers)
    assert set(exported["task"]) == {a.task for a in answers}


def load_frames_full(db: Path):
    with open_store(db) as store:
        return load_frames(store, full=True)
