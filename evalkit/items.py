"""Items files (JSONL): an input and several systems' outputs per line, for compare / score / rank / realfake tasks.

Format
------
One JSON object per line; blank lines are skipped::

    {"id": "r17", "input": "the text the outputs respond to", "title": "optional heading",
     "outputs": {"gpt4": "...", "t5": "...", "human": "..."}, "reference": "optional reference output",
     "metrics": {"gpt4": {"bleu": 21.3}}, "meta": {"anything": "kept, not shown"},
     "check": {"expect": "...", "feedback": "..."}}

* ``id`` (a string, or an integer read as its decimal string) and ``outputs`` (a non-empty object
  mapping system names to non-blank texts) are required; every other key is optional, and ``null``
  means absent.
* Pearmut's item keys load as they are: ``src`` = ``input``, ``tgt`` = ``outputs``, ``ref`` =
  ``reference``, ``item_id`` = ``id``. Giving a key under both names is an error, as is any other key
  (extra data goes under ``meta``).
* Texts are untrusted and kept exactly as given (no stripping); a blank ``title`` or ``reference`` is
  read as absent.
* ``metrics`` maps systems to ``{name: finite number}``; ``check`` (for attention checks) is kept as an
  opaque object. A metric may name a system the item has no output for if the system has outputs in other
  items of the file (``evalkit check`` then warns when a task lists it: the item lacks that output); a system
  with no output anywhere in the file is an error (a misspelt name).
* ``error_spans`` (suggested error spans, for the ``spans`` kind's ESA-AI) maps systems to lists of spans in
  Pearmut's shape, ``{"start_i": 0, "end_i": 5, "severity": "minor", "category": null}``: ``end_i`` inclusive,
  both Pearmut's character indexes (UTF-16 units as its JavaScript counts, an emoji two, line breaks none); loaded
  as code-point
  :class:`~evalkit.spans.Span` objects. A span outside its output, or overlapping another, is an error.
* ``segments`` makes the item a **document**: a list of ``{"input", "outputs", "reference", "error_spans"}``
  objects (``input`` / ``reference`` optional; every segment has the same systems), annotated segment by
  segment. The item's ``input`` and ``outputs`` are then its segments' joined by a blank line (what the other
  kinds show); give them on the item too and it is an error. A line that is a JSON **array** of item objects
  (Pearmut's document) loads as one document: its id is the first object's, each object a segment.
* ``instructions`` (Pearmut's per-item instructions, e.g. ``"<b>Attention check:</b> A is best"``): untrusted HTML
  shown above the item, never as HTML (the app converts it with :func:`evalkit.markup.html_to_markdown`). A segment
  may have its own; an array document's are its first object's. What is shown: :meth:`Item.instruction_blocks`.
* ``participants`` (a list of invited participants' ids) puts the item on those participants' fixed lists, in
  file order, for a task with ``assignment = "fixed"`` and no ``assignments`` CSV (:mod:`evalkit.assignments`).
* **Media**: the ``input`` or an output may be an image, audio clip or video instead of a text, in the object form
  of :mod:`evalkit.media` (``{"type": "image", "path": "media/x.png", "alt": "..."}``). The item then keeps a
  text there all the same, the value's path or URL (:meth:`~evalkit.media.Media.placeholder`: what exports and
  the analysis show), and the value itself in :attr:`Item.input_media` / :attr:`Item.output_media`. A media
  output takes no ``error_spans``; a document's segments and the ``reference`` are texts only. Whether a path is
  in the study's media folder, and whether remote files are allowed, is the study's check (:mod:`evalkit.config`).

Every problem raises :class:`ItemError` (a :class:`~evalkit.datasets.DatasetError`) naming the file, the
line and the key. Loading is one pass of ``json.loads`` per line plus cheap type checks: the indexes
planning needs (:attr:`ItemSet.by_system`, :meth:`ItemSet.with_all`) are built on first use.

Floor: core (``.importlinter``). May import :mod:`evalkit.datafiles`, :mod:`evalkit.media`, :mod:`evalkit.spans` and
:mod:`evalkit.text` only.
"""

from __future__ import annotations

