"""The house rules import-linter cannot check (it checks the floors in ``.importlinter``; ``./scripts/test`` runs
it): no module takes another module's private name, and no Python file is over 1,000 lines.

A private name is one with a leading underscore (not a dunder). Taking one means ``from x import _name`` or
``x._name`` on an imported project module, across evalkit, the app's ``ui`` package, its pages and ``app.py``.
(The tests may reach into a module's private helpers to test them; the rules are for the code that ships.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PROJECT = ("evalkit", "ui", "pages")
MAX_LINES = 1000


def shipped_files() -> list[Path]:
    """Every Python file of evalkit, ui, pages, plus app.py."""
    files = [ROOT / "app.py"]
    for top in PROJECT:
        files += sorted((ROOT / top).rglob("*.py"))
    return [f for f in files if "__pycache__" not in f.parts]


def module_name(path: Path) -> str:
    """``evalkit/tasks/base.py`` -> ``evalkit.tasks.base``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_private(name: str) -> bool:
    """A leading underscore, not a dunder."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def absolute(module: str | None, level: int, here: str, is_package: bool) -> str:
    """The absolute name of an ``ImportFrom``'s module (relative imports resolved against ``here``)."""
    if not level:
        return module or ""
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def is_module(name: str) -> bool:
    """Whether ``name`` is one of the project's modules or packages (a file or a folder)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or path.is_dir()


def private_takings(path: Path) -> list[str]:
    """Where the file takes another module's private name: ``file:line: name``."""
    here, tree = module_name(path), ast.parse(path.read_text(encoding="utf-8"))
    package = path.name == "__init__.py"
    found: list[str] = []
    module_aliases: set[str] = set()  # local names bound to project modules
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level, here, package)
            if source.split(".")[0] not in PROJECT or source == here:
                continue
            for alias in node.names:
                if is_private(alias.name) and not is_module(f"{source}.{alias.name}"):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {source}.{alias.name}")
                elif is_module(f"{source}.{alias.name}"):
                    module_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROJECT:
                    module_aliases.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and is_private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in module_aliases):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
    return found


def test_no_module_takes_another_modules_private_name() -> None:
    found = [hit for path in shipped_files() for hit in private_takings(path)]
    assert not found, "private names taken across modules (make them public where they are):\n" + "\n".join(found)


def test_the_check_finds_a_private_name_taken(tmp_path: Path) -> None:
    """The scan itself: a file that takes ``_codes`` from another evalkit module, or calls ``stats._fit``, is
    caught; its own private names and dunders are not."""
    probe = ROOT / "evalkit" / "zz_probe_private.py"
    probe.write_text("from . import stats\nfrom .analysis import __all__, _gone\n\n_mine = 1\n"
                     "print(stats._fit_bt, _mine, stats.__name__)\n", encoding="utf-8")
    try:
        hits = private_takings(probe)
    finally:
        probe.unlink()
    assert hits == ["evalkit/zz_probe_private.py:2: evalkit.analysis._gone",
                    "evalkit/zz_probe_private.py:5: stats._fit_bt"]


@pytest.mark.parametrize("top", ["evalkit", "ui", "pages", "tests", "bench", "docs", "scripts"])
def test_no_python_file_is_over_a_thousand_lines(top: str) -> None:
    folder = ROOT / top
    if not folder.is_dir():
        pytest.skip(f"no {top}/ folder")
    long = {str(f.relative_to(ROOT)): n for f in sorted(folder.rglob("*.py"))
            if "__pycache__" not in f.parts and (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concern): {long}"


def test_every_module_says_what_it_holds() -> None:
    """A module's first lines say what it holds: every shipped module starts with a docstring."""
    bare = [str(f.relative_to(ROOT)) for f in shipped_files()
            if f.stat().st_size and ast.get_docstring(ast.parse(f.read_text(encoding="utf-8"))) is None]
    assert not bare, f"modules without a docstring: {bare}"
