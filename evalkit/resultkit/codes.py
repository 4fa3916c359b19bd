"""Integer codes of the answer tables' columns: the counting primitives every analysis uses.

A large study has millions of answers, so the analyses never loop over rows in Python and never group by strings:
a text column becomes integer codes (a categorical's own, or ``pd.factorize``'s) and results are counted with
``np.bincount``; JSON columns are decoded once per distinct value, or parsed by pyarrow in C++.

May import numpy, pandas and pyarrow; nothing from evalkit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["code_of", "column_codes", "float_column", "item_codes", "json_int", "json_values", "ndjson_buffer",
           "recode_column", "score_values", "slider_buttons", "take_codes"]


def column_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes (-1 = missing) of a text column and the values they stand for.

    A categorical column (as :func:`load_frames` returns) already has them; any
    other column is coded with ``pd.factorize`` (hash-based, linear).
    """
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy().astype(np.int64), column.cat.categories.to_numpy(dtype=object)
    codes, uniques = pd.factorize(column)
    return codes.astype(np.int64), np.asarray(uniques, dtype=object)



def take_codes(values: np.ndarray, codes: np.ndarray, missing: Any) -> np.ndarray:
    """``values[codes]`` with ``missing`` where the code is -1."""
    return np.append(values, np.array([missing], dtype=values.dtype))[codes]



def recode_column(column: pd.Series, values: pd.Index) -> np.ndarray:
    """Codes of a text column in the order of ``values`` (unique); -1 where missing or not in ``values``."""
    codes, names = column_codes(column)
    return take_codes(values.get_indexer(names).astype(np.int64), codes, -1)



def code_of(names: np.ndarray, value: str) -> int:
    """The code of ``value`` among ``names``; -2 (matches nothing, not even missing) when absent."""
    hits = np.flatnonzero(names == value)
    return int(hits[0]) if len(hits) else -2



def float_column(column: pd.Series) -> np.ndarray:
    """A column as float64, NaN where missing or not a number (categoricals converted per category)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, names = column_codes(column)
        numbers = pd.to_numeric(pd.Series(names, dtype=object), errors="coerce").to_numpy(dtype=float)
        return take_codes(numbers, codes, np.nan)
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)



def slider_buttons(rows: pd.DataFrame) -> pd.Series:
    """The slider button per answer (``accept`` / ``reject``), missing for a forced choice.

    From the ``button`` column :func:`load_frames` reads, or else from the ``detail`` JSON.
    """
    if "button" in rows.columns:
        return rows["button"]
    if "detail" in rows.columns:
        return rows["detail"].fillna("").astype(str).str.extract(r'"button":\s*"(\w+)"')[0]
    return pd.Series(None, index=rows.index, dtype=object)



def json_values(column: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """Integer codes of a JSON text column (-1 = missing) and each distinct value decoded: ``json.loads`` once
    per distinct value (a categorical's dictionary), never once per row."""
    codes, names = column_codes(column)
    return codes, [json.loads(v) if isinstance(v, str) and v else None for v in names]



def item_codes(rows: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the code of the item it showed (-1: none), and the item ids: the one id of ``item_ids``.

    The distinct values (one per item: 10,000 for 10,000 items) are read by a regular expression in Arrow
    (``["id"]``, the form the store writes); only a value of another form is decoded by ``json.loads``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    codes, names = column_codes(rows["item_ids"])
    texts = pa.array([v if isinstance(v, str) else None for v in names], type=pa.string())
    found = pc.struct_field(pc.extract_regex(texts, r'^\["(?P<id>[^"\\]*)"\]$'), [0]).to_pylist() \
        if len(texts) else []
    firsts: list[str | None] = []
    for text, hit in zip(names, found, strict=True):
        if hit is None and isinstance(text, str) and text:
            value = json.loads(text)
            hit = str(value[0]) if isinstance(value, list) and value else None
        firsts.append(hit)
    per_value, ids = pd.factorize(pd.Series(firsts, dtype=object))  # -1 where a value holds no id
    return take_codes(per_value.astype(np.int64), codes, -1), np.asarray(ids, dtype=object)



def json_int(rows: pd.DataFrame, key: str) -> np.ndarray:
    """A whole-number key of the ``detail`` JSON per row as float (NaN where absent): the column
    :func:`load_frames` read (``confidence``), or else parsed out of ``detail``."""
    if key in rows.columns:
        return pd.to_numeric(rows[key], errors="coerce").to_numpy(dtype=float)
    if "detail" in rows.columns:
        found = rows["detail"].fillna("").astype(str).str.extract(rf'"{key}":\s*(-?\d+)')[0]
        return pd.to_numeric(found, errors="coerce").to_numpy(dtype=float)
    return np.full(len(rows), np.nan)



def ndjson_buffer(column: pd.Series) -> Any:
    """The values of a text column as one buffer of newline-delimited JSON (a missing or empty value as ``{}``),
    joined by Arrow, with no Python string per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(column, type=pa.large_string(), from_pandas=True)
    empty = pa.scalar("{}", pa.large_string())
    text = pc.if_else(pc.or_kleene(pc.is_null(text), pc.equal(text, "")), empty, text)
    lines = pc.binary_join_element_wise(text, pa.scalar("", pa.large_string()), pa.scalar("\n", pa.large_string()))
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset: lines.offset + len(lines) + 1]
    return lines.buffers()[2][int(offsets[0]): int(offsets[-1])] if len(lines) else pa.py_buffer(b"")



def score_values(rows: pd.DataFrame, scales: Sequence[str]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per scale id: (row, position, value) of every score given, rows and positions as integers.

    A score answer's ``detail`` holds ``{"scores": {scale: [value per output, display order]}, ...}``: the
    ``score_detail`` column :func:`load_frames` reads, or ``detail``. All rows are parsed at once by
    pyarrow's JSON reader (C++, several threads) from one newline-delimited buffer, with an explicit schema
    (other keys ignored), not by ``json.loads`` per row.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    if not len(rows) or not scales:
        return dict.fromkeys(scales, empty)
    column = rows["score_detail"] if "score_detail" in rows.columns else rows["detail"]
    lists = pa.list_(pa.float64())
    schema = pa.schema([("scores", pa.struct([(scale, lists) for scale in scales]))])
    table = pj.read_json(pa.BufferReader(ndjson_buffer(column)), read_options=pj.ReadOptions(block_size=8 << 20),
                         parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
    if table.num_rows != len(rows):  # (a stored value with a raw newline: cannot happen with json.dumps)
        raise ValueError(f"score JSON: {table.num_rows} values parsed for {len(rows)} answers")
    struct = table.column("scores").combine_chunks()
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for scale in scales:
        arr = struct.field(scale)
        if not len(arr):
            out[scale] = empty
            continue
        arr = arr.cast(pa.large_list(pa.float64()))
        row = pc.list_parent_indices(arr).to_numpy().astype(np.int64)
        value = pc.list_flatten(arr).to_numpy(zero_copy_only=False).astype(float)
        offsets = arr.offsets.to_numpy().astype(np.int64)
        position = np.arange(len(row), dtype=np.int64) - (offsets[row] - offsets[0])
        given = ~np.isnan(value)
        out[scale] = (row[given], position[given], value[given])
    return out
