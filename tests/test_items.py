"""evalkit.items: items files (JSONL), on the demo data, on every documented error and on the plan indexes."""

from __future__ import annotations

import dataclasses
import gc
import itertools
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from evalkit.datasets import DatasetError
from evalkit.items import PEARMUT_ALIASES, Item, ItemError, ItemSet, load_items
from tests.helpers import ROOT

DEMO = ROOT / "datasets" / "responses.jsonl"
OK = {"id": "a", "outputs": {"x": "text"}}


def write(tmp_path: Path, *lines: Any, name: str = "items.jsonl") -> Path:
    """A file of the given lines: strings as they are, anything else as JSON."""
    path = tmp_path / name
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def error(path: Path) -> str:
    """The ItemError message of loading ``path``; it must name the file."""
    with pytest.raises(ItemError) as info:
        load_items(path)
    message = str(info.value)
    assert message.startswith(f"{path}"), message
    return message


def line_error(tmp_path: Path, *lines: Any) -> str:
    """The message for a file whose last given line is the broken one; it must name that line."""
    path = write(tmp_path, *lines)
    message = error(path)
    assert message.startswith(f"{path}, line {len(lines)}: "), message
    return message


# --------------------------------------------------------------------------- the demo file


def test_demo_file_loads() -> None:
    items = load_items(DEMO)
    assert len(items) == 24
    assert items.systems == ("gpt4", "t5", "human", "good", "bad")
    assert len(set(items.index)) == 24
    gold = [item for item in items if item.id.startswith("gold")]
    assert [g.id for g in gold] == ["gold01", "gold02"]
    for g in gold:
        assert list(g.outputs) == ["good", "bad"]
        assert g.check is not None and g.check["expect"] == "good" and g.check["feedback"].strip()
    regular = [item for item in items if not item.id.startswith("gold")]
    for item in regular:
        assert list(item.outputs) == ["gpt4", "t5", "human"]
        assert item.check is None
        assert 2 <= item.input.count(". ") + 1 <= 5, item.input
        assert item.meta["domain"] in ("restaurant", "laptop")
        # t5 is the short, generic system
        assert len(item.outputs["t5"]) < len(item.outputs["gpt4"])
        for system, values in item.metrics.items():
            assert system in item.outputs
            assert set(values) == {"bleu", "bertscore"} and all(math.isfinite(v) for v in values.values())
    assert sum(1 for item in regular if item.metrics) >= 8
    pair = items.with_all(["gpt4", "t5"])
    assert [items[p].id for p in pair] == [item.id for item in regular]
    assert items.with_all(["good", "bad"]) == tuple(items.index[g.id] for g in gold)


# --------------------------------------------------------------------------- what loads


def test_fields_defaults_and_line_numbers(tmp_path: Path) -> None:
    full = {"id": "r17", "input": "The review.", "title": "Heading", "outputs": {"gpt4": "G", "t5": "T"},
            "reference": "Ref", "metrics": {"gpt4": {"bleu": 21.3, "len": 4}}, "meta": {"k": [1, {"n": None}]},
            "check": {"expect": "gpt4", "feedback": "why", "nested": {"any": ["thing"]}}}
    path = write(tmp_path, "", full, "   ", "\t", OK, "")
    items = load_items(path)
    assert isinstance(items, ItemSet) and len(items) == 2
    first, second = items
    assert first == Item(id="r17", input="The review.", title="Heading", outputs={"gpt4": "G", "t5": "T"},
                         reference="Ref", metrics={"gpt4": {"bleu": 21.3, "len": 4}},
                         meta={"k": [1, {"n": None}]},
                         check={"expect": "gpt4", "feedback": "why", "nested": {"any": ["thing"]}}, line=2)
    assert second == Item(id="a", input="", title=None, outputs={"x": "text"}, reference=None, metrics={},
                          meta={}, check=None, line=5)
    assert items.path == path
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.id = "other"  # type: ignore[misc]


def test_null_optional_keys_are_absent_and_blank_title_reference_are_none(tmp_path: Path) -> None:
    obj = {"id": "a", "outputs": {"x": "t"}, "input": None, "title": "  ", "reference": "", "metrics": None,
           "meta": None, "check": None}
    (item,) = load_items(write(tmp_path, obj))
    assert (item.input, item.title, item.reference, item.metrics, item.meta, item.check) == ("", None, None, {}, {},
                                                                                              None)


