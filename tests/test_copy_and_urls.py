"""``python -m evalkit copy`` between SQLite and PostgreSQL, and ``report`` / ``export`` / ``check`` given a
PostgreSQL URL: the same numbers from either backend, the password never printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalkit.store import open_store
from tests.helpers import ROOT
from tests.pg import PASSWORD
from tests.test_analysis import filled_db  # noqa: F401 - a fixture: a demo study's database with 12 evaluators


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_DATABASE"}
    done = subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=180, env=env)
    assert PASSWORD not in done.stdout + done.stderr
    return done


def test_copy_to_postgresql_and_back_gives_the_same_report_and_exports(filled_db: Path, pg_url: str,  # noqa: F811
                                                                       tmp_path: Path) -> None:
    copied = cli("copy", str(filled_db), pg_url)
    assert copied.returncode == 0, copied.stderr
    assert "postgresql://evalkit:***@127.0.0.1" in copied.stdout and "evaluations 120" in copied.stdout
    assert "row counts checked" in copied.stdout
    for fmt in ("markdown", "latex", "csv"):
        local = cli("report", "--db", str(filled_db), "--format", fmt)
        hosted = cli("report", "--db", pg_url, "--format", fmt)
        assert hosted.returncode == 0, hosted.stderr
        assert hosted.stdout == local.stdout, fmt
    for what in ("evaluations", "ratings"):
        assert cli("export", what, "--db", pg_url).stdout == cli("export", what, "--db", str(filled_db)).stdout
    again = cli("copy", str(filled_db), pg_url)  # a non-empty destination is refused ...
    assert again.returncode == 1 and "already holds study data" in again.stderr and "--replace" in again.stderr
    assert cli("copy", str(filled_db), pg_url, "--replace").returncode == 0  # ... unless told
    archive = tmp_path / "archive.sqlite"
    back = cli("copy", pg_url, f"sqlite:///{archive}")
    assert back.returncode == 0, back.stderr
    assert cli("report", "--db", str(archive)).stdout == cli("report", "--db", str(filled_db)).stdout
    with open_store(archive) as a, open_store(filled_db) as b:
        for table in ("sessions", "evaluations", "ratings", "task_status"):
            assert a.table(table) == b.table(table), table
    same = cli("copy", str(filled_db), f"sqlite:///{filled_db}")
    assert same.returncode == 1 and "the same database" in same.stderr


def test_copy_refuses_a_source_that_is_missing_or_not_evalkit(pg_url: str, tmp_path: Path) -> None:
    missing = cli("copy", str(tmp_path / "nope.sqlite"), pg_url)
    assert missing.returncode == 1 and "database not found" in missing.stderr
    empty_pg = cli("copy", pg_url, str(tmp_path / "x.sqlite"))  # an empty PostgreSQL database is no study
    assert empty_pg.returncode == 1 and "not an evalkit database" in empty_pg.stderr
    assert not (tmp_path / "x.sqlite").exists()
    down = cli("report", "--db", f"postgresql://evalkit:{PASSWORD}@127.0.0.1:1/evalkit")
    assert down.returncode == 1 and "cannot open the database postgresql://evalkit:***@127.0.0.1:1/" in down.stderr

