"""Real browser: an evaluator completes each ready-made study of examples/ (help, direct-assessment, turing,
best-of-3) against `streamlit run`, with a mistake on the first question of each; then the database must hold
exactly one row per planned question, with its item id, its systems in display order and, for pairs, the
left / right systems. Screenshots of each question screen at 1280 px and 390 px go to test-output/e2e/.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit.balance import arrival_of
from evalkit.config import open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from tests.e2e.conftest import OUT, docs_shot
from tests.e2e.steps import choose, move_slider, problems, start_session, wait_for_app_run
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

#: system names that no page may show: (searched in the HTML, searched as words in the visible text)
SECRETS = {
    "help": (["gpt4"], ["gpt4", "t5", "human"]),
    "direct-assessment": (["extractive", "abstractive"], ["extractive", "abstractive", "human"]),
    "turing": (["llm"], ["llm", "template"]),  # "person" is in the answer options' wording
    "best-of-3": (["seq2seq"], ["editor", "seq2seq", "llm"]),
    "tour": (["gpt4", "seq2seq", "abstractive"], ["gpt4", "t5", "editor", "llm", "extractive", "abstractive"]),
}


#: The "what is missing" marks the score widget shows under its widgets (``components/scores/``), in the browser
MARKS = "[data-testid=evalkit-mark]:not([hidden])"


class Evaluator:
    """A browser page on one example, with screenshots and leak checks of every question screen."""

    def __init__(self, page: Any, example: str) -> None:
        self.page, self.example = page, example

    def shot(self, name: str, *, narrow: bool = True) -> None:
        """Screenshots of the current screen at 1280 px and (``narrow``) 390 px, and the leak checks."""
        page = self.page
        wait_for_app_run(page)
        self.no_secrets()
        for width in (1280, 390) if narrow else (1280,):
            page.set_viewport_size({"width": width, "height": 1000})
            wait_for_app_run(page)
            # Streamlit scrolls its main block, not the document: make the window as tall as the content
            height = page.get_by_test_id("stMainBlockContainer").evaluate("e => e.scrollHeight")
            page.set_viewport_size({"width": width, "height": max(600, height + 120)})
            wait_for_app_run(page)
            page.screenshot(path=str(OUT / f"example-{self.example}-{name}-{width}.png"))
        page.set_viewport_size({"width": 1280, "height": 1000})
        wait_for_app_run(page)

    def no_secrets(self) -> None:
        in_html, in_text = SECRETS[self.example]
        html, text = self.page.content(), self.page.inner_text("body")
        for name in in_html:
            assert name not in html, f"system {name} reached the browser"
        for name in in_text:
            assert not re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE), f"system {name} is shown"

    def next(self) -> None:
        self.page.get_by_role("button", name="Next", exact=True).click()
        wait_for_app_run(self.page)

    def expect_question(self, number: int, of: int) -> None:
        from playwright.sync_api import expect

        expect(self.page.get_by_text(f"Question {number} of {of}")).to_be_visible()
        assert problems(self.page) == []


@pytest.fixture
def run_example(start_app, browser, tmp_path) -> Iterator[Callable[[str], tuple[Evaluator, Path, Path]]]:
    """Start the example's server on a fresh database and an evaluator's page on its first question."""
    contexts: list[Any] = []

    def run(example: str) -> tuple[Evaluator, Path, Path]:
        config = ROOT / "examples" / example / "config.toml"
        database = tmp_path / f"{example}.sqlite"
        url = start_app(config, database, f"example-{example}")
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        start_session(page, url, f"Evaluator of {example}")
        evaluator = Evaluator(page, example)
        evaluator.shot("instructions", narrow=False)
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)
        return evaluator, config, database

    yield run
    for context in contexts:
        context.close()


def finished(evaluator: Evaluator) -> None:
    from playwright.sync_api import expect

    expect(evaluator.page.get_by_role("heading", name="Thank you!")).to_be_visible()


def stored(config: Path, database: Path) -> tuple[list[Any], dict[tuple[str, int], Any]]:
    """The one session's answers, checked against its plan: every question answered exactly once, with its
    item id, its systems in display order and, for two texts, the left / right systems."""
    loaded = open_study(config, database=database)
    with open_store(database) as store:
        [session] = store.sessions()
        assert session.status == "completed"
        answers = store.answers(session.session_id)
    questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))
    by_key = {(q.task, q.index): q for q in questions}
    assert sorted((a.task, a.question_index) for a in answers) == sorted(by_key)  # each exactly once
    for a in answers:
        q = by_key[(a.task, a.question_index)]
        assert a.item_ids == (q.review_ids[0],) and a.sources == q.sources and a.kind == q.kind
        assert a.time_spent_ms is not None and a.time_spent_ms >= 0
        if len(q.sources) == 2:
            assert (a.left_source, a.right_source) == q.sources
    return sorted(answers, key=lambda a: a.question_index), by_key


def test_help_example(run_example) -> None:
    evaluator, config, database = run_example("help")
    page = evaluator.page
    evaluator.expect_question(1, 3)
    assert page.get_by_text("Customer review", exact=True).count() == 1  # the task's input_label
    evaluator.shot("question")
    docs_shot(page, "help-slider")
    page.get_by_role("button", name="Accept: both are suitable").click()  # at 0: a positive draw
    wait_for_app_run(page)
    evaluator.expect_question(2, 3)
    move_slider(page, 0, 30)
    page.get_by_role("button", name="Reject: both are unsuitable").click()
    wait_for_app_run(page)
    evaluator.expect_question(3, 3)
    move_slider(page, 0, -10)
    page.get_by_role("button", name="Accept: both are suitable").click()
    wait_for_app_run(page)
    finished(evaluator)
    answers, by_key = stored(config, database)
    assert [(a.response, a.detail["button"], a.detail["outcome"]) for a in answers] == [
        ("0", "accept", "positive_draw"), ("30", "reject", "right"), ("-10", "accept", "left")]
    assert [a.review_source for a in answers] == [None, by_key[("help", 1)].sources[1],
                                                  by_key[("help", 2)].sources[0]]
    assert len({frozenset(a.sources) for a in answers}) == 3  # the three pairs, once each


def test_direct_assessment_example(run_example) -> None:
    from playwright.sync_api import expect

    evaluator, config, database = run_example("direct-assessment")
    page = evaluator.page
    evaluator.expect_question(1, 4)
    evaluator.shot("question")
    docs_shot(page, "score")
    evaluator.next()  # nothing given: each missing score is marked right under its widget, nothing is saved
    warnings = page.locator(MARKS)  # the marks the score widget shows in the browser (nothing was sent)
    expect(warnings).to_have_count(3)
    expect(page.get_by_text("3 scores are still missing")).to_be_visible()
    slider_box = page.get_by_role("slider").bounding_box()
    mark_box = warnings.filter(has_text="has not been moved yet").bounding_box()
    next_box = page.get_by_role("radiogroup").first.bounding_box()  # the next widget, under the slider
    gap = mark_box["y"] - (slider_box["y"] + slider_box["height"])
    assert 0 <= gap <= 80 and mark_box["y"] + mark_box["height"] < next_box["y"], (slider_box, mark_box, next_box)
    evaluator.shot("validation")
    docs_shot(page, "score-missing")
    groups = page.get_by_role("radiogroup")
    for k, level in ((0, 4), (1, 5)):
        groups.nth(k).get_by_role("radio").nth(level - 1).check(force=True)
        wait_for_app_run(page)
    expect(warnings).to_have_count(1)  # only the untouched slider is still marked
    evaluator.next()
    expect(page.get_by_text("1 score is still missing")).to_be_visible()
    with open_store(database) as store:
        assert store.answers() == []
    move_slider(page, 0, 23)  # 50 -> 73
    wait_for_app_run(page)
    expect(warnings).to_have_count(0)
    evaluator.next()
    for number, (steps, fluency, faithful) in enumerate([(-50, 1, 2), (10, 3, 3), (1, 5, 5)], start=2):
        evaluator.expect_question(number, 4)
        move_slider(page, 0, steps)
        wait_for_app_run(page)
        for k, level in ((0, fluency), (1, faithful)):
            page.get_by_role("radiogroup").nth(k).get_by_role("radio").nth(level - 1).check(force=True)
            wait_for_app_run(page)
        evaluator.next()
    finished(evaluator)
    answers, by_key = stored(config, database)
    assert [a.detail for a in answers] == [
        {"scores": {"overall": [73], "fluency": [4], "faithfulness": [5]}},
        {"scores": {"overall": [0], "fluency": [1], "faithfulness": [2]}},
        {"scores": {"overall": [60], "fluency": [3], "faithfulness": [3]}},
        {"scores": {"overall": [51], "fluency": [5], "faithfulness": [5]}}]
    assert [a.review_source for a in answers] == [by_key[("da", i)].sources[0] for i in range(4)]


def test_turing_example(run_example) -> None:
    from playwright.sync_api import expect

    evaluator, config, database = run_example("turing")
    page = evaluator.page
    evaluator.expect_question(1, 4)
    evaluator.shot("question")
    choose(page, "Generated by a system")
    evaluator.next()  # no confidence: a message, nothing saved
    expect(page.get_by_text("Please say how sure you are")).to_be_visible()
    evaluator.shot("validation", narrow=False)
    with open_store(database) as store:
        assert store.answers() == []
    plan_answers = [("Generated by a system", "Sure"), ("Written by a person", "Guessing"),
                    ("Written by a person", "Very sure"), ("Generated by a system", "Somewhat sure")]
    for number, (answer, sure) in enumerate(plan_answers, start=1):
        if number > 1:
            evaluator.expect_question(number, 4)
        choose(page, answer)
        choose(page, sure)
        evaluator.next()
    finished(evaluator)
    answers, by_key = stored(config, database)
    assert [(a.response, a.detail) for a in answers] == [
        ("generated", {"confidence": 3}), ("real", {"confidence": 1}), ("real", {"confidence": 4}),
        ("generated", {"confidence": 2})]
    shown = [by_key[("turing", i)].sources[0] for i in range(4)]
    assert [a.review_source for a in answers] == shown and shown.count("person") == 2


def test_best_of_3_example(run_example) -> None:
    from playwright.sync_api import expect

    evaluator, config, database = run_example("best-of-3")
    page = evaluator.page
    evaluator.expect_question(1, 3)
    evaluator.shot("question")
    docs_shot(page, "best-of-3")
    evaluator.next()  # nothing chosen
    expect(page.get_by_text("Please choose the best headline")).to_be_visible()
    for number, label in enumerate("BAC", start=1):
        if number > 1:
            evaluator.expect_question(number, 3)
        choose(page, f"Headline {label}")
        evaluator.next()
    finished(evaluator)
    answers, by_key = stored(config, database)
    assert [a.response for a in answers] == ["B", "A", "C"]
    assert [a.review_source for a in answers] == [by_key[("headlines", i)].source_of(x) for i, x in enumerate("BAC")]
    assert all(len(a.sources) == 3 and a.detail == {} for a in answers)


TOUR = """
[study]
title = "Every answer mode"
datasets = "datasets"
database = "responses.sqlite"
seed = 3

