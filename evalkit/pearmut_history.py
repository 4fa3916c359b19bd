"""A running Pearmut campaign's saved state moved into an imported study: ``evalkit import pearmut CAMPAIGN.json
--with-annotations DIR``.

Pearmut saves a campaign's annotations as JSON lines (``data/outputs/<campaign>.jsonl``; ``data/annotations/`` in
its newest versions), one per submitted document: ``annotation`` (per segment, per model ``score``,
``error_spans``, ``textfield``, ``sliders``), ``actions``, ``item``, ``user_id``, ``item_i``; and each user's
progress and tokens in ``data/progress.json`` (``data/progress/<campaign>.json``). :func:`import_history` reads
both for the study :func:`evalkit.pearmut_import.import_campaign` just wrote, and stores each user's annotations
as answers of their own session (started as from their private link), in the order they gave them, through the
same checks a page's answer goes through (:func:`evalkit.tasks.spans.record_spans`,
:func:`evalkit.tasks.score.record_scores`): a user then resumes where they stopped. A dashboard reset (an
``"__RESET__"`` line) drops the user's earlier lines of that document; of several lines for one document the last
counts. The users' Pearmut tokens become their own completion codes (``participants.csv``), so a user finishing
in evalkit gets the token Pearmut would have shown.

Floor: under the command line, over the queue (``.importlinter``): may import the queue, the survey flow, the
importer, the study and below.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config import LoadedStudy, open_study, study_summary
from .datafiles import read_text
from .pearmut_import import ImportResult, PearmutError
from .question import Question
from .queue import claim_question, register
from .sampling import plan
from .spans import SpanError, from_pearmut, to_utf16
from .store import Participant, Session, Store, open_store
from .survey import finish_session
from .tasks.base import SurveyError
from .tasks.check_answers import CheckFeedback, skip_tutorial
from .tasks.score import record_scores
from .tasks.spans import record_spans, segments_of

__all__ = ["History", "find_state", "import_history", "state_users"]

RESET = "__RESET__"


@dataclass
class History:
    """What :func:`import_history` stored: answers per user, and the lines it could not store (with why)."""

    answers: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few lines for the command line."""
        lines = [f"Imported {sum(self.answers.values())} answer(s) of {len(self.answers)} user(s)"
                 + (f"; {len(self.finished)} finished" if self.finished else "") + "."]
        lines += [f"  {user}: {n} answer(s)" for user, n in self.answers.items()]
        lines += [f"not imported: {why}" for why in self.skipped]
        return "\n".join(lines)


def find_state(folder: Path, campaign: str) -> tuple[Path, Path | None]:
    """The annotation log and the progress file of ``campaign`` under ``folder`` (Pearmut's working directory, or
    its ``data`` folder), in either Pearmut's layout; PearmutError when there is no log."""
    for base in (folder / "data", folder):
        for log in (base / "outputs" / f"{campaign}.jsonl", base / "annotations" / f"{campaign}.jsonl"):
            if log.is_file():
                progress = next((p for p in (base / "progress.json", base / "progress" / f"{campaign}.json")
                                 if p.is_file()), None)
                return log, progress
    raise PearmutError(f"{folder}: no annotation log of campaign {campaign!r} (looked for "
                       f"data/outputs/{campaign}.jsonl and data/annotations/{campaign}.jsonl)")


def state_users(folder: Path, campaign: str) -> list[str]:
    """The users of a running campaign, in the order Pearmut made them (its progress file; none without one)."""
    _log, progress = find_state(folder, campaign)
    return list(_progress(progress, campaign))  # (without a progress file, the campaign's own users)


