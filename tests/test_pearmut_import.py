"""``evalkit import pearmut``: Pearmut's example campaigns become study folders that load and give each user their
documents; every key is mapped or refused with a message naming it."""

from __future__ import annotations

import csv
import json
import tomllib
from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.config import open_study
from evalkit.pearmut_import import PearmutError, import_campaign
from evalkit.sampling import plan
from tests.helpers import SHARED_DATA

PEARMUT = SHARED_DATA / "pearmut"
CAMPAIGNS = ["attention_checks", "da", "dynamic", "esa", "html", "likert_custom_scales", "mqm", "multimodal",
             "singlestream", "tutorials/esa_deen", "user_info_form"]


def write(tmp: Path, campaign: dict, name: str = "c.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(campaign), encoding="utf-8")
    return path


def campaign(**info: object) -> dict:
    """A small task-based ESA campaign of two users, the second document repeating an item id."""
    doc = [{"item_id": "a", "src": "Hallo Welt.", "tgt": {"m1": "Hello world.", "m2": "Hi world."}},
           {"item_id": "b", "src": "Gut.", "tgt": {"m1": "Good.", "m2": "Fine."}}]
    other = [{"item_id": "a", "src": "Anders.", "tgt": {"m1": "Other.", "m2": "Different."}}]
    return {"campaign_id": "demo", "info": {"assignment": "task-based", "protocol": "ESA", **info},
            "data": [[doc, other], [other]]}


@pytest.mark.shared_data
@pytest.mark.parametrize("name", CAMPAIGNS)
def test_every_example_campaign_imports_and_loads(tmp_path: Path, name: str) -> None:
    result = import_campaign(PEARMUT / f"{name}.json", tmp_path / "study", allow_remote_media=name == "multimodal")
    loaded = open_study(result.folder / "config.toml")
    assert loaded.study.tasks and result.users
    text = (result.folder / "IMPORT.md").read_text(encoding="utf-8")
    data = json.loads((PEARMUT / f"{name}.json").read_text(encoding="utf-8"))
    for key in data["info"]:  # every key is in the table
        assert f"`info.{key}`" in text
    ids = [json.loads(line)["id"] for line in (result.folder / "datasets/items.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids))


@pytest.mark.shared_data
def test_a_task_based_campaign_gives_each_user_exactly_their_documents_in_order(tmp_path: Path) -> None:
    data = json.loads((PEARMUT / "esa.json").read_text(encoding="utf-8"))
    result = import_campaign(PEARMUT / "esa.json", tmp_path / "study")
    loaded = open_study(result.folder / "config.toml")
    items = {json.loads(x)["id"]: json.loads(x) for x in (result.folder / "datasets/items.jsonl").open()}
    assert result.users == ["user-1", "user-2", "user-3", "user-4", "user-5"]
    for user, task in zip(result.users, data["data"], strict=True):
        questions = plan(loaded.study, loaded.pools, 5, loaded.item_sets, participant=user)
        assert len(questions) == len(task)
        for q, doc in zip(questions, task, strict=True):
            item = items[q.review_ids[0]]
            segments = item.get("segments") or [item]
            assert [s["input"] for s in segments] == [x["src"] for x in doc]
            assert [s["outputs"] for s in segments] == [x["tgt"] for x in doc]
            assert item["meta"]["pearmut"]["item_id"] == [x["item_id"] for x in doc]


def test_repeated_item_ids_get_unique_ids_and_keep_the_original(tmp_path: Path) -> None:
    result = import_campaign(write(tmp_path, campaign()), tmp_path / "study")
    lines = [json.loads(x) for x in (result.folder / "datasets/items.jsonl").open()]
    assert [x["id"] for x in lines] == ["a", "a~2"]  # the same document twice (two users) is one item
    assert lines[0]["meta"]["pearmut"]["item_id"] == ["a", "b"] and lines[1]["meta"]["pearmut"]["item_id"] == ["a"]
    rows = list(csv.reader((result.folder / "datasets/assignments.csv").open()))
    assert rows == [["participant_id", "item_id"], ["user-1", "a"], ["user-1", "a~2"], ["user-2", "a~2"]]
    loaded = open_study(result.folder / "config.toml")
    assert [q.review_ids[0] for q in plan(loaded.study, loaded.pools, 1, loaded.item_sets, participant="user-1")] == [
        "a", "a~2"]


def test_users_with_tokens_goodbye_text_model_names_and_threshold(tmp_path: Path) -> None:
    c = campaign(users=[{"user_id": "ann", "token_pass": "ok1", "token_fail": "no1"}, {"user_id": "bob"}],
                 instructions_goodbye="<b>Bye</b> ${USER_ID}: your token is ${TOKEN}.", show_model_names=True,
                 validation_threshold=0.25, shuffle=False)
    result = import_campaign(write(tmp_path, c), tmp_path / "study")
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    study, task = config["study"], config["tasks"][0]
    assert study["blind"] is False and study["quality"] == {"max_failed_checks": 0.25}
    assert "${USER_ID}" in study["done_message"] and "${TOKEN}" in study["done_message"]
    assert "**Bye**" in study["done_message"] and "<b>" not in study["done_message"]
    assert task["shuffle"] is False and task["assignment"] == "fixed"
    rows = list(csv.reader((result.folder / "datasets/participants.csv").open()))
    assert rows == [["participant_id", "code_pass", "code_fail"], ["ann", "ok1", "no1"], ["bob", "", ""]]
    assert open_study(result.folder / "config.toml").study.tasks


def test_validation_becomes_checks_loud_as_tutorial_silent_as_attention(tmp_path: Path) -> None:
    loud = {"item_id": "t1", "src": "x", "tgt": {"A": "good", "B": "bad"}, "instructions": "<i>Practice</i>",
            "validation": {"A": {"score": [70, 100], "warning": "A is <b>good</b>.", "allow_skip": True},
                           "B": {"score_greaterthan": "A", "warning": "B must be higher."}}}
    silent = {"item_id": "s1", "src": "y", "tgt": {"A": "ok", "B": "also ok"},
              "validation": {"A": {"score": [0, 40]}, "B": {"warning": "only words"}}}
    c = campaign()
    c["data_welcome"] = [[loud]]
    c["data"][0].insert(1, [silent])
    result = import_campaign(write(tmp_path, c), tmp_path / "study")
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    task = config["tasks"][0]
    assert task["tutorial"] == ["t1"] and task["attention_checks"] == ["s1"] and task["tutorial_skippable"]
    items = {json.loads(x)["id"]: json.loads(x) for x in (result.folder / "datasets/items.jsonl").open()}
    assert items["t1"]["check"]["expect"] == {"A": {"score": [70, 100], "feedback": "A is good."},
                                              "B": {"score_greaterthan": "A", "feedback": "B must be higher."}}
    assert items["s1"]["check"]["expect"] == {"A": {"score": [0, 40]}}  # B's rule checks nothing
    loaded = open_study(result.folder / "config.toml")
    questions = plan(loaded.study, loaded.pools, 3, loaded.item_sets, participant="user-1")
    # the tutorial first, then the list in order, its silent check where the list has it
    assert [(q.review_ids[0], q.check.type if q.check else None) for q in questions] == [
        ("t1", "tutorial"), ("a", None), ("s1", "attention"), ("a~2", None)]


def test_forms_sliders_and_textfield(tmp_path: Path) -> None:
    c = {"campaign_id": "da-demo", "info": {"assignment": "task-based", "protocol": "DA", "textfield": "prefilled",
                                             "sliders": [{"name": "Fluency", "min": 0, "max": 5, "step": 1},
                                                         {"name": "Adequacy", "min": 0, "max": 100, "step": 5}]},
         "data_welcome": [[{"text": "Hello <b>there</b>.", "form": None},
                           {"text": "Your language?", "form": "string"},
                           {"text": "Level?", "form": "choices", "choices": ["A1", "C2"]},
                           {"text": "Setup", "form": "script", "script": "return 1"}]],
         "data": [[[{"item_id": "x", "src": "s", "tgt": {"m": "t"},
                     "validation": {"m": {"Fluency": 5, "Adequacy": [50, 100]}}},
                    {"item_id": "y", "src": "s2", "tgt": {"m": "t2"}}]]]}
    result = import_campaign(write(tmp_path, c), tmp_path / "study")
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    form, task = config["tasks"]
    assert form["kind"] == "form" and [f["type"] for f in form["fields"]] == ["text", "choice"]
    assert "**there**" in form["instructions"]
    assert any("'script' form item is left out" in n for n in result.notes)
    assert task["kind"] == "score" and task["textfield"] == "post-edit"
    assert [(s["id"], s["min"], s["max"]) for s in task["scales"]] == [("fluency", 0, 5), ("adequacy", 0, 100)]
    assert any("step 5 is not kept" in n for n in result.notes)
    items = {json.loads(x)["id"]: json.loads(x) for x in (result.folder / "datasets/items.jsonl").open()}
    assert items["x"]["check"]["expect"] == {"m": {"score": {"fluency": [5, 5], "adequacy": [50, 100]}}}
    assert items["y"]["title"] == "Part 2 of 2"  # DA: a document's items asked one at a time, in order
    assert open_study(result.folder / "config.toml").study.tasks


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c.update(extra=1), "unknown campaign key 'extra'"),
    (lambda c: c["info"].update(colour="red"), "info: unknown key 'colour'"),
    (lambda c: c["info"].update(assignment="random"), "'assignment' must be task-based, single-stream or dynamic"),
    (lambda c: c["info"].update(users=["a", "a"]), "info.users: names a user twice"),
    (lambda c: c["info"].update(users=["a b", "c"]), "info.users[0]: the participant id 'a b' has characters"),
    (lambda c: c["info"].update(users=["a"]), "lists 1 users; a task-based campaign has one per task (2)"),
    (lambda c: c["info"].update(validation_threshold=1.0), "a float ≥ 1) fails every user in Pearmut"),
    (lambda c: c["info"].update(special_tokens=["[missing]", "[extra]"]), "evalkit has the [missing] token only"),
    (lambda c: c["data"][0][0][0].update(tgt="plain"), "'tgt' is a text"),
    (lambda c: c["data"][0][0][0].update(tgt={"m": " "}), "the output of model 'm' must be a non-empty text"),
    (lambda c: c["data"][0][0][0].update(validation={"zz": {"score": [1, 2]}}), "names model 'zz'"),
    (lambda c: c["data"][0][0][0].update(validation={"m1": [{"score": [1, 2]}]}), "must be an object"),
    (lambda c: c["data"][0].append({"item_id": "z"}), "is an item; a document is a list of items"),
    (lambda c: c.update(campaign_id=""), "'campaign_id' must be a non-empty string"),
])
def test_what_cannot_be_carried_over_is_refused_naming_it(tmp_path: Path, change, message: str) -> None:
    c = campaign()
    change(c)
    with pytest.raises(PearmutError) as err:
        import_campaign(write(tmp_path, c), tmp_path / "study")
    assert message in str(err.value)
    assert not (tmp_path / "study").exists()  # nothing half-written


