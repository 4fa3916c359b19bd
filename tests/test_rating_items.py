"""evalkit.rating_items and the rating task's label and graph: GraphMind's real demo output (24 papers), the
example study's invented papers, both item shapes and file formats, and every broken shape named by file, item
and field."""

from __future__ import annotations

import copy
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from evalkit.config import ConfigError, load_study, open_study, study_summary
from evalkit.datasets import DatasetError
from evalkit.rating_items import RatingItem, load_rating_items
from evalkit.tasks.rating import SystemLabel, dot_graph, full_nodes, graph_heading, graph_layers, kind_name
from tests.helpers import GRAPHMIND, PAPER, ROOT

EXAMPLE = ROOT / "examples" / "graphmind"
HEADING = "Title → Primary area / Keywords / TL;DR → Claims → Methods → Experiments"


def example_records() -> list[dict[str, Any]]:
    """The example study's papers (written for the project, in GraphMind's record shape), as plain JSON."""
    return json.loads((EXAMPLE / "papers.json").read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- GraphMind's real output


@pytest.fixture(scope="module")
def real() -> tuple[list[dict[str, Any]], list[RatingItem]]:
    """GraphMind's demo library: the raw records (read with the standard library) and the loaded items."""
    if not GRAPHMIND.is_file():
        pytest.skip(f"{GRAPHMIND} is missing")
    raw = json.loads(gzip.decompress(GRAPHMIND.read_bytes()))
    return raw, load_rating_items(GRAPHMIND, scale=(0, 1))


@pytest.mark.shared_data
def test_real_graphmind_library_loads_with_the_readme_figures(real) -> None:
    raw, items = real
    assert len(items) == len(raw) == 24
    nodes = [n for i in items for n in i.nodes]
    assert len(nodes) == 353  # ../shared/data/graphmind/README.md
    assert sum(len(n.text) > 110 for n in nodes) == 138
    assert max(len(i.nodes) for i in items) == 18 and max(len(i.edges) for i in items) == 27
    assert all(7 <= len(i.supporting_evidence) + len(i.contradictory_evidence) <= 20 for i in items)
    assert all(9 <= len(i.related) <= 20 for i in items)
    assert Counter(n.kind for n in nodes) == {"keyword": 122, "claim": 58, "experiment": 51, "method": 50,
                                              "title": 24, "primary_area": 24, "tldr": 24}
    assert {i.rating for i in items} == {0, 1} and all(0 <= i.probability <= 1 for i in items)
    # methods and experiments with several parents
    assert sum(c > 1 for i in items for c in Counter(b for _, b in i.edges).values()) >= 20


@pytest.mark.shared_data
def test_real_graphmind_records_are_read_faithfully(real) -> None:
    raw, items = real
    for record, item in zip(raw, items, strict=True):
        paper, ev = record["paper"], record["paper"]["structured_evaluation"]
        assert (item.id, item.title, item.summary) == (paper["id"], paper["title"], ev["paper_summary"].strip())
        assert (item.rating, item.probability) == (ev["label"], ev["probability"])
        assert item.conclusion == ev["conclusion"].strip() and item.abstract == paper["abstract"].strip()
        assert item.key_comparisons == tuple(c.strip() for c in ev["key_comparisons"])
        for mine, theirs in ((item.supporting_evidence, ev["supporting_evidence"]),
                             (item.contradictory_evidence, ev["contradictory_evidence"])):
            assert [(e.text, e.paper_title, e.paper_id, e.source) for e in mine] == [
                (x["text"].strip(), x["paper_title"], x["paper_id"] or "", x["source"]) for x in theirs]
            assert all(e.paper_title and e.source for e in mine)
        entities = record["graph"]["entities"]
        assert [(n.id, n.kind, n.text) for n in item.nodes] == [
            (e["label"], e["type"], (e["detail"] or "").strip()) for e in entities]
        assert [[(x.section, x.text) for x in n.excerpts] for n in item.nodes] == [
            [(x["section"], x["text"].strip()) for x in e["excerpts"] or []] for e in entities]
        assert item.edges == tuple((r["source"], r["target"]) for r in record["graph"]["relationships"])
        assert [(r.title, r.polarity, r.source, r.year) for r in item.related] == [
            (r["title"], r["polarity"], r["source"], r["year"]) for r in record["related"]]
        assert item.year == paper["year"] and item.authors == tuple(paper["authors"])
        assert "sections" not in item.extra and item.extra["rating"] == paper["rating"]  # kept, never shown


@pytest.mark.shared_data
def test_real_graphmind_graphs_draw_every_node_edge_and_type(real) -> None:
    _, items = real
    for item in items:
        dot = dot_graph(item)
        assert dot.count(" [label=") == len(item.nodes) and dot.count(" -> ") == len(item.edges)
        for kind in {n.kind for n in item.nodes}:
            assert f'[label="{kind_name(kind).upper()}\\n' in dot, (item.id, kind)
        assert graph_heading(item) == HEADING  # from the types present, in the graph's order
        listed = [n for _, nodes in full_nodes(item) for n in nodes]
        assert sorted(n.id for n in listed) == sorted(n.id for n in item.nodes)  # the full list has them all


@pytest.mark.shared_data
def test_real_graphmind_needs_its_binary_scale_and_says_so() -> None:
    with pytest.raises(DatasetError) as err:
        load_rating_items(GRAPHMIND)
    assert str(err.value).startswith(f"{GRAPHMIND}, item 1: field 'paper.structured_evaluation.label' must be an "
                                     "integer from 1 to 5")
    assert "set scale = [0, 1]" in str(err.value)


# ----------------------------------------------------------------------------- the example study's data


def test_example_papers_load_and_cover_every_node_type() -> None:
    items = load_rating_items(EXAMPLE / "papers.json", scale=(0, 1))
    assert len(items) == 5 and len({i.id for i in items}) == 5
    for item in items:
        assert {n.kind for n in item.nodes} == {"title", "primary_area", "keyword", "tldr", "claim", "method",
                                                "experiment"}
        assert graph_heading(item) == HEADING
        assert item.related and item.abstract and item.conclusion and item.probability is not None
        titles = {r.title for r in item.related}
        assert all(e.paper_title in titles and e.source for e in item.supporting_evidence)
        assert any(len(n.text) > 110 for n in item.nodes)  # some node text the graph must abbreviate
        assert any(c > 1 for c in Counter(b for _, b in item.edges).values())  # several parents


def test_example_study_config_loads() -> None:
    loaded = open_study(EXAMPLE / "config.toml", database=":memory:")
    [task] = loaded.study.tasks
    assert loaded.study.title == "GraphMind novelty ratings"
    assert task.system_label == SystemLabel(heading="GraphMind's verdict", low=0, high=1,
                                            names=("Not novel", "Novel"),
                                            probability="Probability that the paper is novel")
    assert len(loaded.items["novelty"]) == 5
    [described] = study_summary(loaded.study)["tasks"]
    assert described["system_label"] == {"scale": [0, 1], "names": ["Not novel", "Novel"]}


# ----------------------------------------------------------------------------- files and shapes


def write_json(tmp_path: Path, records: list[Any], name: str = "items.json") -> Path:
    path = tmp_path / name
    data = json.dumps(records, indent=1).encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def write_lines(tmp_path: Path, records: list[Any], name: str = "items.jsonl") -> Path:
    path = tmp_path / name
    data = "\n".join(json.dumps(r) for r in records).encode() + b"\n"
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("name", ["items.json", "items.json.gz", "items.jsonl", "items.jsonl.gz"])
def test_graphmind_records_load_from_json_lists_and_json_lines(tmp_path: Path, name: str) -> None:
    records = example_records()[:3]
    write = write_json if ".json." in name or name.endswith(".json") else write_lines
    items = load_rating_items(write(tmp_path, records, name), scale=(0, 1))
    assert [i.id for i in items] == [r["paper"]["id"] for r in records]


def test_one_json_object_is_one_item_and_shapes_mix(tmp_path: Path) -> None:
    [record] = example_records()[:1]
    path = tmp_path / "one.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert [i.id for i in load_rating_items(path, scale=(0, 1))] == [record["paper"]["id"]]
    mixed = write_lines(tmp_path, [record, {**PAPER, "rating": 1}])
    items = load_rating_items(mixed, scale=(0, 1))
    assert [i.id for i in items] == [record["paper"]["id"], "p1"]


def test_evalkit_shape_takes_evidence_objects_entities_and_the_optional_fields(tmp_path: Path) -> None:
    item = {**PAPER, "probability": 0.4, "conclusion": "Not new.", "abstract": "We do X.", "year": 2020,
            "authors": ["A. Author"], "venue": "ACL",
            "supporting_evidence": ["plain", {"text": "cited", "paper_title": "Old Paper", "source": "semantic"}],
            "related": [{"title": "Old Paper", "summary": "It did X.", "polarity": "negative", "year": 2019}],
            "graph": {"entities": [{"label": "A Paper", "type": "title"},
                                   {"label": "Claim", "type": "claim", "detail": "It claims.",
                                    "excerpts": [{"section": "Intro", "text": "We claim."}]},
                                   {"label": "M", "type": "method"}],
                      "relationships": [{"source": "A Paper", "target": "Claim"}, {"source": "A Paper", "target": "M"},
                                        {"source": "Claim", "target": "M"}]}}
    [got] = load_rating_items(write_lines(tmp_path, [item]))
    assert [(e.text, e.paper_title, e.source) for e in got.supporting_evidence] == [
        ("plain", "", ""), ("cited", "Old Paper", "semantic")]
    assert (got.probability, got.conclusion, got.abstract, got.year, got.authors, got.venue) == (
        0.4, "Not new.", "We do X.", 2020, ("A. Author",), "ACL")
    assert got.related[0].title == "Old Paper" and got.related[0].polarity == "negative"
    assert got.nodes[1].text == "It claims." and got.nodes[1].excerpts[0].section == "Intro"
    assert got.edges == (("A Paper", "Claim"), ("A Paper", "M"), ("Claim", "M"))  # M has two parents
    assert graph_layers(got) == [["title"], ["claim", "method"]]


def _broken(change) -> dict[str, Any]:
    record = copy.deepcopy(example_records()[0])
    change(record)
    return record


def _ev(r: dict[str, Any]) -> dict[str, Any]:
    return r["paper"]["structured_evaluation"]


BROKEN = [
    (lambda r: _ev(r)["supporting_evidence"][1].pop("text"),
     "field 'paper.structured_evaluation.supporting_evidence[1]' has no 'text' (a non-empty string)"),
    (lambda r: _ev(r)["contradictory_evidence"].__setitem__(0, 5),
     "field 'paper.structured_evaluation.contradictory_evidence[0]' must be a string or an object with 'text', "
     "got a number"),
    (lambda r: _ev(r)["supporting_evidence"][0].__setitem__("paper_title", ["x"]),
     "field 'paper.structured_evaluation.supporting_evidence[0].paper_title' must be a non-empty string"),
    (lambda r: r["graph"]["relationships"][3].__setitem__("target", "Nowhere"),
     "field 'graph.relationships[3].target' is 'Nowhere', the label of no entity in graph.entities"),
    (lambda r: r["graph"]["relationships"][0].pop("source"),
     "field 'graph.relationships[0].source' must be the label of an entity (a string), but is missing"),
    (lambda r: r["graph"]["entities"][3].__setitem__("label", r["graph"]["entities"][2]["label"]),
     "field 'graph.entities[3].label' is 'Parameter-efficient fine-tuning', which is also the label of "
     "graph.entities[2]"),
    (lambda r: r["graph"]["entities"][2].pop("type"),
     "field 'graph.entities[2].type' must be a non-empty string (it is missing)"),
    (lambda r: r["graph"]["entities"][7]["excerpts"][0].__setitem__("text", " "),
     "field 'graph.entities[7].excerpts[0].text' must be a non-empty string"),
    (lambda r: r["graph"].__setitem__("entities", []), "field 'graph.entities' is empty"),
    (lambda r: r.pop("graph"), "field 'graph' is missing"),
    (lambda r: _ev(r).__setitem__("probability", 1.5),
     "field 'paper.structured_evaluation.probability' must be a number from 0 to 1, got 1.5"),
    (lambda r: _ev(r).__setitem__("probability", -0.1),
     "field 'paper.structured_evaluation.probability' must be a number from 0 to 1, got -0.1"),
    (lambda r: _ev(r).__setitem__("probability", "high"),
     "field 'paper.structured_evaluation.probability' must be a number, got 'high'"),
    (lambda r: _ev(r).__setitem__("probability", float("nan")),
     "field 'paper.structured_evaluation.probability' must be a number, got nan"),
    (lambda r: _ev(r).__setitem__("label", 2),
     "field 'paper.structured_evaluation.label' must be an integer from 0 to 1 (the task's [tasks.system_label] "
     "scale = [0, 1]), got 2"),
    (lambda r: _ev(r).__setitem__("label", True), "field 'paper.structured_evaluation.label' must be an integer"),
    (lambda r: _ev(r).pop("label"), "field 'paper.structured_evaluation.label' is missing"),
    (lambda r: _ev(r).__setitem__("key_comparisons", [1]),
     "field 'paper.structured_evaluation.key_comparisons' must be a list of non-empty strings"),
    (lambda r: r["paper"].pop("structured_evaluation"), "field 'paper.structured_evaluation' is missing"),
    (lambda r: r["paper"].__setitem__("title", ""), "field 'paper.title' must be a non-empty string"),
    (lambda r: r["paper"].__setitem__("id", None), "field 'paper.id' must be a non-empty string"),
    (lambda r: r.__setitem__("paper", []), "field 'paper' must be an object, got a list"),
    (lambda r: r["related"][2].pop("title"), "field 'related[2].title' must be a non-empty string (it is missing)"),
    (lambda r: r["related"][0].__setitem__("year", "2020"), "field 'related[0].year' must be an integer"),
]


@pytest.mark.parametrize(("change", "message"), BROKEN)
def test_broken_graphmind_records_name_the_file_the_item_and_the_field(tmp_path: Path, change, message: str) -> None:
    good = example_records()[1]
    path = write_json(tmp_path, [good, _broken(change)])
    with pytest.raises(DatasetError) as err:
        load_rating_items(path, scale=(0, 1))
    assert str(err.value).startswith(f"{path}, item 2: {message}"), str(err.value)
    lines = write_lines(tmp_path, [good, _broken(change)])  # the same in JSON Lines names the line
    with pytest.raises(DatasetError, match=r"items\.jsonl, line 2: field '"):
        load_rating_items(lines, scale=(0, 1))


def test_broken_files(tmp_path: Path) -> None:
    bad_gzip = tmp_path / "items.json.gz"
    bad_gzip.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DatasetError, match=r"items\.json\.gz: not a valid gzip file"):
        load_rating_items(bad_gzip)
    broken = tmp_path / "items.json"
    broken.write_text('[\n {"paper": {},\n  oops\n]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"items\.json, line 3: not valid JSON"):
        load_rating_items(broken)
    broken.write_bytes(b'[\n"\xff"]')
    with pytest.raises(DatasetError, match=r"items\.json, line 2: not valid UTF-8"):
        load_rating_items(broken)
    broken.write_text("[]")
    with pytest.raises(DatasetError, match="no rating items"):
        load_rating_items(broken)
    record = example_records()[0]
    twice = write_json(tmp_path, [record, example_records()[1], record])
    with pytest.raises(DatasetError, match=r"item 3: id 'demo-sparse-echo-adapters' was already used on item 1"):
        load_rating_items(twice, scale=(0, 1))
    with pytest.raises(DatasetError, match=r"items\.json, item 1: expected a JSON object, got a list"):
        load_rating_items(write_json(tmp_path, [[1]]))


# ----------------------------------------------------------------------------- [tasks.system_label]

RATING_CONFIG = """
[study]
title = "Labels"
datasets = "."

[[tasks]]
kind = "rating"
id = "novelty"
items = "items.json"
{extra}

[[tasks.metrics]]
id = "q"
question = "Good?"
anchors = ["no", "yes"]
"""


def rating_config(tmp_path: Path, extra: str, records: list[Any] | None = None) -> Path:
    write_json(tmp_path, example_records()[:2] if records is None else records)
    path = tmp_path / "config.toml"
    path.write_text(RATING_CONFIG.replace("{extra}", extra), encoding="utf-8")
    return path


def test_system_label_defaults_to_one_to_five_stars(tmp_path: Path) -> None:
    [task] = load_study(rating_config(tmp_path, "")).tasks
    assert task.system_label == SystemLabel() and task.system_label.scale == (1, 5)
    assert task.system_label.show(3) == "★★★☆☆  3 / 5"
    with pytest.raises(DatasetError, match=r"items\.json, item 1: .*set scale = \[0, 1\]"):
        open_study(tmp_path / "config.toml", database=":memory:")  # a binary label needs its scale


def test_system_label_scale_names_and_probability(tmp_path: Path) -> None:
    config = rating_config(tmp_path, '[tasks.system_label]\nscale = [0, 1]\nnames = ["Not novel", "Novel"]\n'
                                     'probability = "Probability that it is novel"\nheading = "Verdict"')
    label = load_study(config).tasks[0].system_label
    assert (label.show(0), label.show(1), label.heading) == ("Not novel", "Novel", "Verdict")
    assert label.show_probability(0.25) == "Probability that it is novel: 25%"
    assert label.show_probability(1.0) == "Probability that it is novel: 100%"
    assert [i.rating for i in open_study(config, database=":memory:").items["novelty"]] == [0, 1]
    assert SystemLabel(low=0, high=4).show(2) == "2 (on a scale from 0 to 4)"
    assert SystemLabel(low=0, high=2, names=("Low", "Mid", "High")).show(1) == "Mid (1 on a scale from 0 to 2)"


@pytest.mark.parametrize(("extra", "message"), [
    ("scale = [1, 1]", "key 'scale': must be [lowest, highest] label, two integers with lowest < highest"),
    ("scale = [0]", "key 'scale': must be [lowest, highest]"),
    ('scale = ["0", 1]', "key 'scale': must be [lowest, highest]"),
    ('scale = [0, 1]\nnames = ["One"]', "key 'names': needs one name per label from 0 to 1 (2 names), got 1"),
    ("scael = [0, 1]", "key 'scael': is not a known setting (did you mean 'scale'?)"),
    ('heading = ""', "key 'heading': must not be empty"),
])
def test_bad_system_label_names_the_file_and_key(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_study(rating_config(tmp_path, "[tasks.system_label]\n" + extra))
    assert str(err.value).startswith("config.toml: [[tasks]] #1 (id 'novelty') system_label: " + message)


# ----------------------------------------------------------------------------- the graph


def test_dot_escapes_node_text_and_abbreviates_only_the_graph(tmp_path: Path) -> None:
    long = "word " * 60
    item = {**PAPER, "graph": {"entities": [
        {"label": 'A "quoted" \\N title', "type": "title"},
        {"label": "x", "type": "data_set", "detail": long + "\nend"},
        {"label": "y", "type": "other thing"}],
        "relationships": [{"source": 'A "quoted" \\N title', "target": "x"}, {"source": "x", "target": "y"},
                          {"source": "y", "target": "x"}]}}  # a cycle, too
    [got] = load_rating_items(write_lines(tmp_path, [item]))
    dot = dot_graph(got)
    assert '\\"quoted\\" \\\\N title' in dot  # quotes and backslashes escaped: no DOT escape applies
    assert "DATA SET" in dot and "OTHER THING" in dot and "…" in dot and "end" not in dot
    assert graph_heading(got) == "Title → Data sets → Other things"
    [(_, [x])] = [(k, n) for k, n in full_nodes(got) if k == "data_set"]
    assert x.text == (long + "\nend").strip()  # the full list keeps it whole
