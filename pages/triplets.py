"""Task: which of three texts comes from the target source (e.g. was written by a real person)."""

import ui

ctx = ui.enter("triplet")
ui.instructions_gate(ctx)
ui.choice_question(ctx)