def test_texts_are_kept_exactly(tmp_path: Path) -> None:
    text = "  <b>bold</b>\n\n  line two\u2028after a line separator &amp; \t "
    obj = {"id": "a", "input": "  in  \n", "outputs": {"x": text, "y": "\u00a0ok"}, "reference": " r "}
    path = tmp_path / "items.jsonl"
    path.write_text(json.dumps(obj, ensure_ascii=False) + "\n", encoding="utf-8")  # U+2028 written raw
    (item,) = load_items(path)
    assert item.outputs == {"x": text, "y": "\u00a0ok"}
    assert item.input == "  in  \n" and item.reference == " r "


def test_order_of_items_and_systems_is_the_file_order(tmp_path: Path) -> None:
    lines = [{"id": "z", "outputs": {"zeta": "1", "alpha": "2"}},
             {"id": "b", "outputs": {"mid": "3", "alpha": "4", "zeta": "5"}},
             {"id": "m", "outputs": {"beta": "6"}}]
    items = load_items(write(tmp_path, *lines))
    assert [item.id for item in items] == ["z", "b", "m"]
    assert list(items[1].outputs) == ["mid", "alpha", "zeta"]
    assert items.systems == ("zeta", "alpha", "mid", "beta")
    assert dict(items.index) == {"z": 0, "b": 1, "m": 2}
    assert list(items.by_system) == ["zeta", "alpha", "mid", "beta"]


def test_integer_ids_become_strings(tmp_path: Path) -> None:
    items = load_items(write(tmp_path, {"id": 7, "outputs": {"x": "t"}}, {"id": -3, "outputs": {"x": "t"}}))
    assert [item.id for item in items] == ["7", "-3"]
    assert items.by_id("7") is items[0]


def test_pearmut_keys(tmp_path: Path) -> None:
    obj = {"item_id": 12, "src": "source text", "tgt": {"sysA": "out A", "sysB": "out B"}, "ref": "reference"}
    assert set(obj) == set(PEARMUT_ALIASES)
    (item,) = load_items(write(tmp_path, obj))
    assert (item.id, item.input, item.reference) == ("12", "source text", "reference")
    assert item.outputs == {"sysA": "out A", "sysB": "out B"}


def test_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(OK).encode() + b"\r\n\r\n" + json.dumps({**OK, "id": "b"}).encode()
                     + b"\r\n")
    items = load_items(path)
    assert [(item.id, item.line) for item in items] == [("a", 1), ("b", 3)]


def test_a_bom_inside_the_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(json.dumps(OK).encode() + b"\n\xef\xbb\xbf" + json.dumps({**OK, "id": "b"}).encode() + b"\n")
    assert error(path).startswith(f"{path}, line 2: not valid JSON")


# --------------------------------------------------------------------------- errors


def test_item_error_is_a_dataset_error() -> None:
    assert issubclass(ItemError, DatasetError)


@pytest.mark.parametrize("line", ['{"id": "a", "outputs": {"x": "t"}', "not json", '{"id": "a"} {"id": "b"}'])
def test_not_json(tmp_path: Path, line: str) -> None:
    message = line_error(tmp_path, OK, line)
    assert "not valid JSON: " in message and "(column " in message


@pytest.mark.parametrize(("value", "what"), [('"text"', "a string"), (3, "a number"),
                                             (None, "null")])
def test_not_an_object(tmp_path: Path, value: Any, what: str) -> None:
    assert line_error(tmp_path, OK, value).endswith(f"expected a JSON object, got {what}")


def test_missing_id_and_outputs(tmp_path: Path) -> None:
    assert line_error(tmp_path, {"outputs": {"x": "t"}}).endswith("missing key 'id' (or Pearmut's 'item_id')")
    assert line_error(tmp_path, {"id": "a"}).endswith("missing key 'outputs' (or Pearmut's 'tgt')")


@pytest.mark.parametrize(("value", "expected"), [(1.5, "must be a string or an integer, got a number"),
                                                 (True, "must be a string or an integer, got a boolean"),
                                                 (["a"], "must be a string or an integer, got an array"),
                                                 ("", "must not be blank"), (" \t", "must not be blank")])
def test_bad_id(tmp_path: Path, value: Any, expected: str) -> None:
    assert line_error(tmp_path, {"id": value, "outputs": {"x": "t"}}).endswith(f"key 'id': {expected}")


def test_bad_pearmut_id_names_the_key_as_written(tmp_path: Path) -> None:
    assert line_error(tmp_path, {"item_id": 2.5, "tgt": {"x": "t"}}).endswith(
        "key 'item_id': must be a string or an integer, got a number")


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    message = line_error(tmp_path, OK, "", {"id": "b", "outputs": {"x": "t"}}, {"id": "a", "outputs": {"y": "u"}})
    assert message.endswith("key 'id': 'a' is also the id of the item on line 1")
    # an integer id and its string collide too
    message = line_error(tmp_path, {"id": 7, "outputs": {"x": "t"}}, {"id": "7", "outputs": {"x": "t"}})
    assert message.endswith("'7' is also the id of the item on line 1")


