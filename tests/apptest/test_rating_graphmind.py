"""AppTest tests of the rating page on items in GraphMind's shape: the example study (examples/graphmind), text
that tries to be markup, and every paper of GraphMind's real demo output (../shared)."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.rating_items import RatingItem
from evalkit.tasks.rating import compact_dot_graph, graph_heading, kind_name
from tests.apptest.conftest import Harness, button, texts
from tests.helpers import GRAPHMIND, ROOT

EXAMPLE = ROOT / "examples" / "graphmind"
PAYLOAD = "<script>alert(1)</script> **bold** <img src=x onerror=alert(2)> [link](javascript:alert(3))"


def example_study(tmp_path: Path, change=None) -> Path:
    """A copy of the example study (its database in the temporary folder); ``change(records)`` edits its items."""
    folder = tmp_path / "graphmind"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("data"))
    if change is not None:
        records = json.loads((folder / "papers.json").read_text(encoding="utf-8"))
        change(records)
        (folder / "papers.json").write_text(json.dumps(records), encoding="utf-8")
    return folder / "config.toml"


def to_paper(h: Harness, item_id: str | None = None):
    """Consent, "Begin", and (when given) choose the paper ``item_id``; returns the AppTest."""
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    button(at, "Begin").click().run()
    assert not at.exception
    if item_id is not None:
        at.selectbox(key="novelty-0-item").select(item_id).run()
        assert not at.exception
    return at


def html_bodies(at) -> list[str]:
    """The bodies of every st.html element of the last run."""
    return [e.proto.body for e in at.get("html")]


def elements(at) -> dict[str, list[str]]:
    """Every text element's value by kind (text, markdown, html, caption) of the last run."""
    return {"text": [t.value for t in at.text], "markdown": [m.value for m in at.markdown],
            "caption": [c.value for c in at.caption], "html": html_bodies(at)}


def check_item_shown_in_full(at, item: RatingItem) -> None:
    """Every node's whole text, each label, the graph's legend and every evidence citation are on the page."""
    shown = elements(at)
    all_text = "\n".join(shown["text"])
    bodies = "\n".join(shown["html"])
    for n in item.nodes:
        if n.text and n.text != n.label:  # whole, escaped, folded under its label (a tap opens it)
            folded = (f'<details class="evalkit-node"><summary>{html.escape(n.label)}</summary>'
                      f"<p>{html.escape(n.text)}</p>")
            assert folded in bodies, (item.id, n.label)
        else:
            assert f"• {n.label}" in all_text, (item.id, n.label)
        for ex in n.excerpts:
            assert html.escape(ex.text) in bodies
    for e in item.supporting_evidence + item.contradictory_evidence:
        assert f"• {e.text}" in shown["text"]
        assert html.escape(f"— {e.paper_title} · source: {e.source}") in bodies
    assert graph_heading(item) in shown["text"]
    dot, compact = (chart.proto.spec for chart in at.get("graphviz_chart"))  # a wide screen's, a phone's
    assert compact == compact_dot_graph(item) and "rankdir=TB" in compact
    assert dot.count(" [label=") == len(item.nodes) and dot.count(" -> ") == len(item.edges)
    for kind in {n.kind for n in item.nodes}:
        assert f'[label="{kind_name(kind).upper()}\\n' in dot


def test_graphmind_paper_shows_verdict_evidence_graph_and_every_node(make_harness, tmp_path: Path) -> None:
    h = make_harness(config=example_study(tmp_path), database=tmp_path / "responses.sqlite")
    item = next(i for i in h.loaded.items["novelty"] if i.id == "demo-tidegraph")
    at = to_paper(h, "demo-tidegraph")
    shown = texts(at)
    assert "**GraphMind's verdict**" in [m.value for m in at.markdown]
    assert "Novel" in [t.value for t in at.text]
    assert "Probability that the paper is novel: 80%" in [t.value for t in at.text]
    for part in (item.summary, item.conclusion, item.abstract):
        assert part in [t.value for t in at.text]
    assert "★" not in shown  # not the default 1..5 stars
    labels = [e.label for e in at.expander]
    assert labels == ["Abstract of the paper", "Related papers the system retrieved (4)",
                      "Every node of the graph in full"]
    assert graph_heading(item) == "Title → Primary area / Keywords / TL;DR → Claims → Methods → Experiments"
    check_item_shown_in_full(at, item)
    for r in item.related:
        assert html.escape(r.title) in "\n".join(html_bodies(at)) and f"Summary: {r.summary}" in shown
    assert "Saoirse Byrne, Hamid Rezaei, Lotte de Vries et al. · iclr 2024" in "\n".join(html_bodies(at))

    # rate it: stored once, under the paper's id
    for m in h.loaded.study.task("novelty").questions:
        at.radio(key=f"novelty-0-{m.id}").set_value(4)
    button(at, "Save and finish").click().run()
    assert not at.exception and at.title[0].value == "Thank you!"
    rows = sorted((r.item_id, r.metric, r.score) for r in h.store.ratings())
    assert rows == sorted(("demo-tidegraph", m, 4) for m in ("familiarity", "label_correctness", "evidence",
                                                             "specificity", "graph_usefulness"))


