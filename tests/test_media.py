"""Media values (:mod:`evalkit.media`): the object form, the path and URL rules (nothing from outside the study's
media folder, no script or data address, remote files only when the study allows them), Pearmut's media HTML,
media in items files, the study's checks and warnings, planned questions carrying their media, and the play log
checked on the server (:mod:`evalkit.tasks.media_log`), ``require_full_play`` included."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from evalkit.config import ConfigError, open_study
from evalkit.items import ItemError, load_items
from evalkit.media import Media, MediaError, from_html, hosts, local_file, parse, remote_problem
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.tasks import SurveyError
from evalkit.tasks.media_log import MAX_EVENTS, media_detail, not_played, with_media
from evalkit.tasks.rank import record_rank
from evalkit.tasks.realfake import record_realfake
from evalkit.tasks.responses import record_choice, record_slider
from evalkit.tasks.score import record_scores
from tests.media_study import SYSTEMS, media_study, write_png, write_wav

# ----------------------------------------------------------------------------- the object form


def test_the_object_form() -> None:
    assert parse({"type": "image", "path": "media/x.png", "alt": "  A  cat "}) == Media("image", "media/x.png",
                                                                                      alt="A cat")
    clip = parse({"type": "audio", "url": "https://cdn.example.org/a/b.ogg"})
    assert clip.remote and clip.host == "cdn.example.org" and clip.playable and not clip.embed
    assert clip.placeholder() == "https://cdn.example.org/a/b.ogg" and clip.as_json() == {
        "type": "audio", "url": "https://cdn.example.org/a/b.ogg"}
    video = parse({"type": "video", "url": "https://www.youtube.com/embed/U9zFqRQ11qI"})
    assert video.embed and not video.playable
    assert not parse({"type": "video", "path": "media/v.mp4"}).remote


@pytest.mark.parametrize(("value", "message"), [
    ("media/x.png", "a media value is an object"),
    ({"type": "picture", "path": "media/x.png"}, "'type' must be one of image, audio, video"),
    ({"path": "media/x.png"}, "'type' must be one of"),
    ({"type": "image", "path": "media/x.png", "src": "y"}, "key 'src' is not a key of a media value"),
    ({"type": "image"}, "give exactly one of 'path'"),
    ({"type": "image", "path": "media/x.png", "url": "https://h/x.png"}, "give exactly one of 'path'"),
    ({"type": "image", "path": "media/x.png", "alt": 3}, "'alt' must be a text"),
    ({"type": "image", "path": "/etc/x.png"}, "must be relative to the study's folder"),
    ({"type": "image", "path": "C:\\media\\x.png"}, "must be relative to the study's folder"),
    ({"type": "image", "path": "media\\x.png"}, "must be relative to the study's folder"),
    ({"type": "image", "path": "javascript:alert(1)//x.png"}, "is an address, not a file path"),
    ({"type": "image", "path": "data:image/png;base64,AAAA.png"}, "is an address, not a file path"),
    ({"type": "image", "path": "https://h/x.png"}, "is an address, not a file path"),
    ({"type": "image", "path": "media/x.svg"}, "a file of type image ends in one of .png"),
    ({"type": "audio", "path": "media/x.png"}, "a file of type audio ends in one of .wav"),
    ({"type": "image", "path": ""}, "'path' must be a non-empty text"),
    ({"type": "image", "path": "media/x\n.png"}, "control characters"),
    ({"type": "image", "url": "javascript:alert(1)"}, "only http and https addresses are allowed"),
    ({"type": "image", "url": "data:image/png;base64,AAAA"}, "only http and https addresses are allowed"),
    ({"type": "image", "url": "file:///etc/passwd"}, "only http and https addresses are allowed"),
    ({"type": "image", "url": "ftp://h/x.png"}, "only http and https addresses are allowed"),
    ({"type": "image", "url": "media/x.png"}, "only http and https addresses are allowed"),
    ({"type": "image", "url": "https://user:pw@h/x.png"}, "needs a host (and no user name or password)"),
    ({"type": "image", "url": "https:///x.png"}, "needs a host"),
    ({"type": "image", "url": "https://h/x y.png"}, "spaces or control characters"),
])
def test_bad_values_are_refused_saying_why(value: Any, message: str) -> None:
    with pytest.raises(MediaError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        parse(value)


# ----------------------------------------------------------------------------- the media folder


def test_a_local_file_must_be_inside_the_media_folder(tmp_path: Path) -> None:
    study = tmp_path / "study"
    folder = study / "media"
    write_png(folder / "ok.png")
    write_png(study / "beside.png")
    write_png(tmp_path / "outside.png")
    write_png(folder / ".hidden.png")
    (folder / "link-in.png").symlink_to(folder / "ok.png")
    (folder / "link-out.png").symlink_to(tmp_path / "outside.png")
    (folder / "dir-out").symlink_to(tmp_path)

    def file(path: str) -> Path:
        return local_file(parse({"type": "image", "path": path}), study, folder)

    assert file("media/ok.png") == (folder / "ok.png").resolve()
    assert file("media/sub/../ok.png") == (folder / "ok.png").resolve()
    assert file("media/link-in.png") == (folder / "ok.png").resolve()
    for escape in ("media/../beside.png", "../outside.png", "media/../../outside.png", "beside.png",
                   "media/link-out.png", "media/dir-out/outside.png"):
        with pytest.raises(MediaError, match="leads outside the media folder"):
            file(escape)
    with pytest.raises(MediaError, match="hidden"):
        file("media/.hidden.png")
    with pytest.raises(MediaError, match="no such file"):
        file("media/missing.png")
    with pytest.raises(MediaError, match="is a remote address"):
        local_file(parse({"type": "image", "url": "https://h/x.png"}), study, folder)


def test_remote_files_need_the_studys_permission() -> None:
    remote = parse({"type": "image", "url": "https://images.example.org/x.png"})
    assert "allow_remote_media = true" in (remote_problem(remote, False) or "")
    assert remote_problem(remote, True) is None
    assert remote_problem(parse({"type": "image", "path": "media/x.png"}), False) is None
    assert hosts([remote, parse({"type": "audio", "url": "http://A.example.org/c.wav"}),
                  parse({"type": "image", "path": "media/y.png"}), remote]) == ["a.example.org", "images.example.org"]


# ----------------------------------------------------------------------------- Pearmut's HTML


@pytest.mark.parametrize(("html", "expected"), [
    ('<img src="media/cat.png" alt="A cat">', {"type": "image", "path": "media/cat.png", "alt": "A cat"}),
    ("<IMG SRC=./media/cat.png width=600/>", {"type": "image", "path": "media/cat.png"}),
    ('<img src="https://h.example/c.jpg" title="Title">', {"type": "image", "url": "https://h.example/c.jpg",
                                                           "alt": "Title"}),
    ('<img src="//h.example/c.jpg">', {"type": "image", "url": "https://h.example/c.jpg"}),
    ('<audio controls=""><source src="media/a.wav" type="audio/wav">Your browser cannot play this.</audio>',
     {"type": "audio", "path": "media/a.wav"}),
    ('<audio controls="" src="https://h.example/a.wav" type="audio/wav"></audio>',
     {"type": "audio", "url": "https://h.example/a.wav"}),
    ('<video controls src="media/v.mp4" aria-label="A dog"></video>', {"type": "video", "path": "media/v.mp4",
                                                                       "alt": "A dog"}),
    ('<iframe width="560" src="https://www.youtube.com/embed/U9zFqRQ11qI?si=x" frameborder="0"></iframe>',
     {"type": "video", "url": "https://www.youtube.com/embed/U9zFqRQ11qI?si=x"}),
    ('<iframe src="https://player.vimeo.com/video/1"></iframe>', {"type": "video",
                                                                  "url": "https://player.vimeo.com/video/1"}),
    # an event handler never comes along: only src and alt are taken
    ('<img src="media/x.png" onerror="alert(1)" alt="x">', {"type": "image", "path": "media/x.png", "alt": "x"}),
    ('<iframe src="https://evil.example/page"></iframe>', None),  # not a video player: not media, stays text
    ('<img src="javascript:alert(1)">', None),
    ('<img src="data:image/png;base64,AAAA">', None),
    ('<img src="media/x.png"> and a caption', None),  # more than one element: text
    ('<img src="media/x.png"><script>alert(1)</script>', None),
    ('<b>bold</b>', None),
    ("An <img src=x.png> inside a sentence", None),
    ("<img>", None),
    ("plain text", None),
])
def test_pearmut_media_html(html: str, expected: dict | None) -> None:
    assert from_html(html) == expected


def test_media_html_never_brings_a_script_along() -> None:
    """Whatever the HTML holds, the object form has only type, path or url, and alt; and parsing it keeps nothing
    that runs: no event handler, no script address."""
    for html in ('<img src="media/x.png" onerror="alert(1)" onload="alert(2)" style="x" alt="ok">',
                 '<audio src="media/a.wav" onplay="alert(1)"></audio>',
                 '<video src="media/v.mp4" poster="javascript:alert(1)"></video>'):
        value = from_html(html)
        assert value is not None and set(value) <= {"type", "path", "url", "alt"}
        assert "alert" not in json.dumps(value)
        parse(value)


# ----------------------------------------------------------------------------- items files


def items_file(tmp: Path, *lines: Any) -> Path:
    path = tmp / "items.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_items_hold_media_beside_their_texts(tmp_path: Path) -> None:
    image = {"type": "image", "path": "media/a.png", "alt": "A"}
    clip = {"type": "audio", "url": "https://h.example/c.ogg"}
    items = load_items(items_file(tmp_path, {"id": "1", "input": image, "outputs": {"x": clip, "y": "a text"}},
                                  {"id": "2", "src": "words", "tgt": {"x": "t", "y": image}}))
    first, second = items
    assert first.input == "media/a.png" and first.input_media == parse(image)
    assert first.outputs == {"x": "https://h.example/c.ogg", "y": "a text"}
    assert dict(first.output_media) == {"x": parse(clip)}
    assert first.media_for(["y", "x"]) == (None, parse(clip))
    assert [where for where, _ in first.media()] == ["'input'", "'outputs': system 'x'"]
    assert second.input_media is None and second.media_for(["x", "y"]) == (None, parse(image))
    assert load_items(items_file(tmp_path, {"id": "3", "outputs": {"x": "t"}}))[0].media_for(["x"]) == ()


@pytest.mark.parametrize(("line", "message"), [
    ({"id": "1", "outputs": {"x": {"type": "image", "path": "/etc/a.png"}}},
     "line 1: key 'outputs': system 'x': 'path' '/etc/a.png' must be relative"),
    ({"id": "1", "input": {"type": "image"}, "outputs": {"x": "t"}}, "line 1: key 'input': give exactly one of"),
    ({"id": "1", "outputs": {"x": {"type": "image", "path": "media/a.png"}},
      "error_spans": {"x": [{"start_i": 0, "end_i": 1, "severity": "minor"}]}},
     "key 'error_spans': system 'x': its output is a media value, which cannot be marked"),
    ({"id": "1", "segments": [{"outputs": {"x": {"type": "image", "path": "media/a.png"}}}]},
     "segment 1: 'outputs': system 'x': a document's segments are texts"),
    ({"id": "1", "segments": [{"input": {"type": "image", "path": "media/a.png"}, "outputs": {"x": "t"}}]},
     "segment 1: 'input': a document's segments are texts"),
    ({"id": "1", "outputs": {"x": "t"}, "reference": {"type": "image", "path": "media/a.png"}},
     "key 'reference': must be a string"),
])
def test_media_mistakes_in_items_name_the_line_and_key(tmp_path: Path, line: dict, message: str) -> None:
    with pytest.raises(ItemError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_items(items_file(tmp_path, line))


# ----------------------------------------------------------------------------- the study


def test_a_study_refuses_media_from_outside_its_folder(tmp_path: Path) -> None:
    config = media_study(tmp_path / "study", "compare")
    open_study(config)  # the builder's files are fine
    items = config.parent / "items.jsonl"
    write_png(tmp_path / "secret.png")
    for path, message in (("../secret.png", "leads outside the media folder"),
                          ("items.png", "leads outside the media folder"),
                          ("media/nothing.png", "no such file")):
        lines = items.read_text().splitlines()
        first = json.loads(lines[0])
        first["outputs"][SYSTEMS[1]] = {"type": "image", "path": path}
        items.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
        with pytest.raises(ConfigError, match=rf"items.jsonl, line 1 \(item 'itemMv0Zq'\): key 'outputs': system "
                                              rf"'{SYSTEMS[1]}': .*{message}"):
            open_study(config)
    # a link inside the media folder to a file outside it
    os.symlink(tmp_path / "secret.png", config.parent / "media" / "innocent.png")
    first["outputs"][SYSTEMS[1]] = {"type": "image", "path": "media/innocent.png"}
    items.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(ConfigError, match="leads outside the media folder"):
        open_study(config)


def test_remote_media_need_allow_remote_media_and_check_names_the_hosts(tmp_path: Path) -> None:
    config = media_study(tmp_path / "study", "realfake")
    items = config.parent / "items.jsonl"
    lines = items.read_text().splitlines()
    first = json.loads(lines[0])
    first["outputs"][SYSTEMS[0]] = {"type": "image", "url": "https://img.example.org/a.png"}
    items.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(ConfigError, match=r"line 1 .*'url' 'https://img.example.org/a.png': remote media are "
                                          r"refused unless the study sets \[study\] allow_remote_media = true"):
        open_study(config)
    config.write_text(config.read_text().replace('seed = 5', 'seed = 5\nallow_remote_media = true'))
    loaded = open_study(config)
    assert loaded.study.allow_remote_media
    [warning] = [w for w in loaded.warnings() if "REMOTE MEDIA" in w]
    assert "img.example.org" in warning and "consent" in warning


def test_media_keys_of_the_study_and_the_task(tmp_path: Path) -> None:
    config = media_study(tmp_path / "study", "score", extra='media = "pictures"')
    with pytest.raises(ConfigError, match="leads outside the media folder"):  # the files are in media/, not pictures/
        open_study(config)
    (config.parent / "media").rename(config.parent / "pictures")
    config.write_text(config.read_text().replace('"media/', '"pictures/'))
    items = config.parent / "items.jsonl"
    items.write_text(items.read_text().replace('"media/', '"pictures/'))
    assert open_study(config).study.media_folder == (config.parent / "pictures").resolve()
    for extra, message in (('allow_remote_media = "yes"', "key 'allow_remote_media': must be true or false"),
                           ('media = "../elsewhere"', "key 'media': the path '../elsewhere' leaves the study folder")):
        with pytest.raises(ConfigError, match=message):
            open_study(media_study(tmp_path / f"s{len(message)}", "score", extra=extra))
    with pytest.raises(ConfigError, match="key 'require_full_play': must be true or false"):
        open_study(media_study(tmp_path / "t", "compare", keys='require_full_play = "yes"\n'))
    assert open_study(media_study(tmp_path / "u", "rank", keys="require_full_play = true\n")).study.tasks[0] \
        .source.require_full_play


def test_planned_questions_carry_their_media(tmp_path: Path) -> None:
    loaded = open_study(media_study(tmp_path / "study", "score-two", media_input=True))
    for seed in range(5):
        for q in plan(loaded.study, loaded.pools, seed, loaded.item_sets):
            item = loaded.item_sets[loaded.study.tasks[0].source.items].by_id(q.review_ids[0])
            assert q.media == tuple(item.output_media[s] for s in q.sources)
            assert q.input_media == item.input_media and q.input == item.input
            shown = q.as_dict(with_sources=False)
            assert shown["texts"][0]["media"]["type"] == "image" and shown["input_media"]["type"] == "image"


# ----------------------------------------------------------------------------- the play log


EVENTS = [{"action": "play", "t": 500, "at": 0.0}, {"action": "seek", "t": 800, "at": 0.25},
          {"action": "ended", "t": 1500, "at": 0.6}]


@pytest.fixture
def clips(tmp_path: Path):
    loaded = open_study(media_study(tmp_path / "study", "compare", "audio"))
    [q, *_] = plan(loaded.study, loaded.pools, 1, loaded.item_sets)
    store = open_store(tmp_path / "db.sqlite")
    yield loaded, q, store, store.create_session(study_version="v")
    store.close()


def test_the_play_log_keeps_only_right_entries_of_the_questions_clips(clips) -> None:
    _loaded, q, _store, _session = clips
    bad = [{"action": "explode", "t": 1, "at": 0}, {"action": "play", "t": -1, "at": 0},
           {"action": "play", "t": True, "at": 0}, {"action": "play", "t": 1, "at": float("nan")},
           {"action": "play", "t": 1, "at": "0"}, {"action": "play", "t": 1, "at": 1e12}, "play", None]
    log = media_detail(q, {"A": [*bad, *EVENTS], "B": EVENTS[:1], "C": EVENTS, "input": EVENTS})
    assert [(e["action"], e["model"]) for e in log] == [("media_play", q.sources[0]), ("media_seek", q.sources[0]),
                                                       ("media_ended", q.sources[0]), ("media_play", q.sources[1])]
    assert log[1] == {"action": "media_seek", "src": q.media[0].where, "model": q.sources[0], "time": 800,
                      "media_time": 0.25}
    assert len(media_detail(q, {"A": EVENTS * 1000})) == MAX_EVENTS
    assert media_detail(q, "nonsense") == [] and media_detail(q, {"A": "x"}) == []


def test_full_play_names_each_clip_left(clips) -> None:
    _loaded, q, _store, _session = clips
    assert not_played(q, media_detail(q, {"A": EVENTS, "B": EVENTS})) is None
    message = not_played(q, media_detail(q, {"A": EVENTS[:2]}), noun="Clip")
    assert message and message.startswith("Please play Clip A and Clip B to the end before answering")
    assert "Clip A" not in (not_played(q, media_detail(q, {"A": EVENTS}), noun="Clip") or "")
    assert with_media(q, {"x": 1}, {"A": EVENTS}) == {"x": 1, "media": media_detail(q, {"A": EVENTS})}
    assert with_media(q, None, {}) is None  # nothing played, nothing required: no log


def test_an_answer_is_refused_until_its_clips_were_played_to_the_end(clips) -> None:
    loaded, q, store, session = clips
    with pytest.raises(SurveyError, match="Please play Response A and Response B to the end"):
        record_choice(store, session, q, "A", 10, full_play=True)
    with pytest.raises(SurveyError, match="Please play Response B to the end"):
        record_choice(store, session, q, "A", 10, full_play=True, media={"A": EVENTS, "B": EVENTS[:2]})
    with pytest.raises(SurveyError, match="Please play"):
        record_slider(store, session, q, 20, "accept", 10, full_play=True, media={"B": EVENTS})
    assert not store.answers()
    stored = record_choice(store, session, q, "A", 10, full_play=True, media={"A": EVENTS, "B": EVENTS})
    assert [e["action"] for e in stored.detail["media"]] == ["media_play", "media_seek", "media_ended"] * 2
    assert loaded.study.tasks[0].source.require_full_play is False  # (the task's key: off unless set)


@pytest.mark.parametrize("task", ["score", "rank", "realfake"])
def test_the_kinds_store_the_log_and_refuse_with_require_full_play(tmp_path: Path, task: str) -> None:
    loaded = open_study(media_study(tmp_path / "study", task, "audio", keys="require_full_play = true\n"))
    [q, *_] = plan(loaded.study, loaded.pools, 2, loaded.item_sets)
    t = loaded.study.tasks[0]
    store = open_store(tmp_path / "db.sqlite")
    session = store.create_session(study_version="v")
    every = {label: EVENTS for label in q.labels}

    def answer(media: Any) -> Any:
        if task == "score":
            return record_scores(store, session, t, q, {"quality": [3]}, None, 5, media=media)
        if task == "rank":
            return record_rank(store, session, t, q, list(q.labels), 5, media=media)
        return record_realfake(store, session, t, q, "real", 2, 5, media=media)

    with pytest.raises(SurveyError, match="to the end before answering"):
        answer({})
    assert answer(every).detail["media"][-1]["action"] == "media_ended"
    store.close()


def test_the_builders_write_real_files(tmp_path: Path) -> None:
    assert write_png(tmp_path / "a.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert write_wav(tmp_path / "a.wav").read_bytes()[:4] == b"RIFF"
