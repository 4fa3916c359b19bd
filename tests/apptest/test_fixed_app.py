"""AppTest tests of fixed assignments: an invited participant's private link leads through exactly their list, in
order, and the results page shows each participant's progress through their list."""

from __future__ import annotations

from pathlib import Path

from evalkit.invite import invite
from pages.tasks.score import widget_key
from tests.apptest.component import send_trigger
from tests.apptest.conftest import button, texts
from tests.apptest.test_item_kinds import SLIDER, item_id, study, task_toml
from tests.apptest.test_results_page import results_app, unlock


def fixed_study(tmp: Path) -> Path:
    config = study(tmp, task_toml("score", assignment="fixed", assignments="datasets/lists.csv", shuffle=False,
                                  scales=[SLIDER]), after=False)
    (tmp / "datasets" / "lists.csv").write_text(
        f"participant_id,item_id\nP01,{item_id(5)}\nP01,{item_id(2)}\nP02,{item_id(0)}\nP03,{item_id(1)}\n",
        encoding="utf-8")
    config.write_text(config.read_text().replace("[study]\n", '[study]\nparticipants = "invited"\n', 1))
    return config


def test_a_private_link_leads_through_the_participants_list_in_order(make_harness, tmp_path) -> None:
    h = make_harness(config=fixed_study(tmp_path))
    keys = {i.participant_id: i.key for i in invite(h.store, [("P01", "", "P01PASS", "P01FAIL"), ("P02", ""),
                                                                ("P04", "")]).created}
    at = h.app(participant="P01", key=keys["P01"])
    at.checkbox(key="consent_agree").check()
    button(at, "Start the study").click().run()
    button(at, "Begin").click().run()
    assert not at.exception
    seen = []
    for k in range(2):
        assert f"Question {k + 1} of 2" in texts(at)
        seen.append(texts(at))
        send_trigger(at, widget_key(f"block-{k}"), "submit", {"scores": {"overall": [40 + k] * 3}, "texts": None})
        assert not at.exception
        at = at.run()
    assert "Input number 5" in seen[0] and "Input number 2" in seen[1]
    answers = h.store.answers()
    assert [a.detail["scores"]["overall"] for a in answers] == [[40] * 3, [41] * 3]
    assert [a.question_index for a in answers] == [0, 1]
    assert "P01PASS" in texts(at)  # done: the participant's own code

    # the results page: P01 done, P02 invited and not started, P03 not invited, P04 invited without a list
    page = unlock(results_app(h))
    shown = texts(page)
    assert "**Fixed lists of task `block`**: 3 lists · 1 done · 2 of 4 items answered" in shown
    [frame] = [d.value for d in page.dataframe if "Progress" in d.value.columns]
    rows = {r["Participant"]: (r["Status"], r["Items"], r["Answered"]) for r in frame.to_dict("records")}
    assert rows == {"P01": ("finished", 2, 2), "P02": ("not started", 1, 0), "P03": ("not invited", 1, 0),
                    "P04": ("no list", 0, 0)}
    assert "1 list(s) belong to ids nobody has invited yet" in shown
