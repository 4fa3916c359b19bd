"""AppTest of the small pieces a Pearmut campaign needs (issue 28): an item's ``instructions`` shown above its
question as safe Markdown (never HTML), ``[study] blind = false`` naming each output's system in its card (and no
name anywhere by default), and ``[study] done_message`` on the done screen with its placeholders filled in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.apptest.component import component_data
from tests.apptest.conftest import Harness, button, cards, leaves, page_protos
from tests.apptest.test_item_kinds import HEAD, plan_of, start, task_toml
from tests.apptest.test_spans_app import study as spans_study

SYSTEMS = ("sysAlphaX1", "sysBetaY2", "sysGammaZ3")
HOSTILE = ('<b>Read carefully</b> <script>alert("boom")</script><img src=x onerror="alert(2)" alt="a picture"> '
           '&lt;u&gt; <a href="javascript:alert(3)">bad link</a> <a href="https://example.org/guide">the guide</a>'
           '<iframe src="https://evil.example/"></iframe><p style="position:fixed">para</p>')
SHOWN = ("**Read carefully** a picture \\<u\\> bad link [the guide](https://example.org/guide)\n\npara")


def items_study(tmp: Path, task: str, *, study_keys: str = "", instructions: bool = True) -> Path:
    """A study of one block over 6 items of SYSTEMS (with HOSTILE instructions unless ``instructions`` is False);
    ``study_keys`` go into [study]."""
    data = tmp / "datasets"
    data.mkdir(parents=True)
    with open(data / "items.jsonl", "w", encoding="utf-8") as fh:
        for k in range(6):
            item: dict[str, Any] = {"id": f"itemQv{k}Zr", "input": f"Input {k}.",
                                    "outputs": {s: f"Output {k} of {s[:3]}." for s in SYSTEMS}}
            if instructions:
                item["instructions"] = HOSTILE
            fh.write(json.dumps(item) + "\n")
    config = tmp / "config.toml"
    config.write_text(HEAD + study_keys + task, encoding="utf-8")
    return config


def no_system_names(at: Any) -> None:
    sent = page_protos(at) + repr(dict(at.query_params))
    assert not [s for s in SYSTEMS if s in sent]


# ----------------------------------------------------------------------------- instructions


def test_an_items_instructions_show_above_its_question_as_safe_markdown(make_harness, tmp_path) -> None:
    h = make_harness(config=items_study(tmp_path, task_toml("compare", questions=2)))
    at = start(h)
    [box] = at.info
    assert box.value == SHOWN
    kinds = [kind for kind, _ in leaves(at)]  # under the question, above the item's input and the outputs' cards
    assert kinds[:6] == ["progress", "subheader", "info", "markdown", "text", "html"]
    assert at.subheader[0].value == "Which response is better?" and at.markdown[0].value == "**Input**"
    sent = page_protos(at)
    for bad in ("<script", "alert(", "onerror", "javascript", "<iframe", "evil.example", "position:fixed", "<img"):
        assert bad not in sent, bad
    no_system_names(at)


def test_no_box_for_an_item_without_instructions(make_harness, tmp_path) -> None:
    h = make_harness(config=items_study(tmp_path, task_toml("rank", questions=1), instructions=False))
    at = start(h)
    assert not at.info and at.subheader[0].value == "Which response is best?"


def test_a_documents_segment_instructions_above_the_span_widget(make_harness, tmp_path) -> None:
    """A Pearmut document (a line that is an array) whose segments each have instructions: all are shown above the
    widget, each under its segment's number, as the widget numbers them."""
    doc = [{"item_id": "docQv", "src": "Eins.", "tgt": {"sysAlphaX1": "One.", "sysBetaY2": "Won."},
            "instructions": "<b>Step 1:</b> set 100%."},
           {"item_id": "docQv_1", "src": "Zwei.", "tgt": {"sysAlphaX1": "Two.", "sysBetaY2": "Too."},
            "instructions": "<b>Step 2:</b> mark <u>Too</u>."}]
    h = make_harness(config=spans_study(tmp_path, "questions = 1", items=[doc]))  # type: ignore[list-item]
    at = start(h)
    assert [box.value for box in at.info] == ["**Segment 1:** **Step 1\\:** set 100%\\.\n\n"
                                              "**Segment 2:** **Step 2\\:** mark *Too*\\."]
    assert component_data(at, "block-0-spans")["outputs"][0]["segments"][1]["source"] == "Zwei."


# ----------------------------------------------------------------------------- [study] blind


def test_blind_false_names_each_outputs_system_in_its_card(make_harness, tmp_path) -> None:
    h = make_harness(config=items_study(tmp_path, task_toml("compare", questions=2), study_keys="blind = false\n"))
    at = start(h)
    q0, _ = plan_of(h, at)
    assert [label for label, _ in cards(at)] == [f"Response A · {q0.sources[0]}", f"Response B · {q0.sources[1]}"]
    assert at.radio(key="block-0-choice").options == ["Response A", "Response B"]  # the options keep the letters
    at.radio(key="block-0-choice").set_value("B")
    button(at, "Next").click().run()
    [answer] = h.store.answers(task="block")
    assert answer.review_source == q0.sources[1]


