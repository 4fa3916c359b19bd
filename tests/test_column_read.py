"""The analysis reads only the answer columns the kinds of a study need (``evaluation_read``, each kind's
``analysis_columns``): for every ready-made study the report is the same as with every column read, and each
kind's own results need no column beyond the common ones and its own."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalkit import analysis, tasks
from evalkit.analysis import (
    COMMON_READ,
    EVALUATION_READ,
    Options,
    TaskContext,
    analyse,
    evaluation_read,
    items_of,
    load_frames,
    tasks_of,
)
from evalkit.config import open_study, study_summary
from evalkit.export import main_results, markdown_report
from evalkit.store import open_store
from tests.helpers import ROOT
from tests.test_every_kind import EXAMPLES, answer_everything

READ = [name for name, _, _ in EVALUATION_READ]


def names(specs) -> set[str]:
    return {name for name, _, _ in specs}


def test_each_kind_declares_columns_the_read_has_beyond_the_common_ones() -> None:
    for kind in tasks.KINDS.values():
        assert set(kind.analysis_columns) <= set(READ) - set(COMMON_READ), kind.name
    assert set(COMMON_READ) <= set(READ)


def test_the_read_follows_the_registered_kinds() -> None:
    studies = {"v1": {"tasks": [{"id": "spot", "kind": "triplet"}, {"id": "pairs", "kind": "pairwise"}]},
               "v2": {"tasks": [{"id": "q", "kind": "score"}]}}
    pools = names(evaluation_read(studies, {"spot", "pairs"}))
    assert pools == set(COMMON_READ) | {"domain", "matched", "left_source", "right_source", "button"}
    assert names(evaluation_read(studies, {"q"})) == set(COMMON_READ) | {"sources", "item_ids", "score_detail"}
    assert names(evaluation_read(studies, set())) == set(COMMON_READ)  # no answers yet
    # a task in the data that no study registered, or of a kind this evalkit does not know: every column
    assert names(evaluation_read(studies, {"spot", "old"})) == set(READ)
    assert names(evaluation_read({"v": {"tasks": [{"id": "x", "kind": "gone"}]}}, {"x"})) == set(READ)
    # the newest registration of a task id says its kind, as for the analysis (tasks_of)
    renamed = {**studies, "v3": {"tasks": [{"id": "spot", "kind": "realfake"}]}}
    assert names(evaluation_read(renamed, {"spot"})) == set(COMMON_READ) | {"confidence"}


def slider_study(folder: Path) -> Path:
    """The cera example with its pairwise task answered on the HELP slider (no example has a pool pair slider)."""
    text = (ROOT / "examples" / "cera" / "config.toml").read_text(encoding="utf-8")
    assert 'response = "choice"' in text and '"../../' in text
    text = text.replace('response = "choice"', 'response = "slider"').replace('"../../', f'"{ROOT}/')
    (folder / "config.toml").write_text(text, encoding="utf-8")
    return folder / "config.toml"


@pytest.fixture(scope="module", params=[*EXAMPLES, "cera-slider"])
def example(request, tmp_path_factory):
    """An example study answered by six evaluators: (loaded study, frames read as usual, frames with every
    column read)."""
    name = request.param
    folder = tmp_path_factory.mktemp(name)
    db = folder / "db.sqlite"
    config = slider_study(folder) if name == "cera-slider" else ROOT / "examples" / name / "config.toml"
    loaded = open_study(config, database=db)
    rng = random.Random(name)
    with open_store(db) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for k in range(6):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"e{k}")
            answer_everything(store, loaded, session, rng)
            store.complete_session(session.session_id)
        trimmed = load_frames(store)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(analysis, "evaluation_read", lambda studies, answer_tasks: EVALUATION_READ)
            full = load_frames(store)
    return loaded, trimmed, full


def test_the_report_is_the_same_as_with_every_column_read(example) -> None:
    loaded, trimmed, full = example
    assert list(trimmed.evaluations.columns) == list(full.evaluations.columns)
    items = items_of(loaded)
    a, b = analyse(trimmed, items=items), analyse(full, items=items)
    assert markdown_report(a) == markdown_report(b)
    pd.testing.assert_frame_equal(main_results(a), main_results(b))
    pd.testing.assert_frame_equal(a.quality, b.quality)


def _blank(ev: pd.DataFrame, keep: set[str]) -> pd.DataFrame:
    """The answers with every read column outside ``keep`` emptied (NULL on every row)."""
    out = ev.copy()
    for name in READ:
        if name not in keep:
            out[name] = (pd.Categorical([None] * len(out)) if isinstance(out[name].dtype, pd.CategoricalDtype)
                         else pd.Series(np.nan, index=out.index, dtype=float))
    return out


def test_each_kind_needs_only_the_common_columns_and_its_own(example) -> None:
    """Stricter than the report: a study mixing kinds reads the union, so a column one kind forgot to declare
    could be read for another; here each kind's results come from its own columns alone."""
    loaded, _, full = example
    items = items_of(loaded)
    options = Options()
    for t in tasks_of(full):
        kind = tasks.KINDS[t["kind"]]
        if kind.analysis is None:
            continue
        context = TaskContext(options, items.get(t["id"]), "", full.ratings)
        own = _blank(full.evaluations, set(COMMON_READ) | set(kind.analysis_columns))
        expected = tasks.results(kind, full.evaluations, t, context)
        got = tasks.results(kind, own, t, context)
        assert [(bl.heading, None if bl.table is None else bl.table.to_string(), bl.note) for bl in got.blocks()] == \
            [(bl.heading, None if bl.table is None else bl.table.to_string(), bl.note) for bl in expected.blocks()], \
            (t["id"], kind.name)
        assert got.main_rows() == expected.main_rows() or \
            pd.DataFrame(got.main_rows()).equals(pd.DataFrame(expected.main_rows())), (t["id"], kind.name)


def test_a_task_whose_first_answer_comes_during_the_read_gets_every_column(tmp_path: Path) -> None:
    """answer_tasks() is asked before the read: a task answered for the first time in between would have its
    kind's columns left out, so load_frames sees the new task in what it read and reads every column."""
    with open_store(tmp_path / "db.sqlite") as store:
        store.register_study("v", {"title": "t", "tasks": [{"id": "spot", "kind": "triplet"},
                                                           {"id": "q", "kind": "score"}]})
        sid = store.create_session(study_version="v").session_id
        store.record_answer(sid, "spot", 0, "A", kind="triplet", domain="laptop", matched=True, slot=0,
                            review_source="real")
        store.record_answer(sid, "q", 0, "scored", kind="score", sources=["gpt4"], item_ids=["r1"],
                            detail={"scores": {"gpt4": {"fluency": 4}}})
        store.answer_tasks = lambda: {"spot"}  # as if "q" had no answer yet when it was asked
        ev = load_frames(store).evaluations.set_index("task")
    assert ev.loc["q", "score_detail"] and ev.loc["q", "sources"] == '["gpt4"]'
    assert ev.loc["spot", "domain"] == "laptop"
