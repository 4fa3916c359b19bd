"""Invited participants in a real browser: `python -m evalkit invite`, then chromium opens the private links of
the demo study (admitting invited participants only) against `streamlit run`, and the database is checked.

Screenshots (1280 and 390 px) of the consent page with an invalid link and of the results page's section land
in ``test-output/screens/invite-*.png``.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.store import open_store
from tests.e2e.conftest import RESULTS_PASSWORD
from tests.e2e.steps import complete_study, problems, start_session, token_of, wait_for_app_run
from tests.helpers import ROOT, copy_demo

pytestmark = pytest.mark.e2e
SCREENS = ROOT / "test-output" / "screens"


def invite(config: Path, database: Path, base_url: str, ids: Path) -> dict[str, str]:
    """Run ``python -m evalkit invite --csv`` as a researcher would; the private links by participant id."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("EVALKIT_DATABASE", None)
    out = subprocess.run([sys.executable, "-m", "evalkit", "invite", "--csv", str(ids), "--config", str(config),
                          "--db", str(database), "--base-url", base_url], capture_output=True, text=True,
                         cwd=config.parent, env=env, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return {r["participant_id"]: r["link"] for r in csv.DictReader(io.StringIO(out.stdout))}


def shoot(page, name: str) -> None:
    """Screenshots of the current screen at 1280 and 390 px."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_for_app_run(page)
        page.screenshot(path=str(SCREENS / f"invite-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 1000})


def test_private_links_complete_the_demo_study_resume_and_show_on_the_results_page(start_app, browser,
                                                                                    tmp_path: Path) -> None:
    from playwright.sync_api import expect

    config = copy_demo(tmp_path)
    config.write_text(config.read_text().replace("[study]\n", '[study]\nparticipants = "invited"\n', 1))
    database = tmp_path / "responses.sqlite"
    url = start_app(config, database, "invite-server")
    ids = tmp_path / "lab.csv"
    ids.write_text("participant_id,email\nP01,ada@example.org\nP02,bo@example.org\nP03,cy@example.org\n")
    links = invite(config, database, f"{url}/", ids)
    assert sorted(links) == ["P01", "P02", "P03"]

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    # no private link: an invited-only study starts nobody
    page.goto(url)
    wait_for_app_run(page)
    expect(page.get_by_text("open to invited participants only")).to_be_visible()
    assert page.get_by_role("button", name="Start the study").count() == 0
    # a guessed key for a known id
    page.goto(links["P01"].rsplit("key=", 1)[0] + "key=guessed")
    wait_for_app_run(page)
    expect(page.get_by_text("This invitation link is not valid")).to_be_visible()
    assert page.get_by_role("button", name="Start the study").count() == 0
    shoot(page, "consent-invalid-link")

    # P01 completes the whole study from the private link (the name is optional; complete_study gives one)
    token, code = complete_study(page, links["P01"], "Ada")
    # the same link again, in a new browser context (another device): the finished session, its code
    other = browser.new_context(viewport={"width": 1280, "height": 1000}).new_page()
    other.goto(links["P01"])
    wait_for_app_run(other)
    expect(other.get_by_role("heading", name="Thank you!")).to_be_visible()
    assert token_of(other.url) == token and "key=" not in other.url
    assert other.get_by_test_id("stCode").inner_text().strip() == code

    # P02 starts and leaves; the link brings them back to their own session
    p02 = start_session(page, links["P02"], "")
    page.goto(links["P02"])
    wait_for_app_run(page)
    assert token_of(page.url) == p02 and problems(page) == []

    with open_store(database) as store:
        sessions = {s.external_id: s for s in store.sessions()}
        assert set(sessions) == {"P01", "P02"}
        assert sessions["P01"].session_id == token and sessions["P01"].completion_code == code
        assert sessions["P01"].status == "completed" and sessions["P01"].meta["invited"] is True
        assert sessions["P02"].completed_at is None and sessions["P02"].meta["invited"] is True
        assert sorted(s.meta["arrival"] for s in sessions.values()) == [0, 1]  # the order they started in
        assert store.answers(token) and not store.answers(p02)
        assert all(links[p].split("key=")[1] not in str(store.table("participants")) for p in links)

    # the results page: who has not started (P03) and who has not finished (P02)
    page.goto(f"{url}/results")
    page.get_by_test_id("stTextInputField").wait_for()
    page.get_by_test_id("stTextInputField").fill(RESULTS_PASSWORD)
    page.get_by_role("button", name="Unlock").click()
    wait_for_app_run(page)
    page.get_by_role("tab", name="Evaluators").click()
    wait_for_app_run(page)
    section = page.get_by_text("Invited participants", exact=True)
    expect(section).to_be_visible()
    expect(page.get_by_text("3 invited · 1 not started · 1 started, not finished · 1 finished")).to_be_visible()
    section.scroll_into_view_if_needed()
    SCREENS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_for_app_run(page)
        page.get_by_text("Invited participants", exact=True).scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENS / f"invite-results-section-{width}.png"))
    context.close()
