"""evalkit.datasets: SemEval XML and rating items, on real data and on broken input."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evalkit.datasets import (
    DatasetError,
    PoolIndex,
    Pools,
    count_reviews,
    dataset_files,
    load_pools,
    load_reviews,
    parse_dataset_name,
)
from evalkit.rating_items import load_rating_items
from tests.helpers import PAPER, ROOT, SEMEVAL, random_reviews, write_reviews

LAPTOPS = SEMEVAL / "ABSA16_Laptops_Train_SB1_v2.xml"
RESTAURANTS = SEMEVAL / "ABSA16_Restaurants_Train_SB1_v2.xml"


def reference_eligible(path: Path, max_s=4, min_s=2, min_c=120, max_c=600) -> list[tuple[str, str, int]]:
    """The rules of the issue, written independently with the standard library's ElementTree."""
    out = []
    for review in ET.parse(path).getroot().findall("Review"):
        texts = [(t.text or "").strip() for t in review.findall("./sentences/sentence/text")]
        texts = [t for t in texts if t][:max_s]
        joined = " ".join(texts)
        if min_s <= len(texts) <= max_s and min_c <= len(joined) <= max_c:
            out.append((review.get("rid"), joined, len(texts)))
    return out


#: The release's own files (../shared/data/semeval2016/README.md): sha256, reviews, eligible under the default filters.
SEMEVAL_FILES = [
    (LAPTOPS, "laptop", "4c3cfd3cd0427cda398e52b227747ab758f8415d53fa7657be6da5271e4d33ea", 450, 358),
    (RESTAURANTS, "restaurant", "94dbfd15d8cc344d603d101aea2a4006cc3b66a5f9f45a93fa2ee365a76fa015", 350, 318),
]


@pytest.mark.shared_data
@pytest.mark.parametrize(("path", "domain", "sha256", "n_reviews", "n_eligible"), SEMEVAL_FILES,
                         ids=["laptops", "restaurants"])
def test_real_semeval_files_load_with_default_filters(path: Path, domain: str, sha256: str, n_reviews: int,
                                                      n_eligible: int) -> None:
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256, f"{path} is not the release's copy"
    assert count_reviews(path) == n_reviews
    reviews = load_reviews(path, "real", domain)
    expected = reference_eligible(path)
    assert len(reviews) == len(expected) == n_eligible
    assert [(r.id, r.text, r.n_sentences) for r in reviews] == expected
    for r in reviews:
        assert r.source == "real" and r.domain == domain
        assert 2 <= r.n_sentences <= 4 and 120 <= len(r.text) <= 600
        assert r.text == r.text.strip()
    assert len({r.id for r in reviews}) == len(reviews)


@pytest.mark.shared_data
def test_real_semeval_other_filters_agree_with_reference() -> None:
    got = load_reviews(LAPTOPS, "real", "laptop", max_sentences=3, min_sentences=1, min_chars=10, max_chars=200)
    ref = reference_eligible(LAPTOPS, 3, 1, 10, 200)
    assert [(r.id, r.text, r.n_sentences) for r in got] == ref


def test_sentences_are_stripped_empty_dropped_and_cut(tmp_path: Path) -> None:
    s = "A sentence that is long enough to count for something here."  # 59 chars
    path = write_reviews(tmp_path / "x-ys.xml", [["  " + s + "  ", "", "   ", s, s, s, s, s]])
    [r] = load_reviews(path, "x", "y", min_chars=0)
    assert r.n_sentences == 4
    assert r.text == " ".join([s] * 4)
    [r] = load_reviews(path, "x", "y", max_sentences=2, min_chars=0)
    assert r.text == f"{s} {s}" and r.n_sentences == 2


def test_char_bounds_are_inclusive_after_the_cut(tmp_path: Path) -> None:
    def review(total: int) -> list[str]:
        first = "x" * 50
        return [first, "y" * (total - 51)]  # joined with one space: exactly `total` characters

    path = write_reviews(tmp_path / "x-ys.xml", [review(119), review(120), review(600), review(601)],
                         rids=["119", "120", "600", "601"])
    assert [r.id for r in load_reviews(path, "x", "y")] == ["120", "600"]
    assert [len(r.text) for r in load_reviews(path, "x", "y")] == [120, 600]


