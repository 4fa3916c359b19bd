"""Real browser: the results page, opened at the address researchers are given (``/?page=results``), makes no
failing request (Streamlit's client, opened at a page's own path such as ``/results``, first asks for
``/results/_stcore/health`` and ``/results/_stcore/host-config`` and gets two 404s); its charts fit the screen at
1280 and 390 px; its LaTeX preview is not greyed after a ``\\%``. Screenshots of every tab at both widths go to
test-output/e2e/results-requests/."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evalkit.config import open_study, study_summary
from evalkit.store import open_store
from evalkit.survey import finish_rating, record_item_rating
from tests.e2e.conftest import OUT, RESULTS_PASSWORD
from tests.e2e.steps import wait_for_app_run
from tests.helpers import answer_items_tasks, make_demo_with_items_tasks

pytestmark = pytest.mark.e2e
SCREENS = OUT / "results-requests"


def _study(tmp: Path) -> tuple[Path, Path]:
    """The demo study with a task of every items kind, answered by four evaluators who also rated a paper."""
    config, database = make_demo_with_items_tasks(tmp / "study"), tmp / "responses.sqlite"
    loaded = open_study(config, database=database)
    task, items = loaded.study.task("novelty"), loaded.items["novelty"]
    rng = random.Random(6)
    with open_store(database) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for e in range(4):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"Evaluator {e}")
            answer_items_tasks(store, loaded, session, rng)
            record_item_rating(store, session, task, 0, items[e % 2].id,
                               {m.id: rng.randint(1, 5) for m in task.questions}, "", 20_000, items)
            finish_rating(store, session, task)
    return config, database


def test_the_results_page_makes_no_failing_request_and_its_charts_fit(start_app, browser, tmp_path) -> None:
    url = start_app(*_study(tmp_path), "results-requests")
    SCREENS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        _visit(browser, url, width)


def _visit(browser, url: str, width: int) -> None:
    """Open the results page at ``width``, log in, show every tab (a screenshot of each), check that every chart
    fits the screen and the LaTeX preview; then that no request failed and the console has no error."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": width, "height": 2400})
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("requestfailed", lambda r: failed.append(f"failed {r.url}"))
    page.on("console", lambda m: failed.append(f"console: {m.text}") if m.type == "error" else None)
    try:
        page.goto(f"{url}/?page=results")
        wait_for_app_run(page)
        password = page.get_by_test_id("stTextInputField")
        expect(password).to_be_visible()
        assert page.get_by_test_id("stMainBlockContainer").evaluate(
            "e => getComputedStyle(e).maxWidth") == "none"  # the results page's wide layout, at the root
        password.fill(RESULTS_PASSWORD)
        page.get_by_role("button", name="Unlock").click()
        wait_for_app_run(page)
        expect(page.get_by_text("Which reply is better? · compare")).to_be_visible(timeout=30_000)
        for tab in ("Overview", "Ratings", "Evaluators", "Exports"):  # (the study has a rating task)
            page.get_by_role("tab", name=tab).click()
            wait_for_app_run(page)
            page.wait_for_timeout(1500)  # the charts' first draw
            page.screenshot(path=str(SCREENS / f"{tab.lower()}-{width}.png"), full_page=True)
            for chart in page.locator("[data-testid='stVegaLiteChart']").all():
                box = chart.bounding_box()
                if box is not None and box["width"] > 0:  # a chart of the tab shown, wider than the screen?
                    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (tab, width, box)
        # the LaTeX preview: what follows an escaped \% (the caption's "95\% Wilson intervals") is not a comment
        code = page.get_by_test_id("stCode").filter(has_text="\\toprule")
        expect(code).to_contain_text("95\\% Wilson intervals")
        greyed = [t for t in code.locator(".token.comment, .comment").all_inner_texts() if "Wilson" in t]
        assert greyed == [], greyed
        assert failed == [], failed  # no 404 for /results/_stcore/health or host-config, nothing else failed
    finally:
        context.close()
