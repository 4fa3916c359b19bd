"""Invited participants: ids, CSVs, private links, the link check, statuses, and ``python -m evalkit invite``."""

from __future__ import annotations

import csv
import io
import urllib.parse
from pathlib import Path

import pytest

from evalkit.config import ConfigError, load_study
from evalkit.invite import (
    InviteError,
    LinkCheck,
    check_base_url,
    check_id,
    check_link,
    generated_ids,
    invitations_csv,
    invite,
    invited_resume,
    key_hash,
    key_matches,
    new_key,
    participant_statuses,
    private_link,
    read_ids_csv,
    reissue,
    status_frame,
    status_text,
    statuses_csv,
)
from evalkit.store import Participant, Session, open_store
from tests.helpers import ROOT, copy_demo
from tests.test_cli import run as run_cli


def run(*args: str, cwd: Path, env: dict[str, str] | None = None):
    """``python -m evalkit`` run from ``cwd`` (a researcher's study folder), this checkout importable."""
    return run_cli(*args, cwd=cwd, env={"PYTHONPATH": str(ROOT), **(env or {})})


def session(external_id: str, *, meta: dict | None = None, completed: bool = False, status: str = "active",
            started: str = "2026-01-01T00:00:00.000Z") -> Session:
    return Session(session_id=f"{external_id}-{started}", evaluator_name="", external_id=external_id, seed=1,
                   study_version="v", started_at=started,
                   completed_at="2026-01-01T01:00:00.000Z" if completed else None,
                   user_agent="", status=status, completion_code=None, meta=meta or {})


# ----------------------------------------------------------------------------- ids, keys, links


def test_generated_ids_are_distinct_and_well_formed() -> None:
    ids = generated_ids(500)
    assert len(set(ids)) == 500 and all(check_id(i) == i and i.startswith("P-") and len(i) == 10 for i in ids)
    with pytest.raises(InviteError):
        generated_ids(0)


@pytest.mark.parametrize("bad, needle", [
    ("", "empty"), ("   ", "empty"), ("a b", "characters"), ("P1<x>", "characters"), ("-cmd", "start with a letter"),
    ("=cmd", "characters"), ("x" * 65, "longer than 64")])
def test_bad_ids_are_refused(bad: str, needle: str) -> None:
    with pytest.raises(InviteError, match=needle):
        check_id(bad, "ids.csv, line 3")


def test_keys_are_random_and_only_their_hash_matches() -> None:
    keys = {new_key() for _ in range(200)}
    assert len(keys) == 200 and all(len(k) >= 22 for k in keys)
    key = next(iter(keys))
    p = Participant("P01", key_hash(key), "", "t")
    assert key_matches(p, key) and not key_matches(p, key[:-1]) and not key_matches(p, "") \
        and not key_matches(p, p.key_hash)  # the stored hash is not a key


def test_private_link_keeps_the_base_url_and_encodes_the_id() -> None:
    link = private_link("https://s.example.org/study/?lang=de", "a+b@x.org", "k-1_2")
    parts = urllib.parse.urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "s.example.org", "/study/")
    assert urllib.parse.parse_qs(parts.query) == {"lang": ["de"], "participant": ["a+b@x.org"], "key": ["k-1_2"]}
    assert check_base_url(" http://localhost:8501/ ") == "http://localhost:8501/"
    for bad in ("localhost:8501", "ftp://x.org/", "https://", "https://x.org/?key=1", "https://x .org/"):
        with pytest.raises(InviteError, match="base-url"):
            check_base_url(bad)


# ----------------------------------------------------------------------------- CSV


def write(tmp_path: Path, text: str, name: str = "ids.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_an_id_and_an_email_column(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeffEmail,Participant_ID\nada@x.org, P01 \n\n,P02\n")
    assert read_ids_csv(path) == [("P01", "ada@x.org"), ("P02", "")]


def test_csv_with_one_unnamed_column_and_chosen_columns(tmp_path: Path) -> None:
    assert read_ids_csv(write(tmp_path, "code\nA1\nA2\n")) == [("A1", ""), ("A2", "")]
    path = write(tmp_path, "who,where\nB1,lab 1\n", "b.csv")
    assert read_ids_csv(path, id_column="who", note_column="where") == [("B1", "lab 1")]


@pytest.mark.parametrize("text, options, needle", [
    ("", {}, "the file is empty"),
    ("id\n", {}, "no participant ids"),
    ("id,note\nP1,a\nP1,b\n", {}, "line 3: the id 'P1' is listed twice (also on line 2)"),
    ("id,note\nP 1,a\n", {}, "line 2: the participant id 'P 1'"),
    ("x,y\n1,2\n", {}, "no id column"),
    ("id\nP1\n", {"id_column": "pid"}, "no column 'pid'"),
    ("id\nP1\n", {"note_column": "email"}, "no column 'email'"),
    ("note,id\nonly-a-note\n", {}, "line 2: the row has no 'id' column"),
], ids=["empty", "header-only", "duplicate", "bad-id", "no-id-column", "missing-id-column", "missing-note-column",
        "short-row"])
