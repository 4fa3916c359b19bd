"""Media values: an image, an audio clip or a video standing where an item holds a text (its input, an output).

The JSON object form (in an items file, in place of a text)::

    {"type": "image", "path": "media/cat-1.png", "alt": "A grey cat on a sofa"}
    {"type": "audio", "url": "https://example.org/clip.ogg", "alt": "A man reading a sentence"}

* ``type``: ``image``, ``audio`` or ``video``; exactly one of ``path`` and ``url``; ``alt`` (optional): the words
  a screen reader says, shown under a clip and used as the image's alternative text.
* ``path``: relative to the study's folder (the config's), e.g. ``media/cat-1.png``, and inside the study's media
  folder (``[study] media``, default ``media``) once ``..`` and symbolic links are resolved
  (:func:`local_file`); its extension must be one of the type's (:data:`EXTENSIONS`; no SVG: it can hold
  scripts). An absolute path, a ``..`` that leaves the folder, a link out of it, a hidden file: refused.
* ``url``: ``http`` or ``https`` only (``javascript:``, ``data:``, ``file:`` ... are refused), and only in a study
  with ``[study] allow_remote_media = true`` (:func:`remote_problem`): every evaluator's browser then asks that
  host for the file, which sends it the evaluator's address. A YouTube or Vimeo address is a player page
  (:attr:`Media.embed`), shown in the provider's frame.

:func:`from_html` reads Pearmut's media HTML (``<img>``, ``<audio>``, ``<video>``, a YouTube or Vimeo ``<iframe>``)
into this form, for the Pearmut importer: only the ``src`` (or a ``<source>`` child's) and ``alt`` / ``title``
are taken; every other attribute (``onerror=``, ``style``, ...) is dropped, and any other HTML is not media (it
stays a text, shown as text).

Where a text is needed (exports, analysis, length checks) a media value stands as :meth:`Media.placeholder`, its
path or URL: the items keep a string there (:mod:`evalkit.items`), the value itself is kept beside it.

Pure standard library. Floor: core (``.importlinter``); imports nothing from evalkit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import urlsplit

__all__ = ["EMBED_HOSTS", "EXTENSIONS", "TYPES", "Media", "MediaError", "from_html", "hosts", "local_file",
           "mime_type", "parse", "remote_problem"]

#: The media types an item may hold.
TYPES = ("image", "audio", "video")
#: The file extensions each type takes (a file's type is told by its extension, as the browser is told by the
#: server). No SVG: an SVG opened on its own runs the scripts it holds.
EXTENSIONS: Mapping[str, Mapping[str, str]] = {
    "image": {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
              ".webp": "image/webp", ".avif": "image/avif"},
    "audio": {".wav": "audio/wav", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg",
              ".opus": "audio/ogg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".flac": "audio/flac",
              ".weba": "audio/webm"},
    "video": {".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".ogv": "video/ogg",
              ".mov": "video/quicktime"},
}
#: The hosts whose addresses are video players (shown in the provider's frame, no play log): YouTube and Vimeo.
EMBED_HOSTS = ("youtube.com", "youtube-nocookie.com", "youtu.be", "vimeo.com")
#: The keys of the object form.
_KEYS = frozenset(("type", "path", "url", "alt"))
#: The longest ``alt`` text and path or URL kept (a value is one line of an items file, not a document).
MAX_ALT = 1000
MAX_WHERE = 2000


class MediaError(ValueError):
    """A media value breaks the rules; the message says what and how to fix it (the caller adds where)."""


@dataclass(frozen=True, slots=True)
class Media:
    """One image, audio clip or video: a ``path`` in the study's media folder or a remote ``url`` (one of them)."""

    type: str
    path: str | None = None
    url: str | None = None
    alt: str = ""

    @property
    def where(self) -> str:
        """The path or the URL, as written."""
        return self.path if self.path is not None else self.url or ""

    @property
    def remote(self) -> bool:
        """Whether the file is on another server (a ``url``)."""
        return self.url is not None

    @property
    def host(self) -> str | None:
        """The host a remote file comes from (lower case), None for a local file."""
        return None if self.url is None else (urlsplit(self.url).hostname or "").lower()

    @property
    def embed(self) -> bool:
        """Whether this is a video player's page (YouTube, Vimeo): shown in the provider's frame, never logged."""
        host = self.host
        return self.type == "video" and host is not None and any(
            host == h or host.endswith("." + h) for h in EMBED_HOSTS)

    @property
    def playable(self) -> bool:
        """An audio clip or a video whose play, pause and seek the page logs (not a player page)."""
        return self.type in ("audio", "video") and not self.embed

    def placeholder(self) -> str:
        """The text that stands for the value where a text is needed (exports, analysis): its path or URL."""
        return self.where

    def as_json(self) -> dict[str, str]:
        """The JSON object form (``alt`` left out when empty)."""
        out = {"type": self.type, ("path" if self.path is not None else "url"): self.where}
        if self.alt:
            out["alt"] = self.alt
        return out


