"""evalkit as an installed tool: ``pip install .`` gives the ``evalkit`` command, whose ``serve`` starts the app.

Fast: ``serve``'s arguments, its refusals and the command it runs; pyproject.toml against requirements.txt
(every runtime requirement declared). Slow: a wheel built and installed (non-editable, into
a folder, no network, no dependency downloaded) whose ``evalkit check`` and ``evalkit serve`` run from another
folder with the app they carry; an editable install into a throwaway virtual environment.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tomllib
import urllib.request
import venv
from pathlib import Path

import pytest

from evalkit.__main__ import build_parser, main, split_passthrough
from evalkit.serve import app_dir, app_settings, streamlit_command
from tests.helpers import ROOT
from tests.pg import free_port

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
EXAMPLE = ROOT / "examples" / "turing"  # a study with its own data (no ../ paths): it can be copied anywhere


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a command a researcher types: no EVALKIT_* of the test run."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}, **extra}


# ----------------------------------------------------------------------------- serve's arguments


def test_serve_refuses_a_missing_config_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # no config.toml here
    monkeypatch.delenv("EVALKIT_CONFIG", raising=False)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: config.toml: study config not found"), err
    assert "python -m evalkit serve CONFIG" in err
    assert main(["serve", "studies/none.toml", "--port", "8600"], prog="evalkit") == 2
    err = capsys.readouterr().err
    assert err == ("error: studies/none.toml: study config not found; give the study's config.toml: "
                   "evalkit serve CONFIG\n")
    monkeypatch.setenv("EVALKIT_CONFIG", "studies/from-env.toml")  # no CONFIG given: the environment's study
    assert main(["serve"], prog="evalkit") == 2
    assert capsys.readouterr().err.startswith("error: studies/from-env.toml: study config not found")


def test_serve_refuses_an_invalid_config_before_starting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "study")
    config = tmp_path / "study" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('kind = "realfake"', 'kind = "nope"'),
                      encoding="utf-8")
    monkeypatch.setattr("evalkit.__main__.run", lambda *a: pytest.fail("the server must not start"))
    assert main(["serve", str(config)]) == 1  # as `check` does: the message names the file and the key
    err = capsys.readouterr().err
    assert err.startswith("error: config.toml:") and "nope" in err


def test_serve_runs_streamlit_on_the_app_with_the_study_and_its_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "study")
    monkeypatch.chdir(tmp_path)
    for name in ("EVALKIT_CONFIG", "EVALKIT_DATABASE"):
        monkeypatch.delenv(name, raising=False)
    ran = []
    monkeypatch.setattr("evalkit.__main__.run", lambda command, env: ran.append((command, env)) or 0)
    assert main(["serve", "study/config.toml", "--port", "8600", "--address", "127.0.0.1", "--database",
                 "db/x.sqlite", "--", "--server.headless=true", "--theme.base=dark"], prog="evalkit") == 0
    [(command, env)] = ran
    assert command[:5] == [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py")]  # this checkout's app
    assert command[-4:] == ["--server.port=8600", "--server.address=127.0.0.1", "--server.headless=true",
                            "--theme.base=dark"]  # the arguments after -- last: they win
    assert {"--client.showErrorDetails=none", "--runner.magicEnabled=false", "--server.fileWatcherType=none",
            "--theme.base=light"} <= set(command)  # .streamlit/config.toml, which streamlit reads only from cwd
    assert env["EVALKIT_CONFIG"] == str(tmp_path / "study" / "config.toml")  # absolute
    assert env["EVALKIT_DATABASE"] == str(tmp_path / "db" / "x.sqlite")


def test_the_app_settings_are_all_of_the_apps_streamlit_config() -> None:
    settings = app_settings(app_dir())
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert len(settings) == sum(len(table) for table in config.values())
    assert "--theme.font=sans serif" in settings and "--client.showSidebarNavigation=false" in settings
    assert app_settings(ROOT / "evalkit") == []  # no .streamlit/config.toml: nothing
    command = streamlit_command(app_dir())
    assert not any(a.startswith(("--server.port", "--server.address")) for a in command)  # Streamlit's defaults


def test_only_serve_takes_the_arguments_after_a_double_dash() -> None:
    assert split_passthrough(["serve", "c.toml", "--", "--server.headless=true", "--"]) == (
        ["serve", "c.toml"], ["--server.headless=true", "--"])
    assert split_passthrough(["serve", "c.toml"]) == (["serve", "c.toml"], [])
    assert split_passthrough(["check", "--", "c.toml"]) == (["check", "--", "c.toml"], [])


def test_the_command_is_named_as_typed() -> None:
    assert build_parser("evalkit").format_usage().startswith("usage: evalkit ")
    assert build_parser().format_usage().startswith("usage: python -m evalkit ")
    assert PYPROJECT["project"]["scripts"] == {"evalkit": "evalkit.__main__:script"}


# ----------------------------------------------------------------------------- pyproject.toml against the checkout


def version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_every_runtime_requirement_is_a_dependency_with_a_bound_the_pin_meets() -> None:
    runtime = {}
    section = None
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            section = line.lstrip("# ").split()[0]
        elif line.strip() and section == "Runtime":
            name, pin = line.split("==")
            runtime[name.strip()] = version(pin.strip())
    declared = {}
    for requirement in PYPROJECT["project"]["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+(?:\[[a-z,]+\])?)>=([0-9.]+)", requirement)
        assert m, f"{requirement}: give a lower bound (>=), not a pin"
        declared[m[1]] = version(m[2])
    assert set(declared) == set(runtime)
    for name, bound in declared.items():
        assert bound <= runtime[name], f"{name}: requirements.txt pins {runtime[name]}, below the bound {bound}"


# ----------------------------------------------------------------------------- real installs (slow)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout to build from: setuptools writes build/ and evalkit.egg-info/ into the tree it builds."""
    try:
        import setuptools
    except ImportError:
        pytest.fail("setuptools is missing from this environment: ./scripts/setup installs it (requirements.txt)")
    assert version(setuptools.__version__.split(".post")[0])[:2] >= (70, 1), \
        f"setuptools {setuptools.__version__} cannot build a wheel alone: ./scripts/setup installs the pinned one"
    target = tmp_path_factory.mktemp("install") / "src"
    shutil.copytree(ROOT, target, ignore=shutil.ignore_patterns(  # what is not to be installed, or has no .py
        ".venv", ".git", "data", "test-output", "tests", "bench", "docs", "examples", "deploy", "scripts",
        "__pycache__", "build", "*.egg-info", "*.sqlite*", ".pytest_cache", ".ruff_cache"))
    return target


