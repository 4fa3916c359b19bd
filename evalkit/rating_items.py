"""Rating items: a system's output about one item (e.g. its novelty assessment of a paper), as the rating task
shows it. Two shapes load as they are, and may be mixed in one file:

* evalkit's own: ``{"id", "title", "summary", "rating", "supporting_evidence", "contradictory_evidence",
  "key_comparisons", "graph"}`` with optional ``probability``, ``conclusion``, ``abstract``, ``authors``,
  ``year``, ``venue`` and ``related``;
* GraphMind's records, as its demo's ``library.json.gz`` holds them: ``{"graph", "paper", "related", ...}``,
  the assessment under ``paper.structured_evaluation`` (recognised by a ``paper`` object and no ``id``).

Evidence entries are strings or objects ``{text, paper_title, paper_id, source}``; a graph is
``{nodes: [{id, label, type, text}], edges: [[from, to]]}`` or ``{entities: [{label, type, detail, excerpts}],
relationships: [{source, target}]}`` (entities are named by their label; a node may have several parents).

A file whose name ends in ``.json`` or ``.json.gz`` is one JSON document: a list of items (or a single item);
any other name (``.jsonl``, ``.jsonl.gz``) is JSON Lines, one item per line. Gzip-compressed content is
recognised by its first bytes. Texts are untrusted: they are kept as given and must be shown as plain text.
Every problem raises :class:`~evalkit.datasets.DatasetError` naming the file, the line (JSON Lines) or the
item's position (a JSON list), and the field.

Floor: core (``.importlinter``). May import :mod:`evalkit.datafiles` only.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from .datafiles import DatasetError, read_file_bytes

__all__ = ["DEFAULT_SCALE", "Evidence", "Excerpt", "GraphNode", "RatingItem", "RelatedPaper", "load_rating_items"]

#: The system label's scale when the task sets none: 1..5.
DEFAULT_SCALE = (1, 5)


@dataclass(frozen=True, slots=True)
class Excerpt:
    """A passage of the paper a graph node was drawn from."""

    section: str
    text: str


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A node of an item's graph (e.g. title -> claims -> methods -> experiments); ``kind`` is its type."""

    id: str
    label: str
    kind: str
    text: str = ""
    excerpts: tuple[Excerpt, ...] = ()


@dataclass(frozen=True, slots=True)
class Evidence:
    """One piece of evidence for or against the system's label, with the paper it cites (when given)."""

    text: str
    paper_title: str = ""
    paper_id: str = ""
    source: str = ""


@dataclass(frozen=True, slots=True)
class RelatedPaper:
    """A related paper the system retrieved for its assessment."""

    title: str
    summary: str = ""
    abstract: str = ""
    polarity: str = ""
    source: str = ""
    year: int | None = None
    authors: tuple[str, ...] = ()
    venue: str = ""
    score: float | None = None
    paper_id: str = ""


@dataclass(frozen=True, slots=True)
class RatingItem:
    """One item of a rating block (e.g. a paper and the system's novelty assessment of it).

    ``rating`` is the system's own label on the task's scale (``[tasks.system_label] scale``, 1..5 by
    default) and ``probability`` the probability it gave with it, if any.
    """

    id: str
    title: str
    summary: str
    rating: int
    supporting_evidence: tuple[Evidence, ...]
    contradictory_evidence: tuple[Evidence, ...]
    key_comparisons: tuple[str, ...]
    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str], ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    probability: float | None = None
    conclusion: str = ""
    abstract: str = ""
    related: tuple[RelatedPaper, ...] = ()
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str = ""


# --------------------------------------------------------------------------- field readers


