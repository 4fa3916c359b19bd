"""Fixtures for AppTest page tests: each test gets its own database and a fresh process cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import lxml.html
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from evalkit.config import LoadedStudy, open_study
from evalkit.store import Store, open_store
from tests.helpers import ROOT, make_token_study

APP = str(ROOT / "app.py")


class Harness:
    """Starts app runs like a browser would (a new AppTest = a new tab or a refresh)."""

    def __init__(self, config: Path, database: Path | str) -> None:
        self.config, self.database = config, database
        self._store: Store | None = None

    def app(self, secrets: dict[str, str] | None = None, **query: str) -> AppTest:
        """A first run of the app with these URL query parameters (and extra Streamlit secrets)."""
        at = AppTest.from_file(APP, default_timeout=30)
        at.secrets["results_password"] = "pw"  # always set: otherwise AppTest reads ./.streamlit
        at.secrets.update(secrets or {})
        at.query_params.update(query)
        return at.run()

    @property
    def store(self) -> Store:
        """The test's own store on the app's database (one per harness: on PostgreSQL, one pool)."""
        if self._store is None:
            self._store = open_store(self.database)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    @property
    def loaded(self) -> LoadedStudy:
        return open_study(self.config, database=self.database)


@pytest.fixture
def make_harness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Harness]]:
    def make(config: Path | None = None, database: Path | str | None = None, **token_study: object) -> Harness:
        """A study (the token study unless ``config``) on ``database`` (default: a new SQLite file; a
        PostgreSQL URL runs the same pages against the server)."""
        if config is None:
            config = make_token_study(tmp_path / "study", **token_study)  # type: ignore[arg-type]
        if database is None:
            database = tmp_path / "responses.sqlite"
        monkeypatch.setenv("EVALKIT_CONFIG", str(config))
        monkeypatch.setenv("EVALKIT_DATABASE", str(database))
        return Harness(config, database)

    made: list[Harness] = []
    st.cache_resource.clear()
    yield lambda *args, **kwargs: made.append(make(*args, **kwargs)) or made[-1]
    for h in made:
        h.close()
    st.cache_resource.clear()


@pytest.fixture
def harness(make_harness: Callable[..., Harness]) -> Harness:
    return make_harness()


def page_protos(at: AppTest) -> str:
    """Everything the app sent to the browser in the last run: every element's protobuf as text."""
    out: list[str] = []

    def walk(node: object) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            children = children.values()
        for child in children or []:
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def texts(at: AppTest) -> str:
    """All visible strings of the last run, joined (for 'is this message shown' checks), the cards' labels
    and texts included."""
    parts: list[str] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "error", "warning", "info",
                 "success", "code"):
        parts.extend(str(e.value) for e in getattr(at, kind))
    parts.extend(e.proto.text for e in at.get("progress"))
    for root in _card_elements(at):  # the cards' topic, labels and texts, as a browser shows them (no CSS)
        for style in root.findall(".//style"):
            style.drop_tree()
        parts.append(root.text_content())
    return "\n".join(parts)


def progress_lines(at: AppTest) -> tuple[str, str]:
    """(the task's line, the bar's own text) of the progress header (``ui.progress_header``: one element, the
    task's line in grey above the bar's text)."""
    text = at.get("progress")[0].proto.text
    task, newline, bar = text.partition("  \n")
    assert newline and task.startswith(":gray[") and task.endswith("]"), text
    return task.removeprefix(":gray[").removesuffix("]"), bar


def cards(at: AppTest) -> list[tuple[str, str]]:
    """(label, text) of every card ``ui.review_cards`` drew in the last run, in order, as a browser reads them:
    the HTML parsed (lxml), so an escaped text comes back as the text itself."""
    found: list[tuple[str, str]] = []
    for root in _card_elements(at):
        for card in root.find_class("evalkit-card"):
            [label] = card.find_class("evalkit-card-label")
            [text] = card.find_class("evalkit-card-text")
            found.append((label.text_content(), text.text_content()))
    return found


def _card_elements(at: AppTest) -> list[Any]:
    """Each ``st.html`` of the last run that holds cards (``ui.review_cards``), parsed by lxml under one <div>."""
    return [lxml.html.fragment_fromstring(e.proto.body, create_parent="div") for e in at.get("html")
            if "evalkit-card" in e.proto.body]


def card_texts(at: AppTest) -> list[str]:
    """The texts of the cards of the last run (see :func:`cards`)."""
    return [text for _, text in cards(at)]


def button(at: AppTest, label: str):
    """The one button (or form submit button) with this label."""
    [found] = [b for b in at.button if b.label == label]
    return found


def has_button(at: AppTest, label: str) -> bool:
    """Whether a button with this label is shown."""
    return any(b.label == label for b in at.button)


def leaves(at: AppTest, *, button_labels: bool = False) -> list[tuple[str, Any]]:
    """Every leaf element of the page in the order drawn: (type, key of a widget or value), a button by its
    label with ``button_labels``. The invisible stand-ins that keep columns equally tall (``ui.mark_spacer``)
    are left out: they are not messages."""
    out: list[tuple[str, Any]] = []

    def walk(node: Any) -> None:
        if "why-spacer-" in str(getattr(getattr(node, "proto", None), "id", "")):
            return
        children = getattr(node, "children", None)
        if children:
            for child in (children.values() if isinstance(children, dict) else children):
                walk(child)
            return
        kind = getattr(node, "type", "")
        if button_labels and kind == "button":
            out.append((kind, node.label))
        else:
            out.append((kind, getattr(node, "key", None) or getattr(node, "value", None)))

    walk(at._tree)
    return out
