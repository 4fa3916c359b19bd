"""The task kinds over items files (compare, score, rank, realfake): config, seeded balanced plans, recording,
and what is stored on both backends."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from evalkit.config import ConfigError, open_study
from evalkit.sampling import plan
from evalkit.store import JsonField, Store, open_store
from evalkit.tasks import CompareTask, RankTask, RealFakeTask, ScoreTask, SurveyError
from evalkit.tasks.rank import record_rank
from evalkit.tasks.realfake import record_realfake
from evalkit.tasks.responses import TIE, record_choice, record_slider
from evalkit.tasks.score import missing_scores, record_scores
from tests.helpers import make_study
from tests.item_study import make_items_study, task_block, write_items


def loaded(tmp: Path, *blocks: str, **kw: object):
    return open_study(make_items_study(tmp, *blocks, **kw))


def items_of(study) -> dict[str, dict]:
    path = next(iter(study.item_sets))
    return {line["id"]: line for line in map(json.loads, path.read_text().splitlines())}


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize(("block", "message"), [
    (task_block("compare").replace('systems = ["gpt4", "t5", "human"]', 'systems = ["gpt4"]'),
     "key 'systems': needs at least two systems to compare"),
    (task_block("compare", response="stars"), "key 'response': must be one of 'choice', 'choice-tie', 'slider'"),
    (task_block("compare").replace("items.jsonl", "nope.jsonl"), "key 'items': items file 'nope.jsonl' not found"),
    (task_block("compare", questions=0), "key 'questions': must be at least 1"),
    (task_block("score").split("[[tasks.scales]]")[0], "key 'scales': needs at least one [[tasks.scales]]"),
    (task_block("score").replace('anchors = ["Incomprehensible", "Poor", "Fair", "Good", "Perfectly fluent"]',
                                 'anchors = ["Only"]'), "key 'anchors': needs at least two levels"),
    (task_block("score").replace("max = 100", "max = 0"), "key 'max': must be greater than min (0), got 0"),
    (task_block("score").replace('id = "overall"', 'id = "fluency"'), "scale ids must be unique"),
    (task_block("score").replace('type = "slider"', 'type = "slider"\nstep = 5'), "key 'step': is not a known"),
    (task_block("score", per_question=4), "key 'outputs_per_question': (4) is more than the 3 systems"),
    (task_block("score", textfield="essay"), "key 'textfield': must be one of 'none', 'comment', 'post-edit'"),
    (task_block("rank") + "outputs_per_question = 1\n", "key 'outputs_per_question': must be at least 2"),
    (task_block("rank", response="worst"), "key 'response': must be one of 'best', 'ranking'"),
    (task_block("realfake").replace('target = "human"', 'target = "people"'),
     "key 'target': 'people' is not one of the task's systems"),
    (task_block("realfake").replace('confidence = ["Guessing", "Somewhat sure", "Sure", "Very sure"]',
                                    'confidence = ["Sure"]'), "key 'confidence': needs at least two levels"),
    (task_block("realfake") + 'domains = ["alpha"]\n', "key 'domains': is for texts from the review pools"),
    (task_block("realfake").replace('items = "items.jsonl"\n', ""),
     "key 'items': is required (or 'sources' and 'domains'"),
])
def test_config_mistakes_name_the_task_and_key(tmp_path: Path, block: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        loaded(tmp_path, block)
    assert message in str(err.value) and "config.toml" in str(err.value)


def test_the_items_file_is_checked_against_the_task_when_the_study_opens(tmp_path: Path) -> None:
    block = task_block("compare").replace('"gpt4", "t5"', '"gpt5", "t5"')
    with pytest.raises(ConfigError, match=r"key 'systems': system 'gpt5' has no outputs in .*items.jsonl \(did you "
                                          r"mean 'gpt4'\?\); the file's systems: gpt4, t5, human"):
        loaded(tmp_path, block)
    with pytest.raises(ConfigError, match=r"key 'questions' = 13 but items.jsonl has only 12 items"):
        loaded(tmp_path / "b", task_block("realfake", questions=13))
    # 3 pairs over 30 questions: 10 items per pair; every item has every system, so 12 suffice per pair ...
    loaded(tmp_path / "c", task_block("compare", questions=12))
    # ... but when t5 is missing on most items the pairs with t5 run dry
    (tmp_path / "d").mkdir()
    config = make_items_study(tmp_path / "d", task_block("compare", questions=12))
    write_items(tmp_path / "d" / "items.jsonl", 12, missing={i: "t5" for i in range(9)})
    with pytest.raises(ConfigError, match=r"needs up to 4 items with outputs of gpt4 and t5, but items.jsonl has 3"):
        open_study(config)


def test_every_kind_parses_into_its_typed_task(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("compare", response="choice-tie"), task_block("score", per_question=2),
                   task_block("rank", response="ranking"), task_block("realfake")).study
    compare, score, rank, realfake = study.tasks
    assert isinstance(compare, CompareTask) and compare.response == "choice-tie" and compare.source.questions == 6
    assert isinstance(score, ScoreTask) and [s.id for s in score.scales] == ["fluency", "overall"]
    assert (score.scales[0].low, score.scales[0].high, score.scales[1].low, score.scales[1].high) == (1, 5, 0, 100)
    assert isinstance(rank, RankTask) and rank.shown(("a", "b", "c")) == 3
    assert isinstance(realfake, RealFakeTask) and realfake.confidence[-1] == "Very sure"
    assert realfake.questions == 8


# ----------------------------------------------------------------------------- plans


def test_plans_are_seeded_and_differ_between_evaluators(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("compare"), task_block("score"), task_block("rank"), task_block("realfake"))
    a = plan(study.study, study.pools, 5, study.item_sets)
    assert a == plan(study.study, study.pools, 5, study.item_sets)
    assert [q.task for q in a] == ["help"] * 6 + ["quality"] * 6 + ["best"] * 4 + ["turing"] * 8
    plans = {tuple((q.review_ids[0], q.sources) for q in plan(study.study, study.pools, s, study.item_sets))
             for s in range(30)}
    assert len(plans) == 30


def test_items_questions_show_the_items_outputs_and_never_an_item_twice(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("compare", questions=12), task_block("rank", questions=12), gold=3)
    items = items_of(study)
    for seed in range(40):
        questions = plan(study.study, study.pools, seed, study.item_sets)
        for task in ("help", "best"):
            ids = [q.review_ids[0] for q in questions if q.task == task]
            assert len(ids) == 12 and len(set(ids)) == 12  # each item at most once per task
        for q in questions:
            item = items[q.review_ids[0]]
            assert "check" not in item  # attention-check items are never drawn as ordinary questions
            assert q.texts == tuple(item["outputs"][s] for s in q.sources)
            assert (q.input, q.title, q.domain) == (item["input"], item["title"], "")
            assert q.slot == list(items).index(q.review_ids[0])
            shown = q.as_dict(with_sources=False)
            assert "gpt4" not in json.dumps(shown) and shown["input"] == item["input"]


def test_pairs_of_systems_and_their_sides_are_balanced_within_an_evaluator(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("compare", questions=6), task_block("compare", questions=7)
                   .replace('id = "help"', 'id = "seven"'))
    firsts = Counter()
    for seed in range(60):
        questions = plan(study.study, study.pools, seed, study.item_sets)
        six = [q.sources for q in questions if q.task == "help"]
        pairs = Counter(frozenset(s) for s in six)
        assert sorted(pairs.values()) == [2, 2, 2]  # 6 questions, 3 pairs: each pair twice ...
        assert all(Counter(s[0] for s in six if frozenset(s) == p) == Counter(p) for p in pairs)  # ... once each side
        seven = Counter(frozenset(q.sources) for q in questions if q.task == "seven")
        assert sorted(seven.values()) == [2, 2, 3]
        firsts[six[0]] += 1
    assert len(firsts) == 6  # every ordered pair comes first for some evaluator


def test_scores_and_rankings_balance_their_systems_and_shuffle_positions(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("score", questions=9), task_block("rank", questions=6))
    orders = Counter()
    for seed in range(30):
        questions = plan(study.study, study.pools, seed, study.item_sets)
        assert sorted(Counter(q.sources[0] for q in questions if q.task == "quality").values()) == [3, 3, 3]
        ranked = [q.sources for q in questions if q.task == "best"]
        assert all(sorted(s) == ["gpt4", "human", "t5"] for s in ranked)
        orders.update(ranked)
    assert len(orders) == 6 and min(orders.values()) > 10  # all 6 orders, roughly evenly (180 questions)


def test_a_turing_test_shows_real_texts_half_of_the_time(tmp_path: Path) -> None:
    study = loaded(tmp_path, task_block("realfake", questions=8), task_block("realfake", questions=7)
                   .replace('id = "turing"', 'id = "odd"'))
    odd_real = Counter()
    for seed in range(40):
        questions = plan(study.study, study.pools, seed, study.item_sets)
        shown = Counter(q.sources[0] for q in questions if q.task == "turing")
        assert shown["human"] == 4 and shown["gpt4"] == 2 and shown["t5"] == 2
        odd_real[sum(q.sources[0] == "human" for q in questions if q.task == "odd")] += 1
    assert set(odd_real) == {3, 4}  # an odd count rounds either way


def test_adding_items_tasks_does_not_change_the_pool_tasks_questions(tmp_path: Path) -> None:
    base = make_study(tmp_path / "a")
    before = open_study(base)
    (tmp_path / "a" / "items.jsonl").write_text("")
    write_items(tmp_path / "a" / "items.jsonl")
    base.write_text(base.read_text() + task_block("compare") + task_block("score"))
    after = open_study(base)
    for seed in (0, 1, 2, 99):
        old = plan(before.study, before.pools, seed)
        new = plan(after.study, after.pools, seed, after.item_sets)
        assert [q for q in new if q.task in ("turing", "pairs")] == old
    with pytest.raises(Exception, match=r"not loaded: pass LoadedStudy\.item_sets"):
        plan(after.study, after.pools, 0)


def test_a_turing_test_over_the_review_pools_never_repeats_a_review_of_the_plan(tmp_path: Path) -> None:
    config = make_study(tmp_path)
    config.write_text(config.read_text() + """
