"""PostgreSQL only: the pool's check on every checkout notices a dropped connection before it is used."""

from __future__ import annotations

import psycopg
import pytest

from evalkit.store import open_store
from evalkit.store.postgres import check_connection


def test_the_check_passes_a_live_connection_and_raises_on_a_dropped_or_closed_one(pg_server, pg_url: str) -> None:
    conn = psycopg.connect(pg_url, autocommit=True)
    check_connection(conn)
    assert pg_server.terminate(pg_url.rsplit("/", 1)[1]) == 1  # the server ends the connection under it
    with pytest.raises(psycopg.OperationalError):
        check_connection(conn)
    conn.close()
    with pytest.raises(psycopg.OperationalError):
        check_connection(conn)
    with psycopg.connect(pg_url) as not_autocommit:  # psycopg_pool's own check, which toggles autocommit
        check_connection(not_autocommit)
        assert not not_autocommit.autocommit


def test_connections_dropped_while_idle_in_the_pool_are_replaced_at_checkout(pg_server, pg_url: str) -> None:
    with open_store(pg_url, min_size=3, max_size=3) as store:
        store._pool.wait()  # three idle connections
        session = store.create_session(study_version="v").session_id
        assert pg_server.terminate(pg_url.rsplit("/", 1)[1]) >= 3
        # create_session is never retried: it works only because the check replaced the dropped connection
        assert store.create_session(study_version="v").session_id != session
        for i in range(5):
            store.record_answer(session, "t", i, "A")
        assert [a.question_index for a in store.answers(session)] == list(range(5))
        assert store._pool.get_stats().get("connections_lost", 0) >= 1