def _type(value: Any) -> str:
    return {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "an array",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


def parse(value: Any) -> Media:
    """The object form as a :class:`Media` (MediaError saying what is wrong: a missing or unknown key, a type that
    is not one of :data:`TYPES`, both or neither of ``path`` and ``url``, a path that is absolute or has a scheme,
    an extension the type does not take, a URL that is not ``http(s)``)."""
    if not isinstance(value, Mapping):
        raise MediaError(f"a media value is an object like {{\"type\": \"image\", \"path\": \"media/x.png\"}}, got "
                         f"{_type(value)}")
    extra = sorted(set(value) - _KEYS)
    if extra:
        raise MediaError(f"key {extra[0]!r} is not a key of a media value (type, path or url, alt)")
    kind = value.get("type")
    if kind not in TYPES:
        raise MediaError(f"'type' must be one of {', '.join(TYPES)}, got {kind!r}"[:300])
    alt = value.get("alt")
    if alt is None:
        alt = ""
    if not isinstance(alt, str) or len(alt) > MAX_ALT:
        raise MediaError(f"'alt' must be a text of at most {MAX_ALT} characters")
    alt = " ".join(alt.split())
    path, url = value.get("path"), value.get("url")
    if (path is None) == (url is None):
        raise MediaError("give exactly one of 'path' (a file in the study's media folder) and 'url'")
    if path is not None:
        return Media(kind, path=check_path(path, kind), alt=alt)
    return Media(kind, url=check_url(url), alt=alt)


def check_path(path: Any, kind: str) -> str:
    """A media path as written, checked without the file system: a relative path with no scheme, no NUL, no
    backslash, and an extension of ``kind``. Whether it stays in the media folder is :func:`local_file`'s."""
    if not isinstance(path, str) or not path.strip():
        raise MediaError(f"'path' must be a non-empty text, got {_type(path)}")
    if len(path) > MAX_WHERE or "\x00" in path or any(c in path for c in "\r\n\t"):
        raise MediaError("'path' is too long or holds control characters")
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) and not PureWindowsPath(path).drive:
        raise MediaError(f"'path' {path[:100]!r} is an address, not a file path: a remote file goes under 'url' "
                         "(http or https only)")
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive \
            or "\\" in path:
        raise MediaError(f"'path' {path[:100]!r} must be relative to the study's folder, with '/' between folders, "
                         "e.g. media/x.png (an absolute path is refused: the files come from the media folder only)")
    suffix = PurePosixPath(path).suffix.lower()
    if suffix not in EXTENSIONS[kind]:
        raise MediaError(f"'path' {path[:100]!r}: a file of type {kind} ends in one of "
                         f"{', '.join(EXTENSIONS[kind])}, not {suffix or 'nothing'!r}")
    return path


def check_url(url: Any) -> str:
    """A media URL: ``http`` or ``https`` with a host, no user name or password, no white space."""
    if not isinstance(url, str) or not url.strip():
        raise MediaError(f"'url' must be a non-empty text, got {_type(url)}")
    if len(url) > MAX_WHERE or re.search(r"[\s\x00-\x1f\x7f]", url):
        raise MediaError("'url' is too long or holds spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        raise MediaError(f"'url' {url[:100]!r} is not a valid address") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise MediaError(f"'url' {url[:100]!r}: only http and https addresses are allowed "
                         f"(not {parts.scheme or 'a relative address'!r})")
    if not host or "@" in parts.netloc:
        raise MediaError(f"'url' {url[:100]!r} needs a host (and no user name or password)")
    return url


