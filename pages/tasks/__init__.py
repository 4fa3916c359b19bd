"""One renderer per task kind: ``pages/tasks/<kind>.py`` with ``render(ctx: ui.Context) -> None``, which draws
the step ``ctx.step`` and saves answers from its buttons' callbacks through ``evalkit.tasks``.

Floor: the pages (``.importlinter``, the top): may import ``ui`` and evalkit; the package's own modules are imported
by name here only (:func:`renderer`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def renderer(kind: str) -> Callable[[Any], None]:
    """The ``render(ctx)`` of a task kind: this package's module of that name (imported when first drawn)."""
    return importlib.import_module(f"{__name__}.{kind}").render
