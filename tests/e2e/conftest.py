"""Shared fixtures of the end-to-end tests: `streamlit run` servers on a study and a database, one Chromium.

:func:`streamlit_app` starts one server (a SQLite path or a PostgreSQL URL as ``EVALKIT_DATABASE``); the
session-wide ``server`` fixture runs it on a token study and SQLite, and ``start_app`` lets a test start its
own servers (e.g. on a fresh PostgreSQL database), stopped when the test ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, make_token_study

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
OUT = ROOT / "test-output" / "e2e"
#: Screenshots the documentation site shows (docs/), saved by the browser tests so that they stay current
DOCS_SCREENSHOTS = ROOT / "docs" / "screenshots"
RESULTS_PASSWORD = "e2e-results-secret"
#: Starts a server on (config, database, log name) and returns its URL; see the ``start_app`` fixture.
StartApp = Callable[..., str]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_app(config: Path, database: str | Path, log_name: str = "server") -> Iterator[str]:
    """Run ``streamlit run app.py`` on ``config`` with ``EVALKIT_DATABASE=database`` (a SQLite path or a
    PostgreSQL URL) until the block ends; yields the server's URL once it answers its health check.

    The server's output goes to ``test-output/e2e/<log_name>.log``.
    """
    port = free_port()
    OUT.mkdir(parents=True, exist_ok=True)
    log_path = OUT / f"{log_name}.log"
    env = {**os.environ, "EVALKIT_CONFIG": str(config), "EVALKIT_DATABASE": str(database),
           "EVALKIT_RESULTS_PASSWORD": RESULTS_PASSWORD}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none", "--global.developmentMode", "false"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while not _healthy(url):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start; see {log_path}")
                time.sleep(0.3)  # polling the health endpoint: the server gives no other signal
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def docs_shot(page: Any, name: str, *, width: int | None = None, height: int = 1000) -> None:
    """Also save the screen for the documentation: ``docs/screenshots/<name>.png``, the top of the viewport (at most
    ``height`` px, so the files stay small). With ``width``, only when the viewport is that wide (a call inside a
    loop over screen widths)."""
    size = page.viewport_size
    if width is not None and size["width"] != width:
        return
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS_SCREENSHOTS / f"{name}.png"),
                    clip={"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], height)})


def _healthy(url: str) -> bool:
    """True when the server at ``url`` answers its health check with "ok"."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.read().decode().strip() == "ok"
    except OSError:
        return False


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    """One server for the session: a token study (HELP slider) on a SQLite database; (url, config, database)."""
    tmp = tmp_path_factory.mktemp("e2e")
    config = make_token_study(tmp / "study", response="slider")
    database = tmp / "responses.sqlite"
    with streamlit_app(config, database) as url:
        yield url, config, database


@pytest.fixture
def start_app() -> Iterator[StartApp]:
    """A factory: ``start_app(config, database, log_name="server")`` starts a server and returns its URL;
    every server it started stops when the test ends."""
    with contextlib.ExitStack() as stack:
        def start(config: Path, database: str | Path, log_name: str = "server") -> str:
            return stack.enter_context(streamlit_app(config, database, log_name))

        yield start


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Debian chromium not found at {CHROMIUM}: ./scripts/test installs it (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    yield b
    b.close()
    pw.stop()
