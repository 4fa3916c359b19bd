"""Kind ``rating``: rubric ratings of items the evaluator picks from a list (e.g. a system's novelty
assessment of papers they know), each item scored on every metric (1..n) with an optional comment.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..rating_items import DEFAULT_SCALE, GraphNode, RatingItem
from ..store import Rating, Session, Store
from .base import Common, SurveyError, Table, TaskKind

if TYPE_CHECKING:
    from ..question import Question
    from ..store import Progress

__all__ = ["KIND", "Metric", "RatingTask", "SystemLabel", "compact_dot_graph", "dot_graph", "finish_rating",
           "graph_heading", "graph_layers", "kind_name", "missing_scores", "record_item_rating"]


@dataclass(frozen=True)
class Metric:
    """One rubric question scored 1..len(anchors); ``anchors[k]`` describes score k+1."""

    id: str
    label: str
    question: str
    anchors: tuple[str, ...]

    @property
    def scale(self) -> tuple[int, ...]:
        """The allowed scores, 1..n."""
        return tuple(range(1, len(self.anchors) + 1))


@dataclass(frozen=True)
class SystemLabel:
    """How the system's own label of an item is read and shown (``[tasks.system_label]``).

    Labels are integers from ``low`` to ``high``; ``names`` (optional) names each, lowest first;
    ``probability`` introduces the item's probability, shown as a percentage.
    """

    heading: str = "Novelty rating"
    low: int = DEFAULT_SCALE[0]
    high: int = DEFAULT_SCALE[1]
    names: tuple[str, ...] = ()
    probability: str = "Probability"

    @property
    def scale(self) -> tuple[int, int]:
        """(lowest, highest) label."""
        return self.low, self.high

    def show(self, label: int) -> str:
        """The label as evaluators read it: its name, else stars on the default 1..5 scale, else "k (low to high)"."""
        if self.names:
            name = self.names[label - self.low]
            return name if self.high - self.low == 1 else f"{name} ({label} on a scale from {self.low} to {self.high})"
        if self.scale == DEFAULT_SCALE:
            return f"{'★' * label}{'☆' * (5 - label)}  {label} / 5"
        return f"{label} (on a scale from {self.low} to {self.high})"

    def show_probability(self, probability: float) -> str:
        """``probability`` (0..1) as evaluators read it, e.g. "Probability that the paper is novel: 25%"."""
        return f"{self.probability}: {probability:.0%}"


@dataclass(frozen=True)
class RatingTask:
    """Rubric ratings of items (e.g. a system's novelty assessment of a paper)."""

    id: str
    title: str
    instructions: str
    items: Path
    metrics: tuple[Metric, ...]
    familiarity: Metric | None = None
    min_items: int = 1
    suggested_items: int = 3
    system_label: SystemLabel = SystemLabel()
    kind: Literal["rating"] = "rating"

    @property
    def questions(self) -> tuple[Metric, ...]:
        """Every question an evaluator answers per item, in order: familiarity (if asked), then the metrics."""
        return ((self.familiarity,) if self.familiarity else ()) + self.metrics


def _metric(data: Any, file: Path, where: str) -> Metric:
    t = Table(data, file, where)
    metric_id = t.ident("id")
    metric = Metric(
        id=metric_id,
        label=t.str("label", metric_id.replace("_", " ").capitalize()),
        question=t.str("question"),
        anchors=t.strs("anchors"),
    )
    if len(metric.anchors) < 2:
        t.fail("anchors", "needs at least two levels (one description per score)")
    t.done()
    return metric


def _system_label(data: Any, file: Path, where: str) -> SystemLabel:
    t = Table(data, file, where)
    default = SystemLabel()
    heading = t.str("heading", default.heading).strip()
    scale = t.get("scale", list(default.scale))
    if (not isinstance(scale, list) or len(scale) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in scale) or scale[0] >= scale[1]):
        t.fail("scale", f"must be [lowest, highest] label, two integers with lowest < highest (e.g. [0, 1] for a "
                        f"binary label, [1, 5]); got {scale!r}")
    low, high = scale
    names = t.strs("names", [], nonempty=False)
    if names and len(names) != high - low + 1:
        t.fail("names", f"needs one name per label from {low} to {high} ({high - low + 1} names), got {len(names)}")
    probability = t.str("probability", default.probability).strip()
    t.done()
    return SystemLabel(heading=heading, low=low, high=high, names=names, probability=probability)