@pytest.mark.parametrize(("outputs", "expected"), [
    ({}, "must be a non-empty object mapping system names to output texts, got an empty object"),
    ([["x", "t"]], "must be a non-empty object mapping system names to output texts, got an array"),
    ("one text", "must be a non-empty object mapping system names to output texts, got a string"),
    ({"x": "t", "y": 3}, "system 'y': the output must be a non-blank string, got a number"),
    ({"x": None}, "system 'x': the output must be a non-blank string, got null"),
    ({"x": ["t"]}, "system 'x': the output must be a non-blank string, got an array"),
    ({"x": ""}, "system 'x': the output must be a non-blank string, got a blank text"),
    ({"x": " \n\t "}, "system 'x': the output must be a non-blank string, got a blank text"),
    ({" ": "t"}, "a system name is blank"),
])
def test_bad_outputs(tmp_path: Path, outputs: Any, expected: str) -> None:
    assert line_error(tmp_path, OK, {"id": "b", "outputs": outputs}).endswith(f"key 'outputs': {expected}")
    assert line_error(tmp_path, OK, {"id": "b", "tgt": outputs}).endswith(f"key 'tgt': {expected}")


@pytest.mark.parametrize(("metrics", "expected"), [
    ({"x": "NaN"}, "system 'x': must be an object of metric: number, got a string"),
    ([1], "must be an object mapping system names to {metric: number}, got an array"),
    ({"x": {"bleu": "21"}}, "system 'x': metric 'bleu' must be a finite number, got a string"),
    ({"x": {"bleu": True}}, "system 'x': metric 'bleu' must be a finite number, got a boolean"),
    ({"x": {"bleu": None}}, "system 'x': metric 'bleu' must be a finite number, got null"),
    ({"x": {"bleu": [1]}}, "system 'x': metric 'bleu' must be a finite number, got an array"),
    ({"x": [1.0]}, "system 'x': must be an object of metric: number, got an array"),
    ({"gtp4": {"bleu": 1}}, "system 'gtp4' has no output in this item nor in any other item of the file (did you "
                            "mean 'gpt4'?)"),
    ({"zzz": {"bleu": 1}}, "system 'zzz' has no output in this item nor in any other item of the file"),
])
def test_bad_metrics(tmp_path: Path, metrics: Any, expected: str) -> None:
    obj = {"id": "b", "outputs": {"x": "t", "gpt4": "g"}, "metrics": metrics}
    assert line_error(tmp_path, OK, obj).endswith(f"key 'metrics': {expected}")


def test_metrics_of_a_system_the_item_lacks_load_when_the_file_has_it(tmp_path: Path) -> None:
    """An item without t5's output may carry t5's metrics when other items have t5 (the missing output is what
    ``evalkit check`` reports, naming the task that lists t5); a name no item has is a misspelling, reported at
    its own line once the whole file is read."""
    lacking = {"id": "r17", "outputs": {"gpt4": "g"}, "metrics": {"t5": {"bleu": 3}}}
    items = load_items(write(tmp_path, {"id": "r16", "outputs": {"gpt4": "g", "t5": "t"}}, lacking))
    assert items.by_id("r17").metrics == {"t5": {"bleu": 3}} and items.systems == ("gpt4", "t5")
    later = load_items(write(tmp_path, lacking, {"id": "r18", "outputs": {"gpt4": "g", "t5": "t"}}, name="b.jsonl"))
    assert later.by_id("r17").metrics == {"t5": {"bleu": 3}}
    path = write(tmp_path, {"id": "a", "outputs": {"gpt4": "g"}, "metrics": {"tt5": {"bleu": 3}}},
                 {"id": "b", "outputs": {"gpt4": "g", "t5": "t"}}, name="c.jsonl")
    assert error(path) == (f"{path}, line 1: key 'metrics': system 'tt5' has no output in this item nor in any "
                           "other item of the file (did you mean 't5'?)")


