"""One renderer per task kind: ``pages/tasks/<kind>.py`` with ``render(ctx: ui.Context) -> None``, which draws
the step ``ctx.step`` and saves answers from its buttons' callbacks through ``evalkit.tasks``."""
