"""Real browser: Pearmut's example campaigns, imported with ``python -m evalkit import pearmut``, run against
``streamlit run``. A user's private link (``evalkit invite --csv`` with the participants file the import wrote)
leads through the welcome form, the tutorial (answered as its checks expect, so nothing is refused) and the user's
documents; the database must then hold the user's documents in the campaign's order. Small campaigns are done to
the end (the done screen shows the user's own code); the large ones (hundreds of items) for their first questions.
Screenshots of each question at the campaign's width in test-output/e2e/.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.balance import arrival_of
from evalkit.config import open_study
from evalkit.pearmut_import import import_campaign
from evalkit.queue import fill, is_queued
from evalkit.sampling import plan
from evalkit.store import open_store
from tests.e2e.conftest import OUT
from tests.e2e.steps import token_of, wait_for_app_run
from tests.e2e.test_invited import invite
from tests.e2e.test_span_examples import _answer as answer_spans
from tests.helpers import SHARED_DATA
from tests.test_pearmut_import import media_campaign

pytestmark = [pytest.mark.e2e, pytest.mark.shared_data]

#: (campaign, width, questions to answer: None = all)
CASES = [("tutorials/esa_deen", 1280, None), ("attention_checks", 390, None), ("user_info_form", 1280, None),
         ("likert_custom_scales", 390, None), ("html", 1280, None), ("singlestream", 1280, 4),
         ("dynamic", 390, 3), ("mqm", 1280, 2), ("da", 390, 3), ("esa", 1280, 2), ("media-da", 390, None),
         ("media-esa", 1280, None)]


def slide(page: Any, slider: Any, steps: int) -> None:
    """Move ``slider`` to its minimum, then ``steps`` steps to the right, with the keys (as a keyboard user)."""
    slider.focus()
    page.keyboard.press("Home")
    for _ in range(steps):
        page.keyboard.press("ArrowRight")


def score_value(want: dict | None, system: str, scale: str, chosen: dict[str, int]) -> int:
    """A score meeting the check (the middle of its range; above the system it must beat), else 70."""
    rule = (want or {}).get(system, {})
    bounds = (rule.get("score") or {}).get(scale)
    value = round(sum(bounds) / 2) if bounds else 70
    order = rule.get("greater_than")
    if order and order["scale"] == scale and order["than"] in chosen:
        value = max(value, chosen[order["than"]] + 5)
    return value


def answer_scores(page: Any, task: Any, q: Any) -> dict[str, dict[str, int]]:
    """Move every slider of the score widget (outputs in display order, each output's scales in order)."""
    want = json.loads(q.check.want) if q.check is not None and q.check.rule == "systems" else None
    ranges = json.loads(q.check.want) if q.check is not None and q.check.rule == "ranges" else {}
    widget = page.get_by_test_id("evalkit-scores")
    sliders = widget.get_by_role("slider")
    given: dict[str, dict[str, int]] = {}
    systems = sorted(q.sources, key=lambda s: bool((want or {}).get(s, {}).get("greater_than")))
    for system in systems:
        k = q.sources.index(system)
        for j, scale in enumerate(task.scales):
            chosen = {s: v[scale.id] for s, v in given.items() if scale.id in v}
            value = round(sum(ranges[scale.id]) / 2) if scale.id in ranges else score_value(want, system, scale.id,
                                                                                            chosen)
            value = min(scale.high, max(scale.low, value))
            slide(page, sliders.nth(k * len(task.scales) + j), value - scale.low)
            given.setdefault(system, {})[scale.id] = value
    return given


def fill_form(page: Any) -> None:
    """Answer every field of a background form (a text, a number, the first option) and continue."""
    for box in page.get_by_test_id("stTextInputField").all():
        box.fill("Deutsch")
    for box in page.get_by_test_id("stNumberInputField").all():
        box.fill("30")
        box.press("Tab")
    for select in page.get_by_test_id("stSelectbox").all():
        select.click()
        page.get_by_role("option").first.click()
    radios = page.get_by_test_id("stRadio")
    for k in range(radios.count()):
        radios.nth(k).get_by_role("radio").first.check(force=True)
    page.get_by_role("button", name="Continue").click()


@pytest.mark.parametrize(("name", "width", "limit"), CASES, ids=[c[0].split("/")[-1] for c in CASES])
def test_an_imported_campaign_runs_in_the_browser(start_app, browser, tmp_path: Path, name: str, width: int,
                                                   limit: int | None) -> None:
    from playwright.sync_api import expect

    if name.startswith("media-"):  # an image source and a recording among the outputs, from the campaign's assets
        path = media_campaign(tmp_path, name.split("-")[1].upper())
    else:
        path = SHARED_DATA / "pearmut" / f"{name}.json"
    result = import_campaign(path, tmp_path / "study")
    config = result.folder / "config.toml"
    database = result.folder / "data" / "responses.sqlite"
    loaded = open_study(config)
    url = start_app(config, database, f"pearmut-{name.split('/')[-1]}")
    links = invite(config, database, f"{url}/", result.folder / "datasets" / "participants.csv")
    user = result.users[0]
    codes = {r["participant_id"]: r["code_pass"] for r in
             csv.DictReader((result.folder / "datasets" / "participants.csv").open())}
    phone = width < 600  # (a phone: marked by taps, as a person there would)
    context = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844},
                                  has_touch=phone, is_mobile=phone)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(links[user])
        wait_for_app_run(page)
        page.get_by_text("I agree to take part").click()
        page.get_by_role("button", name="Start the study").click()
        wait_for_app_run(page)
        token = token_of(page.url)
        with open_store(database) as store:
            session = store.get_session(token)
        assert session.participant_id == user
        questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta), user)
        main = [q for q in questions if q.task == "main"]
        answered = 0
        for _ in range(200):
            if answered >= min(len(main), limit or len(main)):
                break
            if page.get_by_role("button", name="Begin").count():
                page.get_by_role("button", name="Begin").click()
            elif page.get_by_role("button", name="Continue").count():
                fill_form(page)
            else:
                expect(page.get_by_text(f"Question {answered + 1} of {len(main)}")).to_be_visible(timeout=20_000)
                q = main[answered]
                task = loaded.study.task("main")
                if is_queued(q):  # the shared queue's item, claimed when the question was shown
                    with open_store(database) as store:
                        unit = store.progress(session.session_id).claims["main"][q.index]
                    q = main[answered] = fill(q, unit, loaded.item_sets[task.source.items], session.seed,
                                              arrival_of(session.meta) if loaded.study.rotates(task.kind) else None)
                if task.kind == "spans":
                    item = loaded.item_sets[task.source.items].by_id(q.review_ids[0])
                    answer_spans(page, task, q, item, "touch" if phone else "mouse")
                    sliders = page.get_by_test_id("evalkit-slider")  # a document's sliders: one per segment
                    if sliders.count() > len(q.sources):  # (a document is never a check: any score does)
                        for k in range(sliders.count()):
                            slide(page, sliders.nth(k), 70)
                    page.get_by_test_id("evalkit-next").click()
                    asked = page.get_by_test_id("evalkit-summary").filter(has_text="not reviewed yet")
                    if asked.is_visible():
                        page.get_by_test_id("evalkit-next").click()
                else:
                    answer_scores(page, task, q)
                    page.get_by_test_id("evalkit-scores").get_by_role("button", name="Next").click()
                OUT.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(OUT / f"pearmut-{name.split('/')[-1]}-{answered + 1}-{width}.png"),
                                full_page=True)
                answered += 1
            wait_for_app_run(page)
            assert not page.get_by_text("Not quite").count(), f"{name}: question {answered}: a check refused"
        if limit is None:
            expect(page.get_by_role("heading", name="Thank you!")).to_be_visible(timeout=20_000)
            if codes.get(user):
                assert page.get_by_test_id("stCode").inner_text().strip() == codes[user]
        assert not errors, errors
        with open_store(database) as store:
            stored = {a.question_index: a for a in store.answers(session.session_id) if a.task == "main"}
        assert sorted(stored) == [q.index for q in main[:answered]]
        for q in main[:answered]:  # the user's documents, in the campaign's order
            assert stored[q.index].item_ids[0] == q.review_ids[0]
            if q.check is not None:
                assert stored[q.index].check_passed, (name, q.check.id)
        if result.documents and "/" in next(iter(result.documents)):  # task-based: the user's own documents
            own = [i for k, ids in result.documents.items() if k.startswith(f"{user}/") for i in ids]
            regular = [q.review_ids[0] for q in main if q.check is None or q.review_ids[0] in own]
            assert [i for i in regular if i in own] == own[:len([i for i in regular if i in own])]
    finally:
        context.close()


