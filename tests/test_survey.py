"""evalkit.survey: where a session stands and what its progress bar says (no Streamlit)."""

from __future__ import annotations

import pytest

from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.store import Progress
from evalkit.survey import current_step, progress_label
from tests.helpers import make_token_study


@pytest.fixture(scope="module")
def study_and_plan(tmp_path_factory: pytest.TempPathFactory):
    config = make_token_study(tmp_path_factory.mktemp("survey"), min_items=2)
    loaded = open_study(config)
    return loaded.study, plan(loaded.study, loaded.pools, 3)


def _progress(answered: dict | None = None, rated: dict | None = None, finished: set | None = None) -> Progress:
    return Progress(answered=answered or {}, rated=rated or {}, finished=finished or set())


def test_progress_reaches_100_only_when_nothing_is_left(study_and_plan) -> None:
    study, questions = study_and_plan
    every = {"turing": {0, 1, 2}, "natural": {0, 1}}
    # the required papers are rated, but the block is not finished: not 100 %
    step = current_step(study, questions, _progress(every, {"novelty": {0: "paper0", 1: "paper1"}}))
    assert step.kind == "rating" and step.answered < step.total
    fraction, text = progress_label(step, "Paper")
    assert fraction < 1.0 and "100%" not in text
    assert text.startswith("Paper 3 (optional: the 2 required are done)")
    # one of two papers rated: says how many are required
    step = current_step(study, questions, _progress(every, {"novelty": {0: "paper0"}}))
    assert progress_label(step, "Paper")[1].startswith("Paper 2 of at least 2 · ")
    # finished: 100 %
    done = current_step(study, questions, _progress(every, {"novelty": {0: "paper0", 1: "paper1"}}, {"novelty"}))
    assert done.kind == "done" and progress_label(done) == (1.0, "Finished · 100% of the study done")


def test_progress_counts_up_and_rounds_down(study_and_plan) -> None:
    study, questions = study_and_plan
    first = current_step(study, questions, _progress())
    assert progress_label(first) == (0.0, "Question 1 of 3 · 0% of the study done")
    last = [first]
    answered: dict[str, set[int]] = {}
    for q in questions:
        answered.setdefault(q.task, set()).add(q.index)
        step = current_step(study, questions, _progress({k: set(v) for k, v in answered.items()}))
        fraction, text = progress_label(step)
        assert fraction > progress_label(last[-1])[0]
        assert int(text.split(" · ")[1].split("%")[0]) == int(100 * step.answered / step.total)
        last.append(step)
    assert last[-1].kind == "rating" and progress_label(last[-1])[0] < 1.0