def _lines(log: Path) -> list[dict[str, Any]]:
    """The log's lines that count: per (user, item_i) the last one after the user's last reset of it."""
    last: dict[tuple[str, str], dict[str, Any]] = {}
    text = read_text(log, PearmutError)
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise PearmutError(f"{log}, line {n}: not valid JSON ({exc.msg})") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("user_id"), str | int) or not isinstance(
                entry.get("item_i"), str | int) or isinstance(entry.get("user_id"), bool):
            raise PearmutError(f"{log}, line {n}: an annotation line needs user_id and item_i (texts or numbers)")
        if entry.get("annotation") != RESET and (
                not isinstance(entry.get("annotation"), list)
                or not all(isinstance(a, dict) and all(isinstance(v, dict) for v in a.values())
                           for a in entry["annotation"])
                or not isinstance(entry.get("actions", []), list)):
            raise PearmutError(f"{log}, line {n}: 'annotation' must be a list of {{model: {{score, error_spans, "
                               f"...}}}} (one per item) and 'actions' a list")
        entry["user_id"] = str(entry["user_id"])
        key = (entry["user_id"], str(entry["item_i"]))
        last.pop(key, None)  # (a later line, or a reset, replaces it; kept in the order last given)
        if entry.get("annotation") != RESET:
            last[key] = {**entry, "_line": n}
    return list(last.values())


def _progress(path: Path | None, campaign: str) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise PearmutError(f"{path}: not valid JSON ({exc.msg})") from None
    if path.name == "progress.json" and isinstance(data, dict) and campaign in data:  # 1.1: {campaign: {user: ..}}
        data = data[campaign]
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise PearmutError(f"{path}: a progress file holds {{user: {{progress, token_correct, ...}}}}")
    return data


def _duration(entry: Mapping[str, Any]) -> int | None:
    times = [a.get("time") for a in entry.get("actions") or [] if isinstance(a, dict)]
    times = [t for t in times if isinstance(t, int | float)]
    return int((max(times) - min(times)) * 1000) if len(times) >= 2 else None


def _skipped(entry: Mapping[str, Any]) -> bool:
    return any(isinstance(a, dict) and a.get("action") == "submit_skip" for a in entry.get("actions") or [])


def _scores(task: Any, annotation: Mapping[str, Any]) -> dict[str, Any]:
    """One segment's scores per scale, by model: the first scale from ``score``, custom sliders by their names."""
    out: dict[str, dict[str, Any]] = {}
    for scale in task.scales:
        out[scale.id] = {}
    names = {s.label: s.id for s in task.scales}
    for model, value in annotation.items():
        if not isinstance(value, dict):
            continue
        sliders = value.get("sliders") or {}
        if sliders:
            for name, v in sliders.items():
                if name in names:
                    out[names[name]][model] = v
        elif task.scales:
            out[task.scales[0].id][model] = value.get("score")
    return out


def _category(value: Any, task: Any) -> Any:
    """Pearmut writes a top-level category without subcategories as ``"Main/Main"``; evalkit as ``"Main"``."""
    if isinstance(value, str) and "/" in value:
        top, _, sub = value.partition("/")
        subs = task.categories.get(top) if isinstance(task.categories, Mapping) else None
        if sub == top and subs is not None and sub not in subs:
            return top
    return value


