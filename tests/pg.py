"""A throwaway PostgreSQL server for the tests: Debian's binaries, ``initdb`` into a temporary folder.

The server listens on a free loopback port with trust authentication for the
``postgres`` user and a password-protected ``evalkit`` role (so the tests also
see a URL with a password, which must never be printed). PostgreSQL refuses to
run as root: when the tests run as root, ``initdb`` and ``pg_ctl`` run as the
``postgres`` user the Debian package creates, on a folder it owns.

``./scripts/test`` installs the ``postgresql`` package when the binaries are
missing. Where PostgreSQL cannot be had, the tests that need it skip with the
reason, unless ``EVALKIT_REQUIRE_POSTGRES=1`` (set by ``.ci/run``) makes that a
failure.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

REQUIRE_VARIABLE = "EVALKIT_REQUIRE_POSTGRES"
PASSWORD = "s3cret-Pw_9"  # the evalkit role's password: tests assert it never shows up in any output


def binaries() -> Path | None:
    """The newest installed PostgreSQL server's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: [int(x) for x in p.split("/")[4].split(".")
                                                                             if x.isdigit()])
    found = [p for p in found if Path(p, "initdb").is_file() and Path(p, "pg_ctl").is_file()]
    return Path(found[-1]) if found else None


def problem() -> str | None:
    """Why a server cannot be started here (None when it can)."""
    if binaries() is None:
        return "PostgreSQL's server binaries are not installed (/usr/lib/postgresql/*/bin; apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no 'postgres' user to run the server as"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """One server, started once per test session; each test gets its own database."""

    def __init__(self) -> None:
        self.bin = binaries()
        assert self.bin is not None, problem()
        self.root = Path(tempfile.mkdtemp(prefix="evalkit-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._names = itertools.count()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.root, "postgres")
        os.chmod(self.root, 0o700)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        with open(self.data / "postgresql.conf", "a") as conf:  # a test server: small and quick to restart
            conf.write("\nshared_buffers = 64MB\nmax_connections = 200\nfsync = on\n")
        self.start()
        self.sql("postgres", f"CREATE ROLE evalkit LOGIN PASSWORD '{PASSWORD}' CREATEDB")
        hba = self.data / "pg_hba.conf"  # the evalkit role must give its password over TCP
        text = hba.read_text()
        hba.write_text("host all evalkit 127.0.0.1/32 scram-sha-256\n" + text)
        self._run("pg_ctl", "-D", str(self.data), "reload")

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        command = [str(self.bin / tool), *args]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, cwd=self.root)

    def start(self) -> None:
        """Start (or start again) the server and wait until it accepts connections."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "log"), "-w", "-t", "60", "-o",
                  f"-k {self.root} -h 127.0.0.1 -p {self.port}", "start")

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: roll back open transactions, disconnect everyone; ``immediate``: crash)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        """Restart the server: every client connection drops."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "-o",
                  f"-k {self.root} -h 127.0.0.1 -p {self.port}", "-l", str(self.root / "log"), "restart")

    def sql(self, database: str, statement: str) -> str:
        """Run one statement as the superuser; returns psql's unaligned output."""
        done = self._run("psql", "-h", "127.0.0.1", "-p",
                         str(self.port), "-U", "postgres", "-d", database, "-At", "-v", "ON_ERROR_STOP=1", "-c",
                         statement, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"psql failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def new_database(self) -> str:
        """A fresh empty database owned by the evalkit role; returns its URL (with the password)."""
        name = f"t{next(self._names)}_{uuid.uuid4().hex[:8]}"
        self.sql("postgres", f"CREATE DATABASE {name} OWNER evalkit")
        return self.url(name)

    def url(self, name: str) -> str:
        return f"postgresql://evalkit:{PASSWORD}@127.0.0.1:{self.port}/{name}"

    def terminate(self, database: str) -> int:
        """Kill every client connection to ``database`` (pg_terminate_backend); returns how many."""
        out = self.sql("postgres", "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                   f"WHERE datname = '{database}' AND pid <> pg_backend_pid()")
        return int(out or 0)

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def pgbouncer_binary() -> str | None:
    """Debian's pgbouncer, or None."""
    return shutil.which("pgbouncer") or ("/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None)


class PgBouncer:
    """PgBouncer in transaction-pooling mode in front of ``server``, as managed hosts put it (their "pooled"
    connection strings); started as the ``postgres`` user when root (it refuses to run as root)."""

    def __init__(self, server: PgServer) -> None:
        binary = pgbouncer_binary()
        assert binary is not None
        self.port = free_port()
        folder = server.root / f"pgbouncer-{self.port}"
        folder.mkdir()
        (folder / "users.txt").write_text(f'"evalkit" "{PASSWORD}"\n')
        (folder / "pgbouncer.ini").write_text(
            f"[databases]\n* = host=127.0.0.1 port={server.port}\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\n"
            f"listen_port = {self.port}\nunix_socket_dir =\nauth_type = scram-sha-256\n"
            f"auth_file = {folder / 'users.txt'}\npool_mode = transaction\nlogfile = {folder / 'log'}\n"
            f"pidfile = {folder / 'pid'}\n")
        if server.as_root:
            for path in (folder, *folder.iterdir()):
                shutil.chown(path, "postgres")
        command = [binary, "-d", str(folder / "pgbouncer.ini")]  # -d: daemon, returns once listening
        if server.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, text=True)
        self.folder, self.server = folder, server
        deadline = time.monotonic() + 20  # the daemon may return before it listens
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            if time.monotonic() > deadline:
                log = (folder / "log").read_text() if (folder / "log").exists() else "no log"
                raise RuntimeError(f"pgbouncer did not start listening on {self.port}: {log[-2000:]}")
            time.sleep(0.1)

    def url(self, database_url: str) -> str:
        """``database_url`` (a database of the server) through the pooler."""
        return database_url.replace(f":{self.server.port}/", f":{self.port}/")

    def close(self) -> None:
        pid = (self.folder / "pid").read_text().strip() if (self.folder / "pid").exists() else ""
        if pid:
            subprocess.run(["kill", pid], check=False)
