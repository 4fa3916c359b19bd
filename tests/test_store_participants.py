"""The invited participants' part of the storage contract, on both backends (SQLite file, real PostgreSQL).

``db_url`` (tests/conftest.py) gives a fresh SQLite path, then a fresh database on the PostgreSQL server the
tests start themselves (tests/pg.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.invite import invite, key_hash, key_matches, statuses_of
from evalkit.store import TABLES, Participant, Store, open_store

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def test_add_participants_once_and_never_changes_a_stored_one(store: Store) -> None:
    assert store.participants() == [] and store.participant("P01") is None
    assert store.add_participants([("P01", "h1", "ada@example.org"), ("P02", "h2", "")]) == ["P01", "P02"]
    p1 = store.participant("P01")
    assert isinstance(p1, Participant) and (p1.key_hash, p1.note) == ("h1", "ada@example.org") and p1.created_at
    # again, with other hashes and notes: P01 and P02 stay as they were, P03 is added
    assert store.add_participants([("P02", "other", "x"), ("P03", "h3", "n3"), ("P01", "other", "y")]) == ["P03"]
    assert store.participant("P01") == p1 and store.participant("P02").key_hash == "h2"
    assert [p.participant_id for p in store.participants()] == ["P01", "P02", "P03"]  # invitation order
    assert store.participant("p01") is None and store.participant("") is None  # exact ids only
    assert store.counts()["participants"] == 3 and not store.is_empty()
    assert [r["participant_id"] for r in store.table("participants")] == ["P01", "P02", "P03"]


@pytest.mark.parametrize("bad", [("", "h", ""), (" P1", "h", ""), ("P1", "", "")])
def test_add_participants_refuses_bad_rows_and_stores_none_of_them(store: Store, bad: tuple) -> None:
    with pytest.raises(ValueError):
        store.add_participants([("OK1", "h", ""), bad])
    assert store.participants() == []


def test_invite_keeps_the_first_key_and_reports_the_skipped_ids(store: Store) -> None:
    first = invite(store, [("P01", "a"), ("P02", "b")])
    assert [i.participant_id for i in first.created] == ["P01", "P02"] and first.skipped == []
    second = invite(store, [("P02", "changed"), ("P03", "c")])
    assert [i.participant_id for i in second.created] == ["P03"] and second.skipped == ["P02"]
    p2 = store.participant("P02")
    assert key_matches(p2, first.created[1].key) and p2.note == "b"  # the first link still works
    assert p2.key_hash == key_hash(first.created[1].key)
    assert first.created[1].key not in str(store.table("participants"))  # only the hash is stored


def test_statuses_follow_the_participants_sessions(store: Store) -> None:
    invite(store, [("P01", ""), ("P02", ""), ("P03", "")])
    a = store.create_session(study_version="v", external_id="P02", meta={"invited": True}, one_per_participant=True)
    b = store.create_session(study_version="v", external_id="P03", meta={"invited": True}, one_per_participant=True)
    store.complete_session(b.session_id)
    store.create_session(study_version="v", external_id="stranger")
    got = {s.participant_id: (s.status, s.session_id) for s in statuses_of(store)}
    assert got == {"P01": ("not started", ""), "P02": ("not finished", a.session_id),
                   "P03": ("finished", b.session_id)}
    store.set_session_status(a.session_id, "trashed", actor="test")  # a trashed session frees the participant
    assert {s.participant_id: s.status for s in statuses_of(store)}["P02"] == "not started"


INVITER = """
import json, sys, time
from evalkit.store import open_store
url, tag, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
store = open_store(url)
rows = [(f"P{i:03d}", tag, "") for i in range(300)]
while time.time() < start:
    time.sleep(0.001)
added = []
for k in range(0, 300, 30):  # ten transactions each, interleaving with the other process's
    added += store.add_participants(rows[k:k + 30])
store.close()
print(json.dumps(added))
"""


def test_two_processes_inviting_the_same_ids_at_once_do_not_duplicate(db_url: str, store: Store) -> None:
    start = time.time() + 2.0  # both processes past their imports and connected
    procs = [subprocess.Popen([sys.executable, "-c", INVITER, db_url, tag, str(start)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for tag in ("hashA", "hashB")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    added_a, added_b = (json.loads(out) for out, _ in outs)
    assert not set(added_a) & set(added_b)  # no id was added twice...
    assert sorted(added_a + added_b) == [f"P{i:03d}" for i in range(300)]  # ... and none was lost
    stored = {p.participant_id: p.key_hash for p in store.participants()}
    assert len(stored) == 300
    assert all(stored[i] == "hashA" for i in added_a) and all(stored[i] == "hashB" for i in added_b)


def test_participants_are_copied_between_backends(tmp_path: Path, pg_url: str) -> None:
    assert "participants" in TABLES
    with open_store(tmp_path / "src.sqlite") as src:
        invite(src, [("P01", "note one"), ("P02", "")])
        with open_store(pg_url) as dest:
            counts = dest.import_from(src)
            assert counts["participants"] == 2
            assert dest.table("participants") == src.table("participants")
            assert dest.participants() == src.participants()


def test_inviting_does_not_move_the_data_version(store: Store) -> None:
    """The results page's cache key is about answers: adding invitations (or adding them again) keeps it."""
    version = store.data_version()
    assert store.add_participants([("P01", "h1", ""), ("P02", "h2", "")]) == ["P01", "P02"]
    assert invite(store, [("P03", "")]).created and store.add_participants([("P01", "x", "")]) == []
    assert store.data_version() == version
    store.create_session(study_version="v", external_id="P01", meta={"invited": True})
    assert store.data_version() != version  # a session does move it


def test_replace_participant_keys_is_all_or_nothing(store: Store) -> None:
    store.add_participants([("P01", "h1", "n1"), ("P02", "h2", "")])
    assert store.replace_participant_keys({"P01": "new1", "P99": "x"}) == ["P99"]
    assert store.participant("P01").key_hash == "h1" and store.admin_log() == []
    assert store.replace_participant_keys({"P01": "new1", "P02": "new2"}, actor="cli") == []
    assert (store.participant("P01").key_hash, store.participant("P01").note) == ("new1", "n1")
    assert store.participant("P02").key_hash == "new2"
    assert [(e["actor"], e["detail"]["participant_id"]) for e in store.admin_log()] == [("cli", "P01"), ("cli", "P02")]
    with pytest.raises(ValueError):
        store.replace_participant_keys({"P01": ""})
