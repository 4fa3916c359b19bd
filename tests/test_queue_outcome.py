"""A full k-per-item queue never hands out the pass code for free (issue 25, section 1): an evaluator whom the
queue runs out on after some judgments still answers every attention check of their plan; one who gets no work
at all is told the study is full and gets ``completion_code_full`` or no code; the outcome is stored and shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import analysis
from evalkit.checks import session_outcome
from evalkit.config import open_study
from evalkit.queue import is_queued, register, resolve_step
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.survey import finish_session, outcome_of
from evalkit.tasks.responses import record_choice
from tests.item_study import make_items_study, task_block

CHECKS = 'tutorial = ["gold0"]\nattention_checks = ["gold1", "gold2"]\n'
CODES = 'completion_code_pass = "CPASS1"\ncompletion_code_fail = "CFAIL1"\n'


def queued_study(tmp: Path, extra: str = "") -> Path:
    """12 items x one pair = 12 units, k = 1, 4 queued questions per evaluator, a tutorial and two checks."""
    block = task_block("compare", questions=4).replace('systems = ["gpt4", "t5", "human"]',
                                                       'systems = ["gpt4", "human"]')
    return make_items_study(tmp, block + "judgments_per_item = 1\n" + CHECKS, gold=3, extra=CODES + extra)


def answer(store, session, q) -> None:
    """Answer right: the expected output of a check, else the first text."""
    want = "good" if q.check is not None else q.sources[0]
    record_choice(store, session, q, q.labels[q.sources.index(want)], 1500)


def step(store, loaded, session, questions):
    return resolve_step(store, loaded.study, loaded.item_sets, session, questions, store.progress(session.session_id))


def fill_the_queue(store, task: str = "help") -> int:
    """Another session claims every unit still open (as evaluators who came later would); returns how many."""
    hog = store.create_session(study_version="other", evaluator_name="hog")
    n = 0
    while store.claim(task, hog.session_id, 100 + n, k=1, expire_seconds=3600) is not None:
        n += 1
    return n


def seed_with_a_check_late(loaded, lo: int = 1) -> int:
    """A seed whose plan puts an attention check after the first queued question (so a queue that runs out right
    after that question would skip it)."""
    for seed in range(lo, 500):
        qs = plan(loaded.study, loaded.pools, seed, loaded.item_sets)
        first = next(i for i, q in enumerate(qs) if is_queued(q))
        if any(q.check is not None and q.check.type == "attention" for q in qs[first + 1:]):
            return seed
    raise AssertionError("no such seed")


def registered_session(store, loaded, seed: int):
    """The units registered, a session of ``seed`` and its plan."""
    register(store, loaded.study, loaded.item_sets)
    return store.create_session(study_version=loaded.version, seed=seed), plan(loaded.study, loaded.pools, seed,
                                                                               loaded.item_sets)


def test_an_evaluator_the_queue_runs_out_on_still_answers_every_attention_check(tmp_path: Path) -> None:
    loaded = open_study(queued_study(tmp_path))
    with open_store(tmp_path / "q.sqlite") as store:
        session, questions = registered_session(store, loaded, seed_with_a_check_late(loaded))
        shown, filled = [], 0
        while True:
            s = step(store, loaded, session, questions)
            if s.question is None:
                break
            shown.append(s.question)
            answer(store, session, s.question)
            if s.question.check is None and not filled:  # after the first judgment the queue fills up
                filled = fill_the_queue(store)
        assert filled == 11
        assert sum(q.check is None for q in shown) == 1
        attention = [q for q in shown if q.check is not None and q.check.type == "attention"]
        assert len(attention) == 2  # both planned checks, the one after the queue ran out included
        done = finish_session(store, loaded.study, session.session_id, questions=questions)
        assert done.completion_code == "CPASS1" and outcome_of(done) == "passed"


@pytest.mark.parametrize(("extra", "code"), [("", None), ('completion_code_full = "CFULL1"\n', "CFULL1")])
def test_an_evaluator_who_gets_no_work_is_told_the_study_is_full_and_gets_no_pass_code(
        tmp_path: Path, extra: str, code: str | None) -> None:
    loaded = open_study(queued_study(tmp_path, extra))
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        late = store.create_session(study_version=loaded.version, seed=3)  # opened early, waited on the form
        assert fill_the_queue(store) == 12
        questions = plan(loaded.study, loaded.pools, 3, loaded.item_sets)
        shown = []
        while (s := step(store, loaded, late, questions)).question is not None:
            shown.append(s.question)
            answer(store, late, s.question)
        # the practice question (and any check planned before the first queued question), no judgment
        assert all(q.check is not None for q in shown)
        done = finish_session(store, loaded.study, late.session_id, questions=questions)
        assert outcome_of(done) == "full" and done.completion_code == code
        assert finish_session(store, loaded.study, late.session_id, questions=questions).completion_code == code
        # the evaluator table marks the session
        table = analysis.analyse(analysis.load_frames(store)).quality.set_index("session_id")
        assert table.loc[late.session_id, "outcome"] == "full"


def test_session_outcome_needs_the_plans_checks_and_a_judgment(tmp_path: Path) -> None:
    loaded = open_study(queued_study(tmp_path))
    with open_store(tmp_path / "q.sqlite") as store:
        session, questions = registered_session(store, loaded, seed_with_a_check_late(loaded))
        while True:  # answer up to and including the first judgment, then stop (a time limit, say)
            s = step(store, loaded, session, questions)
            answer(store, session, s.question)
            if s.question.check is None:
                break
        answers, progress = store.answers(session.session_id), store.progress(session.session_id)
        missing = session_outcome(answers, 0, questions, progress)
        assert (missing.status, missing.passed, missing.required, missing.judged) == ("incomplete", False, 2, 1)
        assert session_outcome(answers, 0, questions, progress, limit="time").status == "passed"  # not at fault
        assert session_outcome(answers, 0).passed  # without the plan: the checks answered alone decide
        nothing = [a for a in answers if a.check is not None]
        assert session_outcome(nothing, 0, questions, progress, limit="time").status == "incomplete"
        # a questions limit counts attention checks: one allowed answer that was a check is what was asked
        assert session_outcome(nothing, 0, questions, progress, limit="questions").status == "passed"
        done = finish_session(store, loaded.study, session.session_id, questions=questions)
        assert (outcome_of(done), done.completion_code) == ("incomplete", "CFAIL1")


def walk(store, loaded, seed: int) -> list:
    """A new session of ``seed`` answers every question it is shown (at most 20); returns them."""
    session = store.create_session(study_version=loaded.version, seed=seed)
    questions = plan(loaded.study, loaded.pools, seed, loaded.item_sets)
    shown = []
    while (s := step(store, loaded, session, questions)).question is not None and len(shown) < 20:
        shown.append(s.question)
        answer(store, session, s.question)
    return shown


def test_queue_units_registered_in_the_background_before_any_claim(tmp_path: Path) -> None:
    """The app registers the queue's units on a thread (a freshly started server draws its first page at once,
    issue 25 section 3): a claim made meanwhile waits for them, and the study is not "full" while they are being
    registered."""
    from evalkit.queue import is_full, register_in_background, registering

    loaded = open_study(queued_study(tmp_path))
    with open_store(tmp_path / "q.sqlite") as store:
        thread = register_in_background(store, loaded.study, loaded.item_sets)
        assert registering(store) or store.queue_status("help", 1).units == 12
        assert not is_full(store, loaded.study)
        shown = walk(store, loaded, 4)
        thread.join(30)
        assert not registering(store) and store.queue_status("help", 1).units == 12
        assert sum(q.check is None for q in shown) == 4  # every queued question got a unit


def test_a_failed_background_registration_is_not_full_and_the_next_claim_registers(tmp_path: Path) -> None:
    """The background registration fails (here: given no items files, so making the units raises): the study is
    then not "full" (that would turn everyone away and end every session as "full"), and the next claim
    registers the units itself (a problem still there would reach the claiming page) and gets its unit."""
    from evalkit.queue import is_full, register_in_background, registering

    loaded = open_study(queued_study(tmp_path))
    with open_store(tmp_path / "q.sqlite") as store:
        register_in_background(store, loaded.study, {}).join(30)
        assert store.queue_status("help", 1).units == 0  # it failed
        assert registering(store) and not is_full(store, loaded.study)
        shown = walk(store, loaded, 4)
        assert sum(q.check is None for q in shown) == 4 and store.queue_status("help", 1).units == 12
        assert not registering(store)


def test_no_judgment_while_another_task_still_had_work_is_incomplete_not_full(tmp_path: Path) -> None:
    """A queued task that is full, then a task with its own questions: a time limit that ends the session before
    any judgment is not "the study is full" (the other task had work): incomplete, the fail code."""
    block = task_block("compare", questions=4).replace('systems = ["gpt4", "t5", "human"]',
                                                       'systems = ["gpt4", "human"]')
    config = make_items_study(tmp_path, block + "judgments_per_item = 1\n", task_block("rank", questions=2),
                              extra=CODES + 'completion_code_full = "CFULL1"\n')
    loaded = open_study(config)
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        session = store.create_session(study_version=loaded.version, seed=5)
        assert fill_the_queue(store) == 12
        questions = plan(loaded.study, loaded.pools, 5, loaded.item_sets)
        assert step(store, loaded, session, questions).task.id == "best"  # the queued task ran out
        outcome = session_outcome(store.answers(session.session_id), 0, questions,
                                  store.progress(session.session_id), limit="time")
        assert outcome.status == "incomplete"
        done = finish_session(store, loaded.study, session.session_id, "time", questions)
        assert (outcome_of(done), done.completion_code) == ("incomplete", "CFAIL1")
