"""Fixed assignments: each invited participant's own ordered list of items (``assignment = "fixed"`` on a task).

Pearmut's task-based campaigns give every user a predefined list of documents; evalkit reads such lists from a
CSV named by the task's ``assignments`` key, one row per item in the order the participant gets them::

    participant_id,item_id
    P01,doc-17
    P01,doc-3
    P02,doc-3

(``participant`` / ``user_id`` / ``pid`` and ``item`` / ``id`` are accepted as header names too; any other
column is ignored, blank lines are skipped.) Or from the items file itself: an item with ``"participants":
["P01", "P02"]`` is on those participants' lists, in file order. A participant id follows the invitation
rules (:func:`evalkit.text.id_problem`); an item may come once per list.

:func:`read_assignments` reads the CSV; :func:`lists_from_items` collects the items file's lists; whether the
items exist is checked against the loaded items file by the task kind (:mod:`evalkit.tasks.itemsource`).
Every problem raises :class:`AssignmentError` naming the file and the line.

Floor: core (``.importlinter``). May import :mod:`evalkit.datafiles` and :mod:`evalkit.text` only.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path

from .datafiles import DatasetError, csv_rows
from .text import id_problem

__all__ = ["ITEM_COLUMNS", "PARTICIPANT_COLUMNS", "AssignmentError", "describe", "lists_from_items", "read_assignments"]

#: header names of the participant column and of the item column (case-insensitive), first match wins
PARTICIPANT_COLUMNS = ("participant_id", "participant", "user_id", "pid")
ITEM_COLUMNS = ("item_id", "item", "id")


class AssignmentError(DatasetError):
    """A fixed-assignments CSV (or an item's ``participants``) is missing, malformed or names an id twice."""


def _column(path: Path, names: list[str], known: Iterable[str], what: str) -> int:
    for name in known:
        if name in names:
            return names.index(name)
    raise AssignmentError(f"{path}: no {what} column: name it {' or '.join(known)} (columns: {', '.join(names)})")


def read_assignments(path: Path) -> dict[str, tuple[str, ...]]:
    """Participant id -> the item ids of their list, in the CSV's row order (participants in first-seen order)."""
    header, reader = csv_rows(path, AssignmentError, "participant_id,item_id")
    names = [h.strip().lower() for h in header]
    who = _column(path, names, PARTICIPANT_COLUMNS, "participant")
    what = _column(path, names, ITEM_COLUMNS, "item")
    lists: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], int] = {}
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if max(who, what) >= len(row):
                raise AssignmentError(f"{path}, line {line}: the row has {len(row)} cells; it needs the "
                                      f"{header[who]!r} and {header[what]!r} columns")
            pid, item_id = row[who].strip(), row[what].strip()
            problem = id_problem(pid)
            if problem:
                raise AssignmentError(f"{path}, line {line}: {problem}")
            if not item_id:
                raise AssignmentError(f"{path}, line {line}: the item id is empty")
            if (pid, item_id) in seen:
                raise AssignmentError(f"{path}, line {line}: item {item_id!r} is on the list of {pid!r} twice (also "
                                      f"on line {seen[pid, item_id]})")
            seen[pid, item_id] = line
            lists.setdefault(pid, []).append(item_id)
    except csv.Error as exc:
        raise AssignmentError(f"{path}, line {reader.line_num}: not valid CSV: {exc}") from None
    if not lists:
        raise AssignmentError(f"{path}: no rows below the header (participant_id,item_id)")
    return {pid: tuple(ids) for pid, ids in lists.items()}


def lists_from_items(path: Path, assigned: Iterable[tuple[str, int, object]]) -> dict[str, tuple[str, ...]]:
    """Participant id -> item ids, from ``(item id, line, the item's "participants" value)`` in file order."""
    lists: dict[str, list[str]] = {}
    for item_id, line, value in assigned:
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise AssignmentError(f"{path}, line {line}: item {item_id!r}: 'participants' must be a list of "
                                  f"participant ids, got {value!r}"[:300])
        for pid in value:
            problem = id_problem(pid.strip()) or ("" if pid == pid.strip() else f"the participant id {pid!r} has "
                                                  "spaces around it")
            if problem:
                raise AssignmentError(f"{path}, line {line}: item {item_id!r}: 'participants': {problem}")
            if item_id in lists.get(pid, ()):
                raise AssignmentError(f"{path}, line {line}: item {item_id!r} names {pid!r} twice")
            lists.setdefault(pid, []).append(item_id)
    return {pid: tuple(ids) for pid, ids in lists.items()}


def describe(lists: Mapping[str, tuple[str, ...]]) -> str:
    """One line: how many participants, and the shortest and longest list."""
    sizes = sorted(len(v) for v in lists.values())
    if not sizes:
        return "no participant has a list"
    span = f"{sizes[0]}" if sizes[0] == sizes[-1] else f"{sizes[0]}-{sizes[-1]}"
    people = f"{len(sizes)} participant{'s' if len(sizes) != 1 else ''}"
    return f"{people} with {span} item{'s' if sizes[-1] != 1 else ''} each"