class _Fields:
    """Typed access to one JSON object of an item; every failure names the file, the item and the field path."""

    def __init__(self, data: Any, where: str, path: str = "") -> None:
        self.where, self.path = where, path
        if not isinstance(data, dict):
            if path:
                self.fail(None, f"must be an object, got {_json_type(data)}")
            raise DatasetError(f"{where}: expected a JSON object, got {_json_type(data)}")
        self.data: dict[str, Any] = data

    def name(self, key: str | None) -> str:
        """The field's path in the item, e.g. ``paper.structured_evaluation.label``."""
        if key is None:
            return self.path
        if key.startswith("["):
            return f"{self.path}{key}"
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str | None, problem: str) -> NoReturn:
        """Raise :class:`DatasetError` naming the file, the item and the field."""
        raise DatasetError(f"{self.where}: field '{self.name(key)}' {problem}")

    def get(self, key: str) -> Any:
        """The value, or None when absent."""
        return self.data.get(key)

    def obj(self, key: str) -> _Fields:
        """A required nested object."""
        if key not in self.data:
            self.fail(key, "is missing")
        return _Fields(self.data[key], self.where, self.name(key))

    def text(self, key: str, *, required: bool = True) -> str:
        """A string: required ones must not be blank; an optional one may be absent or null (read as "")."""
        value = self.data.get(key)
        if value is None and not required:
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            self.fail(key, "must be a non-empty string" + ("" if key in self.data else " (it is missing)"))
        return value.strip()

    def list(self, key: str, *, required: bool = True) -> list[Any]:
        """A list (an optional one may be absent or null: empty)."""
        value = self.data.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            self.fail(key, f"must be a list, got {_json_type(value) if key in self.data else 'nothing'}")
        return value

    def strs(self, key: str, *, required: bool = True) -> tuple[str, ...]:
        """A list of non-empty strings (a single string counts as a list of one)."""
        value = self.data.get(key)
        if value is None and not required:
            return ()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(key, "must be a list of non-empty strings")
        return tuple(v.strip() for v in value)

    def year(self, key: str) -> int | None:
        """An optional integer (e.g. a year)."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {value!r}")
        return value

    def number(self, key: str, *, low: float | None = None, high: float | None = None) -> float | None:
        """An optional finite number, within [low, high] when given."""
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.fail(key, f"must be a number, got {value!r}")
        if low is not None and high is not None and not low <= value <= high:
            self.fail(key, f"must be a number from {low:g} to {high:g}, got {value!r}")
        return float(value)

    def label(self, key: str, scale: tuple[int, int]) -> int:
        """The system's label: an integer on ``scale``."""
        low, high = scale
        value = self.data.get(key)
        hint = "" if scale == DEFAULT_SCALE else f" (the task's [tasks.system_label] scale = [{low}, {high}])"
        if key not in self.data:
            self.fail(key, "is missing")
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            if scale == DEFAULT_SCALE and isinstance(value, int) and not isinstance(value, bool) and value in (0, 1):
                hint = " (a binary label? set scale = [0, 1] in the task's [tasks.system_label])"
            self.fail(key, f"must be an integer from {low} to {high}{hint}, got {value!r}")
        return value


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _evidence(f: _Fields, key: str) -> tuple[Evidence, ...]:
    """A list of evidence entries: strings, or objects ``{text, paper_title?, paper_id?, source?}``."""
    out: list[Evidence] = []
    for k, entry in enumerate(f.list(key)):
        if isinstance(entry, str):
            if not entry.strip():
                f.fail(f"{key}[{k}]", "must be a non-empty string or an object with 'text'")
            out.append(Evidence(text=entry.strip()))
            continue
        if not isinstance(entry, dict):
            f.fail(f"{key}[{k}]", f"must be a string or an object with 'text', got {_json_type(entry)}")
        e = _Fields(entry, f.where, f.name(f"{key}[{k}]"))
        if not isinstance(entry.get("text"), str) or not entry["text"].strip():
            e.fail(None, "has no 'text' (a non-empty string)")
        out.append(Evidence(text=entry["text"].strip(), paper_title=e.text("paper_title", required=False),
                            paper_id=_id_text(e, "paper_id"), source=e.text("source", required=False)))
    return tuple(out)


def _id_text(f: _Fields, key: str) -> str:
    """An optional id: a string or an integer (as its decimal string)."""
    value = f.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f.text(key, required=False)


def _graph(f: _Fields) -> tuple[tuple[GraphNode, ...], tuple[tuple[str, str], ...]]:
    """The graph ``f`` describes: ``nodes`` / ``edges``, or ``entities`` / ``relationships``."""
    if "entities" in f.data:
        return _entities(f)
    if not isinstance(f.get("nodes"), list) or not isinstance(f.get("edges"), list):
        raise DatasetError(f"{f.where}: field '{f.path}' must be an object with lists 'nodes' and 'edges' "
                           "(or 'entities' and 'relationships')")
    nodes: list[GraphNode] = []
    ids: set[str] = set()
    for k, node in enumerate(f.data["nodes"]):
        if not isinstance(node, dict) or not isinstance(node.get("id"), str) or not isinstance(node.get("label"), str):
            raise DatasetError(f"{f.where}: graph.nodes[{k}] must be an object with string 'id' and 'label'")
        if node["id"] in ids:
            raise DatasetError(f"{f.where}: graph.nodes[{k}] repeats node id {node['id']!r}")
        ids.add(node["id"])
        nodes.append(GraphNode(id=node["id"], label=node["label"], kind=str(node.get("type", "node")),
                               text=str(node.get("text", ""))))
    if not nodes:
        raise DatasetError(f"{f.where}: graph.nodes is empty")
    edges: list[tuple[str, str]] = []
    for k, edge in enumerate(f.data["edges"]):
        if isinstance(edge, dict):
            pair = (edge.get("source"), edge.get("target"))
        elif isinstance(edge, list) and len(edge) == 2:
            pair = (edge[0], edge[1])
        else:
            raise DatasetError(f"{f.where}: graph.edges[{k}] must be [source, target] or {{source, target}}")
        for end in pair:
            if end not in ids:
                raise DatasetError(f"{f.where}: graph.edges[{k}] refers to unknown node {end!r}")
        edges.append((str(pair[0]), str(pair[1])))
    return tuple(nodes), tuple(edges)


