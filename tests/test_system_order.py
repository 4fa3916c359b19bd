"""One order of the systems in every table and chart of an items task: the config's ``systems``, not sorted by
name, by strength or by mean, and not the target first; the mean-score chart's axis runs over the scale's range."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from evalkit.analysis import analyse, items_of, load_frames
from evalkit.charts import report_specs
from evalkit.config import open_study, study_summary
from evalkit.store import open_store
from tests.helpers import answer_items_tasks
from tests.item_study import make_items_study, task_block

#: neither alphabetical (gpt4, human, t5) nor the items file's order (gpt4, t5, human)
ORDER = ["t5", "human", "gpt4"]


def _study(tmp: Path) -> Path:
    blocks = [task_block("compare", response="choice-tie", questions=9), task_block("score", per_question=2),
              task_block("rank", response="ranking", questions=6), task_block("realfake", questions=9)]
    config = make_items_study(tmp, *blocks)
    config.write_text(config.read_text(encoding="utf-8").replace('systems = ["gpt4", "t5", "human"]',
                                                                 f"systems = {ORDER!r}".replace("'", '"')),
                      encoding="utf-8")
    return config


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("order")
    loaded = open_study(_study(tmp))
    assert [list(t.source.systems) for t in loaded.study.tasks] == [ORDER] * 4
    rng = random.Random(4)
    with open_store(tmp / "db.sqlite") as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for e in range(8):
            answer_items_tasks(store, loaded, store.create_session(study_version=loaded.version,
                                                                   evaluator_name=f"E{e}"), rng)
        frames = load_frames(store)
    return analyse(frames, items=items_of(loaded))


def _order(values) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def _y_sort(spec: dict) -> list[str]:
    """The sort of the y encoding of a (layered) chart spec."""
    layers = spec.get("layer", [spec])
    return next(layer["encoding"]["y"]["sort"] for layer in layers if "y" in layer.get("encoding", {}))


def test_compare_tables_and_charts_list_the_systems_in_the_configs_order(report) -> None:
    [cmp] = [r for r in report.tasks if r.kind == "compare"]
    assert _order(cmp.shares["system"]) == ORDER
    assert _order(cmp.bradley_terry["system"]) == ORDER  # not strongest first
    assert list(cmp.win_rates["pair"].drop_duplicates()) == ["t5 vs human", "t5 vs gpt4", "human vs gpt4"]
    assert _order(cmp.power["system"]) == ["t5", "human"]  # each pair's first system
    specs = report_specs(report)
    assert _y_sort(specs["compare_bt:help"]) == ORDER


def test_score_tables_and_charts_list_the_systems_in_the_configs_order(report) -> None:
    [score] = [r for r in report.tasks if r.kind == "score"]
    for scale, part in score.means.groupby("scale", sort=False):
        assert _order(part["system"]) == ORDER, scale
    assert _order(score.distribution["system"]) == ORDER
    assert list(score.wilcoxon["pair"].drop_duplicates()) == ["t5 vs human", "t5 vs gpt4", "human vs gpt4"]
    specs = report_specs(report)
    for key in ("score_dist:quality", "score_dist:quality:overall"):  # one chart per scale
        encoding = specs[key]["encoding"]
        assert encoding["xOffset"]["sort"] == ORDER and encoding["color"]["scale"]["domain"] == ORDER, key
    for key in ("score_means:quality", "score_means:quality:overall"):
        assert _y_sort(specs[key]) == ORDER, key


def test_the_mean_score_axis_runs_over_each_scales_range(report) -> None:
    """A 1–5 Likert scale's axis starts at 1 (not 0), the 0–100 slider's at 0; each ends at the scale's top."""
    specs = report_specs(report)
    domains = {}
    for key in ("score_means:quality", "score_means:quality:overall"):  # one chart per scale, each on its range
        for layer in specs[key]["layer"]:
            domains.setdefault(specs[key]["title"], []).append(layer["encoding"]["x"]["scale"]["domain"])
    assert domains == {"Quality: mean Fluency": [[1.0, 5.0]] * 2,
                       "Quality: mean Overall quality": [[0.0, 100.0]] * 2}


def test_rank_tables_and_charts_list_the_systems_in_the_configs_order(report) -> None:
    [rank] = [r for r in report.tasks if r.kind == "rank"]
    for table in (rank.shares, rank.mean_rank, rank.plackett_luce, rank.bradley_terry, rank.power):
        assert _order(table["system"]) == ORDER
    assert _y_sort(report_specs(report)["rank_bt:best"]) == ORDER


def test_realfake_lists_the_systems_in_the_configs_order_with_the_target_in_its_place(report) -> None:
    [rf] = [r for r in report.tasks if r.kind == "realfake"]
    assert list(rf.systems["system"]) == ORDER
    assert list(rf.systems["role"]) == ["generated", "target", "generated"]
    assert list(rf.signal["versus"]) == ["all generated", "t5", "gpt4"]
    # d' still compares the target's texts with the generated ones
    human = rf.systems.set_index("system").loc["human"]
    assert (rf.signal["n_real"] == human["n"]).all() and rf.signal["n_real"].iloc[0] > 0


def test_without_systems_in_the_config_the_items_files_order_is_used(tmp_path: Path) -> None:
    """A task that takes every system of its items file lists them in the file's order (gpt4, t5, human), not
    sorted, when the analysis has the file."""
    loaded = open_study(make_items_study(tmp_path, task_block("compare", response="choice", questions=9).replace(
        'systems = ["gpt4", "t5", "human"]\n', "")))
    rng = random.Random(2)
    with open_store(tmp_path / "db.sqlite") as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        for _ in range(6):
            answer_items_tasks(store, loaded, store.create_session(study_version=loaded.version), rng)
        frames = load_frames(store)
    [cmp] = analyse(frames, items=items_of(loaded)).tasks
    assert _order(cmp.shares["system"]) == ["gpt4", "t5", "human"]
