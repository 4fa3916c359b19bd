"""Dataset loaders: SemEval ABSA review XML (lxml); rating items are read by :mod:`evalkit.rating_items` (its
names, and :mod:`evalkit.datafiles`', are importable from here too).

Conventions
-----------
* Review files live in one folder and are named ``{source}-{domain}s.xml``:
  ``real-laptops.xml`` holds source ``real``, domain ``laptop``. The name is
  split on its *last* hyphen, so a source may contain hyphens
  (``gpt-4-hotels.xml`` -> ``gpt-4`` / ``hotel``). An ``.xml`` file that does
  not follow the convention is an error, not silently skipped.
* A review's text is its sentences' ``<text>`` contents, each stripped, empty
  ones dropped, cut to the first ``max_sentences`` and joined with one space.
  ``<Opinions>`` and any other annotation is ignored.
* A review is eligible when it has ``min_sentences..max_sentences`` sentences
  and ``min_chars..max_chars`` characters (both inclusive, measured on the
  joined text after the cut).

Floor: core (``.importlinter``). May import :mod:`evalkit.datafiles` and :mod:`evalkit.rating_items` only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from .datafiles import DatasetError, read_file_bytes
from .rating_items import GraphNode, RatingItem, load_rating_items

__all__ = [
    "DatasetError",
    "GraphNode",
    "PoolIndex",
    "Pools",
    "RatingItem",
    "Review",
    "count_reviews",
    "dataset_files",
    "load_pools",
    "load_rating_items",
    "load_reviews",
    "parse_dataset_name",
    "read_file_bytes",
]

DEFAULT_FILTERS: dict[str, int] = {"max_sentences": 4, "min_sentences": 2, "min_chars": 120, "max_chars": 600}

_NAME = re.compile(r"^(?P<source>[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*)-(?P<domain>[A-Za-z0-9_]+)s\.xml$")


@dataclass(frozen=True, slots=True)
class Review:
    """One eligible review. ``id`` is the file's ``rid``; ``key`` is unique across files."""

    id: str
    source: str
    domain: str
    text: str
    n_sentences: int

    @property
    def key(self) -> str:
        """Identifier unique across the whole dataset folder: ``source/domain/id``."""
        return f"{self.source}/{self.domain}/{self.id}"

    @property
    def n_chars(self) -> int:
        """Length of the text in characters."""
        return len(self.text)


def parse_dataset_name(path: str | Path) -> tuple[str, str]:
    """``real-laptops.xml`` -> ``("real", "laptop")``; :class:`DatasetError` if the name breaks the convention."""
    name = Path(path).name
    m = _NAME.match(name)
    if not m:
        raise DatasetError(
            f"{path}: file name does not follow the convention '{{source}}-{{domain}}s.xml' "
            "(e.g. 'real-laptops.xml'); rename it or move it out of the datasets folder"
        )
    return m.group("source"), m.group("domain")


