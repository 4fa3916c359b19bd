"""The ``ui`` package: its paths point at the app folder (one level above the package), every name the app, the
pages and the tests use is there as ``ui.<name>``, and its modules keep the project's rules (a docstring saying
what they may import, no import of ``pages``, no other module's private name)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import ui
from tests.helpers import ROOT

UI = ROOT / "ui"


def test_the_paths_are_the_app_folders() -> None:
    assert ROOT.resolve() == ui.APP_DIR
    assert (ui.APP_DIR / "app.py").is_file() and (ui.APP_DIR / "config.toml").is_file()  # load()'s default config
    assert Path(ui.PAGE_ICON) == ui.APP_DIR / "assets" / "favicon.png" and Path(ui.PAGE_ICON).is_file()
    assert all((ui.APP_DIR / page).is_file() for page in ui.PAGES.values())  # st.Page paths, from app.py's folder


def test_every_name_used_as_ui_name_is_there() -> None:
    used: set[str] = set()
    for path in [ROOT / "app.py", *ROOT.glob("pages/**/*.py"), *ROOT.glob("tests/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r"\bui\.(\w+)", text))
        for names in re.findall(r"^from ui import \(?([^)\n]+)", text, flags=re.M):
            used |= {n.strip() for n in names.split(",") if n.strip()}
    modules = {p.stem for p in UI.glob("*.py")}
    missing = sorted(n for n in used - modules if n != "py" and not hasattr(ui, n))  # "ui.py" in prose
    assert missing == []
    assert not [n for n in used if n.startswith("_")]  # no private name of ui is used outside it


def test_each_module_says_what_it_may_import_and_imports_no_page() -> None:
    for path in UI.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        doc = ast.get_docstring(tree)
        assert doc and "May import" in doc, path.name
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level or not (node.module or "").startswith("pages"), path.name
                assert not any(a.name.startswith("_") for a in node.names), (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("pages") for a in node.names), path.name
