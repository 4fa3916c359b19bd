"""evalkit survey app: entry point.

Loads the study (cached per process) and shows it. The evaluator screens
(consent, triplets, pairwise, rating, completion) are added under ``pages/``.

Environment:
  EVALKIT_CONFIG    path of the study config (default: config.toml next to this file)
  EVALKIT_DATABASE  overrides [study] database (e.g. a per-test or per-deployment file)
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from evalkit.config import ConfigError, LoadedStudy, open_study
from evalkit.datasets import DatasetError

HERE = Path(__file__).parent


@st.cache_resource(show_spinner="Loading the study...")
def load(config: str, database: str | None) -> LoadedStudy:
    """The study, its review pools and rating items: parsed once per process."""
    return open_study(config, database=database)


def main() -> None:
    """Render the app."""
    st.set_page_config(page_title="evalkit survey", page_icon=":material/rate_review:", layout="centered")
    config = os.environ.get("EVALKIT_CONFIG", str(HERE / "config.toml"))
    try:
        loaded = load(config, os.environ.get("EVALKIT_DATABASE"))
    except (ConfigError, DatasetError) as exc:
        st.error("The study is not set up correctly, so the survey cannot start. "
                 "Please tell the research team; the problem is:")
        st.code(str(exc), language=None)
        return
    st.title(loaded.study.title)
    if loaded.study.description:
        st.write(loaded.study.description)


main()
