"""The play log of a question's audio clips and videos, checked on the server: what goes into an answer's
``detail["media"]``, and ``require_full_play`` (an answer is refused until each clip was played to the end).

The page's media player (``components/media/``) logs, per clip, each play, pause, seek and end as ``{"action":
"play" | "pause" | "seek" | "ended", "t": ms since the clip was shown, "at": the clip's time in seconds}``; the
page hands them over keyed by what the clip is: ``"input"`` or an output's display label (``"A"``, ``"B"``, ...).
Nothing sent is trusted: :func:`media_detail` keeps the entries of the question's own playable clips whose action,
times and types are right (at most :data:`MAX_EVENTS` per clip, the newest), and writes them as Pearmut logs its
media actions::

    {"action": "media_play", "src": "media/clip-1.wav", "model": "gpt4", "time": 5120, "media_time": 0.0}

``src``: the clip's path or URL; ``model``: the output's system, or ``"src"`` for the input (server-side only, as
every ``detail``). A clip counts as played to the end when its log has an ``ended`` (the browser's event when
playback reaches the end). YouTube and Vimeo players are not logged, nor required.

Floor: task kinds; what it may import: :mod:`evalkit.tasks` (``.importlinter``), the core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .base import SurveyError

if TYPE_CHECKING:
    from ..media import Media
    from ..question import Question

__all__ = ["ACTIONS", "MAX_EVENTS", "clips", "media_detail", "not_played", "with_media"]

#: what the player sends -> the action stored (Pearmut's names, and ``media_ended``)
ACTIONS = {"play": "media_play", "pause": "media_pause", "seek": "media_seek", "ended": "media_ended"}
#: the most entries kept per clip (the newest): a record of how the clip was heard, not the answer
MAX_EVENTS = 200
#: a clip's time, in seconds, is below this (a day): anything else is not a time
_MAX_SECONDS = 86_400.0
_MAX_MS = 7 * 86_400_000


def clips(question: Question) -> list[tuple[str, str, Media]]:
    """The question's playable clips (audio and video, not YouTube / Vimeo players) as ``(key, model, media)``:
    ``("input", "src", ...)`` first, then each output's ``(label, system, ...)`` in display order."""
    out = []
    if question.input_media is not None and question.input_media.playable:
        out.append(("input", "src", question.input_media))
    for k, label in enumerate(question.labels):
        media = question.media_of(k)
        if media is not None and media.playable:
            out.append((label, question.sources[k], media))
    return out


def _events(raw: Any) -> list[tuple[str, int, float]]:
    """One clip's entries that are right, as (action, ms, seconds), the newest :data:`MAX_EVENTS`."""
    out = []
    for entry in (raw if isinstance(raw, list) else [])[-MAX_EVENTS:]:
        if not isinstance(entry, Mapping) or entry.get("action") not in ACTIONS:
            continue
        t, at = entry.get("t"), entry.get("at")
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= _MAX_MS:
            continue
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at) \
                or not 0 <= at <= _MAX_SECONDS:
            continue
        out.append((entry["action"], t, round(float(at), 3)))
    return out


def media_detail(question: Question, sent: Any) -> list[dict[str, Any]]:
    """The play log of ``question``'s clips from what the page sent (see the module's docstring), in the clips'
    order; entries of clips the question does not have, or not right, are dropped."""
    given = sent if isinstance(sent, Mapping) else {}
    out: list[dict[str, Any]] = []
    for key, model, media in clips(question):
        for action, t, at in _events(given.get(key)):
            out.append({"action": ACTIONS[action], "src": media.where, "model": model, "time": t, "media_time": at})
    return out


def not_played(question: Question, log: list[dict[str, Any]], *, noun: str = "Response",
               input_label: str = "Input") -> str | None:
    """With ``require_full_play``: the message refusing an answer whose log has no end of some clip (naming each
    as the page heads it: the input's card, "Response A", ...), None when every clip was played to the end."""
    ended = {(entry["src"], entry["model"]) for entry in log if entry["action"] == "media_ended"}
    left = []
    for key, model, media in clips(question):
        if (media.where, model) not in ended:
            left.append(input_label if key == "input" else (f"{noun} {key}" if len(question.labels) > 1 else noun))
    if not left:
        return None
    what = "it" if len(left) == 1 else "each of them"
    return (f"Please play {' and '.join(left) if len(left) < 3 else ', '.join(left)} to the end before answering "
            f"(press ▶ and listen or watch until it stops; {what} must reach its end). Nothing has been saved yet.")


def with_media(question: Question, detail: dict[str, Any] | None, sent: Any, *, full_play: bool = False,
               noun: str = "Response", input_label: str = "Input") -> dict[str, Any] | None:
    """``detail`` with the question's play log under ``"media"`` (left as it is when there is none); with
    ``full_play`` a :class:`~evalkit.tasks.base.SurveyError` (:func:`not_played`) unless every clip was played
    to the end."""
    if not clips(question):
        return detail
    log = media_detail(question, sent)
    if full_play:
        problem = not_played(question, log, noun=noun, input_label=input_label)
        if problem:
            raise SurveyError(problem)
    if not log:
        return detail
    return {**(detail or {}), "media": log}