import difflib
import gc
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .datafiles import DatasetError
from .media import Media, MediaError
from .media import parse as parse_media
from .spans import Span, SpanError, check_spans, from_pearmut
from .text import lone_surrogate_at

__all__ = ["PEARMUT_ALIASES", "SEGMENT_JOIN", "Item", "ItemError", "ItemSet", "Segment", "is_pearmut_campaign",
           "load_items"]

#: Pearmut's item keys and the evalkit key each one stands for.
PEARMUT_ALIASES: Mapping[str, str] = {"item_id": "id", "src": "input", "tgt": "outputs", "ref": "reference"}

_KEYS = frozenset(("id", "input", "title", "outputs", "reference", "metrics", "meta", "check", "error_spans",
                   "segments", "participants", "instructions"))
_SEGMENT_KEYS = frozenset(("id", "input", "outputs", "reference", "error_spans", "instructions"))
#: what a document's segments are joined with to make the item's ``input`` and ``outputs``
SEGMENT_JOIN = "\n\n"
_ALL_NAMES = sorted(_KEYS | set(PEARMUT_ALIASES))
_EMPTY: Mapping[str, Any] = MappingProxyType({})  # (immutable: the default of dataclass fields)


class ItemError(DatasetError):
    """An items file is missing, malformed or breaks the format; the message names the file, line and key."""


@dataclass(frozen=True, slots=True)
class Item:
    """One item: an input and the outputs of several systems (in file order).

    The mappings are the parsed JSON objects themselves (no copies): treat them as read-only.
    """

    id: str
    input: str
    title: str | None
    outputs: Mapping[str, str]
    reference: str | None
    metrics: Mapping[str, Mapping[str, float]]
    meta: Mapping[str, Any]
    check: Mapping[str, Any] | None
    line: int
    #: suggested error spans per system (code points; the ``spans`` kind's ESA-AI), empty when none
    error_spans: Mapping[str, tuple[Span, ...]] = field(default_factory=lambda: _EMPTY)  # (one shared empty map)
    #: a document's segments (empty: the item is one segment)
    segments: tuple[Segment, ...] = ()
    #: the invited participants whose fixed list holds this item (``assignment = "fixed"``), in the order given
    participants: tuple[str, ...] = ()
    #: untrusted HTML shown above the item (Pearmut's ``instructions``; never shown as HTML), None when none
    instructions: str | None = None
    #: the input as a media value (then :attr:`input` is its path or URL), None when the input is a text
    input_media: Media | None = None
    #: the outputs that are media values, by system (their :attr:`outputs` are their paths or URLs)
    output_media: Mapping[str, Media] = field(default_factory=lambda: _EMPTY)

    def media_for(self, systems: Sequence[str]) -> tuple[Media | None, ...]:
        """The media value of each of ``systems``' outputs (None: a text), in that order; () when none is media
        (what :attr:`evalkit.question.Question.media` holds)."""
        if not self.output_media:
            return ()
        return tuple(self.output_media.get(system) for system in systems)

    def media(self) -> Iterator[tuple[str, Media]]:
        """Every media value of the item as ``(where, value)``, ``where`` as an error message names it: ``"'input'"``,
        then ``"'outputs': system 'x'"`` per system with a media output, in file order."""
        if self.input_media is not None:
            yield "'input'", self.input_media
        for system, value in self.output_media.items():
            yield f"'outputs': system {system!r}", value

    def instruction_blocks(self) -> tuple[tuple[int | None, str], ...]:
        """The instructions shown above the item, in order, each ``(segment number or None, text)``.

        The item's own instructions (``None``: the whole item). When its segments have instructions of their own
        that differ from it (a tutorial document: one step per segment), each segment's follow, numbered from 1,
        a text repeating the one shown before it left out (and the item's own left out when they are the first
        segment's, as in an array document). Segments that only repeat the item's, or have none, add nothing:
        a document's one instruction is shown once."""
        own = self.instructions
        texts = [s.instructions for s in self.segments]
        if all(t is None or t == own for t in texts):
            return () if own is None else ((None, own),)
        out: list[tuple[int | None, str]] = []
        if own is not None and own != texts[0]:
            out.append((None, own))
        previous = None
        for k, text in enumerate(texts, start=1):
            if text is not None and text != previous:
                out.append((k, text))
                previous = text
        return tuple(out)


