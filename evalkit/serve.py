"""``evalkit serve``: where the survey app is, the ``streamlit run`` command that starts it, and running it.

The app (``app.py``, ``ui/``, ``pages/``, ``components/``, ``assets/`` and its ``.streamlit/config.toml``) is the
repository root in a checkout or an editable install, and the ``evalkit_app`` folder beside this package after a
non-editable ``pip install .`` (see ``[tool.setuptools]`` in pyproject.toml). Streamlit reads
``.streamlit/config.toml`` from the working directory only, which is the researcher's and is left alone (their
``.streamlit/secrets.toml`` is read there, as ``evalkit check`` reads it), so the app's own settings are passed
as ``--section.key=value`` options. Standard library only: Streamlit runs in its own process (``python -m
streamlit run``), never imported by evalkit.

Floor: app services (``.importlinter``). Imports nothing from evalkit, and never Streamlit: it runs Streamlit as a
child process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The app's folder in a non-editable install: a top-level folder beside the ``evalkit`` package
APP_PACKAGE = "evalkit_app"


def app_dir() -> Path:
    """The folder holding the app's ``app.py``: ``evalkit_app`` beside the installed ``evalkit`` package, else
    the checkout this ``evalkit`` belongs to. Both are found beside this very package, so the app and the core
    always come from the same install. Raises FileNotFoundError when neither holds the app."""
    beside = Path(__file__).resolve().parent.parent
    for folder in (beside / APP_PACKAGE, beside):
        if (folder / "app.py").is_file():
            return folder
    raise FileNotFoundError(f"the survey app (app.py) is neither in {beside / APP_PACKAGE} nor in {beside}: "
                            "reinstall evalkit (pip install .) or run it from its checkout")


def _text(value: Any) -> str:
    """A TOML value as a command-line value (``true`` / ``false`` for booleans)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _options(table: Mapping[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):  # [theme.sidebar] and the like
            yield from _options(value, name + ".")
        elif isinstance(value, list):  # a list option is given once per value
            yield from (f"--{name}={_text(v)}" for v in value)
        else:
            yield f"--{name}={_text(value)}"


def app_settings(folder: Path) -> list[str]:
    """The app's Streamlit settings (``folder/.streamlit/config.toml``) as ``streamlit run`` options, e.g.
    ``--client.showErrorDetails=none``; none when the file is missing."""
    path = folder / ".streamlit" / "config.toml"
    if not path.is_file():
        return []
    return list(_options(tomllib.loads(path.read_text(encoding="utf-8"))))


def streamlit_command(folder: Path, *, port: int | None = None, address: str | None = None,
                      extra: Sequence[str] = ()) -> list[str]:
    """``python -m streamlit run <folder>/app.py`` with the app's settings, then ``--server.port`` /
    ``--server.address`` when given, then ``extra`` (the arguments after ``--``, which win over the others)."""
    command = [sys.executable, "-m", "streamlit", "run", str(folder / "app.py"), *app_settings(folder)]
    if port is not None:
        command.append(f"--server.port={port}")
    if address is not None:
        command.append(f"--server.address={address}")
    return [*command, *extra]


def run(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run the server. On POSIX the process becomes it (``exec``): one process, so Ctrl-C, a service manager's
    stop signal or a kill reach Streamlit itself and nothing is left behind; elsewhere it waits for it and
    returns its exit status."""
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execve(command[0], list(command), dict(env))
    return subprocess.call(list(command), env=dict(env))
