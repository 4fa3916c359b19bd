"""python -m evalkit check | plan, as a researcher runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evalkit.config import open_study
from evalkit.sampling import plan
from tests.helpers import ROOT, copy_demo


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def test_check_passes_on_the_demo_and_prints_pool_sizes() -> None:
    out = run("check")
    assert out.returncode == 0, out.stderr
    assert "OK: the study is valid." in out.stdout
    loaded = open_study(ROOT / "config.toml")
    for (source, domain), reviews in loaded.pools.items():
        line = next(ln for ln in out.stdout.splitlines() if ln.strip().startswith(source + " "))
        assert f"{len(reviews)} / " in line, (source, domain)
    assert "unmatched" in out.stdout


def test_check_fails_with_the_message_on_a_broken_config(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    cfg.write_text(cfg.read_text().replace('kind = "pairwise"', 'kind = "pairs"'))
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "config.toml: [[tasks]] #2" in out.stderr and "'kind'" in out.stderr and "Traceback" not in out.stderr


def test_check_fails_on_a_broken_dataset(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    (tmp_path / "datasets" / "cera-hotels.xml").write_text("<Reviews>\n<Review rid='1'>\n")
    out = run("check", str(cfg))
    assert out.returncode == 1
    assert "cera-hotels.xml, line" in out.stderr and "Traceback" not in out.stderr


def test_check_missing_config(tmp_path: Path) -> None:
    out = run("check", str(tmp_path / "nope.toml"))
    assert out.returncode == 1 and "study config not found" in out.stderr


def test_plan_prints_the_plan_as_json_with_sources() -> None:
    out = run("plan", "--seed", "42")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    loaded = open_study(ROOT / "config.toml")
    expected = [q.as_dict() for q in plan(loaded.study, loaded.pools, 42)]
    assert data["questions"] == expected and data["seed"] == 42 and data["version"] == loaded.version
    assert all("source" in t for q in data["questions"] for t in q["texts"])
    assert run("plan", "--seed", "42").stdout == out.stdout
    assert run("plan", "--seed", "43").stdout != out.stdout


def test_plan_bad_seed_is_a_usage_error() -> None:
    for bad in ("-1", "4294967296", "abc"):
        out = run("plan", "--seed", bad)
        assert out.returncode == 2 and "seed" in out.stderr
