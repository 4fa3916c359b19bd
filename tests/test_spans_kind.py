"""Kind ``spans``: its config, the server's check of everything a page sends (hostile offsets, overlaps, severities,
categories, suggestions' origins, scores), storage of an answer with its spans, and tutorials expecting spans
decided as Pearmut decides them (its own ESA tutorial, written as an evalkit items file)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evalkit.checks import CheckFeedback
from evalkit.config import ConfigError, open_study
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.tasks import SpansTask, SurveyError
from evalkit.tasks.spans import MQM_CORE, parse_answer, record_spans
from tests.helpers import SHARED_DATA

TEXT = "The dog 👍 walked outside."  # an emoji: UTF-16 offsets after it are one more than code points
ITEMS = [
    {"id": f"r{i}", "src": "Der Hund ist rausgerannt.", "tgt": {"mA": TEXT, "mB": "A dog ran out."},
     "error_spans": {"mA": [{"start_i": 11, "end_i": 16, "severity": "minor", "category": None}]}}
    for i in range(6)
] + [
    {"id": "doc", "segments": [{"input": "Eins.", "outputs": {"mA": "One.", "mB": "Won."}},
                               {"input": "Zwei.", "outputs": {"mA": "Two.", "mB": "Too."}}]},
    {"id": "tut1", "src": "Der Hund ist rausgerannt.", "tgt": {"mA": "The dog walked outside."},
     "check": {"expect": {"mA": {"score": [75, 85], "error_spans": [{"start_i": [7, 9], "end_i": [12, 14],
                                                                    "severity": "minor"}]}},
               "feedback": "Please mark \"walked\" as a minor error and score 75-85."}},
]


def study(tmp: Path, extra: str = "", items: list[dict] | None = None, questions: int = 4) -> Path:
    (tmp / "datasets").mkdir(parents=True, exist_ok=True)
    (tmp / "mt.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items or ITEMS),
                                  encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text(f"""
[study]
title = "Spans"
database = "r.sqlite"
seed = 3