class RatingKind(TaskKind):
    """Rubric ratings of items the evaluator picks; a block counts ``min_items`` steps plus one to finish."""

    name = "rating"
    source = "picked"
    analysis = "rating_analysis"
    summary_line = "rubric ratings (1..n per metric) of items the evaluator picks from an items file"

    def parse(self, t: Table, common: Common) -> RatingTask:
        rel, items = common.path(t, "items")
        if not items.is_file():
            t.fail("items", f"rating items file {rel!r} not found (looked for {items})")
        raw_metrics = t.get("metrics")
        if not isinstance(raw_metrics, list) or not raw_metrics:
            t.fail("metrics", "needs at least one [[tasks.metrics]] table (id, question, anchors)")
        metrics = tuple(_metric(m, common.file, f"{common.label} metric #{k}")
                        for k, m in enumerate(raw_metrics, start=1))
        ids = [m.id for m in metrics]
        if len(set(ids)) != len(ids):
            t.fail("metrics", f"metric ids must be unique, got {ids}")
        fam = t.get("familiarity", None)
        familiarity = None
        if fam is not None:
            fam = {"id": "familiarity", **fam} if isinstance(fam, dict) else fam
            familiarity = _metric(fam, common.file, f"{common.label} familiarity")
            if familiarity.id in ids:
                t.fail("familiarity", f"its id {familiarity.id!r} is also a metric id")
        raw_label = t.get("system_label", None)
        system_label = (SystemLabel() if raw_label is None
                        else _system_label(raw_label, common.file, f"{common.label} system_label"))
        min_items = t.int("min_items", 1, minimum=1)
        suggested = t.int("suggested_items", max(min_items, 3), minimum=1)
        if suggested < min_items:
            t.fail("suggested_items", f"({suggested}) is less than min_items ({min_items})")
        return RatingTask(id=common.id, title=common.title, instructions=common.instructions, items=items,
                          metrics=metrics, familiarity=familiarity, min_items=min_items, suggested_items=suggested,
                          system_label=system_label)

    def describe(self, task: RatingTask) -> dict[str, Any]:
        return {"metrics": [{"id": m.id, "label": m.label, "scale": len(m.anchors)} for m in task.metrics],
                "familiarity": task.familiarity is not None, "min_items": task.min_items,
                "system_label": {"scale": list(task.system_label.scale), "names": list(task.system_label.names)}}

    def step_label(self, task: RatingTask, index: int, n_questions: int, rated: int, what: str) -> str:
        """How many items are still required, or that the next one is optional once ``min_items`` are rated."""
        need = task.min_items
        if rated < need:
            return f"{what} {index + 1} of at least {need}"
        return f"{what} {index + 1} (optional: the {need} required {'is' if need == 1 else 'are'} done)"

    def progress(self, task: RatingTask, questions: Sequence[Question], progress: Progress) -> tuple[int, int]:
        """The required items, then "finish"."""
        if task.id in progress.finished:
            return task.min_items + 1, task.min_items + 1
        return task.min_items + 1, min(len(progress.rated.get(task.id, {})), task.min_items)

    def next_question(self, task: RatingTask, questions: Sequence[Question],
                      progress: Progress) -> tuple[int, Question | None, int, Mapping[int, str]] | None:
        """The index the next rating gets, until the evaluator finishes the block."""
        if task.id in progress.finished:
            return None
        rated = progress.rated.get(task.id, {})
        return max(rated, default=-1) + 1, None, task.min_items, rated


KIND = RatingKind()


def missing_scores(task: RatingTask, scores: Mapping[str, int | None]) -> list[Metric]:
    """The questions of a rating (familiarity first, then the metrics) that have no score in ``scores``."""
    return [m for m in task.questions if scores.get(m.id) is None]