@pytest.mark.parametrize(("token", "shown"), [("NaN", "nan"), ("Infinity", "inf"), ("-Infinity", "-inf")])
def test_non_finite_metrics(tmp_path: Path, token: str, shown: str) -> None:
    line = json.dumps({"id": "b", "outputs": {"x": "t"}, "metrics": {"x": {"ok": 1, "bleu": "TOKEN"}}})
    line = line.replace('"TOKEN"', token)  # json's own non-standard spelling, which json.loads accepts
    assert line_error(tmp_path, OK, line).endswith(f"key 'metrics': system 'x': metric 'bleu' must be a finite "
                                                   f"number, got {shown}")


def test_integer_and_huge_metrics_are_accepted(tmp_path: Path) -> None:
    (item,) = load_items(write(tmp_path, {"id": "a", "outputs": {"x": "t"}, "metrics": {"x": {"n": 10**400,
                                                                                                "z": 0, "f": -1.5}}}))
    assert item.metrics == {"x": {"n": 10**400, "z": 0, "f": -1.5}}


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("input", 3, "must be a string, got a number"),
    ("src", ["a"], "must be a string, got an array"),
    ("title", {"t": 1}, "must be a string, got an object"),
    ("reference", False, "must be a string, got a boolean"),
    ("ref", 1, "must be a string, got a number"),
    ("meta", "note", "must be an object, got a string"),
    ("meta", [1], "must be an object, got an array"),
    ("check", "good", "must be an object, got a string"),
    ("check", ["good"], "must be an object, got an array"),
])
def test_bad_optional_values(tmp_path: Path, key: str, value: Any, expected: str) -> None:
    assert line_error(tmp_path, {**OK, key: value}).endswith(f"key {key!r}: {expected}")


@pytest.mark.parametrize(("pearmut", "evalkit"), list(PEARMUT_ALIASES.items()))
def test_pearmut_key_with_its_evalkit_twin(tmp_path: Path, pearmut: str, evalkit: str) -> None:
    obj = {"id": "a", "outputs": {"x": "t"}, evalkit: {"x": "t"} if evalkit == "outputs" else "v",
           pearmut: {"x": "t"} if evalkit == "outputs" else "v"}
    message = line_error(tmp_path, obj)
    assert message.endswith(f"keys {evalkit!r} and {pearmut!r} both give the item's {evalkit} ({pearmut!r} is "
                            f"Pearmut's name for {evalkit!r}); keep one of them"), message
    # written the other way round, the message names the keys in file order
    reverse = {pearmut: obj[pearmut], **{k: v for k, v in obj.items() if k != pearmut}}
    assert f"keys {pearmut!r} and {evalkit!r} both give" in line_error(tmp_path, reverse)


@pytest.mark.parametrize(("key", "hint"), [("ouputs", " (did you mean 'outputs'?)"), ("titel", " (did you mean "
                                            "'title'?)"), ("metric", " (did you mean 'metrics'?)"),
                                           ("srcs", " (did you mean 'src'?)"), ("zzzzzz", "")])
def test_unknown_key(tmp_path: Path, key: str, hint: str) -> None:
    message = line_error(tmp_path, OK, {**OK, "id": "b", key: "v"})
    assert f"key {key!r} is not a known key{hint}; known keys: check, error_spans, id, input, instructions, " \
           "meta, metrics, outputs, participants, reference, segments, title (or Pearmut's item_id, src, tgt, " \
           "ref); put extra data under 'meta'" in message


