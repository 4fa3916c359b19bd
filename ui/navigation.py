"""The app's pages and paths: the page files and the session token's URL parameter, the app folder and the page
icon, each page's layout, the results page's address at the app's root, and the Streamlit runtime setting that
app.py applies before a page runs.

May import: Streamlit and the standard library; no other ``ui`` module (they all may import this one), never
``pages`` (the page files are named by path, for ``st.Page``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

import streamlit as st

log = logging.getLogger("evalkit.app")
#: The app folder (config.toml, assets, components, pages): the folder that holds this package
APP_DIR = Path(__file__).resolve().parent.parent


PAGES = {
    "consent": "pages/consent.py",
    "survey": "pages/survey.py",  # every task kind's questions (pages/tasks/<kind>.py draws them)
    "done": "pages/done.py",
    "results": "pages/results.py",
}
TOKEN_PARAM = "s"
PAGE_ICON = str(APP_DIR / "assets" / "favicon.png")  # served by this server: no third-party request
# by url_path; question pages choose (see instructions_gate)
_LAYOUTS: dict[str, Literal["centered", "wide"]] = {"": "centered", "done": "centered", "results": "wide"}

#: Seconds Streamlit's runtime loop pauses after sending a session's queued messages (its
#: ``MESSAGE_FLUSH_INTERVAL_SECS``, 5 ms in Streamlit 1.67; no config option sets it). See
#: :func:`send_messages_promptly`.
FLUSH_INTERVAL_SECONDS = 0.0


def send_messages_promptly(seconds: float = FLUSH_INTERVAL_SECONDS) -> bool:
    """Make Streamlit send a run's messages as soon as they are ready; True when the setting took.

    Streamlit's runtime loop sends whatever is queued, then sleeps 5 ms before it looks again. A rerun's
    first message (the run has started) goes out at once, so everything a question fragment draws after it
    waits for that sleep: half of what an answer costs on the server (docs/explanation/performance.md). Streamlit has
    no option for this, so the module constant its loop reads on every pass is set here. With 0 the loop
    still waits for its "messages queued" event between passes (it does not spin); it only batches less.
    A Streamlit without that constant is left as it is, with one warning in the log.
    """
    from streamlit.runtime import runtime  # not at import: AppTest and tools import ui without a server

    if not isinstance(getattr(runtime, "MESSAGE_FLUSH_INTERVAL_SECS", None), (int, float)):
        if not getattr(send_messages_promptly, "warned", False):
            log.warning("this Streamlit has no runtime.MESSAGE_FLUSH_INTERVAL_SECS: answers are sent at its pace")
            send_messages_promptly.warned = True  # type: ignore[attr-defined]
        return False
    runtime.MESSAGE_FLUSH_INTERVAL_SECS = seconds  # type: ignore[misc]  # a Final in Streamlit: see above
    return True


def page_layout(url_path: str) -> Literal["centered", "wide"] | None:
    """The layout app.py sets before a page runs, or None when the page sets it itself (question pages)."""
    return _LAYOUTS.get(url_path)


#: The results page's address at the app's root, ``/?page=results`` (see :func:`results_at_root`).
RESULTS_QUERY = ("page", "results")


def results_at_root() -> bool:
    """Whether this run asks for the results page at the app's root address, ``/?page=results``.

    Streamlit's browser client, opened directly at a page's own path (``/results``), first takes that path for
    the app's base URL: it asks for ``/results/_stcore/health`` and ``/results/_stcore/host-config``, gets two
    404s (the server answers them at the root only, on purpose, so that the client falls back), then connects
    at ``/``. Opened at the root address it asks the root's only. So the results page is served at
    ``/?page=results`` too (the address researchers are given); ``/results`` keeps working for bookmarks."""
    return st.query_params.get(RESULTS_QUERY[0]) == RESULTS_QUERY[1]


def page_path(page: Any) -> str:
    """A page's path in the app (``""`` consent, ``"survey"``, ``"done"``, ``"results"``), also for the results
    page served at the root address (:func:`results_at_root`), whose ``url_path`` is then ``""``."""
    return RESULTS_QUERY[1] if not page.url_path and results_at_root() else page.url_path


def app_pages() -> list[st.Page]:
    """The app's pages, made once per browser session and kept in its session state (each page resolves and
    checks its file: a few system calls, on every whole-page run otherwise). Not shared between sessions: a
    Page object carries per-run state (``st.navigation`` arms the page it returns, ``run`` disarms it), so one
    object used by concurrent evaluators breaks (seen in bench_concurrency.py). The consent page is the default
    (the root address), unless the run asks for the results page there (:func:`results_at_root`)."""
    results_here = results_at_root()
    held = st.session_state.get("_pages")
    if held is not None and held[0] == results_here:
        return held[1]
    pages = [
        st.Page(PAGES["consent"], title="Welcome", default=not results_here),
        st.Page(PAGES["survey"], title="Survey", url_path="survey"),
        st.Page(PAGES["done"], title="Thank you", url_path="done"),
        st.Page(PAGES["results"], title="Results", url_path="results",  # linked from no evaluator screen
                default=results_here),
    ]
    st.session_state["_pages"] = (results_here, pages)
    return pages