@dataclass(frozen=True, slots=True)
class Segment:
    """One segment of a document item: its input, the systems' outputs, reference and suggested spans."""

    input: str
    outputs: Mapping[str, str]
    reference: str | None = None
    error_spans: Mapping[str, tuple[Span, ...]] = field(default_factory=lambda: _EMPTY)  # (one shared empty map)
    #: this segment's own instructions (untrusted HTML, see :meth:`Item.instruction_blocks`), None when none
    instructions: str | None = None


class ItemSet(Sequence[Item]):
    """The items of one file in file order, with an index by id and the system names in first-seen order.

    Made by :func:`load_items`. ``by_system`` and ``with_all`` are computed on first use and cached (two
    threads asking at once may both compute them; the results are equal). Treat it as read-only.
    """

    __slots__ = ("_by_system", "_candidates", "_system_set", "_with_all", "derived", "index", "items", "path",
                 "systems")

    def __init__(self, path: Path, items: Sequence[Item], index: Mapping[str, int], systems: Sequence[str]) -> None:
        self.path = path
        self.items: tuple[Item, ...] = tuple(items)
        #: item id -> position in :attr:`items`
        self.index: Mapping[str, int] = index
        #: every system name that has an output in the file, in first-seen order
        self.systems: tuple[str, ...] = tuple(systems)
        self._system_set = frozenset(self.systems)
        self._by_system: Mapping[str, tuple[int, ...]] | None = None
        self._with_all: dict[frozenset[str], tuple[int, ...]] = {}
        self._candidates: dict[frozenset[str], tuple[int, ...]] = {}
        #: what other modules compute once from the items and keep with them (e.g. the fixed lists), by name
        self.derived: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, position: Any) -> Any:
        return self.items[position]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __repr__(self) -> str:
        return f"ItemSet({str(self.path)!r}, {len(self.items)} items, systems={list(self.systems)!r})"

    def by_id(self, item_id: str) -> Item:
        """The item with this id; :class:`KeyError` naming the file if there is none."""
        position = self.index.get(item_id)
        if position is None:
            raise KeyError(f"{self.path}: no item with id {item_id!r}")
        return self.items[position]

    @property
    def by_system(self) -> Mapping[str, tuple[int, ...]]:
        """System name -> positions (ascending) of the items that have an output for it, in :attr:`systems` order."""
        if self._by_system is None:
            lists: dict[str, list[int]] = {name: [] for name in self.systems}
            for position, item in enumerate(self.items):
                for name in item.outputs:
                    lists[name].append(position)
            self._by_system = {name: tuple(positions) for name, positions in lists.items()}
        return self._by_system

    def with_all(self, systems: Iterable[str]) -> tuple[int, ...]:
        """Positions (ascending) of the items that have an output for every one of ``systems``.

        A name not in the file matches no item (use :meth:`check_systems` to report it); no names match
        every item. Cached per set of names.
        """
        if isinstance(systems, str):
            raise TypeError("with_all takes a collection of system names, not one string")
        key = frozenset(systems)
        found = self._with_all.get(key)
        if found is None:
            found = self._compute_with_all(key)
            self._with_all[key] = found
        return found

    def candidates(self, systems: Iterable[str]) -> tuple[int, ...]:
        """:meth:`with_all` without the attention-check items (those with a ``check``): what a plan draws from.

        Cached per set of names, like :meth:`with_all`.
        """
        key = frozenset(systems)
        found = self._candidates.get(key)
        if found is None:
            items = self.items
            found = tuple(p for p in self.with_all(key) if items[p].check is None)
            self._candidates[key] = found
        return found

    def regular_systems(self) -> tuple[str, ...]:
        """The systems with an output in at least one item that is not an attention check, in file order."""
        return tuple(name for name in self.systems if self.candidates((name,)))

    def _compute_with_all(self, names: frozenset[str]) -> tuple[int, ...]:
        by_system, n = self.by_system, len(self.items)
        partial: list[tuple[int, ...]] = []
        for name in names:
            positions = by_system.get(name)
            if positions is None:
                return ()
            if len(positions) < n:  # a system every item has filters nothing
                partial.append(positions)
        if not partial:
            return tuple(range(n))
        partial.sort(key=len)
        common = set(partial[0])
        for positions in partial[1:]:
            common.intersection_update(positions)
        return tuple(p for p in partial[0] if p in common)

    def check_systems(self, systems: Iterable[str], where: str, error: type[Exception] = ItemError) -> None:
        """Raise ``error`` (prefixed by ``where``, e.g. the config key) for the first name not in the file."""
        for name in systems:
            if name not in self._system_set:
                near = difflib.get_close_matches(name, self.systems, n=1)
                hint = f" (did you mean '{near[0]}'?)" if near else ""
                raise error(f"{where}: system {name!r} has no outputs in {self.path}{hint}; the file's systems: "
                            f"{', '.join(self.systems)}")


