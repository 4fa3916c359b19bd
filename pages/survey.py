"""The survey: the current question of whichever task the session stands at, drawn by that task kind's
renderer (``pages/tasks/<kind>.py``, one ``render(ctx)`` each) inside a fragment: answering reruns only the
question; the page reruns when a task's block begins or ends (see ``ui.question``)."""

import ui

ctx = ui.enter("survey")
ui.instructions_gate(ctx)
ui.question(ctx)
