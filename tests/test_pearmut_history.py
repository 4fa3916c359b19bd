"""A running Pearmut campaign moved with its annotations (``import pearmut --with-annotations``), and evalkit's
``export pearmut`` of a finished study read back the same way: the same answers, spans and progress."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.analysis import items_of
from evalkit.config import open_study
from evalkit.pearmut_history import import_history, state_users
from evalkit.pearmut_import import PearmutError, import_campaign
from evalkit.sampling import plan
from evalkit.span_export import pearmut_jsonl
from evalkit.store import open_store
from tests.helpers import SHARED_DATA

EMOJI = "Nice 🙂 dog\nran away."  # an emoji (2 UTF-16 units) and a line break (no index) before "ran"


def esa_campaign() -> dict:
    doc = [{"item_id": "d1-0", "src": "Hund.", "tgt": {"m1": EMOJI, "m2": "The dog ran."}},
           {"item_id": "d1-1", "src": "Weg.", "tgt": {"m1": "Gone.", "m2": "Away."}}]
    single = [{"item_id": "d2", "src": "Katze.", "tgt": {"m1": "Cat.", "m2": "Kitty."}}]
    return {"campaign_id": "moving", "info": {"assignment": "task-based", "protocol": "ESA"},
            "data": [[doc, single], [single]]}


def line(user: str, item_i: object, annotation: object, item: list, *, skip: bool = False) -> dict:
    actions = [{"time": 1771311126.0, "action": "load"},
               {"time": 1771311186.5, "action": "submit_skip" if skip else "submit"}]
    return {"annotation": annotation, "actions": actions, "item": item, "user_id": user, "item_i": item_i}


def state(folder: Path, campaign: str, lines: list[dict], progress: dict | None = None) -> Path:
    (folder / "data" / "outputs").mkdir(parents=True)
    with open(folder / "data" / "outputs" / f"{campaign}.jsonl", "w", encoding="utf-8") as fh:
        for entry in lines:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    if progress is not None:
        (folder / "data" / "progress.json").write_text(json.dumps({campaign: progress}), encoding="utf-8")
    return folder


def answers_of(folder: Path) -> list[tuple]:
    """What a study's database holds, comparable across two studies: per user and item, the scores and spans."""
    loaded = open_study(folder / "config.toml")
    with open_store(loaded.study.database) as store:
        users = {s.session_id: s.external_id for s in store.sessions()}
        spans = {}
        for r in store.spans():
            spans.setdefault((r["session_id"], r["question_index"]), []).append(
                (r["system"], r["segment"], r["start_char"], r["end_char"], r["severity"], r["text"]))
        def by_system(a, key: str) -> object:  # (the display order differs between sessions)
            value = a.detail.get(key)
            if isinstance(value, dict):
                return {scale: dict(zip(a.sources, v, strict=True)) for scale, v in value.items()}
            return dict(zip(a.sources, value, strict=True)) if isinstance(value, list) else value

        return sorted((users[a.session_id], a.item_ids[0], a.question_index, json.dumps(
            {k: by_system(a, k) for k in ("scores", "segment_scores", "texts")}, sort_keys=True),
            tuple(sorted(spans.get((a.session_id, a.question_index), [])))) for a in store.answers())