[[tasks]]
kind = "spans"
id = "esa"
items = "mt.jsonl"
systems = ["mA", "mB"]
questions = {questions}
{extra}
""", encoding="utf-8")
    return config


def task_of(config: Path) -> tuple[Any, SpansTask]:
    loaded = open_study(config)
    [task] = loaded.study.tasks
    return loaded, task


def question_for(loaded: Any, task: SpansTask, item_id: str, systems: tuple[str, ...] = ("mA",)) -> Any:
    from evalkit.question import Question
    item = loaded.item_sets[task.source.items].by_id(item_id)
    return Question(task=task.id, kind="spans", index=0, slot=0, domain="", review_ids=(item.id,) * len(systems),
                    sources=systems, texts=tuple(item.outputs[s] for s in systems), matched=True), item


def utf16(text: str, index: int) -> int:
    return len(text[:index].encode("utf-16-le")) // 2


def sent(*spans: dict, score: int = 70, **kw: Any) -> dict:
    return {"spans": [[list(spans)]], "scores": {"quality": [score]}, "actions": [], **kw}


# --------------------------------------------------------------------------- config


def test_defaults_esa_and_mqm(tmp_path: Path) -> None:
    _, esa = task_of(study(tmp_path / "a"))
    assert esa.protocol == "esa" and esa.severities == ("minor", "major") and esa.categories is None
    assert [(s.id, s.type, s.low, s.high) for s in esa.scales] == [("quality", "slider", 0, 100)]
    assert esa.input_label == "Source" and esa.output_label == "Translation"
    _, mqm = task_of(study(tmp_path / "b", 'protocol = "mqm"\nseverities = ["minor", "major", "critical"]'))
    assert mqm.categories == dict(MQM_CORE) and mqm.scales == () and mqm.mqm_weights["critical"] == 25.0
    _, custom = task_of(study(tmp_path / "c", 'protocol = "mqm"\ncategories = { Accuracy = ["Omission"], '
                                              'Fluency = [] }\nmqm_weights = { major = 10 }'))
    assert custom.categories == {"Accuracy": ("Omission",), "Fluency": ()} and custom.mqm_weights["major"] == 10


@pytest.mark.parametrize(("extra", "message"), [
    ('protocol = "dqf"', "key 'protocol': must be one of 'esa', 'mqm'"),
    ('protocol = "mqm"\ncategories = { "Acc/uracy" = [] }', "category 'Acc/uracy'"),
    ('protocol = "mqm"\ncategories = 3', "key 'categories': must be \"mqm-core\", \"free\" or a table"),
    ('severities = ["minor", "minor"]', "must be 1 to 9 distinct names"),
    ('protocol = "mqm"\nmin_score_without_spans = 80', "needs a scale to compare with"),
    ('mqm_weights = { huge = 3 }', "'huge' is not one of the task's severities"),
    ('mqm_weights = { minor = -1 }', "a weight is a number >= 0"),
    ('score_per = "paragraph"', "key 'score_per': must be one of 'document', 'segment'"),
    ('prefill = true\nseverities = ["major"]', "item 'r0' (line 1): a suggested span of 'mA' does not fit this task: "
                                               "span 10-15 (minor): severity 'minor' is not one of major"),
    ('wordlevel = true', "key 'wordlevel': is not a known"),
])
def test_config_mistakes_are_named(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        open_study(study(tmp_path, extra))
    assert message in str(err.value), str(err.value)


def test_plans_are_balanced_and_seeded(tmp_path: Path) -> None:
    loaded, _ = task_of(study(tmp_path, "outputs_per_question = 2"))
    first = plan(loaded.study, loaded.pools, 11, items=loaded.item_sets)
    assert first == plan(loaded.study, loaded.pools, 11, items=loaded.item_sets)
    assert len(first) == 4 and all(sorted(q.sources) == ["mA", "mB"] for q in first)


# --------------------------------------------------------------------------- what a page sends


def test_offsets_after_an_emoji_and_suggestions(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, "prefill = true"))
    question, item = question_for(loaded, task, "r0")
    walked = TEXT.index("walked")
    # the page's offsets are UTF-16: "walked" starts one unit later than its code point
    answer = parse_answer(task, question, item, sent(
        {"start": utf16(TEXT, 4), "end": utf16(TEXT, 7), "severity": "major", "origin": "added"},
        {"start": 11, "end": 17, "severity": "minor", "origin": "suggested-deleted", "suggestion": 0}))
    assert [(r["start_char"], r["end_char"], r["text"], r["origin"]) for r in answer.rows] == [
        (4, 7, "dog", "added"), (walked, walked + 6, "walked", "suggested-deleted")]
    # a suggestion the page never mentions, or says it left alone, stays as suggested, not reviewed; one sent back
    # as kept but moved is "changed"
    for value in (sent(), sent({"start": 11, "end": 17, "severity": "minor", "origin": "suggested-unreviewed",
                                "suggestion": 0})):
        untouched = parse_answer(task, question, item, value)
        assert [(r["text"], r["origin"]) for r in untouched.rows] == [("walked", "suggested-unreviewed")]
    kept = parse_answer(task, question, item, sent({"start": 11, "end": 17, "severity": "minor",
                                                    "origin": "suggested-kept", "suggestion": 0}))
    assert [(r["text"], r["origin"]) for r in kept.rows] == [("walked", "suggested-kept")]
    moved = parse_answer(task, question, item, sent({"start": 11, "end": 25, "severity": "minor",
                                                     "origin": "suggested-kept", "suggestion": 0}))
    assert [(r["text"], r["origin"]) for r in moved.rows] == [("walked outside", "suggested-changed")]


@pytest.mark.parametrize(("spans", "message"), [
    ([{"start": 9, "end": 12, "severity": "minor"}], "offset 9 falls inside character 8"),  # half of the emoji
    ([{"start": 0, "end": 999, "severity": "minor"}], "offset 999 is past the end"),
    ([{"start": 3, "end": 3, "severity": "minor"}], "is not within"),
    ([{"start": 0, "end": 5, "severity": "minor"}, {"start": 4, "end": 8, "severity": "major"}], "overlap"),
    ([{"start": 0, "end": 3, "severity": "fatal"}], "severity 'fatal' is not one of minor, major"),
    ([{"start": 0, "end": 3, "severity": "minor", "category": "Accuracy"}], "this task has no categories"),
    ([{"start": "0", "end": 3, "severity": "minor"}], "an offset must be a whole number"),
    ([{"start": 0, "end": 3, "severity": "minor", "origin": "suggested-kept", "suggestion": 4}],
     "says it is suggestion 4, which this output does not have"),
    (["<script>"], "not a span"),
])
def test_hostile_spans_are_refused_and_nothing_is_stored(tmp_path: Path, spans: list, message: str) -> None:
    loaded, task = task_of(study(tmp_path))
    question, item = question_for(loaded, task, "r0")
    with open_store(tmp_path / "r.sqlite") as store:
        session = store.create_session(study_version="v")
        with pytest.raises(SurveyError) as err:
            record_spans(store, session, task, question, item, sent(*spans), 100)
        assert message in str(err.value) and "cannot be saved" in str(err.value), str(err.value)
        assert store.answers() == [] and store.spans() == []


@pytest.mark.parametrize(("value", "message"), [
    (None, "could not be read"), ({"spans": []}, "spans do not match"), (sent(score=101), "from 0 to 100"),
    ({"spans": [[[]]], "scores": {}}, "Please give every score (Quality)"),
    ({"spans": [[[]]], "scores": {"quality": [True]}}, "whole numbers"),
])
def test_broken_answers_are_refused(tmp_path: Path, value: Any, message: str) -> None:
    loaded, task = task_of(study(tmp_path))
    question, item = question_for(loaded, task, "r0")
    with pytest.raises(SurveyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_answer(task, question, item, value)


def test_mqm_categories_and_the_missing_token(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, 'protocol = "mqm"\nmissing_token = true\n'
                                           'categories = { Accuracy = ["Omission"], Fluency = [] }'))
    question, item = question_for(loaded, task, "r1", ("mB",))
    text = item.outputs["mB"]

    def mqm(*spans: dict) -> dict:
        return {"spans": [[list(spans)]], "scores": {}, "actions": []}

    answer = parse_answer(task, question, item, mqm(
        {"start": len(text), "end": len(text) + 1, "severity": "major", "category": "Accuracy/Omission"},
        {"start": 0, "end": 1, "severity": "minor", "category": "Fluency"}))
    assert [(r["text"], r["category"]) for r in answer.rows] == [("A", "Fluency"), ("[missing]", "Accuracy/Omission")]
    for bad, says in [({"category": None}, "choose a category"), ({"category": "Accuracy"}, "choose a subcategory"),
                      ({"category": "Style"}, "'Style' is not one of")]:
        with pytest.raises(SurveyError, match=says):
            parse_answer(task, question, item, mqm({"start": 0, "end": 1, "severity": "minor", **bad}))


def test_an_answer_and_its_spans_are_stored_once_with_the_log(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, "min_score_without_spans = 80"))
    question, item = question_for(loaded, task, "r0", ("mA", "mB"))
    value = {"spans": [[[{"start": 0, "end": 3, "severity": "minor"}]], [[]]], "scores": {"quality": [60, 95]},
             "actions": [{"t": 500, "action": "create", "output": 0, "segment": 0, "start": 0, "end": 3,
                          "severity": "minor"},
                         {"t": 900, "action": "score", "output": 1, "segment": 0, "scale": "quality", "value": 95},
                         {"t": 950, "action": "score", "output": 1, "segment": 0, "scale": [], "value": "x"},
                         {"t": -1, "action": "create"}, {"t": 5, "action": "explode"}]}
    with open_store(tmp_path / "r.sqlite") as store:
        session = store.create_session(study_version="v")
        low = {**value, "scores": {"quality": [60, 50]}}  # no spans on B, yet 50 < 80: asked once
        with pytest.raises(SurveyError, match="No errors are marked, yet the score is below 80"):
            record_spans(store, session, task, question, item, low, 100)
        assert store.answers() == []
        answer = record_spans(store, session, task, question, item, value, 1234)
        detail = answer.detail
        assert answer.response == "annotated" and detail["scores"] == {"quality": [60, 95]}
        # the malformed entries dropped, a score action's hostile scale and value left out
        assert [a["action"] for a in detail["actions"]] == ["create", "score", "score"]
        assert detail["actions"][1]["value"] == 95 and "scale" not in detail["actions"][2]
        [row] = store.spans()
        assert (row["system"], row["text"], row["segment"], row["item_id"]) == ("mA", "The", 0, "r0")
        confirmed = record_spans(store, session, task, replace(question, index=1), item,
                                 {**low, "confirmedNoSpans": True}, 10)
        assert confirmed.detail["confirmed_no_spans"] is True


def test_documents_segment_by_segment(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, 'score_per = "segment"'))
    question, item = question_for(loaded, task, "doc", ("mB",))
    value = {"spans": [[[{"start": 0, "end": 3, "severity": "major"}], [{"start": 0, "end": 3, "severity": "minor"}]]],
             "scores": {"quality": [[40, 70]]}, "actions": []}
    answer = parse_answer(task, question, item, value)
    assert [(r["segment"], r["text"]) for r in answer.rows] == [(0, "Won"), (1, "Too")]
    assert answer.scores == {"quality": [55.0]} and answer.segment_scores == {"quality": [[40, 70]]}
    with pytest.raises(SurveyError, match="segment scores do not match"):
        parse_answer(task, question, item, {**value, "scores": {"quality": [[40]]}})


# --------------------------------------------------------------------------- tutorials expecting spans


def test_a_tutorial_expecting_spans_says_what_is_missing(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, 'tutorial = ["tut1"]'))
    questions = plan(loaded.study, loaded.pools, 5, items=loaded.item_sets)
    tut = questions[0]
    assert tut.check is not None and tut.check.rule == "spans"
    item = loaded.item_sets[task.source.items].by_id("tut1")
    text = item.outputs["mA"]
    with open_store(tmp_path / "r.sqlite") as store:
        session = store.create_session(study_version="v")
        with pytest.raises(CheckFeedback) as wrong:
            record_spans(store, session, task, tut, item, {"spans": [[[]]], "scores": {"quality": [50]}}, 10)
        assert wrong.value.problems == (("", 'A minor error on "walked" is not marked yet.'),  # one output: no label
                                        ("", "The score should be between 75 and 85 (yours: 50)."))
        assert store.answers() == []
        major = {"start": text.index("walked"), "end": text.index("walked") + 6, "severity": "major"}
        with pytest.raises(CheckFeedback) as wrong:  # the right words with another severity: said so
            record_spans(store, session, task, tut, item, {"spans": [[[major]]], "scores": {"quality": [80]}}, 10)
        assert wrong.value.problems == (("", 'A minor error on "walked" is marked, but as major: change its severity '
                                             "to minor."),)
        walked = {"start": text.index("walked"), "end": text.index("walked") + 6, "severity": "minor"}
        answer = record_spans(store, session, task, tut, item, {"spans": [[[walked]]], "scores": {"quality": [80]}},
                              20)
        assert answer.check == "tutorial" and answer.check_passed is False  # right at the second try
        assert [r["text"] for r in store.spans()] == ["walked"]


@pytest.mark.shared_data
def test_pearmuts_esa_tutorial_gives_pearmuts_verdicts(tmp_path: Path) -> None:
    """Pearmut's own ESA tutorial, its ``validation`` written as evalkit checks: the answer Pearmut's tutorial asks
    for passes each item, and an answer without the expected spans fails exactly where Pearmut's validation does
    (an expected span unmet, or the score out of its range)."""
    source = json.loads((SHARED_DATA / "pearmut" / "tutorials" / "esa_deen.json").read_text(encoding="utf-8"))

    def flat(node: Any) -> list[dict]:  # a task's documents and a document's items are nested lists
        return [x for inner in node for x in flat(inner)] if isinstance(node, list) else [node]

    items = []
    for entry in flat(source["data"]):
        [(model, rule)] = entry["validation"].items()
        items.append({"id": entry["item_id"], "src": entry["src"], "tgt": entry["tgt"], "check": {
            "expect": {model: {k: rule[k] for k in ("score", "error_spans") if k in rule}},
            "feedback": rule["warning"]}})
    ids = [x["id"] for x in items]
    items += [{"id": f"x{i}", "src": "s", "tgt": {"model-tutorial": "t"}} for i in range(3)]
    loaded, task = task_of(_pearmut_config(tmp_path, items, ids))
    questions = {q.check.id: q for q in plan(loaded.study, loaded.pools, 1, items=loaded.item_sets) if q.check}
    assert set(questions) == set(ids)
    with open_store(tmp_path / "r.sqlite") as store:
        for entry in items[:len(ids)]:
            session = store.create_session(study_version="v")
            question = questions[entry["id"]]
            item = loaded.item_sets[task.source.items].by_id(entry["id"])
            rule = entry["check"]["expect"]["model-tutorial"]
            text = item.outputs["model-tutorial"]
            low, high = rule.get("score", [0, 100])
            expected = [{"start": s["start_i"][0] if isinstance(s["start_i"], list) else s["start_i"],
                         "end": min(len(text) + 1, (s["end_i"][1] if isinstance(s["end_i"], list) else s["end_i"]) + 1),
                         "severity": s["severity"]} for s in rule.get("error_spans", [])]
            wrong_score = 0 if low > 0 else 100
            with pytest.raises(CheckFeedback) as err:
                record_spans(store, session, task, question, item,
                             {"spans": [[[]]], "scores": {"quality": [wrong_score]}}, 1)
            lines = [line for _, line in err.value.problems]
            assert err.value.feedback == entry["check"]["feedback"]
            assert sum("is not marked yet" in line for line in lines) == len(expected)
            assert any(line.startswith("The score should be between") for line in lines) == (
                rule.get("score") is not None and not low <= wrong_score <= high)
            right = record_spans(store, session, task, question, item,
                                 {"spans": [[expected]], "scores": {"quality": [(low + high) // 2]}}, 1)
            assert right.check == "tutorial" and {r["text"] for r in store.spans(session.session_id)} == {
                text[s["start"]:s["end"]] + ("[missing]" if s["end"] > len(text) else "") for s in expected}


def _pearmut_config(tmp: Path, items: list[dict], ids: list[str]) -> Path:
    config = study(tmp, f"tutorial = {json.dumps(ids)}\nmissing_token = true", items=items, questions=1)
    config.write_text(config.read_text().replace('systems = ["mA", "mB"]', 'systems = ["model-tutorial"]'))
    return config


# --------------------------------------------------------------------------- what a hostile page cannot do


def test_a_flood_of_spans_or_actions_is_cheap_to_refuse(tmp_path: Path) -> None:
    """Twenty thousand spans are refused before any is read; a log of a million actions keeps its last 2,000 (each
    converted once per text, not by walking it); a score action's value beyond any float is dropped, not a crash."""
    loaded, task = task_of(study(tmp_path))
    question, item = question_for(loaded, task, "r0")
    flood = [{"start": 0, "end": 1, "severity": "minor"}] * 20_000
    with pytest.raises(SurveyError, match="more than 1000 spans on one output"):
        parse_answer(task, question, item, sent(*flood))
    actions = [{"t": 1, "action": "create", "output": 0, "segment": 0, "start": 0, "end": 3}] * 1_000_000
    actions.append({"t": 5, "action": "score", "output": 0, "segment": 0, "scale": "quality", "value": 10**400})
    answer = parse_answer(task, question, item, {**sent(), "actions": actions})
    assert len(answer.actions) == 2000 and "value" not in answer.actions[-1]


