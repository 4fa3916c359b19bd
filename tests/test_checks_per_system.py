"""Per-system check expectations (Pearmut's ``validation`` shape) for the score and spans kinds: reading them (the
old per-scale shape kept, each bad shape named), deciding them on the server (a range per system,
``score_greaterthan``: greater / equal / less / missing), the feedback lines per output; and
``[study.quality] max_failed_checks`` as a proportion of a session's attention checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit.analysis import analyse, check_results, load_frames
from evalkit.checks import CheckFeedback, check_problems, correct, passes, session_outcome
from evalkit.config import ConfigError, load_study, open_study, study_summary
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.survey import finish_session
from evalkit.tasks.responses import record_choice
from evalkit.tasks.score import record_scores
from evalkit.tasks.spans import record_spans
from tests.item_study import make_items_study, task_block

GOOD, BAD, MID = "sysGoodQ1", "sysBadQ2", "sysMidQ3"
ORDER = {"id": "order", "input": "Der Hund.", "outputs": {GOOD: "The dog.", BAD: "Dog the the."},
         "check": {"expect": {GOOD: {"score_greaterthan": BAD}}, "feedback": "One of them is broken."}}
RANGES = {"id": "ranges", "input": "Die Katze.", "outputs": {GOOD: "The cat.", BAD: "Cat cat."},
          "check": {"expect": {GOOD: {"score": [60, 100]}, BAD: {"score": {"quality": [0, 40]}}}}}
OLD = {"id": "old", "input": "Das Haus.", "outputs": {GOOD: "The house.", BAD: "Horse."},
       "check": {"expect": {"quality": [0, 100]}}}

SLIDER = """[[tasks.scales]]
id = "quality"
label = "Quality"
type = "slider"
min = 0
max = 100
"""
FLUENCY = """[[tasks.scales]]
id = "fluency"
label = "Fluency"
type = "likert"
anchors = ["Broken", "Awkward", "Fine", "Fluent"]
"""


def score_study(tmp: Path, checks: list[dict[str, Any]], *, keys: str = 'tutorial = ["order"]\n',
                scales: str = SLIDER, extra: str = "") -> Path:
    """A score task showing two outputs per question (as "Translation A / B"), with these check items."""
    (tmp / "datasets").mkdir(parents=True, exist_ok=True)
    items = [{"id": f"r{i}", "input": f"Input {i}.", "outputs": {GOOD: f"Good {i}.", BAD: f"Bad {i}.",
                                                                   MID: f"Mid {i}."}} for i in range(6)]
    (tmp / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [*items, *checks]), encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text(f"""
[study]
title = "Per system"
datasets = "datasets"
database = "responses.sqlite"
seed = 7
{extra}
[[tasks]]
kind = "score"
id = "quality"
items = "items.jsonl"
systems = ["{GOOD}", "{BAD}", "{MID}"]
outputs_per_question = 2
questions = 2
output_label = "Translation"
{keys}{scales}""", encoding="utf-8")
    return config


def planned(tmp: Path, config: Path, seed: int = 11):
    loaded = open_study(config)
    store = open_store(tmp / "db.sqlite")
    session = store.create_session(study_version=loaded.version, seed=seed)
    qs = plan(loaded.study, loaded.pools, seed, loaded.item_sets)
    return loaded, store, session, {q.check.id: q for q in qs if q.check}


def in_order(q, values: dict[str, Any]) -> list[Any]:
    """Scores per system, put in the question's display order (as the widget sends them)."""
    return [values.get(s) for s in q.sources]


def label(q, system: str) -> str:
    return q.labels[q.sources.index(system)]


# ----------------------------------------------------------------------------- reading


