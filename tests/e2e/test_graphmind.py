"""Real browser on the example study examples/graphmind (GraphMind's record shape): an evaluator reads one
paper's assessment at 1280 px and on a 390 px phone, rates it and finishes; the database holds the ratings
exactly once, under the paper's id. Screenshots go to test-output/e2e/graphmind-*.png."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from evalkit.config import open_study
from evalkit.store import open_store
from evalkit.tasks.rating import graph_heading, kind_name
from tests.e2e.conftest import OUT
from tests.e2e.steps import problems, rate_item, start_session, wait_for_app_run
from tests.helpers import ROOT

pytestmark = pytest.mark.e2e

EXAMPLE = ROOT / "examples" / "graphmind" / "config.toml"


def shot(page, name: str) -> None:
    """A screenshot of the whole page (Streamlit scrolls an inner element: the viewport grows to fit it)."""
    wait_for_app_run(page)
    size = page.viewport_size
    height = page.evaluate("() => document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], height + 120)})
    page.wait_for_timeout(300)
    page.screenshot(path=str(OUT / f"graphmind-{name}.png"))
    page.set_viewport_size(size)
    page.wait_for_timeout(100)


def test_graphmind_example_study_in_a_browser(start_app, browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    database = tmp_path / "responses.sqlite"
    url = start_app(EXAMPLE, database, "graphmind-server")
    loaded = open_study(EXAMPLE, database=database)
    task = loaded.study.task("novelty")
    item = next(i for i in loaded.items["novelty"] if i.id == "demo-tidegraph")

    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    token = start_session(page, url, "GraphMind Evaluator")
    shot(page, "instructions")
    page.get_by_role("button", name="Begin").click()
    wait_for_app_run(page)
    page.get_by_role("combobox").click()
    page.keyboard.type("TideGraph")
    page.keyboard.press("Enter")
    wait_for_app_run(page)
    svg = page.locator(".st-key-paper-graph [data-testid=stGraphVizChart] svg")  # the wide screen's graph
    svg.wait_for(timeout=20_000)
    assert not page.locator(".st-key-paper-graph-phone").is_visible()  # the phone's graph: for phones only
    assert problems(page) == []

    # the verdict on the config's scale, with its probability as a percentage
    expect(page.get_by_text("GraphMind's verdict", exact=True)).to_be_visible()
    expect(page.get_by_text("Novel", exact=True)).to_be_visible()
    expect(page.get_by_text("Probability that the paper is novel: 80%", exact=True)).to_be_visible()
    expect(page.get_by_text(item.conclusion, exact=True)).to_be_visible()
    # each piece of evidence with the paper it cites and its source
    for e in item.supporting_evidence + item.contradictory_evidence:
        expect(page.get_by_text(f"• {e.text}", exact=True)).to_be_visible()
        expect(page.get_by_text(f"— {e.paper_title} · source: {e.source}", exact=True)).to_be_visible()
    # the graph: every node drawn, every type named, the legend from the types present
    expect(page.get_by_text(graph_heading(item), exact=True)).to_be_visible()
    assert graph_heading(item).startswith("Title → Primary area / Keywords / TL;DR → Claims")
    assert svg.locator("g.node").count() == len(item.nodes)
    assert svg.locator("g.edge").count() == len(item.edges)
    graph = page.locator(".st-key-paper-graph")
    assert graph.evaluate("e => e.scrollWidth <= e.clientWidth")  # at 1280 px the whole graph fits
    drawn = " ".join(svg.locator("text").all_text_contents())
    for kind in {n.kind for n in item.nodes}:
        assert kind_name(kind).upper() in drawn, kind
    shot(page, "item-1280")

    # on demand: the abstract, the related papers and every node's full text
    page.get_by_text("Abstract of the paper").click()
    expect(page.get_by_text(item.abstract, exact=True)).to_be_visible()
    page.get_by_text(f"Related papers the system retrieved ({len(item.related)})").click()
    expect(page.get_by_text(item.related[0].title, exact=True)).to_be_visible()
    page.get_by_text("Every node of the graph in full").click()
    long = [n for n in item.nodes if len(n.text) > 110]
    assert long
    for n in long:  # the graph abbreviates them; the list below it shows them whole, each folded under its label
        node = page.locator("details.evalkit-node").filter(has=page.get_by_text(n.label, exact=True))
        expect(node.get_by_text(n.text, exact=True)).to_be_hidden()
        for _ in range(3):  # (under load a click can land while the page is redrawn, which folds it again)
            node.get_by_text(n.label, exact=True).click()
            if node.evaluate("d => d.open"):
                break
            page.wait_for_timeout(300)
        expect(node.get_by_text(n.text, exact=True)).to_be_visible()
    shot(page, "item-1280-expanded")

    # a phone: the graph drawn for it, top to bottom with each node's label, whole on the screen at (nearly) its
    # natural size: no sideways scrolling, legible text (the wide graph, about 1,000 px wide, is hidden)
    page.set_viewport_size({"width": 390, "height": 900})
    wait_for_app_run(page)
    phone = page.locator(".st-key-paper-graph-phone [data-testid=stGraphVizChart] svg")
    phone.scroll_into_view_if_needed()
    assert not graph.is_visible() and phone.is_visible()
    box = phone.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    natural = float(phone.get_attribute("viewBox").split()[2]) * 4 / 3  # pt -> px
    assert box["width"] >= 0.85 * natural, (box, natural)  # shrunk a little at most
    assert min(t.bounding_box()["height"] for t in phone.locator("text").all()) >= 10  # legible
    drawn = " ".join(phone.locator("text").all_text_contents())
    assert "TITLE" in drawn and "KEYWORDS" in drawn and "EXPERIMENT" in drawn
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # the page does not scroll sideways
    shot(page, "item-390")

    # rate it and finish
    page.set_viewport_size({"width": 1280, "height": 1400})
    wait_for_app_run(page)
    assert page.get_by_role("radiogroup").count() == len(task.questions)
    rate_item(page, 4)
    wait_for_app_run(page)
    expect(page.get_by_role("heading", name="Thank you!")).to_be_visible()
    shot(page, "done")
    context.close()
    assert {urlsplit(r).hostname for r in requests if not r.startswith(("data:", "blob:"))} == {"127.0.0.1"}

    store = open_store(database)
    try:
        [session] = store.sessions()
        assert session.session_id == token and session.status == "completed"
        ratings = store.ratings(session.session_id)
        assert sorted((r.task, r.item_id, r.metric, r.score) for r in ratings) == sorted(
            ("novelty", "demo-tidegraph", m.id, 4) for m in task.questions)  # each exactly once
    finally:
        store.close()
