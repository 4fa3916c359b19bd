"""AppTest of the app entry point: shows the study, never a traceback."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT, copy_demo

APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_DATABASE", str(tmp_path / "responses.sqlite"))
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def new_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    at.secrets["results_password"] = "pw"
    return at.run()


def test_app_shows_the_study_title() -> None:
    at = new_app()
    assert not at.exception
    assert at.title[0].value == "Real or generated? A study of review texts"


def test_broken_config_shows_a_clear_message_not_a_traceback(tmp_path: Path, monkeypatch) -> None:
    cfg = copy_demo(tmp_path / "study")
    cfg.write_text(cfg.read_text().replace("max_sentences = 4", "max_sentences = -4"))
    monkeypatch.setenv("EVALKIT_CONFIG", str(cfg))
    at = new_app()
    assert not at.exception
    assert "not set up correctly" in at.error[0].value
    assert "'max_sentences'" in at.code[0].value


def test_broken_dataset_shows_a_clear_message(tmp_path: Path, monkeypatch) -> None:
    cfg = copy_demo(tmp_path / "study")
    (tmp_path / "study" / "datasets" / "real-hotels.xml").write_text("not xml")
    monkeypatch.setenv("EVALKIT_CONFIG", str(cfg))
    at = new_app()
    assert not at.exception
    assert "real-hotels.xml" in at.code[0].value


def test_the_page_list_is_made_once_per_browser_session_and_never_shared() -> None:
    """Issue 25 §7: a whole-page run reuses its session's pages (no file checks per run); another session gets its
    own (a Page object is armed and disarmed per run: shared, concurrent runs would break it). The results page
    at the root address gets a list of its own (it is the default page there)."""
    at = new_app()
    first = at.session_state["_pages"]
    at.run()
    assert not at.exception and at.session_state["_pages"] is first  # the same objects on the next run
    assert at.title[0].value == "Real or generated? A study of review texts"
    other = new_app()
    assert all(a is not b for a, b in zip(other.session_state["_pages"][1], first[1], strict=True))
    results = AppTest.from_file(APP, default_timeout=30)
    results.secrets["results_password"] = "pw"
    results.query_params["page"] = "results"
    results.run()
    assert not results.exception and results.session_state["_pages"][0] is True  # (results_here)
    assert results.text_input  # the results page's password box


def test_the_config_can_come_from_a_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hosted app (Community Cloud) names its study in its secrets: the first run already reads that study (the
    secrets become environment variables only once read, after the config is looked up)."""
    monkeypatch.delenv("EVALKIT_CONFIG", raising=False)
    at = AppTest.from_file(APP, default_timeout=30)
    at.secrets["results_password"] = "pw"
    at.secrets["EVALKIT_CONFIG"] = "examples/turing/config.toml"  # relative: to the app's folder
    at.run()
    assert not at.exception
    assert at.title[0].value != "Real or generated? A study of review texts"  # not the demo study beside the app
    assert at.title[0].value == tomllib.loads((ROOT / "examples" / "turing" / "config.toml").read_text())["study"][
        "title"]