def _spans_value(task: Any, question: Question, item: Any, segments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the span widget would have sent for this question, from the logged segments of its document."""
    doc = segments_of(item)
    spans, per_segment = [], task.score_per == "segment" and bool(item.segments)
    scores: dict[str, list[Any]] = {s.id: [] for s in task.scales}
    for system in question.sources:
        mine = []
        for s, segment in enumerate(doc):
            text = segment.outputs[system]
            logged = (segments[s].get(system) or {}) if s < len(segments) else {}
            marks = []
            for raw in logged.get("error_spans") or []:
                span = from_pearmut({**raw, "category": _category(raw.get("category"), task)}, text)
                marks.append({"start": to_utf16(text, span.start),
                              "end": to_utf16(text, span.end, missing_token=True),
                              "severity": span.severity, "category": span.category})
            mine.append(marks)
        spans.append(mine)
        for scale in task.scales:
            values = [_scores(task, seg).get(scale.id, {}).get(system) for seg in segments] or [None]
            scores[scale.id].append(values if per_segment else values[0])
    return {"spans": spans, "scores": scores, "actions": []}


def _record(store: Store, loaded: LoadedStudy, session: Session, question: Question,
            segments: Sequence[Mapping[str, Any]], entry: Mapping[str, Any]) -> None:
    """Store one question's answer from its logged segments (a skipped tutorial question: skipped)."""
    task = loaded.study.task(question.task)
    its = loaded.item_sets[task.source.items]
    item = its.by_id(question.review_ids[0])
    ms = _duration(entry)
    try:
        if task.kind == "spans":
            record_spans(store, session, task, question, item, _spans_value(task, question, item, segments), ms)
        else:
            scores = _scores(task, segments[0]) if segments else {}
            texts = None
            if task.textfield != "none":
                texts = [str((segments[0].get(s) or {}).get("textfield") or "") if segments else ""
                         for s in question.sources]
                if task.textfield == "post-edit":
                    texts = [t or question.texts[k] for k, t in enumerate(texts)]
            record_scores(store, session, task, question,
                          {scale: [v.get(s) for s in question.sources] for scale, v in scores.items()}, texts, ms)
    except CheckFeedback:
        if question.check is not None and question.check.skippable:
            skip_tutorial(store, session, question)
        else:
            raise


def import_history(result: ImportResult, state: Path) -> History:
    """Store the saved annotations of the campaign ``result`` was imported from (``state``: Pearmut's working
    directory holding ``data/``) in the imported study's database; see the module's docstring."""
    log, progress_path = find_state(state, result.campaign_id)
    lines = _lines(log)
    progress = _progress(progress_path, result.campaign_id)
    _codes(result, progress)
    loaded = open_study(result.folder / "config.toml")
    history = History()
    with open_store(loaded.study.database) as store:
        store.register_study(loaded.version, study_summary(loaded.study))
        register(store, loaded.study, loaded.item_sets)
        users = list(dict.fromkeys([*(e["user_id"] for e in lines), *progress]))
        for user in users:
            if user not in result.users:
                history.skipped.append(f"user {user!r}: not a user of the campaign")
                continue
            mine = [e for e in lines if e["user_id"] == user]
            if not mine:
                continue
            if store.find_session(user) is not None:
                raise PearmutError(f"{loaded.study.database}: user {user!r} has a session already; import the history "
                                   "into a new study folder")
            session = store.create_session(study_version=loaded.version, external_id=user,
                                           meta={"invited": True, "imported": "pearmut"})
            questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets,
                             session.meta.get("arrival"), user)
            history.answers[user] = _user(store, loaded, session, questions, mine, result, history)
            done = store.answered(session.session_id, "main")
            if questions and all(q.index in done for q in questions if q.task == "main"):
                codes = _user_codes(result, user)  # (nobody is invited yet: the participant's codes, given here)
                participant = Participant(user, "", "", "", *codes)
                finish_session(store, loaded.study, session.session_id, questions=questions, participant=participant)
                history.finished.append(user)
    return history


