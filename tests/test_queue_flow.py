"""k judgments per item (``judgments_per_item``): the config keys, the units, the flow that claims an item when
an evaluator reaches a question, and simulated evaluators in parallel on every backend (issue 13, section 4)."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from evalkit.config import ConfigError, open_study
from evalkit.queue import (
    claim_question,
    deal,
    dealt_questions,
    is_full,
    is_queued,
    parse_unit,
    register,
    resolve_step,
    statuses,
    unit_key,
    units,
)
from evalkit.sampling import plan
from evalkit.store import open_store
from evalkit.survey import finish_session
from evalkit.tasks import responses
from tests.item_study import make_items_study, task_block

#: 12 items x 1 pair = 12 units; k = 3 -> 36 judgments = 9 evaluators of 4 questions (3k evaluators)
PAIR = task_block("compare", questions=4).replace('systems = ["gpt4", "t5", "human"]', 'systems = ["gpt4", "human"]')


def queued(block: str, k: int = 3, extra: str = "") -> str:
    return block + f"judgments_per_item = {k}\n" + extra


def open_queued(tmp: Path, block: str, **kw):
    return open_study(make_items_study(tmp, block, **kw))


def answer(store, loaded, session, rng: random.Random, pace: float = 0.0) -> list[str]:
    """Walk one evaluator through the study as the app does (resolve the step, answer it, again), returning the
    units they judged; then finish the session. ``pace``: pause up to that many seconds (seeded) before each
    answer."""
    questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
    judged = []
    while True:
        step = resolve_step(store, loaded.study, loaded.item_sets, session, questions,
                            store.progress(session.session_id))
        if step.question is None:
            break
        q = step.question
        assert not is_queued(q) and q.texts and q.input
        if pace:
            time.sleep(rng.uniform(0, pace))
        responses.record_choice(store, session, q, rng.choice(q.labels), 1000)
        judged.append(unit_key(q.review_ids[0], sorted(q.sources, key=["gpt4", "t5", "human"].index)))
    finish_session(store, loaded.study, session.session_id)
    return judged


# ----------------------------------------------------------------------------- config and units


def test_config_reads_judgments_per_item_and_claim_minutes(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR, 3, "claim_minutes = 45\n"))
    spec = loaded.study.task("help").source.queue
    assert (spec.k, spec.claim_minutes) == (3, 45.0)
    plain = open_queued(tmp_path / "plain", PAIR)
    assert plain.study.task("help").source.queue is None


@pytest.mark.parametrize(("extra", "message"), [
    ("judgments_per_item = 0\n", "key 'judgments_per_item': must be at least 1"),
    ('judgments_per_item = "3"\n', "key 'judgments_per_item': must be an integer"),
    ("claim_minutes = 30\n", "key 'claim_minutes': only applies to a task with judgments_per_item"),
    ("judgments_per_item = 2\nclaim_minutes = 0\n", "key 'claim_minutes': must be between 1"),
])
def test_config_mistakes_are_named(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        open_queued(tmp_path, PAIR + extra)


def test_realfake_refuses_judgments_per_item(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="key 'judgments_per_item': is available for compare, score and rank"):
        open_queued(tmp_path, queued(task_block("realfake"), 2))


def test_units_are_every_item_with_every_combination_and_no_check_item(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(task_block("compare", questions=4), 2), n=5, gold=2)
    task = loaded.study.task("help")
    keys = units(task, loaded.item_sets, loaded.study.seed)
    assert len(keys) == len(set(keys)) == 5 * 3  # 5 items x 3 pairs; the two gold items are not units
    parsed = [parse_unit(k) for k in keys]
    assert Counter(systems for _, systems in parsed) == {("gpt4", "t5"): 5, ("gpt4", "human"): 5,
                                                         ("t5", "human"): 5}
    assert {item for item, _ in parsed} == {f"r{i}" for i in range(5)}
    assert keys == units(task, loaded.item_sets, loaded.study.seed)  # the order is seeded, not random
    assert sorted(keys) != keys or len(keys) < 3  # ... and shuffled (ties are broken away from file order)


def test_unit_keys_round_trip_any_name() -> None:
    assert parse_unit(unit_key('we"ird|id', ("a,b", "ü"))) == ('we"ird|id', ("a,b", "ü"))
    with pytest.raises(ValueError, match="not a queue unit"):
        parse_unit(json.dumps(["only-an-item"]))


def test_the_plan_has_placeholders_and_the_checks_around_them(tmp_path: Path) -> None:
    block = queued(PAIR, 3, 'tutorial = ["gold0"]\nattention_checks = ["gold1"]\n')
    loaded = open_queued(tmp_path, block, gold=2)
    questions = plan(loaded.study, loaded.pools, 11, loaded.item_sets)
    assert [q.index for q in questions] == list(range(6))
    assert questions[0].check is not None and questions[0].check.type == "tutorial"
    assert sum(is_queued(q) for q in questions) == 4
    assert sum(q.check is not None and q.check.type == "attention" for q in questions) == 1
    assert questions == plan(loaded.study, loaded.pools, 11, loaded.item_sets)


# ----------------------------------------------------------------------------- the flow


def test_claimed_item_is_filled_in_and_stays_the_same_on_a_rerun(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR))
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        session = store.create_session(study_version=loaded.version, evaluator_name="a")
        questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
        def step():
            return resolve_step(store, loaded.study, loaded.item_sets, session, questions,
                                store.progress(session.session_id))

        first, again = step(), step()
        assert first.question == again.question and set(first.question.sources) == {"gpt4", "human"}
        item = loaded.item_sets[loaded.study.task("help").source.items].by_id(first.question.review_ids[0])
        assert first.question.texts == tuple(item.outputs[s] for s in first.question.sources)
        assert first.question.input == item.input
        status = store.queue_status("help", 3)
        assert (status.units, status.live, status.judged) == (12, 1, 0)
        answer_ = responses.record_choice(store, session, first.question, "A", 900)
        assert answer_.review_source == first.question.sources[0]
        assert store.queue_status("help", 3).judged == 1


@pytest.mark.parametrize("pace", [0, 1, 2])
def test_3k_evaluators_in_parallel_give_every_unit_exactly_k_judgments(tmp_path: Path, db_url: str,
                                                                       pace: int) -> None:
    """Nine evaluators (3k, k = 3) in parallel threads, each with its own store connection, fill the queue of 12
    units x 3 with their 4 questions each: every unit exactly 3 times, never a unit twice for one evaluator,
    whatever the order in which their claims interleave (``pace``: a seeded random pause of up to 0, 1 or 2 ms
    before each answer, so that the runs interleave differently). Then the study is full and a further evaluator
    gets no queued question. (Greedy least-judged claiming alone left the last evaluator a question short in
    about a third of the runs on PostgreSQL: see the next test.)"""
    loaded = open_queued(tmp_path, queued(PAIR, 3))
    url = db_url
    with open_store(url) as store:
        register(store, loaded.study, loaded.item_sets)
        assert not is_full(store, loaded.study)
    judged: dict[int, list[str]] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(9, timeout=60)

    def evaluator(n: int) -> None:
        try:
            with open_store(url) as store:
                session = store.create_session(study_version=loaded.version, evaluator_name=f"e{n}")
                barrier.wait()
                judged[n] = answer(store, loaded, session, random.Random(n), pace / 1000)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=evaluator, args=(n,)) for n in range(9)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert len(judged) == 9 and all(len(units_) == len(set(units_)) == 4 for units_ in judged.values())
    counts = Counter(u for units_ in judged.values() for u in units_)
    assert set(counts) == set(units(loaded.study.task("help"), loaded.item_sets, loaded.study.seed))
    assert set(counts.values()) == {3}
    with open_store(url) as store:
        assert len(store.answers(task="help")) == 36
        assert sorted(s.meta["arrival"] for s in store.sessions()) == list(range(9))  # distinct, consecutive
        ((_, _, status),) = statuses(store, loaded.study)
        assert (status.judged, status.live, status.open_slots, status.full) == (36, 0, 0, True)
        assert status.judgments == {0: 0, 1: 0, 2: 0, 3: 12}
        assert is_full(store, loaded.study)
        late = store.create_session(study_version=loaded.version, evaluator_name="late")
        assert answer(store, loaded, late, random.Random(99)) == []
        assert "help" in store.progress(late.session_id).finished


#: An order of the 36 claims of 9 evaluators (evaluator n's next claim) in which greedy least-judged claiming
#: leaves one evaluator short: found by simulating random orders (greedy fails about one in five; the deal none)
GREEDY_FAILS = [1, 3, 7, 2, 1, 4, 8, 0, 4, 2, 8, 6, 8, 2, 3, 1, 7, 6, 1, 2, 3, 4, 7, 5, 5, 6, 5, 3, 6, 5, 0, 0, 0, 4,
                8, 7]


@pytest.mark.parametrize("dealt", [False, True])
def test_the_deal_gives_exactly_k_where_greedy_claiming_leaves_an_evaluator_short(tmp_path: Path, dealt: bool) -> None:
    """The same order of claims, through Store.claim: least-judged claiming alone ends with an open slot on a unit
    the evaluator making the last claim already had; with the deal's ``prefer`` every claim gets a unit and every
    unit gets exactly 3."""
    loaded = open_queued(tmp_path, queued(PAIR, 3))
    queue = units(loaded.study.task("help"), loaded.item_sets, loaded.study.seed)
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        sessions = [store.create_session(study_version=loaded.version, evaluator_name=f"e{n}") for n in range(9)]
        assert [s.meta["arrival"] for s in sessions] == list(range(9))
        made = Counter()
        got: list[str | None] = []
        for n in GREEDY_FAILS:
            prefer = deal(queue, n, made[n], 4) if dealt else None
            got.append(store.claim("help", sessions[n].session_id, made[n], k=3, expire_seconds=600,
                                   prefer=prefer))
            made[n] += 1
        if dealt:
            assert None not in got and set(Counter(got).values()) == {3} and len(Counter(got)) == 12
        else:
            assert got.count(None) == 1 and store.queue_status("help", 3).open_slots == 1


def test_with_a_questions_limit_the_deal_gives_each_evaluator_only_what_they_reach(tmp_path: Path) -> None:
    """``[study.session] questions = 2`` with 4 queued questions in the plan: each evaluator stops after 2, so
    the deal gives 2 slots each (the plan's first two queued questions), and 18 evaluators (12 units x 3 / 2)
    fill every unit exactly 3 times; dealing 4 slots each would leave units at 0 that later arrivals could only
    reach through the greedy pick."""
    loaded = open_queued(tmp_path, queued(PAIR, 3), extra="\n[study.session]\nquestions = 2\n")
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        got = []
        for n in range(18):
            session = store.create_session(study_version=loaded.version, evaluator_name=f"e{n}")
            questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
            queued_ = [q.index for q in questions if is_queued(q)]
            assert len(queued_) == 4 and dealt_questions(loaded.study, questions, "help") == queued_[:2]
            units_ = answer(store, loaded, session, random.Random(n))
            assert len(units_) == len(set(units_)) == 2
            got += units_
        assert set(Counter(got).values()) == {3} and len(Counter(got)) == 12
        assert is_full(store, loaded.study)


def test_dealt_questions_count_judgments_in_task_order_without_the_tutorial(tmp_path: Path) -> None:
    block = queued(PAIR, 3, 'tutorial = ["gold0"]\nattention_checks = ["gold1"]\n')
    loaded = open_queued(tmp_path, block, gold=2, extra="\n[study.session]\nquestions = 3\n")
    questions = plan(loaded.study, loaded.pools, 11, loaded.item_sets)
    counted = [q for q in questions if q.check is None or q.check.type != "tutorial"][:3]  # what the limit reaches
    assert dealt_questions(loaded.study, questions, "help") == [q.index for q in counted if is_queued(q)]
    unlimited = open_queued(tmp_path / "all", block, gold=2)
    assert dealt_questions(unlimited.study, questions, "help") == [q.index for q in questions if is_queued(q)]


def test_deal_covers_every_unit_k_times_over_consecutive_arrivals() -> None:
    queue = [f"u{i}" for i in range(12)]
    for first in (0, 5):  # (arrivals need not start at 0: sessions of other studies, trashed tests)
        dealt = {a: [deal(queue, a, j, 4) for j in range(4)] for a in range(first, first + 9)}
        assert all(len(set(units_)) == 4 for units_ in dealt.values())
        assert set(Counter(u for units_ in dealt.values() for u in units_).values()) == {3}
        assert len({u for units_ in dealt.values() for u in units_}) == 12
    assert deal(queue, 0, 0, 4) == "u0" and deal(queue, 2, 3, 4) == "u11" and deal(queue, 3, 0, 4) == "u0"
    with pytest.raises(ValueError, match="no units"):
        deal([], 0, 0, 1)


def test_a_claim_of_an_evaluator_who_left_goes_to_the_next_after_it_expires(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 1"), 1, "claim_minutes = 1\n"),
                         n=1)
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        gone = store.create_session(study_version=loaded.version, evaluator_name="gone")
        questions = plan(loaded.study, loaded.pools, gone.seed, loaded.item_sets)
        assert resolve_step(store, loaded.study, loaded.item_sets, gone, questions,
                            store.progress(gone.session_id)).question is not None
        assert is_full(store, loaded.study)  # the only slot is claimed
        unit = store.queue_status("help", 1)
        assert unit.live == 1
        later = store.create_session(study_version=loaded.version, evaluator_name="later")
        assert store.claim("help", later.session_id, 0, k=1, expire_seconds=60, now=time.time() + 30) is None
        assert not store.has_open_slot("help", 1, 60, now=time.time() + 30)
        assert store.has_open_slot("help", 1, 60, now=time.time() + 61)  # the stale claim will be given back
        assert store.claim("help", later.session_id, 0, k=1, expire_seconds=60, now=time.time() + 61) is not None


def test_finishing_gives_open_claims_back(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR, 1), n=4)
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        session = store.create_session(study_version=loaded.version, evaluator_name="a")
        questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
        resolve_step(store, loaded.study, loaded.item_sets, session, questions, store.progress(session.session_id))
        assert store.queue_status("help", 1).live == 1
        finish_session(store, loaded.study, session.session_id)  # e.g. a time limit ended the session early
        assert store.queue_status("help", 1).live == 0


def test_register_is_idempotent(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR))
    with open_store(tmp_path / "q.sqlite") as store:
        assert register(store, loaded.study, loaded.item_sets) == {"help": 12}
        assert register(store, loaded.study, loaded.item_sets) == {"help": 0}


def test_an_evaluator_who_failed_the_checks_gives_the_units_back(tmp_path: Path, db_url: str) -> None:
    """Their answers stay stored, but the queue counts only evaluators who passed: each unit still gets k."""
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 2"), 1,
                                          'attention_checks = ["gold0"]\n'), n=2, gold=1)
    with open_store(db_url) as store:
        register(store, loaded.study, loaded.item_sets)
        sessions = []
        for name, right in (("fails", False), ("passes", True)):
            session = store.create_session(study_version=loaded.version, evaluator_name=name)
            questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
            while (step := resolve_step(store, loaded.study, loaded.item_sets, session, questions,
                                        store.progress(session.session_id))).question is not None:
                q = step.question
                label = "A"
                if q.check is not None:  # the attention check: the expected system's response, or the other
                    want = q.check.want if right else next(s for s in q.sources if s != q.check.want)
                    label = q.labels[q.sources.index(want)]
                responses.record_choice(store, session, q, label, 900)
            finish_session(store, loaded.study, session.session_id)
            sessions.append(session)
            status = store.queue_status("help", 1)
            assert status.judged == (0 if name == "fails" else 2) and status.live == 0
        assert [a.check_passed for a in store.answers(task="help") if a.check] == [False, True]
        assert len([a for a in store.answers(task="help") if not a.check]) == 4  # every answer is kept
        assert store.queue_status("help", 1).full


# ----------------------------------------------------------------------------- what a running study meets


def walk(store, loaded, session) -> list[str]:
    """The units one evaluator judges, answering every question with "A" (then finishing)."""
    return answer(store, loaded, session, random.Random(0))


def test_items_removed_from_the_file_are_retired_not_shown(tmp_path: Path, db_url: str) -> None:
    """The items file lost two items after the queue was registered: the app's next start retires their units
    (the deal no longer reaches them; left alone they would be open slots for good), every evaluator gets the
    remaining units, and the status counts only those. When the items come back, so do their units."""
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 2"), 1), n=4)
    with open_store(db_url) as store:
        register(store, loaded.study, loaded.item_sets)
        assert store.queue_status("help", 1).units == 4
        smaller = open_study(shrink(tmp_path))
        assert register(store, smaller.study, smaller.item_sets) == {"help": 0}  # nothing new; r2, r3 retired
        assert store.queue_status("help", 1).units == 2
        first = walk(store, smaller, store.create_session(study_version=smaller.version, evaluator_name="a"))
        assert sorted(parse_unit(u)[0] for u in first) == ["r0", "r1"]
        status = store.queue_status("help", 1)
        assert (status.units, status.judged, status.full) == (2, 2, True)
        assert is_full(store, smaller.study)
        register(store, loaded.study, loaded.item_sets)  # the items are back in the file: so are their units
        status = store.queue_status("help", 1)
        assert (status.units, status.judged, status.open_slots) == (4, 2, 2)


def shrink(tmp: Path) -> Path:
    """Take items r2 and r3 out of the study's items file; the config's path."""
    items = tmp / "items.jsonl"
    items.write_text("\n".join(line for line in items.read_text().splitlines()
                               if '"id": "r2"' not in line and '"id": "r3"' not in line) + "\n")
    return tmp / "config.toml"


def test_a_unit_met_whose_item_is_gone_is_retired_and_another_claimed(tmp_path: Path, db_url: str) -> None:
    """A process whose items file lacks units another process registered (no register of its own since): a
    claim that meets such a unit retires it (logged) and claims another, never an error on the screen."""
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 2"), 1), n=4)
    with open_store(db_url) as store:
        register(store, loaded.study, loaded.item_sets)
        smaller = open_study(shrink(tmp_path))
        session = store.create_session(study_version=smaller.version, evaluator_name="a")
        got = [claim_question(store, smaller.study, smaller.item_sets, session, q)  # (no plan given: no deal)
               for q in plan(smaller.study, smaller.pools, session.seed, smaller.item_sets) if is_queued(q)]
        assert sorted(q.review_ids[0] for q in got if q is not None) == ["r0", "r1"]
        status = store.queue_status("help", 1)
        assert status.units < 4 and status.live == 2


def test_trashing_a_session_gives_its_units_back_and_restoring_takes_them_again(tmp_path: Path, db_url: str) -> None:
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 2"), 1), n=2)
    with open_store(db_url) as store:
        register(store, loaded.study, loaded.item_sets)
        session = store.create_session(study_version=loaded.version, evaluator_name="test run")
        assert len(walk(store, loaded, session)) == 2
        assert is_full(store, loaded.study)
        store.set_session_status(session.session_id, "trashed", actor="test")
        status = store.queue_status("help", 1)
        assert (status.judged, status.live, status.open_slots) == (0, 0, 2) and not is_full(store, loaded.study)
        assert len(store.answers(session.session_id)) == 2  # the answers themselves stay
        store.set_session_status(session.session_id, "completed", actor="test")  # restored from the trash
        assert store.queue_status("help", 1).judged == 2 and is_full(store, loaded.study)
        store.set_session_status(session.session_id, "excluded", actor="test")
        assert store.queue_status("help", 1).judged == 0


def test_an_answer_after_the_claim_expired_counts_when_the_session_ends(tmp_path: Path, db_url: str) -> None:
    loaded = open_queued(tmp_path, queued(PAIR.replace("questions = 4", "questions = 1"), 2), n=1)
    with open_store(db_url) as store:
        register(store, loaded.study, loaded.item_sets)
        slow = store.create_session(study_version=loaded.version, evaluator_name="slow")
        questions = plan(loaded.study, loaded.pools, slow.seed, loaded.item_sets)
        step = resolve_step(store, loaded.study, loaded.item_sets, slow, questions, store.progress(slow.session_id))
        other = store.create_session(study_version=loaded.version, evaluator_name="other")
        assert store.claim("help", other.session_id, 0, k=2, expire_seconds=60, now=time.time() + 3600) is not None
        assert store.queue_status("help", 2).live == 1  # the slow one's claim was swept back
        responses.record_choice(store, slow, step.question, "A", 900)  # ... and answered after all
        assert store.queue_status("help", 2).judged == 0
        finish_session(store, loaded.study, slow.session_id)
        status = store.queue_status("help", 2)
        assert (status.judged, status.live) == (1, 1) and len(store.answers(task="help")) == 1


def test_no_claim_is_made_while_a_break_is_due(tmp_path: Path) -> None:
    loaded = open_queued(tmp_path, queued(PAIR, 2))
    with open_store(tmp_path / "q.sqlite") as store:
        register(store, loaded.study, loaded.item_sets)
        session = store.create_session(study_version=loaded.version, evaluator_name="a")
        questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
        held = resolve_step(store, loaded.study, loaded.item_sets, session, questions,
                            store.progress(session.session_id), hold=lambda step: True)
        assert is_queued(held.question) and store.queue_status("help", 2).live == 0
        went_on = resolve_step(store, loaded.study, loaded.item_sets, session, questions,
                               store.progress(session.session_id), hold=lambda step: False)
        assert not is_queued(went_on.question) and store.queue_status("help", 2).live == 1


def test_the_results_line_names_units_judged_more_than_k_times() -> None:
    from types import SimpleNamespace

    from evalkit.queue import summary
    from evalkit.store import QueueStatus
    from evalkit.tasks.itemsource import QueueSpec

    status = QueueStatus(units=4, judged=9, live=1, open_slots=0, full=True, judgments={0: 0, 1: 0, 2: 3, 3: 1})
    line = summary(SimpleNamespace(title="Compare", id="help"), QueueSpec(k=2), status)
    assert "9 of 8 judgments given" in line and "3 with 2, 1 with more than 2" in line and "**full**" in line