def test_per_system_and_per_scale_shapes_are_told_apart_by_their_keys(tmp_path: Path) -> None:
    config = score_study(tmp_path, [ORDER, RANGES, OLD], keys='tutorial = ["order"]\n'
                                                             'attention_checks = ["ranges", "old"]\n')
    _loaded, _store, _session, by_id = planned(tmp_path, config)
    assert (by_id["order"].check.rule, by_id["ranges"].check.rule, by_id["old"].check.rule) == (
        "systems", "systems", "ranges")
    order = json.loads(by_id["order"].check.want)
    assert order[GOOD]["greater_than"] == {"than": BAD, "scale": "quality", "scale_label": "", "noun": "Translation"}
    ranges = json.loads(by_id["ranges"].check.want)
    assert ranges[GOOD]["score"] == {"quality": [60, 100]} and ranges[BAD]["score"] == {"quality": [0, 40]}
    assert json.loads(by_id["old"].check.want) == {"quality": [0, 100]}  # the old shape, unchanged


@pytest.mark.parametrize(("check", "message"), [
    ({"outputs": {"quality": "x", BAD: "y"}, "check": {"expect": {"quality": [0, 30]}}},
     "'expect' key 'quality' is both a scale of the task and a system of the item"),
    ({"check": {"expect": {"nobody": {"score": [0, 30]}}}},
     "'expect' names system 'nobody', which the item has no output of"),
    ({"check": {"expect": {"clarity": [0, 30]}}}, "'expect' names scale 'clarity', which the task does not have"),
    ({"check": {"expect": {"quality": [0, 30], GOOD: {"score": [0, 30]}}}}, "'expect' mixes a scale ('quality') and "
                                                                            f"a system ('{GOOD}')"),
    ({"check": {"expect": {GOOD: {"score_greaterthan": MID}}}},
     f"\"score_greaterthan\" must name another system of the item ({BAD}), got '{MID}'"),
    ({"check": {"expect": {GOOD: {"score_greaterthan": GOOD}}}}, f"compares '{GOOD}' with itself"),
    ({"check": {"expect": {GOOD: {"score_greaterthan": 2}}}}, "\"score_greaterthan\" must name another system"),
    ({"check": {"expect": {GOOD: {"score_greaterthan": BAD}, BAD: {"score_greaterthan": GOOD}}}},
     f"goes round in a circle ({GOOD} > {BAD} > {GOOD})"),
    ({"check": {"expect": {GOOD: {"error_spans": []}}}},
     "'error_spans' is not known (score, score_greaterthan, feedback)"),
    ({"check": {"expect": {GOOD: {}}}}, "expects nothing: give a \"score\" range or a \"score_greaterthan\""),
    ({"check": {"expect": {GOOD: {"score": [0, 300]}}}}, "a score range is [low, high] within a scale of the task"),
    ({"check": {"expect": "good"}}, "'expect' must be per-scale ranges"),
])
def test_bad_shapes_are_refused_naming_the_item(tmp_path: Path, check: dict, message: str) -> None:
    bad = {"id": "bad1", "input": "i", "outputs": {GOOD: "x", BAD: "y"}, **check}
    with pytest.raises(ConfigError) as err:
        open_study(score_study(tmp_path, [bad], keys='attention_checks = ["bad1"]\n'))
    assert "check item 'bad1'" in str(err.value) and message in str(err.value), str(err.value)


