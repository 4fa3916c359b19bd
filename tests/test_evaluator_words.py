"""The words and config keys behind "Evaluator screens, as a new user saw them": a task's ``input_label`` and
``output_label`` (accepted by ``check``, a clear ConfigError for a wrong value, defaults as before), the messages
that name the outputs by them, the HELP buttons' words, ``check``'s warning for a study without a consent text,
and GraphMind's graph for a phone. (The screens themselves: tests/apptest/test_evaluator_screens.py and
tests/e2e/test_evaluator_screens.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.config import ConfigError, load_study, open_study
from evalkit.rating_items import load_rating_items
from evalkit.sampling import Question
from evalkit.tasks.base import SurveyError
from evalkit.tasks.rank import best_missing, order_from_places, place_label, place_problems
from evalkit.tasks.rating import compact_dot_graph, dot_graph
from evalkit.tasks.realfake import realfake_marks
from evalkit.tasks.responses import SLIDER_LABELS, choice_missing, in_sentence, plural
from evalkit.tasks.score import missing_mark, missing_summary
from tests.apptest.test_item_kinds import SLIDER, study, task_toml
from tests.helpers import ROOT

# ----------------------------------------------------------------------------- input_label / output_label


@pytest.mark.parametrize("kind, keys, output", [
    ("compare", {}, "Response"), ("score", {"scales": [SLIDER]}, "Response"), ("rank", {}, "Response"),
    ("realfake", {"target": "sysAlphaX1"}, "The text")])
def test_the_labels_default_to_todays_words(tmp_path: Path, kind: str, keys: dict, output: str) -> None:
    [task] = load_study(study(tmp_path, task_toml(kind, questions=1, **keys), after=False)).tasks
    assert (task.input_label, task.output_label) == ("Input", output)


def test_the_labels_are_read_for_every_items_kind_and_shape_the_default_question(tmp_path: Path) -> None:
    labels = {"input_label": "News text", "output_label": "Headline"}
    tasks = [task_toml(kind, questions=1, **labels, **extra).replace('id = "block"', f'id = "{kind}"')
             for kind, extra in (("compare", {}), ("score", {"scales": [SLIDER]}), ("rank", {}),
                                 ("rank", {"response": "ranking"}), ("realfake", {"target": "sysAlphaX1"}))]
    tasks[3] = tasks[3].replace('id = "rank"', 'id = "ranking"')
    loaded = open_study(study(tmp_path, "".join(tasks), after=False))
    assert {(t.input_label, t.output_label) for t in loaded.study.tasks} == {("News text", "Headline")}
    assert [t.question for t in loaded.study.tasks[:4]] == [
        "Which headline is better?", "How good is this headline?", "Which headline is best?",
        "Order the headlines from best to worst."]


def test_check_accepts_the_labels_of_the_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for example, want in (("best-of-3", ("News text", "Headline")), ("turing", ("Forum question", "Answer")),
                          ("help", ("Customer review", "Reply")), ("direct-assessment", ("News text", "Summary"))):
        config = ROOT / "examples" / example / "config.toml"
        [task] = [t for t in load_study(config).tasks if hasattr(t, "output_label")]
        assert (task.input_label, task.output_label) == want
        assert main(["check", str(config), "--samples", "2"]) == 0
        assert "OK: the study is valid." in capsys.readouterr().out


@pytest.mark.parametrize("value, problem", [
    ("3", "key 'output_label': must be a string, got an integer"),
    ("true", "key 'output_label': must be a string, got a boolean"),
    ('["Reply"]', "key 'output_label': must be a string, got a list"),
    ('"  "', "key 'output_label': must not be empty"),
    ('"' + "x" * 41 + '"', "key 'output_label': must be at most 40 characters (a card's heading), got 41"),
])
def test_a_wrong_label_is_a_clear_config_error(tmp_path: Path, value: str, problem: str) -> None:
    config = study(tmp_path, task_toml("compare", questions=1), after=False)
    config.write_text(config.read_text().replace('kind = "compare"', f'kind = "compare"\noutput_label = {value}'))
    with pytest.raises(ConfigError) as err:
        load_study(config)
    assert str(err.value) == f"config.toml: [[tasks]] #1 (id 'block'): {problem}"
    config.write_text(config.read_text().replace(f"output_label = {value}", "input_label = 7"))
    with pytest.raises(ConfigError, match=r"key 'input_label': must be a string, got an integer"):
        load_study(config)


def test_the_labels_are_only_for_tasks_with_cards(tmp_path: Path) -> None:
    config = ROOT / "examples" / "cera" / "config.toml"
    text = config.read_text(encoding="utf-8").replace('kind = "triplet"', 'kind = "triplet"\noutput_label = "Text"')
    (tmp_path / "config.toml").write_text(text.replace("../../", str(ROOT) + "/"), encoding="utf-8")
    with pytest.raises(ConfigError, match="key 'output_label': is not a known setting"):
        load_study(tmp_path / "config.toml")


def question(n: int = 3) -> Question:
    return Question(task="t", kind="rank", index=0, slot=0, domain="", review_ids=("i",) * n,
                    sources=tuple(f"s{k}" for k in range(n)), texts=tuple("x" * n), matched=True)


def test_the_messages_name_the_outputs_by_the_label() -> None:
    assert [plural(w) for w in ("Response", "Reply", "Summary", "News text", "Box", "Day")] == [
        "Responses", "Replies", "Summaries", "News texts", "Boxes", "Days"]
    assert [in_sentence(w) for w in ("Reply", "LLM answer", "A")] == ["reply", "LLM answer", "a"]
    q = question()
    assert choice_missing(q) == ("Please choose one of the responses (Response A, Response B or Response C) before "
                                 "continuing.")
    assert choice_missing(q, noun="Headline") == ("Please choose one of the headlines (Headline A, Headline B or "
                                                  "Headline C) before continuing.")
    assert place_label("B", "Headline") == "Place of headline B"
    assert place_problems("ABC", {"A": 1, "B": 1, "C": None}, "Headline") == {
        "A": "Headline B is 1st (best) too: each headline needs its own place.",
        "B": "Headline A is 1st (best) too: each headline needs its own place.",
        "C": "Please choose a place for headline C in “Place of headline C”."}
    with pytest.raises(SurveyError, match=r"^Please give headlines A and C a place in the ranking \(1st to 3rd\)\.$"):
        order_from_places("ABC", {"B": 1}, "Headline")
    with pytest.raises(SurveyError, match=r"^Headlines A and B are both 2nd: please give each headline its own"):
        order_from_places("ABC", {"A": 2, "B": 2, "C": 1}, "Headline")

    class Best:
        output_label = "Reply"

    best = best_missing(Best(), "AB")  # type: ignore[arg-type]
    assert best == "Please choose the best reply (Reply A or Reply B) before continuing."
    slider = load_study(ROOT / "examples" / "direct-assessment" / "config.toml").tasks[0].scales[0]
    two = question(2)
    assert missing_mark(two, 1, slider, "Summary").startswith("The slider 'Overall quality (0-100)' for summary B ")
    assert missing_summary(two, [(0, slider)], "Summary").startswith(
        "1 score is still missing (Overall quality (0-100) for summary A)")


def test_each_unanswered_real_or_generated_question_has_its_own_mark() -> None:
    task = load_study(ROOT / "examples" / "turing" / "config.toml").tasks[0]
    assert realfake_marks(task, None, None) == {
        "answer": "Please say whether the text was written by a person or generated (“Who wrote this text?”).",
        "confidence": "Please say how sure you are (“How sure are you?”) before continuing."}
    assert list(realfake_marks(task, "real", None)) == ["confidence"]
    assert realfake_marks(task, "generated", 2) == {}


# ----------------------------------------------------------------------------- HELP words, consent, GraphMind


def test_the_help_buttons_say_what_they_record_at_zero() -> None:
    assert SLIDER_LABELS == {"accept": "Accept: both are suitable", "reject": "Reject: both are unsuitable"}


def test_check_warns_that_a_study_has_no_consent_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = study(tmp_path, task_toml("compare", questions=1), after=False)  # no [study] consent
    assert main(["check", str(config), "--samples", "2"]) == 0
    out = capsys.readouterr()
    assert ("WARNING: The study has no consent text ([study] consent): evaluators are asked to agree to take part "
            "without being told what the study is") in out.err
    assert "OK: the study is valid. (with warnings, see above)" in out.out
    assert main(["check", str(config), "--samples", "2", "--strict"]) == 1
    capsys.readouterr()
    (tmp_path / "consent.md").write_text("You agree to take part.\n", encoding="utf-8")
    config.write_text(config.read_text().replace("[study]\n", '[study]\nconsent = "consent.md"\n', 1))
    assert main(["check", str(config), "--samples", "2", "--strict"]) == 0
    assert "no consent text" not in capsys.readouterr().err


def test_graphminds_graph_for_a_phone_is_narrow_and_shows_every_node() -> None:
    items = load_rating_items(ROOT / "examples" / "graphmind" / "papers.json", scale=(0, 1))
    for item in items:
        compact = compact_dot_graph(item)
        assert "rankdir=TB" in compact and "rankdir=LR" in dot_graph(item)
        keywords = [n for n in item.nodes if n.kind == "keyword"]
        # the title's keywords are one node listing them (so are other leaves of one type under the same parents,
        # e.g. two experiments of one method); every node's label is drawn once
        assert compact.count(" [label=") <= len(item.nodes) - len(keywords) + 1
        assert '[label="KEYWORDS\\n' in compact
        drawn = compact.replace("\\n", " ").replace("- ", "-")  # the labels as wrapped (12 characters a line)
        for n in item.nodes:
            assert n.label[:40].rsplit(" ", 1)[0] in drawn, n.label
        assert all(n.text not in compact for n in item.nodes if len(n.text) > 60)  # labels only: texts are below
