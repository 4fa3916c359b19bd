"""Shared fixtures of the end-to-end tests: one `streamlit run` server on a token study, one Chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import ROOT, make_token_study

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
OUT = ROOT / "test-output" / "e2e"
RESULTS_PASSWORD = "e2e-results-secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Path]]:
    tmp = tmp_path_factory.mktemp("e2e")
    config = make_token_study(tmp / "study", response="slider")
    database = tmp / "responses.sqlite"
    port = free_port()
    OUT.mkdir(parents=True, exist_ok=True)
    log = open(OUT / "server.log", "w")  # noqa: SIM115 - closed at teardown
    env = {**os.environ, "EVALKIT_CONFIG": str(config), "EVALKIT_DATABASE": str(database),
           "EVALKIT_RESULTS_PASSWORD": RESULTS_PASSWORD}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--global.developmentMode", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.terminate()
            pytest.fail(f"streamlit did not start; see {OUT / 'server.log'}")
        time.sleep(0.3)
    yield url, config, database
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


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


