"""AppTest tests of tutorials, attention checks and the completion screen with pass / fail codes, on the
``examples/crowd`` study (a copy per test): the practice question's feedback and its retry, a skippable
tutorial, attention checks that look like every other question (silent, or with feedback), the pass and
fail codes with the redirect, a refresh showing the pending feedback, a failed save."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evalkit.balance import arrival_of
from evalkit.sampling import Question, plan
from evalkit.store import Unavailable
from tests.apptest.conftest import Harness, button, has_button, page_protos, texts
from tests.helpers import ROOT

CROWD = ROOT / "examples" / "crowd"


def crowd(tmp: Path, *, whole: bool = False, **replace: str) -> Path:
    """A copy of the crowd example; ``replace`` edits lines of its config (old line -> new line). Unless
    ``whole``, without its background form and its shared queue, with 3 questions (the checks' and the limits'
    tests: a practice question, 3 questions and 2 attention checks, planned from the evaluator's seed)."""
    dest = tmp / "crowd"
    shutil.copytree(CROWD, dest, ignore=shutil.ignore_patterns("data"))
    config = dest / "config.toml"
    text = config.read_text(encoding="utf-8").replace('datasets = "../../datasets"',
                                                      f'datasets = "{ROOT / "datasets"}"')
    if not whole:
        form = text.index('[[tasks]]\nkind = "form"')
        text = text[:form] + text[text.index('[[tasks]]\nkind = "compare"'):]
        text = "\n".join(line for line in text.splitlines()
                         if not line.startswith(("judgments_per_item", "claim_minutes")))
        text = text.replace("\nquestions = 4 ", "\nquestions = 3 ")
        assert "questions = 3 " in text and "kind = \"form\"" not in text
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8")
    return config


def start(h: Harness, pid: str = "pid123"):
    at = h.app(PROLIFIC_PID=pid, STUDY_ID="st1", SESSION_ID=f"se-{pid}")
    at.checkbox(key="consent_agree").check()
    at.button[0].click().run()
    assert not at.exception
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def questions(h: Harness, at) -> list[Question]:
    session = h.store.get_session(at.query_params["s"])
    loaded = h.loaded
    return plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))


def choose(at, q: Question, system: str) -> None:
    at.radio(key=f"{q.task}-{q.index}-choice").set_value(q.labels[q.sources.index(system)])
    button(at, "Next").click().run()
    assert not at.exception


def pick(q: Question, *, checks_right: bool) -> str:
    if q.check is None:
        return q.sources[0]
    return "good" if checks_right or q.check.type == "tutorial" else "bad"


SECRETS = ("gold01", "gold02", "tutorial1", "attention", "check_id", "C1A2B3", "C9FAIL")


def assert_nothing_reveals(at) -> None:
    sent = page_protos(at)
    for secret in SECRETS:
        assert secret not in sent, secret


def element_kinds(at) -> list[str]:
    out: list[str] = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        if children:
            for child in (children.values() if isinstance(children, dict) else children):
                walk(child)
            return
        out.append(getattr(node, "type", ""))

    walk(at._tree)
    return out


def test_tutorial_feedback_then_silent_checks_and_the_pass_code(make_harness, tmp_path) -> None:
    h = make_harness(config=crowd(tmp_path))
    at = start(h)
    qs = questions(h, at)
    tutorial = qs[0]
    assert tutorial.check is not None and tutorial.check.type == "tutorial"
    assert "Practice question" in texts(at)
    assert_nothing_reveals(at)
    choose(at, tutorial, "bad")
    assert "Not quite." in at.warning[0].value and "advertises the spa" in at.warning[0].value
    assert h.store.answers() == [] and len(h.store.check_tries()) == 1
    assert not has_button(at, "Skip this practice question")  # tutorial_skippable = false
    refreshed = h.app(s=at.query_params["s"])  # a reload keeps the feedback (it comes from the stored try)
    button(refreshed, "Begin").click().run()  # (the instructions come back while nothing is answered)
    assert "Not quite." in texts(refreshed)
    choose(at, tutorial, "good")
    assert [a.check_passed for a in h.store.answers()] == [False]  # corrected, but the first try was wrong
    shapes = {}
    for q in qs[1:]:
        assert "Practice question" not in texts(at) and not at.warning
        assert_nothing_reveals(at)
        shapes.setdefault(q.check is not None, set()).add(tuple(element_kinds(at)))
        choose(at, q, pick(q, checks_right=True))
    assert shapes[True] <= shapes[False]  # an attention check is drawn exactly like a regular question
    rows = h.store.answers()
    assert [a.check for a in rows].count("attention") == 2 and all(
        a.check_passed for a in rows if a.check == "attention")
    # the done screen: the pass code, the button and the redirect after 5 s
    session = h.store.get_session(at.query_params["s"])
    assert session.completion_code == "C1A2B3" and at.code[0].value == "C1A2B3"
    url = "https://app.prolific.com/submissions/complete?cc=C1A2B3"
    assert at.link_button[0].proto.url == url
    script = "\n".join(x.proto.body for x in at.get("html"))
    assert f'window.top.location.assign("{url}")' in script and "5000" in script
    assert "automatically in 5 seconds" in texts(at)


