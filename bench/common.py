"""Shared helpers for the benchmarks: timing with medians, a floor measured in the same run, output."""

from __future__ import annotations

import argparse
import gc
import os
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# Streamlit reads .streamlit/config.toml from the working directory: run as `streamlit run` is run, from the
# project root, so AppTest benchmarks use the app's own settings (magic off, no gc.collect() after a run).
os.chdir(ROOT)



#: The evaluations columns the benchmarks' bulk rows fill (16 values: no id, no check columns, which stay NULL as
#: for any answer that is not a tutorial or attention-check question).
BULK_EVALUATION_COLUMNS = ("session_id", "task", "kind", "question_index", "slot", "response", "review_source",
                           "domain", "time_spent_ms", "left_source", "right_source", "sources", "item_ids",
                           "matched", "detail", "created_at")

def server_like_apptest() -> None:
    """Make AppTest keep compiled scripts between runs, as a `streamlit run` server does.

    AppTest builds a new ScriptCache for every run, so each run recompiles the entry script and the page
    (a few milliseconds for a large page; a server compiles each script once). One shared cache, keyed by
    the script's path like the server's, removes that artefact from the measured script time.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared
    local_script_runner.ScriptCache = lambda: shared

WORDS = ("the battery screen keyboard service food staff room price quality fast slow great poor nice "
         "really quite very clean noisy warm friendly rude fresh cold comfortable bright dim loud quiet "
         "delivery value design performance portion breakfast location view bed shower waiter").split()


def timed(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> tuple[float, list[float]]:
    """Median wall time of ``fn`` over ``repeat`` runs (after ``warmup`` runs), and all samples."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples


def fmt_s(seconds: float) -> str:
    """Seconds in a readable unit."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def row(name: str, value: str, floor: str = "", ratio: str = "", target: str = "", ok: bool | None = None) -> str:
    """One Markdown table row of a benchmark result."""
    verdict = "" if ok is None else ("met" if ok else "MISSED")
    return f"| {name} | {value} | {floor} | {ratio} | {target} | {verdict} |"


HEADER = "| measure | median | floor | ratio | target | |\n|---|---|---|---|---|---|"


def sentence(rng: random.Random) -> str:
    """A made-up review sentence of 6..18 words."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def write_corpus(path: Path, n: int, seed: int) -> Path:
    """A SemEval-style XML file of ``n`` reviews of 1..6 sentences (some too short or too long to be eligible)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Reviews>\n')
        for i in range(n):
            fh.write(f'    <Review rid="{i}">\n        <sentences>\n')
            for j in range(rng.randint(1, 6)):
                fh.write(f'            <sentence id="{i}:{j}">\n                <text>{sentence(rng)}</text>\n'
                         '                <Opinions><Opinion category="X#Y" polarity="positive"/></Opinions>\n'
                         '            </sentence>\n')
            fh.write("        </sentences>\n    </Review>\n")
        fh.write("</Reviews>\n")
    return path


# ----------------------------------------------------------------------------- backends

BACKENDS = ("sqlite", "postgres")


def add_backend_option(ap: argparse.ArgumentParser) -> None:
    """The ``--backend`` option every storage benchmark takes."""
    ap.add_argument("--backend", choices=BACKENDS, default="sqlite",
                    help="sqlite: files in a temporary folder; postgres: databases on a throwaway PostgreSQL "
                         "server started for the run (tests/pg.py), durable commits (fsync on)")


class Databases:
    """Fresh, empty databases of one backend: SQLite files in ``folder``, or databases on one throwaway
    PostgreSQL server (:class:`tests.pg.PgServer`) started when this opens and removed when it closes.

    ``new(name)`` returns a location ``open_store`` takes (a path, or a URL with a password).
    """

    def __init__(self, backend: str, folder: Path) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}")
        self.backend, self.folder = backend, Path(folder)
        self.server: Any = None
        if backend == "postgres":
            from tests.pg import PgServer, problem

            if problem():
                raise SystemExit(f"cannot start PostgreSQL: {problem()}")
            self.server = PgServer()

    @property
    def label(self) -> str:
        return "PostgreSQL 15" if self.server is not None else "SQLite"

    def new(self, name: str) -> Path | str:
        if self.server is None:
            return self.folder / f"{name}.sqlite"
        return self.server.new_database()

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None

    def __enter__(self) -> Databases:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bulk_insert(location: Path | str, tables: Iterable[tuple[str, Sequence[str], Iterable[Sequence[Any]]]]) -> None:
    """Fill an evalkit database (its schema already created by ``open_store``) fast, bypassing evalkit:
    ``tables`` is (table, columns, rows) in insertion order (sessions before the answers that reference them).

    SQLite: ``executemany`` in one transaction with synchronous=OFF. PostgreSQL: ``COPY ... FROM STDIN``
    through psycopg in one transaction, then ``VACUUM (ANALYZE)``, as autovacuum would have done on a
    database that grew over weeks (a first scan of freshly copied rows would otherwise also set their hint
    bits, writing every page once).
    """
    if isinstance(location, str) and location.startswith(("postgresql://", "postgres://")):
        import psycopg

        names = []
        with psycopg.connect(location) as conn:  # one transaction, committed on leaving
            for table, columns, rows in tables:
                names.append(table)
                with conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                    for r in rows:
                        copy.write_row(r)
        with psycopg.connect(location, autocommit=True) as conn:
            for table in names:
                conn.execute(f"VACUUM (ANALYZE) {table}")
        return
    conn = sqlite3.connect(location, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("BEGIN")
    for table, columns, rows in tables:
        conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)
    conn.execute("COMMIT")
    conn.close()