def local_file(media: Media, base: Path, folder: Path) -> Path:
    """The file of a local media value: ``base / media.path`` with ``..`` and symbolic links resolved, which must
    be a file inside ``folder`` (the study's media folder, resolved too) and not hidden. MediaError otherwise
    (the path leaves the folder, the file is missing)."""
    if media.path is None:
        raise MediaError(f"{media.where!r} is a remote address, not a file")
    root = folder.resolve()
    target = (base / media.path).resolve()
    if not target.is_relative_to(root):
        raise MediaError(f"'path' {media.path!r} leads outside the media folder {root} (to {target}); media files "
                         "are served from the study's media folder only")
    if any(part.startswith(".") for part in target.relative_to(root).parts):
        raise MediaError(f"'path' {media.path!r} leads to a hidden file or folder")
    if not target.is_file():
        raise MediaError(f"'path' {media.path!r}: no such file (looked for {target})")
    return target


def mime_type(media: Media) -> str:
    """The content type a local file is served with, from its extension."""
    return EXTENSIONS[media.type].get(PurePosixPath(media.path or "").suffix.lower(), "application/octet-stream")


def remote_problem(media: Media, allowed: bool) -> str | None:
    """Why a remote media value may not be shown (None when it may): a remote file needs
    ``[study] allow_remote_media = true``."""
    if media.url is None or allowed:
        return None
    return (f"'url' {media.url[:100]!r}: remote media are refused unless the study sets [study] allow_remote_media "
            "= true (each evaluator's browser would ask that host for the file, sending it the evaluator's address); "
            "put the file in the media folder and give its 'path' instead")


def hosts(values: Iterable[Media]) -> list[str]:
    """The hosts the remote values come from, sorted, each once."""
    return sorted({m.host for m in values if m.host})


# ----------------------------------------------------------------------------- Pearmut's HTML

_MEDIA_TAGS = {"img": "image", "audio": "audio", "video": "video", "iframe": "video"}
#: what may stand inside an <audio> / <video> besides its text (a "your browser cannot play this" line)
_INNER_TAGS = frozenset(("source", "track"))
_HTML_START = re.compile(r"^\s*<(img|audio|video|iframe)[\s/>]", re.IGNORECASE)


class _OneTag(HTMLParser):
    """Collects the tags of a fragment; notes whether it holds anything but one media element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.other = False
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.tags and (tag not in _INNER_TAGS or self.tags[0][0] not in ("audio", "video")):
            self.other = True
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        # text inside <audio> / <video> is the fallback a browser shows when it cannot play; anything else is text
        inside = bool(self.tags) and self.tags[0][0] in ("audio", "video") and not self.closed
        if data.strip() and not inside:
            self.other = True

    closed = False

    def handle_endtag(self, tag: str) -> None:
        if self.tags and tag == self.tags[0][0]:
            self.closed = True
        elif tag not in _INNER_TAGS:
            self.other = True


def from_html(text: str) -> dict[str, str] | None:
    """The media object form (``{"type", "path" or "url", "alt"}``) of Pearmut's media HTML, or None when
    ``text`` is not exactly one media element (it then stays a text, shown as text).

    Recognised: ``<img src alt>``, ``<audio src>`` / ``<video src>`` or with a ``<source src>`` child, and an
    ``<iframe src>`` of YouTube or Vimeo (a video by URL). The ``alt`` (or ``title``) is kept; every other attribute
    is dropped. An ``http(s)`` or protocol-relative (``//host/...``) ``src`` is a ``url``; a relative one a ``path``
    (``./`` dropped); any other scheme (``javascript:``, ``data:``) or an iframe of another host is not media.
    The result is not checked against the media folder or the study's settings: loading the items does that."""
    if not isinstance(text, str) or not _HTML_START.match(text):
        return None
    parser = _OneTag()
    try:
        parser.feed(text)
        parser.close()
    except Exception:  # (the standard parser raises nothing on bad HTML; a guard all the same)
        return None
    if parser.other or not parser.tags:
        return None
    tag, attrs = parser.tags[0]
    src = attrs.get("src", "").strip()
    if not src and tag in ("audio", "video"):
        src = next((a.get("src", "").strip() for t, a in parser.tags[1:] if t == "source" and a.get("src")), "")
    if not src:
        return None
    alt = " ".join((attrs.get("alt") or attrs.get("title") or attrs.get("aria-label") or "").split())
    kind = _MEDIA_TAGS[tag]
    if src.startswith("//"):
        src = "https:" + src
    scheme = urlsplit(src).scheme.lower() if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", src) else ""
    out: dict[str, str] = {"type": kind}
    if scheme in ("http", "https"):
        out["url"] = src
        if tag == "iframe" and not Media("video", url=src).embed:
            return None
    elif scheme or tag == "iframe":
        return None
    else:
        while src.startswith("./"):
            src = src[2:]
        out["path"] = src
    if alt:
        out["alt"] = alt
    return out