def test_empty_file_and_blank_lines_only(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert error(empty) == f"{empty}: no items (the file is empty or has only blank lines)"
    blank = tmp_path / "blank.jsonl"
    blank.write_bytes(b"\xef\xbb\xbf\n  \n\t\r\n")
    assert error(blank) == f"{blank}: no items (the file is empty or has only blank lines)"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(json.dumps(OK).encode() + b"\n\n" + '{"id": "b", "outputs": {"x": "café"}}'.encode("latin-1")
                     + b"\n")
    message = error(path)
    assert message.startswith(f"{path}, line 3: not valid UTF-8 (invalid continuation byte at byte ")
    assert message.endswith("save the file as UTF-8")


def test_missing_file_and_folder(tmp_path: Path) -> None:
    assert error(tmp_path / "nope.jsonl") == f"{tmp_path / 'nope.jsonl'}: items file not found"
    assert error(tmp_path).startswith(f"{tmp_path}: cannot read items file (")


def test_the_garbage_collector_is_resumed(tmp_path: Path) -> None:
    good, bad = write(tmp_path, OK, name="good.jsonl"), write(tmp_path, "{", name="bad.jsonl")
    assert gc.isenabled()
    load_items(good)
    assert gc.isenabled()
    with pytest.raises(ItemError):
        load_items(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        load_items(good)
        assert not gc.isenabled()  # left off, as the caller had it
    finally:
        gc.enable()


# --------------------------------------------------------------------------- the item set


def random_items(tmp_path: Path, seed: int, n: int = 60) -> tuple[ItemSet, list[dict[str, Any]]]:
    rng = random.Random(seed)
    names = ["a", "b", "c", "d"]
    objs = []
    for i in range(n):
        chosen = [s for s in names if rng.random() < 0.7] or [rng.choice(names)]
        rng.shuffle(chosen)
        objs.append({"id": f"i{i}", "outputs": {s: f"{s} says {i}" for s in chosen}})
    return load_items(write(tmp_path, *objs, name=f"random{seed}.jsonl")), objs


@pytest.mark.parametrize("seed", range(5))
def test_by_system_and_with_all_against_brute_force(tmp_path: Path, seed: int) -> None:
    items, objs = random_items(tmp_path, seed)
    names = ["a", "b", "c", "d"]
    first_seen = list(dict.fromkeys(s for obj in objs for s in obj["outputs"]))
    assert list(items.systems) == first_seen
    assert list(items.by_system) == first_seen
    for s in names:
        assert items.by_system.get(s, ()) == tuple(i for i, obj in enumerate(objs) if s in obj["outputs"])
    for r in range(len(names) + 1):
        for combo in itertools.combinations(names, r):
            expected = tuple(i for i, obj in enumerate(objs) if all(s in obj["outputs"] for s in combo))
            assert items.with_all(combo) == expected, combo
            assert items.with_all(list(reversed(combo))) == expected


def test_with_all_edge_cases_and_cache(tmp_path: Path) -> None:
    items = load_items(write(tmp_path, {"id": "1", "outputs": {"a": "x", "b": "y"}},
                             {"id": "2", "outputs": {"a": "x"}}, {"id": "3", "outputs": {"b": "y", "a": "x"}}))
    assert items.with_all(["a"]) == (0, 1, 2)  # every item has "a"
    assert items.with_all(["a", "b"]) == (0, 2)
    assert items.with_all([]) == (0, 1, 2)
    assert items.with_all(["a", "nope"]) == ()
    assert items.with_all(("b", "a")) is items.with_all({"a", "b"})  # cached per set of names
    assert items.by_system is items.by_system
    with pytest.raises(TypeError, match="not one string"):
        items.with_all("ab")


def test_sequence_and_by_id(tmp_path: Path) -> None:
    items = load_items(write(tmp_path, OK, {"id": "b", "outputs": {"x": "t"}}))
    assert len(items) == 2 and items[-1].id == "b" and [i.id for i in items[:1]] == ["a"]
    assert items.by_id("b") is items[1]
    with pytest.raises(KeyError, match="no item with id 'c'"):
        items.by_id("c")
    assert repr(items) == f"ItemSet({str(items.path)!r}, 2 items, systems=['x'])"


def test_check_systems(tmp_path: Path) -> None:
    items = load_items(DEMO)
    items.check_systems(["gpt4", "t5", "human", "good"], "config.toml, [[tasks]] 1, systems")
    with pytest.raises(ItemError) as info:
        items.check_systems(["gpt4", "gtp4"], "config.toml, [[tasks]] 1, systems")
    assert str(info.value) == (f"config.toml, [[tasks]] 1, systems: system 'gtp4' has no outputs in {DEMO} (did "
                               "you mean 'gpt4'?); the file's systems: gpt4, t5, human, good, bad")
    with pytest.raises(ValueError, match=r"^here: system 'llama' has no outputs in .*; the file's systems: gpt4"):
        items.check_systems(["llama"], "here", error=ValueError)


def test_a_lone_surrogate_escape_is_refused_and_a_pair_is_one_character(tmp_path: Path) -> None:
    """``\\ud800`` alone is valid JSON but not a character: no page or database can carry it (issue 25's hostile
    text). An emoji written as its two escapes is one character and loads."""
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "r1", "outputs": {"a": "smile \\ud83d\\ude00 ok"}}\n'
                    '{"id": "r2", "input": "x", "outputs": {"a": "bad \\ud800 x"}}\n', encoding="utf-8")
    with pytest.raises(ItemError) as err:
        load_items(path)
    assert str(err.value) == (f"{path}, line 2: key 'outputs': '\\ud800' at character 4 is half of a surrogate pair, "
                              "not a character (an escape like \\ud800 without its partner); fix the text")
    path.write_text('{"id": "r1", "outputs": {"a": "smile \\ud83d\\ude00 ok"}}\n', encoding="utf-8")
    assert load_items(path)[0].outputs["a"] == "smile \U0001f600 ok"