def test_failed_silent_checks_give_the_fail_code(make_harness, tmp_path) -> None:
    h = make_harness(config=crowd(tmp_path, **{"redirect_seconds = 5": "redirect_seconds = 0"}))
    at = start(h)
    for q in questions(h, at):
        choose(at, q, pick(q, checks_right=False))
        assert not at.warning  # silent: no feedback on a failed attention check
    assert at.code[0].value == "C9FAIL" and h.store.get_session(at.query_params["s"]).completion_code == "C9FAIL"
    assert at.link_button[0].proto.url.endswith("cc=C9FAIL")
    assert not [x for x in at.get("html") if "location.assign" in x.proto.body]  # redirect_seconds = 0
    assert "The button takes you back" in texts(at)


def test_skippable_tutorial_offers_a_skip_button(make_harness, tmp_path) -> None:
    h = make_harness(config=crowd(tmp_path, **{"tutorial_skippable = false": "tutorial_skippable = true"}))
    at = start(h)
    qs = questions(h, at)
    assert not has_button(at, "Skip this practice question")  # only after a wrong answer
    choose(at, qs[0], "bad")
    assert "skip this practice question below" in at.warning[0].value
    button(at, "Skip this practice question").click().run()
    assert not at.exception
    [row] = h.store.answers()
    assert row.check == "tutorial" and row.check_passed is False and row.detail["skipped"] is True
    assert "Question 2 of" in at.get("progress")[0].proto.text


def test_attention_feedback_warns_and_the_first_answer_counts(make_harness, tmp_path) -> None:
    h = make_harness(config=crowd(tmp_path, **{"attention_feedback = false": "attention_feedback = true"}))
    at = start(h)
    qs = questions(h, at)
    for q in qs:
        if q.check is not None and q.check.type == "attention":
            choose(at, q, "bad")
            assert "Not quite." in at.warning[0].value and "Practice question" not in texts(at)
            choose(at, q, "good")
        else:
            choose(at, q, pick(q, checks_right=True))
    attention = [a for a in h.store.answers() if a.check == "attention"]
    assert len(attention) == 2 and not any(a.check_passed for a in attention)
    assert at.code[0].value == "C9FAIL"


