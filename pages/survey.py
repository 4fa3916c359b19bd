"""The survey: the current question of whichever task the session stands at, drawn by that task kind's
renderer (``pages/tasks/<kind>.py``, one ``render(ctx)`` each) inside a fragment: answering reruns only the
question; the page reruns when a task's block begins or ends, or a break is due (see ``ui.question``,
``ui.pause_gate``).

Floor: the pages (``.importlinter``, the top): may import Streamlit, ``ui`` and evalkit's public names.
"""

import ui
from pages.tasks import renderer

ctx = ui.enter("survey")
ui.pause_gate(ctx)
ui.instructions_gate(ctx)
ui.question(ctx, renderer)