def test_the_server_decides_whether_a_suggestion_was_changed(tmp_path: Path) -> None:
    loaded, task = task_of(study(tmp_path, "prefill = true"))
    question, item = question_for(loaded, task, "r0")
    lie = parse_answer(task, question, item, sent({"start": 11, "end": 17, "severity": "minor",
                                                   "origin": "suggested-changed", "suggestion": 0}))
    assert [r["origin"] for r in lie.rows] == ["suggested-kept"]  # unchanged: kept, whatever the page says


def test_single_segment_questions_of_a_segment_scored_task_are_scored_once(tmp_path: Path) -> None:
    """score_per = "segment" scores a document per segment; an item of one segment (e.g. a practice question) has
    one score, as the widget sends it."""
    loaded, task = task_of(study(tmp_path, 'score_per = "segment"\ntutorial = ["tut1"]'))
    question, item = question_for(loaded, task, "r0")
    answer = parse_answer(task, question, item, sent(score=60))
    assert answer.scores == {"quality": [60]} and answer.segment_scores is None


@pytest.mark.parametrize(("items", "extra", "message"), [
    ([{**ITEMS[0], "error_spans": {"mA": [{"start_i": utf16(TEXT, len(TEXT)), "end_i": utf16(TEXT, len(TEXT)),
                                           "severity": "minor"}]}}, *ITEMS[1:]],
     "prefill = true", f"a suggested span of 'mA' does not fit this task: span {len(TEXT)}-{len(TEXT)} (minor) is not "
                       "within the text's 25 characters"),
    ([*ITEMS[:-1], {**ITEMS[-1], "check": {"expect": {"mA": {"score": 80}}}}], 'tutorial = ["tut1"]',
     "\"score\" must be [low, high] or {scale: [low, high]}, got 80"),
    ([*ITEMS[:-1], {**ITEMS[-1], "check": {"expect": {"mA": {}}}}], 'tutorial = ["tut1"]', "expects nothing"),
    ([*ITEMS[:-1], {**ITEMS[-1], "check": {"expect": {"mA": {"error_spans": []}}}}], 'tutorial = ["tut1"]',
     "expects nothing"),
    (None, 'protocol = "mqm"\nseverities = ["Minor", "Major"]', "severity 'Minor' has no MQM weight"),
])
def test_studies_that_could_not_be_answered_are_refused(tmp_path: Path, items: Any, extra: str, message: str) -> None:
    """A suggestion on the [missing] token of a task without one, a check expecting nothing or malformed, MQM
    severities without weights: named when the study opens, not found by evaluators."""
    with pytest.raises(ConfigError) as err:
        open_study(study(tmp_path, extra, items=items))
    assert message in str(err.value), str(err.value)