def _user(store: Store, loaded: LoadedStudy, session: Session, questions: list[Question], lines: list[dict[str, Any]],
          result: ImportResult, history: History) -> int:
    """Store one user's lines in their session, whose plan is ``questions``; returns how many answers were stored."""
    user = session.external_id
    stored = 0
    free = list(questions)
    welcome = sorted((e for e in lines if str(e["item_i"]).startswith(("welcome_", "random_"))),
                     key=lambda e: e["_line"])
    rest = [e for e in lines if e not in welcome]
    for entry in [*welcome, *rest]:
        key = str(entry["item_i"])
        own = entry.get("evalkit") if isinstance(entry.get("evalkit"), dict) else {}
        ids = (own.get("item_ids") if isinstance(own.get("item_ids"), list) else None) or \
            result.documents.get(key) or result.documents.get(f"{user}/{key}")
        if own.get("item_ids"):  # (evalkit's own export: each segment's item id; one id per item here)
            ids = list(dict.fromkeys(ids))
        where = f"user {user!r}, item_i {key} (line {entry['_line']})"
        annotation = entry.get("annotation")
        if not ids or not isinstance(annotation, list):
            history.skipped.append(f"{where}: no such document in the campaign")
            continue
        offset = 0
        for item_id in ids:
            task = loaded.study.task("main")
            item = loaded.item_sets[task.source.items].by_id(item_id)
            n = len(segments_of(item)) if item.segments else 1
            segments = annotation[offset:offset + n]
            offset += n
            question = next((q for q in free if q.review_ids and q.review_ids[0] == item_id), None)
            if question is None:
                question = _queued(store, loaded, session, free, item_id, segments)
            if question is None:
                history.skipped.append(f"{where}: item {item_id!r} is not among this user's questions (already "
                                       "answered from another line, or, in a shared queue, judged by another user)")
                continue
            free.remove(next(q for q in free if q.index == question.index))
            if _skipped(entry):  # (no answer to store: the question is asked again)
                history.skipped.append(f"{where}: skipped in Pearmut; evalkit asks it again")
                continue
            try:
                _record(store, loaded, session, question, segments, entry)
                stored += 1
            except (SurveyError, SpanError, KeyError, ValueError, TypeError, AttributeError) as exc:
                # (a line of another shape than the item's: named, the other lines stored)
                history.skipped.append(f"{where}: item {item_id!r}: {exc}"[:500])
    return stored


def _queued(store: Store, loaded: LoadedStudy, session: Session, free: list[Question], item_id: str,
            segments: Sequence[Mapping[str, Any]]) -> Question | None:
    """The next queued placeholder of the session filled with this item's unit (claimed for it), or None."""
    placeholder = next((q for q in free if q.slot < 0 and not q.texts), None)
    if placeholder is None:
        return None
    models = set().union(*(s.keys() for s in segments if isinstance(s, dict))) if segments else set()
    task = loaded.study.task(placeholder.task)
    wanted = json.dumps([item_id, *[s for s in loaded.item_sets[task.source.items].systems if s in models]],
                        ensure_ascii=False, separators=(",", ":"))
    if loaded.item_sets[task.source.items].by_id(item_id).check is not None:
        return None  # (a check item is no unit of the queue)
    # (k not enforced: a document Pearmut served twice at once keeps both judgments, as Pearmut's log does)
    unit = store.claim(task.id, session.session_id, placeholder.index, k=1 << 20,
                       expire_seconds=task.source.queue.claim_minutes * 60, prefer=wanted, only=True)
    if unit is None:
        return None
    progress = store.progress(session.session_id)
    return claim_question(store, loaded.study, loaded.item_sets, session, placeholder, progress)


def _user_codes(result: ImportResult, user: str) -> tuple[str | None, str | None]:
    """A user's own pass and fail codes, as ``participants.csv`` holds them (None where it has none)."""
    with open(result.folder / "datasets" / "participants.csv", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["participant_id"] == user:
                return row.get("code_pass") or None, row.get("code_fail") or None
    return None, None


def _codes(result: ImportResult, progress: Mapping[str, Any]) -> None:
    """The users' Pearmut tokens as their own completion codes in ``participants.csv`` (unless the campaign gave
    them)."""
    path = result.folder / "datasets" / "participants.csv"
    rows = list(csv.reader(path.open(encoding="utf-8")))
    header, body = rows[0], rows[1:]
    for row in body:
        state = progress.get(row[0]) or {}
        if not row[1] and isinstance(state.get("token_correct"), str):
            row[1] = state["token_correct"]
        if not row[2] and isinstance(state.get("token_incorrect"), str):
            row[2] = state["token_incorrect"]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(body)