def _entities(f: _Fields) -> tuple[tuple[GraphNode, ...], tuple[tuple[str, str], ...]]:
    """GraphMind's graph: entities named by their (unique) label, relationships between labels."""
    entities = f.list("entities")
    if not entities:
        f.fail("entities", "is empty: the graph needs at least one entity")
    nodes: list[GraphNode] = []
    seen: dict[str, int] = {}
    for k, raw in enumerate(entities):
        e = _Fields(raw, f.where, f.name(f"entities[{k}]"))
        if not isinstance(raw.get("label"), str) or not raw["label"].strip():
            e.fail("label", "must be a non-empty string" + ("" if "label" in raw else " (it is missing)"))
        label = raw["label"]
        if label in seen:
            e.fail("label", f"is {label!r}, which is also the label of {f.name(f'entities[{seen[label]}]')}; "
                            "relationships name entities by their label, so labels must be unique")
        seen[label] = k
        excerpts: list[Excerpt] = []
        for j, ex in enumerate(e.list("excerpts", required=False)):
            x = _Fields(ex, f.where, e.name(f"excerpts[{j}]"))
            excerpts.append(Excerpt(section=x.text("section", required=False), text=x.text("text")))
        nodes.append(GraphNode(id=label, label=label.strip(), kind=e.text("type"),
                               text=e.text("detail", required=False), excerpts=tuple(excerpts)))
    edges: list[tuple[str, str]] = []
    for k, raw in enumerate(f.list("relationships", required=False)):
        r = _Fields(raw, f.where, f.name(f"relationships[{k}]"))
        pair = []
        for end in ("source", "target"):
            value = raw.get(end)
            if not isinstance(value, str):
                r.fail(end, "must be the label of an entity (a string)" + ("" if end in raw else ", but is missing"))
            if value not in seen:
                r.fail(end, f"is {value!r}, the label of no entity in {f.name('entities')}")
            pair.append(value)
        edges.append((pair[0], pair[1]))
    return tuple(nodes), tuple(edges)


def _related(f: _Fields, key: str) -> tuple[RelatedPaper, ...]:
    """Optional related papers: objects with at least a ``title``."""
    out: list[RelatedPaper] = []
    for k, raw in enumerate(f.list(key, required=False)):
        r = _Fields(raw, f.where, f.name(f"{key}[{k}]"))
        out.append(RelatedPaper(
            title=r.text("title"), summary=r.text("summary", required=False),
            abstract=r.text("abstract", required=False), polarity=r.text("polarity", required=False),
            source=r.text("source", required=False), year=r.year("year"),
            authors=r.strs("authors", required=False), venue=r.text("venue", required=False),
            score=r.number("score"), paper_id=_id_text(r, "paper_id")))
    return tuple(out)


# --------------------------------------------------------------------------- the two shapes


_ITEM_REQUIRED = ("id", "title", "summary", "rating", "supporting_evidence", "contradictory_evidence",
                  "key_comparisons", "graph")


def _evalkit_item(obj: dict[str, Any], where: str, scale: tuple[int, int]) -> RatingItem:
    """An item in evalkit's own shape."""
    f = _Fields(obj, where)
    missing = [k for k in _ITEM_REQUIRED if k not in obj]
    if missing:
        raise DatasetError(f"{where}: missing required field(s): {', '.join(missing)}")
    for key in ("id", "title", "summary"):
        if not isinstance(obj[key], str) or not obj[key].strip():
            raise DatasetError(f"{where}: field {key!r} must be a non-empty string")
    rating = f.label("rating", scale)
    if not isinstance(obj["graph"], dict):
        raise DatasetError(f"{where}: field 'graph' must be an object with lists 'nodes' and 'edges' "
                           "(or 'entities' and 'relationships')")
    nodes, edges = _graph(_Fields(obj["graph"], where, "graph"))
    venue = obj.get("venue")
    return RatingItem(
        id=obj["id"].strip(), title=obj["title"].strip(), summary=obj["summary"].strip(), rating=rating,
        supporting_evidence=_evidence(f, "supporting_evidence"),
        contradictory_evidence=_evidence(f, "contradictory_evidence"),
        key_comparisons=f.strs("key_comparisons"), nodes=nodes, edges=edges,
        extra={k: v for k, v in obj.items() if k not in _ITEM_REQUIRED},  # the optional fields too, as before
        probability=f.number("probability", low=0, high=1), conclusion=f.text("conclusion", required=False),
        abstract=f.text("abstract", required=False), related=_related(f, "related"),
        authors=f.strs("authors", required=False), year=f.year("year"),
        venue=venue.strip() if isinstance(venue, str) else "")