def test_a_check_can_forbid_spans_it_does_not_expect(tmp_path: Path) -> None:
    """Pearmut allows any extra span; ``"extra_spans": false`` (evalkit's) makes a practice question that says "mark
    nothing here" or "delete the wrong suggestion" mean it, and names the span that should not be there."""
    strict = {"id": "tut1", "src": "Der Hund ist rausgerannt.", "tgt": {"mA": "The dog ran outside."},
              "check": {"expect": {"mA": {"score": [90, 100], "error_spans": [], "extra_spans": False}},
                        "feedback": "This translation is right: mark nothing."}}
    loaded, task = task_of(study(tmp_path, 'tutorial = ["tut1"]', items=[*ITEMS[:-1], strict]))
    tut = next(q for q in plan(loaded.study, loaded.pools, 5, items=loaded.item_sets) if q.check)
    item = loaded.item_sets[task.source.items].by_id("tut1")
    with open_store(tmp_path / "r.sqlite") as store:
        session = store.create_session(study_version="v")
        with pytest.raises(CheckFeedback) as wrong:
            record_spans(store, session, task, tut, item, {"spans": [[[{"start": 4, "end": 7, "severity": "minor"}]]],
                                                           "scores": {"quality": [95]}}, 10)
        assert wrong.value.problems == (("", '"dog" is marked, but is not an error here.'),)
        answer = record_spans(store, session, task, tut, item, {"spans": [[[]]], "scores": {"quality": [95]}}, 10)
        assert answer.check == "tutorial" and store.spans() == []
    with pytest.raises(ConfigError, match='"extra_spans" must be true or false'):
        bad = {**strict, "check": {"expect": {"mA": {"score": [90, 100], "extra_spans": "no"}}}}
        open_study(study(tmp_path / "b", 'tutorial = ["tut1"]', items=[*ITEMS[:-1], bad]))


