"""AppTest tests of invited participants' private links on the consent page, and the results page's section."""

from __future__ import annotations

import pytest

from evalkit.invite import invite
from evalkit.store import Store, Unavailable
from tests.apptest.conftest import Harness, button, has_button, leaves, texts
from tests.apptest.test_results_page import results_app, unlock


def agree(at):
    at.checkbox(key="consent_agree").check()
    return at


def invited_only(h: Harness) -> None:
    """Switch the harness's study to ``[study] participants = "invited"``."""
    text = h.config.read_text(encoding="utf-8")
    h.config.write_text(text.replace("[study]\n", '[study]\nparticipants = "invited"\n', 1), encoding="utf-8")


def links(h: Harness, *ids: str) -> dict[str, str]:
    """Invite ``ids``; their keys by id."""
    return {i.participant_id: i.key for i in invite(h.store, [(pid, "") for pid in ids]).created}


@pytest.mark.parametrize("mode", ["open", "invited"])
def test_a_valid_private_link_starts_the_participants_own_session_then_resumes_it(harness: Harness, mode: str) -> None:
    if mode == "invited":
        invited_only(harness)
    key = links(harness, "P01")["P01"]
    at = harness.app(participant="P01", key=key)
    assert not at.exception
    assert "personal invitation link, so your name is optional" in texts(at)
    button(agree(at), "Start the study").click().run()  # no name needed
    assert not at.exception
    [session] = harness.store.sessions()
    assert session.external_id == "P01" and session.evaluator_name == ""
    assert session.meta == {"invited": True, "arrival": 0}  # the first session of the study
    assert at.query_params["s"] == session.session_id
    again = harness.app(participant="P01", key=key)  # the same link later, in another browser
    assert not again.exception and again.query_params["s"] == session.session_id
    assert dict(again.query_params) == {"s": session.session_id}  # the key leaves the address bar
    assert "Task 1 of 3" in texts(again)  # on the survey, where the session stands
    harness.store.complete_session(session.session_id)  # finished: still this session (the e2e test goes to done)
    done = harness.app(participant="P01", key=key)
    assert not done.exception and done.query_params["s"] == session.session_id
    assert len(harness.store.sessions()) == 1


@pytest.mark.parametrize("query", [
    {"participant": "P01", "key": "wrong-key"},
    {"participant": "P01"},
    {"participant": "P99", "key": "anything"},
    {"participant": "P01", "key": ""},
], ids=["wrong-key", "no-key", "unknown-id", "empty-key"])
@pytest.mark.parametrize("mode", ["open", "invited"])
def test_a_wrong_key_or_an_unknown_id_says_so_and_creates_nothing(harness: Harness, query: dict, mode: str) -> None:
    if mode == "invited":
        invited_only(harness)
    key = links(harness, "P01")["P01"]
    owner = harness.app(participant="P01", key=key)
    button(agree(owner), "Start the study").click().run()
    [session] = harness.store.sessions()
    at = harness.app(**query)
    assert not at.exception
    [error] = at.error
    assert "This invitation link is not valid" in error.value
    assert "s" not in at.query_params and not has_button(at, "Start the study")
    assert key not in texts(at) and session.session_id not in texts(at)
    assert len(harness.store.sessions()) == 1


def test_an_invited_only_study_without_a_link_starts_nobody(harness: Harness) -> None:
    invited_only(harness)
    links(harness, "P01")
    for query in ({}, {"PROLIFIC_PID": "pid-1", "STUDY_ID": "st", "SESSION_ID": "se"}):
        at = harness.app(**query)
        assert not at.exception
        assert "open to invited participants only" in texts(at) and not has_button(at, "Start the study")
    assert harness.store.sessions() == []


def shown(at) -> list[tuple[str, object]]:
    """What a page shows, element by element (widgets by key, buttons by label), for comparing two pages."""
    return leaves(at, button_labels=True)