def _check_filters(max_sentences: int, min_sentences: int, min_chars: int, max_chars: int) -> None:
    for name, value in (("max_sentences", max_sentences), ("min_sentences", min_sentences),
                        ("min_chars", min_chars), ("max_chars", max_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if max_sentences < 1:
        raise ValueError("max_sentences must be at least 1")
    if min_sentences > max_sentences:
        raise ValueError(f"min_sentences ({min_sentences}) is greater than max_sentences ({max_sentences})")
    if min_chars > max_chars:
        raise ValueError(f"min_chars ({min_chars}) is greater than max_chars ({max_chars})")


def _parse_xml(path: Path) -> etree._Element:
    data = read_file_bytes(path, "file", DatasetError)
    if not data.strip():
        raise DatasetError(f"{path}: file is empty")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True,
                             remove_blank_text=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = f", line {exc.lineno}" if getattr(exc, "lineno", None) else ""
        raise DatasetError(f"{path}{line}: not well-formed XML: {exc.msg}") from None
    dtd = root.getroottree().docinfo.internalDTD
    declared = [e.name for e in dtd.iterentities()] if dtd is not None else []
    used = next(root.iter(etree.Entity), None)
    if declared or used is not None:
        # Entities are never expanded (no XXE), and lxml keeps an unexpanded reference as a node of its own,
        # so the text after `&name;` would silently drop out of the review: refuse the file instead.
        name = declared[0] if declared else used.text
        line = used.sourceline if used is not None else 1
        raise DatasetError(
            f"{path}, line {line}: the file uses XML entities ({name}); evalkit never expands entities, so "
            "text would be lost: replace them by their text and remove the <!DOCTYPE ...> declarations")
    if root.tag != "Reviews":
        raise DatasetError(
            f"{path}, line {root.sourceline}: root element is <{root.tag}>, expected <Reviews> (SemEval ABSA format)"
        )
    return root


def load_reviews(
    path: str | Path,
    source: str,
    domain: str,
    *,
    max_sentences: int = 4,
    min_sentences: int = 2,
    min_chars: int = 120,
    max_chars: int = 600,
) -> list[Review]:
    """Load the eligible reviews of one SemEval XML file, in file order.

    Raises :class:`DatasetError` (naming the file and, where known, the line) for a
    missing, empty, non-XML, truncated or wrongly rooted file, a review without
    ``rid`` and a ``rid`` used twice.
    """
    _check_filters(max_sentences, min_sentences, min_chars, max_chars)
    path = Path(path)
    root = _parse_xml(path)
    out: list[Review] = []
    seen: set[str] = set()
    # One pass over the <Review> and <text> elements in document order (lxml matches the tags in C): about
    # twice as fast as querying each review's sentences separately, which matters for 100k-review files.
    rid: str | None = None
    sentences: list[str] = []
    for element in root.iter("Review", "text"):
        if element.tag == "text":
            if rid is not None and len(sentences) < max_sentences:
                text = (element.text or "").strip()
                if text:
                    sentences.append(text)
            continue
        if rid is not None:
            _keep(out, rid, sentences, source, domain, min_sentences, min_chars, max_chars)
        rid = element.get("rid")
        if rid is None or not rid.strip():
            raise DatasetError(f"{path}, line {element.sourceline}: <Review> has no rid attribute")
        if rid in seen:
            raise DatasetError(f"{path}, line {element.sourceline}: rid {rid!r} is used by more than one review")
        seen.add(rid)
        sentences = []
    if rid is not None:
        _keep(out, rid, sentences, source, domain, min_sentences, min_chars, max_chars)
    return out


def _keep(out: list[Review], rid: str, sentences: list[str], source: str, domain: str, min_sentences: int,
          min_chars: int, max_chars: int) -> None:
    """Append the review to ``out`` if it passes the filters (sentences are already cut)."""
    if len(sentences) >= min_sentences:
        text = " ".join(sentences)
        if min_chars <= len(text) <= max_chars:
            out.append(Review(id=rid, source=source, domain=domain, text=text, n_sentences=len(sentences)))


def dataset_files(directory: str | Path) -> dict[tuple[str, str], Path]:
    """Map (source, domain) -> file for every ``.xml`` file in ``directory``.

    Raises :class:`DatasetError` for a missing folder, a badly named ``.xml``
    file, or two files claiming the same (source, domain).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise DatasetError(f"{directory}: datasets folder not found")
    files: dict[tuple[str, str], Path] = {}
    for path in sorted(directory.iterdir()):
        if path.suffix.lower() != ".xml" or not path.is_file():
            continue
        key = parse_dataset_name(path)
        if key in files:
            raise DatasetError(f"{path}: source {key[0]!r}, domain {key[1]!r} is also given by {files[key].name}")
        files[key] = path
    return files


@dataclass
class PoolIndex:
    """Reviews of one (source, domain) grouped by sentence count and sorted by length.

    Lets sampling find every review within a length window with two bisections,
    so planning costs O(log n) per draw whatever the pool size.
    """

    reviews: list[Review]
    by_sentences: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)

    @classmethod
    def build(cls, reviews: list[Review]) -> PoolIndex:
        """Index ``reviews`` (kept in the given order for uniform draws)."""
        groups: dict[int, list[tuple[int, int]]] = {}
        for i, r in enumerate(reviews):
            groups.setdefault(r.n_sentences, []).append((len(r.text), i))
        index = cls(reviews=reviews)
        for n, pairs in groups.items():
            pairs.sort()
            index.by_sentences[n] = ([p[0] for p in pairs], [p[1] for p in pairs])
        return index

    def window(self, lo_chars: int, hi_chars: int, lo_sent: int, hi_sent: int) -> list[tuple[list[int], int, int]]:
        """Ranges ``(positions, start, stop)`` of reviews with lo..hi chars and sentences (inclusive)."""
        out = []
        for n in range(lo_sent, hi_sent + 1):
            group = self.by_sentences.get(n)
            if group is None:
                continue
            lengths, positions = group
            start = bisect.bisect_left(lengths, lo_chars)
            stop = bisect.bisect_right(lengths, hi_chars)
            if stop > start:
                out.append((positions, start, stop))
        return out


class Pools(dict):
    """``dict[(source, domain)] -> list[Review]`` that caches a :class:`PoolIndex` per key.

    Returned by :func:`load_pools`. Treat it as read-only: the index is built
    once, on first use, and assumes the lists do not change afterwards.
    """

    def __init__(self, *args: Any, files: Mapping[tuple[str, str], Path] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.files: dict[tuple[str, str], Path] = dict(files or {})
        self._index: dict[tuple[str, str], PoolIndex] = {}

    def index(self, source: str, domain: str) -> PoolIndex:
        """The (cached) length index of one pool; an empty index when the pool does not exist."""
        key = (source, domain)
        idx = self._index.get(key)
        if idx is None or idx.reviews is not self.get(key):
            idx = PoolIndex.build(self.get(key, []))
            self._index[key] = idx
        return idx

    @property
    def sources(self) -> list[str]:
        """Every source with at least one file, sorted."""
        return sorted({s for s, _ in self})

    @property
    def domains(self) -> list[str]:
        """Every domain with at least one file, sorted."""
        return sorted({d for _, d in self})


def load_pools(directory: str | Path, **filters: int) -> Pools:
    """Load every ``{source}-{domain}s.xml`` in ``directory`` -> ``{(source, domain): [Review, ...]}``.

    ``filters`` are the keyword arguments of :func:`load_reviews`. An empty pool
    (a file with no eligible review) is kept, with an empty list, so callers can
    report it.
    """
    unknown = set(filters) - set(DEFAULT_FILTERS)
    if unknown:
        raise TypeError(f"unknown filter(s): {', '.join(sorted(unknown))}; expected {', '.join(DEFAULT_FILTERS)}")
    files = dataset_files(directory)
    pools = Pools(files=files)
    for (source, domain), path in files.items():
        pools[(source, domain)] = load_reviews(path, source, domain, **filters)
    return pools


def count_reviews(path: str | Path) -> int:
    """Number of ``<Review>`` elements in a file, eligible or not (for reports)."""
    return sum(1 for _ in _parse_xml(Path(path)).iterchildren("Review"))


def review_counts(path: str | Path) -> tuple[int, int]:
    """(``<Review>`` elements in a file, those with at least one non-empty sentence text)."""
    reviews = list(_parse_xml(Path(path)).iterchildren("Review"))
    with_text = sum(1 for r in reviews if any((t.text or "").strip() for t in r.iter("text")))
    return len(reviews), with_text