def load_items(path: str | Path) -> ItemSet:
    """Load an items file (JSONL, see the module docstring) in one pass.

    Raises :class:`ItemError` naming the file, the line and the key for: a missing or unreadable file,
    bytes that are not UTF-8 (a leading BOM is fine), a line that is not JSON or not an object, a
    missing ``id`` / ``outputs``, a value of the wrong type, a blank output, a repeated id (naming both
    lines), a metric that is not a finite number or names a system with no output in the whole file, a
    Pearmut key given with its evalkit twin, an unknown key, and a file without items. The garbage collector
    is paused while the file is read (and resumed after, if it was on).
    """
    path = Path(path)
    items: list[Item] = []
    index: dict[str, int] = {}
    systems: dict[str, None] = {}
    # The loader makes only acyclic JSON values, yet with the collector on CPython walks the growing heap
    # again and again while they pile up (about 40 % of a bare json.loads of 100k lines): pause it meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    try:
        _read(path, items, index, systems)
    except FileNotFoundError:
        raise ItemError(f"{path}: items file not found") from None
    except UnicodeDecodeError:
        raise _not_utf8(path) from None
    except OSError as exc:
        raise ItemError(f"{path}: cannot read items file ({exc.strerror or exc})") from None
    finally:
        if collecting:
            gc.enable()
    if not items:
        raise ItemError(f"{path}: no items (the file is empty or has only blank lines)")
    return ItemSet(path, items, index, tuple(systems))