def test_a_failed_save_on_a_check_question_says_so(make_harness, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = make_harness(config=crowd(tmp_path))
    at = start(h)
    qs = questions(h, at)
    from evalkit.store.base import Store

    def down(*args, **kwargs):
        raise Unavailable("the database is down")

    with monkeypatch.context() as patch:
        patch.setattr(Store, "record_check_try", down)
        choose(at, qs[0], "good")
        assert "Your answer could not be saved" in at.error[0].value and h.store.answers() == []
    choose(at, qs[0], "good")
    assert len(h.store.answers()) == 1


def test_results_page_shows_checks_per_evaluator_and_leaves_failed_ones_out(make_harness, tmp_path,
                                                                            monkeypatch) -> None:
    from tests.apptest.test_results_page import results_app, unlock

    monkeypatch.delenv("EVALKIT_RESULTS_PASSWORD", raising=False)
    h = make_harness(config=crowd(tmp_path))
    for right in (True, False):
        at = start(h, f"pid{right}")
        for q in questions(h, at):
            choose(at, q, pick(q, checks_right=right))
        assert at.code[0].value == ("C1A2B3" if right else "C9FAIL")
    at = unlock(results_app(h))
    metrics = {m.label: m.value for m in at.get("metric")}
    assert metrics["Evaluators counted"] == "1" and metrics["Answers"] == "3"  # the failed one and the checks out
    [evaluators] = [d.value for d in at.dataframe if "Checks" in d.value.columns]
    assert sorted(evaluators["Checks"]) == ["failed", "passed"]
    assert sorted(evaluators["Attention checks failed"]) == [0, 2]
    at.toggle(key="opt_failed_checks").set_value(False).run()
    metrics = {m.label: m.value for m in at.get("metric")}
    assert metrics["Evaluators counted"] == "2" and metrics["Answers"] == "6"
    at.toggle(key="opt_check_questions").set_value(True).run()
    assert {m.label: m.value for m in at.get("metric")}["Answers"] == "12"


def test_pool_kinds_tutorial_and_slider_check_in_the_page(make_harness, tmp_path) -> None:
    """A triplet tutorial and a silent pairwise slider check from a checks file, on the token study (its source
    names are tokens, so a leak of the expected source would show)."""
    from tests.helpers import SOURCES

    h = make_harness(response="slider")
    pools = h.loaded.pools
    human, model, base = SOURCES["human"], SOURCES["model"], SOURCES["base"]
    first = {s: pools[(s, "beta")][0].key for s in (human, model, base)}
    lines = [{"id": "t1", "reviews": [first[human], first[model], first[base]], "expect": human,
              "feedback": "The person's review is the uneven one."},
             {"id": "p1", "reviews": [pools[(model, "beta")][1].key, pools[(base, "beta")][1].key], "expect": model}]
    (h.config.parent / "checks.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    text = h.config.read_text()
    text = text.replace('domains = ["alpha", "alpha", "beta"]',
                        'domains = ["alpha", "alpha", "beta"]\nchecks = "checks.jsonl"\ntutorial = ["t1"]')
    text = text.replace('domains = ["beta", "alpha"]',
                        'domains = ["beta", "alpha"]\nchecks = "checks.jsonl"\nattention_checks = ["p1"]')
    h.config.write_text(text)
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    button(at, "Begin").click().run()
    qs = questions(h, at)
    t1 = qs[0]
    assert t1.check is not None and "Practice question" in texts(at)
    sent = page_protos(at)
    assert all(s not in sent for s in SOURCES.values()) and "t1" not in at.query_params.get("s", "")
    at.radio(key="turing-0-choice").set_value(t1.labels[t1.sources.index(model)])
    button(at, "Next").click().run()
    assert "uneven one" in at.warning[0].value and h.store.answers() == []
    at.radio(key="turing-0-choice").set_value(t1.labels[t1.sources.index(human)])
    button(at, "Next").click().run()
    assert h.store.answers()[0].check == "tutorial"
    for q in [q for q in qs if q.task == "turing"][1:]:
        at.radio(key=f"turing-{q.index}-choice").set_value("A")
        button(at, "Next").click().run()
    button(at, "Begin").click().run()
    for q in [q for q in qs if q.task == "natural"]:
        toward_base = 50 if q.sources[1] == base else -50
        at.slider[0].set_value(toward_base if q.check else 0)
        button(at, "Accept: both are suitable").click().run()
        assert not at.exception and not at.warning
    [check] = [a for a in h.store.answers(task="natural") if a.check]
    assert check.check == "attention" and check.check_passed is False and check.review_source == base


def test_done_screen_with_the_database_down_says_so(make_harness, tmp_path, monkeypatch) -> None:
    from evalkit.store.base import Store

    h = make_harness(config=crowd(tmp_path))
    at = start(h)
    qs = questions(h, at)
    for q in qs[:-1]:
        choose(at, q, pick(q, checks_right=True))

    def down(*args, **kwargs):
        raise Unavailable("the database is down")

    with monkeypatch.context() as patch:
        patch.setattr(Store, "answers", down)
        choose(at, qs[-1], pick(qs[-1], checks_right=True))  # saved; the done screen cannot decide the code yet
        assert "cannot reach its database" in at.error[0].value and not at.code and not at.exception
    token = at.query_params["s"]
    assert h.store.get_session(token).completion_code is None
    button(at, "Try again").click().run()
    assert at.code[0].value == "C1A2B3" and h.store.get_session(token).completion_code == "C1A2B3"
