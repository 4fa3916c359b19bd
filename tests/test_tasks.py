"""evalkit.tasks: the registry of task kinds, one module and one renderer per kind."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from evalkit import tasks
from evalkit.config import ConfigError, load_study, study_summary
from evalkit.tasks.base import TaskKind

ROOT = Path(__file__).resolve().parent.parent


def test_every_registered_kind_is_one_module_with_its_task_class_and_a_renderer() -> None:
    assert list(tasks.KINDS) == ["triplet", "pairwise", "rating", "compare", "score", "spans", "rank", "realfake",
                                 "form"]
    for name, kind in tasks.KINDS.items():
        assert isinstance(kind, TaskKind) and kind.name == name
        module = importlib.import_module(f"evalkit.tasks.{name}")
        assert module.KIND is kind
        assert kind.source in ("pools", "picked", "items") and kind.summary_line
        renderer = ROOT / "pages" / "tasks" / f"{name}.py"
        assert renderer.is_file(), f"kind {name!r} has no renderer {renderer}"
        defined = {n.name for n in ast.parse(renderer.read_text()).body if isinstance(n, ast.FunctionDef)}
        assert "render" in defined, f"{renderer} has no render(ctx)"


def test_an_unknown_kind_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown task kind 'ranking'; the known kinds are 'triplet', 'pairwise', "
                                       "'rating'"):
        tasks.kind_of("ranking")
    assert tasks.kind_of("pairwise") is tasks.KINDS["pairwise"]


def test_a_config_without_tasks_lists_the_kinds(tmp_path: Path) -> None:
    (tmp_path / "datasets").mkdir()
    config = tmp_path / "config.toml"
    config.write_text('tasks = []\n[study]\ntitle = "t"\n')
    with pytest.raises(ConfigError, match="kind = 'triplet', 'pairwise', 'rating'"):
        load_study(config)


def test_each_kind_describes_its_task_for_the_analysis() -> None:
    study = load_study(ROOT / "config.toml")
    summary = {t["id"]: t for t in study_summary(study)["tasks"]}
    for task in study.tasks:
        entry = summary[task.id]
        assert entry["kind"] == task.kind and entry["title"] == task.title
        assert {k: v for k, v in entry.items() if k not in ("id", "kind", "title")} == \
            tasks.kind_of(task.kind).describe(task)
    kinds = {t.kind for t in study.tasks}
    assert {"triplet", "pairwise"} <= kinds
    triplet = next(t for t in study.tasks if t.kind == "triplet")
    assert summary[triplet.id]["target"] == triplet.target and summary[triplet.id]["sources"] == list(triplet.sources)
