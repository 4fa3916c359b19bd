"""What is opened once per process (``st.cache_resource``) and looked up once per browser session: the study,
its store and the evaluators' plans; the environment and secrets that choose the database; the browser tab's
title (the study's); and the results page's limit on password guesses.

May import: Streamlit, ``evalkit``'s public names, ``ui.navigation`` and ``ui.errors``; never ``pages``.
"""

from __future__ import annotations

import gc
import logging
import os
import time
from pathlib import Path

import streamlit as st

from evalkit.config import ConfigError, LoadedStudy, open_study, relative_paths, study_summary
from evalkit.datasets import DatasetError
from evalkit.login_limit import LoginLimiter
from evalkit.queue import register_in_background
from evalkit.sampling import Question, plan
from evalkit.store import Store, StoreError, Unavailable, open_store

from .errors import unavailable_notice
from .navigation import APP_DIR

log = logging.getLogger("evalkit.app")


def secret(name: str) -> str | None:
    """A value from Streamlit's secrets (``.streamlit/secrets.toml``; Community Cloud's secrets), or None."""
    try:
        value = st.secrets.get(name)
    except Exception:  # no secrets file at all
        value = None
    return str(value) if value else None


def config_path() -> str:
    """The study's config: ``EVALKIT_CONFIG`` from the environment, or the ``EVALKIT_CONFIG`` secret (a hosted app
    such as Community Cloud sets it there: Streamlit makes secrets environment variables only once they are read,
    which is after this is asked on the first run; a relative path there is read from the app's folder, the
    repository's root), else ``config.toml`` beside the app."""
    if os.environ.get("EVALKIT_CONFIG"):
        return os.environ["EVALKIT_CONFIG"]
    return str(APP_DIR / (secret("EVALKIT_CONFIG") or "config.toml"))  # (an absolute path stays as it is)


def database_override() -> tuple[str | None, str]:
    """The database that replaces ``[study] database``, and where it came from.

    ``EVALKIT_DATABASE`` (one process, one deployment) wins over the ``database_url`` secret, which wins
    over the config: so a hosted app keeps its PostgreSQL URL (and its password) out of the repository.
    """
    if os.environ.get("EVALKIT_DATABASE"):
        return os.environ["EVALKIT_DATABASE"], "EVALKIT_DATABASE"
    return secret("database_url"), "the database_url secret"


@st.cache_resource(show_spinner="Loading the study...")
def _load_study(config: str, database: str | None, database_from: str) -> LoadedStudy:
    loaded = open_study(config, database=database, database_from=database_from)
    gc.freeze()  # the pools live as long as the process: keep them out of every later garbage collection
    return loaded


@st.cache_resource(show_spinner=False)
def _open_store(location: str, version: str, _loaded: LoadedStudy) -> Store:
    """One store per process and database (for PostgreSQL: one connection pool)."""
    store = open_store(_loaded.study.database)
    store.register_study(version, study_summary(_loaded.study))  # the database describes its own tasks
    # judgments_per_item: the shared queue's units, registered on a thread (a million units take seconds; the
    # first page does not wait for them, a claim does)
    register_in_background(store, _loaded.study, _loaded.item_sets)
    return store


@st.cache_resource(show_spinner=False, max_entries=20_000)
def cached_plan(version: str, seed: int, arrival: int | None, _loaded: LoadedStudy,
                participant: str | None = None) -> list[Question]:
    """An evaluator's plan, computed once per process (a pure function of the study, the seed, the arrival and
    the invited participant's id)."""
    return plan(_loaded.study, _loaded.pools, seed, _loaded.item_sets, arrival, participant)


def page_title() -> str:
    """The browser tab's title: the study's ``title`` (the config is read once per process), or "Survey" while the
    study cannot be read (the page then says why, see :func:`load`)."""
    config = config_path()
    key = (config, *database_override())
    held = st.session_state.get("_resources")
    if held is not None and held[0] == key:
        return held[1].study.title
    try:
        return _load_study(*key).study.title
    except Exception:  # a set-up problem: load() shows it on the page (a failed load is not cached)
        return "Survey"


def load() -> tuple[LoadedStudy, Store]:
    """The study (parsed once per process) and its store; on a set-up error, a clear message and stop."""
    config = config_path()
    key = (config, *database_override())
    held = st.session_state.get("_resources")
    if held is not None and held[0] == key:  # this browser session already looked them up
        return held[1], held[2]
    try:
        loaded = _load_study(*key)
        store = _open_store(str(loaded.study.database), loaded.version, loaded)
    except Unavailable as exc:  # a database server that does not answer (yet): a reload will try again
        log.error("the database cannot be reached (config %s): %s", config, exc)
        unavailable_notice()  # no details for evaluators: the log has the masked URL and the reason
        st.stop()
    except (ConfigError, DatasetError, StoreError, OSError) as exc:
        log.error("study set-up failed (config %s): %s", config, exc)  # the full detail, absolute paths included
        st.error("The study is not set up correctly, so the survey cannot start. "
                 "Please tell the research team; the problem is:")
        # paths relative to the study folder: the browser gets no server folders
        st.code(relative_paths(str(exc), Path(config).resolve().parent), language=None, wrap_lines=True)
        st.stop()
    st.session_state["_resources"] = (key, loaded, store)
    return loaded, store


# ----------------------------------------------------------------------------- login throttle (results page)

login_sleep = time.sleep  # tests replace these to observe the waits without waiting
login_clock = time.monotonic


@st.cache_resource
def login_limiter() -> LoginLimiter:
    """One limit on password guesses for every browser session of this process (see evalkit.login_limit):
    5 guesses at once, then one every 2 s overall; nobody waits more than 1.5 s (else: try again shortly)."""
    return LoginLimiter(burst=5, interval=2.0, max_wait=1.5, clock=lambda: login_clock(),
                        sleep=lambda s: login_sleep(s))