def test_not_novel_label_and_its_probability(make_harness, tmp_path: Path) -> None:
    h = make_harness(config=example_study(tmp_path), database=tmp_path / "responses.sqlite")
    at = to_paper(h, "demo-counterfactual-curriculum")
    values = [t.value for t in at.text]
    assert "Not novel" in values and "Probability that the paper is novel: 20%" in values


def poison(records: list[dict[str, Any]]) -> None:
    """Put the payload into every text of the first paper that the page shows."""
    r = records[0]
    paper, ev = r["paper"], r["paper"]["structured_evaluation"]
    old_title = paper["title"]
    paper["title"] = r["graph"]["title"] = "Poisoned " + PAYLOAD
    paper["abstract"] = PAYLOAD
    paper["authors"] = [PAYLOAD]
    paper["conference"] = PAYLOAD
    for key in ("paper_summary", "conclusion"):
        ev[key] = PAYLOAD
    ev["key_comparisons"] = [PAYLOAD]
    for e in ev["supporting_evidence"] + ev["contradictory_evidence"]:
        e.update(text=PAYLOAD, source=PAYLOAD)
    for rel in r["related"]:
        rel.update(summary=PAYLOAD, abstract=PAYLOAD, polarity=PAYLOAD, source=PAYLOAD, venue=PAYLOAD)
    r["related"][0]["title"] = ev["supporting_evidence"][0]["paper_title"] = PAYLOAD + " related"
    for e in r["graph"]["entities"]:
        if e["type"] == "title":
            e["label"] = paper["title"]
        elif e["type"] == "method":
            e["type"] = PAYLOAD  # an unknown node type, named on the page
        if e["detail"]:
            e["detail"] = PAYLOAD + " detail " + e["label"]
        for x in e["excerpts"] or []:
            x.update(section=PAYLOAD, text=PAYLOAD)
    for rel in r["graph"]["relationships"]:
        if rel["source"] == old_title:
            rel["source"] = paper["title"]


def test_untrusted_text_is_shown_as_text_never_as_markup(make_harness, tmp_path: Path) -> None:
    h = make_harness(config=example_study(tmp_path, poison), database=tmp_path / "responses.sqlite")
    at = to_paper(h, "demo-sparse-echo-adapters")
    shown = elements(at)
    assert sum(PAYLOAD in t for t in shown["text"]) >= 10  # shown, as plain text
    for body in shown["markdown"] + shown["caption"]:  # markdown only ever carries our own words
        assert "alert" not in body and "<script" not in body, body
    escaped = html.escape(PAYLOAD)
    assert sum(escaped in body for body in shown["html"]) >= 5  # muted lines: escaped
    for body in shown["html"]:
        assert "<script" not in body and "<img" not in body and "javascript:" not in body.replace(escaped, ""), body
    dot = at.get("graphviz_chart")[0].proto.spec
    assert "<script>" in dot and "label=<" not in dot  # in quoted DOT strings (drawn as text), no HTML-like labels
    assert f"{PAYLOAD.capitalize()}s" not in "".join(shown["markdown"])


@pytest.mark.shared_data
def test_every_real_graphmind_paper_renders_in_full(make_harness, tmp_path: Path) -> None:
    folder = tmp_path / "real"
    folder.mkdir()
    config = (EXAMPLE / "config.toml").read_text(encoding="utf-8").replace(
        'items = "papers.json"', f"items = {json.dumps(str(GRAPHMIND))}").replace(
        'consent = "consent.md"', "")
    (folder / "config.toml").write_text(config, encoding="utf-8")
    h = make_harness(config=folder / "config.toml", database=tmp_path / "responses.sqlite")
    items = h.loaded.items["novelty"]
    assert len(items) == 24
    at = to_paper(h)
    for item in items:
        at.selectbox(key="novelty-0-item").select(item.id).run()
        assert not at.exception, item.id
        check_item_shown_in_full(at, item)
        values = [t.value for t in at.text]
        assert ("Novel" if item.rating else "Not novel") in values
        assert f"Probability that the paper is novel: {item.probability:.0%}" in values
        assert at.expander[1].label == f"Related papers the system retrieved ({len(item.related)})"