def pip(*args: str, python: str = sys.executable) -> None:
    """pip from this environment, offline: no index, no dependency, the build backend already installed."""
    into = ["--python", python] if python != sys.executable else []  # another environment
    out = subprocess.run([sys.executable, "-m", "pip", *into, "install", "--no-index", "--no-deps",
                          "--no-build-isolation", "--no-input", "--disable-pip-version-check", *args],
                         capture_output=True, text=True, timeout=120, env=clean_env())
    assert out.returncode == 0, out.stdout + out.stderr


def modules(folder: Path) -> set[Path]:
    """The Python files under ``folder`` (relative paths)."""
    return {p.relative_to(folder) for p in folder.rglob("*.py") if "__pycache__" not in p.parts}


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.read().decode("utf-8")
    except OSError:
        return None


@pytest.mark.slow
def test_a_non_editable_install_checks_and_serves_a_study_from_another_folder(source: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    core, app = modules(source / "evalkit"), modules(source) - {"evalkit" / p for p in modules(source / "evalkit")}
    pip("--target", str(site), str(source))
    assert modules(site / "evalkit") == core  # every subpackage, with no list to keep in pyproject.toml
    assert modules(site / "evalkit_app") == app  # app.py, ui/, pages/: every Python file of the checkout's app
    assert (site / "evalkit_app" / ".streamlit" / "config.toml").is_file()
    assert not (site / "evalkit_app" / "config.toml").exists()  # the demo study is not part of the app
    evalkit = site / "bin" / "evalkit"
    study = tmp_path / "study"
    shutil.copytree(EXAMPLE, study)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(PYTHONPATH=str(site))  # the folder install's packages; streamlit & co. from this environment

    out = subprocess.run([str(evalkit), "check", str(study / "config.toml"), "--samples", "5"], cwd=elsewhere,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Study: Person or machine?" in out.stdout and "OK: the study is valid." in out.stdout

    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "w", encoding="utf-8") as fh:
        server = subprocess.Popen([str(evalkit), "serve", str(study / "config.toml"), "--port", str(port),
                                   "--address", "127.0.0.1", "--database", "answers.sqlite", "--",
                                   "--server.headless=true"], cwd=elsewhere, env=env, stdin=subprocess.DEVNULL,
                                  stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 45
        while fetch(f"{url}/_stcore/health") != "ok":
            assert server.poll() is None, f"the server stopped: {log.read_text()}"
            assert time.monotonic() < deadline, f"no health check answer in 45 s: {log.read_text()}"
            time.sleep(0.3)  # the server gives no other signal that it is up
        page = fetch(f"{url}/")
        assert page is not None and '<div id="root">' in page, page
        cmdline = Path(f"/proc/{server.pid}/cmdline")
        if cmdline.exists():  # Linux: serve became streamlit (exec), running the installed copy of the app
            argv = cmdline.read_text().split("\0")
            assert str(site / "evalkit_app" / "app.py") in argv and "--client.showErrorDetails=none" in argv, argv
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)
    assert fetch(f"{url}/_stcore/health") is None
    assert f"serving 'Person or machine?' ({study / 'config.toml'}), database {elsewhere / 'answers.sqlite'}" \
        in log.read_text()


@pytest.mark.slow
def test_an_editable_install_runs_the_checkout(source: Path, tmp_path: Path) -> None:
    # A virtual environment without pip that sees this one's packages (streamlit, setuptools) through a .pth
    # file: the editable install needs no network. (--system-site-packages would give the base Python's.)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "outer.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    pip("-e", str(source), python=str(python))
    out = subprocess.run([str(env_dir / "bin" / "evalkit"), "check", str(EXAMPLE / "config.toml"), "--samples",
                          "5"], cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "OK: the study is valid." in out.stdout, out.stderr
    out = subprocess.run([str(python), "-c", "from evalkit.serve import app_dir; print(app_dir())"], cwd=tmp_path,
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == str(source), out.stderr  # the checkout's own app, edits included