def _read(path: Path, items: list[Item], index: dict[str, int], systems: dict[str, None]) -> None:
    """The loop of :func:`load_items`: append each line's item, index it by id, note new system names."""
    loads = json.loads
    # json.loads(line) is decode() -> raw_decode() -> the C scanner, with two regular expressions for the white
    # space around the value: a line that is one object and its newline goes to the scanner directly (a third
    # less time per line); anything else (white space, an error) takes json.loads, for its exact message.
    scan = json.JSONDecoder().scan_once
    names: dict[str, str] = {}  # one string object per system and metric name, shared by every item's mappings
    pending: list[tuple[int, str]] = []  # (line, system) of each metric of a system the item has no output for
    with open(path, encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                obj, end = scan(line, 0)
                if end != len(line) - 1 or line[end] != "\n":
                    raise StopIteration(end)
            except (StopIteration, json.JSONDecodeError):
                try:
                    obj = loads(line)
                except json.JSONDecodeError as exc:
                    if line.isspace():
                        continue
                    error = f"{path}, line {lineno}: not valid JSON: {exc.msg} (column {exc.colno})"
                    raise (_whole_file_error(path, error) if not items else ItemError(error)) from None
            if "\\ud" in line or "\\uD" in line:  # (only an escape can make a lone surrogate: UTF-8 cannot)
                _no_lone_surrogates(obj, path, lineno)
            item = _parse(obj, path, lineno, systems, pending, names)
            previous = index.get(item.id)
            if previous is not None:
                raise ItemError(f"{path}, line {lineno}: key 'id': {item.id!r} is also the id of the item on line "
                                f"{items[previous].line}")
            index[item.id] = len(items)
            items.append(item)
    for lineno, system in pending:  # known only now: whether another item has an output of it
        if system not in systems:
            near = difflib.get_close_matches(system, list(systems), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ItemError(f"{path}, line {lineno}: key 'metrics': system {system!r} has no output in this item "
                            f"nor in any other item of the file{hint}")


#: An items file whose first line is not JSON is read whole as JSON (for :func:`_whole_file_error`) up to this size
_WHOLE_FILE_LIMIT = 256 * 1024 * 1024


def _pearmut_campaign_error(path: Path) -> ItemError:
    """The error for a Pearmut campaign file (one JSON object with ``campaign_id`` / ``info`` / ``data``) given as an
    items file: it names the command that turns it into a study."""
    return ItemError(f"{path}: this is a Pearmut campaign file, not an items file: turn it into a study with "
                     f"`python -m evalkit import pearmut {path}`")


def is_pearmut_campaign(value: Any) -> bool:
    """Whether a JSON value looks like a Pearmut campaign: an object with ``data`` and ``campaign_id`` or ``info``."""
    return type(value) is dict and "data" in value and ("campaign_id" in value or "info" in value)


def _whole_file_error(path: Path, error: str) -> ItemError:
    """The error for an items file whose first line is not JSON (``error``, naming the line), with a hint when the
    whole file is one JSON value: a Pearmut campaign (:func:`_pearmut_campaign_error`), or an object or array
    written over several lines where an items file holds one JSON object per line. Read again, error path only."""
    try:
        if path.stat().st_size > _WHOLE_FILE_LIMIT:
            return ItemError(error)
        whole = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return ItemError(error)
    if is_pearmut_campaign(whole):
        return _pearmut_campaign_error(path)
    if type(whole) in (dict, list):
        what = "one JSON object" if type(whole) is dict else "one JSON array"
        return ItemError(f"{error}; the whole file is {what} written over several lines, but an items file holds "
                         "one JSON object per line (JSON Lines: one item per line, see the items file format)")
    return ItemError(error)


def _no_lone_surrogates(value: Any, path: Path, lineno: int, key: str = "") -> None:
    """ItemError for a text holding half of a surrogate pair (``"\\ud800"`` alone: valid JSON, not a character;
    a browser page or the database cannot carry it). A pair (an emoji written as two escapes) is one character
    and fine."""
    if isinstance(value, str):
        at = lone_surrogate_at(value)
        if at is not None:
            where = f"key {key!r}: " if key else ""
            raise ItemError(f"{path}, line {lineno}: {where}{value[at]!r} at character {at} is half of a surrogate "
                            "pair, not a character (an escape like \\ud800 without its partner); fix the text")
    elif isinstance(value, dict):
        for name, inner in value.items():
            _no_lone_surrogates(name, path, lineno, key)
            _no_lone_surrogates(inner, path, lineno, key or name)
    elif isinstance(value, list):
        for inner in value:
            _no_lone_surrogates(inner, path, lineno, key)


def _not_utf8(path: Path) -> ItemError:
    """The error for a file that is not UTF-8, naming the line of the first bad byte (read again, error path only)."""
    raw = path.read_bytes()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return ItemError(f"{path}, line {line}: not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                         "save the file as UTF-8")
    return ItemError(f"{path}: not valid UTF-8; save the file as UTF-8")


def _type(value: Any) -> str:
    """A JSON value's type in the file's terms."""
    if value is None:
        return "null"
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array",
            dict: "an object"}.get(type(value), type(value).__name__)


def _canonical(obj: dict[str, Any], path: Path, lineno: int) -> tuple[dict[str, Any], dict[str, str]]:
    """``obj`` with Pearmut's keys renamed, and evalkit key -> key as written; errors for unknown or twin keys."""
    out: dict[str, Any] = {}
    written: dict[str, str] = {}
    for key, value in obj.items():
        name = PEARMUT_ALIASES.get(key, key)
        if name not in _KEYS:
            if is_pearmut_campaign(obj):  # a whole campaign written on one line
                raise _pearmut_campaign_error(path)
            near = difflib.get_close_matches(key, _ALL_NAMES, n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            raise ItemError(f"{path}, line {lineno}: key {key!r} is not a known key{hint}; known keys: "
                            f"{', '.join(sorted(_KEYS))} (or Pearmut's {', '.join(PEARMUT_ALIASES)}); "
                            "put extra data under 'meta'")
        if name in out:
            pearmut = key if key != name else written[name]
            raise ItemError(f"{path}, line {lineno}: keys {written[name]!r} and {key!r} both give the item's {name} "
                            f"({pearmut!r} is Pearmut's name for {name!r}); keep one of them")
        out[name] = value
        written[name] = key
    return out, written


def _parse(obj: Any, path: Path, lineno: int, systems: dict[str, None],
           pending: list[tuple[int, str]], names: dict[str, str]) -> Item:
    """One line's object -> :class:`Item`; new system names are added to ``systems``, metrics of systems the item
    has no output for to ``pending`` (checked against the whole file's systems at its end). Cheap type checks
    only. The item's ``outputs`` and ``metrics`` are made anew with their names taken from ``names`` (one string
    per name for the whole file: a million items otherwise hold millions of copies of "gpt4", about 50 bytes
    each)."""
    if type(obj) is list:  # Pearmut's document: a list of items, each a segment
        obj = _pearmut_document(obj, path, lineno)
    if type(obj) is not dict:
        raise ItemError(f"{path}, line {lineno}: expected a JSON object, got {_type(obj)}")
    written: Mapping[str, str] = _EMPTY
    if not _KEYS.issuperset(obj):
        obj, written = _canonical(obj, path, lineno)

    def fail(key: str, message: str) -> ItemError:
        return ItemError(f"{path}, line {lineno}: key {written.get(key, key)!r}: {message}")

    segments: tuple[Segment, ...] = ()
    if obj.get("segments") is not None:
        for key in ("input", "outputs", "reference", "error_spans"):
            if obj.get(key) is not None:
                raise fail(key, "a document (an item with 'segments') takes it from its segments; give it there")
        segments = _segments(obj["segments"], fail)
        obj = {**obj, "input": SEGMENT_JOIN.join(s.input for s in segments),
               "outputs": {name: SEGMENT_JOIN.join(s.outputs[name] for s in segments) for name in segments[0].outputs}}

    item_id = obj.get("id")
    if type(item_id) is not str:
        if type(item_id) is int:
            item_id = str(item_id)
        elif item_id is None:
            raise ItemError(f"{path}, line {lineno}: missing key 'id' (or Pearmut's 'item_id')")
        else:
            raise fail("id", f"must be a string or an integer, got {_type(item_id)}")
    if not item_id or item_id.isspace():
        raise fail("id", "must not be blank")

    outputs = obj.get("outputs")
    if type(outputs) is not dict or not outputs:
        if outputs is None:
            raise ItemError(f"{path}, line {lineno}: missing key 'outputs' (or Pearmut's 'tgt')")
        what = "an empty object" if outputs == {} else _type(outputs)
        raise fail("outputs", f"must be a non-empty object mapping system names to output texts, got {what}")
    shared: dict[str, str] = {}
    output_media: dict[str, Media] = {}
    for name, text in outputs.items():
        if type(text) is dict and not segments:  # a media value (the object form): its path or URL stands as text
            value = _media(text, fail, "outputs", f"system {name!r}: ")
            output_media[names.setdefault(name, name)] = value
            text = value.placeholder()
        if type(text) is not str or not text or text.isspace():
            got = f"got {_type(text)}" if type(text) is not str else "got a blank text"
            raise fail("outputs", f"system {name!r}: the output must be a non-blank string, {got}")
        if name not in systems:
            if not name or name.isspace():
                raise fail("outputs", "a system name is blank")
            systems[name] = None
        shared[names.setdefault(name, name)] = text
    outputs = shared

    text = obj.get("input")
    input_media = None
    if text is None:
        text = ""
    elif type(text) is dict:
        input_media = _media(text, fail, "input")
        text = input_media.placeholder()
    elif type(text) is not str:
        raise fail("input", f"must be a string, got {_type(text)}")
    title = _optional_text(obj, "title", fail)
    reference = _optional_text(obj, "reference", fail)
    metrics = obj.get("metrics")
    metrics = _EMPTY if metrics is None else _check_metrics(metrics, outputs, fail, names, pending, lineno)
    meta = obj.get("meta")
    if meta is None:
        meta = _EMPTY
    elif type(meta) is not dict:
        raise fail("meta", f"must be an object, got {_type(meta)}")
    check = obj.get("check")
    if check is not None and type(check) is not dict:
        raise fail("check", f"must be an object, got {_type(check)}")
    spans = obj.get("error_spans")
    spans = _EMPTY if spans is None else _error_spans(spans, outputs, fail)
    marked = [system for system in spans if system in output_media]
    if marked:
        raise fail("error_spans", f"system {marked[0]!r}: its output is a media value, which cannot be marked")
    assigned = obj.get("participants")
    if assigned is not None and (type(assigned) is not list or not all(type(v) is str for v in assigned)):
        raise fail("participants", f"must be a list of participant ids, got {_type(assigned)}")
    return Item(item_id, text, title, outputs, reference, metrics, meta, check, lineno, spans, segments,
                tuple(assigned or ()), instructions=_optional_text(obj, "instructions", fail),
                input_media=input_media, output_media=output_media or _EMPTY)


def _media(value: dict[str, Any], fail: Any, key: str, what: str = "") -> Media:
    """A media value in the object form (:func:`evalkit.media.parse`); ``fail(key, message)`` makes the error."""
    try:
        return parse_media(value)
    except MediaError as exc:
        raise fail(key, f"{what}{exc}") from None


def _error_spans(value: Any, outputs: Mapping[str, str], fail: Any) -> dict[str, tuple[Span, ...]]:
    """``error_spans`` as code-point spans per system, each checked against its output (inside it or on the
    [missing] token after it, no two overlapping); ``fail(key, message)`` makes the error."""
    if type(value) is not dict:
        raise fail("error_spans", f"must be an object mapping system names to lists of spans, got {_type(value)}")
    out: dict[str, tuple[Span, ...]] = {}
    for system, spans in value.items():
        if system not in outputs:
            raise fail("error_spans", f"system {system!r} has no output in this item ({', '.join(outputs)})")
        if type(spans) is not list:
            raise fail("error_spans", f"system {system!r}: must be a list of spans, got {_type(spans)}")
        text = outputs[system]
        try:
            converted = []
            for span in spans:
                if type(span) is not dict:
                    raise SpanError(f"a span must be an object, got {_type(span)}")
                converted.append(from_pearmut(span, text))
            # (bounds and overlaps here; severities and categories against the task that shows them: evalkit check)
            checked = check_spans(text, [Span(s.start, s.end, s.severity) for s in converted],
                                  severities=[s.severity for s in converted], missing_token=True)
        except SpanError as exc:
            raise fail("error_spans", f"system {system!r}: {exc}") from None
        by_place = {(s.start, s.end): s for s in converted}
        out[system] = tuple(by_place[(s.start, s.end)] for s in checked)
    return out


def _segments(value: Any, fail: Any) -> tuple[Segment, ...]:
    """A document's ``segments``: each with non-blank outputs of the same systems, optional input, reference and
    suggested spans."""
    if type(value) is not list or not value:
        raise fail("segments", f"must be a non-empty list of segment objects, got {_type(value)}")
    out: list[Segment] = []
    for k, seg in enumerate(value, start=1):
        def at(key: str, message: str, k: int = k) -> ItemError:
            return fail("segments", f"segment {k}: {key!r}: {message}")

        if type(seg) is not dict:
            raise fail("segments", f"segment {k} must be an object, got {_type(seg)}")
        seg = {PEARMUT_ALIASES.get(key, key): v for key, v in seg.items()}
        extra = sorted(set(seg) - _SEGMENT_KEYS)
        if extra:
            raise at(extra[0], f"is not a key of a segment ({', '.join(sorted(_SEGMENT_KEYS))})")
        outputs = seg.get("outputs")
        if type(outputs) is not dict or not outputs:
            raise at("outputs", "must be a non-empty object mapping system names to output texts")
        for name, text in outputs.items():
            if type(text) is dict:
                raise at("outputs", f"system {name!r}: a document's segments are texts; an image, audio clip or "
                                    "video goes in an item of its own (without 'segments')")
            if type(text) is not str or not text or text.isspace():
                raise at("outputs", f"system {name!r}: the output must be a non-blank string")
        if out and list(outputs) != list(out[0].outputs) and set(outputs) != set(out[0].outputs):
            raise at("outputs", f"has systems {', '.join(outputs)}; segment 1 has {', '.join(out[0].outputs)} "
                                "(every segment of a document has the same systems)")
        text = seg.get("input")
        if type(text) is dict:
            raise at("input", "a document's segments are texts; an image, audio clip or video goes in an item of "
                              "its own (without 'segments')")
        if text is not None and type(text) is not str:
            raise at("input", f"must be a string, got {_type(text)}")
        reference = _optional_text(seg, "reference", at)
        spans = seg.get("error_spans")
        spans = _EMPTY if spans is None else _error_spans(spans, outputs, at)
        out.append(Segment(text or "", outputs, reference, spans, instructions=_optional_text(seg, "instructions", at)))
    return tuple(out)


def _pearmut_document(value: list[Any], path: Path, lineno: int) -> dict[str, Any]:
    """A line holding a JSON array of items (Pearmut's document) as one item with ``segments``: the id and the
    instructions are the first item's, each item a segment (its ``input``, ``outputs``, ``reference``,
    ``error_spans``, ``instructions``)."""
    if not value or any(type(x) is not dict for x in value):
        raise ItemError(f"{path}, line {lineno}: a line that is an array must be a document: a non-empty list of "
                        "item objects")
    first = value[0]
    item_id = first.get("id", first.get("item_id"))
    segments = [{key: v for key, v in x.items() if PEARMUT_ALIASES.get(key, key) != "id"} for x in value]
    return {"id": item_id, "segments": segments, "instructions": first.get("instructions")}


#: the longest ``instructions`` of an item or segment, in characters (a few paragraphs of HTML; the conversion to
#: safe Markdown is not linear in the nesting of lists, so a hostile file must not hand it megabytes)
MAX_INSTRUCTIONS = 20_000


def _optional_text(obj: Mapping[str, Any], key: str, fail: Any) -> str | None:
    """An optional text key: None when absent, null or blank; an error when it is not a string (or, for
    ``instructions``, longer than :data:`MAX_INSTRUCTIONS`)."""
    text = obj.get(key)
    if text is None:
        return None
    if type(text) is not str:
        raise fail(key, f"must be a string, got {_type(text)}")
    if key == "instructions" and len(text) > MAX_INSTRUCTIONS:
        raise fail(key, f"is {len(text):,} characters long; at most {MAX_INSTRUCTIONS:,} (instructions are a few "
                        "paragraphs above the item)")
    return None if not text or text.isspace() else text


def _check_metrics(metrics: Any, outputs: Mapping[str, str], fail: Any, names: dict[str, str],
                   pending: list[tuple[int, str]], lineno: int) -> dict[str, dict[str, float]]:
    """Type checks of ``metrics``; the metrics made anew with names from ``names`` (see :func:`_parse`). The
    systems it names that have no output in the item go to ``pending`` with ``lineno``."""
    if type(metrics) is not dict:
        raise fail("metrics", f"must be an object mapping system names to {{metric: number}}, got {_type(metrics)}")
    out: dict[str, dict[str, float]] = {}
    name = names.setdefault
    isfinite = math.isfinite
    for system, values in metrics.items():
        if system not in outputs:
            pending.append((lineno, system))
        if type(values) is not dict:
            raise fail("metrics", f"system {system!r}: must be an object of metric: number, got {_type(values)}")
        shared = out[name(system, system)] = {}
        for metric, value in values.items():
            kind = type(value)
            if kind is int or (kind is float and isfinite(value)):
                shared[name(metric, metric)] = value
                continue
            got = repr(value) if kind is float else _type(value)
            raise fail("metrics", f"system {system!r}: metric {metric!r} must be a finite number, got {got}")
    return out