def test_sentence_bounds(tmp_path: Path) -> None:
    s = "Forty characters of review text, right?!"
    path = write_reviews(tmp_path / "x-ys.xml", [[s], [s, s], [s] * 4, [s] * 7], rids=["1", "2", "4", "7"])
    got = {r.id: r.n_sentences for r in load_reviews(path, "x", "y", min_chars=0)}
    assert got == {"2": 2, "4": 4, "7": 4}  # 7 sentences are cut to 4 and then eligible
    got = {r.id for r in load_reviews(path, "x", "y", min_sentences=3, min_chars=0)}
    assert got == {"4", "7"}


@pytest.mark.parametrize(("content", "needle"), [
    (b"this is not xml at all", "line 1"),
    (b'<?xml version="1.0"?>\n<Reviews>\n  <Review rid="1"><sentences><sentence id="1:0"><text>Hi', "line 3"),
    (b'<?xml version="1.0"?>\n<Foo><Review rid="1"/></Foo>', "root element is <Foo>"),
    (b"", "file is empty"),
    (b"   \n\n", "file is empty"),
    ('<?xml version="1.0" encoding="UTF-8"?>\n<Reviews>\n<Review rid="1"><sentences><sentence id="1">'
     '<text>caf\xe9 ok</text></sentence></sentences></Review></Reviews>'.encode("latin-1"), "line 3"),
    (b'<Reviews>\n<Review><sentences/></Review></Reviews>', "no rid"),
    (b'<Reviews>\n<Review rid="7"/>\n<Review rid="7"/></Reviews>', "rid '7' is used by more than one review"),
])
def test_broken_files_raise_dataset_error_naming_file_and_line(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "real-laptops.xml"
    path.write_bytes(content)
    with pytest.raises(DatasetError) as err:
        load_reviews(path, "real", "laptop")
    message = str(err.value)
    assert str(path) in message
    assert needle in message


def test_bad_encoding_message_says_so(tmp_path: Path) -> None:
    path = tmp_path / "real-laptops.xml"
    path.write_bytes('<?xml version="1.0" encoding="UTF-8"?>\n<Reviews><Review rid="1">\xff\xfe</Review>'
                     '</Reviews>'.encode("latin-1"))
    with pytest.raises(DatasetError, match=r"(?i)utf-8|encoding|not proper"):
        load_reviews(path, "real", "laptop")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="file not found"):
        load_reviews(tmp_path / "real-laptops.xml", "real", "laptop")