def test_blind_false_in_score_rank_realfake_and_spans(make_harness, tmp_path) -> None:
    slider = {"id": "overall", "type": "slider"}
    keys = "blind = false\n"
    h = make_harness(config=items_study(tmp_path / "score1", task_toml("score", questions=1, scales=[slider]),
                                        study_keys=keys))
    at = start(h)
    [q] = plan_of(h, at)
    assert f"**Response · {q.sources[0]}**" in [m.value for m in at.markdown]  # one output: its card
    h = make_harness(config=items_study(tmp_path / "score3", task_toml("score", questions=1, outputs_per_question=3,
                                                                        scales=[slider]), study_keys=keys))
    at = start(h)
    [q] = plan_of(h, at)
    headings = [f"Response {label} · {system}" for label, system in zip(q.labels, q.sources, strict=True)]
    assert [label for label, _ in cards(at)] == headings
    assert [o["heading"] for o in component_data(at, "block-0-scores")["outputs"]] == headings
    h = make_harness(config=items_study(tmp_path / "rank", task_toml("rank", questions=1, response="ranking"),
                                        study_keys=keys))
    at = start(h)
    [q] = plan_of(h, at)
    shown = [m.value for m in at.markdown]
    assert all(f"**Response {label} · {name}**" in shown for label, name in zip(q.labels, q.sources, strict=True))
    h = make_harness(config=items_study(tmp_path / "turing", task_toml("realfake", target=SYSTEMS[0], questions=2),
                                        study_keys=keys))
    at = start(h)
    q = plan_of(h, at)[0]
    assert f"**The text · {q.sources[0]}**" in [m.value for m in at.markdown]
    config = spans_study(tmp_path / "spans", "questions = 1\noutputs_per_question = 2")
    config.write_text(config.read_text(encoding="utf-8").replace("seed = 7\n", "seed = 7\nblind = false\n", 1),
                      encoding="utf-8")
    h = make_harness(config=config)
    at = start(h)
    [q] = plan_of(h, at)
    assert [o["heading"] for o in component_data(at, "block-0-spans")["outputs"]] == [
        f"Translation {label} · {system}" for label, system in zip(q.labels, q.sources, strict=True)]


def test_blind_by_default_no_name_reaches_the_browser(make_harness, tmp_path) -> None:
    slider = {"id": "overall", "type": "slider"}
    for kind, keys in (("compare", {}), ("score", {"outputs_per_question": 3, "scales": [slider]}),
                       ("rank", {"response": "ranking"}), ("realfake", {"target": SYSTEMS[0]})):
        h = make_harness(config=items_study(tmp_path / kind, task_toml(kind, questions=1, **keys)))
        at = start(h)
        no_system_names(at)
        assert all(" · " not in label for label, _ in cards(at))
    config = spans_study(tmp_path / "spans", "questions = 1\noutputs_per_question = 2")
    at = start(make_harness(config=config))
    assert [o["heading"] for o in component_data(at, "block-0-spans")["outputs"]] == ["Translation A", "Translation B"]


# ----------------------------------------------------------------------------- [study] done_message


def test_the_done_screen_shows_the_message_with_the_code_and_the_participant(make_harness, tmp_path) -> None:
    message = "Dear ${USER_ID}: you did well and deserve this token **${TOKEN}** (again: {code}, {participant})."
    config = items_study(tmp_path, task_toml("compare", questions=1),
                         study_keys=f"done_message = {json.dumps(message)}\n")
    h: Harness = make_harness(config=config)
    at = h.app(PROLIFIC_PID="pid_*7*", STUDY_ID="st1", SESSION_ID="se1")
    at.checkbox(key="consent_agree").check()
    at.button[0].click().run()
    button(at, "Begin").click().run()
    at.radio(key="block-0-choice").set_value("A")
    button(at, "Next").click().run()
    assert not at.exception and at.title[0].value == "Thank you!"
    session = h.store.get_session(at.query_params["s"])
    code = session.completion_code
    assert code and session.external_id == "pid_*7*"
    escaped = code.replace("_", "\\_").replace("-", "\\-")
    assert (f"Dear pid\\_\\*7\\*: you did well and deserve this token **{escaped}** (again: {escaped}, "
            "pid\\_\\*7\\*).") in [m.value for m in at.markdown]
    assert "You have finished the study" not in [m.value for m in at.markdown]
    assert [c.value for c in at.code] == [code]  # the code box as before, under the message
    drawn = [value for _, value in leaves(at)]
    assert drawn.index("Your completion code:") > next(k for k, v in enumerate(drawn) if str(v).startswith("Dear "))


def test_the_done_screen_without_a_message_is_as_before(make_harness, tmp_path) -> None:
    h = make_harness(config=items_study(tmp_path, task_toml("compare", questions=1)))
    at = start(h)
    at.radio(key="block-0-choice").set_value("A")
    button(at, "Next").click().run()
    assert at.title[0].value == "Thank you!"
    assert "You have finished the study and all your answers are saved. You can close this page." in [
        m.value for m in at.markdown]
