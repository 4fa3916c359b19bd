"""Read SQL query results straight into Arrow, in a child process started by ``SQLiteStore.read_tables``.

Why a child process: ADBC's SQLite driver carries its own copy of SQLite,
while Python's :mod:`sqlite3` (and so the survey's writes) uses the system's.
SQLite's locks are POSIX advisory locks, which belong to a process: when one
copy of SQLite in a process closes a database file, the locks the *other* copy
holds on it are silently dropped (https://www.sqlite.org/howtocorrupt.html,
"multiple copies of SQLite linked into the same application"). In one process
that showed up as ``disk I/O error`` in the survey's connections and can
corrupt a database. A child process has its own locks, like any other reader.

How the child starts: :class:`evalkit.store.sqlite.SQLiteStore` keeps one reader
server per app process (``python -I sqlite_reader.py --serve``, started on the
first read, see :func:`serve`), which has imported pyarrow and the ADBC bindings
once and forks a child per read, so a read does not pay for a new interpreter and
those imports (0.25-0.3 s) each time. The server never opens a database and runs
no Python thread (the threads its imports start, jemalloc's and the BLAS's, are
made for fork); it runs as a file in isolated mode, so it does not import
:mod:`evalkit` or Python's :mod:`sqlite3` at all. Where there is no
``fork`` (Windows), or the server cannot be had, the child is a new interpreter
running this file with the job on stdin (:func:`main`).

The child runs each query on its own thread (the driver releases the GIL), concatenates
the results in the given order, dictionary-encodes the requested columns (each part on its thread) and
writes one Arrow IPC file, which the parent memory-maps (no copy).

Protocol: a JSON object on stdin with ``database``, ``busy_timeout_ms``,
``threads`` and ``reads``: a list of ``{"queries": [SQL, ...], "dictionary":
[column, ...], "output": path}``. Every query of every read runs on a pool of
``threads`` threads; each read's results are concatenated in query order, rows
flagged ``_first = 1`` (type-fixing literal rows, see ``Store.read_columns``)
are dropped with that column, the ``dictionary`` columns are encoded, and the
table is written to ``output`` as an Arrow IPC file. Exit status 0 on success;
otherwise a one-line message on stderr.

May import: the standard library, pyarrow and the ADBC SQLite driver (inside the functions that read); nothing
of evalkit, not even the sibling store modules (it runs as a file, in isolated mode).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

BATCH_ROWS = 65_536  # the driver's default of 1,024 rows per batch costs more per row


def _run(database: str, query: str, busy_timeout_ms: int) -> Any:
    import adbc_driver_manager
    import adbc_driver_sqlite
    import pyarrow as pa

    with adbc_driver_sqlite.connect(database) as db, adbc_driver_manager.AdbcConnection(db) as conn:
        # a busy timeout: otherwise a read fails at once ("database is locked") while a writer commits
        with adbc_driver_manager.AdbcStatement(conn) as stmt:
            stmt.set_sql_query(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            stream, _ = stmt.execute_query()
            pa.RecordBatchReader._import_from_c(stream.address).read_all()
        with adbc_driver_manager.AdbcStatement(conn) as stmt:
            stmt.set_options(**{"adbc.sqlite.query.batch_rows": str(BATCH_ROWS)})
            stmt.set_sql_query(query)
            stream, _ = stmt.execute_query()
            return pa.RecordBatchReader._import_from_c(stream.address).read_all()


def _without_first_rows(table: Any) -> Any:
    """Drop the type-fixing literal rows (``_first = 1``) and the ``_first`` column."""
    import pyarrow.compute as pc

    flags = table["_first"]
    if len(flags) and flags[0].as_py() == 1 and pc.sum(flags).as_py() == 1:
        table = table.slice(1)  # SQLite returns the UNION ALL parts in order: no copy needed
    else:
        table = table.filter(pc.equal(flags, 0))
    return table.drop_columns(["_first"])


def read(database: str, reads: list[dict[str, Any]], busy_timeout_ms: int, threads: int = 2) -> list[Any]:
    """One Arrow table per read: its queries' rows in order, literal rows dropped, columns encoded."""
    import pyarrow as pa

    jobs = [(r, q) for r, spec in enumerate(reads) for q in spec["queries"]]

    def part(job: tuple[int, str]) -> Any:  # encoded on the reading thread, in parallel (pyarrow releases the GIL)
        data = _without_first_rows(_run(database, job[1], busy_timeout_ms))
        for name in reads[job[0]]["dictionary"]:
            k = data.schema.get_field_index(name)
            data = data.set_column(k, name, data[name].combine_chunks().dictionary_encode())
        return data

    with ThreadPoolExecutor(max(1, min(threads, len(jobs)))) as pool:
        parts = list(pool.map(part, jobs))
    # the parts' dictionaries differ: unify_dictionaries gives every chunk of a column the same one (the Arrow
    # file format needs one dictionary per column)
    return [pa.concat_tables([t for (owner, _), t in zip(jobs, parts, strict=True) if owner == r]).unify_dictionaries()
            for r in range(len(reads))]


def run(job: dict[str, Any]) -> str | None:
    """Do one job (see the module docstring): the Arrow files written; None, or the one-line error message."""
    import pyarrow as pa
    import pyarrow.ipc  # pa.ipc

    try:
        tables = read(job["database"], job["reads"], job["busy_timeout_ms"], job.get("threads", 2))
        for spec, data in zip(job["reads"], tables, strict=True):
            with pa.OSFile(spec["output"], "wb") as sink, pa.ipc.new_file(sink, data.schema) as writer:
                writer.write_table(data)
    except Exception as exc:  # reported to the parent, which raises it as a StoreError
        return f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return None


def serve() -> int:
    """The reader server (``sqlite_reader.py --serve``): pyarrow and the ADBC bindings imported once, then one
    job per line of stdin, each done by a forked child (this process runs no Python thread, so forking is safe, and a
    child's memory and open files go with it); per job one line on stdout: ``0``, or the exit status and the
    error message as JSON. Ends at the end of stdin (the parent process closed it or ended)."""
    import os

    import adbc_driver_manager  # noqa: F401 -- imported once here, for every forked child
    import adbc_driver_sqlite  # noqa: F401
    import pyarrow
    import pyarrow.compute
    import pyarrow.ipc  # noqa: F401

    print("ready", flush=True)
    for line in sys.stdin:
        try:
            job = json.loads(line)
        except ValueError as exc:
            print(json.dumps([1, f"bad job: {exc}"]), flush=True)
            continue
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: do the job, say what went wrong, leave without running the parent's cleanup
            os.close(read_end)
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)  # nothing the child prints can get into the answers on stdout
            message = run(job)
            if message is not None:
                os.write(write_end, message.encode("utf-8", "replace")[:4000])
            os._exit(0 if message is None else 1)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as fh:
            said = fh.read().decode("utf-8", "replace")
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        print("0" if code == 0 else json.dumps([code, said or f"the reader ended with exit status {code}"]),
              flush=True)
    return 0


def main() -> int:
    """Child-process entry point when started as a script (see the module docstring for the protocol)."""
    try:
        job = json.loads(sys.stdin.read())
    except ValueError as exc:
        print(f"bad job: {exc}", file=sys.stderr)
        return 1
    message = run(job)
    if message is not None:
        print(message, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main())
