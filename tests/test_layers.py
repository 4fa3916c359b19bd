"""The house rules import-linter cannot check (it checks the floors in ``.importlinter``; ``./scripts/test`` runs
it): no module takes another module's private name, no Python file is over 1,000 lines, and every module's
docstring says what it holds and what it may import.

A private name is one with a leading underscore (not a dunder). Taking one means ``from x import _name`` or
``x._name`` on an imported project module, across evalkit, the app's ``ui`` package, its pages and ``app.py``.
(The tests may reach into a module's private helpers to test them; the rules are for the code that ships.)
"""

from __future__ import annotations

import ast
import re
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


def module_name(path: Path, root: Path = ROOT) -> str:
    """``evalkit/tasks/base.py`` -> ``evalkit.tasks.base``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
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


def is_module(name: str, root: Path = ROOT) -> bool:
    """Whether ``name`` is one of the project's modules or packages (a file or a folder)."""
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or path.is_dir()


def dotted(node: ast.expr) -> str | None:
    """``a.b.c`` for a chain of names (``evalkit.tasks.base``), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def private_takings(path: Path, root: Path = ROOT) -> list[str]:
    """Where the file takes another module's private name (``file:line: name``): ``from m import _x``,
    ``m._x`` or ``a.b._x`` on an imported project module, ``getattr(m, "_x")``."""
    here, tree = module_name(path, root), ast.parse(path.read_text(encoding="utf-8"))
    package, where = path.name == "__init__.py", path.relative_to(root)
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the project module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = absolute(node.module, node.level, here, package)
            if source.split(".")[0] not in PROJECT or source == here:
                continue
            for alias in node.names:
                if is_module(f"{source}.{alias.name}", root):
                    aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
                elif is_private(alias.name):
                    found.append(f"{where}:{node.lineno}: {source}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PROJECT:
                    top = alias.name.split(".")[0]
                    aliases[alias.asname or top] = alias.name if alias.asname else top

    def on_module(expr: ast.expr) -> str | None:
        """The project module an expression names (``stats``, ``evalkit.tasks.base``), if it is one."""
        name = dotted(expr)
        if name is None or name.split(".")[0] not in aliases:
            return None
        full = ".".join([aliases[name.split(".")[0]], *name.split(".")[1:]])
        return full if is_module(full, root) and full != here else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr) and on_module(node.value):
            found.append(f"{where}:{node.lineno}: {dotted(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr")
              and len(node.args) >= 2 and on_module(node.args[0]) and isinstance(node.args[1], ast.Constant)
              and isinstance(node.args[1].value, str) and is_private(node.args[1].value)):
            found.append(f"{where}:{node.lineno}: {node.func.id}({dotted(node.args[0])}, {node.args[1].value!r})")
    return found


def test_no_module_takes_another_modules_private_name() -> None:
    found = [hit for path in shipped_files() for hit in private_takings(path)]
    assert not found, "private names taken across modules (make them public where they are):\n" + "\n".join(found)


def test_the_check_finds_a_private_name_taken(tmp_path: Path) -> None:
    """The scan itself, on a small package of its own: each way of taking another module's private name is caught;
    a module's own private names, dunders and a private attribute of an object are not."""
    package = tmp_path / "evalkit"
    (package / "stats").mkdir(parents=True)
    for name in ("__init__.py", "analysis.py", "stats/__init__.py", "stats/rankings.py"):
        (package / name).write_text('"""A module."""\n', encoding="utf-8")
    probe = package / "probe.py"
    probe.write_text("import evalkit.stats.rankings\nfrom . import stats\nfrom .analysis import __all__, _gone\n"
                     "from .stats import rankings as r\n\n_mine = 1\n"
                     "print(stats._fit_bt, _mine, stats.__name__, evalkit.stats.rankings._fit_pl, r._draw)\n"
                     "print(getattr(stats, '_hidden'), getattr(stats, 'shown'), object()._private)\n", encoding="utf-8")
    assert sorted(private_takings(probe, tmp_path)) == sorted([
        "evalkit/probe.py:3: evalkit.analysis._gone", "evalkit/probe.py:7: stats._fit_bt",
        "evalkit/probe.py:7: evalkit.stats.rankings._fit_pl", "evalkit/probe.py:7: r._draw",
        "evalkit/probe.py:8: getattr(stats, '_hidden')"])


@pytest.mark.parametrize("top", ["evalkit", "ui", "pages", "tests", "bench", "docs", "scripts"])
def test_no_python_file_is_over_a_thousand_lines(top: str) -> None:
    folder = ROOT / top
    if not folder.is_dir():
        pytest.skip(f"no {top}/ folder")
    long = {str(f.relative_to(ROOT)): n for f in sorted(folder.rglob("*.py"))
            if "__pycache__" not in f.parts and (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concern): {long}"


def test_every_module_says_what_it_holds_and_what_it_may_import() -> None:
    """A module's first lines say what it holds and what it may import: every shipped module starts with a
    docstring, and the docstring names its floor or what it may import."""
    docs = {str(f.relative_to(ROOT)): ast.get_docstring(ast.parse(f.read_text(encoding="utf-8")))
            for f in shipped_files()}
    bare = [name for name, doc in docs.items() if doc is None]
    assert not bare, f"modules without a docstring: {bare}"
    silent = [name for name, doc in docs.items()
              if not re.search(r"may import|imports nothing|imports only|floor:", doc or "", re.IGNORECASE)]
    assert not silent, f"modules whose docstring does not say what they may import: {silent}"
