"""Fixed assignments (``assignment = "fixed"``): each invited participant's own ordered list of items, from a CSV
or the items' ``participants``; and per-participant completion codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.__main__ import main
from evalkit.assignments import AssignmentError, read_assignments
from evalkit.checks import Outcome, completion_code
from evalkit.config import ConfigError, open_study
from evalkit.invite import InviteError, invite, read_participants_csv
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.survey import finish_session
from tests.item_study import make_items_study

SCORE = """
[[tasks]]
kind = "score"
id = "quality"
items = "items.jsonl"
assignment = "fixed"
{extra}
[[tasks.scales]]
id = "overall"
label = "Overall"
type = "slider"
min = 0
max = 100
"""


def fixed_study(tmp: Path, rows: str | None = "participant_id,item_id\nP01,r3\nP01,r0\nP01,r7\nP02,r0\n",
                extra: str = "", study: str = "") -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    if rows is not None:
        (tmp / "assignments.csv").write_text(rows, encoding="utf-8")
        extra = 'assignments = "assignments.csv"\n' + extra
    return make_items_study(tmp, SCORE.replace("{extra}", extra), extra=study)


def test_each_participant_gets_exactly_their_items_in_order(tmp_path: Path) -> None:
    loaded = open_study(fixed_study(tmp_path))
    for seed in (1, 2):
        got = plan(loaded.study, loaded.pools, seed, loaded.item_sets, participant="P01")
        assert [q.review_ids[0] for q in got] == ["r3", "r0", "r7"]
        assert all(set(q.sources) == {"gpt4", "t5", "human"} and len(q.sources) == 3 for q in got)
        lines = (tmp_path / "items.jsonl").read_text().splitlines()
        items = {json.loads(line)["id"]: json.loads(line) for line in lines}
        assert all(q.texts == tuple(items[q.review_ids[0]]["outputs"][s] for s in q.sources) for q in got)
    assert [q.review_ids[0] for q in plan(loaded.study, loaded.pools, 1, loaded.item_sets, participant="P02")] == ["r0"]
    # nobody else has a list: no questions (an open-link session, or an invited id without a list)
    assert plan(loaded.study, loaded.pools, 1, loaded.item_sets) == []
    assert plan(loaded.study, loaded.pools, 1, loaded.item_sets, participant="P99") == []


def test_outputs_are_shuffled_per_participant_unless_shuffle_is_false(tmp_path: Path) -> None:
    loaded = open_study(fixed_study(tmp_path / "a"))
    orders = {tuple(q.sources) for seed in range(20)
              for q in plan(loaded.study, loaded.pools, seed, loaded.item_sets, participant="P01")}
    assert len(orders) > 1
    loaded = open_study(fixed_study(tmp_path / "b", extra="shuffle = false\n"))
    orders = {tuple(q.sources) for seed in range(20)
              for q in plan(loaded.study, loaded.pools, seed, loaded.item_sets, participant="P01")}
    assert orders == {("gpt4", "t5", "human")}


def test_lists_may_come_from_the_items_file(tmp_path: Path) -> None:
    config = fixed_study(tmp_path, rows=None)
    lines = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    lines[5]["participants"] = ["U1", "U2"]
    lines[2]["participants"] = ["U2"]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    loaded = open_study(config)
    assert [q.review_ids[0] for q in plan(loaded.study, loaded.pools, 3, loaded.item_sets, participant="U2")] == [
        "r2", "r5"]
    assert [q.review_ids[0] for q in plan(loaded.study, loaded.pools, 3, loaded.item_sets, participant="U1")] == [
        "r5"]


@pytest.mark.parametrize(("rows", "extra", "message"), [
    ("participant_id,item_id\nP01,nope\n", "",
     "assignments.csv: the list of 'P01' names item 'nope', which items.jsonl does not have"),
    ("participant_id,item_id\nP01,r1\nP01,r1\n", "", "item 'r1' is on the list of 'P01' twice (also on line 2)"),
    ("participant_id,item_id\nP 1,r1\n", "", "line 2: the participant id 'P 1' has characters other than"),
    ("who,item_id\nP01,r1\n", "", "no participant column"),
    ("participant_id,item_id\n", "", "no rows below the header"),
    ("participant_id,item_id\nP01,r1\n", "questions = 3\n", "key 'questions': does not go with assignment"),
    ("participant_id,item_id\nP01,r1\n", "outputs_per_question = 2\n", "key 'outputs_per_question': does not go"),
    ("participant_id,item_id\nP01,r1\n", "judgments_per_item = 2\n", "key 'judgments_per_item': does not go"),
    ("participant_id,item_id\nP01,r1\n", 'shuffle = "no"\n', "key 'shuffle': must be true or false"),
    (None, "", "needs each participant's list"),
    ("participant_id,item_id\nP01,gold0\n", "", "a check item: name it in 'tutorial' or 'attention_checks'"),
])
def test_bad_lists_are_refused_naming_the_problem(tmp_path: Path, rows: str | None, extra: str,
                                                  message: str) -> None:
    config = fixed_study(tmp_path, rows, extra)
    if "gold0" in (rows or ""):
        config = make_items_study(tmp_path, SCORE.replace("{extra}", 'assignments = "assignments.csv"\n'), gold=1)
    with pytest.raises(ConfigError) as err:
        open_study(config)
    assert message in str(err.value)


def test_assignment_keys_need_the_fixed_mode(tmp_path: Path) -> None:
    (tmp_path / "assignments.csv").write_text("participant_id,item_id\nP01,r1\n")
    block = SCORE.replace('assignment = "fixed"\n{extra}', 'questions = 2\nassignments = "assignments.csv"\n')
    with pytest.raises(ConfigError, match="key 'assignments': only applies to a task with assignment"):
        open_study(make_items_study(tmp_path, block))


def test_a_csv_with_other_header_names_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("\ufeffUser_ID,Item,note\n\nu-1,a,x\nu-2,b\nu-1,c\n", encoding="utf-8")
    assert read_assignments(path) == {"u-1": ("a", "c"), "u-2": ("b",)}
    path.write_text("user_id\nu-1\n")
    with pytest.raises(AssignmentError, match="no item column"):
        read_assignments(path)
    with pytest.raises(AssignmentError, match="file not found"):
        read_assignments(tmp_path / "missing.csv")


def test_check_and_plan_commands_show_the_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(fixed_study(tmp_path))
    assert main(["check", config]) == 0
    said = capsys.readouterr()
    assert "fixed lists (2 participants with 1-3 items each), every output of its item" in said.out
    out = said.out + said.err
    assert "participants = \"open\": only the private links of `evalkit invite` say who" in out
    assert main(["plan", "--config", config, "--seed", "4", "--participant", "P01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["participant"] == "P01" and [q["texts"][0]["review_id"] for q in out["questions"]] == ["r3", "r0", "r7"]


# ----------------------------------------------------------------------------- per-participant codes


def test_participants_csv_reads_own_codes_and_refuses_bad_ones(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text("user_id,token_pass,token_fail,note\nA1,pass1,fail1,x\nA2,,,\n", encoding="utf-8")
    assert read_participants_csv(path) == [("A1", "x", "pass1", "fail1"), ("A2", "", "", "")]
    path.write_text("participant_id,code_pass,code_fail\nA1,same,same\n")
    with pytest.raises(InviteError, match="line 2: the pass and fail codes of 'A1' are the same"):
        read_participants_csv(path)
    path.write_text("participant_id,code_pass\nA1,has space\n")
    with pytest.raises(InviteError, match="line 2: 'code_pass' must be 1-64 letters"):
        read_participants_csv(path)


def test_an_invited_participant_gets_their_own_codes(tmp_path: Path) -> None:
    config = fixed_study(tmp_path, study='completion_code_pass = "STUDYPASS"\ncompletion_code_fail = "STUDYFAIL"\n')
    loaded = open_study(config)
    with open_store(loaded.study.database) as store:
        invite(store, [("P01", "", "OWNPASS", "OWNFAIL"), ("P02", "", "", "")])
        assert store.participant("P01").code_pass == "OWNPASS"
        passed, failed = Outcome(0, 0, True, status="passed"), Outcome(1, 1, False, status="failed")
        assert completion_code(loaded.study, passed, store.participant("P01")) == "OWNPASS"
        assert completion_code(loaded.study, failed, store.participant("P01")) == "OWNFAIL"
        assert completion_code(loaded.study, passed, store.participant("P02")) == "STUDYPASS"
        own = store.create_session(study_version=loaded.version, external_id="P01", meta={"invited": True})
        # an open session whose platform id happens to equal an invited id does not get the invited codes
        other = store.create_session(study_version=loaded.version, external_id="P01x")
        assert finish_session(store, loaded.study, own.session_id).completion_code == "OWNPASS"
        assert finish_session(store, loaded.study, other.session_id).completion_code == "STUDYPASS"


def test_check_items_on_lists_are_asked_where_the_list_has_them_and_only_there(tmp_path: Path) -> None:
    config = fixed_study(tmp_path, "participant_id,item_id\nP01,r3\nP01,gold0\nP01,r0\nP02,r1\nP02,gold1\n",
                         'tutorial = ["gold0", "gold2"]\nattention_checks = ["gold1"]\n')
    lines = [json.loads(x) for x in (tmp_path / "items.jsonl").read_text().splitlines()]
    for g in range(3):
        lines.append({"id": f"gold{g}", "input": "Check.", "outputs": {"gpt4": "ok", "t5": "no"},
                      "check": {"expect": {"gpt4": {"score": [50, 100]}, "t5": {"score_greaterthan": "gpt4"}}}})
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    loaded = open_study(config)

    def shown(pid: str | None) -> list[tuple[str, str | None]]:
        return [(q.review_ids[0], q.check.type if q.check else None)
                for q in plan(loaded.study, loaded.pools, 2, loaded.item_sets, participant=pid)]

    # gold2 is on no list: everyone's tutorial, first; gold0 / gold1 only where their list has them
    assert shown("P01") == [("gold2", "tutorial"), ("r3", None), ("gold0", "tutorial"), ("r0", None)]
    assert shown("P02") == [("gold2", "tutorial"), ("r1", None), ("gold1", "attention")]
    assert shown("P99") == [] and shown(None) == []  # no list: nothing of the task, checks included


def test_list_progress_counts_the_lists_items_a_check_on_it_included() -> None:
    from evalkit.invite import ParticipantStatus, list_progress

    statuses = [ParticipantStatus("P01", "", "t", "finished", "s1"), ParticipantStatus("P02", "", "t", "not started"),
                ParticipantStatus("P04", "", "t", "not started")]
    lists = {"P01": ("r3", "gold0", "r0"), "P02": ("r1",), "P03": ("r2",)}
    # P01 answered the list (its check item too) and the everyone's tutorial gold2, which is not on the list
    frame = list_progress(lists, statuses, {"s1": {"r3", "gold0", "r0", "gold2"}})
    rows = {r["participant_id"]: (r["status"], r["items"], r["answered"]) for r in frame.to_dict("records")}
    assert rows == {"P01": ("finished", 3, 3), "P02": ("not started", 1, 0), "P03": ("not invited", 1, 0),
                    "P04": ("no list", 0, 0)}
    assert frame.set_index("participant_id").loc["P01", "share"] == 1.0
