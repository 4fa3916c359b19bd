"""Test-wide rules: tests marked ``shared_data`` need ``../shared/data`` beside the checkout.

A user's fresh clone has no ``../shared``: there those tests skip, with a reason naming the missing folder. CI
sets ``EVALKIT_REQUIRE_SHARED=1`` (in ``.ci/run``), under which a missing folder fails the test instead, so the
real-data tests can never be skipped silently where the data should be.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers import GRAPHMIND, SEMEVAL, SEMEVAL_FILES, SHARED_DATA

REQUIRE_VARIABLE = "EVALKIT_REQUIRE_SHARED"


def shared_data_problem() -> str | None:
    """Why the shared data cannot be used (None when it is there): the folder, then each file the tests read."""
    if not SHARED_DATA.is_dir():
        return f"the shared test data folder {SHARED_DATA} is missing (it sits beside the checkout in CI)"
    missing = [name for name in SEMEVAL_FILES if not (SEMEVAL / name).is_file()]
    if missing:
        return f"the shared test data {SEMEVAL} lacks {', '.join(missing)}"
    if not GRAPHMIND.is_file():
        return f"the shared test data lacks {GRAPHMIND}"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("shared_data") is None:
        return
    problem = shared_data_problem()
    if problem is None:
        return
    if os.environ.get(REQUIRE_VARIABLE) == "1":
        pytest.fail(f"{problem}, and {REQUIRE_VARIABLE}=1 says it is required", pytrace=False)
    pytest.skip(problem)


# ----------------------------------------------------------------------------- PostgreSQL


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for the whole test run (tests/pg.py); skips, or fails under
    EVALKIT_REQUIRE_POSTGRES=1, where none can be started."""
    from tests import pg

    why = pg.problem()
    if why is not None:
        if os.environ.get(pg.REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{why}, and {pg.REQUIRE_VARIABLE}=1 says PostgreSQL is required", pytrace=False)
        pytest.skip(why)
    server = pg.PgServer()
    yield server
    server.close()


@pytest.fixture
def pg_url(pg_server) -> str:
    """The URL of a fresh, empty PostgreSQL database (with a password in it)."""
    return pg_server.new_database()


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path) -> str:
    """A fresh database of each backend: a SQLite path, then a PostgreSQL URL (the contract suite)."""
    if request.param == "sqlite":
        return str(tmp_path / "sub" / "db.sqlite")
    return request.getfixturevalue("pg_url")
