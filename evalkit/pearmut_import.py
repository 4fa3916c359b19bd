"""A Pearmut campaign file made into an evalkit study folder: ``python -m evalkit import pearmut CAMPAIGN.json``.

Pearmut (https://github.com/zouharvi/pearmut) keeps a study as one JSON campaign: ``campaign_id``, ``info`` (the
protocol, how documents are assigned, users, instructions, sliders, ...), ``data`` (documents, each a list of items
``{item_id, src, tgt: {model: text}, instructions, validation, error_spans}``), ``data_welcome`` (tutorials and
forms everyone does first) and ``data_random`` (spot checks). :func:`import_campaign` reads one, refuses what it
cannot carry over (every unknown key is an error naming it), and writes:

* ``config.toml``: the ``[study]`` and its ``[[tasks]]`` (a ``form`` task for the welcome forms, then one
  ``spans`` task for ESA / MQM / cESA or one ``score`` task for DA and custom protocols);
* ``datasets/items.jsonl``: every document and check item (documents of the span protocols as document items,
  scored per segment; DA's documents one segment per question, in order); repeated ``item_id`` s get unique ids,
  the original kept in ``meta.pearmut``;
* ``datasets/assignments.csv`` (task-based: each user's documents in order, ``assignment = "fixed"``) and
  ``datasets/participants.csv`` (the users, with their own pass / fail codes when the campaign gives
  ``token_pass`` / ``token_fail``), for ``evalkit invite --csv``;
* ``consent.md`` (a placeholder to replace) and ``IMPORT.md``, the table of every key and what it became.

What each key becomes is :data:`INFO_KEYS` and :data:`TOP_KEYS` (the documentation's "Coming from Pearmut" page
shows the same table). Pearmut's character indexes (UTF-16 units, line breaks left out, ``end_i`` inclusive)
are kept as they are: evalkit's items and checks read them in Pearmut's convention.

Floor: app services (``.importlinter``). May import the core (:mod:`evalkit.datafiles`, :mod:`evalkit.markup`,
:mod:`evalkit.media`, :mod:`evalkit.text`); it writes files and never opens the study (the command line checks the
folder it wrote with ``evalkit check``).
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import math
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import nh3
import tomli_w

from .datafiles import read_text
from .markup import html_to_markdown
from .media import from_html
from .text import id_problem, is_code

__all__ = ["INFO_KEYS", "ITEM_KEYS", "PEARMUT_MQM", "TOP_KEYS", "ImportResult", "PearmutError", "Row",
           "import_campaign", "read_campaign"]


class PearmutError(ValueError):
    """A campaign evalkit cannot import as it is; the message names the file, the key and the item."""


#: The campaign's top-level keys and what each becomes.
TOP_KEYS: Mapping[str, str] = {
    "campaign_id": "the study's title and the folder's name",
    "info": "the settings below",
    "data": "the items file (documents, in order) and, task-based, each user's list",
    "data_welcome": "forms: a form task first; evaluation items with validation: the task's tutorial",
    "data_random": "attention checks mixed into every participant's questions",
    "token": "not used: the results page has its own password ([secrets] results_password)",
}
#: ``info``'s keys and what each becomes ("not supported: why" for the ones evalkit leaves out, reported).
INFO_KEYS: Mapping[str, str] = {
    "assignment": "task-based: assignment = \"fixed\" (each user's documents in order); single-stream: the "
                  "shared queue (judgments_per_item = 1); dynamic: the shared queue (evalkit's allocation "
                  "is not adaptive)",
    "protocol": "DA and custom protocols: kind = \"score\"; ESA: kind = \"spans\", protocol = \"esa\"; MQM: "
                "protocol = \"mqm\"; cESA: protocol = \"esa\", outputs side by side",
    "users": "[study] participants = \"invited\" and datasets/participants.csv (evalkit invite --csv)",
    "shuffle": "shuffle (fixed lists) / position balancing (queue)",
    "show_model_names": "[study] blind = false (evalkit check warns)",
    "instructions": "the task's instructions",
    "instructions_goodbye": "[study] done_message (${TOKEN}, ${USER_ID} kept)",
    "sliders": "[[tasks.scales]], one slider each",
    "textfield": "the score kind's textfield (hidden/visible: comment, prefilled: post-edit)",
    "mqm_categories": "categories",
    "mqm_severities": "severities (lower-cased, as Pearmut stores them)",
    "special_tokens": "missing_token (\"[missing]\" only)",
    "word_level": "word_level",
    "validation_threshold": "[study.quality] max_failed_checks",
    "docs_per_user": "questions per participant (queue)",
    "data_random_prob": "not supported: every participant gets every data_random check (a note says so)",
    "dynamic_models": "outputs_per_question (queue)",
    "dynamic_coldstart": "not supported: evalkit's queue is not adaptive",
    "dynamic_coldstart_pool": "not supported: evalkit's queue is not adaptive",
    "dynamic_warmup": "not supported: evalkit's queue is not adaptive",
    "dynamic_top": "not supported: a key of Pearmut before 1.1",
    "dynamic_first": "not supported: a key of Pearmut before 1.1",
    "dynamic_contrastive_models": "not supported: a key of Pearmut before 1.1",
    "dynamic_backoff": "not supported: a key of Pearmut before 1.1",
    "show_alignment": "not supported: evalkit draws no source-target alignment",
    "show_progress": "not supported: evalkit always shows the progress",
    "slider_colors": "not supported: evalkit's sliders are not coloured",
    "template": "not supported: evalkit has one page per kind",
    "assets": "the study's media folder (media/)",
}
#: An evaluation item's keys and what each becomes.
ITEM_KEYS: Mapping[str, str] = {
    "item_id": "id (made unique; the original in meta.pearmut)",
    "src": "input",
    "tgt": "outputs",
    "ref": "reference",
    "instructions": "instructions (HTML shown as safe Markdown, never run)",
    "validation": "check (per system: score ranges, error_spans, score_greaterthan, the warning as its "
                  "feedback); in data and data_welcome, with a warning: a tutorial question that must be "
                  "corrected, without: a silent attention check; in data_random: an attention check",
    "error_spans": "error_spans (ESA-AI suggestions, prefill = true)",
    "skippable": "tutorial_skippable",
}
#: Pearmut's built-in MQM taxonomy (used when ``mqm_categories`` is not given).
PEARMUT_MQM: Mapping[str, tuple[str, ...]] = {
    "Terminology": ("Inconsistent with terminology resource", "Inconsistent use of terminology", "Wrong term"),
    "Accuracy": ("Mistranslation", "Overtranslation", "Undertranslation", "Addition", "Omission", "Do not translate",
                 "Untranslated"),
    "Linguistic conventions": ("Grammar", "Punctuation", "Spelling", "Unintelligible", "Character encoding",
                               "Textual conventions"),
    "Style": ("Organization style", "Third-party style", "Inconsistent with external reference", "Language register",
              "Awkward style", "Unidiomatic style", "Inconsistent style"),
    "Locale convention": ("Number format", "Currency format", "Measurement format", "Time format", "Date format",
                          "Address format", "Telephone format", "Shortcut key"),
    "Audience appropriateness": ("Culture-specific reference", "Offensive"),
    "Design and markup": ("Layout", "Markup tag", "Truncation/text expansion", "Missing text",
                          "Link/cross-reference"),
    "Other": (),
}
_SPAN_PROTOCOLS = {"esa": "esa", "cesa": "esa", "esa-ai": "esa", "esaai": "esa", "mqm": "mqm"}
#: Pearmut's protocols that ask for scores only (any other name is imported so too, with a note)
_SCORE_PROTOCOLS = ("da",)
#: the most users a campaign may name (each is an invited participant with a private link)
MAX_USERS = 100_000
_FORM_TYPES = {"string": "text", "number": "number", "choices": "choice"}
_DEFAULT_FEEDBACK = "That is not what we expected here."
_ITEM_EXTRA = ("item_id", "src", "tgt", "ref", "instructions", "validation", "error_spans", "skippable", "_media")


@dataclass(frozen=True)
class Row:
    """One line of the mapping table: a campaign key, its value (shortened), and what it became."""

    key: str
    value: str
    became: str


@dataclass
class ImportResult:
    """What :func:`import_campaign` wrote and the mapping table it printed."""

    folder: Path
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    #: the campaign's id
    campaign_id: str = ""
    #: each Pearmut document's evalkit items, by the ``item_i`` its annotation log names it with: ``"<user>/<k>"``
    #: for a task-based campaign's k-th document of a user, ``"<k>"`` for a shared one, ``"welcome_<k>"``,
    #: ``"random_<k>"``
    documents: dict[str, list[str]] = field(default_factory=dict)

    def table(self) -> str:
        """The mapping table as Markdown (printed by the command, written to ``IMPORT.md``)."""
        lines = ["| Pearmut key | value | in evalkit |", "|---|---|---|"]
        lines += [f"| `{r.key}` | {_cell(r.value)} | {_cell(r.became)} |" for r in self.rows]
        return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ----------------------------------------------------------------------------- reading


def read_campaign(path: Path) -> dict[str, Any]:
    """The campaign object of a Pearmut campaign file; PearmutError naming the problem (a file of several
    campaigns holds one per import)."""
    text = read_text(path, PearmutError)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PearmutError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); a Pearmut "
                           "campaign file is one JSON object") from None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if isinstance(data, list):
        raise PearmutError(f"{path}: holds {len(data)} campaigns; import them one at a time (one file each)")
    if not isinstance(data, dict):
        raise PearmutError(f"{path}: a campaign is a JSON object with campaign_id, info and data, got "
                           f"{type(data).__name__}")
    return data


# ----------------------------------------------------------------------------- the campaign's parts


class _Campaign:
    """One campaign being read: the checks of its keys and the items written, with the messages' prefix."""

    def __init__(self, path: Path, data: dict[str, Any], users: Sequence[str] = ()) -> None:
        self.path = path
        self.known_users = list(users)
        self.where = path.name
        unknown = sorted(set(data) - set(TOP_KEYS))
        if unknown:
            raise PearmutError(f"{self.where}: unknown campaign key {unknown[0]!r} (Pearmut's keys: "
                               f"{', '.join(TOP_KEYS)}); remove it, or move extra data into the items")
        cid = data.get("campaign_id")
        if not isinstance(cid, str) or not cid.strip():
            raise PearmutError(f"{self.where}: 'campaign_id' must be a non-empty string, got {_short(cid)}")
        self.id = cid
        info = data.get("info", {})
        if not isinstance(info, dict):
            raise PearmutError(f"{self.where}: 'info' must be an object, got {type(info).__name__}")
        unknown = sorted(set(info) - set(INFO_KEYS))
        if unknown:
            raise PearmutError(f"{self.where}: info: unknown key {unknown[0]!r}; evalkit knows Pearmut's keys "
                               f"{', '.join(sorted(INFO_KEYS))}")
        self.info = info
        self.data = data
        self.assignment = info.get("assignment", "single-stream")
        if self.assignment not in ("task-based", "single-stream", "dynamic"):
            raise PearmutError(f"{self.where}: info: 'assignment' must be task-based, single-stream or dynamic, got "
                               f"{_short(self.assignment)}")
        protocol = info.get("protocol", "ESA")
        if not isinstance(protocol, str) or not protocol:
            raise PearmutError(f"{self.where}: info: 'protocol' must be a string, got {_short(protocol)}")
        self.protocol = protocol
        self.spans = _SPAN_PROTOCOLS.get(protocol.lower())
        self.unknown_protocol = self.spans is None and protocol.lower() not in _SCORE_PROTOCOLS
        self.ids: dict[str, str] = {}  # content key -> evalkit id
        self.used: set[str] = set()
        self.items: list[dict[str, Any]] = []
        self.systems: dict[str, None] = {}
        self.skippable = False
        self.prefill = False
        self.remote: dict[str, None] = {}  # the hosts of remote media, in first-seen order
        self.assets = self._assets(info.get("assets"))

    def _assets(self, value: Any) -> tuple[Path, str] | None:
        """``info.assets`` (``{"source": folder, "destination": "assets/..."}``): the folder (beside the campaign
        file, else the working directory, as Pearmut resolves it) and the destination under ``assets/``."""
        if value is None:
            return None
        if not isinstance(value, dict) or set(value) != {"source", "destination"} or not all(
                isinstance(v, str) and v.strip() for v in value.values()):
            raise self.fail("info.assets", "must be {\"source\": a folder, \"destination\": \"assets/...\"}")
        dest = value["destination"].strip("/")
        if not dest.startswith("assets/") or ".." in dest.split("/"):
            raise self.fail("info.assets", f"destination must start with 'assets/', got {value['destination']!r}")
        for base in (self.path.parent, Path.cwd()):
            folder = (base / value["source"]).resolve()
            if folder.is_dir():
                return folder, dest[len("assets/"):]
        raise self.fail("info.assets", f"source {value['source']!r} is not a folder (looked beside the campaign "
                                       "file and in the working directory)")

    def fail(self, where: str, message: str) -> PearmutError:
        return PearmutError(f"{self.where}: {where}: {message}")

    # -- documents

    def documents(self, value: Any, where: str) -> list[list[dict[str, Any]]]:
        """A list of documents (each a non-empty list of item objects)."""
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list of documents (lists of items), got {type(value).__name__}")
        out = []
        for k, doc in enumerate(value):
            if isinstance(doc, dict):  # (a bare item where a document goes: Pearmut wants a list)
                raise self.fail(f"{where}[{k}]", "is an item; a document is a list of items: wrap it in [ ]")
            if not isinstance(doc, list) or not doc or not all(isinstance(i, dict) for i in doc):
                raise self.fail(f"{where}[{k}]", "must be a non-empty list of item objects")
            out.append(doc)
        return out

    def tasks(self) -> list[tuple[str, list[list[dict[str, Any]]]]]:
        """(user id, documents) of a task-based campaign, in order; the users from ``users`` or generated."""
        data = self.data.get("data")
        if isinstance(data, dict):  # the stored form of a running campaign: {user_id: [documents]}
            for u in data:
                problem = id_problem(str(u))
                if problem:
                    raise self.fail(f"data[{u!r}]", f"{problem} (evalkit's ids travel in private links)")
            return [(str(u), self.documents(docs, f"data[{u!r}]")) for u, docs in data.items()]
        if not isinstance(data, list) or not data:
            raise self.fail("data", "a task-based campaign's data is a non-empty list of tasks (one per user), "
                                    "each a list of documents")
        tasks = [self.documents(task, f"data[{k}]") for k, task in enumerate(data)]
        users = self.user_ids(len(tasks))
        return list(zip(users, tasks, strict=True))

    def user_ids(self, n: int | None) -> list[str]:
        """The users' ids: ``users`` as ids or objects (tokens read by :meth:`tokens`), or ``n`` generated."""
        users = self.info.get("users")
        if isinstance(users, list):
            ids = [u.get("user_id") if isinstance(u, dict) else u for u in users]
            for k, uid in enumerate(ids):
                if not isinstance(uid, str):
                    raise self.fail(f"info.users[{k}]", "must be a user id or {user_id, token_pass, token_fail}")
                problem = id_problem(uid)
                if problem:
                    raise self.fail(f"info.users[{k}]", f"{problem} (evalkit's ids travel in private links)")
            if len(set(ids)) != len(ids):
                raise self.fail("info.users", "names a user twice")
            if n is not None and len(ids) != n:
                raise self.fail("info.users", f"lists {len(ids)} users; a task-based campaign has one per task ({n})")
            return ids
        if isinstance(users, int) and not isinstance(users, bool) and users > MAX_USERS:
            raise self.fail("info.users", f"{users:,} users: at most {MAX_USERS:,} (each gets a private link)")
        if users is not None and (isinstance(users, bool) or not isinstance(users, int) or users < 1):
            raise self.fail("info.users", f"must be a number of users, a list of ids or of {{user_id, ...}}, got "
                                          f"{_short(users)}")
        count = n if n is not None else int(users or 1)
        if self.known_users:  # a running campaign's users (its progress file): the ids Pearmut generated
            if n is not None and len(self.known_users) != n:
                raise self.fail("info.users", f"the saved progress has {len(self.known_users)} users; the campaign "
                                              f"has {n} tasks")
            return list(self.known_users)
        width = len(str(count))
        return [f"user-{k + 1:0{width}d}" for k in range(count)]

    def tokens(self) -> dict[str, tuple[str, str]]:
        """The users' own codes, ``{user_id: (token_pass, token_fail)}`` ("" where not given)."""
        out = {}
        users = self.info.get("users")
        for k, u in enumerate(users if isinstance(users, list) else []):
            if isinstance(u, dict):
                extra = sorted(set(u) - {"user_id", "token_pass", "token_fail"})
                if extra:
                    raise self.fail(f"info.users[{k}]", f"unknown key {extra[0]!r} (user_id, token_pass, "
                                                        "token_fail)")
                codes = tuple(str(u.get(key) or "") for key in ("token_pass", "token_fail"))
                for code in codes:
                    if code and not is_code(code):
                        raise self.fail(f"info.users[{k}]", f"token {code!r}: evalkit's completion codes are "
                                                            "1-64 letters, digits, '_' or '-'")
                out[u["user_id"]] = codes
        return out

    def check_tokens(self, users: Sequence[str]) -> None:
        """PearmutError when ``info.users`` gives tokens to an id that is not one of the campaign's users."""
        stray = sorted(set(self.tokens()) - set(users))
        if stray:
            raise self.fail("info.users", f"gives tokens to {stray[0]!r}, which is not a user of the campaign "
                                          f"(its users: {', '.join(users[:5])}{', ...' if len(users) > 5 else ''})")

    # -- items

    def item(self, obj: dict[str, Any], where: str) -> dict[str, Any]:
        """One evaluation item checked (tgt, src, ref, error_spans, instructions); its extra keys kept."""
        tgt = obj.get("tgt")
        if isinstance(tgt, str):
            raise self.fail(where, "'tgt' is a text; Pearmut and evalkit need {\"model name\": \"text\"}")
        if not isinstance(tgt, dict) or not tgt:
            raise self.fail(where, f"'tgt' must be a non-empty object of model outputs, got {_short(tgt)}")
        for model, text in tgt.items():
            if not isinstance(text, str) or not text.strip():
                raise self.fail(where, f"the output of model {model!r} must be a non-empty text, got {_short(text)}")
            self.systems.setdefault(model)
        for key in ("src", "ref", "instructions"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise self.fail(where, f"{key!r} must be a text, got {_short(obj[key])}")
        media = {model: self.media(text, f"{where}: model {model!r}") for model, text in tgt.items()}
        source = self.media(obj.get("src") or "", f"{where}: 'src'")
        if self.media(obj.get("ref") or "", f"{where}: 'ref'") is not None:
            raise self.fail(where, "'ref' is an image, a recording or a video: evalkit's references are texts")
        if source is not None or any(media.values()):
            obj = {**obj, "tgt": {m: media[m] or text for m, text in tgt.items()}, "_media": True,
                   **({"src": source} if source is not None else {})}
        if obj.get("error_spans") is not None:
            if not isinstance(obj["error_spans"], dict):
                raise self.fail(where, "'error_spans' must be {model: [spans]}")
            self.prefill = self.prefill or any(obj["error_spans"].values())
        return obj

    def media(self, text: str, where: str) -> dict[str, str] | None:
        """Pearmut's media HTML (``<img>``, ``<audio>``, ``<video>``, a YouTube or Vimeo ``<iframe>``) as evalkit's
        media value, None for a text (other HTML stays text, shown as text). A file of the campaign's ``assets``
        (``/assets/<destination>/x.png``) is the study's ``media/<destination>/x.png``; a remote one is counted
        (its host needs ``allow_remote_media``)."""
        found = from_html(text)
        if found is None:
            return None
        if "url" in found:
            self.remote.setdefault(urlsplit(found["url"]).hostname or found["url"])
            return found
        path = found["path"].lstrip("/")
        if ".." in path.split("/") or "\\" in path:
            raise self.fail(where, f"media file {found['path']!r}: a path may not go up ('..')")
        if not path.startswith("assets/") or self.assets is None:
            raise self.fail(where, f"media file {found['path']!r}: Pearmut serves a campaign's files from its "
                                   "'assets' (\"/assets/<destination>/...\"); give info.assets, or a full URL")
        rest = path[len("assets/"):]
        source, dest = self.assets
        if not rest.startswith(dest + "/") or not (source / rest[len(dest) + 1:]).is_file():
            raise self.fail(where, f"media file {found['path']!r} is not in the campaign's assets ({source})")
        return {**found, "path": f"media/{rest}"}

    def new_id(self, base: str, content: str) -> tuple[str, bool]:
        """An evalkit id for this content: the same content keeps its id; another content with a used id gets a
        suffix. Returns (id, whether it is new)."""
        if content in self.ids:
            return self.ids[content], False
        uid, k = base, 1
        while uid in self.used:
            k += 1
            uid = f"{base}~{k}"
        self.used.add(uid)
        self.ids[content] = uid
        return uid, True


def _segment(item: dict[str, Any]) -> dict[str, Any]:
    """An evaluation item's evalkit fields (input, outputs, reference, error_spans, instructions); a media text
    (:meth:`_Campaign.media`, already converted) keeps its object form, and a media output no suggested spans."""
    out: dict[str, Any] = {"input": item.get("src") or "", "outputs": item["tgt"]}
    for key, to in (("ref", "reference"), ("error_spans", "error_spans"), ("instructions", "instructions")):
        if item.get(key):
            out[to] = item[key]
    if "error_spans" in out:
        out["error_spans"] = {m: v for m, v in out["error_spans"].items() if isinstance(item["tgt"].get(m), str)}
        if not any(out["error_spans"].values()):
            del out["error_spans"]
    return out


def _plain(html_text: str) -> str:
    """A check's message from Pearmut's HTML ``warning``: its text only (nh3 drops every tag, scripts with their
    content), as the feedback is shown as text as well as Markdown."""
    text = html.unescape(nh3.clean(re.sub(r"(?i)<br\s*/?>", " ", html_text), tags=set()))
    return " ".join(text.split())


def _extra(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in _ITEM_EXTRA}


# ----------------------------------------------------------------------------- the import


class _Builder:
    """Builds the study's items, lists and tasks from a :class:`_Campaign`."""

    def __init__(self, c: _Campaign, result: ImportResult) -> None:
        self.c = c
        self.result = result
        sliders = c.info.get("sliders")
        self.scales = self._scales(sliders) if sliders is not None else None
        self.tutorial: list[str] = []
        self.attention: list[str] = []

    def note(self, text: str) -> None:
        self.result.notes.append(text)

    def _scales(self, sliders: Any) -> list[dict[str, Any]]:
        if not isinstance(sliders, list):
            raise self.c.fail("info.sliders", "must be a list of {name, min, max, step}")
        out, ids = [], set()
        for k, s in enumerate(sliders):
            if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not s["name"].strip():
                raise self.c.fail(f"info.sliders[{k}]", "must be {name, min, max, step} with a name")
            extra = sorted(set(s) - {"name", "min", "max", "step"})
            if extra:
                raise self.c.fail(f"info.sliders[{k}]", f"unknown key {extra[0]!r} (name, min, max, step)")
            low, high, step = s.get("min", 0), s.get("max", 100), s.get("step", 1)
            for key, v in (("min", low), ("max", high), ("step", step)):
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v != int(v):
                    raise self.c.fail(f"info.sliders[{k}]", f"{key} = {_short(v)}: evalkit's sliders take whole "
                                                            "numbers")
            if low >= high:
                raise self.c.fail(f"info.sliders[{k}]", f"min ({low}) must be less than max ({high})")
            if step != 1:
                self.note(f"Slider {s['name']!r}: step {step} is not kept (evalkit's sliders move in steps of 1).")
            sid = re.sub(r"[^a-z0-9_]+", "_", s["name"].lower()).strip("_") or f"slider{k + 1}"
            while sid in ids:
                sid += "_"
            ids.add(sid)
            out.append({"id": sid, "label": s["name"], "type": "slider", "min": int(low), "max": int(high),
                        "_name": s["name"]})
        if not out:
            raise self.c.fail("info.sliders", "is empty: a question with nothing to answer cannot be imported")
        return out

    # -- checks

    def check_of(self, item: dict[str, Any], where: str) -> tuple[dict[str, Any] | None, str]:
        """An item's ``validation`` as an evalkit check (None: it checks nothing) and its type: ``tutorial`` when a
        rule has a ``warning`` (Pearmut blocks until it is right), ``attention`` when silent."""
        validation = item.get("validation")
        if validation is None:
            return None, ""
        if not isinstance(validation, dict):
            raise self.c.fail(where, "'validation' must be {model: rule}")
        slider_names = {s["_name"]: s["id"] for s in self.scales or ()}
        expect: dict[str, Any] = {}
        warnings: list[str] = []
        loud = False
        for model, rule in validation.items():
            if model not in item["tgt"]:
                raise self.c.fail(where, f"'validation' names model {model!r}, which 'tgt' does not have")
            if not isinstance(rule, dict):
                raise self.c.fail(where, f"'validation' of {model!r} must be an object (Pearmut refuses a list too)")
            known = {"score", "error_spans", "score_greaterthan", "warning", "allow_skip", *slider_names}
            extra = sorted(set(rule) - known)
            if extra:
                raise self.c.fail(where, f"'validation' of {model!r}: unknown key {extra[0]!r}")
            out: dict[str, Any] = {}
            if "score" in rule:
                if self.scales is not None:
                    raise self.c.fail(where, f"'validation' of {model!r} checks 'score', which a campaign with "
                                             "sliders never sets (it always fails in Pearmut); check the sliders")
                out["score"] = rule["score"]
            ranges = {slider_names[name]: (v if isinstance(v, list) else [v, v])
                      for name, v in rule.items() if name in slider_names}
            if ranges:
                out["score"] = ranges
            if rule.get("error_spans") and not isinstance(item["tgt"][model], str):
                self.note(f"{where}: 'validation' of {model!r} expects error spans on a medium (not markable, as in "
                          "Pearmut): left out.")
            elif rule.get("error_spans"):
                if self.c.spans is None:
                    self.note(f"{where}: 'validation' of {model!r} expects error spans, which protocol "
                              f"{self.c.protocol} does not mark (Pearmut ignores them too): left out.")
                else:
                    out["error_spans"] = rule["error_spans"]
            if rule.get("score_greaterthan") is not None:
                if rule["score_greaterthan"] not in item["tgt"]:
                    raise self.c.fail(where, f"'validation' of {model!r}: score_greaterthan names "
                                             f"{rule['score_greaterthan']!r}, which 'tgt' does not have")
                out["score_greaterthan"] = rule["score_greaterthan"]
            if rule.get("warning") and out:  # (a warning on a rule that checks nothing never shows in Pearmut)
                loud = True
                warnings.append(str(rule["warning"]))
                out["feedback"] = _plain(str(rule["warning"]))
            self.c.skippable = self.c.skippable or bool(rule.get("allow_skip"))
            if out:
                expect[model] = out
        self.c.skippable = self.c.skippable or bool(item.get("skippable"))
        if not expect:
            self.note(f"{where}: its 'validation' checks nothing (no score range, spans or order): a regular item.")
            return None, ""
        if any("feedback" in rule for rule in expect.values()):  # each output's own words go next to it
            feedback = _DEFAULT_FEEDBACK
        else:
            feedback = " ".join(dict.fromkeys(_plain(w) for w in warnings)) or _DEFAULT_FEEDBACK
        return {"expect": expect, "feedback": feedback}, "tutorial" if loud else "attention"

    # -- items

    def add(self, body: dict[str, Any], base: str, originals: list[Any], extra: list[dict[str, Any]],
            part: Mapping[str, Any] | None = None) -> str:
        """Write one evalkit item (unless the same content was written already); its id. ``meta.pearmut`` keeps
        the original ``item_id`` s, the items' extra keys and, for one part of a document asked part by part, the
        document (a hash of its content), the part and the number of parts."""
        meta = {"pearmut": {"item_id": originals, **({"extra": extra} if any(extra) else {}), **(part or {})}}
        content = json.dumps({**body, "meta": meta}, sort_keys=True, ensure_ascii=False)
        uid, new = self.c.new_id(base, content)
        if new:
            self.c.items.append({"id": uid, **body, "meta": meta})
        return uid

    def document(self, doc: list[dict[str, Any]], where: str) -> list[tuple[str, str]]:
        """The evalkit items of one Pearmut document, ``(id, check type or "")`` in order: a span protocol's
        document is one document item (scored per segment) unless it holds checks; each checked item, and each
        item of the other protocols, is its own item."""
        if any("text" in i or "form" in i for i in doc):
            raise self.c.fail(where, "a form document can only be in data_welcome")
        items = [self.c.item(i, f"{where}[{j}]") for j, i in enumerate(doc)]
        base = lambda i, j: str(i.get("item_id")) if i.get("item_id") is not None else f"{self.c.id}-{where}-{j}"  # noqa: E731
        checks = [self.check_of(i, f"{where}[{j}] (item_id {i.get('item_id')!r})") for j, i in enumerate(items)]
        if any(i.get("_media") for i in items) and len(items) > 1:
            self.note(f"{where}: it holds images, recordings or videos, so its items are asked one at a time.")
        elif self.c.spans is not None and len(items) > 1 and not any(c for c, _ in checks):
            systems = set(items[0]["tgt"])
            if all(set(i["tgt"]) == systems for i in items):
                body = {"segments": [_segment(i) for i in items]}
                return [(self.add(body, base(items[0], 0), [i.get("item_id") for i in items],
                                  [_extra(i) for i in items]), "")]
            self.note(f"{where}: its items have different models, so its segments are asked one at a time.")
        elif len(items) > 1 and any(c for c, _ in checks) and self.c.spans is not None:
            self.note(f"{where}: it holds checks, so its {len(items)} items are asked one at a time (a check is one "
                      "segment).")
        out: list[tuple[str, str]] = []
        key = hashlib.sha256(json.dumps(doc, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
        for j, (i, (check, kind)) in enumerate(zip(items, checks, strict=True)):
            body = _segment(i)
            part: dict[str, Any] = {}
            if len(items) > 1:  # (the export writes the parts of one document as one line again)
                body["title"] = f"Part {j + 1} of {len(items)}"
                part = {"document": key, "part": j, "parts": len(items)}
            if check is not None:
                body["check"] = check
            out.append((self.add(body, base(i, j), [i.get("item_id")], [_extra(i)], part), kind))
        return out

    # -- welcome forms

    def form(self, docs: list[list[dict[str, Any]]]) -> dict[str, Any] | None:
        """The welcome form documents as one ``form`` task (a label-only item becomes the task's instructions)."""
        fields: list[dict[str, Any]] = []
        text: list[str] = []
        for k, doc in enumerate(docs):
            for j, item in enumerate(doc):
                where = f"data_welcome[{k}][{j}]"
                extra = sorted(set(item) - {"text", "form", "choices", "script"})
                if extra:
                    raise self.c.fail(where, f"a form item has unknown key {extra[0]!r} (text, form, choices, script)")
                label = html_to_markdown(str(item.get("text") or "")).strip()
                form = item.get("form")
                if form is None:
                    text.append(label)
                    continue
                if form == "script":
                    self.note(f"{where}: a 'script' form item is left out: evalkit runs no campaign JavaScript in "
                              "the evaluator's browser (it would record their screen, time zone and platform).")
                    continue
                if form not in _FORM_TYPES:
                    raise self.c.fail(where, f"'form' must be null, string, number, choices or script, got {form!r}")
                field_: dict[str, Any] = {"id": f"q{len(fields) + 1}", "label": label or f"Question {len(fields) + 1}",
                                          "type": _FORM_TYPES[form]}
                if form == "choices":
                    choices = item.get("choices")
                    if not isinstance(choices, list) or len(choices) < 2 or not all(
                            isinstance(x, str) and x.strip() for x in choices):
                        raise self.c.fail(where, "'choices' must list at least two options")
                    field_["options"] = choices
                fields.append(field_)
        if not fields:
            if text:
                self.note("data_welcome: a form with no question (only texts) is shown as the task's instructions.")
            return None
        task: dict[str, Any] = {"kind": "form", "id": "about", "title": "About you"}
        if text:
            task["instructions"] = "\n\n".join(text)
        task["fields"] = fields
        return task

    # -- the whole study

    def build(self) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The config (as a dict) and, task-based, the assignments rows ``(user id, item id)``."""
        c, info = self.c, self.c.info
        welcome = c.documents(c.data.get("data_welcome", []), "data_welcome")
        forms = [d for d in welcome if any("text" in i or "form" in i for i in d)]
        form_task = self.form(forms)
        practice: list[str] = []  # welcome items without a check: first on every list
        docs_map = self.result.documents
        for k, doc in enumerate(welcome):
            if doc in forms:
                continue
            entries = self.document(doc, f"data_welcome[{k}]")
            docs_map[f"welcome_{k}"] = [uid for uid, _ in entries]
            for uid, kind in entries:  # loud: the tutorial; silent: first on every list (or, shared, mixed in)
                if kind == "tutorial":
                    self.tutorial.append(uid)
                else:
                    practice.append(uid)
                    if kind == "attention":
                        self.attention.append(uid)
        rows: list[tuple[str, str]] = []
        task: dict[str, Any] = {"kind": "spans" if c.spans else "score", "id": "main",
                                "title": "Error span annotation" if c.spans else "Assessment",
                                "items": "datasets/items.jsonl",
                                # Pearmut's words (its campaigns are translations), for one output or several
                                "input_label": "Source", "output_label": "Translation",
                                "question": "Mark the errors in each translation, then score it." if c.spans else
                                "How good is each translation?"}
        if info.get("instructions"):
            task["instructions"] = html_to_markdown(str(info["instructions"]))
        if c.assignment == "task-based":
            tasks = c.tasks()
            self.result.users = [u for u, _ in tasks]
            for uid, docs in tasks:
                rows += [(uid, p) for p in practice]
                for k, doc in enumerate(docs):
                    entries = self.document(doc, f"data[{uid!r}][{k}]")
                    docs_map[f"{uid}/{k}"] = [item_id for item_id, _ in entries]
                    for item_id, kind in entries:
                        if (uid, item_id) in rows:  # (one answer per item and participant in evalkit)
                            self.note(f"data[{uid!r}][{k}] repeats a document of the same user: asked once.")
                            continue
                        rows.append((uid, item_id))
                        if kind and item_id not in self.tutorial + self.attention:
                            (self.tutorial if kind == "tutorial" else self.attention).append(item_id)
            task.update(assignment="fixed", assignments="datasets/assignments.csv",
                        shuffle=bool(info.get("shuffle", True)))
        else:
            if set(practice) - set(self.attention):
                raise c.fail("data_welcome", "evaluation items without 'validation' in a shared-queue campaign: "
                                             "evalkit shows welcome items as tutorial questions, which need a check")
            if practice:
                self.note("data_welcome: silent checks (no warning) of a shared-queue campaign are attention checks "
                          "at seeded positions, not first.")
            docs = c.documents(c.data.get("data"), "data")
            units = 0
            for k, doc in enumerate(docs):
                if doc in welcome:  # (a Pearmut build that copied data_welcome into data: the same documents)
                    docs_map[str(k)] = docs_map.get(f"welcome_{welcome.index(doc)}", [])
                    self.note(f"data[{k}] repeats data_welcome[{welcome.index(doc)}] (as some Pearmut versions "
                              "stored it): asked once, as the welcome item.")
                    continue
                entries = self.document(doc, f"data[{k}]")
                docs_map[str(k)] = [item_id for item_id, _ in entries]
                for _item_id, kind in entries:
                    units += not kind
                    if kind:
                        raise c.fail(f"data[{k}]", "an item with 'validation' in a shared-queue campaign: put "
                                                   "checks in data_welcome (tutorial) or data_random (attention)")
            self.result.users = c.user_ids(None)
            per_user = info.get("docs_per_user")
            if per_user is not None and (isinstance(per_user, bool) or not isinstance(per_user, int) or per_user < 1):
                raise c.fail("info.docs_per_user", f"must be a whole number ≥ 1, got {_short(per_user)}")
            # (Pearmut: a user goes on until every document is done, or docs_per_user)
            questions = min(per_user, units) if per_user else units
            models = [len(i["outputs"] if "outputs" in i else i["segments"][0]["outputs"]) for i in c.items]
            dynamic = info.get("dynamic_models", 1)
            if c.assignment == "dynamic" and (isinstance(dynamic, bool) or not isinstance(dynamic, int)
                                              or not 1 <= dynamic <= min(models or [1])):
                raise c.fail("info.dynamic_models", f"must be a whole number from 1 to the models of the "
                                                    f"documents ({min(models or [1])}), got {_short(dynamic)}")
            task.update(questions=max(1, questions), judgments_per_item=1)
            n = dynamic if c.assignment == "dynamic" else min(models or [1])
            if n > 1:
                task["outputs_per_question"] = n
            if info.get("shuffle") is False:
                self.note("info.shuffle = false: the shared queue balances the outputs' positions over the "
                          "evaluators ([study] positions); it cannot keep the campaign's model order.")
            if c.assignment == "dynamic":
                self.note("assignment = dynamic: evalkit deals the documents from its shared queue, each set of "
                          f"{n} model(s) once; it does not choose models by their scores as Pearmut does.")
        for k, doc in enumerate(c.documents(c.data.get("data_random", []), "data_random")):
            entries = self.document(doc, f"data_random[{k}]")
            docs_map[f"random_{k}"] = [item_id for item_id, _ in entries]
            for item_id, kind in entries:
                if not kind:
                    raise c.fail(f"data_random[{k}]", "a spot check needs a 'validation' to check")
                if item_id not in self.attention:
                    self.attention.append(item_id)
        if c.data.get("data_random"):
            prob = info.get("data_random_prob")
            self.note("data_random: every participant gets every spot check (at seeded positions)" +
                      (f"; Pearmut shows each with probability {prob}." if prob is not None else "."))
        if c.unknown_protocol:
            self.note(f"info.protocol = {c.protocol!r} is none of Pearmut's (DA, ESA, cESA, MQM): imported as "
                      "scores only, as Pearmut's page shows it" + (" (the items' error_spans are not used)"
                                                                   if c.prefill else "") + ".")
        self.kind_keys(task)
        if self.tutorial:
            task["tutorial"] = self.tutorial
            self.note(f"{len(self.tutorial)} checked item(s) with a warning are tutorial questions: Pearmut keeps the "
                      "user on them until the answer is right, and so does evalkit, which calls them practice "
                      "questions (a wrong first answer is recorded; only attention checks can fail a participant).")
            if c.skippable:
                task["tutorial_skippable"] = True
                self.note("allow_skip / skippable on an item makes every tutorial question of the task skippable "
                          "(evalkit decides it per task).")
        if self.attention:
            task["attention_checks"] = [a for a in self.attention if a not in self.tutorial]
        if self.scales:
            task["scales"] = [{k: v for k, v in s.items() if k != "_name"} for s in self.scales]
        elif not c.spans:  # DA: Pearmut's 0-100 score
            task["scales"] = [{"id": "score", "label": "Score", "type": "slider", "min": 0, "max": 100}]
        else:  # (Pearmut scores MQM too; ESA's is the spans kind's default, written out: its id may need a change)
            task["scales"] = [{"id": "quality", "label": "Quality", "type": "slider", "min": 0, "max": 100}]
        renamed = {}
        for scale in task["scales"]:  # a scale named like a model would make a check's expect ambiguous
            old = scale["id"]
            while scale["id"] in c.systems:
                scale["id"] += "_scale"
            renamed[old] = scale["id"]
        for item in c.items:  # (the checks' ranges are per scale id)
            for rule in (item.get("check") or {}).get("expect", {}).values():
                if isinstance(rule.get("score"), dict):
                    rule["score"] = {renamed.get(k, k): v for k, v in rule["score"].items()}
        config = {"study": self.study(), "tasks": [t for t in (form_task, task) if t]}
        return config, rows

    def kind_keys(self, task: dict[str, Any]) -> None:
        """The keys of the spans or score kind from ``info``."""
        c, info = self.c, self.c.info
        textfield = info.get("textfield")
        if textfield not in (None, "hidden", "visible", "prefilled"):
            raise c.fail("info.textfield", f"must be null, hidden, visible or prefilled, got {_short(textfield)}")
        if c.spans is None:
            if textfield:
                task["textfield"] = "post-edit" if textfield == "prefilled" else "comment"
            return
        if textfield:
            self.note(f"info.textfield = {textfield}: a span task has no text box in evalkit; left out.")
        task["protocol"] = c.spans
        severities = info.get("mqm_severities")
        if severities is not None:
            if not isinstance(severities, list) or not severities or not all(isinstance(s, str) for s in severities):
                raise c.fail("info.mqm_severities", "must be a non-empty list of severity names")
            task["severities"] = [s.lower() for s in severities]
        if c.spans == "mqm":
            cats = info.get("mqm_categories", PEARMUT_MQM)
            if not isinstance(cats, dict) or not all(isinstance(v, list | tuple) for v in cats.values()):
                raise c.fail("info.mqm_categories", "must be {category: [subcategories]}")
            task["categories"] = {k: list(v) for k, v in cats.items()}
            unknown = [s for s in task.get("severities", ()) if s not in ("minor", "major", "critical", "neutral")]
            if unknown:
                task["mqm_weights"] = {s: 1 for s in unknown}
                self.note(f"Severities {', '.join(unknown)} have no standard MQM weight: each counts 1 in the MQM "
                          "score (set mqm_weights).")
        tokens = info.get("special_tokens", ["[missing]"])
        if not isinstance(tokens, list) or any(t != "[missing]" for t in tokens):
            raise c.fail("info.special_tokens", f"evalkit has the [missing] token only, got {_short(tokens)}")
        task["missing_token"] = "[missing]" in tokens
        if info.get("word_level"):
            task["word_level"] = True
        if c.prefill:
            task["prefill"] = True
        if any("segments" in i for i in c.items):
            task["score_per"] = "segment"

    def study(self) -> dict[str, Any]:
        c, info = self.c, self.c.info
        seed = int.from_bytes(hashlib.sha256(c.id.encode()).digest()[:4], "big")
        study: dict[str, Any] = {
            "title": c.id.replace("_", " "),
            "database": "data/responses.sqlite", "seed": seed, "consent": "consent.md", "participants": "invited"}
        if info.get("show_model_names"):
            study["blind"] = False
        goodbye = info.get("instructions_goodbye")
        if goodbye:
            marks = {"${TOKEN}": "EVALKITTOKENMARK", "${USER_ID}": "EVALKITUSERIDMARK"}
            text = str(goodbye)
            for mark, word in marks.items():
                text = text.replace(mark, word)
            text = html_to_markdown(text)
            for mark, word in marks.items():
                text = text.replace(word, mark)
            study["done_message"] = text
        threshold = info.get("validation_threshold")
        if threshold is not None:
            if isinstance(threshold, bool) or not isinstance(threshold, int | float) or threshold < 0:
                raise c.fail("info.validation_threshold", f"must be a number ≥ 0, got {_short(threshold)}")
            if isinstance(threshold, float) and threshold >= 1:
                raise c.fail("info.validation_threshold", f"{threshold} (a float ≥ 1) fails every user in "
                                                          "Pearmut; write a whole number to allow that many failures")
            study["quality"] = {"max_failed_checks": int(threshold) if threshold == int(threshold) else threshold}
        return study


# ----------------------------------------------------------------------------- writing the folder

CONSENT = """# Consent

This study was imported from the Pearmut campaign **{campaign}**. Replace this text with your consent form:
who runs the study, what the evaluators do, how long it takes, what is stored and how to withdraw.
"""


def import_campaign(path: Path, out: Path | None = None, *, force: bool = False,
                    users: Sequence[str] = (), allow_remote_media: bool = False) -> ImportResult:
    """Import the campaign at ``path`` into the folder ``out`` (default: the campaign id beside the file);
    PearmutError for a campaign evalkit cannot carry over, or a folder that holds a study already (``force``
    overwrites the files it writes, and nothing else). ``users``: the ids a running campaign gave its users (its
    progress file's), used where the campaign gives only a number of users. Media the campaign loads from other
    hosts are refused, naming the hosts, unless ``allow_remote_media`` (then ``[study] allow_remote_media = true``
    and the consent placeholder names them); its ``assets`` folder is copied into the study's ``media/``."""
    data = read_campaign(path)
    campaign = _Campaign(path, data, users)
    folder = out if out is not None else path.parent / re.sub(r"[^A-Za-z0-9._-]+", "-", campaign.id)
    if campaign.assets is not None and folder.resolve().is_relative_to(campaign.assets[0]):
        raise PearmutError(f"{folder}: the study folder would be inside the campaign's assets folder "
                           f"({campaign.assets[0]}), which is copied into it; choose another --out")
    if (folder / "config.toml").exists() and not force:
        raise PearmutError(f"{folder}: holds a study already (config.toml); choose another --out or pass --force")
    result = ImportResult(folder, campaign_id=campaign.id)
    builder = _Builder(campaign, result)
    config, rows = builder.build()
    campaign.check_tokens(result.users)
    hosts = list(campaign.remote)
    if hosts and not allow_remote_media:
        raise PearmutError(f"{path.name}: its images, recordings or videos are loaded from other hosts "
                           f"({', '.join(hosts)}): each evaluator's browser would send them its address. Copy the "
                           "files into the campaign's assets, or pass --allow-remote-media (and say so in the "
                           "consent text)")
    if hosts:
        config["study"]["allow_remote_media"] = True
        result.notes.append(f"Media are loaded from {', '.join(hosts)}: the consent text must say that each "
                            "evaluator's browser contacts these hosts.")
    result.rows = _rows(campaign, config)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "datasets").mkdir(exist_ok=True)
    (folder / "config.toml").write_text(_toml(config), encoding="utf-8")
    with open(folder / "datasets" / "items.jsonl", "w", encoding="utf-8") as fh:
        for item in campaign.items:
            fh.write(json.dumps(item, ensure_ascii=False) + "\n")
    if rows:
        _write_csv(folder / "datasets" / "assignments.csv", ["participant_id", "item_id"], rows)
    tokens = campaign.tokens()
    _write_csv(folder / "datasets" / "participants.csv", ["participant_id", "code_pass", "code_fail"],
               [(u, *tokens.get(u, ("", ""))) for u in result.users])
    if campaign.assets is not None:  # (never hidden files nor links: the media folder holds files only)
        source, dest = campaign.assets
        shutil.copytree(source, folder / "media" / dest, dirs_exist_ok=True, ignore=lambda d, names: [
            n for n in names if n.startswith(".") or (Path(d) / n).is_symlink()])
    consent = folder / "consent.md"
    if not consent.exists():
        remote = (f"\nThis study shows images, recordings or videos from {', '.join(hosts)}: your browser loads them "
                  "from there, which tells those hosts your IP address.\n" if hosts else "")
        consent.write_text(CONSENT.format(campaign=campaign.id) + remote, encoding="utf-8")
    (folder / "IMPORT.md").write_text(report(result, campaign.id), encoding="utf-8")
    return result


def _toml(config: dict[str, Any]) -> str:
    head = "# Imported from a Pearmut campaign by `python -m evalkit import pearmut`: see IMPORT.md.\n\n"
    return head + tomli_w.dumps(config, multiline_strings=True)


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _rows(c: _Campaign, config: dict[str, Any]) -> list[Row]:
    """The mapping table: each key the campaign has, its value, and what it became."""
    main = config["tasks"][-1]
    specific = {
        "protocol": f"kind = \"{main['kind']}\"" + (f", protocol = \"{main['protocol']}\"" if "protocol" in main
                                                      else ", one 0-100 slider" if main["kind"] == "score" else ""),
        "assignment": (f"assignment = \"fixed\" ({len(c.data['data'])} users' lists in datasets/assignments.csv)"
                       if main.get("assignment") == "fixed" else
                       f"the shared queue: judgments_per_item = 1, each document judged once; a user may go on to "
                       f"every document (questions = {main.get('questions')}), or docs_per_user"),
    }
    def count(value: Any) -> str:
        if not isinstance(value, list | dict):
            return _short(value)
        if isinstance(value, dict) or (value and isinstance(value[0], list) and value[0]
                                       and isinstance(value[0][0], list)):  # task-based: tasks of documents
            tasks = list(value.values()) if isinstance(value, dict) else value
            return f"{len(tasks)} tasks, {sum(len(t) for t in tasks)} documents"
        return f"{len(value)} documents, {sum(len(d) for d in value if isinstance(d, list))} items"

    data_to = (TOP_KEYS["data"] if main.get("assignment") == "fixed" else
               "the items file (documents, in order), dealt by the shared queue")
    rows = [Row(k, "(not shown: the dashboard's password)" if k == "token" else count(c.data[k]),
                (data_to + f" ({len(c.items)} evalkit items)") if k == "data" else TOP_KEYS[k])
            for k in TOP_KEYS if k in c.data and k != "info"]
    rows += [Row(f"info.{k}", _short(v), specific.get(k, INFO_KEYS[k])) for k, v in c.info.items()]
    return rows


def report(result: ImportResult, campaign: str) -> str:
    """``IMPORT.md``: the table, the notes, and what to do next."""
    notes = "".join(f"- {n}\n" for n in result.notes) or "- None.\n"
    return (f"# Imported from the Pearmut campaign `{campaign}`\n\n{result.table()}\n## Notes\n\n{notes}\n"
            "## Next\n\n1. Replace `consent.md` with your consent text.\n"
            "2. `python -m evalkit check config.toml`\n"
            "3. `python -m evalkit invite --csv datasets/participants.csv --base-url https://YOUR-SURVEY-ADDRESS "
            "--out links.csv`: each user's private link.\n")