def test_an_invited_id_in_an_open_studys_link_looks_like_any_other_until_start(harness: Harness) -> None:
    """Invited ids cannot be listed by trying ?PROLIFIC_PID=...: the page is the one every id gets; "Start" refuses
    it, with the words of every refused start (a stale page whose participant id got a session meanwhile)."""
    key = links(harness, "P01")["P01"]
    invited = harness.app(PROLIFIC_PID="P01", STUDY_ID="st", SESSION_ID="se")
    stranger = harness.app(PROLIFIC_PID="X77", STUDY_ID="st", SESSION_ID="se")
    assert not invited.exception and shown(invited) == shown(stranger)
    assert texts(invited) == texts(stranger) and "not valid" not in texts(invited)
    agree(invited)
    button(invited, "Start the study").click().run()
    assert not invited.exception and harness.store.sessions() == [] and "s" not in invited.query_params
    [refused] = invited.error
    stale = agree(harness.app(PROLIFIC_PID="X88", STUDY_ID="st", SESSION_ID="se"))  # a refused start of another id:
    harness.store.create_session(study_version="v", external_id="X88", meta={"session_id": "other"})
    button(stale, "Start the study").click().run()  # X88 got a session while this page was open
    assert [e.value for e in stale.error] == [refused.value]  # the same words, the same colour
    assert "already has a session in this study or is reserved" in refused.value
    assert [s.external_id for s in harness.store.sessions()] == ["X88"]
    # an id used before it was invited: its session is not handed to the private link
    harness.store.create_session(study_version="v", external_id="P02", meta={"session_id": "se"})
    other = links(harness, "P02")["P02"]
    taken = harness.app(participant="P02", key=other)
    assert "not started from its invitation link" in texts(taken) and "s" not in taken.query_params
    assert harness.app(participant="P01", key=key).button  # P01 itself still starts normally


def test_a_database_that_is_down_shows_the_notice(harness: Harness, monkeypatch) -> None:
    key = links(harness, "P01")["P01"]

    def down(self, *args, **kwargs):
        raise Unavailable("server closed the connection")

    monkeypatch.setattr(Store, "participant", down)
    at = harness.app(participant="P01", key=key)
    assert not at.exception
    assert "cannot reach its database" in texts(at) and not has_button(at, "Start the study")
    assert key not in texts(at)
    monkeypatch.undo()
    assert harness.store.sessions() == []


def test_the_results_page_lists_who_has_not_started_and_who_has_not_finished(harness: Harness) -> None:
    keys = links(harness, "P01", "P02", "P03")
    invite(harness.store, [("P04", "=HYPERLINK(\"x\")")])
    for pid in ("P02", "P03"):
        at = harness.app(participant=pid, key=keys[pid])
        button(agree(at), "Start the study").click().run()
    p3 = harness.store.find_session("P03")
    harness.store.complete_session(p3.session_id)
    at = unlock(results_app(harness))
    assert not at.exception
    shown = texts(at)
    assert "Invited participants" in shown
    assert "4 invited · **2 not started** · **1 started, not finished** · 1 finished" in shown
    tables = [f.value for f in at.dataframe if "Participant" in f.value.columns]
    assert len(tables) == 2
    not_started, not_finished = tables
    assert list(not_started["Participant"]) == ["P01", "P04"]
    assert list(not_started["Note"]) == ["", "'=HYPERLINK(\"x\")"]  # neutralised like every evaluator text
    assert list(not_finished["Participant"]) == ["P02"]


def test_the_results_page_of_an_invited_only_study_without_invitations_says_how(harness: Harness) -> None:
    invited_only(harness)
    at = unlock(results_app(harness))
    assert not at.exception and "python -m evalkit invite --n 50" in texts(at)


def test_an_open_study_without_invitations_shows_no_section(harness: Harness) -> None:
    at = unlock(results_app(harness))
    assert not at.exception and "Invited participants" not in texts(at)


def test_a_reissued_link_resumes_the_started_session_and_the_old_link_is_refused(harness: Harness) -> None:
    from evalkit.invite import reissue

    old = links(harness, "P01")["P01"]
    at = harness.app(participant="P01", key=old)
    button(agree(at), "Start the study").click().run()
    token = at.query_params["s"]
    [new] = reissue(harness.store, ["P01"])  # python -m evalkit invite --reissue P01
    again = harness.app(participant="P01", key=new.key)
    assert not again.exception and dict(again.query_params) == {"s": token}  # the same session, resumed
    refused = harness.app(participant="P01", key=old)
    assert "This invitation link is not valid" in texts(refused) and "s" not in refused.query_params
    assert len(harness.store.sessions()) == 1
