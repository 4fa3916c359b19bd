"""Untrusted HTML made into safe Markdown: the per-item ``instructions`` of an items file (Pearmut's, e.g.
``"<b>Attention check:</b> A is best.<br>Then ..."``), shown above the item by the app.

How (:func:`html_to_markdown`)
------------------------------
1. ``nh3`` (the Rust ``ammonia`` sanitizer over ``html5ever``, the parser of a browser) parses the text as a browser
   would (unclosed tags closed, entities decoded, comments dropped) and keeps only the tags of :data:`ALLOWED_TAGS`,
   with no attribute but an ``<a>``'s ``href`` (absolute ``http`` / ``https`` only: ``javascript:``, ``data:`` and
   relative links lose it) and an ``<img>``'s ``alt``. The tags of :data:`DROPPED_TAGS` go *with their content*
   (``<script>``, ``<style>``, ``<iframe>``, ``<audio>``, ``<video>``, ...); any other tag goes and its text stays.
   Event handlers (``onerror=``) and ``style`` attributes never survive.
2. What is left, well formed, is written as Markdown by this module: every text escaped
   (:func:`evalkit.text.markdown_literal`: it shows as typed, never as a link, HTML, a heading or a list), and
   only our own syntax around it:

   ====================================  ===========================================================
   ``<b>``, ``<strong>``                 ``**bold**``
   ``<i>``, ``<em>``, ``<u>``            ``*emphasis*`` (Markdown has no underline)
   ``<code>``                            a code span
   ``<a href="https://...">``            ``[text](https://...)``; any other link: its text alone
   ``<br>``                              a line break; two or more in a row: a new paragraph
   ``<p>``, ``<div>``                    a paragraph
   ``<h1>`` .. ``<h6>``                  a paragraph in bold
   ``<ul>``, ``<ol>``, ``<li>``          a list (nested lists indented; deeper than 5: paragraphs)
   ``<img alt="...">``                   its ``alt`` text (the image itself is not shown)
   ====================================  ===========================================================

The result is meant for ``st.markdown`` / ``st.info`` *without* ``unsafe_allow_html``: even a renderer that
passed raw HTML through would find none (every ``<`` of a text is escaped). White space runs are one space, as a
browser shows them. Conversions are cached (an item's instructions are converted once per process).

Pure Python and ``nh3``, no Streamlit. Floor: core (``.importlinter``). May import :mod:`evalkit.text` only.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from html.parser import HTMLParser
from urllib.parse import quote

import nh3

from .text import markdown_literal

__all__ = ["ALLOWED_TAGS", "DROPPED_TAGS", "html_to_markdown"]

#: The tags kept (as Markdown, see the module's table); any other tag is removed and its text kept.
ALLOWED_TAGS = frozenset(("b", "strong", "i", "em", "u", "code", "a", "br", "p", "div", "ul", "ol", "li", "img",
                          "h1", "h2", "h3", "h4", "h5", "h6"))
#: The tags removed with everything inside them: scripts, styles, embedded pages and media, forms' widgets.
DROPPED_TAGS = frozenset(("script", "style", "iframe", "frame", "frameset", "object", "audio", "video", "noscript",
                          "noembed", "noframes", "template", "svg", "math", "textarea", "select", "title", "head"))

_BOLD = frozenset(("b", "strong", "h1", "h2", "h3", "h4", "h5", "h6"))
_ITALIC = frozenset(("i", "em", "u"))
_BLOCKS = frozenset(("p", "div", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6"))
_SPACE = re.compile(r"[ \t\n\r\f]+")  # HTML's white space (not a no-break space)
_LINK = re.compile(r"https?://\S", re.IGNORECASE)
_URL_SAFE = "/:?#[]@!$&'*+,;=%-._~"  # kept as they are in a link's address; anything else is percent-encoded
#: below this depth a subtree is shown as its text alone (a hostile file's 10,000 nested tags cost no recursion)
_MAX_DEPTH = 60
#: lists nested deeper than this are shown as paragraphs (renderers limit how deep they nest blocks)
_MAX_LISTS = 5
_BREAK = ("br", "\\\n")  # a hard line break (a backslash before the line end)


class _Node:
    """An element of the cleaned HTML: its tag, its ``href`` / ``alt`` and its children (nodes and texts)."""

    __slots__ = ("attrs", "children", "tag")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag, self.attrs = tag, attrs
        self.children: list[_Node | str] = []


class _Tree(HTMLParser):
    """The cleaned HTML as a tree of :class:`_Node` (iterative: no recursion however deep the nesting)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v for k, v in attrs if v is not None})
        self.stack[-1].children.append(node)
        if tag not in ("br", "img"):  # (void elements: no end tag)
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {k: v for k, v in attrs if v is not None}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


