"""Renderer of kind ``triplet``: which of the texts comes from the target source (e.g. was written by a person).

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

import ui


def render(ctx: ui.Context) -> None:
    """Cards side by side and one choice per card."""
    ui.choice_question(ctx)
