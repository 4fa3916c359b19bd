"""AppTest tests of set-up errors, the participant-id resume rule and guarded writes (issue 10, section 2)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.store import Store, open_store
from tests.apptest.conftest import Harness, button, texts
from tests.helpers import make_read_only

PROLIFIC = {"PROLIFIC_PID": "pid-123", "STUDY_ID": "st-9", "SESSION_ID": "se-1"}


def agree(at):
    at.checkbox(key="consent_agree").check()
    return at


def start_as_participant(h: Harness, **query: str):
    at = agree(h.app(**query))
    button(at, "Start the study").click().run()
    assert not at.exception
    return at


# ----------------------------------------------------------------------------- participant ids


def test_the_same_participant_link_resumes_its_own_session(harness: Harness) -> None:
    at = start_as_participant(harness, **PROLIFIC)
    [session] = harness.store.sessions()
    again = harness.app(**PROLIFIC)  # Prolific sends the same SESSION_ID when the participant comes back
    assert not again.exception
    assert again.query_params["s"] == session.session_id == at.query_params["s"]
    assert len(harness.store.sessions()) == 1


@pytest.mark.parametrize("query", [
    {"PROLIFIC_PID": "pid-123"},  # the participant id alone
    {"PROLIFIC_PID": "pid-123", "STUDY_ID": "st-9"},
    {"PROLIFIC_PID": "pid-123", "STUDY_ID": "st-9", "SESSION_ID": "guessed"},
], ids=["pid-only", "pid-and-study", "wrong-session-id"])
def test_a_participant_id_alone_does_not_hand_over_the_session(harness: Harness, query: dict) -> None:
    owner = start_as_participant(harness, **PROLIFIC)
    token = owner.query_params["s"]
    session = harness.store.complete_session(token)  # even a finished session with its completion code
    attacker = harness.app(**query)
    assert not attacker.exception
    assert "s" not in attacker.query_params
    shown = texts(attacker)
    assert "already has a session" in shown and "open the study again from the recruiting platform" in shown
    assert token not in shown and session.completion_code not in shown
    assert not any(b.label == "Start the study" for b in attacker.button)  # no second session either
    assert len(harness.store.sessions()) == 1


def test_a_participant_without_a_stored_session_id_is_never_resumed_by_id(harness: Harness) -> None:
    start_as_participant(harness, PROLIFIC_PID="pid-7")
    again = harness.app(PROLIFIC_PID="pid-7", SESSION_ID="anything")
    assert "s" not in again.query_params and "already has a session" in texts(again)


def test_a_second_tab_cannot_start_a_second_session_for_the_same_participant(harness: Harness) -> None:
    first, second = agree(harness.app(**PROLIFIC)), agree(harness.app(**PROLIFIC))
    button(first, "Start the study").click().run()
    button(second, "Start the study").click().run()  # rendered before the first tab created its session
    assert not second.exception
    [session] = harness.store.sessions()
    assert second.query_params["s"] == session.session_id  # the same participant link: joins that session
    assert "already has a session" not in texts(second)


def test_a_stale_page_of_another_link_cannot_start_a_second_session(harness: Harness) -> None:
    first = agree(harness.app(**PROLIFIC))
    other = agree(harness.app(**{**PROLIFIC, "SESSION_ID": "other"}))  # rendered before the first one started
    button(first, "Start the study").click().run()
    button(other, "Start the study").click().run()
    assert not other.exception
    assert len(harness.store.sessions()) == 1
    assert "s" not in other.query_params and "already has a session" in texts(other)


# ----------------------------------------------------------------------------- guarded writes


def test_a_failed_start_shows_a_calm_message_and_keeps_the_form(harness: Harness, monkeypatch) -> None:
    def disk_full(self, **kwargs):
        raise OSError("disk full: /secret/path")

    monkeypatch.setattr(Store, "create_session", disk_full)
    at = agree(harness.app())
    at.text_input(key="consent_name").input("Ada")
    button(at, "Start the study").click().run()
    assert not at.exception
    assert "could not start your session" in at.error[0].value
    assert "/secret/path" not in texts(at)
    assert button(at, "Start the study") is not None and "s" not in at.query_params
    monkeypatch.undo()
    button(at, "Start the study").click().run()  # trying again works
    assert "s" in at.query_params and len(harness.store.sessions()) == 1


def test_a_bad_record_user_agent_value_is_a_set_up_error(make_harness) -> None:
    h = make_harness()
    h.config.write_text(h.config.read_text().replace("[study]", "[study]\nrecord_user_agent = 42", 1))
    message = _setup_message(h.app())
    assert "key 'record_user_agent': must be true or false" in message


# ----------------------------------------------------------------------------- set-up errors shown to evaluators


def _setup_message(at) -> str:
    assert not at.exception
    assert "not set up correctly" in at.error[0].value, texts(at)
    assert "Something went wrong" not in texts(at) and "answers so far are saved" not in texts(at)
    return at.code[0].value


def test_a_database_that_is_not_sqlite_gives_the_set_up_message(harness: Harness) -> None:
    harness.database.write_bytes(b"junk")
    message = _setup_message(harness.app())
    assert message.startswith("cannot open the database .../responses.sqlite: the file is not an SQLite database")
    assert harness.database.read_bytes() == b"junk"


def test_a_database_folder_gives_the_set_up_message(harness: Harness) -> None:
    harness.database.mkdir()
    assert "it is a folder, not a database file" in _setup_message(harness.app())


def test_a_read_only_database_gives_the_set_up_message(harness: Harness) -> None:
    open_store(harness.database).close()
    for suffix in ("-wal", "-shm"):
        Path(f"{harness.database}{suffix}").unlink(missing_ok=True)
    undo = make_read_only(harness.database)
    try:
        assert "the file is read-only" in _setup_message(harness.app())
    finally:
        undo()


def test_a_database_url_is_refused_not_taken_as_a_file_name(harness: Harness, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALKIT_DATABASE", "mysql://alice:s3cret@db.example.org:3306/evalkit")
    message = _setup_message(harness.app())
    assert "EVALKIT_DATABASE" in message and "not supported" in message and "alice:***@" in message
    assert "s3cret" not in message
    assert not (tmp_path / "mysql:").exists()


def test_set_up_messages_show_no_absolute_server_paths(harness: Harness) -> None:
    broken = harness.config.parent / "datasets" / "srcHumanQ7-alphas.xml"
    broken.write_text("<Reviews><Review rid='1'>")
    message = _setup_message(harness.app())
    assert "datasets/srcHumanQ7-alphas.xml, line" in message
    assert not re.search(r"(^|[\s'(])/(tmp|home|root|srv|work)/", message), message
    assert str(harness.config.parent) not in message