@functools.lru_cache(maxsize=4096)
def html_to_markdown(text: str) -> str:
    """Untrusted HTML as safe Markdown (see the module docstring): allowlisted formatting kept as Markdown, every
    text escaped, scripts, styles, embeds, media, event handlers and links other than http(s) removed. ``""`` when
    nothing visible is left."""
    cleaned = nh3.clean(text, tags=set(ALLOWED_TAGS), clean_content_tags=set(DROPPED_TAGS),
                        attributes={"a": {"href"}, "img": {"alt"}}, url_schemes={"http", "https"},
                        url_relative="deny", link_rel=None, strip_comments=True)
    tree = _Tree()
    tree.feed(cleaned)
    tree.close()
    return "\n\n".join(_blocks(tree.root.children, frozenset(), 0)).strip()


# ----------------------------------------------------------------------------- blocks: paragraphs and lists


def _blocks(nodes: list[_Node | str], active: frozenset[str], depth: int, lists: int = 0) -> list[str]:
    """The Markdown blocks (paragraphs, lists) of a sequence of nodes (inside ``lists`` lists)."""
    out: list[str] = []
    run: list[_Node | str] = []
    previous = ("", 1)  # the list just before (its tag, its markers): two lists of a kind in a row alternate them

    def flush() -> None:
        if run:
            out.extend(_paragraphs(_inline(run, active, depth)))
            run.clear()

    for node in nodes:
        if isinstance(node, str) or node.tag not in _BLOCKS or depth >= _MAX_DEPTH:
            run.append(node)
            continue
        if run and any(isinstance(n, _Node) or n.strip() for n in run):
            previous = ("", 1)
        flush()
        if node.tag in ("ul", "ol") and lists < _MAX_LISTS:
            alternate = 1 - previous[1] if previous[0] == node.tag else 0
            block = _list(node, active, depth + 1, alternate, lists + 1)
            if block:
                out.append(block)
                previous = (node.tag, alternate)
            continue
        previous = ("", 1)
        if node.tag.startswith("h"):  # a heading: one paragraph, in bold
            pieces = _emphasis(_inline(node.children, active | {"bold"}, depth + 1), "**", "bold", active)
            out.extend(_paragraphs(pieces))
        else:  # p, div, a stray li, a list too deep
            out.extend(_blocks(node.children, active, depth + 1, lists))
    flush()
    return out


def _list(node: _Node, active: frozenset[str], depth: int, alternate: int, lists: int) -> str:
    """A ``<ul>`` / ``<ol>`` as a Markdown list: each item's blocks, lines after the first indented under it."""
    ordered = node.tag == "ol"
    items: list[list[_Node | str]] = []
    for child in node.children:
        if isinstance(child, _Node) and child.tag == "li":
            items.append(child.children)
        elif isinstance(child, _Node) or child.strip():  # content outside an <li>: an item of its own
            items.append([child])
    lines: list[str] = []
    number = 0
    for content in items:
        blocks = _blocks(content, active, depth + 1, lists)
        if not blocks:
            continue
        number += 1
        marker = f"{number}{('.', ')')[alternate]} " if ordered else ("- ", "+ ")[alternate]
        body = blocks[0]
        for block in blocks[1:]:  # a nested list right under its line; a paragraph after a blank line
            body += ("\n" if block.startswith(("- ", "+ ")) or re.match(r"\d+[.)] ", block) else "\n\n") + block
        pad = " " * len(marker)
        lines.append(marker + "\n".join(pad + line if line and k else line
                                        for k, line in enumerate(body.split("\n"))))
    return "\n".join(lines)