def record_item_rating(store: Store, session: Session, task: RatingTask, index: int, item_id: str | None,
                       scores: Mapping[str, int | None], comment: str, time_spent_ms: int | None,
                       items: Sequence[RatingItem], *, finish: bool = False) -> list[Rating]:
    """Store one rated item: familiarity (if configured) and every metric, all required, 1..n each.

    With ``finish`` ("Save and finish") the block is closed in the same transaction as the rating, which is
    refused while this rating would still leave fewer than ``min_items`` rated.
    """
    if item_id is None or item_id not in {i.id for i in items}:
        raise SurveyError("Please choose a paper first.")
    if finish:
        _require_min_items(store, session, task, also_rating=index)
    missing = [m.label for m in missing_scores(task, scores)]
    if missing:
        raise SurveyError("Please answer every question before saving: " + ", ".join(missing) + ".")
    clean: dict[str, int] = {}
    for m in task.questions:
        score = scores[m.id]
        if score not in m.scale:
            raise SurveyError(f"{m.label}: the score must be one of {list(m.scale)}.")
        clean[m.id] = int(score)  # type: ignore[arg-type]
    return store.record_rating(session.session_id, task.id, index, item_id, clean, comment=comment[:5000],
                               time_spent_ms=time_spent_ms, finish=finish)


#: The rating screen's two save buttons, named by :func:`disabled_buttons_note`.
SAVE_ANOTHER, SAVE_FINISH = "Save and rate another paper", "Save and finish"


def finish_allowed(task: RatingTask, rated: int) -> bool:
    """Whether saving the paper on screen may also finish the block (``rated`` papers are rated already)."""
    return rated + 1 >= task.min_items


def disabled_buttons_note(task: RatingTask, rated: int, available: int) -> str | None:
    """Why a save button is greyed out on the rating screen (shown under the buttons; None when both work):
    "Save and finish" until this paper makes ``min_items``, "Save and rate another paper" on the list's last
    paper (``available`` papers not yet rated, this one included)."""
    notes = []
    if not finish_allowed(task, rated):
        need = task.min_items - rated - 1
        notes.append(f"“{SAVE_FINISH}” becomes available once you have rated {task.min_items} papers: this is paper "
                     f"{rated + 1}, so please rate {need} more after it.")
    if available <= 1:
        notes.append(f"“{SAVE_ANOTHER}” is not available: this is the last paper in the list.")
    return " ".join(notes) or None


def _require_min_items(store: Store, session: Session, task: RatingTask, also_rating: int | None = None) -> None:
    """SurveyError unless ``min_items`` are rated (counting the rating ``also_rating`` being saved now)."""
    rated = set(store.rated_items(session.session_id, task.id))
    if also_rating is not None:
        rated.add(also_rating)
    need = task.min_items - len(rated)
    if need > 0:
        raise SurveyError(f"Please rate {need} more {'paper' if need == 1 else 'papers'} before finishing.")


def finish_rating(store: Store, session: Session, task: RatingTask) -> None:
    """Close a rating block; refused until ``min_items`` items are rated."""
    _require_min_items(store, session, task)
    store.finish_task(session.session_id, task.id)


#: node type -> (name shown, DOT style); other types get a style of _OTHER_STYLES in order of appearance
_KINDS: dict[str, tuple[str, str]] = {
    "title": ("Title", 'style="rounded,filled,bold", fillcolor="#dbe7fb", color="#2457a6"'),
    "primary_area": ("Primary area", 'style="rounded,filled", fillcolor="#eef0f3", color="#4b5563"'),
    "keyword": ("Keyword", 'style="rounded,filled", fillcolor="#f7f7f8", color="#9ca3af"'),
    "tldr": ("TL;DR", 'style="rounded,filled", fillcolor="#e3f4f4", color="#1f7a7a"'),
    "claim": ("Claim", 'style="rounded,filled", fillcolor="#e8f4ea", color="#2f7d3b"'),
    "method": ("Method", 'style="rounded,filled", fillcolor="#fdf3dc", color="#a66f00"'),
    "experiment": ("Experiment", 'style="rounded,filled", fillcolor="#f4e8f7", color="#7b3f8c"'),
}
_OTHER_STYLES = ('style="rounded,filled", fillcolor="#fde8e8", color="#b42318"',
                 'style="rounded,filled", fillcolor="#e8eefd", color="#3446a8"',
                 'style="rounded,filled", fillcolor="#fff4e5", color="#b45309"',
                 'style="rounded"')