def test_a_wrong_practice_answer_says_under_each_output_what_is_wrong(start_app, browser, tmp_path: Path) -> None:
    """attention_checks.json's first tutorial question, every score 30: each output's own line (Pearmut's warning
    for that model, then what is out of range) under its heading, in the span widget, at 390 px too."""
    from playwright.sync_api import expect

    result = import_campaign(SHARED_DATA / "pearmut" / "attention_checks.json", tmp_path / "study")
    config = result.folder / "config.toml"
    database = result.folder / "data" / "responses.sqlite"
    url = start_app(config, database, "pearmut-feedback")
    links = invite(config, database, f"{url}/", result.folder / "datasets" / "participants.csv")
    for width, user in ((1280, "user-1"), (390, "user-2")):
        context = browser.new_context(viewport={"width": width, "height": 900})
        try:
            page = context.new_page()
            page.goto(links[user])
            wait_for_app_run(page)
            page.get_by_text("I agree to take part").click()
            page.get_by_role("button", name="Start the study").click()
            wait_for_app_run(page)
            sliders = page.get_by_test_id("evalkit-slider")
            for k in range(sliders.count()):
                slide(page, sliders.nth(k), 30)
            page.get_by_test_id("evalkit-next").click()
            wait_for_app_run(page)
            boxes = page.get_by_test_id("evalkit-problems")
            expect(boxes.first).to_be_visible(timeout=20_000)
            lines = [boxes.nth(k).inner_text() for k in range(boxes.count())]
            assert len(lines) == sliders.count() and all("(yours: 30)" in text for text in lines), lines
            headings = page.locator(".evalkit-spans-output .evalkit-heading").all_inner_texts()
            if user == "user-1":  # its warnings name the models, shown in the campaign's order (shuffle: false)
                for heading, text in zip(headings, lines, strict=True):  # each box under its own output
                    assert text.startswith(f"{heading} "), (heading, text)
            OUT.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT / f"pearmut-feedback-{width}.png"), full_page=True)
            with open_store(database) as store:
                assert store.answers() == [] or all(a.check is None for a in store.answers())
        finally:
            context.close()