@pytest.mark.shared_data
def test_the_examples_copy_of_pearmuts_tutorial_is_faithful() -> None:
    """examples/esa/datasets/pearmut_esa_tutorial.jsonl is Pearmut's ESA tutorial as an evalkit items file: the same
    ids, sources, outputs and expectations (its ``validation``: the score range and the expected spans), each
    ``warning`` as the feedback; and it loads."""
    from evalkit.items import load_items
    from tests.helpers import ROOT

    source = json.loads((SHARED_DATA / "pearmut" / "tutorials" / "esa_deen.json").read_text(encoding="utf-8"))

    def flat(node: Any) -> list[dict]:
        return [x for inner in node for x in flat(inner)] if isinstance(node, list) else [node]

    path = ROOT / "examples" / "esa" / "datasets" / "pearmut_esa_tutorial.jsonl"
    ours = {item.id: item for item in load_items(path)}
    theirs = flat(source["data"])
    assert list(ours) == [x["item_id"] for x in theirs]
    for x in theirs:
        item = ours[x["item_id"]]
        assert (item.input, dict(item.outputs)) == (x["src"], x["tgt"])
        [(model, rule)] = x["validation"].items()
        assert item.check["expect"] == {model: {k: rule[k] for k in ("score", "error_spans") if k in rule}}
        assert item.check["feedback"] == rule["warning"]


