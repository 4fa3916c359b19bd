"""Four small pieces a Pearmut campaign needs (issue 28): per-item ``instructions`` in an items file, ``[study]
blind``, ``[study] done_message`` with Pearmut's placeholders, and the hint for a Pearmut campaign file given as
an items file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evalkit.__main__ import main
from evalkit.config import DONE_PLACEHOLDERS, ConfigError, load_study, not_blind, open_study
from evalkit.items import ItemError, is_pearmut_campaign, load_items
from evalkit.survey import done_text
from tests.helpers import SHARED_DATA
from tests.item_study import make_items_study, task_block
from ui.widgets import instructions_markdown

PEARMUT = SHARED_DATA / "pearmut"  # Pearmut's example campaigns (tests marked shared_data)
OK = {"id": "a", "outputs": {"x": "text"}}


def write(tmp_path: Path, *lines: Any, name: str = "items.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
                    encoding="utf-8")
    return path


def error(path: Path) -> str:
    with pytest.raises(ItemError) as info:
        load_items(path)
    return str(info.value)


# ----------------------------------------------------------------------------- instructions on items and segments


def test_item_instructions(tmp_path: Path) -> None:
    html = '<b>Attention check:</b> A is best.<script>alert(1)</script>'
    items = load_items(write(tmp_path, {**OK, "instructions": html}, {**OK, "id": "b"},
                             {**OK, "id": "c", "instructions": None}, {**OK, "id": "d", "instructions": "  "}))
    assert items.by_id("a").instructions == html  # kept exactly: converted only when shown
    assert [items.by_id(i).instructions for i in "bcd"] == [None, None, None]  # absent, null, blank
    assert items.by_id("a").instruction_blocks() == ((None, html),)
    assert items.by_id("b").instruction_blocks() == ()
    assert instructions_markdown(items.by_id("a")) == "**Attention check\\:** A is best\\."


@pytest.mark.parametrize(("value", "got"), [(3, "a number"), (["x"], "an array"), ({"a": 1}, "an object"),
                                            (True, "a boolean")])
def test_instructions_must_be_a_string(tmp_path: Path, value: Any, got: str) -> None:
    path = write(tmp_path, OK, {**OK, "id": "b", "instructions": value})
    assert error(path) == f"{path}, line 2: key 'instructions': must be a string, got {got}"
    segment = {"input": "s", "outputs": {"x": "t"}, "instructions": value}
    path = write(tmp_path, {"id": "c", "segments": [{"outputs": {"x": "t"}}, segment]})
    assert error(path) == f"{path}, line 1: key 'segments': segment 2: 'instructions': must be a string, got {got}"
    path = write(tmp_path, [{"item_id": "d", "src": "s", "tgt": {"x": "t"}, "instructions": value}])
    assert error(path) == f"{path}, line 1: key 'segments': segment 1: 'instructions': must be a string, got {got}"


def test_segment_instructions_of_an_evalkit_document(tmp_path: Path) -> None:
    segments = [{"input": "one", "outputs": {"x": "1"}, "instructions": "Step <b>one</b>"},
                {"input": "two", "outputs": {"x": "2"}, "instructions": "Step two"},
                {"input": "three", "outputs": {"x": "3"}}]
    item = load_items(write(tmp_path, {"id": "doc", "instructions": "The whole <i>document</i>",
                                       "segments": segments}))[0]
    assert item.instructions == "The whole <i>document</i>"
    assert [s.instructions for s in item.segments] == ["Step <b>one</b>", "Step two", None]
    assert item.instruction_blocks() == ((None, "The whole <i>document</i>"), (1, "Step <b>one</b>"), (2, "Step two"))
    assert instructions_markdown(item) == ("The whole *document*\n\n**Segment 1:** Step **one**\n\n"
                                           "**Segment 2:** Step two")


def test_pearmut_documents_instructions(tmp_path: Path) -> None:
    """A line that is an array (Pearmut's document): the first object's instructions are the document's; segments
    with instructions of their own are shown each under its number; repeated ones once."""
    first = {"item_id": "d1", "src": "a", "tgt": {"m": "x"}, "instructions": "Evaluate translation from English."}
    rest = [{"item_id": f"d1_{k}", "src": "b", "tgt": {"m": "y"}} for k in range(2)]
    same = {"instructions": "<b>Attention Check:</b> Please evaluate carefully."}
    steps = [{"item_id": "t1", "src": "a", "tgt": {"m": "x"}, "instructions": "<b>Welcome!</b><br><br>Set 100%."},
             {"item_id": "t2", "src": "b", "tgt": {"m": "y"}, "instructions": "Mark <u>\"walked\"</u>.<br>Then 80%."},
             {"item_id": "t3", "src": "c", "tgt": {"m": "z"}, "instructions": "Mark <u>\"walked\"</u>.<br>Then 80%."},
             {"item_id": "t4", "src": "d", "tgt": {"m": "w"}}]
    items = load_items(write(tmp_path, [first, *rest],
                             [{"item_id": "c1", "src": "a", "tgt": {"m": "x"}, **same},
                              {"item_id": "c2", "src": "b", "tgt": {"m": "y"}, **same}], steps))
    news, check, tutorial = items
    assert news.instructions == "Evaluate translation from English." and news.segments[1].instructions is None
    assert news.instruction_blocks() == ((None, "Evaluate translation from English."),)
    assert check.instruction_blocks() == ((None, same["instructions"]),)
    assert instructions_markdown(check) == "**Attention Check\\:** Please evaluate carefully\\."
    assert tutorial.instruction_blocks() == ((1, steps[0]["instructions"]), (2, steps[1]["instructions"]))
    # (a segment's text of several lines or paragraphs goes under its label, a one-line one beside it)
    assert instructions_markdown(tutorial) == ("**Segment 1:**\n\n**Welcome\\!**\n\nSet 100%\\.\n\n"
                                               "**Segment 2:**\n\nMark *\"walked\"*\\.\\\nThen 80%\\.")


@pytest.mark.shared_data
def test_pearmuts_example_instructions_load(tmp_path: Path) -> None:
    """Every document of Pearmut's examples with instructions, one per line as arrays: they load, and each shows
    something safe."""
    lines = []
    for name in ("esa.json", "attention_checks.json", "tutorials/esa_deen.json", "html.json"):
        campaign = json.loads((PEARMUT / name).read_text(encoding="utf-8"))
        for task in campaign["data"]:
            for doc in task:
                doc = doc if isinstance(doc, list) else [doc]
                lines.append([{k: v for k, v in s.items() if k in ("item_id", "src", "tgt", "ref", "instructions")}
                              for s in doc])
    unique = {json.dumps(line[0]["item_id"]): line for line in lines}
    items = load_items(write(tmp_path, *unique.values()))
    shown = [instructions_markdown(item) for item in items]
    assert all(shown) and not any("<" in text.replace("\\<", "") for text in shown)


def test_evalkit_check_has_nothing_to_say_about_instructions(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "consent.md").write_text("You agree.\n", encoding="utf-8")
    config = make_items_study(tmp_path, task_block("compare"), extra='consent = "consent.md"\n')
    items = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()]
    items[0]["instructions"] = "<b>Read carefully</b> <script>x</script><img src=x onerror=alert(1)>"
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    assert main(["check", str(config), "--samples", "2", "--strict"]) == 0
    assert "WARNING" not in capsys.readouterr().err


# ----------------------------------------------------------------------------- [study] blind


def test_blind_is_true_by_default_and_parsed(tmp_path: Path) -> None:
    assert load_study(make_items_study(tmp_path / "a", task_block("score"))).blind is True
    assert load_study(make_items_study(tmp_path / "b", task_block("score"), extra="blind = false\n")).blind is False
    assert load_study(make_items_study(tmp_path / "c", task_block("score"), extra="blind = true\n")).blind is True


@pytest.mark.parametrize(("value", "got"), [('"false"', "a string"), ("0", "an integer"), ("[]", "a list")])
def test_blind_must_be_a_boolean(tmp_path: Path, value: str, got: str) -> None:
    config = make_items_study(tmp_path, task_block("score"), extra=f"blind = {value}\n")
    with pytest.raises(ConfigError) as info:
        load_study(config)
    assert str(info.value) == (f"config.toml: [study]: key 'blind': must be true or false (false shows the system "
                               f"names to the evaluators), got {got}")


def test_evalkit_check_warns_loudly_when_not_blind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = make_items_study(tmp_path, task_block("compare"), task_block("realfake"), extra="blind = false\n")
    loaded = open_study(config)
    [warning] = not_blind(loaded.study)
    assert warning.startswith("THE STUDY IS NOT BLIND ([study] blind = false): every output's card shows its "
                              "system's name to the evaluators (tasks 'help', 'turing'), so their judgments may be "
                              "biased by the names")
    assert "In realfake task(s) 'turing' the name tells whether the text is real" in warning
    assert loaded.warnings()[0] == warning  # first of all
    status = main(["check", str(config), "--samples", "2"])
    err = capsys.readouterr().err
    assert status == 0 and f"WARNING: {warning}" in err
    assert main(["check", str(config), "--samples", "2", "--strict"]) == 1
    capsys.readouterr()
    blind = make_items_study(tmp_path / "blind", task_block("compare"))
    assert not_blind(load_study(blind)) == [] and open_study(blind).warnings() == []


def test_not_blind_without_items_tasks_says_it_has_no_effect(tmp_path: Path) -> None:
    from tests.helpers import make_study

    config = make_study(tmp_path)
    config.write_text(config.read_text(encoding="utf-8").replace("[study]\n", "[study]\nblind = false\n", 1),
                      encoding="utf-8")
    assert not_blind(load_study(config)) == [
        "[study] blind = false has no effect: no task reads an items file (system names are shown only on the cards "
        "of compare, score, spans, rank and realfake tasks over an items file)."]


# ----------------------------------------------------------------------------- [study] done_message


def test_done_message_is_parsed(tmp_path: Path) -> None:
    assert load_study(make_items_study(tmp_path / "a", task_block("score"))).done_message == ""
    message = "Dear ${USER_ID}, thank you! Your token: **${TOKEN}** ({code}, {participant})"
    config = make_items_study(tmp_path / "b", task_block("score"), extra=f"done_message = {json.dumps(message)}\n")
    assert load_study(config).done_message == message
    assert set(DONE_PLACEHOLDERS) == {"${TOKEN}", "${USER_ID}", "{code}", "{participant}"}


@pytest.mark.parametrize(("message", "name"), [("Hi ${USER}", "${USER}"), ("${TOKEN} ${token}", "${token}"),
                                               ("${}", "${}"), ("${USER_ID} ${EMAIL} ${A}", "${A}")])
def test_an_unknown_placeholder_is_an_error(tmp_path: Path, message: str, name: str) -> None:
    config = make_items_study(tmp_path, task_block("score"), extra=f"done_message = {json.dumps(message)}\n")
    with pytest.raises(ConfigError) as info:
        load_study(config)
    assert str(info.value) == (f"config.toml: [study]: key 'done_message': unknown placeholder {name}; the "
                               "placeholders are ${TOKEN}, ${USER_ID}, {code}, {participant}")


def test_done_message_must_be_a_string(tmp_path: Path) -> None:
    config = make_items_study(tmp_path, task_block("score"), extra="done_message = 3\n")
    with pytest.raises(ConfigError, match="key 'done_message': must be a string"):
        load_study(config)


def test_done_text_fills_the_placeholders_escaped() -> None:
    message = "Dear ${USER_ID}, your token is ${TOKEN} (again: {code}; you are {participant}). {other} $5"
    assert done_text(None, message=message, code="AB_12-x", participant="P01") == (
        "Dear P01, your token is AB\\_12\\-x (again: AB\\_12\\-x; you are P01). {other} $5")
    # a value is text, never Markdown, and never filled in again
    assert done_text(None, message="Hi ${USER_ID}!", participant="[x](javascript:y) *${TOKEN}*") == \
        "Hi \\[x\\]\\(javascript\\:y\\) \\*\\$\\{TOKEN\\}\\*!"
    assert done_text(None, message="Hi ${USER_ID}.", code="C") == "Hi ."  # no participant id: empty
    # a limit's line stays first; a full study's text is its own
    assert done_text("time", message="Bye ${TOKEN}", code="C") == f"{done_text('time')}\n\nBye C"
    assert done_text(None, "full", message="Bye ${TOKEN}", code="C") == done_text(None, "full")
    assert done_text(None, message="") == done_text(None)


# ----------------------------------------------------------------------------- a Pearmut campaign as an items file


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["esa.json", "multimodal.json", "user_info_form.json"])
def test_a_pearmut_campaign_given_as_items_names_the_import_command(tmp_path: Path, name: str) -> None:
    path = tmp_path / "campaign.jsonl"
    shutil.copy(PEARMUT / name, path)
    assert error(path) == (f"{path}: this is a Pearmut campaign file, not an items file: turn it into a study with "
                           f"`python -m evalkit import pearmut {path}`")


def test_a_pearmut_campaign_on_one_line_too(tmp_path: Path) -> None:
    campaign = {"campaign_id": "c", "info": {"assignment": "task-based", "protocol": "ESA"},
                "data": [[{"item_id": "a", "src": "s", "tgt": {"m": "t"}}]]}
    assert is_pearmut_campaign(campaign)
    path = write(tmp_path, campaign)
    assert error(path).startswith(f"{path}: this is a Pearmut campaign file, not an items file")
    path = write(tmp_path, "", "  ", json.dumps(campaign, indent=1))  # blank lines first
    assert error(path).startswith(f"{path}: this is a Pearmut campaign file, not an items file")


def test_a_json_object_or_array_over_several_lines_gets_the_jsonl_hint(tmp_path: Path) -> None:
    hint = "but an items file holds one JSON object per line (JSON Lines: one item per line, see the items file format)"
    path = tmp_path / "items.json"
    path.write_text(json.dumps({"id": "a", "outputs": {"x": "y"}}, indent=2), encoding="utf-8")
    message = error(path)
    assert message.startswith(f"{path}, line 1: not valid JSON: ")
    assert message.endswith(f"; the whole file is one JSON object written over several lines, {hint}")
    path.write_text(json.dumps([OK, {**OK, "id": "b"}], indent=2), encoding="utf-8")
    assert error(path).endswith(f"; the whole file is one JSON array written over several lines, {hint}")
    # not JSON as a whole, or broken after the first item: the line's error alone
    path.write_text("{\n  nope\n}\n", encoding="utf-8")
    assert error(path) == (f"{path}, line 1: not valid JSON: Expecting property name enclosed in double quotes "
                           "(column 1)")
    path = write(tmp_path, OK, "{", '"id": "b"}')
    assert error(path) == (f"{path}, line 2: not valid JSON: Expecting property name enclosed in double quotes "
                           "(column 1)")
    assert not is_pearmut_campaign({"data": []}) and not is_pearmut_campaign([{"campaign_id": 1, "data": 2}])


def test_instructions_longer_than_the_limit_are_refused(tmp_path: Path) -> None:
    from evalkit.items import MAX_INSTRUCTIONS, ItemError, load_items

    path = tmp_path / "items.jsonl"
    nested = "<ul><li>" * (MAX_INSTRUCTIONS // 8 + 1)  # (a hostile nesting: its conversion is not linear)
    path.write_text(json.dumps({"id": "a", "outputs": {"m": "x"}, "instructions": nested}) + "\n", encoding="utf-8")
    with pytest.raises(ItemError, match=r"line 1: key 'instructions': is 20,008 characters long; at most 20,000"):
        load_items(path)
