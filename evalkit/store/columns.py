"""Columnar reads, the part both backends share: what a read asks for, and the SQL that asks it.

A read (:meth:`Store.read_tables`) names columns as :data:`ColumnSpec` tuples: a result name, a
:data:`Source` (a column, a key of a JSON column :class:`JsonField`, a :class:`Sampled` column, a column
:class:`ForKinds` of answers) and a kind. :func:`check_columns` keeps SQL out of them, :func:`cast_select`
turns them into a select list (the backend gives its JSON function and its types), and :func:`id_ranges`
splits a table into parts read in parallel.

May import: the standard library and sibling store modules (:mod:`.schema`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .schema import TABLES

COLUMN_KINDS = ("int", "real", "text", "category")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True)
class JsonField:
    """The value of ``key`` in a JSON text column (NULL where the row has no such key)."""

    column: str
    key: str


@dataclass(frozen=True)
class Sampled:
    """A column's value on about ``samples`` rows evenly spaced by ``id`` and on the newest row; NULL elsewhere.

    (The results page's timeline draws a few hundred points: reading every timestamp of a million answers
    would cost more than the rest of the analysis.)
    """

    column: str
    samples: int


@dataclass(frozen=True)
class ForKinds:
    """A column's value on the rows whose ``kind`` is one of ``kinds``; NULL elsewhere.

    (The item ids of a question drawn from the review pools are its reviews' keys, nearly one distinct value
    per answer: read as a dictionary-encoded column they would cost more than they tell. The analysis needs
    the item ids of the kinds that show items from an items file only.)
    """

    column: str
    kinds: tuple[str, ...]


#: Where a read column comes from: a column name, a key of a JSON column, a sampled column, or a column
#: restricted to some kinds of answers.
Source = str | JsonField | Sampled | ForKinds
#: One column of a columnar read: (name in the result, source, kind); kind is int, real, text or category
#: (text, dictionary-encoded).
ColumnSpec = tuple[str, Source, str]


def sampled_sql(source: Sampled, newest: int) -> str:
    """SQL (both backends) for a :class:`Sampled` column of a table whose largest ``id`` is ``newest``."""
    step = max(1, newest // max(1, source.samples))
    return f"CASE WHEN id % {step} = 0 OR id >= {newest} THEN {source.column} END"


def source_sql(source: Source, newest: int, json_sql: Callable[[str, str], str]) -> str:
    """SQL for a column's source: a column name as it is, a :class:`Sampled` column by :func:`sampled_sql`,
    a :class:`JsonField` by the backend's ``json_sql(column, key)``."""
    if isinstance(source, JsonField):
        return json_sql(source.column, source.key)
    if isinstance(source, Sampled):
        return sampled_sql(source, newest)
    if isinstance(source, ForKinds):
        kinds = ", ".join(f"'{k}'" for k in source.kinds)
        return f"CASE WHEN kind IN ({kinds}) THEN {source.column} END"
    return source


def check_columns(table: str, columns: Sequence[ColumnSpec]) -> None:
    """ValueError unless ``table`` is a store table and every column spec is well formed (no SQL gets in)."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    for name, source, kind in columns:
        names = [name, source] if isinstance(source, str) else [name, source.column]
        if isinstance(source, JsonField):
            names.append(source.key)
        if isinstance(source, ForKinds):
            names += list(source.kinds) if isinstance(source.kinds, tuple) and source.kinds else [""]
        if kind not in COLUMN_KINDS or not all(isinstance(n, str) and _NAME.match(n) for n in names):
            raise ValueError(f"bad column spec {name!r} ({source!r}, {kind!r})")



def cast_select(columns: Sequence[ColumnSpec], newest: int, json_sql: Callable[[str, str], str],
                types: Mapping[str, str]) -> str:
    """The select list of a columnar read: each column's source (:func:`source_sql`) cast to the backend's SQL
    type of its kind (``types``: kind -> SQL type), named by its result name."""
    return ", ".join(f"CAST({source_sql(source, newest, json_sql)} AS {types[kind]}) AS {name}"
                     for name, source, kind in columns)


def id_ranges(low: int, high: int, threads: int, min_rows: int) -> list[tuple[int, int]]:
    """Ids ``low < id <= high`` split into at most ``threads`` ranges of at least ``min_rows`` rows each (one
    range when the table is small), as ``(after, up_to)`` pairs in order."""
    parts = max(1, min(threads, (high - low) // max(1, min_rows)))
    edges = [low + (high - low) * k // parts for k in range(parts + 1)]
    return list(itertools.pairwise(edges))