def test_the_issues_own_task_block_loads_as_written(tmp_path: Path) -> None:
    """The [[tasks]] block of the issue, word for word (an ESA task that also names MQM's categories): it loads,
    ESA takes no categories, and `evalkit check` says the key is ignored."""
    (tmp_path / "datasets").mkdir()
    items = [{"id": f"i{k}", "src": "Quelle.", "tgt": {"modelA": "Source a.", "modelB": "Source b."}}
             for k in range(12)]
    (tmp_path / "datasets" / "mt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    (tmp_path / "config.toml").write_text('''
[study]
title = "The issue's block"
database = "r.sqlite"

[[tasks]]
kind = "spans"
id = "esa"
items = "datasets/mt.jsonl"          # items as today (input, outputs, reference, metrics), plus error_spans and documents below
systems = ["modelA", "modelB"]
questions = 10
protocol = "esa"                     # "esa": spans with a severity, then the scales; "mqm": spans with severity and category
severities = ["minor", "major"]      # default; MQM studies often add "critical"; an optional "neutral"
categories = "mqm-core"              # mqm: "mqm-core" (the standard top level with subcategories), a table
                                     # { Accuracy = ["Mistranslation", "Omission"], Fluency = [] }, or "free" (typed in)
missing_token = true                 # a "[missing]" token after the text, to mark omissions
word_level = false                   # true: span ends snap to word boundaries
prefill = true                       # ESA-AI: an item's error_spans are shown as suggestions to keep, change or delete
outputs_per_question = 1             # n > 1: n outputs of one item side by side, each annotated (contrastive ESA)
min_score_without_spans = 80         # a score below this with no span asks "no errors marked: are you sure?" once
[[tasks.scales]]                     # the scales of the score kind, asked after the spans (ESA: one 0-100 slider)
id = "quality"
type = "slider"
''', encoding="utf-8")  # noqa: E501 - the issue's lines as written
    loaded, task = task_of(tmp_path / "config.toml")
    assert (task.protocol, task.severities, task.categories, task.missing_token, task.prefill) == (
        "esa", ("minor", "major"), None, True, True)
    assert task.min_score_without_spans == 80 and [s.id for s in task.scales] == ["quality"]
    assert any("key 'categories' applies to protocol = \"mqm\" only" in w for w in loaded.warnings())
    _, mqm = task_of(study(tmp_path / "b", 'protocol = "mqm"\ncategories = "mqm-core"'))
    assert mqm.categories == dict(MQM_CORE)