#: paper keys read into the item's own fields; the rest of ``paper`` (but its full text) is kept in ``extra``
_PAPER_READ = frozenset(("id", "title", "abstract", "authors", "year", "conference", "structured_evaluation",
                         "sections"))


def _graphmind_item(obj: dict[str, Any], where: str, scale: tuple[int, int]) -> RatingItem:
    """A GraphMind record: ``paper`` (with ``structured_evaluation``), ``graph`` and ``related``."""
    top = _Fields(obj, where)
    paper = top.obj("paper")
    ev = paper.obj("structured_evaluation")
    item_id = _id_text(paper, "id")
    if not item_id:
        paper.fail("id", "must be a non-empty string (the item's id)")
    graph = top.obj("graph")
    nodes, edges = _graph(graph) if "nodes" in graph.data else _entities(graph)
    abstract = paper.text("abstract", required=False) or graph.text("abstract", required=False)
    extra = {k: v for k, v in paper.data.items() if k not in _PAPER_READ}
    extra.update({f"structured_evaluation.{k}": v for k, v in ev.data.items()
                  if k not in ("paper_summary", "supporting_evidence", "contradictory_evidence", "key_comparisons",
                               "conclusion", "label", "probability")})
    return RatingItem(
        id=item_id, title=paper.text("title"), summary=ev.text("paper_summary"), rating=ev.label("label", scale),
        supporting_evidence=_evidence(ev, "supporting_evidence"),
        contradictory_evidence=_evidence(ev, "contradictory_evidence"),
        key_comparisons=ev.strs("key_comparisons"), nodes=nodes, edges=edges, extra=extra,
        probability=ev.number("probability", low=0, high=1), conclusion=ev.text("conclusion", required=False),
        abstract=abstract, related=_related(top, "related"), authors=paper.strs("authors", required=False),
        year=paper.year("year"), venue=paper.text("conference", required=False))


def _parse_item(obj: Any, where: str, scale: tuple[int, int] = DEFAULT_SCALE) -> RatingItem:
    """One item in either shape (a GraphMind record has a ``paper`` object and no ``id``)."""
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {_json_type(obj)}")
    if "paper" in obj and "id" not in obj:
        return _graphmind_item(obj, where, scale)
    return _evalkit_item(obj, where, scale)


# --------------------------------------------------------------------------- files


def _records(path: Path, raw: bytes) -> list[tuple[str, str, Any]]:
    """(where, position, parsed JSON) of every item of a file: the lines of JSON Lines, or a JSON list's entries."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DatasetError(f"{path}: not a valid gzip file ({exc})") from None
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".json"):  # one JSON document: a list of items (or one item)
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[: exc.start].count(b"\n") + 1
            raise DatasetError(f"{path}, line {line}: not valid UTF-8 ({exc.reason})") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
        entries = doc if isinstance(doc, list) else [doc]
        return [(f"{path}, item {k}", f"item {k}", obj) for k, obj in enumerate(entries, start=1)]
    out: list[tuple[str, str, Any]] = []
    for lineno, line_bytes in enumerate(raw.splitlines(), start=1):
        try:
            line = line_bytes.decode("utf-8-sig" if lineno == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{path}, line {lineno}: not valid UTF-8 ({exc.reason})") from None
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}, line {lineno}: not valid JSON: {exc.msg} (column {exc.colno})") from None
        out.append((f"{path}, line {lineno}", f"line {lineno}", obj))
    return out


def load_rating_items(path: str | Path, *, scale: tuple[int, int] = DEFAULT_SCALE) -> list[RatingItem]:
    """Load rating items in evalkit's or GraphMind's shape (see the module's docstring), in file order.

    ``scale`` is the range of the system's own label (``[tasks.system_label] scale``). Errors name the file,
    the line or item, and the field; an id used twice names both places.
    """
    path = Path(path)
    raw = read_file_bytes(path, "rating items file", DatasetError)
    items: list[RatingItem] = []
    seen: dict[str, str] = {}
    for where, position, obj in _records(path, raw):
        item = _parse_item(obj, where, scale)
        if item.id in seen:
            raise DatasetError(f"{where}: id {item.id!r} was already used on {seen[item.id]}")
        seen[item.id] = position
        items.append(item)
    if not items:
        raise DatasetError(f"{path}: no rating items (the file is empty)")
    return items