_NO_PLURAL = {"title", "primary_area", "tldr"}


def kind_name(kind: str, plural: bool = False) -> str:
    """How a node type is named to evaluators: ``tldr`` -> "TL;DR", ``primary_area`` -> "Primary area",
    ``claim`` -> "Claims" (``plural``); an unknown type with its underscores as spaces."""
    name = _KINDS[kind][0] if kind in _KINDS else kind.replace("_", " ").strip().capitalize() or "Node"
    if plural and kind not in _NO_PLURAL and not name.endswith("s"):
        name += "s"
    return name


def graph_layers(item: RatingItem) -> list[list[str]]:
    """The node types of an item's graph grouped by depth (fewest edges from a root), roots first, each type
    once, in order of first appearance within a layer: e.g. [[title], [primary_area, keyword, tldr], [claim],
    [method], [experiment]]. Nodes no root reaches (a cycle) count one layer below the deepest."""
    children: dict[str, list[str]] = {}
    has_parent: set[str] = set()
    for a, b in item.edges:
        children.setdefault(a, []).append(b)
        has_parent.add(b)
    depth: dict[str, int] = {n.id: 0 for n in item.nodes if n.id not in has_parent}
    frontier = list(depth)
    while frontier:
        nxt = []
        for node in frontier:
            for child in children.get(node, ()):
                if child not in depth:
                    depth[child] = depth[node] + 1
                    nxt.append(child)
        frontier = nxt
    deepest = max(depth.values(), default=-1) + 1
    kind_depth: dict[str, int] = {}
    for n in item.nodes:
        d = depth.get(n.id, deepest)
        kind_depth[n.kind] = min(kind_depth.get(n.kind, d), d)
    layers: dict[int, list[str]] = {}
    for kind, d in kind_depth.items():  # dicts keep first appearance
        layers.setdefault(d, []).append(kind)
    return [layers[d] for d in sorted(layers)]


def graph_heading(item: RatingItem) -> str:
    """The graph's legend, from the node types it has: "Title → Primary area / Keywords / TL;DR → Claims → ..."."""
    return " → ".join(" / ".join(kind_name(k, plural=True) for k in layer) for layer in graph_layers(item))


def _dot_string(text: str) -> str:
    """A DOT double-quoted string. Backslashes and quotes are escaped, so no DOT escape (\\N, \\G, \\l)
    in the text applies; real newlines become DOT's ``\\n`` line breaks."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + escaped.replace("\n", "\\n") + '"'


def _abbreviate(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters with "…"."""
    body = " ".join(text.split())
    if len(body) > limit:
        body = (body[: limit - 1].rsplit(" ", 1)[0] or body[: limit - 1]) + "…"
    return body


def node_styles(item: RatingItem) -> dict[str, str]:
    """Node type -> its DOT style: the known types' own, the others' from a small palette."""
    styles: dict[str, str] = {}
    others = 0
    for n in item.nodes:
        if n.kind not in styles:
            if n.kind in _KINDS:
                styles[n.kind] = _KINDS[n.kind][1]
            else:
                styles[n.kind] = _OTHER_STYLES[min(others, len(_OTHER_STYLES) - 1)]
                others += 1
    return styles


def dot_graph(item: RatingItem, *, width: int = 24, excerpt: int = 110) -> str:
    """A Graphviz DOT digraph of an item's graph, left to right from its roots (e.g. title -> claims ->
    methods -> experiments); a node may have several parents.

    Each node shows its type, its label and its text, each abbreviated to ``excerpt`` characters and
    wrapped to ``width`` (the page lists every node in full). Left to right, the title sits at the left
    edge, so a phone that scrolls the graph sideways opens on it. All text is escaped for DOT's quoted
    strings and no HTML-like labels are used, so node text cannot inject markup; node ids are positional
    (n0, n1, ...), never taken from the item.
    """
    def wrap(text: str) -> str:
        return "\n".join(textwrap.wrap(text, width=width)) or " "

    lines = ["digraph G {", '  rankdir=LR; nodesep=0.18; ranksep=0.3; bgcolor="transparent";',
             '  node [shape=box, fontname="Helvetica", fontsize=10, margin="0.12,0.06"];',
             '  edge [color="#6b7280", arrowsize=0.7];']
    styles = node_styles(item)
    ids = {}
    for k, node in enumerate(item.nodes):
        ids[node.id] = f"n{k}"
        label, body = _abbreviate(node.label, excerpt), _abbreviate(node.text, excerpt)
        kind = _abbreviate(kind_name(node.kind), 40).upper()
        if body.startswith(label.rstrip("…")) or not label:  # the text repeats the label: show it once
            text = f"{kind}\n{wrap(body)}"
        else:
            text = f"{kind}\n{wrap(label)}" + (f"\n\n{wrap(body)}" if body else "")
        lines.append(f"  n{k} [label={_dot_string(text)}, {styles[node.kind]}];")
    for a, b in item.edges:
        lines.append(f"  {ids[a]} -> {ids[b]};")
    lines.append("}")
    return "\n".join(lines)


