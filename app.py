"""evalkit survey app: the entry point.

Sets up the page, then runs the screen the URL asks for. Every screen checks
the session (``?s=`` token) against the database and moves the evaluator to
the screen their progress belongs on, so the order of the flow is decided by
the data, not by navigation. The results page is not linked from any
evaluator screen.

Environment:
  EVALKIT_CONFIG    path of the study config (default: config.toml next to this file)
  EVALKIT_DATABASE  overrides [study] database (e.g. a per-test or per-deployment file)

Floor: the app's entry (``.importlinter``: pages over ui over evalkit). May import Streamlit and ``ui``.
"""

from __future__ import annotations

import streamlit as st

from ui import PAGE_ICON, app_pages, calm_errors, page_layout, page_path, page_title, send_messages_promptly

send_messages_promptly()  # a question's elements reach the browser without Streamlit's 5 ms pause
pages = app_pages()
page = st.navigation(pages, position="hidden")
# The icon is a local file: a ":material/...:" page icon makes every browser fetch it from fonts.gstatic.com.
# The layout is set once per run, before anything renders: consent and done are centred from the first
# paint, results wide; a question page picks its own (centred instructions, wide questions). The browser tab
# shows the study's title.
st.set_page_config(page_title=page_title(), page_icon=PAGE_ICON, layout=page_layout(page_path(page)))
with calm_errors(page_path(page) or "/"):  # never a traceback; an unreachable database shows its notice
    page.run()
