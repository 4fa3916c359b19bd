"""The survey: the current question of whichever task the session stands at, drawn by that task kind's
renderer (``pages/tasks/<kind>.py``, one ``render(ctx)`` each)."""

import ui

ctx = ui.enter("survey")
ui.instructions_gate(ctx)
ui.renderer(ctx.step.kind)(ctx)