def compact_dot_graph(item: RatingItem, *, width: int = 12, excerpt: int = 45) -> str:
    """The graph of :func:`dot_graph` for a phone: top to bottom, each node with its type and its label only (cut
    to ``excerpt`` characters, wrapped to ``width``; the page lists every node's text below the graph), and the
    leaves of one type under the same parents (the keywords of the title) as one node listing their labels. So a
    graph like GraphMind's is about 360-400 px wide (about 1,000 px left to right): a 390 px phone shows it whole
    at (nearly) its natural size. Escaped like :func:`dot_graph`; node ids are positional (n0, n1, ...)."""
    def wrap(text: str) -> str:  # a word longer than a line keeps its own line whole
        return "\n".join(textwrap.wrap(text, width=width, break_long_words=False)) or " "

    parents: dict[str, list[str]] = {}
    has_children: set[str] = set()
    for a, b in item.edges:
        parents.setdefault(b, []).append(a)
        has_children.add(a)
    groups: dict[tuple[str, tuple[str, ...]], list[GraphNode]] = {}  # leaves by (type, parents)
    for node in item.nodes:
        if node.id not in has_children and node.id in parents:
            groups.setdefault((node.kind, tuple(sorted(parents[node.id]))), []).append(node)
    merged = {n.id: g[0].id for g in groups.values() if len(g) > 1 for n in g}  # node -> its group's first node

    lines = ["digraph G {", '  rankdir=TB; nodesep=0.06; ranksep=0.25; bgcolor="transparent";',
             '  node [shape=box, fontname="Helvetica", fontsize=10, margin="0.07,0.04"];',
             '  edge [color="#6b7280", arrowsize=0.7];']
    styles = node_styles(item)
    ids: dict[str, str] = {}
    for k, node in enumerate(item.nodes):
        first = merged.get(node.id, node.id)
        if first != node.id:  # drawn in its group's node
            continue
        ids[node.id] = f"n{k}"
        if node.id in merged:
            group = [n for n in item.nodes if merged.get(n.id) == node.id]
            kind = _abbreviate(kind_name(node.kind, plural=True), 40).upper()
            text = kind + "".join(f"\n{wrap(_abbreviate(n.label or n.text, excerpt))}" for n in group)
        else:
            kind = _abbreviate(kind_name(node.kind), 40).upper()
            text = f"{kind}\n{wrap(_abbreviate(node.label or node.text, excerpt))}"
        lines.append(f"  n{k} [label={_dot_string(text)}, {styles[node.kind]}];")
    drawn: set[tuple[str, str]] = set()
    for a, b in item.edges:
        edge = (ids[merged.get(a, a)], ids[merged.get(b, b)])
        if edge not in drawn:  # a group's edges from one parent: one arrow
            drawn.add(edge)
            lines.append(f"  {edge[0]} -> {edge[1]};")
    lines.append("}")
    return "\n".join(lines)


def full_nodes(item: RatingItem) -> list[tuple[str, list[GraphNode]]]:
    """Every node of the graph, unabridged, grouped by type in the graph's layer order: [(type, nodes)]."""
    groups: dict[str, list[GraphNode]] = {k: [] for layer in graph_layers(item) for k in layer}
    for n in item.nodes:
        groups[n.kind].append(n)
    return list(groups.items())
