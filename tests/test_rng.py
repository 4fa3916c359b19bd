"""evalkit.rng against values computed by the JavaScript original (tests/fixtures/mulberry32.js)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from evalkit.rng import Mulberry32, derive_seed, shuffle

FIXTURES = Path(__file__).parent / "fixtures"
REFERENCE = json.loads((FIXTURES / "mulberry32.json").read_text())


@pytest.mark.parametrize("seed", sorted(REFERENCE["sequences"], key=int))
def test_sequence_matches_javascript(seed: str) -> None:
    rng = Mulberry32(int(seed))
    assert [rng.random() for _ in range(40)] == REFERENCE["sequences"][seed]


@pytest.mark.parametrize("seed", sorted(REFERENCE["shuffles"], key=int))
def test_shuffle_matches_javascript(seed: str) -> None:
    rng = Mulberry32(int(seed))
    ten, three, two = REFERENCE["shuffles"][seed]
    assert shuffle(list(range(10)), rng) == ten
    assert shuffle(["a", "b", "c"], rng) == three
    assert shuffle(["x", "y"], rng) == two


def test_matches_javascript_after_the_state_double_starts_rounding() -> None:
    """After ~4.92M calls the JS state exceeds 2**53 and rounds; we must round the same way."""
    long_run = REFERENCE["long_run"]
    rng = Mulberry32(long_run["seed"])
    # Jump ahead exactly: below 2**53 the JS state is seed + n * increment with no rounding.
    state = long_run["seed"] + long_run["start"] * 0x6D2B79F5
    assert state < 2**53
    rng._a = float(state)
    got = [rng.random() for _ in range(len(long_run["values"]))]
    assert got == long_run["values"]
    # A naive implementation that wraps the state modulo 2**32 diverges in this window.
    naive_state = state
    diverged = False
    for expected in long_run["values"]:
        naive_state = (naive_state + 0x6D2B79F5) & 0xFFFFFFFF
        t = naive_state
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        if ((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296 != expected:
            diverged = True
            break
    assert diverged, "the fixture window should exercise the rounding of the JS state"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_fixture_is_what_node_computes_now() -> None:
    out = subprocess.run(["node", str(FIXTURES / "mulberry32.js")], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == REFERENCE


def test_values_in_unit_interval_and_deterministic() -> None:
    a, b = Mulberry32(2024), Mulberry32(2024)
    xs = [a.random() for _ in range(10_000)]
    assert xs == [b.random() for _ in range(10_000)]
    assert all(0.0 <= x < 1.0 for x in xs)
    assert xs != [Mulberry32(2025).random() for _ in range(10_000)]


def test_shuffle_returns_new_list_and_is_a_permutation() -> None:
    items = list(range(25))
    out = shuffle(items, Mulberry32(5))
    assert items == list(range(25))
    assert sorted(out) == items and out != items
    assert shuffle([], Mulberry32(1)) == [] and shuffle([9], Mulberry32(1)) == [9]


def test_shuffle_is_uniform_over_permutations() -> None:
    """All 6 orders of three items about equally often (a biased shuffle such as
    j = floor(rng * n) for every i, or j in 0..i-1, would fail this)."""
    counts = Counter()
    rng = Mulberry32(11)
    n = 60_000
    for _ in range(n):
        counts[tuple(shuffle("ABC", rng))] += 1
    assert len(counts) == 6
    for c in counts.values():
        assert abs(c - n / 6) < 0.05 * n / 6


def test_bad_seed_type() -> None:
    with pytest.raises(TypeError):
        Mulberry32("42")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Mulberry32(1.5)  # type: ignore[arg-type]


def test_randbelow_and_derive_seed() -> None:
    rng = Mulberry32(3)
    assert all(0 <= rng.randbelow(7) < 7 for _ in range(1000))
    with pytest.raises(ValueError):
        rng.randbelow(0)
    assert derive_seed("study", 1) == derive_seed("study", 1)
    assert derive_seed("study", 1) != derive_seed("study", 2)
    assert 0 <= derive_seed("x") < 2**32
