"""evalkit.sampling: deterministic plans with the bias controls of the issue."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from scipy import stats

import evalkit.sampling as sampling
from evalkit.config import LoadedStudy, load_study, open_study
from evalkit.datasets import Pools, Review, load_pools
from evalkit.rng import Mulberry32
from evalkit.sampling import PlanError, Question, item_order, plan, questions_by_task
from tests.helpers import ROOT, make_study, random_reviews, write_reviews

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def demo() -> LoadedStudy:
    return open_study(ROOT / "config.toml")


def reviews_by_key(pools) -> dict[str, Review]:
    return {r.key: r for reviews in pools.values() for r in reviews}


def test_same_seed_same_plan_different_seed_different_plan(demo: LoadedStudy) -> None:
    a = plan(demo.study, demo.pools, 42)
    b = plan(demo.study, demo.pools, 42)
    assert a == b
    # a fresh load of everything (another process, after a restart) gives the identical plan
    fresh = open_study(ROOT / "config.toml")
    assert plan(fresh.study, fresh.pools, 42) == a
    # a plain dict of pools (no cached index) gives the identical plan too
    assert plan(demo.study, dict(demo.pools), 42) == a
    plans = {tuple(q.review_ids for q in plan(demo.study, demo.pools, s)) for s in range(50)}
    assert len(plans) == 50


def test_plan_does_not_mutate_pools(demo: LoadedStudy) -> None:
    before = {k: list(v) for k, v in demo.pools.items()}
    for seed in range(20):
        plan(demo.study, demo.pools, seed)
    assert {k: list(v) for k, v in demo.pools.items()} == before


def test_plan_shape_matches_the_config(demo: LoadedStudy) -> None:
    study = demo.study
    for seed in range(100):
        questions = plan(study, demo.pools, seed)
        by_task = questions_by_task(questions)
        assert list(by_task) == ["turing", "pairwise"]
        turing, pairwise = study.tasks[0], study.tasks[1]
        assert [q.index for q in by_task["turing"]] == list(range(5))
        assert sorted(q.slot for q in by_task["turing"]) == list(range(5))
        for q in by_task["turing"]:
            assert q.kind == "triplet" and len(q.texts) == 3 and q.labels == ("A", "B", "C")
            assert sorted(q.sources) == sorted(turing.sources)
            assert q.domain == turing.domains[q.slot]
        for q in by_task["pairwise"]:
            assert q.kind == "pairwise" and len(q.texts) == 2 and q.labels == ("A", "B")
            assert sorted(q.sources) == sorted(pairwise.pairs[q.slot])
            assert q.domain == pairwise.domains[q.slot]


def test_no_review_twice_and_same_domain_within_question(demo: LoadedStudy) -> None:
    index = reviews_by_key(demo.pools)
    for seed in range(300):
        questions = plan(demo.study, demo.pools, seed)
        keys = [k for q in questions for k in q.review_ids]
        assert len(keys) == len(set(keys)), f"seed {seed} repeats a review"
        for q in questions:
            for key, source in zip(q.review_ids, q.sources, strict=True):
                review = index[key]
                assert review.domain == q.domain and review.source == source


def test_length_matching_bounds(demo: LoadedStudy) -> None:
    """Every matched question has an anchor that all other texts are within +-40 % / +-1 sentence of."""
    index = reviews_by_key(demo.pools)
    checked = 0
    for seed in range(300):
        for q in plan(demo.study, demo.pools, seed):
            if not q.matched:
                continue
            rs = [index[k] for k in q.review_ids]

            def fits(anchor: Review, others: list[Review]) -> bool:
                return all(abs(len(o.text) - len(anchor.text)) <= 0.4 * len(anchor.text) + 1e-9
                           and abs(o.n_sentences - anchor.n_sentences) <= 1 for o in others)

            assert any(fits(a, [o for o in rs if o is not a]) for a in rs), (seed, q)
            checked += 1
    assert checked > 2500


def test_display_texts_are_word_boundary_prefixes_normalised_to_the_shortest(demo: LoadedStudy) -> None:
    index = reviews_by_key(demo.pools)
    for seed in range(200):
        for q in plan(demo.study, demo.pools, seed):
            originals = [index[k].text for k in q.review_ids]
            shortest = min(len(t) for t in originals)
            for original, shown in zip(originals, q.texts, strict=True):
                assert shown.endswith("...")
                body = shown[:-3]
                assert original.startswith(body)
                assert int(0.85 * shortest) // 2 <= len(body) <= shortest


def test_how_a_text_is_cut_does_not_depend_on_its_source(demo: LoadedStudy) -> None:
    """A complete sentence before "..." must not be more likely for one source than another (it was, when the
    cut preferred sentence ends in range: real 10 %, cera 27 %); every cut text now ends inside a sentence."""
    index = reviews_by_key(demo.pools)
    complete, shown = Counter(), Counter()
    for seed in range(150):
        for q in plan(demo.study, demo.pools, seed):
            for key, source, text in zip(q.review_ids, q.sources, q.texts, strict=True):
                if text.endswith("..."):
                    shown[source] += 1
                    complete[source] += index[key].text[len(text) - 3] in ".!?"
    assert set(shown) == {"real", "cera", "heuristic"} and min(shown.values()) > 500
    assert complete == Counter(), {s: complete[s] / shown[s] for s in shown}


def test_position_balance_and_a_biased_shuffle_would_fail(demo: LoadedStudy, monkeypatch) -> None:
    """Each source lands in each position about equally often (chi-square, 9 cells)."""

    def balance_p_value() -> float:
        counts = Counter()
        for seed in range(2000):
            for q in plan(demo.study, demo.pools, seed):
                if q.kind == "triplet":
                    for pos, source in enumerate(q.sources):
                        counts[(source, pos)] += 1
        observed = [counts[(s, p)] for s in ("real", "cera", "heuristic") for p in range(3)]
        total = sum(observed)
        return stats.chisquare(observed, [total / 9] * 9).pvalue

    assert balance_p_value() > 0.001

    def naive_shuffle(items, rng):  # the classic bias: swap each item with any position
        out = list(items)
        for i in range(len(out)):
            j = rng.randbelow(len(out))
            out[i], out[j] = out[j], out[i]
        return out

    monkeypatch.setattr(sampling, "shuffle", naive_shuffle)
    assert balance_p_value() < 1e-6

    def sattolo(items, rng):  # off by one: j in 0..i-1, never leaves an item in place
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = rng.randbelow(i)
            out[i], out[j] = out[j], out[i]
        return out

    monkeypatch.setattr(sampling, "shuffle", sattolo)
    assert balance_p_value() < 1e-6


def test_pairwise_left_right_balance(demo: LoadedStudy) -> None:
    left = Counter()
    n = 0
    for seed in range(2000):
        for q in plan(demo.study, demo.pools, seed):
            if q.kind == "pairwise" and set(q.sources) == {"cera", "heuristic"}:
                left[q.sources[0]] += 1
                n += 1
    assert stats.binomtest(left["cera"], n, 0.5).pvalue > 0.001


def test_question_order_is_shuffled_unless_fixed(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    study = load_study(cfg)
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    orders = {tuple(q.slot for q in plan(study, pools, s) if q.task == "turing") for s in range(60)}
    assert len(orders) > 10
    cfg.write_text(cfg.read_text().replace('target = "real"', 'target = "real"\norder = "fixed"'))
    study = load_study(cfg)
    for s in range(20):
        assert [q.slot for q in plan(study, pools, s) if q.task == "turing"] == [0, 1, 2, 3]


def test_shared_selection_same_items_own_order_and_positions(tmp_path: Path) -> None:
    cfg = make_study(tmp_path)
    cfg.write_text(cfg.read_text().replace('target = "real"', 'target = "real"\nselection = "shared"'))
    study = load_study(cfg)
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    shared_items = None
    layouts = set()
    for seed in range(40):
        questions = plan(study, pools, seed)
        turing = [q for q in questions if q.task == "turing"]
        items = {q.slot: {k: t for k, t in zip(q.review_ids, q.texts, strict=True)} for q in turing}
        if shared_items is None:
            shared_items = items
        assert items == shared_items, "every evaluator must see the same reviews with the same texts"
        layouts.add(tuple((q.slot, q.sources) for q in turing))
        shared_keys = {k for q in turing for k in q.review_ids}
        other = {k for q in questions if q.task != "turing" for k in q.review_ids}
        assert not shared_keys & other, "per-evaluator tasks must avoid the shared reviews"
    assert len(layouts) > 20, "order and positions must still differ between evaluators"
    # another study seed gives other shared items
    cfg.write_text(cfg.read_text().replace("seed = 99", "seed = 100"))
    study2 = load_study(cfg)
    other_items = {q.slot: set(q.review_ids) for q in plan(study2, pools, 0) if q.task == "turing"}
    assert other_items != {s: set(v) for s, v in shared_items.items()}


def _pools(tmp_path: Path, spec: dict[tuple[str, str], list[list[str]]]) -> Pools:
    for (source, domain), reviews in spec.items():
        write_reviews(tmp_path / "datasets" / f"{source}-{domain}s.xml", reviews,
                      rids=[f"{source}{i}" for i in range(len(reviews))])
    return load_pools(tmp_path / "datasets", min_chars=0, max_chars=10_000)


def test_unmatched_question_takes_the_closest_review(tmp_path: Path) -> None:
    (tmp_path / "datasets").mkdir()
    short = [["Short one here.", f"Tiny review {i}."] for i in range(3)]   # ~30 chars
    longs = [["word " * (40 + 10 * i), "More words here."] for i in range(5)]  # 200+ chars
    spec = {("real", "alpha"): short, ("gen", "alpha"): longs, ("base", "alpha"): longs}
    spec.update({(s, "beta"): random_reviews(10, 2) for s in ("real", "gen", "base")})
    pools = _pools(tmp_path, spec)
    cfg = make_study(tmp_path / "s", triplet_domains=["alpha"])
    study = load_study(cfg)
    questions = plan(study, pools, 1)
    q = questions[0]
    assert q.task == "turing" and not q.matched
    chosen = {s: k for s, k in zip(q.sources, q.review_ids, strict=True)}
    # the anchor is the most constrained source (real, 3 reviews); gen gets its shortest review
    assert chosen["gen"] == "gen/alpha/gen0"
    assert chosen["base"] == "base/alpha/base0"


def test_exhausted_pool_raises_plan_error(tmp_path: Path) -> None:
    (tmp_path / "datasets").mkdir()
    pools = _pools(tmp_path, {(s, d): random_reviews(2, 1) for s in ("real", "gen", "base")
                              for d in ("alpha", "beta")})
    study = load_study(make_study(tmp_path / "s"))
    with pytest.raises(PlanError, match="no unused eligible review left"):
        plan(study, pools, 3)


def test_plan_is_cheap_to_recompute_and_independent_of_unrelated_pools(demo: LoadedStudy) -> None:
    """Adding a pool the study does not use changes nothing."""
    pools = Pools(demo.pools)
    pools[("other", "laptop")] = [Review(id="x", source="other", domain="laptop", text="x" * 200, n_sentences=2)]
    assert plan(demo.study, pools, 9) == plan(demo.study, demo.pools, 9)


def test_plan_golden_file_guards_the_draw_order(tmp_path: Path) -> None:
    """Plans are recomputed, never stored: a code change that alters the draw order would silently
    change the questions of every session in progress. This fixture pins it."""
    study = load_study(make_study(tmp_path))
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    got = [q.as_dict() for seed in (0, 7, 4294967295) for q in plan(study, pools, seed)]
    golden = FIXTURES / "plan_golden.json"
    if not golden.exists():  # first run writes it; commit the file
        golden.write_text(json.dumps(got, indent=1) + "\n")
    assert got == json.loads(golden.read_text())


def test_question_public_form_has_no_sources(demo: LoadedStudy) -> None:
    q: Question = plan(demo.study, demo.pools, 5)[0]
    public = json.dumps(q.as_dict(with_sources=False))
    for source in ("real", "cera", "heuristic"):
        assert f'"{source}"' not in public
    assert all(k not in public for k in q.review_ids)
    assert q.source_of("A") == q.sources[0]


def test_item_order_is_seeded_and_complete(demo: LoadedStudy) -> None:
    task = demo.study.tasks[2]
    items = demo.items["novelty"]
    a = item_order(task, items, 1)
    assert a == item_order(task, items, 1)
    assert sorted(i.id for i in a) == sorted(i.id for i in items)
    firsts = Counter(item_order(task, items, s)[0].id for s in range(800))
    assert len(firsts) == len(items)
    assert max(firsts.values()) < 2 * 800 / len(items)


def test_seed_type_is_checked(demo: LoadedStudy) -> None:
    with pytest.raises(TypeError):
        plan(demo.study, demo.pools, "42")  # type: ignore[arg-type]
    assert math.isfinite(Mulberry32(0).random())