def test_xml_entities_are_not_expanded(tmp_path: Path) -> None:
    """An external entity must not read local files (XXE)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    path = tmp_path / "real-laptops.xml"
    path.write_text(f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
                    '<Reviews><Review rid="1"><sentences><sentence id="1:0"><text>&x; and more words here</text>'
                    '</sentence><sentence id="1:1"><text>second sentence</text></sentence></sentences></Review>'
                    '</Reviews>')
    with pytest.raises(DatasetError) as err:
        load_reviews(path, "real", "laptop", min_chars=0)
    assert "TOP SECRET" not in str(err.value)
    assert str(path) in str(err.value) and "entities" in str(err.value)


@pytest.mark.parametrize("doc", [
    '<!DOCTYPE Reviews [<!ENTITY brand "Lenovo">]><Reviews><Review rid="1"><sentences>'
    '<sentence id="1:0"><text>My &brand; laptop is great and fast.</text></sentence></sentences></Review></Reviews>',
    '<!DOCTYPE Reviews [<!ENTITY unused "x">]><Reviews><Review rid="1"><sentences>'
    '<sentence id="1:0"><text>No entity used here.</text></sentence></sentences></Review></Reviews>',
], ids=["used", "declared-only"])
def test_declared_entities_are_refused_not_silently_truncated(tmp_path: Path, doc: str) -> None:
    path = tmp_path / "real-laptops.xml"
    path.write_text('<?xml version="1.0"?>' + doc)
    with pytest.raises(DatasetError, match=r"real-laptops\.xml, line \d+: the file uses XML entities \((brand|unus)"):
        load_reviews(path, "real", "laptop", min_chars=0, min_sentences=1)


def test_predefined_and_character_references_still_load(tmp_path: Path) -> None:
    path = tmp_path / "real-laptops.xml"
    path.write_text('<Reviews><Review rid="1"><sentences><sentence id="1:0"><text>Fish &amp; chips at '
                    '&#233;clair &lt;3.</text></sentence></sentences></Review></Reviews>')
    [review] = load_reviews(path, "real", "laptop", min_chars=0, min_sentences=1)
    assert review.text == "Fish & chips at éclair <3."


@pytest.mark.parametrize("kwargs", [{"min_chars": 700}, {"min_sentences": 5}, {"max_sentences": 0},
                                    {"min_chars": -1}, {"max_chars": 2.5}])
def test_bad_filters(kwargs: dict, tmp_path: Path) -> None:
    path = write_reviews(tmp_path / "real-laptops.xml", random_reviews(3, seed=1))
    with pytest.raises(ValueError):
        load_reviews(path, "real", "laptop", **kwargs)


@pytest.mark.parametrize(("name", "expected"), [
    ("real-laptops.xml", ("real", "laptop")),
    ("cera-restaurants.xml", ("cera", "restaurant")),
    ("gpt-4-hotels.xml", ("gpt-4", "hotel")),
    ("llama_3.1-news.xml", ("llama_3.1", "new")),
])
def test_dataset_names(name: str, expected: tuple[str, str]) -> None:
    assert parse_dataset_name(name) == expected


@pytest.mark.parametrize("name", ["laptops.xml", "real-laptop.xml", "real_laptops.xml", "-laptops.xml",
                                  "real-s.xml", "real laptops.xml"])
def test_bad_dataset_names_are_reported(name: str) -> None:
    with pytest.raises(DatasetError, match="does not follow the convention"):
        parse_dataset_name(name)


def test_load_pools_reports_badly_named_file(tmp_path: Path) -> None:
    write_reviews(tmp_path / "real-laptops.xml", random_reviews(3, 1))
    write_reviews(tmp_path / "laptops_extra.xml", random_reviews(3, 1))
    (tmp_path / "notes.txt").write_text("ignored: not xml")
    with pytest.raises(DatasetError, match=r"laptops_extra\.xml"):
        load_pools(tmp_path)


def test_load_pools_keys_and_filters(tmp_path: Path) -> None:
    write_reviews(tmp_path / "real-laptops.xml", random_reviews(20, 1))
    write_reviews(tmp_path / "gen-hotels.xml", random_reviews(20, 2))
    (tmp_path / "items.jsonl").write_text("")  # other files are not review files
    pools = load_pools(tmp_path, min_chars=0)
    assert isinstance(pools, Pools) and set(pools) == {("real", "laptop"), ("gen", "hotel")}
    assert all(r.source == "real" and r.domain == "laptop" for r in pools[("real", "laptop")])
    assert len(pools[("real", "laptop")]) == len(load_reviews(tmp_path / "real-laptops.xml", "real", "laptop",
                                                              min_chars=0))
    assert pools.sources == ["gen", "real"] and pools.domains == ["hotel", "laptop"]
    strict = load_pools(tmp_path, min_chars=0, max_sentences=2, min_sentences=2)
    assert all(r.n_sentences == 2 for r in strict[("real", "laptop")])
    with pytest.raises(TypeError, match="min_char"):
        load_pools(tmp_path, min_char=3)
    with pytest.raises(DatasetError, match="datasets folder not found"):
        load_pools(tmp_path / "nope")


@pytest.mark.shared_data
def test_load_pools_of_the_real_semeval_files(tmp_path: Path) -> None:
    (tmp_path / "real-laptops.xml").symlink_to(LAPTOPS)
    (tmp_path / "real-restaurants.xml").symlink_to(RESTAURANTS)
    pools = load_pools(tmp_path)
    assert len(pools[("real", "laptop")]) == len(reference_eligible(LAPTOPS))
    assert len(pools[("real", "restaurant")]) == len(reference_eligible(RESTAURANTS)) == 318


def test_demo_datasets_have_30_eligible_reviews_per_file() -> None:
    files = dataset_files(ROOT / "datasets")
    assert set(files) == {(s, d) for s in ("real", "cera", "heuristic") for d in ("laptop", "restaurant", "hotel")}
    pools = load_pools(ROOT / "datasets")
    for key, reviews in pools.items():
        assert len(reviews) >= 30, key
    texts = [r.text for reviews in pools.values() for r in reviews]
    assert len(set(texts)) == len(texts), "demo reviews must not repeat"


@pytest.mark.shared_data
def test_pool_index_window_matches_brute_force() -> None:
    reviews = load_reviews(LAPTOPS, "real", "laptop")
    index = PoolIndex.build(reviews)
    for lo, hi, s_lo, s_hi in [(150, 250, 2, 3), (0, 10_000, 0, 9), (300, 301, 4, 4), (599, 100, 2, 4)]:
        got = sorted(positions[i] for positions, start, stop in index.window(lo, hi, s_lo, s_hi)
                     for i in range(start, stop))
        want = [i for i, r in enumerate(reviews) if lo <= len(r.text) <= hi and s_lo <= r.n_sentences <= s_hi]
        assert got == want


# ----------------------------------------------------------------------------- rating items


def test_demo_papers_are_complete() -> None:
    items = load_rating_items(ROOT / "datasets" / "novelty-papers.jsonl")
    assert len(items) >= 8
    for item in items:
        assert 8 <= len(item.nodes) <= 15
        assert item.summary and item.supporting_evidence and item.contradictory_evidence and item.key_comparisons
        assert 1 <= item.rating <= 5
        kinds = {n.kind for n in item.nodes}
        assert {"title", "claim", "method", "experiment"} <= kinds
        ids = {n.id for n in item.nodes}
        assert all(a in ids and b in ids for a, b in item.edges)


def _jsonl(tmp_path: Path, *objs: object, raw: str | None = None) -> Path:
    path = tmp_path / "items.jsonl"
    lines = [json.dumps(o) for o in objs]
    if raw is not None:
        lines.append(raw)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("bad", "needle"), [
    ({k: v for k, v in PAPER.items() if k != "summary"}, "missing required field(s): summary"),
    ({**PAPER, "rating": 6}, "'rating' must be an integer from 1 to 5"),
    ({**PAPER, "rating": "4"}, "'rating' must be an integer"),
    ({**PAPER, "title": ""}, "'title' must be a non-empty string"),
    ({**PAPER, "supporting_evidence": [1, 2]}, "supporting_evidence"),
    ({**PAPER, "graph": {"nodes": [{"id": "t", "label": "T"}], "edges": [["t", "zz"]]}}, "unknown node 'zz'"),
    ({**PAPER, "graph": {"nodes": [{"id": "t", "label": "T"}, {"id": "t", "label": "U"}], "edges": []}},
     "repeats node id"),
    ({**PAPER, "graph": [1]}, "'graph' must be an object"),
    ([1, 2], "expected a JSON object"),
])
def test_bad_rating_item_names_file_and_line(tmp_path: Path, bad: object, needle: str) -> None:
    path = _jsonl(tmp_path, {**PAPER, "id": "a"}, {**PAPER, "id": "b"}, bad)
    with pytest.raises(DatasetError) as err:
        load_rating_items(path)
    assert f"{path}, line 3" in str(err.value)
    assert needle in str(err.value)


def test_rating_items_invalid_json_duplicate_ids_and_empty(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, PAPER, raw='{"id": "x", "title": ')
    with pytest.raises(DatasetError, match=r"line 2: not valid JSON"):
        load_rating_items(path)
    path = _jsonl(tmp_path, PAPER, PAPER)
    with pytest.raises(DatasetError, match=r"line 2: id 'p1' was already used on line 1"):
        load_rating_items(path)
    path.write_text("\n\n")
    with pytest.raises(DatasetError, match="no rating items"):
        load_rating_items(path)
    path.write_bytes(json.dumps(PAPER).encode() + b"\n\xff\xfe\n")
    with pytest.raises(DatasetError, match="line 2: not valid UTF-8"):
        load_rating_items(path)
    with pytest.raises(DatasetError, match="not found"):
        load_rating_items(tmp_path / "missing.jsonl")


def test_rating_items_blank_lines_and_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("\n" + json.dumps({**PAPER, "venue": "X"}) + "\n\n" + json.dumps({**PAPER, "id": "p2"}) + "\n")
    items = load_rating_items(path)
    assert [i.id for i in items] == ["p1", "p2"]
    assert items[0].extra == {"venue": "X"}
    assert items[0].edges == (("t", "c"),)