def test_annotations_and_tokens_move_with_the_campaign(tmp_path: Path) -> None:
    path = tmp_path / "moving.json"
    path.write_text(json.dumps(esa_campaign()), encoding="utf-8")
    annotation = [
        {"m1": {"score": 40, "error_spans": [{"start_i": 11, "end_i": 13, "category": None, "severity": "major"},
                                              {"start_i": 20, "end_i": 20, "category": None, "severity": "minor"}],
                "textfield": None},
         "m2": {"score": 90, "error_spans": [], "textfield": None}},
        {"m1": {"score": 70, "error_spans": [], "textfield": None},
         "m2": {"score": 80, "error_spans": [{"start_i": 0, "end_i": 4, "category": None, "severity": "minor"}],
                "textfield": None}}]
    lines = [line("user-1", 0, [{"m1": {"score": 5, "error_spans": [], "textfield": None},
                                 "m2": {"score": 5, "error_spans": [], "textfield": None}}] * 2, []),
             {"user_id": "user-1", "item_i": 0, "annotation": "__RESET__"},  # a reset drops the line before it
             line("user-1", 0, annotation, []),
             line("user-2", 0, [{"m1": {"score": None, "error_spans": [], "textfield": None},
                                 "m2": {"score": None, "error_spans": [], "textfield": None}}], [], skip=True)]
    progress = {"user-1": {"progress": ["completed", None], "token_correct": "abc123", "token_incorrect": "def456"},
                "user-2": {"progress": [None], "token_correct": "ghi789", "token_incorrect": "jkl000"}}
    folder = state(tmp_path / "pearmut", "moving", lines, progress)
    assert state_users(folder, "moving") == ["user-1", "user-2"]
    result = import_campaign(path, tmp_path / "study", users=state_users(folder, "moving"))
    history = import_history(result, folder)
    assert history.answers == {"user-1": 1, "user-2": 0}
    assert any("skipped in Pearmut; evalkit asks it again" in s for s in history.skipped)
    rows = list(csv.reader((result.folder / "datasets/participants.csv").open()))
    assert rows[1:] == [["user-1", "abc123", "def456"], ["user-2", "ghi789", "jkl000"]]
    loaded = open_study(result.folder / "config.toml")
    with open_store(loaded.study.database) as store:
        session = store.find_session("user-1")
        assert session.participant_id == "user-1" and session.completed_at is None  # one document of two
        [answer] = store.answers(session.session_id)
        assert answer.item_ids[0] == "d1-0"
        assert answer.detail["segment_scores"] == {"quality": [[40, 70], [90, 80]]} or answer.detail[
            "segment_scores"] == {"quality": [[90, 80], [40, 70]]}
        spans: dict = {}
        for r in store.spans():
            spans.setdefault((r["system"], r["segment"]), []).append((r["start_char"], r["end_char"], r["text"]))
        # Pearmut's 11..13 ("ran", after the emoji's two units and no unit for the line break) in code points, and
        # its 20 (the UTF-16 units without the line break) the [missing] token after the text
        assert spans[("m1", 0)] == [(EMOJI.index("ran"), EMOJI.index("ran") + 3, "ran"),
                                    (len(EMOJI), len(EMOJI) + 1, "[missing]")]
        assert spans[("m2", 1)] == [(0, 5, "Away.")]
        questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, session.meta["arrival"],
                         "user-1")
        assert [q.index for q in questions if q.index not in store.answered(session.session_id, "main")] == [1]

    # evalkit's export of that study, moved again: the same answers
    with open_store(loaded.study.database) as store:
        exported = pearmut_jsonl(store, items_of(loaded))
    again = state(tmp_path / "again", "moving", [json.loads(x) for x in exported.splitlines()])
    second = import_campaign(path, tmp_path / "study2", users=state_users(again, "moving"))
    import_history(second, again)
    assert answers_of(second.folder) == answers_of(result.folder)


def test_a_da_document_asked_part_by_part_is_one_exported_line_and_comes_back(tmp_path: Path) -> None:
    doc = [{"item_id": f"s{j}", "src": f"Satz {j}.", "tgt": {"A": f"Sentence {j}.", "B": f"Phrase {j}."}}
           for j in range(3)]
    campaign = {"campaign_id": "da-move", "info": {"assignment": "task-based", "protocol": "DA",
                                                   "textfield": "visible"}, "data": [[doc]]}
    path = tmp_path / "da.json"
    path.write_text(json.dumps(campaign), encoding="utf-8")
    annotation = [{"A": {"score": 10 * j, "error_spans": [], "textfield": f"note {j}"},
                   "B": {"score": 50 + j, "error_spans": [], "textfield": ""}} for j in range(3)]
    folder = state(tmp_path / "pm", "da-move", [line("user-1", 0, annotation, doc)])
    result = import_campaign(path, tmp_path / "study")
    history = import_history(result, folder)
    assert history.answers == {"user-1": 3} and history.finished == ["user-1"]
    loaded = open_study(result.folder / "config.toml")
    with open_store(loaded.study.database) as store:
        assert store.find_session("user-1").completed_at is not None
        exported = [json.loads(x) for x in pearmut_jsonl(store, items_of(loaded)).splitlines()]
    [one] = exported  # three questions, one Pearmut document
    assert [x["item_id"] for x in one["item"]] == ["s0", "s1", "s2"]
    assert [a["A"]["score"] for a in one["annotation"]] == [0, 10, 20]
    assert [a["A"]["textfield"] for a in one["annotation"]] == ["note 0", "note 1", "note 2"]
    assert one["actions"][0]["action"] == "load" and one["actions"][-1]["action"] == "submit"
    assert [a["action"] for a in one["actions"]].count("submit") == 1
    again = state(tmp_path / "again", "da-move", exported)
    second = import_campaign(path, tmp_path / "study2")
    import_history(second, again)
    assert answers_of(second.folder) == answers_of(result.folder)


