"""AppTest: a compare task with ``judgments_per_item`` in the app. The question shows the item claimed from the
shared queue (the same one after a reload), the answer is stored with that item and counts as a judgment, an
evaluator whom the queue cannot serve goes on to the next task, and a full study says so on the
consent page without creating a session."""

from __future__ import annotations

from pathlib import Path

from evalkit.queue import parse_unit, register
from tests.apptest.conftest import Harness, button, texts
from tests.apptest.test_item_kinds import N_ITEMS, assert_no_secrets, shown_texts, study, task_toml

PAIR = ["sysAlphaX1", "sysBetaY2"]


def queued_study(tmp: Path, k: int, questions: int) -> Path:
    return study(tmp, task_toml("compare", systems=PAIR, questions=questions, judgments_per_item=k,
                                claim_minutes=5))


def consent(h: Harness, name: str):
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input(name)
    at.button[0].click().run()
    assert not at.exception
    return at


def begin(h: Harness, name: str):
    at = consent(h, name)
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def claimed(h: Harness, at, index: int) -> tuple[str, tuple[str, ...]]:
    return parse_unit(h.store.progress(at.query_params["s"]).claims["block"][index])


def test_the_question_shows_the_claimed_item_and_keeps_it_on_a_reload(make_harness, tmp_path) -> None:
    h = make_harness(config=queued_study(tmp_path, k=2, questions=2))
    at = begin(h, "Ada")
    item, systems = claimed(h, at, 0)
    its = next(iter(h.loaded.item_sets.values()))
    shown = shown_texts(at)
    assert all(its.by_id(item).outputs[s] in shown for s in systems) and its.by_id(item).input in shown
    assert "Question 1 of 2" in at.get("progress")[0].proto.text
    assert_no_secrets(at)
    again = h.app(s=at.query_params["s"])  # a reload: the same claim, not a new one
    assert claimed(h, again, 0) == (item, systems) and h.store.queue_status("block", 2).live == 1
    at.radio(key="block-0-choice").set_value("A")
    button(at, "Next").click().run()
    assert not at.exception
    (row,) = h.store.answers(task="block")
    assert row.item_ids == (item,) and sorted(row.sources) == sorted(systems)
    assert claimed(h, at, 1)[0] != item or claimed(h, at, 1)[1] != systems  # never the same unit twice


def test_an_evaluator_the_queue_cannot_serve_goes_on_and_then_the_study_is_full(make_harness, tmp_path) -> None:
    h = make_harness(config=queued_study(tmp_path, k=1, questions=N_ITEMS))  # one evaluator takes every unit
    first = begin(h, "Ada")
    for i in range(N_ITEMS):
        first.radio(key=f"block-{i}-choice").set_value("A")
        button(first, "Next").click().run()
        assert not first.exception
    assert first.header[0].value == "The block after"  # the queued block is done
    assert h.store.queue_status("block", 1).full
    # a second evaluator who started earlier (before the queue ran dry) reaches the block: it ends for them at once
    late = h.store.create_session(study_version=h.loaded.version, evaluator_name="Bo")
    at = h.app(s=late.session_id)
    assert not at.exception and at.header[0].value == "The block after"
    assert "block" in h.store.progress(late.session_id).finished
    # the study is full only when every queued task is: this study has an unqueued task after it, and the
    # queued one is full, so a new evaluator is told and no session is made
    sessions = len(h.store.sessions())
    fresh = h.app()
    assert not fresh.exception
    assert "This study is full." in texts(fresh) and not fresh.checkbox
    assert len(h.store.sessions()) == sessions


def test_an_answered_claim_counts_as_a_judgment_when_the_study_ends(make_harness, tmp_path) -> None:
    config = study(tmp_path, task_toml("compare", systems=PAIR, questions=1, judgments_per_item=1), after=False)
    h = make_harness(config=config)
    at = begin(h, "Ada")
    assert h.store.queue_status("block", 1).live == 1
    at.radio(key="block-0-choice").set_value("B")
    button(at, "Next").click().run()
    assert not at.exception and "Thank you" in texts(at)
    status = h.store.queue_status("block", 1)
    assert (status.judged, status.live) == (1, 0)


def test_an_evaluator_who_got_no_work_sees_the_study_is_full_and_no_pass_code(make_harness, tmp_path) -> None:
    """The queued block is the study's only task: a session opened before the queue filled (the evaluator waited on
    the first page) ends with the "study is full" screen: no pass code, a request to return the study."""
    config = study(tmp_path, task_toml("compare", systems=PAIR, questions=N_ITEMS, judgments_per_item=1),
                   after=False)
    config.write_text(config.read_text().replace("[study]\n", '[study]\ncompletion_code_pass = "CPASS1"\n', 1))
    h = make_harness(config=config)
    late = h.store.create_session(study_version=h.loaded.version, evaluator_name="Bo")  # waits on the first page
    first = begin(h, "Ada")
    for i in range(N_ITEMS):
        first.radio(key=f"block-{i}-choice").set_value("A")
        button(first, "Next").click().run()
    assert "Thank you" in texts(first) and "CPASS1" in texts(first)  # the one who judged passes
    at = h.app(s=late.session_id)
    assert not at.exception
    shown = texts(at)
    assert "This study is full" in shown and "Please return this study" in shown and "CPASS1" not in shown
    assert not at.code  # no code at all
    assert h.store.get_session(late.session_id).meta["outcome"] == "full"
    from tests.apptest.test_results_page import results_app, unlock  # the researcher sees it next to the status

    results = unlock(results_app(h))
    [table] = [d.value for d in results.dataframe if "Outcome" in d.value.columns]
    assert list(table.columns[table.columns.get_loc("Status") + 1:][:1]) == ["Outcome"]
    assert dict(zip(table["Evaluator"], table["Outcome"], strict=True)) == {"Ada": "passed", "Bo": "full"}


def test_a_full_studys_screen_out_code_is_given_when_configured(make_harness, tmp_path) -> None:
    config = study(tmp_path, task_toml("compare", systems=PAIR, questions=N_ITEMS, judgments_per_item=1),
                   after=False)
    config.write_text(config.read_text().replace(
        "[study]\n", '[study]\ncompletion_code_pass = "CPASS1"\ncompletion_code_full = "CFULL1"\n', 1))
    h = make_harness(config=config)
    late = h.store.create_session(study_version=h.loaded.version, evaluator_name="Bo")
    hog = h.store.create_session(study_version=h.loaded.version, evaluator_name="hog")
    register(h.store, h.loaded.study, h.loaded.item_sets)  # (the app does it on its first run)
    claimed_now = 0
    while h.store.claim("block", hog.session_id, claimed_now, k=1, expire_seconds=600) is not None:
        claimed_now += 1
    assert claimed_now == N_ITEMS  # live claims fill the queue too
    at = h.app(s=late.session_id)
    if "This study is full" not in texts(at):  # the task's instructions first
        button(at, "Begin").click().run()
    assert not at.exception
    assert "This study is full" in texts(at) and [c.value for c in at.code] == ["CFULL1"]
