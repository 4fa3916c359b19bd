"""Tutorials, attention checks and pass / fail completion (evalkit.checks): config, plan, recording on the
server, outcome, completion codes, analysis and export."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from evalkit.analysis import Options, analyse, evaluations_csv, load_frames
from evalkit.checks import CheckFeedback, correct, session_outcome, skip_tutorial
from evalkit.config import ConfigError, load_study, open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.survey import finish_session, redirect_script
from evalkit.tasks.base import SurveyError
from evalkit.tasks.rank import record_rank
from evalkit.tasks.realfake import record_realfake
from evalkit.tasks.responses import record_choice, record_slider
from evalkit.tasks.score import record_scores
from tests.helpers import make_study
from tests.item_study import make_items_study, task_block

CHECKS = """tutorial = ["gold0"]
attention_checks = ["gold1", "gold2"]
"""


def with_checks(block: str, checks: str) -> str:
    """A task block with the check keys put right after its id (before any [[tasks.scales]] table)."""
    head, sep, rest = block.partition("\nitems = ")
    return head + "\n" + checks + sep.lstrip("\n") + rest


def compare_study(tmp: Path, checks: str = CHECKS, *, extra: str = "", response: str = "choice") -> Path:
    return make_items_study(tmp, task_block("compare", response=response) + checks, gold=3, extra=extra)


def label_of(question, system: str) -> str:
    return question.labels[question.sources.index(system)]


def session_with_plan(tmp: Path, config: Path, seed: int = 11):
    loaded = open_study(config)
    store = open_store(tmp / "db.sqlite")
    session = store.create_session(study_version=loaded.version, seed=seed)
    return loaded, store, session, plan(loaded.study, loaded.pools, seed, loaded.item_sets)


# ----------------------------------------------------------------------------- config


def test_check_keys_are_read_and_kept_per_task(tmp_path: Path) -> None:
    config = compare_study(tmp_path, CHECKS + "tutorial_skippable = true\nattention_feedback = true\n",
                           extra='completion_code_pass = "C1A2B3"\ncompletion_code_fail = "C9FAIL"\n'
                                 'redirect_seconds = 0\n[study.quality]\nmax_failed_checks = 1\n')
    study = load_study(config)
    tc = study.task_checks("help")
    assert tc is not None and tc.tutorial == ("gold0",) and tc.attention_checks == ("gold1", "gold2")
    assert tc.tutorial_skippable and tc.attention_feedback
    assert (study.completion_code_pass, study.completion_code_fail, study.redirect_seconds,
            study.max_failed_checks) == ("C1A2B3", "C9FAIL", 0, 1)
    plain = load_study(compare_study(tmp_path / "b", ""))
    assert plain.task_checks("help") is None and plain.redirect_seconds == 5 and plain.max_failed_checks == 0


@pytest.mark.parametrize(("checks", "extra", "message"), [
    ('tutorial = ["gold0"]\ntutorial_skippable = "yes"\n', "", "key 'tutorial_skippable': must be true or false"),
    ('tutorial = "gold0"\n', "", "key 'tutorial': must be a list"),
    ('attention_checks = ["gold1", "gold1"]\n', "", "names a check twice"),
    ('tutorial = ["gold0"]\nattention_checks = ["gold0"]\n', "", "'gold0' is also a tutorial question"),
    ('tutorial = ["gold0"]\nchecks = "c.jsonl"\n', "", "key 'checks': is for tasks over the review pools"),
    ("", 'completion_code_pass = "has space"\n', "key 'completion_code_pass': must be 1-64 letters"),
    ("", 'completion_code_pass = "SAME"\ncompletion_code_fail = "SAME"\n', "must differ from completion_code_pass"),
    ("", "redirect_seconds = -1\n", "key 'redirect_seconds': must be at least 0"),
    ("", "redirect_seconds = 601\n", "key 'redirect_seconds': must be at most 600"),
    ("", "[study.quality]\nmax_failed_checks = -1\n", "[study.quality]: key 'max_failed_checks': must be at least 0"),
    ("", "[study.quality]\nmax_failed = 1\n",
     "key 'max_failed': is not a known setting (did you mean 'max_failed_checks'"),
])
def test_bad_check_settings_name_file_and_key(tmp_path: Path, checks: str, extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml") as err:
        load_study(compare_study(tmp_path, checks, extra=extra))
    assert message in str(err.value)


@pytest.mark.parametrize(("checks", "message"), [
    ('tutorial = ["r1"]\n', "key 'tutorial': item 'r1' of items.jsonl has no 'check' object"),
    ('attention_checks = ["nope"]\n', "key 'attention_checks': 'nope' is not an item of items.jsonl"),
])
def test_check_ids_must_exist_and_carry_a_check(tmp_path: Path, checks: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"config\.toml") as err:
        open_study(compare_study(tmp_path, checks))
    assert message in str(err.value)


def _gold(path: Path, line: dict) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


@pytest.mark.parametrize(("kind", "block", "gold", "message"), [
    ("compare", {}, {"outputs": {"good": "x", "bad": "y"}, "check": {"expect": "nobody"}},
     "'expect' must name one of its systems (good, bad), got 'nobody'"),
    ("compare", {}, {"outputs": {"a": "x", "b": "y", "c": "z"}, "check": {"expect": "a"}}, "has 3 outputs"),
    ("compare", {}, {"outputs": {"a": "x", "b": "y"}, "check": {"expect": "a", "why": "?"}},
     "check key 'why' is not known"),
    ("rank", {}, {"outputs": {"a": "x", "b": "y"}, "check": {"expect": "a"}}, "shows 3, so the check must have 3"),
    ("score", {}, {"outputs": {"a": "x"}, "check": {"expect": {"overall": [0, 300]}}},
     "the range of scale 'overall' must be [low, high] within 0..100"),
    ("score", {}, {"outputs": {"a": "x"}, "check": {"expect": {"clarity": [0, 30]}}},
     "names scale 'clarity', which the task does not have"),
    ("score", {}, {"outputs": {"a": "x"}, "check": {"expect": "good"}}, "'expect' must be per-scale ranges"),
    ("realfake", {}, {"outputs": {"a": "x", "b": "y"}, "check": {"expect": "real"}},
     "must have exactly one output"),
    ("realfake", {}, {"outputs": {"a": "x"}, "check": {"expect": "maybe"}},
     "'expect' must be 'real', 'generated' or one of its systems"),
])
def test_expect_is_checked_per_kind(tmp_path: Path, kind: str, block: dict, gold: dict, message: str) -> None:
    config = make_items_study(tmp_path, with_checks(task_block(kind, **block), 'attention_checks = ["bad1"]\n'))
    _gold(tmp_path / "items.jsonl", {"id": "bad1", "input": "in", **gold})
    with pytest.raises(ConfigError, match=r"config.toml: \[\[tasks\]\] id") as err:
        open_study(config)
    assert message in str(err.value)


def test_rating_tasks_refuse_checks(tmp_path: Path) -> None:
    from tests.helpers import CONFIG

    text = CONFIG.replace("{triplet_domains}", '["alpha"]')
    text = text.replace('kind = "rating"', 'kind = "rating"\ntutorial = ["p0"]')
    with pytest.raises(ConfigError, match="key 'tutorial': rating tasks have no tutorials or attention checks"):
        load_study(make_study(tmp_path, config=text))


# ----------------------------------------------------------------------------- plan


def test_plan_puts_the_tutorial_first_and_checks_at_seeded_positions(tmp_path: Path) -> None:
    loaded = open_study(compare_study(tmp_path))
    without = open_study(compare_study(tmp_path / "plain", ""))
    positions = set()
    for seed in range(30):
        qs = plan(loaded.study, loaded.pools, seed, loaded.item_sets)
        assert qs == plan(loaded.study, loaded.pools, seed, loaded.item_sets)  # reproducible per evaluator
        assert [q.index for q in qs] == list(range(9))
        assert qs[0].check is not None and qs[0].check.type == "tutorial" and qs[0].review_ids[0] == "gold0"
        kinds = [q.check.type if q.check else None for q in qs]
        assert kinds.count("attention") == 2 and kinds.count(None) == 6
        positions.add(tuple(k for k, q in enumerate(qs) if q.check and q.check.type == "attention"))
        regular = [q for q in qs if q.check is None]
        plain = plan(without.study, without.pools, seed, without.item_sets)
        # the other questions are exactly those of the study without checks (their own random stream)
        assert [(q.sources, q.review_ids, q.texts) for q in regular] == [(q.sources, q.review_ids, q.texts)
                                                                        for q in plain]
        for q in qs:
            assert "check" not in q.as_dict(with_sources=False)  # nothing a page shows says it is a check
            assert ("check" in q.as_dict()) == (q.check is not None)
    assert len(positions) > 10  # the positions vary between evaluators


# ----------------------------------------------------------------------------- recording


def test_tutorial_wrong_answer_shows_feedback_and_stores_every_try(tmp_path: Path) -> None:
    config = compare_study(tmp_path)
    lines = (tmp_path / "items.jsonl").read_text().splitlines()
    gold0 = json.loads(lines[12])
    gold0["check"]["feedback"] = "Look at what the review says."
    lines[12] = json.dumps(gold0)
    (tmp_path / "items.jsonl").write_text("\n".join(lines) + "\n")
    _loaded, store, session, qs = session_with_plan(tmp_path, config)
    q = qs[0]
    with pytest.raises(CheckFeedback, match=r"Look at what the review says\.") as err:
        record_choice(store, session, q, label_of(q, "bad"), 900)
    assert not err.value.skippable
    assert store.answers(session.session_id) == []  # not over: the evaluator must correct it
    with pytest.raises(SurveyError, match="cannot be skipped"):
        skip_tutorial(store, session, q)  # not skippable
    answer = record_choice(store, session, q, label_of(q, "good"), 1500)
    assert answer.check == "tutorial" and answer.check_passed is False and answer.review_source == "good"
    tries = store.check_tries(session.session_id)
    assert [(t["attempt"], t["correct"]) for t in tries] == [(1, 0), (2, 1)]
    assert record_choice(store, session, q, label_of(q, "good"), 1600).created is False  # a double click


def test_skippable_tutorial(tmp_path: Path) -> None:
    config = compare_study(tmp_path, CHECKS + "tutorial_skippable = true\n")
    _loaded, store, session, qs = session_with_plan(tmp_path, config)
    q = qs[0]
    with pytest.raises(CheckFeedback) as err:
        record_choice(store, session, q, label_of(q, "bad"), 900)
    assert err.value.skippable
    answer = skip_tutorial(store, session, q)
    assert answer.check == "tutorial" and answer.check_passed is False and answer.detail["skipped"] is True
    assert answer.review_source == "bad"


def test_skip_needs_a_wrong_try_first(tmp_path: Path) -> None:
    config = compare_study(tmp_path, CHECKS + "tutorial_skippable = true\n")
    _loaded, store, session, qs = session_with_plan(tmp_path, config)
    with pytest.raises(Exception, match="you can skip it after a wrong answer"):
        skip_tutorial(store, session, qs[0])
    with pytest.raises(Exception, match="cannot be skipped"):
        skip_tutorial(store, session, qs[3])


def test_silent_attention_checks_are_recorded_without_feedback(tmp_path: Path) -> None:
    _loaded, store, session, qs = session_with_plan(tmp_path, compare_study(tmp_path))
    a, b = [q for q in qs if q.check and q.check.type == "attention"]
    wrong = record_choice(store, session, a, label_of(a, "bad"), 800)
    right = record_choice(store, session, b, label_of(b, "good"), 800)
    assert (wrong.check, wrong.check_passed, right.check_passed) == ("attention", False, True)
    assert wrong.detail["check_id"] == a.check.id
    assert session_outcome(store.answers(session.session_id), 0).passed is False
    assert session_outcome(store.answers(session.session_id), 1).passed is True


def test_attention_feedback_lets_them_answer_again_but_the_first_answer_decides(tmp_path: Path) -> None:
    config = compare_study(tmp_path, CHECKS + "attention_feedback = true\n")
    _loaded, store, session, qs = session_with_plan(tmp_path, config)
    a, b = [q for q in qs if q.check and q.check.type == "attention"]
    with pytest.raises(CheckFeedback):
        record_choice(store, session, a, label_of(a, "bad"), 800)
    second = record_choice(store, session, a, label_of(a, "good"), 800)
    assert second.check_passed is False and second.review_source == "good"
    first_right = record_choice(store, session, b, label_of(b, "good"), 800)
    assert first_right.check_passed is True
    assert len(store.check_tries(session.session_id)) == 3


def test_slider_check(tmp_path: Path) -> None:
    _loaded, store, session, qs = session_with_plan(tmp_path, compare_study(tmp_path, response="slider"))
    q = qs[0]
    toward_good = -60 if q.sources[0] == "good" else 60
    with pytest.raises(CheckFeedback):
        record_slider(store, session, q, 0, "accept", 500)  # a draw is not the expected reply
    assert record_slider(store, session, q, toward_good, "accept", 500).check_passed is False


def test_score_rank_and_realfake_checks(tmp_path: Path) -> None:
    config = make_items_study(
        tmp_path, with_checks(task_block("score"), 'attention_checks = ["low"]\n'),
        with_checks(task_block("rank", questions=2), 'attention_checks = ["best3"]\n'),
        with_checks(task_block("realfake", questions=2), 'attention_checks = ["fake", "byname"]\n'))
    items = tmp_path / "items.jsonl"
    _gold(items, {"id": "low", "input": "i", "outputs": {"junk": "zzz"},
                  "check": {"expect": {"overall": [0, 30], "fluency": [1, 2]}}})
    _gold(items, {"id": "best3", "input": "i", "outputs": {"g": "good", "b1": "x", "b2": "y"},
                  "check": {"expect": "g"}})
    _gold(items, {"id": "fake", "input": "i", "outputs": {"bot": "beep"}, "check": {"expect": "generated"}})
    _gold(items, {"id": "byname", "input": "i", "outputs": {"human": "hi", "t5": "x"}, "check": {"expect": "human"}})
    loaded, store, session, qs = session_with_plan(tmp_path, config)
    by_id = {q.check.id: q for q in qs if q.check}
    task = {t.id: t for t in loaded.study.tasks}
    low = by_id["low"]
    assert record_scores(store, session, task["quality"], low, {"overall": [20], "fluency": [3]}, None,
                         10).check_passed is False
    best = by_id["best3"]
    assert record_rank(store, session, task["best"], best, [label_of(best, "g")], 10).check_passed is True
    fake = by_id["fake"]
    assert record_realfake(store, session, task["turing"], fake, "real", 2, 10).check_passed is False
    byname = by_id["byname"]
    assert byname.sources == ("human",)  # the named system's text is the one shown
    assert record_realfake(store, session, task["turing"], byname, "real", 2, 10).check_passed is True


def test_correct_rules() -> None:
    from evalkit.checks import CheckSpec

    ranges = CheckSpec("attention", "x", "ranges", json.dumps({"overall": [0, 30]}), "")
    assert correct(ranges, "scored", None, {"scores": {"overall": [0, 30]}})
    assert not correct(ranges, "scored", None, {"scores": {"overall": [31]}})
    assert not correct(ranges, "scored", None, {"scores": {}})
    source = CheckSpec("attention", "x", "source", "good", "")
    assert correct(source, "A", "good", {}) and not correct(source, "tie", None, {})


# ----------------------------------------------------------------------------- pool kinds


POOL_CONFIG = """
[study]
title = "Pools"
datasets = "datasets"
database = "db.sqlite"
seed = 3

