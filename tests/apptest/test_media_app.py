"""AppTest tests of items whose input or outputs are images and audio clips (:mod:`evalkit.media`): every items
kind draws them without an exception and without the file's path, its name or a system's name anywhere in what
reaches the browser; the players' play logs reach the answer's ``detail["media"]``; ``require_full_play`` refuses
an answer whose clips were not played to the end (nothing stored, the evaluator told why).

The players run no JavaScript here: what a browser's player sends (its state ``events``) is added to the widget
states of the run that submits, as Streamlit's frontend does (:func:`with_events`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lxml.html
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from evalkit.balance import arrival_of
from evalkit.sampling import plan
from tests.apptest.component import component, component_data, components, send_trigger, trigger_state
from tests.apptest.conftest import Harness, button, page_protos, texts
from tests.apptest.fragments import fragment_reruns
from tests.media_study import SYSTEMS, media_study

EVENTS = [{"action": "play", "t": 900, "at": 0.0}, {"action": "pause", "t": 1200, "at": 0.3},
          {"action": "seek", "t": 1300, "at": 0.1}, {"action": "play", "t": 1400, "at": 0.1},
          {"action": "ended", "t": 1900, "at": 0.6}]


def start(h: Harness):
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    button(at, "Begin").click().run()
    assert not at.exception, at.exception
    return at


def questions(h: Harness, at) -> list[Any]:
    session = h.store.get_session(at.query_params["s"])
    loaded = h.loaded
    return [q for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))
            if q.task == "block"]


def assert_nothing_leaks(at, folder: Path) -> None:
    """No system name, file name, media path or folder of the server in anything sent to the browser."""
    sent = page_protos(at)
    for secret in (*SYSTEMS, str(folder), "media/pic", "media/clip", "media/in", "pic0x", "clip0x", "itemMv"):
        assert secret not in sent, secret


def images(at) -> list[tuple[str, str]]:
    """(src, alt) of every image drawn (an ``<img>`` in an ``st.html``), in page order."""
    found: list[tuple[str, str]] = []

    def walk(node: Any) -> None:
        if getattr(node, "type", None) == "html" and "evalkit-image" in node.proto.body:
            for img in lxml.html.fragment_fromstring(node.proto.body, create_parent=True).iter("img"):
                found.append((img.get("src"), img.get("alt")))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def players(at) -> list[Any]:
    return [c for c in components(at) if c.proto.component_name == "evalkit_media"]


def with_events(at, events: dict[str, list[dict[str, Any]]]) -> list[WidgetState]:
    """The page's widget states with each player's log (by clip: "input", "A", "B", ...) as its state."""
    states = at._tree.get_widget_states()
    for player in players(at):
        clip = json.loads(player.proto.json)["clip"].rsplit("-", 1)[-1]
        if clip in events:
            states.widgets.append(WidgetState(id=player.proto.id, json_value=json.dumps({"events": events[clip]})))
    return states


@pytest.mark.parametrize(("task", "kind"), [
    ("compare", "image"), ("compare", "audio"), ("compare-slider", "image"), ("score", "image"), ("score", "audio"),
    ("score-two", "image"), ("score-two", "audio"), ("rank", "image"), ("rank-best", "audio"), ("realfake", "image"),
    ("realfake", "audio"), ("spans", "image"), ("spans", "audio")])
def test_every_kind_draws_media_without_leaking_paths(make_harness, tmp_path: Path, task: str, kind: str) -> None:
    folder = tmp_path / "study"
    h = make_harness(config=media_study(folder, task, kind, media_input=task == "score"))
    at = start(h)
    assert "Question 1 of 2" in at.get("progress")[0].proto.text
    assert_nothing_leaks(at, folder)
    q = questions(h, at)[0]
    n = len(q.sources)
    if kind == "image":
        shown = images(at)
        assert len(shown) == n + (1 if task == "score" else 0)
        for src, alt in shown:  # the file as it is (a PNG, not re-encoded), under Streamlit's name for it
            assert "/media/" in src and src.endswith(".png"), src
            assert alt.startswith(("Output", "The input picture")), alt
        assert not players(at)
    else:
        shown = players(at)
        assert len(shown) == n
        for player in shown:
            data = json.loads(player.proto.json)
            assert data["type"] == "audio" and "/media/" in data["src"] and data["src"].endswith(".wav")
            assert data["alt"].startswith("Output")
    if task == "spans":  # the widget says the output cannot be marked; it gets no text to mark
        data = component_data(at, "block-0-spans")
        segments = data["outputs"][0]["segments"]
        assert segments[0]["text"] == "" and "cannot be marked" in segments[0]["media"]


def test_a_choice_stores_the_play_log(make_harness, tmp_path: Path) -> None:
    h = make_harness(config=media_study(tmp_path / "study", "compare", "audio"))
    at = start(h)
    q = questions(h, at)[0]
    at.radio(key="block-0-choice").set_value("B")
    button(at, "Next").click()
    states = with_events(at, {"A": EVENTS, "B": EVENTS[:1]})  # the click, the players' logs with it (one submit)
    with fragment_reruns(at):
        at._run(states)
    assert not at.exception
    [answer] = h.store.answers(task="block")
    assert answer.response == "B"
    log = answer.detail["media"]
    assert [e["action"] for e in log] == ["media_play", "media_pause", "media_seek", "media_play", "media_ended",
                                          "media_play"]
    assert {e["model"] for e in log[:5]} == {q.sources[0]} and log[5]["model"] == q.sources[1]
    assert log[0]["src"].startswith("media/clip") and log[4]["media_time"] == 0.6 and log[4]["time"] == 1900


def test_full_play_required_refuses_until_each_clip_ended(make_harness, tmp_path: Path) -> None:
    h = make_harness(config=media_study(tmp_path / "study", "score", "audio", keys="require_full_play = true\n"))
    at = start(h)
    answer = {"scores": {"quality": [4]}, "texts": None}
    at = send_trigger(at, "block-0-scores", "submit", answer)
    assert not at.exception
    assert not h.store.answers(task="block")  # refused: never played
    assert "Please play Response to the end before answering" in texts(at)
    # played, paused, not to the end: refused again
    states = with_events(at, {"A": EVENTS[:2]})
    states.widgets.append(trigger_state(component(at, "block-0-scores").proto.id, "submit", answer))
    with fragment_reruns(at):
        at._run(states)
    assert not h.store.answers(task="block")
    states = with_events(at, {"A": EVENTS})
    states.widgets.append(trigger_state(component(at, "block-0-scores").proto.id, "submit", answer))
    with fragment_reruns(at):
        at._run(states)
    assert not at.exception
    [stored] = h.store.answers(task="block")
    assert stored.detail["scores"] == {"quality": [4]}
    assert stored.detail["media"][-1]["action"] == "media_ended"


def test_a_missing_file_says_so_without_its_path(make_harness, tmp_path: Path) -> None:
    folder = tmp_path / "study"
    h = make_harness(config=media_study(folder, "realfake", "image"))
    at = h.app()  # the study opens (and checks its files)
    for png in (folder / "media").glob("*.png"):  # then they go
        png.unlink()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    button(at, "Begin").click().run()
    assert not at.exception
    assert "This file cannot be shown" in texts(at)
    assert_nothing_leaks(at, folder)

