"""A real server under concurrent evaluators (Streamlit's websocket protocol, no browser): every session
finishes, every answer is stored once. A regression test: sharing st.Page objects between sessions once made
concurrent reruns fail with "This page cannot be called directly"."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import sqlite3

import pytest

from bench.ws_client import Evaluator

pytestmark = pytest.mark.e2e


def test_twenty_evaluators_at_once(server) -> None:
    url, _, database = server

    evaluators = [Evaluator(url, f"crowd {k}", rng=random.Random(k)) for k in range(20)]

    async def crowd() -> list[str]:
        return await asyncio.gather(*(e.run() for e in evaluators))

    # in a thread of its own: Playwright's sync API may hold this thread's event loop
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        tokens = pool.submit(asyncio.run, crowd()).result(timeout=300)
    assert len(set(tokens)) == 20
    # as from a browser, answers inside a block rerun only the question (3 triplets + 2 pairs: 3 of 5 answers)
    assert all(e.runs["fragment"] >= 3 for e in evaluators), [e.runs for e in evaluators]
    conn = sqlite3.connect(database)
    for token in tokens:
        rows = conn.execute("SELECT task, question_index FROM evaluations WHERE session_id = ?", (token,)).fetchall()
        assert len(rows) == 5 == len(set(rows))  # the token study: 3 triplets + 2 pairs
        status = conn.execute("SELECT status FROM sessions WHERE session_id = ?", (token,)).fetchone()[0]
        assert status == "completed"
    conn.close()
