"""Reading a study's data files: :class:`DatasetError` (a file missing, malformed or breaking a convention; the
message names the file), :func:`read_file_bytes`, which every loader of review, rating-item and items files uses,
and :func:`read_text` / :func:`csv_rows`, which the text and CSV readers (invitations, fixed assignments, Pearmut's
campaigns and logs) start with.

Floor: core (``.importlinter``). Imports nothing from evalkit. (:mod:`evalkit.datasets` re-exports both names.)
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

__all__ = ["DatasetError", "csv_rows", "read_file_bytes", "read_text"]


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


def read_text(path: Path, error: type[Exception]) -> str:
    """The UTF-8 text of ``path`` (a BOM dropped); ``error`` naming the file when it is missing or not UTF-8."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error(f"{path}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot be read as UTF-8 text: {exc}") from None


def csv_rows(path: Path, error: type[Exception], example: str) -> tuple[list[str], Any]:
    """A CSV file with a header row: ``(header, the reader of its rows)`` (the reader's ``line_num`` says where a
    row is). ``error`` naming the file when it is missing, not UTF-8 text, empty (``example``: the header
    it needs, for the message) or its first line is not CSV; a BOM is dropped."""
    reader = csv.reader(io.StringIO(read_text(path, error)))
    try:
        header = next(reader)
    except StopIteration:
        raise error(f"{path}: the file is empty (it needs a header row, e.g. {example})") from None
    except csv.Error as exc:
        raise error(f"{path}, line 1: not valid CSV: {exc}") from None
    return header, reader