def _paragraphs(pieces: list[tuple[str, str]]) -> list[str]:
    """Inline pieces as paragraphs: two or more line breaks in a row (white space between them aside) start a new
    paragraph, one is a line break; breaks and white space at a paragraph's edges go."""
    out: list[str] = []
    current: list[tuple[str, str]] = []
    breaks = 0
    for piece in pieces:
        if piece[0] == "br":
            breaks += 1
            continue
        if piece[0] == "text" and not piece[1].strip() and (breaks or not current):
            continue
        if breaks >= 2:
            out.append(_join(_trim(current)))
            current = []
        elif breaks == 1 and current:
            current.append(_BREAK)
        breaks = 0
        current.append(piece)
    out.append(_join(_trim(current)))
    return [p for p in out if p]


# ----------------------------------------------------------------------------- inline: text, emphasis, links


def _inline(nodes: list[_Node | str], active: frozenset[str], depth: int) -> list[tuple[str, str]]:
    """Inline pieces ``(kind, markdown)``: ``text`` (escaped), ``emph`` (a whole ``**...**`` / ``*...*``), ``atom``
    (a code span or a link) and ``br`` (a line break). A block element inside inline content (``<b><p>``) is set
    off by two breaks, which make paragraphs at the top and line breaks inside emphasis."""
    out: list[tuple[str, str]] = []
    for node in nodes:
        if isinstance(node, str):
            text = _SPACE.sub(" ", node)
            if text:
                out.append(("text", markdown_literal(text)))
            continue
        tag = node.tag
        if depth >= _MAX_DEPTH:  # too deep to be meant: its text only
            text = _SPACE.sub(" ", _text_of(node))
            if text:
                out.append(("text", markdown_literal(text)))
        elif tag == "br":
            out.append(_BREAK)
        elif tag == "img":
            alt = _SPACE.sub(" ", node.attrs.get("alt", "")).strip()
            if alt:
                out.append(("text", markdown_literal(alt)))
        elif tag == "code":
            code = _code_span(_text_of(node))
            if code:
                out.append(("atom", code))
        elif tag == "a":
            out.extend(_link(node, active, depth))
        elif tag in _BOLD and tag not in _BLOCKS:
            out.extend(_emphasis(_inline(node.children, active | {"bold"}, depth + 1), "**", "bold", active))
        elif tag in _ITALIC:
            out.extend(_emphasis(_inline(node.children, active | {"italic"}, depth + 1), "*", "italic", active))
        elif tag in _BLOCKS:
            inner = (_emphasis(_inline(node.children, active | {"bold"}, depth + 1), "**", "bold", active)
                     if tag in _BOLD else _inline(node.children, active, depth + 1))
            out.extend([_BREAK, _BREAK, *inner, _BREAK, _BREAK])
        else:  # (nothing else survives the cleaning; its text, to be safe)
            out.extend(_inline(node.children, active, depth + 1))
    return out


def _emphasis(pieces: list[tuple[str, str]], marker: str, style: str,
              active: frozenset[str]) -> list[tuple[str, str]]:
    """``pieces`` wrapped in ``marker`` as one ``emph`` piece; the white space and line breaks at its edges are
    moved outside (``** x**`` is not bold). Already inside the same style: the pieces as they are."""
    if style in active:
        return pieces
    lead, core, trail = _split_edges(pieces)
    if not core:
        return pieces
    return [*lead, ("emph", marker + _join(core) + marker), *trail]


def _link(node: _Node, active: frozenset[str], depth: int) -> list[tuple[str, str]]:
    """An ``<a>``: ``[text](address)`` for an absolute http(s) address, else its text alone."""
    pieces = _inline(node.children, active, depth + 1)
    href = node.attrs.get("href", "").strip()
    if not _LINK.match(href):
        return pieces
    address = quote(href, safe=_URL_SAFE)
    lead, core, trail = _split_edges([p for p in pieces if p[0] != "br"])
    label = _join(core) if core else markdown_literal(href)
    return [*lead, ("atom", f"[{label}]({address})"), *trail]