def spans_study(tmp: Path, expect: dict, extra: str = "") -> Path:
    (tmp / "datasets").mkdir(parents=True, exist_ok=True)
    items = [{"id": f"r{i}", "src": "Der Hund.", "tgt": {GOOD: "The dog.", BAD: f"Dog {i}."}} for i in range(4)]
    items.append({"id": "tut", "src": "Der Hund.", "tgt": {GOOD: "The dog.", BAD: "The the dog."},
                  "check": {"expect": expect, "feedback": "The second one repeats a word."}})
    (tmp / "mt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text(f"""
[study]
title = "Spans"
database = "r.sqlite"
seed = 3

[[tasks]]
kind = "spans"
id = "esa"
items = "mt.jsonl"
systems = ["{GOOD}", "{BAD}"]
outputs_per_question = 2
questions = 2
tutorial = ["tut"]
{extra}
""", encoding="utf-8")
    return config


def test_spans_kind_reads_score_greaterthan_and_refuses_it_without_scales(tmp_path: Path) -> None:
    loaded = open_study(spans_study(tmp_path / "a", {GOOD: {"score_greaterthan": BAD},
                                                      BAD: {"error_spans": [{"start_i": 4, "end_i": 7}]}}))
    [tut] = [q for q in plan(loaded.study, loaded.pools, 5, loaded.item_sets) if q.check]
    want = json.loads(tut.check.want)
    assert tut.check.rule == "spans" and want[GOOD]["greater_than"]["than"] == BAD and want[BAD]["error_spans"]
    with pytest.raises(ConfigError) as err:  # MQM without scales: nothing to compare
        open_study(spans_study(tmp_path / "b", {GOOD: {"score_greaterthan": BAD}}, 'protocol = "mqm"'))
    assert "check item 'tut'" in str(err.value) and "this task has no scales" in str(err.value), str(err.value)


# ----------------------------------------------------------------------------- deciding


@pytest.mark.parametrize(("good", "bad", "right"), [(70, 40, True), (50, 50, False), (30, 60, False),
                                                    (None, 40, False), (70, None, False)])
def test_score_greaterthan_is_strict_and_a_missing_score_fails(tmp_path: Path, good: Any, bad: Any,
                                                                right: bool) -> None:
    _loaded, _store, _session, by_id = planned(tmp_path, score_study(tmp_path, [ORDER]))
    q = by_id["order"]
    detail = {"scores": {"quality": in_order(q, {GOOD: good, BAD: bad})}}
    assert correct(q.check, "scored", None, detail, q) is right
    problems = check_problems(q.check, q, detail)
    if right:
        assert problems == []
        return
    higher, lower = label(q, GOOD), label(q, BAD)
    yours = f" (yours: {good} and {bad})" if good is not None and bad is not None else ""
    # the line goes with the output that must be higher, and names both by their labels, never by their systems
    assert problems == [(higher, f"Translation {higher} should score higher than Translation {lower}{yours}.")]


def test_ranges_per_system_each_say_which_output(tmp_path: Path) -> None:
    config = score_study(tmp_path, [RANGES], keys='tutorial = ["ranges"]\n')
    _loaded, _store, _session, by_id = planned(tmp_path, config)
    q = by_id["ranges"]
    assert correct(q.check, "scored", None, {"scores": {"quality": in_order(q, {GOOD: 60, BAD: 40})}}, q)
    detail = {"scores": {"quality": in_order(q, {GOOD: 59, BAD: 41})}}
    assert not correct(q.check, "scored", None, detail, q)
    assert sorted(check_problems(q.check, q, detail)) == sorted([
        (label(q, GOOD), "The score should be between 60 and 100 (yours: 59)."),
        (label(q, BAD), "The score should be between 0 and 40 (yours: 41).")])


def test_several_scales_the_order_is_on_the_first(tmp_path: Path) -> None:
    config = score_study(tmp_path, [ORDER], scales=FLUENCY + SLIDER)
    _loaded, _store, _session, by_id = planned(tmp_path, config)
    q = by_id["order"]
    detail = {"scores": {"fluency": in_order(q, {GOOD: 2, BAD: 3}), "quality": in_order(q, {GOOD: 90, BAD: 10})}}
    [(_, line)] = check_problems(q.check, q, detail)
    assert "on 'Fluency' (yours: 2 and 3)." in line
    detail["scores"]["fluency"] = in_order(q, {GOOD: 4, BAD: 3})
    detail["scores"]["quality"] = in_order(q, {GOOD: 10, BAD: 90})  # not the first scale: not compared
    assert correct(q.check, "scored", None, detail, q)


def test_a_wrong_practice_answer_raises_the_lines_per_output_and_a_right_one_is_stored(tmp_path: Path) -> None:
    loaded, store, session, by_id = planned(tmp_path, score_study(tmp_path, [ORDER]))
    task = loaded.study.tasks[0]
    q = by_id["order"]
    with pytest.raises(CheckFeedback) as err:
        record_scores(store, session, task, q, {"quality": in_order(q, {GOOD: 40, BAD: 60})}, None, 10)
    assert err.value.feedback == "One of them is broken."
    assert err.value.problems == ((label(q, GOOD), f"Translation {label(q, GOOD)} should score higher than "
                                                   f"Translation {label(q, BAD)} (yours: 40 and 60)."),)
    assert not any(s in json.dumps(err.value.problems) for s in (GOOD, BAD))
    answer = record_scores(store, session, task, q, {"quality": in_order(q, {GOOD: 61, BAD: 60})}, None, 10)
    assert answer.check == "tutorial" and answer.check_passed is False  # corrected; the first try was wrong


def test_spans_kind_decides_score_greaterthan_with_its_spans(tmp_path: Path) -> None:
    loaded = open_study(spans_study(tmp_path, {GOOD: {"score_greaterthan": BAD}}))
    store = open_store(tmp_path / "db.sqlite")
    session = store.create_session(study_version=loaded.version, seed=5)
    [q] = [q for q in plan(loaded.study, loaded.pools, 5, loaded.item_sets) if q.check]
    task = loaded.study.tasks[0]
    item = loaded.item_sets[task.source.items].by_id("tut")

    def send(good: int, bad: int) -> dict[str, Any]:
        return {"spans": [[[]], [[]]], "scores": {"quality": in_order(q, {GOOD: good, BAD: bad})}}

    with pytest.raises(CheckFeedback) as err:
        record_spans(store, session, task, q, item, send(50, 50), 10)
    assert err.value.problems == ((label(q, GOOD), f"Translation {label(q, GOOD)} should score higher than "
                                                   f"Translation {label(q, BAD)} (yours: 50 and 50)."),)
    assert record_spans(store, session, task, q, item, send(51, 50), 10).check == "tutorial"


# ----------------------------------------------------------------------------- max_failed_checks as a proportion


def test_passes_with_a_count_or_a_proportion() -> None:
    assert passes(1, 0.2, 5) and not passes(2, 0.2, 5)  # 0.2 of 5 checks: 1 failed passes, 2 fail
    assert passes(3, 0.3, 10) and not passes(4, 0.3, 10)  # the decimal as written, not its binary neighbour
    assert passes(0, 0.2, 0) and passes(0, 0.5, 3) and not passes(1, 0.5, 1)
    assert passes(1, 1) and not passes(2, 1) and passes(0, 0) and not passes(1, 0)  # a count, as before
    with pytest.raises(ValueError, match="needs the number of checks"):
        passes(1, 0.2)


def five_checks(tmp: Path, extra: str = "") -> Path:
    ids = [f"gold{g}" for g in range(5)]
    return make_items_study(tmp, task_block("compare") + f"attention_checks = {json.dumps(ids)}\n", gold=5,
                            extra=extra)


@pytest.mark.parametrize(("wrong", "passed"), [(0, True), (1, True), (2, False)])
def test_a_session_fails_past_the_share_of_its_checks(tmp_path: Path, wrong: int, passed: bool) -> None:
    config = five_checks(tmp_path, 'completion_code_pass = "OK1"\ncompletion_code_fail = "NO1"\n'
                                   "[study.quality]\nmax_failed_checks = 0.2\n")
    loaded = open_study(config)
    assert loaded.study.max_failed_checks == 0.2 and study_summary(loaded.study)["max_failed_checks"] == 0.2
    store = open_store(tmp_path / "db.sqlite")
    session = store.create_session(study_version=loaded.version, seed=3)
    store.register_study(loaded.version, study_summary(loaded.study))
    checks = 0
    for q in plan(loaded.study, loaded.pools, 3, loaded.item_sets):
        system = q.sources[0]
        if q.check is not None:
            system = "bad" if checks < wrong else "good"
            checks += 1
        record_choice(store, session, q, label(q, system), 500)
    assert checks == 5
    outcome = session_outcome(store.answers(session.session_id), 0.2)
    assert (outcome.checks, outcome.failed, outcome.passed) == (5, wrong, passed)
    code = finish_session(store, loaded.study, session.session_id).completion_code
    assert code == ("OK1" if passed else "NO1")
    # the results page's analysis reads the same share from the study registered in the database
    q = analyse(load_frames(store)).quality.set_index("session_id")
    assert q.loc[session.session_id, "checks_result"] == ("passed" if passed else "failed")


def test_check_results_apply_the_share_per_session() -> None:
    sessions = pd.DataFrame({"session_id": ["s5", "s2", "none"]})
    ev = pd.DataFrame({"session_id": ["s5"] * 5 + ["s2"] * 2,
                       "check_type": ["attention"] * 7,
                       "check_passed": [0, 1, 1, 1, 1, 0, 1]})
    out = check_results(sessions, ev, 0.2).set_index("session_id")
    # s5: 1 of 5 wrong (0.2: passes); s2: 1 of 2 wrong (0.5: fails); none: no checks
    assert list(out["checks_result"]) == ["passed", "failed", ""]
    assert list(check_results(sessions, ev, 1)["checks_result"]) == ["passed", "passed", ""]


@pytest.mark.parametrize(("value", "message"), [
    ("1.0", "a count is written as an integer (1, not 1.0)"),
    ("0.0", "a count is written as an integer (0, not 0.0)"),
    ("-1", "must be at least 0, got -1"),
    ("-0.5", "must be a count (an integer ≥ 0) or a proportion strictly between 0 and 1"),
    ("1.5", "must be a count (an integer ≥ 0) or a proportion strictly between 0 and 1"),
    ("nan", "got nan"),
    ("inf", "got inf"),
    ('"0.2"', "got a string '0.2'"),
    ("true", "must be a count (an integer ≥ 0) or a proportion"),
])
def test_bad_max_failed_checks_are_named(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_study(five_checks(tmp_path, f"[study.quality]\nmax_failed_checks = {value}\n"))
    text = str(err.value)
    assert "[study.quality]: key 'max_failed_checks'" in text and message in text, text


def test_a_count_keeps_its_meaning(tmp_path: Path) -> None:
    study = load_study(five_checks(tmp_path, "[study.quality]\nmax_failed_checks = 2\n"))
    assert study.max_failed_checks == 2 and isinstance(study.max_failed_checks, int)


def test_a_systems_own_feedback_comes_first_next_to_its_output_and_only_when_it_misses(tmp_path: Path) -> None:
    check = {"id": "words", "input": "Check.", "outputs": {GOOD: "Good.", BAD: "Bad."},
             "check": {"expect": {GOOD: {"score": [60, 100], "feedback": "This one is fine: score it high."},
                                  BAD: {"score": [0, 40], "feedback": "This one is wrong: score it low."}}}}
    config = score_study(tmp_path, [check], keys='tutorial = ["words"]\n')
    _loaded, _store, _session, by_id = planned(tmp_path, config)
    q = by_id["words"]
    detail = {"scores": {"quality": in_order(q, {GOOD: 80, BAD: 70})}}  # only BAD misses
    assert check_problems(q.check, q, detail) == [
        (label(q, BAD), "This one is wrong: score it low."),
        (label(q, BAD), "The score should be between 0 and 40 (yours: 70).")]
    bad = dict(check, id="bad", check={"expect": {GOOD: {"score": [60, 100], "feedback": " "}}})
    with pytest.raises(ConfigError, match="\"feedback\" must be a non-empty text"):
        open_study(score_study(tmp_path / "b", [bad], keys='tutorial = ["bad"]\n'))