def test_a_broken_file_and_an_existing_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.json").write_text('{"campaign_id": "x",', encoding="utf-8")
    assert main(["import", "pearmut", str(tmp_path / "bad.json")]) == 1
    assert "bad.json: not valid JSON (line 1, column 21" in capsys.readouterr().err
    path = write(tmp_path, campaign())
    assert main(["import", "pearmut", str(path), "--out", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "| `info.protocol` | ESA | kind = \"spans\", protocol = \"esa\" |" in out and "the study loads" in out
    assert main(["import", "pearmut", str(path), "--out", str(tmp_path / "s")]) == 1
    assert "holds a study already (config.toml); choose another --out or pass --force" in capsys.readouterr().err
    assert main(["import", "pearmut", str(path), "--out", str(tmp_path / "s"), "--force"]) == 0


def media_campaign(tmp: Path, protocol: str = "DA") -> Path:
    """A task-based campaign whose source is an image and whose outputs include a recording, from its assets."""
    from tests.media_study import write_png, write_wav

    assets = tmp / "files"
    assets.mkdir()
    write_png(assets / "cat.png")
    write_wav(assets / "read.wav")
    doc = [{"item_id": "m1", "src": '<img src="/assets/demo/cat.png" alt="A cat" onerror="alert(1)">',
            "tgt": {"A": "A cat on a mat.", "B": '<audio controls src="/assets/demo/read.wav"></audio>'}},
           {"item_id": "m2", "src": "<b>Plain</b> text with <img> inside", "tgt": {"A": "x", "B": "y"}}]
    c = {"campaign_id": "media", "info": {"assignment": "task-based", "protocol": protocol,
                                          "assets": {"source": "files", "destination": "assets/demo"}},
         "data": [[doc]]}
    return write(tmp, c)


def test_pearmut_media_html_becomes_media_values_from_the_campaigns_assets(tmp_path: Path) -> None:
    result = import_campaign(media_campaign(tmp_path), tmp_path / "study")
    items = [json.loads(x) for x in (result.folder / "datasets/items.jsonl").open()]
    first, second = items
    assert first["input"] == {"type": "image", "path": "media/demo/cat.png", "alt": "A cat"}  # (no onerror)
    assert first["outputs"] == {"A": "A cat on a mat.", "B": {"type": "audio", "path": "media/demo/read.wav"}}
    assert second["input"] == "<b>Plain</b> text with <img> inside"  # other HTML: a text, shown as text
    assert (result.folder / "media/demo/cat.png").read_bytes() == (tmp_path / "files/cat.png").read_bytes()
    loaded = open_study(result.folder / "config.toml")
    [q1, _q2] = plan(loaded.study, loaded.pools, 1, loaded.item_sets, participant="user-1")
    assert q1.input_media is not None and q1.input_media.alt == "A cat"
    assert {s: m.type if m else None for s, m in zip(q1.sources, q1.media, strict=True)} == {"A": None,
                                                                                           "B": "audio"}


@pytest.mark.parametrize(("src", "message"), [
    ('<img src="/assets/other/cat.png">', "is not in the campaign's assets"),
    ('<img src="cat.png">', "Pearmut serves a campaign's files from its 'assets'"),
])
def test_media_outside_the_assets_is_refused(tmp_path: Path, src: str, message: str) -> None:
    path = media_campaign(tmp_path)
    c = json.loads(path.read_text())
    c["data"][0][0][0]["src"] = src
    with pytest.raises(PearmutError, match=message):
        import_campaign(write(tmp_path, c), tmp_path / "study")


@pytest.mark.shared_data
def test_remote_media_are_refused_unless_allowed(tmp_path: Path) -> None:
    with pytest.raises(PearmutError, match=r"loaded from other hosts \(www.youtube.com, www.signalogic.com"):
        import_campaign(PEARMUT / "multimodal.json", tmp_path / "refused")
    assert not (tmp_path / "refused").exists()
    result = import_campaign(PEARMUT / "multimodal.json", tmp_path / "study", allow_remote_media=True)
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    assert config["study"]["allow_remote_media"] is True
    assert "upload.wikimedia.org" in (result.folder / "consent.md").read_text(encoding="utf-8")
    loaded = open_study(result.folder / "config.toml")
    assert any("REMOTE MEDIA" in w and "www.youtube.com" in w for w in loaded.warnings())


def test_what_a_review_found_is_refused_or_mended(tmp_path: Path) -> None:
    c = campaign(users=[{"user_id": "a", "token_pass": "p1"}, {"user_id": "b"}, {"user_id": "c"}])
    with pytest.raises(PearmutError, match="lists 3 users; a task-based campaign has one per task"):
        import_campaign(write(tmp_path, c), tmp_path / "s1")
    c = campaign()
    c["info"]["users"] = 10 ** 9
    c["info"]["assignment"] = "single-stream"
    c["data"] = c["data"][0]
    with pytest.raises(PearmutError, match="at most 100,000"):
        import_campaign(write(tmp_path, c), tmp_path / "s2")
    c["info"].update(users=2, docs_per_user=50, assignment="dynamic", dynamic_models=5)
    with pytest.raises(PearmutError, match="dynamic_models: must be a whole number from 1 to the models"):
        import_campaign(write(tmp_path, c), tmp_path / "s3")
    c["info"]["dynamic_models"] = 2
    result = import_campaign(write(tmp_path, c), tmp_path / "s4")  # docs_per_user past the documents: all of them
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    assert config["tasks"][0]["questions"] == 2 and open_study(result.folder / "config.toml").study.tasks
    # a model named like the scale: the scale gets another id, and the check's ranges follow
    c = {"campaign_id": "named", "info": {"assignment": "task-based", "protocol": "DA",
                                          "sliders": [{"name": "Score", "min": 0, "max": 100, "step": 1}]},
         "data": [[[{"item_id": "x", "src": "s", "tgt": {"score": "t", "other": "u"},
                     "validation": {"score": {"Score": [0, 50]}}}]]]}
    result = import_campaign(write(tmp_path, c), tmp_path / "s5")
    config = tomllib.loads((result.folder / "config.toml").read_text(encoding="utf-8"))
    assert [s["id"] for s in config["tasks"][0]["scales"]] == ["score_scale"]
    item = json.loads((result.folder / "datasets/items.jsonl").read_text().splitlines()[0])
    assert item["check"]["expect"] == {"score": {"score": {"score_scale": [0, 50]}}}
    assert open_study(result.folder / "config.toml").study.tasks
    # the same document twice for one user: asked once; an unknown protocol: scores, said so
    c = campaign(protocol="EAS")
    c["data"][0].append(c["data"][0][0])
    result = import_campaign(write(tmp_path, c), tmp_path / "s6")
    rows = list(csv.reader((result.folder / "datasets/assignments.csv").open()))
    assert [r[1] for r in rows[1:] if r[0] == "user-1"] == ["a", "b", "a~2"]  # (scores: one item per question)
    assert any("repeats a document of the same user" in n for n in result.notes)
    assert any("'EAS' is none of Pearmut's" in n for n in result.notes)


def test_assets_the_study_sits_in_and_paths_that_go_up_are_refused(tmp_path: Path) -> None:
    path = media_campaign(tmp_path)
    c = json.loads(path.read_text())
    c["info"]["assets"]["source"] = "."
    with pytest.raises(PearmutError, match="would be inside the campaign's assets folder"):
        import_campaign(write(tmp_path, c, "up.json"), tmp_path / "study")
    c = json.loads(path.read_text())
    c["data"][0][0][0]["src"] = '<img src="/assets/demo/../files/cat.png">'
    with pytest.raises(PearmutError, match=r"a path may not go up \('..'\)"):
        import_campaign(write(tmp_path, c, "dots.json"), tmp_path / "study")