def _code_span(text: str) -> str:
    """``text`` (white space runs made one space) as a Markdown code span, fenced by more backticks than it holds
    in a row; "" for blank text."""
    text = _SPACE.sub(" ", text).strip()
    if not text:
        return ""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _text_of(node: _Node) -> str:
    """All the text inside ``node``, in order (iterative)."""
    out: list[str] = []
    stack: list[_Node | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        else:
            if item.tag == "img":
                out.append(item.attrs.get("alt", ""))
            stack.extend(reversed(item.children))
    return "".join(out)


def _split_edges(pieces: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[tuple[str, str]],
                                                          list[tuple[str, str]]]:
    """``pieces`` as (leading white space and breaks, the rest, trailing white space and breaks)."""
    pieces = list(pieces)
    lead: list[tuple[str, str]] = []
    trail: list[tuple[str, str]] = []
    while pieces and (pieces[0][0] == "br" or (pieces[0][0] == "text" and not pieces[0][1].lstrip())):
        lead.append(pieces.pop(0))
    if pieces and pieces[0][0] == "text" and pieces[0][1] != pieces[0][1].lstrip():
        text = pieces[0][1]
        lead.append(("text", text[: len(text) - len(text.lstrip())]))
        pieces[0] = ("text", text.lstrip())
    while pieces and (pieces[-1][0] == "br" or (pieces[-1][0] == "text" and not pieces[-1][1].rstrip())):
        trail.insert(0, pieces.pop())
    if pieces and pieces[-1][0] == "text" and pieces[-1][1] != pieces[-1][1].rstrip():
        text = pieces[-1][1]
        trail.insert(0, ("text", text[len(text.rstrip()):]))
        pieces[-1] = ("text", text.rstrip())
    return lead, pieces, trail


def _trim(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """A paragraph's pieces without white space at its edges, nor around its line breaks (a line must not start
    with spaces: four make a code block)."""
    _, core, _ = _split_edges(pieces)
    out: list[tuple[str, str]] = []
    for k, piece in enumerate(core):
        if piece[0] == "text":
            text = piece[1]
            if k and core[k - 1][0] == "br":
                text = text.lstrip()
            if k + 1 < len(core) and core[k + 1][0] == "br":
                text = text.rstrip()
            if not text:
                continue
            piece = ("text", text)
        out.append(piece)
    return out


# ----------------------------------------------------------------------------- joining: CommonMark's flanking rules


def _is_space(ch: str) -> bool:
    return ch in " \t\n\r\f" or unicodedata.category(ch) == "Zs"


def _is_punct(ch: str) -> bool:
    return ch in string.punctuation or unicodedata.category(ch)[0] in "PS"


def _join(pieces: list[tuple[str, str]]) -> str:
    """The pieces as one Markdown string, with a space where CommonMark would not read an emphasis's marker as
    one: a closing ``**`` after punctuation and before a letter (``**error.**The``), an opening one after a
    letter and before punctuation; two markers that would merge (``**a***b*``) get a zero-width space between."""
    out = ""
    previous = ""
    for kind, text in pieces:
        if not text:
            continue
        if out:
            out += _separator(out, previous == "emph", text, kind == "emph")
        out += text
        previous = kind
    return out


def _separator(left: str, left_emph: bool, right: str, right_emph: bool) -> str:
    """What goes between two pieces so that their emphasis markers keep their meaning (see :func:`_join`)."""
    last, first = left[-1], right[0]
    inner_last = left.rstrip("*")[-1:] if left_emph else ""
    inner_first = right.lstrip("*")[:1] if right_emph else ""
    closing_blocked = bool(inner_last) and _is_punct(inner_last) and not _is_space(first) and not _is_punct(first)
    opening_blocked = bool(inner_first) and _is_punct(inner_first) and not _is_space(last) and not _is_punct(last)
    if closing_blocked or opening_blocked:
        return " "
    if last == "*" and first == "*":  # two runs of markers would merge into one
        if (inner_last and _is_punct(inner_last)) or (inner_first and _is_punct(inner_first)):
            return " "
        return "\u200b"
    return ""
