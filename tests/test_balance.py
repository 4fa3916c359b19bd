"""Balanced positions and pairs across evaluators (issue 13, section 4): the Williams design, the rotation keyed by
arrival in the items kinds' and (opt-in) the pool kinds' plans, the session's arrival number, the audit."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import chisquare

from evalkit.balance import arrival_of, audit, audit_lines, extras, extras_before, row_for, williams
from evalkit.config import ConfigError, load_study, open_study
from evalkit.datasets import load_pools
from evalkit.rng import Mulberry32
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.tasks.itemsource import balanced
from tests.helpers import CONFIG, ROOT, make_study
from tests.item_study import make_items_study, task_block

FIXTURES = Path(__file__).parent / "fixtures"
PAIRS = [("gpt4", "t5"), ("gpt4", "human"), ("t5", "human")]


# ----------------------------------------------------------------------------- the design


@pytest.mark.parametrize("n", range(1, 9))
def test_williams_rows_form_a_latin_square_balanced_for_carryover(n: int) -> None:
    rows = williams(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    assert all(sorted(row) == list(range(n)) for row in rows)  # each row an order of all n
    per_position = len(rows) // n
    for p in range(n):  # every treatment in every position equally often (once; twice for odd n)
        assert Counter(row[p] for row in rows) == {t: per_position for t in range(n)}
    follows = Counter((row[p], row[p + 1]) for row in rows for p in range(n - 1))
    # every treatment immediately followed by every other equally often: once for even n, twice for odd n
    assert follows == {(a, b): per_position for a in range(n) for b in range(n) if a != b}


def test_williams_rejects_bad_sizes_and_row_for_walks_the_rows() -> None:
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError):
            williams(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        row_for(-1, 0, 3)
    assert williams(4)[0] == [0, 1, 3, 2]
    for n in (2, 3, 4):
        rows = williams(n)
        assert [row_for(a, 1, n) for a in range(2 * len(rows))] == [rows[(a + 1) % len(rows)]
                                                                   for a in range(2 * len(rows))]
    assert williams(3) is not williams(3) and williams(3) == williams(3)  # fresh lists: callers may change them


def test_extras_cycle_through_the_combinations_and_are_counted_before() -> None:
    for c in range(1, 7):
        for rest in range(c):
            dealt: Counter[int] = Counter()
            for a in range(25):
                got = extras(a, rest, c)
                assert len(got) == len(set(got)) == rest  # never one combination twice in an evaluator's extras
                assert all(extras_before(a, rest, c, j) == dealt[j] for j in range(c))
                dealt.update(got)
            assert max(dealt.values(), default=0) - min(dealt.values(), default=0) <= 1  # within one, always


def test_arrival_of_reads_only_a_non_negative_integer() -> None:
    assert arrival_of({"arrival": 3, "invited": True}) == 3
    assert arrival_of({"arrival": 0}) == 0
    for meta in (None, {}, {"arrival": -1}, {"arrival": True}, {"arrival": "2"}, {"arrival": 1.0}):
        assert arrival_of(meta) is None


# ----------------------------------------------------------------------------- items kinds


def test_balanced_pairs_over_evaluators_keep_each_evaluators_rounds_and_alternation() -> None:
    for questions in range(1, 8):
        pair_counts: Counter[tuple[str, ...]] = Counter()
        orientations: Counter[tuple[str, ...]] = Counter()
        evaluators = 6  # a multiple of 3 pairs and of 2 sides: every pair and side exactly equally often
        for arrival in range(evaluators):
            shown = balanced(PAIRS, questions, Mulberry32(arrival * 7919), arrival)
            assert len(shown) == questions
            own = Counter(tuple(sorted(s)) for s in shown)
            assert max(own.values()) - min(own[tuple(sorted(p))] for p in PAIRS) <= 1  # rounds within the evaluator
            for pair in PAIRS:  # each side of a pair within one, inside one evaluator too
                mine = [s for s in shown if set(s) == set(pair)]
                assert abs(sum(s[0] == pair[0] for s in mine) - sum(s[0] == pair[1] for s in mine)) <= 1
            pair_counts.update(tuple(sorted(s)) for s in shown)
            orientations.update(shown)
        assert len(set(pair_counts.values())) == 1, (questions, pair_counts)
        assert len(set(orientations.values())) == 1 and len(orientations) == 6, (questions, orientations)


def test_balanced_without_arrival_is_todays_plan() -> None:
    """arrival=None draws exactly as before (same rng calls), so sessions without an arrival keep their plan."""
    a = balanced(PAIRS, 5, Mulberry32(3))
    assert a == balanced(PAIRS, 5, Mulberry32(3), None)
    with_arrival = [balanced(PAIRS, 5, Mulberry32(3), k) for k in range(4)]
    assert any(p != a for p in with_arrival)


def plans(config: Path, arrivals: range, *, seeds: range | None = None, arrival: bool = True):
    loaded = open_study(config)
    seeds = seeds or range(1000, 1000 + len(arrivals))
    return [plan(loaded.study, loaded.pools, seed, loaded.item_sets, a if arrival else None)
            for seed, a in zip(seeds, arrivals, strict=True)]


def position_counts(all_plans, task: str) -> Counter[tuple[int, str]]:
    return Counter((p, s) for questions in all_plans for q in questions if q.task == task
                   for p, s in enumerate(q.sources))


@pytest.mark.parametrize(("block", "task", "width"), [
    (task_block("compare", questions=4), "help", 2),
    (task_block("rank", questions=4), "best", 3),
    (task_block("score", per_question=3, questions=2), "quality", 3),
    (task_block("score", per_question=2, questions=5), "quality", 2),
], ids=["compare", "rank", "score-3-outputs", "score-2-outputs"])
def test_every_system_is_in_every_position_equally_often_over_a_design_cycle(
        tmp_path: Path, block: str, task: str, width: int) -> None:
    config = make_items_study(tmp_path, block, n=24)
    all_plans = plans(config, range(6))  # 6 = the rows of the design for 3 outputs, 3 pairs x 2 sides
    counts = position_counts(all_plans, task)
    assert {p for p, _ in counts} == set(range(width)) and {s for _, s in counts} == {"gpt4", "t5", "human"}
    assert len(set(counts.values())) == 1, counts  # exactly uniform
    if width == 2:
        pairs = Counter(tuple(sorted(q.sources)) for qs in all_plans for q in qs if q.task == task)
        assert len(pairs) == 3 and len(set(pairs.values())) == 1, pairs
    if width == 3:  # the rows are the Williams design's: each order of texts comes equally often
        orders = Counter(q.sources for qs in all_plans for q in qs if q.task == task)
        assert len(orders) == 6 and len(set(orders.values())) == 1, orders


def test_rotation_is_tighter_than_independent_shuffling(tmp_path: Path) -> None:
    """Over 102 simulated evaluators (same seeds), chi-square of each system's position counts against uniform:
    the rotation's statistic is smaller than arrival=None's shuffle, and its counts are exactly uniform."""
    config = make_items_study(tmp_path, task_block("rank", questions=4), task_block("compare", questions=4), n=24)
    evaluators = range(102)  # a multiple of 6 (the rows for three outputs) and of 2 (pairs)
    rotated, shuffled = plans(config, evaluators), plans(config, evaluators, arrival=False)
    for task, width in (("best", 3), ("help", 2)):
        rot, shu = position_counts(rotated, task), position_counts(shuffled, task)

        def stat(counts: Counter[tuple[int, str]]) -> float:
            return sum(chisquare([counts[(p, s)] for p in range(width)]).statistic  # noqa: B023
                       for s in ("gpt4", "t5", "human"))

        assert stat(rot) < stat(shu), (task, rot, shu)
        assert stat(rot) == 0 and len(set(rot.values())) == 1
        assert max(shu.values()) - min(shu.values()) > 1  # the shuffle is only uniform on average
    # the audit sees the same
    [best, help_] = sorted(audit(rotated), key=lambda b: b.task)
    assert best.position_test()[0] == 0 and best.position_test()[2] == 1.0
    assert help_.pair_test()[0] == 0 and set(help_.pairs.values()) == {102 * 4 // 3}


def test_items_plans_without_arrival_or_with_positions_shuffle_are_unchanged(tmp_path: Path) -> None:
    blocks = (task_block("compare", questions=4), task_block("rank", questions=4))
    config = make_items_study(tmp_path / "a", *blocks, n=24)
    loaded = open_study(config)
    before = plan(loaded.study, loaded.pools, 5, loaded.item_sets)
    assert plan(loaded.study, loaded.pools, 5, loaded.item_sets, None) == before
    assert any(plan(loaded.study, loaded.pools, 5, loaded.item_sets, a) != before for a in range(3))
    off = open_study(make_items_study(tmp_path / "b", *blocks, n=24, extra='positions = "shuffle"\n'))
    for a in range(3):  # the study turned the rotation off: the arrival changes nothing
        assert [q.as_dict() for q in plan(off.study, off.pools, 5, off.item_sets, a)] == [q.as_dict() for q in before]
    with pytest.raises(ValueError, match="arrival"):
        plan(loaded.study, loaded.pools, 5, loaded.item_sets, -1)


# ----------------------------------------------------------------------------- pool kinds (opt-in)


def pool_study(tmp: Path, positions: str | None) -> Path:
    text = CONFIG.replace("{triplet_domains}", json.dumps(["alpha", "alpha", "beta", "beta"]))
    if positions is not None:
        text = text.replace("seed = 99\n", f'seed = 99\npositions = "{positions}"\n')
    return make_study(tmp, config=text)


def test_pool_kinds_keep_their_shuffle_unless_the_study_asks_for_rotation(tmp_path: Path) -> None:
    default = load_study(pool_study(tmp_path / "d", None))
    pools = load_pools(default.datasets, **default.pool.as_kwargs())
    for seed in (0, 7):  # the default: an arrival changes nothing in the review pools' plans (the CERA demo)
        assert plan(default, pools, seed, arrival=seed + 3) == plan(default, pools, seed)
    rotation = load_study(pool_study(tmp_path / "r", "rotation"))
    pools = load_pools(rotation.datasets, **rotation.pool.as_kwargs())
    rotated = [plan(rotation, pools, 1000 + a, arrival=a) for a in range(6)]
    shuffled = [plan(rotation, pools, 1000 + a) for a in range(6)]
    triplet = position_counts(rotated, "turing")  # 4 triplets x 6 evaluators = 24 = 4 cycles of the 6 rows
    assert len(triplet) == 9 and set(triplet.values()) == {24 * 3 // 9}
    pairs = position_counts(rotated, "pairs")  # each pair type once per evaluator: its sides alternate
    assert Counter(q.sources for qs in rotated for q in qs if q.task == "pairs") == {
        pair: 3 for p in (("gen", "base"), ("gen", "real"), ("base", "real")) for pair in (p, p[::-1])}
    assert sum(pairs.values()) == 6 * 3 * 2
    for r, s in zip(rotated, shuffled, strict=True):  # only the positions differ: same texts, same reviews
        assert [(q.task, q.index, sorted(q.review_ids), sorted(q.texts)) for q in r] == \
            [(q.task, q.index, sorted(q.review_ids), sorted(q.texts)) for q in s]


def test_arrival_none_leaves_the_plan_golden_file_unchanged(tmp_path: Path) -> None:
    study = load_study(make_study(tmp_path))
    pools = load_pools(study.datasets, **study.pool.as_kwargs())
    got = [q.as_dict() for seed in (0, 7, 4294967295) for q in plan(study, pools, seed, arrival=None)]
    assert got == json.loads((FIXTURES / "plan_golden.json").read_text())


def test_positions_key_is_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[study\]: key 'positions': must be one of 'rotation', 'shuffle'"):
        load_study(pool_study(tmp_path, "latin"))


# ----------------------------------------------------------------------------- arrival numbers in the store


def test_sessions_get_arrival_numbers_in_creation_order(db_url: str) -> None:
    with open_store(db_url) as store:
        first = store.create_session(study_version="v1", evaluator_name="a", meta={"prolific_pid": "p1"})
        second = store.create_session(study_version="v1", evaluator_name="b")
        store.set_session_status(second.session_id, "trashed", actor="test")  # a trashed session still counts
        third = store.create_session(study_version="v2", evaluator_name="c", meta={"arrival": 99})  # ours wins
        assert [s.meta.get("arrival") for s in (first, second, third)] == [0, 1, 2]
        assert first.meta == {"prolific_pid": "p1", "arrival": 0}
        stored = {s.session_id: s.meta for s in store.sessions()}
        assert stored[first.session_id] == {"prolific_pid": "p1", "arrival": 0}
        assert stored[third.session_id] == {"arrival": 2}
        assert arrival_of(store.get_session(second.session_id).meta) == 1


def test_sessions_started_at_once_get_distinct_consecutive_arrivals(db_url: str) -> None:
    """Sixteen threads, each with its own store, start a session at the same instant: the count and the insert
    take turns (PostgreSQL: an advisory lock to the commit), so no two share an arrival (the queue's deal and the
    rotation rely on it)."""
    import threading

    barrier = threading.Barrier(16, timeout=60)
    got: list[int] = []

    def start() -> None:
        with open_store(db_url) as own:
            barrier.wait()
            got.append(own.create_session(study_version="v").meta["arrival"])

    threads = [threading.Thread(target=start) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(got) == list(range(16))


# ----------------------------------------------------------------------------- the command line


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_check_prints_the_balance_audit() -> None:
    out = run("check", "examples/help/config.toml")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "Balance over 100 simulated evaluators (arrivals and seeds 0..99)" in text
    assert "Task 'help' (compare, rotation): 300 questions" in text
    lines = text.splitlines()
    for system in ("gpt4", "t5", "human"):
        row = next(ln for ln in lines if ln.strip().startswith(system + " ") and " A " in ln)
        assert row.split() == [system, "A", "100", "B", "100", "max/min", "1.00"]
    assert "pairs: gpt4-human 100, gpt4-t5 100, human-t5 100; max/min 1.00; chi-square 0.00 (df 2), p = 1" in text
    cera = run("check", "examples/cera/config.toml")  # the review pools keep their shuffle: near, not exact
    assert cera.returncode == 0 and "Task 'turing' (triplet, shuffle): 500 questions" in cera.stdout
    assert "positions: chi-square" in cera.stdout


def test_plan_takes_an_arrival() -> None:
    out = run("plan", "--seed", "5", "--arrival", "3", "--config", "examples/best-of-3/config.toml")
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    loaded = open_study(ROOT / "examples/best-of-3/config.toml")
    assert printed["arrival"] == 3
    assert printed["questions"] == [q.as_dict() for q in plan(loaded.study, loaded.pools, 5, loaded.item_sets, 3)]
    without = json.loads(run("plan", "--seed", "5", "--config", "examples/best-of-3/config.toml").stdout)
    assert without["arrival"] is None
    assert without["questions"] == [q.as_dict() for q in plan(loaded.study, loaded.pools, 5, loaded.item_sets)]
    bad = run("plan", "--seed", "5", "--arrival", "-2")
    assert bad.returncode == 2 and "arrival must be 0 or more" in bad.stderr


def test_audit_lines_read_well() -> None:
    loaded = open_study(ROOT / "examples/best-of-3/config.toml")
    balances = audit(plan(loaded.study, loaded.pools, s, loaded.item_sets, s) for s in range(12))
    lines = audit_lines(balances, modes={"headlines": "rotation"})
    assert lines[0] == "  Task 'headlines' (rank, rotation): 36 questions"
    assert lines[-1] == "    positions: chi-square 0.00 (df 6), p = 1"
    assert all(ln.split()[-1] == "1.00" for ln in lines[1:4])
    assert not list(itertools.chain(audit([])))