[[tasks]]
kind = "realfake"
id = "spot"
sources = ["real", "gen", "base"]
target = "real"
domains = ["alpha", "beta", "alpha", "beta", "alpha", "beta"]
confidence = []
""")
    study = open_study(config)
    assert study.study.sources == ["real", "gen", "base"]
    for seed in range(20):
        questions = plan(study.study, study.pools, seed, study.item_sets)
        ids = [r for q in questions for r in q.review_ids]
        assert len(ids) == len(set(ids))
        spot = [q for q in questions if q.task == "spot"]
        assert sorted(q.domain for q in spot) == ["alpha"] * 3 + ["beta"] * 3
        assert sum(q.sources[0] == "real" for q in spot) == 3
        assert all(q.review_ids[0].startswith(q.sources[0] + "/") for q in spot)


# ----------------------------------------------------------------------------- recording


@pytest.fixture
def items_study(tmp_path: Path):
    return loaded(tmp_path, task_block("compare", response="choice-tie"), task_block("score", per_question=2,
                  textfield="post-edit"), task_block("rank", response="ranking"), task_block("realfake"))


def first(questions, task: str):
    return next(q for q in questions if q.task == task)


def rows(store: Store, task: str) -> list:
    return [a for a in store.answers() if a.task == task]


def test_each_kind_stores_its_answer_once_with_the_item_and_the_systems_in_display_order(db_url: str,
                                                                                         items_study) -> None:
    study = items_study.study
    questions = plan(study, items_study.pools, 3, items_study.item_sets)
    store = open_store(db_url)
    try:
        session = store.create_session(study_version="v")
        help_q, score_q, rank_q, turing_q = (first(questions, t) for t in ("help", "quality", "best", "turing"))

        a = record_choice(store, session, help_q, TIE, 1200, ties=True)
        assert (a.response, a.review_source, a.kind) == ("tie", None, "compare")
        assert (a.left_source, a.right_source, a.sources) == (*help_q.sources, help_q.sources)
        assert a.item_ids == (help_q.review_ids[0],) and a.slot == help_q.slot and a.domain is None
        assert not record_choice(store, session, help_q, TIE, 999, ties=True).created  # the same answer again

        b = record_slider(store, session, first(questions[1:], "help"), -40, "accept", 800)
        assert (b.response, b.review_source, b.detail["outcome"]) == ("-40", questions[1].sources[0], "left")

        task = study.task("quality")
        edited = [score_q.texts[0], score_q.texts[1] + " (fixed)"]
        c = record_scores(store, session, task, score_q, {"fluency": [4, 2], "overall": [73, 10]}, edited, 5000)
        assert c.response == "scored" and c.review_source is None and c.sources == score_q.sources
        assert c.detail == {"scores": {"fluency": [4, 2], "overall": [73, 10]}, "texts": edited,
                            "edited": [False, True]}

        d = record_rank(store, session, study.task("best"), rank_q, ["C", "A", "B"], 3000)
        assert d.response == "C>A>B" and d.review_source == rank_q.sources[2]
        assert d.detail == {"ranking": [rank_q.sources[2], rank_q.sources[0], rank_q.sources[1]]}
        assert d.left_source is None  # three texts: no sides

        e = record_realfake(store, session, study.task("turing"), turing_q, "generated", 3, 2000)
        assert (e.response, e.review_source, e.detail, e.sources) == ("generated", turing_q.sources[0],
                                                                      {"confidence": 3}, turing_q.sources)
        assert len(store.answers()) == 5

        read = store.read_columns("evaluations", [
            ("task", "task", "category"), ("sources", "sources", "category"), ("item_ids", "item_ids", "category"),
            ("scores", JsonField("detail", "scores"), "text"),
            ("confidence", JsonField("detail", "confidence"), "int")]).to_pylist()
        by_task = {r["task"]: r for r in read}
        assert json.loads(by_task["quality"]["scores"]) == {"fluency": [4, 2], "overall": [73, 10]}
        assert by_task["turing"]["confidence"] == 3 and by_task["help"]["confidence"] is None
        assert json.loads(by_task["best"]["sources"]) == list(rank_q.sources)
        assert json.loads(by_task["best"]["item_ids"]) == [rank_q.review_ids[0]]
    finally:
        store.close()


def test_bad_answers_are_refused_with_a_message_and_store_nothing(tmp_path: Path, items_study) -> None:
    study = items_study.study
    questions = plan(study, items_study.pools, 3, items_study.item_sets)
    store = open_store(tmp_path / "db.sqlite")
    session = store.create_session(study_version="v")
    help_q, score_q, rank_q, turing_q = (first(questions, t) for t in ("help", "quality", "best", "turing"))
    task = study.task("quality")
    texts = list(score_q.texts)
    cases = [
        (lambda: record_choice(store, session, help_q, None, 1, ties=True), "Please choose one of the responses"),
        (lambda: record_choice(store, session, help_q, TIE, 1), "Please choose one of the responses"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [4, 2], "overall": [73, None]}, texts, 1),
         "Please move the slider for 'Overall quality' for response B"),
        (lambda: record_scores(store, session, task, score_q, {"overall": [1, 2]}, texts, 1),
         "Please choose a level for 'Fluency' for response A"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [6, 2], "overall": [1, 2]}, texts, 1),
         "'Fluency' takes whole numbers from 1 to 5"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2], "overall": [1, 2]}, None, 1),
         "Please fill in the text box"),
        # a tampered answer (the browser is not trusted): scores of outputs or scales the question does not have
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2, 3], "overall": [1, 2]}, texts, 1),
         "These scores do not match this question's outputs"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2], "overall": [1, 2], "bogus": [1]},
                               texts, 1), "These scores do not match this question's scales"),
        # texts the database or the analysis cannot carry, or longer than the text box allows
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2], "overall": [1, 2]},
                               [texts[0], "half a pair \ud800"], 1), "a character that cannot be stored"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2], "overall": [1, 2]},
                               [texts[0], "nul \x00 here"], 1), "a character that cannot be stored"),
        (lambda: record_scores(store, session, task, score_q, {"fluency": [1, 2], "overall": [1, 2]},
                               [texts[0], "x" * 20_001], 1), "A text box holds at most 20,000 characters"),
        (lambda: record_rank(store, session, study.task("best"), rank_q, ["A", "A", "B"], 1),
         "give every response (A, B, C) its own place"),
        (lambda: record_realfake(store, session, study.task("turing"), turing_q, "real", None, 1),
         "Please say how sure you are"),
        (lambda: record_realfake(store, session, study.task("turing"), turing_q, "maybe", 2, 1),
         "written by a person or generated"),
    ]
    for call, message in cases:
        with pytest.raises(SurveyError, match=re.escape(message)):
            call()
    assert store.answers() == []
    assert missing_scores(task, score_q, {"fluency": [4, None]}) == [
        (0, task.scales[1]), (1, task.scales[0]), (1, task.scales[1])]
    store.close()


def test_evalkit_check_outlines_items_tasks_and_skips_the_pool_table(tmp_path: Path) -> None:
    from tests.test_cli import run

    config = make_items_study(tmp_path, task_block("compare", response="slider"), task_block("rank"))
    out = run("check", str(config))
    assert out.returncode == 0, out.stderr
    assert "Task 'help' (compare): 6 questions per evaluator, two outputs side by side (slider), from items.jsonl " \
           "(12 items; systems gpt4, t5, human)" in out.stdout
    assert "Task 'best' (rank): 4 questions per evaluator, 3 outputs, the best" in out.stdout
    assert "Eligible reviews" not in out.stdout and "unmatched" not in out.stdout
    out = run("plan", "--seed", "4", "--config", str(config))
    shown = json.loads(out.stdout)["questions"]
    assert [q["task"] for q in shown] == ["help"] * 6 + ["best"] * 4
    assert {t["source"] for t in shown[-1]["texts"]} == {"gpt4", "t5", "human"} and shown[0]["input"]


def test_an_untouched_post_edit_of_an_output_with_crlf_is_not_edited(tmp_path: Path, items_study) -> None:
    """A browser's text box turns \\r\\n into \\n: a post-edit left as it was must not count as edited (stored with
    its line ends as the browser sent them); a real edit still does."""
    import dataclasses

    study = items_study.study
    score_q = first(plan(study, items_study.pools, 3, items_study.item_sets), "quality")
    score_q = dataclasses.replace(score_q, texts=("First line\r\nSecond line", "One\rTwo"))
    with open_store(tmp_path / "db.sqlite") as store:
        session = store.create_session(study_version="v")
        c = record_scores(store, session, study.task("quality"), score_q, {"fluency": [4, 2], "overall": [73, 10]},
                          ["First line\nSecond line", "One\nTwo, fixed"], 5000)
        assert c.detail["edited"] == [False, True] and c.detail["texts"][0] == "First line\nSecond line"