[[tasks]]
kind = "compare"
id = "tie"
title = "Compare, with no preference"
instructions = "Choose the better reply, or no preference."
items = "{root}/datasets/responses.jsonl"
systems = ["gpt4", "t5"]
questions = 2
response = "choice-tie"

[[tasks]]
kind = "score"
id = "listwise"
title = "Score three summaries"
instructions = "Score each summary."
items = "{root}/examples/direct-assessment/datasets/summaries.jsonl"
questions = 1
outputs_per_question = 3
textfield = "comment"

[[tasks.scales]]
id = "overall"
label = "Overall quality"
type = "slider"

[[tasks.scales]]
id = "fluency"
label = "Fluency"
type = "likert"
anchors = ["Incomprehensible", "Hard to read", "Readable, with errors", "Fluent, minor slips", "Perfectly fluent"]

[[tasks]]
kind = "rank"
id = "ranking"
title = "Rank three headlines"
instructions = "Give each headline its place."
items = "{root}/examples/best-of-3/datasets/headlines.jsonl"
questions = 1
response = "ranking"

[[tasks]]
kind = "score"
id = "postedit"
title = "Correct a summary"
instructions = "Correct the summary, then score it."
items = "{root}/examples/direct-assessment/datasets/summaries.jsonl"
questions = 1
textfield = "post-edit"

