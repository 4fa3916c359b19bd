"""Text helpers shared by the analysis and the exports: headings, control characters, CSV injection.

Pure Python (:func:`csv_safe` takes pandas, imported when it is called), no Streamlit.

Floor: core (``.importlinter``). Imports nothing from evalkit.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FORMULA_START",
    "ID_CHARS",
    "MAX_ID_LENGTH",
    "csv_safe",
    "id_problem",
    "is_code",
    "join_title",
    "lone_surrogate_at",
    "markdown_literal",
    "safe_cell",
    "strip_controls",
]

#: Sentence punctuation a title may end with: a suffix then starts a new sentence instead of ": ".
_SENTENCE_END = ("?", "!", ".", "…", "。", "؟")
#: Separators a title may already end with: kept once, never doubled.
_SEPARATOR_END = (":", ";", ",", "—", "–", "-", "·")

#: Control characters removed from exported text: C0 and C1 controls (NUL, ESC, ...) except tab, line feed
#: and carriage return, and the Unicode bidirectional controls (LRM/RLM, ALM, LRE..RLO, LRI..PDI) that
#: reorder how a cell or a terminal line reads (the "RTL override" trick).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: First characters that make a spreadsheet treat a cell as a formula (OWASP's CSV-injection list).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: A plain decimal number (e.g. a slider response "-40" stored as text): a spreadsheet reads it as a number.
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


#: What a participant id may hold: it travels in a URL and is typed or read by people.
ID_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-@+~")
MAX_ID_LENGTH = 64


def id_problem(pid: str) -> str | None:
    """What is wrong with a (stripped) participant id, or None: empty, longer than :data:`MAX_ID_LENGTH`,
    characters other than letters, digits and ``._-@+~``, or not starting with a letter or a digit."""
    if not pid:
        return "the participant id is empty"
    if len(pid) > MAX_ID_LENGTH:
        return f"the participant id {pid[:20]!r}... is longer than {MAX_ID_LENGTH} characters"
    bad = sorted(set(pid) - ID_CHARS)
    if bad:
        return f"the participant id {pid!r} has characters other than letters, digits and ._-@+~: {''.join(bad)!r}"
    if not pid[0].isalnum():
        return f"the participant id {pid!r} must start with a letter or a digit"
    return None


def is_code(value: str) -> bool:
    """Whether ``value`` can be a completion code: 1-64 letters, digits, ``_`` or ``-`` (typed by people, carried in
    URLs, checked by platforms)."""
    return bool(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value))


def join_title(title: str, suffix: str, sep: str = ": ") -> str:
    """``title`` and ``suffix`` joined by ``sep`` without doubling punctuation.

    ``"Which sounds more natural?"`` + ``"win rates"`` gives ``"Which sounds
    more natural? Win rates"`` (a title that ends a sentence starts a new one),
    ``"Results:"`` + ``"win rates"`` gives ``"Results: win rates"``, an empty
    title gives the suffix alone (capitalised), an empty suffix the title.
    """
    title, suffix = str(title).rstrip(), str(suffix).strip()
    if not suffix:
        return title
    if not title:
        return suffix[:1].upper() + suffix[1:]
    if title.endswith(_SENTENCE_END):
        return f"{title} {suffix[:1].upper()}{suffix[1:]}"
    if title.endswith(_SEPARATOR_END) and sep.strip() and title.endswith(sep.strip()):
        return f"{title} {suffix}"
    if title.endswith(_SEPARATOR_END):
        return f"{title.rstrip(''.join(_SEPARATOR_END)).rstrip()}{sep}{suffix}"
    return f"{title}{sep}{suffix}"


#: Characters Markdown (as Streamlit renders it) gives a meaning to: each is backslash-escaped by
#: :func:`markdown_literal`, so an untrusted text inside a Markdown message shows as typed (no link, image,
#: emphasis or HTML)
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:&=])")


def markdown_literal(text: str) -> str:
    """``text`` with every Markdown character escaped, for an untrusted text inside a Markdown message (Streamlit
    renders ``st.warning`` as Markdown): it shows as the characters typed, never as a link, an image or HTML."""
    return _MARKDOWN.sub(r"\\\1", re.sub(r"[\r\n]+", " ", text))


def strip_controls(text: str) -> str:
    """``text`` without control characters (NUL, ESC, DEL, C1) and bidirectional overrides.

    Tab, line feed and carriage return stay (a comment may have several lines).
    """
    return _CONTROLS.sub("", text)


def safe_cell(value: object) -> object:
    """One text cell made safe for a spreadsheet: control characters removed, and a leading ``'`` when it
    would start a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return). A plain number such as
    ``-40`` stays as it is (it is read as a number, not run). Non-text values pass through unchanged."""
    if not isinstance(value, str):
        return value
    text = strip_controls(value)
    if text.startswith(FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns pass :func:`safe_cell`; numeric and boolean columns untouched.

    Text columns are the object, string and categorical ones; numbers stay numbers (a negative score
    or count is never prefixed).
    """
    import numpy as np  # (here: the command line's `check` and `invite` use this module without pandas)
    import pandas as pd

    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if not (isinstance(values.dtype, pd.CategoricalDtype) or values.dtype == object
                or pd.api.types.is_string_dtype(values.dtype)):
            continue
        # each distinct value is checked once (a million rows hold few distinct tasks, sources or names)
        try:
            codes, uniques = pd.factorize(values)
        except TypeError:  # unhashable cells (e.g. an admin log entry's detail dict): cell by cell
            out[column] = values.map(safe_cell)
            continue
        cleaned = np.array([safe_cell(v) for v in uniques] + [None], dtype=object)
        out[column] = pd.Series(cleaned[codes], index=out.index, dtype=object)
    return out


def lone_surrogate_at(text: str) -> int | None:
    """Where ``text`` holds half of a surrogate pair (``"\\ud800"`` alone: valid JSON, not a character, which no
    page, database JSON or Arrow reader can carry), or None when it is real Unicode text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None
