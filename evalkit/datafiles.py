"""Reading a study's data files: :class:`DatasetError` (a file missing, malformed or breaking a convention; the
message names the file) and :func:`read_file_bytes`, which every loader of review, rating-item and items files uses.

Floor: core (``.importlinter``). Imports nothing from evalkit. (:mod:`evalkit.datasets` re-exports both names.)
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DatasetError", "read_file_bytes"]


class DatasetError(Exception):
    """A dataset file is missing, malformed or breaks a convention; the message names the file."""


def read_file_bytes(path: Path, what: str, error: type[Exception] = Exception) -> bytes:
    """The bytes of ``path``; ``error`` (e.g. :class:`DatasetError`) naming the file if it cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
