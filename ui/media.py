"""An items question's images, audio clips and videos on the page (:mod:`evalkit.media`), and their play log.

* An image: an ``<img>`` (one ``st.html``) of the file as it is, served by Streamlit's media file manager under a
  name of its own (neither the file's path nor its name reaches the browser; ``st.image`` would re-encode it as
  JPEG and resize it, which an image-quality study must not), or, with ``[study] allow_remote_media``, of its
  URL; its ``alt`` text is the image's alternative text. Scaled down to its card (never up), never taller than
  most of the screen.
* An audio clip or a video: evalkit's player (``components/media/``, a Streamlit custom component v2: no iframe, no
  build step) given a Streamlit media URL of the file (or the remote URL). It logs play, pause, seek and end as the
  component's state: sent with the form's submit (compare, rank, realfake) or at once (score, spans), read by
  :func:`media_events` and checked on the server (:mod:`evalkit.tasks.media_log`). The ``alt`` text is shown
  under the player and read with it.
* A YouTube or Vimeo video: ``st.video`` given its address (the provider's player; not logged).

Every file goes through :func:`evalkit.media.local_file` again when it is shown (inside the media folder, links
resolved): a file changed into a link to elsewhere after the study opened is not shown. A file that cannot be shown
says so in plain words, without its path.

May import: Streamlit, ``evalkit``'s public names and ``ui.navigation``; never ``pages``.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
import streamlit.components.v2 as components_v2
from streamlit import runtime

from evalkit.media import Media, MediaError, local_file, mime_type
from evalkit.sampling import Question
from evalkit.tasks.media_log import clips

from .navigation import APP_DIR

__all__ = ["MEDIA_CSS", "MediaShow", "has_media", "image_html", "media_events", "media_key"]

_LOG = logging.getLogger(__name__)
_COMPONENTS = APP_DIR / "components"
#: The media player, registered once per process (its JS and CSS are files of the repository, sent inline; the
#: stylesheet after the widgets' shared one, as ``ui.component_css`` sends it)
PLAYER = components_v2.component(
    "evalkit_media", js=(_COMPONENTS / "media" / "media.js").read_text(encoding="utf-8"),
    css=(_COMPONENTS / "common.css").read_text(encoding="utf-8")
    + (_COMPONENTS / "media" / "media.css").read_text(encoding="utf-8"), isolate_styles=True)
#: Images scale down to their card (never up: a small image stays sharp) and stay below 60 % of the screen's height
MEDIA_CSS = (".evalkit-image {display: block; max-width: 100%; max-height: 60vh; width: auto; height: auto; "
             "object-fit: contain; margin: 0 auto; border-radius: 0.25rem;}")


def image_html(src: str, alt: str) -> str:
    """The ``<img>`` of an image (``src``: a Streamlit media URL or an allowed remote URL; ``alt``: its text), both
    escaped, with its stylesheet."""
    return (f'<img class="evalkit-image" data-testid="evalkit-image" src="{html.escape(src)}" '
            f'alt="{html.escape(alt)}"><style>{MEDIA_CSS}</style>')


def media_key(question: Question, clip: str) -> str:
    """The player's key for ``clip`` (``"input"`` or an output's label) of ``question``: a new key per question,
    without "__" (Streamlit's, in its trigger ids)."""
    return f"{question.task}-{question.index}-media-{clip}".replace("__", "_~")


def has_media(question: Question) -> bool:
    """Whether the question shows a media value (its input or an output)."""
    return question.input_media is not None or any(m is not None for m in question.media)


def media_events(question: Question) -> dict[str, Any]:
    """The play log of each of the question's clips as its player last sent it (``{"input" or label: [event,
    ...]}``), for the record functions, which check it (:func:`evalkit.tasks.media_log.media_detail`)."""
    out: dict[str, Any] = {}
    for clip, _model, _media in clips(question):
        state = st.session_state.get(media_key(question, clip))
        events = state.get("events") if isinstance(state, Mapping) else getattr(state, "events", None)
        if events is not None:
            out[clip] = events
    return out


def _served_url(path: Path, media: Media, coordinates: str) -> str:
    """A Streamlit media URL of the file (its media file manager: the file's bytes under an id, for this session),
    with the server's base path when it has one."""
    url = runtime.get_instance().media_file_mgr.add(str(path), mime_type(media), coordinates)
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{url}" if base and url.startswith("/") else url


@dataclass(frozen=True)
class MediaShow:
    """What a page needs to show one question's media: the question, the study's folder (paths are relative to it)
    and its media folder (every file must be in it)."""

    question: Question
    base: Path
    folder: Path

    @classmethod
    def of(cls, study: Any, question: Question) -> MediaShow:
        """For ``question`` of a study (:class:`evalkit.config.Study`)."""
        return cls(question=question, base=study.path.parent, folder=study.media_folder)

    def output(self, k: int, label: str) -> None:
        """Draw output ``k``'s media (display order; ``label``: its card's heading, for a screen reader)."""
        media = self.question.media_of(k)
        assert media is not None
        self.show(media, self.question.labels[k], label)

    def input(self, label: str) -> None:
        """Draw the input's media (``label``: its card's heading)."""
        assert self.question.input_media is not None
        self.show(self.question.input_media, "input", label)

    def show(self, media: Media, clip: str, label: str) -> None:
        """Draw ``media`` (``clip``: ``"input"`` or the output's label; ``label``: its card's heading, for a screen
        reader)."""
        question = self.question
        source: str | None = media.url
        if media.path is not None:
            try:
                source = str(local_file(media, self.base, self.folder))
            except MediaError as exc:  # (checked when the study opened: the file changed since)
                _LOG.error("media of %s/%s not shown: %s", question.task, clip, exc)
                st.warning("This file cannot be shown (it is missing on the server). Please tell the researcher; "
                           "you may answer from what you can see.", icon=":material/broken_image:")
                return
        assert source is not None
        key = media_key(question, clip)
        if media.type == "image":
            src = source if media.remote else _served_url(Path(source), media, f"evalkit-media:{key}")
            st.html(image_html(src, media.alt or label))
        elif media.embed:
            st.video(source)
            if media.alt:
                st.caption(media.alt)
        else:
            src = source if media.remote else _served_url(Path(source), media, f"evalkit-media:{key}")
            PLAYER(key=key, data={"clip": f"{question.task}-{question.index}-{clip}", "type": media.type,
                                  "src": src, "alt": media.alt, "label": label})