def test_a_broken_log_and_a_missing_one_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "moving.json"
    path.write_text(json.dumps(esa_campaign()), encoding="utf-8")
    result = import_campaign(path, tmp_path / "study")
    with pytest.raises(PearmutError, match="no annotation log of campaign 'moving'"):
        import_history(result, tmp_path)
    folder = tmp_path / "pm"
    (folder / "data" / "outputs").mkdir(parents=True)
    log = folder / "data" / "outputs" / "moving.jsonl"
    log.write_text('{"user_id": "user-1", "item_i": 0, "annotation": []}\n{oops\n')
    with pytest.raises(PearmutError, match=r"moving.jsonl, line 2: not valid JSON"):
        import_history(result, folder)
    for bad in ('{"user_id": ["x"], "item_i": 0, "annotation": []}', '{"user_id": "u", "item_i": 0, "annotation": [1]}',
                '{"user_id": "u", "item_i": 0, "annotation": [], "actions": 5}'):
        log.write_text(bad + "\n")
        with pytest.raises(PearmutError, match=r"moving.jsonl, line 1: "):
            import_history(result, folder)
    log.write_bytes(b"\xff\xfe\n")
    with pytest.raises(PearmutError, match="cannot be read as UTF-8"):
        import_history(result, folder)
    log.write_text('{"user_id": "user-1", "item_i": 0, "annotation": [{"m1": {"score": "high"}}]}\n')
    (folder / "data" / "progress.json").write_text('{"moving": "broken"}')
    with pytest.raises(PearmutError, match="a progress file holds"):
        import_history(result, folder)
    (folder / "data" / "progress.json").unlink()
    history = import_history(result, folder)  # a line of another shape than its item: named, not stored
    assert history.answers == {"user-1": 0} and "item 'd1-0'" in history.skipped[0]


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["example_contrastive", "example_singlestream", "example_multimodal"])
def test_pearmuts_saved_state_moves(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    cache = SHARED_DATA / "pearmut" / "annotated_cache"
    status = main(["import", "pearmut", str(cache / "data" / "tasks" / f"{name}.json"), "--out",
                   str(tmp_path / "s"), "--with-annotations", str(cache), "--allow-remote-media"])
    out = capsys.readouterr().out
    assert status == 0, out
    logged = [json.loads(x) for x in (cache / "data" / "outputs" / f"{name}.jsonl").open()]
    scored = {(e["user_id"], str(e["item_i"])) for e in logged
              if not any(a["action"] == "submit_skip" for a in e["actions"])}
    loaded = open_study(tmp_path / "s" / "config.toml")
    with open_store(loaded.study.database) as store:
        users = {s.session_id: s.external_id for s in store.sessions()}
        stored = store.answers()
        assert {users[a.session_id] for a in stored} == {u for u, _ in scored}
        if name == "example_singlestream":  # every document judged, a document served twice judged twice
            assert len(stored) == len(scored)
        elif name == "example_multimodal":  # done in Pearmut: finished here, with the token Pearmut would show
            progress = json.loads((cache / "data" / "progress.json").read_text())[name]
            [session] = store.sessions()
            assert session.completed_at is not None
            assert session.completion_code == progress[session.external_id]["token_correct"]
        else:
            assert len(stored) == 1
            spans = store.spans()
            [entry] = logged
            marked = sum(len(v["error_spans"]) for seg in entry["annotation"] for v in seg.values())
            assert len([r for r in spans if r["origin"] == "added"]) == marked
