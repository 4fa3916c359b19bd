"""Streamlit helpers shared by app.py and the pages, one module per concern; this file re-exports their public
names, so that ``import ui`` then ``ui.enter(...)`` (or ``from ui import ...``) is all a page needs.

Only app.py, this package and pages/ import Streamlit. Everything that decides something (which question, what
is stored) lives in ``evalkit``; this package caches the study and the store per process, reads the session
token from the URL, routes a session to the screen it belongs on, and renders untrusted text safely:

* ``ui.navigation``: the pages, the app folder and its paths, each page's layout, the Streamlit runtime setting.
* ``ui.errors``: the notices that stand instead of a screen, calm errors, the messages of a save (flash).
* ``ui.resources``: the study, the store and the plans cached per process; the tab's title; the login limit.
* ``ui.session``: the session token, a session's step and plan, routing, the guard of every screen (``enter``).
* ``ui.survey_screen``: the break and instructions gates and the question fragment around a kind's renderer.
* ``ui.widgets``: the text cards (naming the systems when ``[study] blind = false``), an items question's input and
  instructions, the progress line, CSS keyed to a widget.
* ``ui.media``: an items question's images, audio clips and videos, and the play log of its clips.
* ``ui.marks``: the "what is missing" marks and the scroll to the first one.
* ``ui.answers``: the display clock, the forced-choice form and question, the HELP slider.

A test that replaces a name (``monkeypatch``) replaces it in the module that uses it (e.g.
``ui.answers.record_choice``, ``ui.resources.login_sleep``): a name re-exported here is a second reference.

May import: the ``ui`` modules above; never ``pages`` (nor may they).
"""

from __future__ import annotations

from .answers import align_choice_css, choice_form, choice_question, clock_key, elapsed_ms, help_slider, start_clock
from .errors import (
    abandoned_notice,
    calm_errors,
    ended_notice,
    feedback_plain,
    feedback_text,
    flash,
    practice_problems,
    safe_save,
    show_flash,
    take_flash,
    unavailable_notice,
    unknown_session_notice,
)
from .marks import (
    MARK_KEY,
    clear_mark_css,
    clear_mark_when_checked,
    mark_missing_scores,
    mark_spacer,
    missing_mark,
    missing_marks,
    refused_click,
    reveal_first_mark,
)
from .media import MediaShow, has_media, media_events, media_key
from .navigation import (
    APP_DIR,
    FLUSH_INTERVAL_SECONDS,
    PAGE_ICON,
    PAGES,
    RESULTS_QUERY,
    TOKEN_PARAM,
    app_pages,
    page_layout,
    page_path,
    results_at_root,
    send_messages_promptly,
)
from .resources import cached_plan, database_override, load, login_limiter, page_title, secret
from .session import Context, dismissed_pause, enter, go, screen, step_of, token
from .survey_screen import PRACTICE_NOTE, Renderers, instructions_gate, pause_gate, question
from .widgets import (
    SYSTEM_SEP,
    bracket_safe,
    cards_html,
    component_css,
    heading,
    hide_slider_ticks,
    instructions_markdown,
    item_card,
    item_instructions,
    item_question_header,
    key_class,
    media_columns,
    media_show,
    output_card,
    paper_graph,
    progress_header,
    question_item,
    review_cards,
    review_columns,
    shown_systems,
    stack_options_on_phone,
    text_card,
    topic_line,
    widgets_under_cards,
)

__all__ = [
    "APP_DIR",
    "FLUSH_INTERVAL_SECONDS",
    "MARK_KEY",
    "PAGES",
    "PAGE_ICON",
    "PRACTICE_NOTE",
    "RESULTS_QUERY",
    "SYSTEM_SEP",
    "TOKEN_PARAM",
    "Context",
    "MediaShow",
    "Renderers",
    "abandoned_notice",
    "align_choice_css",
    "app_pages",
    "bracket_safe",
    "cached_plan",
    "calm_errors",
    "cards_html",
    "choice_form",
    "choice_question",
    "clear_mark_css",
    "clear_mark_when_checked",
    "clock_key",
    "component_css",
    "database_override",
    "dismissed_pause",
    "elapsed_ms",
    "ended_notice",
    "enter",
    "feedback_plain",
    "feedback_text",
    "flash",
    "go",
    "has_media",
    "heading",
    "help_slider",
    "hide_slider_ticks",
    "instructions_gate",
    "instructions_markdown",
    "item_card",
    "item_instructions",
    "item_question_header",
    "key_class",
    "load",
    "login_limiter",
    "mark_missing_scores",
    "mark_spacer",
    "media_columns",
    "media_events",
    "media_key",
    "media_show",
    "missing_mark",
    "missing_marks",
    "output_card",
    "page_layout",
    "page_path",
    "page_title",
    "paper_graph",
    "pause_gate",
    "practice_problems",
    "progress_header",
    "question",
    "question_item",
    "refused_click",
    "results_at_root",
    "reveal_first_mark",
    "review_cards",
    "review_columns",
    "safe_save",
    "screen",
    "secret",
    "send_messages_promptly",
    "show_flash",
    "shown_systems",
    "stack_options_on_phone",
    "start_clock",
    "step_of",
    "take_flash",
    "text_card",
    "token",
    "topic_line",
    "unavailable_notice",
    "unknown_session_notice",
    "widgets_under_cards",
]