def test_bad_csvs_name_the_file_and_the_line(tmp_path: Path, text: str, options: dict, needle: str) -> None:
    with pytest.raises(InviteError) as err:
        read_ids_csv(write(tmp_path, text), **options)
    assert "ids.csv" in str(err.value) and needle in str(err.value)


def test_missing_and_binary_csv(tmp_path: Path) -> None:
    with pytest.raises(InviteError, match="file not found"):
        read_ids_csv(tmp_path / "nope.csv")
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00id")
    with pytest.raises(InviteError, match="UTF-8"):
        read_ids_csv(tmp_path / "bin.csv")


def test_invitations_csv_neutralises_formulas(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.sqlite") as store:
        result = invite(store, [("P01", "=HYPERLINK(\"x\")"), ("P02", "")])
    rows = list(csv.DictReader(io.StringIO(invitations_csv(result.created, "https://s.example.org/"))))
    assert [r["participant_id"] for r in rows] == ["P01", "P02"] and rows[0]["note"].startswith("'=")
    assert rows[1]["link"] == f"https://s.example.org/?participant=P02&key={result.created[1].key}"


# ----------------------------------------------------------------------------- the consent page's decisions


def test_check_link_outcomes(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.sqlite") as store:
        [p1] = invite(store, [("P01", "")]).created
        assert check_link(store, {"participant": "P01", "key": p1.key}, "open") == LinkCheck("valid", "P01")
        assert check_link(store, {"participant": "P01", "key": p1.key}, "invited") == LinkCheck("valid", "P01")
        for query in ({"participant": "P01", "key": p1.key + "x"}, {"participant": "P01"},
                      {"participant": "P99", "key": p1.key}, {"participant": "p01", "key": p1.key}):
            assert check_link(store, query, "open").outcome == "invalid", query
        assert check_link(store, {}, "invited").outcome == "required"
        assert check_link(store, {"PROLIFIC_PID": "x1", "SESSION_ID": "s"}, "invited").outcome == "required"
        assert check_link(store, {"PROLIFIC_PID": "P01"}, "open").outcome == "reserved"  # an invited id needs its key
        assert check_link(store, {"PROLIFIC_PID": "x1"}, "open").outcome == "none"
        assert check_link(store, {}, "open").outcome == "none"


def test_invited_resume_hands_over_only_a_session_started_from_the_private_link() -> None:
    assert invited_resume(None) == "start"
    assert invited_resume(session("P01", meta={"invited": True})) == "resume"
    assert invited_resume(session("P01", meta={"invited": True}, completed=True)) == "resume"
    assert invited_resume(session("P01", meta={"session_id": "x"})) == "refuse"  # someone used the id before
    assert invited_resume(session("P01", meta={"invited": "true"})) == "refuse"


def test_statuses_and_their_text() -> None:
    people = [Participant(pid, "", "t", note) for pid, note in (("P1", "h"), ("P2", "h"), ("P3", "h"))]
    people = [Participant(p.participant_id, "h", n, "t") for p, n in zip(people, ("lab\x1b[2J", "", ""), strict=True)]
    sessions = [session("P2", started="2026-01-01T00:00:00.000Z", completed=True),
                session("P2", started="2026-01-02T00:00:00.000Z"),  # the newest counts
                session("P3", status="trashed"), session("other")]
    statuses = participant_statuses(people, sessions)
    assert [(s.participant_id, s.status) for s in statuses] == [("P1", "not started"), ("P2", "not finished"),
                                                                  ("P3", "not started")]
    text = status_text(statuses)
    assert text.startswith("Invited participants: 3 · not started 2 · not finished 1 · finished 0")
    assert "Not started (2):\n  P1  lab[2J\n  P3\n" in text and "Not finished (1):\n  P2  (started 2026-01-02" in text


def test_statuses_mark_sessions_that_finished_without_work_or_checks() -> None:
    people = [Participant(pid, "h", "", "t") for pid in ("P1", "P2", "P3", "P4")]
    sessions = [session("P1", completed=True, meta={"outcome": "passed"}),
                session("P2", completed=True, meta={"outcome": "full"}),
                session("P3", completed=True, meta={"outcome": "incomplete"}),
                session("P4", meta={"outcome": "full"})]  # (not finished: no outcome yet)
    statuses = participant_statuses(people, sessions)
    assert [s.flag for s in statuses] == ["", "no queued judgment (study full)", "without its checks or judgments",
                                          ""]
    text = status_text(statuses)
    assert ("Finished, but look at these (2):\n  P2  no queued judgment (study full)\n"
            "  P3  without its checks or judgments\n") in text
    rows = list(csv.DictReader(io.StringIO(statuses_csv(statuses))))
    assert [r["outcome"] for r in rows] == ["passed", "full", "incomplete", ""]
    assert list(status_frame(statuses)["flag"]) == [s.flag for s in statuses]


def test_the_participants_key_of_the_config(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    assert load_study(cfg).participants == "open"
    text = cfg.read_text()
    cfg.write_text(text.replace("[study]\n", "[study]\nparticipants = \"invited\"\n", 1))
    assert load_study(cfg).participants == "invited"
    for bad in ('"Invited"', "true", '""'):
        cfg.write_text(text.replace("[study]\n", f"[study]\nparticipants = {bad}\n", 1))
        with pytest.raises(ConfigError, match=r"config.toml: \[study\]: key 'participants': must be one of 'open', "
                                              r"'invited'"):
            load_study(cfg)


# ----------------------------------------------------------------------------- the command


def test_cli_invite_n_then_csv_then_again_then_status(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    out = run("invite", "--n", "3", "--db", str(db), "--base-url", "https://s.example.org/", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 3 and all(r["link"].startswith("https://s.example.org/?participant=P-") for r in rows)
    ids = write(tmp_path, "participant_id,email\nP01,ada@x.org\nP02,bo@x.org\n")
    out = run("invite", "--csv", str(ids), "--db", str(db), "--out", str(tmp_path / "links.csv"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and "wrote 2 private link(s)" in out.stderr
    text = (tmp_path / "links.csv").read_text(encoding="utf-8")
    links = {r["participant_id"]: r for r in csv.DictReader(io.StringIO(text))}
    assert links["P01"]["note"] == "ada@x.org" and links["P01"]["link"].startswith("http://localhost:8501/?")
    with open_store(db) as store:
        key = urllib.parse.parse_qs(urllib.parse.urlsplit(links["P01"]["link"]).query)["key"][0]
        assert key_matches(store.participant("P01"), key)
        before = store.participants()
    again = run("invite", "--csv", str(ids), "--db", str(db), cwd=tmp_path)  # the same ids: skipped, unchanged
    assert again.returncode == 0 and again.stdout == ""
    assert "skipped 2 id(s) already invited: P01, P02. Their links are unchanged" in again.stderr
    with open_store(db) as store:
        assert store.participants() == before
        store.create_session(study_version="v", external_id="P01", meta={"invited": True})
    refused = run("invite", "--n", "1", "--db", str(db), "--out", str(tmp_path / "links.csv"), cwd=tmp_path)
    assert refused.returncode == 1 and "the file exists" in refused.stderr
    with open_store(db) as store:
        assert len(store.participants()) == 5  # refused before anything was stored
    status = run("invite", "--status", "--db", str(db), cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("Invited participants: 5 · not started 4 · not finished 1 · finished 0")
    assert "  P02  bo@x.org" in status.stdout and "Not finished (1):\n  P01  ada@x.org  (started" in status.stdout


def test_cli_invite_uses_the_configs_database_and_says_when_the_study_is_open(tmp_path: Path) -> None:
    cfg = copy_demo(tmp_path)
    out = run("invite", "--n", "2", "--config", str(cfg), cwd=tmp_path, env={"EVALKIT_DATABASE": ""})
    assert out.returncode == 0, out.stderr
    assert "participants is 'open'" in out.stderr
    with open_store(tmp_path / "data" / "responses.sqlite") as store:
        assert len(store.participants()) == 2


@pytest.mark.parametrize("args, needle", [
    (["--n", "0"], "must be in 1..100000"),
    (["--n", "2", "--csv", "x.csv"], "not allowed with argument"),
    ([], "one of the arguments --n --csv --status --reissue is required"),
    (["--reissue"], "expected at least one argument"),
])
def test_cli_invite_usage_errors(tmp_path: Path, args: list[str], needle: str) -> None:
    out = run("invite", *args, "--db", str(tmp_path / "db.sqlite"), cwd=tmp_path)
    assert out.returncode == 2 and needle in out.stderr


@pytest.mark.parametrize("args, needle", [
    (["--csv", "missing.csv"], "missing.csv: file not found"),
    (["--n", "1", "--base-url", "localhost:8501"], "--base-url must be the survey's http(s) address"),
    (["--status"], "database not found"),
    (["--n", "1", "--config", "nope.toml"], "study config not found"),
])
def test_cli_invite_errors_are_one_line_without_a_traceback(tmp_path: Path, args: list[str], needle: str) -> None:
    db = [] if "--config" in args else ["--db", str(tmp_path / "db.sqlite")]
    out = run("invite", *args, *db, cwd=tmp_path)
    assert out.returncode == 1 and needle in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "db.sqlite").exists() or "--status" not in args


# ----------------------------------------------------------------------------- a lost link: --reissue


def test_reissue_gives_a_new_key_and_the_old_link_stops_working(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.sqlite") as store:
        old = {i.participant_id: i.key for i in invite(store, [("P01", "ada"), ("P02", ""), ("P03", "")]).created}
        version = store.data_version()
        [new] = reissue(store, ["P01", "P01"])  # each id once
        assert new.participant_id == "P01" and new.note == "ada" and new.key != old["P01"]
        assert check_link(store, {"participant": "P01", "key": new.key}, "open") == LinkCheck("valid", "P01")
        assert check_link(store, {"participant": "P01", "key": old["P01"]}, "open").outcome == "invalid"
        assert check_link(store, {"participant": "P02", "key": old["P02"]}, "open").outcome == "valid"  # untouched
        assert store.participant("P01").note == "ada"
        assert [(e["action"], e["detail"]) for e in store.admin_log()] == [("reissue_key", {"participant_id": "P01"})]
        assert store.data_version() != version  # logged like every admin action
        # an unknown id among known ones: refused, nothing changed (P02 keeps its key)
        before = store.participants()
        with pytest.raises(InviteError, match=r"not invited: P99, p02\. Nothing was changed"):
            reissue(store, ["P02", "P99", "p02"])
        assert store.participants() == before and len(store.admin_log()) == 1
        for bad in ([], ["bad id"]):
            with pytest.raises(InviteError):
                reissue(store, bad)


def test_a_reissued_link_resumes_the_session_already_started(tmp_path: Path) -> None:
    with open_store(tmp_path / "db.sqlite") as store:
        [first] = invite(store, [("P01", "")]).created
        started = store.create_session(study_version="v", external_id="P01", meta={"invited": True})
        [new] = reissue(store, ["P01"])
        link = check_link(store, {"participant": "P01", "key": new.key}, "invited")
        assert link == LinkCheck("valid", "P01")
        earlier = store.find_session(link.participant_id)
        assert earlier.session_id == started.session_id and invited_resume(earlier) == "resume"
        assert check_link(store, {"participant": "P01", "key": first.key}, "invited").outcome == "invalid"


def test_cli_invite_reissue(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    missing = run("invite", "--reissue", "P01", "--db", str(db), cwd=tmp_path)
    assert missing.returncode == 1 and "database not found" in missing.stderr and not db.exists()
    ids = write(tmp_path, "participant_id,note\nP01,lab A\nP02,\n")
    assert run("invite", "--csv", str(ids), "--db", str(db), cwd=tmp_path).returncode == 0
    with open_store(db) as store:
        store.create_session(study_version="v", external_id="P02", meta={"invited": True})
        before = store.participant("P01")
    out = run("invite", "--reissue", "P01", "P02", "--db", str(db), "--base-url", "https://s.example.org/",
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [(r["participant_id"], r["note"]) for r in rows] == [("P01", "lab A"), ("P02", "")]
    assert "the old links of P01, P02 no longer work" in out.stderr
    assert "P02 has already started (not finished): the new link resumes their session" in out.stderr
    assert "P01 has already started" not in out.stderr
    with open_store(db) as store:
        for r in rows:
            key = urllib.parse.parse_qs(urllib.parse.urlsplit(r["link"]).query)["key"][0]
            assert r["link"].startswith("https://s.example.org/?participant=") and key_matches(
                store.participant(r["participant_id"]), key)
        assert store.participant("P01").key_hash != before.key_hash
        hashes = {p.participant_id: p.key_hash for p in store.participants()}
    unknown = run("invite", "--reissue", "P01", "P77", "--db", str(db), cwd=tmp_path)
    assert unknown.returncode == 1 and "not invited: P77. Nothing was changed" in unknown.stderr
    assert unknown.stdout == "" and "Traceback" not in unknown.stderr
    with open_store(db) as store:
        assert {p.participant_id: p.key_hash for p in store.participants()} == hashes
    to_file = run("invite", "--reissue", "P01", "--db", str(db), "--out", str(tmp_path / "new.csv"), cwd=tmp_path)
    assert to_file.returncode == 0 and to_file.stdout == "" and "wrote 1 new private link(s)" in to_file.stderr
    assert (tmp_path / "new.csv").read_text(encoding="utf-8").startswith("participant_id,note,link\nP01,lab A,http")
