"""The ready-made studies in examples/: each config opens (config, data, items checked together), plans for
many evaluators, and passes ``python -m evalkit check``; each has its consent text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.config import open_study
from evalkit.queue import is_queued
from evalkit.sampling import plan
from tests.helpers import ROOT

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.toml"))


def test_the_examples_are_the_documented_ones() -> None:
    assert EXAMPLES == ["best-of-3", "cera", "crowd", "direct-assessment", "esa", "esa-ai", "graphmind", "help",
                        "image-quality", "mqm", "turing"]
    readme = (ROOT / "README.md").read_text()
    for name in EXAMPLES:
        assert f"EVALKIT_CONFIG=examples/{name}/config.toml ./scripts/serve" in readme, name


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_opens_and_plans(name: str, tmp_path: Path) -> None:
    loaded = open_study(ROOT / "examples" / name / "config.toml", database=tmp_path / "responses.sqlite")
    study = loaded.study
    assert study.consent_text.strip() and study.estimated_minutes
    kinds = {t.kind for t in study.tasks}
    expected = {"cera": {"triplet", "pairwise", "rating"}, "help": {"compare"}, "direct-assessment": {"score"},
                "turing": {"realfake"}, "best-of-3": {"rank"}, "graphmind": {"rating"},
                "crowd": {"form", "compare"}, "esa": {"spans"}, "mqm": {"spans"}, "esa-ai": {"spans"},
                "image-quality": {"score", "compare", "realfake"}}[name]
    assert kinds == expected
    for seed in range(50):
        questions = plan(study, loaded.pools, seed, loaded.item_sets)
        for q in questions:  # items questions: one item, its outputs in display order
            if q.kind in ("compare", "score", "spans", "rank", "realfake") and q.check is None and not is_queued(q):
                item = loaded.item_sets[study.task(q.task).source.items][q.slot]
                assert q.review_ids == (item.id,) * len(q.sources)
                assert q.texts == tuple(item.outputs[s] for s in q.sources)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_passes_evalkit_check(name: str) -> None:
    config = ROOT / "examples" / name / "config.toml"
    done = subprocess.run([sys.executable, "-m", "evalkit", "check", str(config)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "OK: the study is valid." in done.stdout
    # length matching is about several reviews in one question: items questions do not count (they used to
    # count as matched, which diluted the share of unmatched ones)
    if name == "cera":
        assert "Length matching over 100 sample plans: 0 of 1000 questions unmatched" in done.stdout
    else:
        assert "Length matching" not in done.stdout


def test_the_examples_ask_what_their_names_say(tmp_path: Path) -> None:
    def task(name: str):
        [only] = open_study(ROOT / "examples" / name / "config.toml", database=tmp_path / "r.sqlite").study.tasks
        return only

    help_ = task("help")
    assert help_.response == "slider" and len(help_.source.systems) == 3
    da = task("direct-assessment")
    assert [(s.type, s.low, s.high) for s in da.scales] == [("slider", 0, 100), ("likert", 1, 5), ("likert", 1, 5)]
    turing = task("turing")
    assert turing.confidence and turing.target in turing.source.systems
    best = task("best-of-3")
    assert best.response == "best" and best.shown(best.source.systems) == 3