[[tasks]]
kind = "triplet"
id = "turing"
sources = ["real", "gen", "base"]
target = "real"
domains = ["alpha", "alpha", "beta"]
{triplet}

[[tasks]]
kind = "pairwise"
id = "pairs"
pairs = [["gen", "base"], ["gen", "real"]]
domains = ["alpha", "beta"]
{pairwise}

[[tasks]]
kind = "realfake"
id = "rf"
sources = ["real", "gen"]
target = "real"
domains = ["beta", "beta"]
{realfake}
"""


def pool_study(tmp: Path, lines: list[dict] | None = None, **blocks: str) -> Path:
    text = POOL_CONFIG
    for key in ("triplet", "pairwise", "realfake"):
        text = text.replace("{" + key + "}", blocks.get(key, ""))
    config = make_study(tmp, config=text)
    if lines is not None:
        (tmp / "checks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return config


def keys(tmp: Path) -> dict[tuple[str, str], list[str]]:
    loaded = open_study(pool_study(tmp))
    return {k: [r.key for r in v] for k, v in loaded.pools.items()}


def test_pool_kinds_take_checks_from_a_checks_file(tmp_path: Path) -> None:
    k = keys(tmp_path / "probe")
    lines = [
        {"id": "t1", "reviews": [k["real", "alpha"][0], k["gen", "alpha"][0], k["base", "alpha"][0]], "expect": "real",
         "feedback": "The real one mentions the staff."},
        {"id": "p1", "reviews": [k["gen", "beta"][0], k["base", "beta"][0]], "expect": "gen"},
        {"id": "f1", "reviews": [k["gen", "beta"][1]], "expect": "generated"},
        {"id": "f2", "reviews": [k["real", "beta"][1]], "expect": "real"},
    ]
    config = pool_study(tmp_path, lines, triplet='checks = "checks.jsonl"\ntutorial = ["t1"]',
                        pairwise='checks = "checks.jsonl"\nattention_checks = ["p1"]',
                        realfake='checks = "checks.jsonl"\nattention_checks = ["f1", "f2"]')
    loaded, store, session, qs = session_with_plan(tmp_path, config)
    by_task: dict[str, list] = {}
    for q in qs:
        by_task.setdefault(q.task, []).append(q)
    assert [q.index for q in by_task["turing"]] == [0, 1, 2, 3] and by_task["turing"][0].check.id == "t1"
    t1 = by_task["turing"][0]
    assert sorted(t1.review_ids) == sorted(lines[0]["reviews"]) and t1.domain == "alpha"
    with pytest.raises(CheckFeedback, match="mentions the staff"):
        record_choice(store, session, t1, label_of(t1, "gen"), 10)
    assert record_choice(store, session, t1, label_of(t1, "real"), 10).check_passed is False
    p1 = next(q for q in by_task["pairs"] if q.check)
    assert record_choice(store, session, p1, label_of(p1, "gen"), 10).check_passed is True
    rf = loaded.study.task("rf")
    f1, f2 = sorted((q for q in by_task["rf"] if q.check), key=lambda q: q.check.id)
    assert record_realfake(store, session, rf, f1, "generated", 1, 10).check_passed is True
    assert record_realfake(store, session, rf, f2, "generated", 1, 10).check_passed is False
    assert len(by_task["rf"]) == 4


@pytest.mark.parametrize(("lines", "block", "message"), [
    (None, 'checks = "missing.jsonl"\ntutorial = ["t1"]', "key 'checks': checks file 'missing.jsonl' not found"),
    (None, 'tutorial = ["t1"]', "[[tasks]] #1 (id 'turing'): key 'checks': is required but missing"),
    ([{"id": "t1", "reviews": ["a/b/c"], "expect": "real"}, {"id": "t1", "reviews": ["a/b/c"], "expect": "real"}],
     'checks = "checks.jsonl"\ntutorial = ["t1"]', "checks.jsonl: line 2: id 't1' is also on line 1"),
    ([], 'checks = "checks.jsonl"\ntutorial = ["t1"]', "checks.jsonl: the checks file has no entries"),
    ([{"id": "t1", "reviews": ["real/alpha/zzz", "gen/alpha/x", "base/alpha/y"], "expect": "real"}],
     'checks = "checks.jsonl"\ntutorial = ["t1"]', "names review 'real/alpha/zzz', which is not an eligible review"),
    ([{"id": "t1", "reviews": ["a/b/c"], "expect": "real"}], 'checks = "checks.jsonl"\ntutorial = ["t2"]',
     "key 'tutorial': 't2' is not an id of the checks file checks.jsonl"),
    ([{"id": "t1", "reviews": "a/b/c", "expect": "real"}], 'checks = "checks.jsonl"\ntutorial = ["t1"]',
     "checks.jsonl: line 1: key 'reviews' must be a list of review keys"),
    ([{"id": "t1", "reviews": ["a/b/c"], "expect": "real", "extra": 1}], 'checks = "checks.jsonl"\ntutorial = ["t1"]',
     "checks.jsonl: line 1: key 'extra' is not known"),
])
def test_bad_checks_files(tmp_path: Path, lines: list | None, block: str, message: str) -> None:
    config = pool_study(tmp_path, lines, triplet=block)
    with pytest.raises(ConfigError) as err:
        open_study(config)
    assert message in str(err.value)


def test_pool_check_expect_must_fit(tmp_path: Path) -> None:
    k = keys(tmp_path / "probe")
    lines = [{"id": "t1", "reviews": [k["real", "alpha"][0], k["gen", "alpha"][0]], "expect": "real"}]
    with pytest.raises(ConfigError, match=r"check 't1' .* shows 2 reviews; a question of this task shows 3"):
        open_study(pool_study(tmp_path, lines, triplet='checks = "checks.jsonl"\nattention_checks = ["t1"]'))
    lines = [{"id": "p1", "reviews": [k["gen", "beta"][0], k["base", "beta"][0]], "expect": "real"}]
    with pytest.raises(ConfigError, match="'expect' must be the source of one of its reviews"):
        open_study(pool_study(tmp_path, lines, pairwise='checks = "checks.jsonl"\nattention_checks = ["p1"]'))


# ----------------------------------------------------------------------------- outcome, codes, analysis, export


def _finish(store, loaded, session, qs, *, right: bool) -> None:
    for q in qs:
        want = "good" if (q.check is None or right or q.check.type == "tutorial") else "bad"
        if q.check is None:
            want = q.sources[0]
        record_choice(store, session, q, label_of(q, want), 1000)


@pytest.mark.parametrize(("codes", "passed_code", "failed_code"), [
    ('completion_code_pass = "C1A2B3"\ncompletion_code_fail = "C9FAIL"\n', "C1A2B3", "C9FAIL"),
    ('completion_code_pass = "C1A2B3"\n', "C1A2B3", None),
    ('completion_code_fail = "C9FAIL"\n', None, "C9FAIL"),
    ("", None, None),
])
def test_completion_codes_by_outcome(tmp_path: Path, codes: str, passed_code: str | None,
                                     failed_code: str | None) -> None:
    config = compare_study(tmp_path, extra=codes + 'completion_url = "https://x.example/done?cc={code}"\n')
    loaded, store, good, qs = session_with_plan(tmp_path, config, seed=1)
    bad = store.create_session(study_version=loaded.version, seed=2)
    _finish(store, loaded, good, qs, right=True)
    _finish(store, loaded, bad, plan(loaded.study, loaded.pools, 2, loaded.item_sets), right=False)
    for session, expected in ((good, passed_code), (bad, failed_code)):
        code = finish_session(store, loaded.study, session.session_id).completion_code
        if expected is None:
            assert code is not None and len(code) == 10 and code not in ("C1A2B3", "C9FAIL")  # per-session
        else:
            assert code == expected
        assert store.get_session(session.session_id).completion_code == code  # stored in the session row
        assert finish_session(store, loaded.study, session.session_id).completion_code == code


def test_analysis_leaves_out_checks_and_failed_evaluators(tmp_path: Path) -> None:
    loaded, store, good, qs = session_with_plan(tmp_path, compare_study(tmp_path), seed=1)
    store.register_study(loaded.version, {"title": "t", "tasks": [{"id": "help", "kind": "compare", "title": "H",
                                                                   "systems": [], "response": "choice",
                                                                   "questions": 6}], "max_failed_checks": 0})
    bad = store.create_session(study_version=loaded.version, seed=2)
    _finish(store, loaded, good, qs, right=True)
    _finish(store, loaded, bad, plan(loaded.study, loaded.pools, 2, loaded.item_sets), right=False)
    frames = load_frames(store)
    report = analyse(frames)
    assert report.n_sessions == 1 and report.n_answers == 6  # the failed evaluator and the 3 check answers left out
    q = report.quality.set_index("session_id")
    assert (q.loc[good.session_id, "checks_passed"], q.loc[good.session_id, "checks_failed"]) == (2, 0)
    assert q.loc[good.session_id, "checks_result"] == "passed" and q.loc[bad.session_id, "checks_result"] == "failed"
    assert q.loc[bad.session_id, "checks_failed"] == 2 and q.loc[bad.session_id, "tutorial_first_try"] == 1
    every = analyse(frames, Options(exclude_failed_checks=False))
    assert every.n_sessions == 2 and every.n_answers == 12
    assert analyse(frames, Options(exclude_failed_checks=False, include_check_questions=True)).n_answers == 18
    # a more lenient policy registered for the study passes the evaluator with 2 failures
    store.register_study("v2", {"title": "t", "tasks": [], "max_failed_checks": 2})
    assert analyse(load_frames(store)).n_sessions == 2


def test_export_has_item_id_check_and_check_passed(tmp_path: Path) -> None:
    loaded, store, session, qs = session_with_plan(tmp_path, compare_study(tmp_path), seed=1)
    _finish(store, loaded, session, qs, right=False)
    rows = list(csv.DictReader(io.StringIO(evaluations_csv(load_frames(store, full=True)))))
    assert [r["check"] for r in rows[:1]] == ["tutorial"]
    by_index = {int(r["questionIndex"]): r for r in rows}
    for q in qs:
        row = by_index[q.index]
        assert row["item_id"] == (q.check.id if q.check else q.review_ids[0])
        assert row["check"] == (q.check.type if q.check else "")
        expected = "" if q.check is None else "1" if q.check.type == "tutorial" else "0"
        assert row["check_passed"] == expected


def test_redirect_script_cannot_break_out() -> None:
    script = redirect_script('https://x.example/?cc=A"</script><script>alert(1)', 4)
    assert "</script><script>alert" not in script and "4000" in script
    assert script.count("<script>") == 1 and "window.top.location.assign(" in script


def test_evalkit_check_and_plan_show_the_checks(capsys) -> None:
    from evalkit.__main__ import main

    config = str(Path(__file__).resolve().parent.parent / "examples" / "crowd" / "config.toml")
    assert main(["check", config, "--samples", "3"]) == 0
    assert "plus 1 tutorial question(s) first, 2 attention check(s) silent" in capsys.readouterr().out
    assert main(["plan", "--config", config, "--seed", "9"]) == 0
    questions = json.loads(capsys.readouterr().out)["questions"]
    marked = [q["check"] for q in questions if "check" in q]
    assert marked[0] == {"type": "tutorial", "id": "tutorial1"} and len(marked) == 3


def test_flags_without_check_ids_change_nothing(tmp_path: Path) -> None:
    config = pool_study(tmp_path, triplet="tutorial_skippable = true", realfake="attention_feedback = true")
    loaded = open_study(config)
    assert loaded.study.task_checks("turing").tutorial_skippable
    assert all(q.check is None for q in plan(loaded.study, loaded.pools, 1, loaded.item_sets))


def test_the_columnar_read_places_the_check_columns_by_id(tmp_path: Path) -> None:
    """load_frames reads the check columns from Store.check_answers and puts them on the right rows: the same
    values as reading every column as stored."""
    from evalkit.analysis import load_frames
    from evalkit.store import open_store

    with open_store(tmp_path / "db.sqlite") as store:
        s = store.create_session(study_version="v")
        for i in range(6):
            check = {1: ("attention", True), 3: ("tutorial", False), 4: ("attention", False)}.get(i)
            store.record_answer(s.session_id, "t", i, "A", check=check and check[0],
                                check_passed=check and check[1])
        columnar, plain = load_frames(store), load_frames(store, full=True)
    got = columnar.evaluations.sort_values("id")
    want = plain.evaluations.sort_values("id")
    def values(column: pd.Series) -> list:
        return [None if pd.isna(v) else v for v in column.astype(object)]

    assert values(got["check_type"]) == values(want["check_type"]) == [None, "attention", None, "tutorial",
                                                                       "attention", None]
    assert got["check_passed"].iloc[[1, 3, 4]].tolist() == [1.0, 0.0, 0.0] and got["check_passed"].isna().sum() == 3