[[tasks.scales]]
id = "fluency"
label = "Fluency"
type = "likert"
anchors = ["Incomprehensible", "Hard to read", "Readable, with errors", "Fluent, minor slips", "Perfectly fluent"]
"""


def test_every_answer_mode_in_the_browser(start_app, browser, tmp_path) -> None:
    """The modes the examples do not use: compare with "No preference", three outputs scored side by side
    with comments, a full ranking, a post-edit; screenshots of each at 1280 and 390 px."""
    from playwright.sync_api import expect

    (tmp_path / "datasets").mkdir()
    config = tmp_path / "config.toml"
    config.write_text(TOUR.replace("{root}", str(ROOT)), encoding="utf-8")
    database = tmp_path / "tour.sqlite"
    url = start_app(config, database, "example-tour")
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    start_session(page, url, "Tour evaluator")
    evaluator = Evaluator(page, "tour")

    def begin() -> None:
        page.get_by_role("button", name="Begin").click()
        wait_for_app_run(page)

    begin()
    evaluator.expect_question(1, 2)
    evaluator.shot("choice-tie")
    docs_shot(page, "compare", height=860)
    choose(page, "No preference")
    evaluator.next()
    choose(page, "Response A")
    evaluator.next()

    begin()
    evaluator.expect_question(1, 1)
    evaluator.shot("listwise")
    for k in range(3):
        page.get_by_role("radiogroup").nth(k).get_by_role("radio").nth(k + 2).check(force=True)
        wait_for_app_run(page)
    for k, steps in ((0, 10), (2, -20)):
        move_slider(page, k, steps)
        wait_for_app_run(page)
    page.get_by_role("textbox", name="Comment on response B (optional)").fill("Reads well.")
    evaluator.next()  # B's slider is untouched: marked under it, nothing saved
    marks = page.locator(MARKS)
    expect(marks).to_have_count(1)
    sliders = page.get_by_role("slider")
    slider_box, mark_box = sliders.nth(1).bounding_box(), marks.first.bounding_box()
    assert abs(mark_box["x"] - slider_box["x"]) < 40 and 0 < mark_box["y"] - slider_box["y"] < 140, (
        slider_box, mark_box)  # in B's column, right under its slider
    evaluator.shot("listwise-validation")
    move_slider(page, 1, 5)
    wait_for_app_run(page)
    expect(marks).to_have_count(0)
    evaluator.next()

    begin()
    evaluator.expect_question(1, 1)
    evaluator.shot("ranking")

    def place(label: str, name: str) -> None:
        page.get_by_test_id("stSelectbox").filter(has_text=f"Place of response {label}").click()
        page.get_by_role("option", name=name, exact=True).click()

    place("A", "2nd")
    place("B", "2nd")
    evaluator.next()
    expect(page.get_by_text("Please give response C a place in the ranking (1st to 3rd).")).to_be_visible()
    place("C", "3rd (worst)")
    evaluator.next()
    expect(page.get_by_text("Responses A and B are both 2nd")).to_be_visible()
    evaluator.shot("ranking-validation", narrow=False)
    place("B", "1st (best)")
    evaluator.next()

    begin()
    evaluator.expect_question(1, 1)
    evaluator.shot("post-edit")
    box = page.get_by_role("textbox", name="Your corrected version of the response")
    original = box.input_value()
    box.fill(original + " Corrected.")
    page.get_by_role("radiogroup").first.get_by_role("radio").nth(3).check(force=True)
    wait_for_app_run(page)
    evaluator.next()
    finished(evaluator)
    context.close()

    answers, by_key = stored(config, database)
    got = {(a.task, a.question_index): a for a in answers}
    assert (got[("tie", 0)].response, got[("tie", 0)].review_source) == ("tie", None)
    assert got[("tie", 1)].review_source == by_key[("tie", 1)].sources[0]
    assert got[("listwise", 0)].detail == {"scores": {"overall": [60, 55, 30], "fluency": [3, 4, 5]},
                                           "texts": ["", "Reads well.", ""]}
    ranking = by_key[("ranking", 0)]
    assert got[("ranking", 0)].response == "B>A>C"
    assert got[("ranking", 0)].detail == {"ranking": [ranking.source_of(x) for x in "BAC"]}
    post = got[("postedit", 0)]
    assert post.detail == {"scores": {"fluency": [4]}, "texts": [original + " Corrected."], "edited": [True]}
    assert original == by_key[("postedit", 0)].texts[0]
