"""Invited (predefined) participants: ids, private links, the link check, and who has not started or finished.

``python -m evalkit invite`` creates participants (generated ids, or ids from a CSV of a lab pool) and prints
each one's private link ``<base>?participant=<id>&key=<secret>``. An id is not a secret (a lab list's "P01"
is easy to guess), so the link also carries a random key (128 bits); the database keeps only the key's
SHA-256, enough to check a link and useless to rebuild one. The consent page calls :func:`check_link` and,
for a valid link, :func:`invited_resume`. Nothing here imports Streamlit.

Floor: app services (``.importlinter``). May import the study (its fixed lists), the checks, the store and the
core; never the survey flow, the queue or the command line.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import secrets
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .checks import outcome_of
from .config import Study
from .datafiles import csv_rows
from .items import ItemSet
from .store import INVITED_META, Participant, Session, Store
from .tasks.itemsource import fixed_lists
from .text import id_problem, is_code, safe_cell, strip_controls

if TYPE_CHECKING:
    import pandas as pd

#: The query parameters of a private link.
PARTICIPANT_PARAM = "participant"
KEY_PARAM = "key"
#: Generated ids: "P-" and 8 characters without 0/O or 1/I (about 40 bits: two runs never collide in practice).
_GENERATED_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
#: Header names taken as the id column and the note column of an invitation CSV (case-insensitive).
ID_COLUMNS = ("participant_id", "participant", "user_id", "id", "pid")
NOTE_COLUMNS = ("note", "label", "email", "name")
#: Header names of the optional per-participant completion codes (Pearmut's ``token_pass`` / ``token_fail`` too).
CODE_COLUMNS = {"code_pass": ("code_pass", "token_pass"), "code_fail": ("code_fail", "token_fail")}


class InviteError(ValueError):
    """Bad input to ``invite`` (a CSV, an id, a base URL); the message names the file and the line."""


@dataclass(frozen=True)
class Invitation:
    """One participant to invite: the id, the private key (shown once), a note and the participant's own
    completion codes ("": the study's)."""

    participant_id: str
    key: str
    note: str = ""
    code_pass: str = ""
    code_fail: str = ""

    def link(self, base_url: str) -> str:
        """The private link (see :func:`private_link`)."""
        return private_link(base_url, self.participant_id, self.key)


def new_key() -> str:
    """A private link's key: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def key_hash(key: str) -> str:
    """What is stored of a key: its SHA-256 (hex). The key has 128 random bits, so no salt is needed."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def key_matches(participant: Participant, key: str) -> bool:
    """Whether ``key`` is this participant's key (constant-time comparison)."""
    return bool(key) and hmac.compare_digest(key_hash(key), participant.key_hash)


def check_id(participant_id: str, where: str = "") -> str:
    """The id, stripped; InviteError (naming ``where``) when it is empty, too long or has other characters."""
    pid = participant_id.strip()
    problem = id_problem(pid)
    if problem:
        raise InviteError(f"{where}: {problem}" if where else problem)
    return pid


def generated_ids(n: int) -> list[str]:
    """``n`` new random ids such as ``P-7KQ2M9XA`` (distinct among themselves)."""
    if n < 1:
        raise InviteError(f"--n must be at least 1, got {n}")
    ids: dict[str, None] = {}
    while len(ids) < n:
        ids["P-" + "".join(secrets.choice(_GENERATED_ALPHABET) for _ in range(8))] = None
    return list(ids)


def read_ids_csv(path: Path, *, id_column: str | None = None, note_column: str | None = None,
                 ) -> list[tuple[str, str]]:
    """``(id, note)`` pairs from a CSV with a header row (see :func:`read_participants_csv`)."""
    return [(pid, note) for pid, note, _p, _f in read_participants_csv(path, id_column=id_column,
                                                                       note_column=note_column)]


def read_participants_csv(path: Path, *, id_column: str | None = None, note_column: str | None = None,
                          ) -> list[tuple[str, str, str, str]]:
    """``(id, note, code_pass, code_fail)`` from a CSV with a header row.

    The id column is ``id_column``, else the first header named participant_id / participant / id / pid,
    else the only column. The note (a label or an email, kept for the researcher) is ``note_column``, else
    a column named note / label / email / name, else empty. Optional columns ``code_pass`` / ``code_fail``
    (or Pearmut's ``token_pass`` / ``token_fail``) give the participant's own completion codes ("" = the
    study's). InviteError, naming the file and the line, for a missing file or column, an empty or malformed
    id or code, a pass code equal to the fail code, or an id listed twice.
    """
    header, reader = csv_rows(path, InviteError, "participant_id,note")
    names = [h.strip().lower() for h in header]
    id_at = _column(path, names, id_column, ID_COLUMNS, required=True, only=len(names) == 1)
    note_at = _column(path, names, note_column, NOTE_COLUMNS, required=note_column is not None, only=False)
    code_at = {key: _column(path, names, None, known, required=False, only=False)
               for key, known in CODE_COLUMNS.items()}
    out: list[tuple[str, str, str, str]] = []
    seen: dict[str, int] = {}

    def cell(row: list[str], at: int | None) -> str:
        return row[at].strip() if at is not None and at < len(row) else ""

    try:
        for row in reader:
            line = reader.line_num
            if not any(c.strip() for c in row):
                continue  # blank lines
            if id_at >= len(row):
                raise InviteError(f"{path}, line {line}: the row has no {header[id_at]!r} column")
            pid = check_id(row[id_at], f"{path}, line {line}")
            if pid in seen:
                raise InviteError(f"{path}, line {line}: the id {pid!r} is listed twice (also on line {seen[pid]})")
            seen[pid] = line
            codes = {key: cell(row, at) for key, at in code_at.items()}
            for key, code in codes.items():
                if code and not is_code(code):
                    raise InviteError(f"{path}, line {line}: {header[code_at[key]]!r} must be 1-64 letters, digits, "
                                      f"'_' or '-', got {code[:80]!r}")
            if codes["code_pass"] and codes["code_pass"] == codes["code_fail"]:
                raise InviteError(f"{path}, line {line}: the pass and fail codes of {pid!r} are the same")
            out.append((pid, cell(row, note_at)[:500], codes["code_pass"], codes["code_fail"]))
    except csv.Error as exc:
        raise InviteError(f"{path}, line {reader.line_num}: not valid CSV: {exc}") from None
    if not out:
        raise InviteError(f"{path}: no participant ids below the header")
    return out


def _column(path: Path, names: list[str], wanted: str | None, known: Sequence[str], *, required: bool,
            only: bool) -> int | None:
    if wanted is not None:
        if wanted.strip().lower() not in names:
            raise InviteError(f"{path}: no column {wanted!r} in the header (columns: {', '.join(names)})")
        return names.index(wanted.strip().lower())
    for name in known:
        if name in names:
            return names.index(name)
    if only:
        return 0
    if required:
        raise InviteError(f"{path}: no id column: name one participant_id, participant, user_id, id or pid, or pass "
                          f"--id-column (columns: {', '.join(names)})")
    return None


def check_base_url(base_url: str) -> str:
    """The survey's address for links; InviteError unless it is an http(s) URL with a host."""
    parts = urllib.parse.urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in base_url.strip()):
        raise InviteError(f"--base-url must be the survey's http(s) address, e.g. https://survey.example.org/, "
                          f"got {base_url!r}")
    if {PARTICIPANT_PARAM, KEY_PARAM} & {k for k, _ in urllib.parse.parse_qsl(parts.query)}:
        raise InviteError(f"--base-url must not carry {PARTICIPANT_PARAM}= or {KEY_PARAM}= already")
    return base_url.strip()


def private_link(base_url: str, participant_id: str, key: str) -> str:
    """``base_url`` with ``participant=<id>&key=<key>`` added to its query (URL-encoded)."""
    parts = urllib.parse.urlsplit(base_url)
    query = urllib.parse.urlencode({PARTICIPANT_PARAM: participant_id, KEY_PARAM: key})
    return urllib.parse.urlunsplit(parts._replace(query=f"{parts.query}&{query}" if parts.query else query))


@dataclass(frozen=True)
class InviteResult:
    """What :func:`invite` did: the new invitations (with their keys) and the ids already invited."""

    created: list[Invitation]
    skipped: list[str]


def invite(store: Store, participants: Iterable[Sequence[str]]) -> InviteResult:
    """Create a key for each ``(id, note)`` or ``(id, note, code_pass, code_fail)`` and store the participants
    (one transaction).

    Ids already stored are skipped and keep their key and note (their links do not change); the keys of
    skipped ids are thrown away, since only the new ones are returned.
    """
    wanted = [Invitation(check_id(p[0]), new_key(), p[1], *(p[2:4] if len(p) > 2 else ())) for p in participants]
    added = set(store.add_participants((i.participant_id, key_hash(i.key), i.note, i.code_pass, i.code_fail)
                                       for i in wanted))
    return InviteResult(created=[i for i in wanted if i.participant_id in added],
                        skipped=[i.participant_id for i in wanted if i.participant_id not in added])


def reissue(store: Store, participant_ids: Iterable[str]) -> list[Invitation]:
    """New private keys for invited participants who lost their link (each id once, in the order given): the
    old links stop working at once (one transaction, see :meth:`Store.replace_participant_keys`); notes are
    kept. InviteError naming the ids that are not invited, and then nothing is changed.

    A participant who already started keeps their session: the new link resumes it (:func:`invited_resume`
    looks at the session, not at the key). The session's own address (``?s=...``) is not changed by this."""
    ids = list(dict.fromkeys(check_id(pid) for pid in participant_ids))
    if not ids:
        raise InviteError("--reissue needs at least one participant id")
    keys = {pid: new_key() for pid in ids}
    missing = store.replace_participant_keys({pid: key_hash(key) for pid, key in keys.items()})
    if missing:
        shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
        raise InviteError(f"not invited: {shown}. Nothing was changed; `python -m evalkit invite --status` lists the "
                          "invited ids, `--csv` or `--n` invites new ones")
    notes = {p.participant_id: p.note for p in store.participants()}
    return [Invitation(pid, key, notes.get(pid, "")) for pid, key in keys.items()]


def invitations_csv(created: Sequence[Invitation], base_url: str) -> str:
    """The new invitations as CSV: participant_id, note, link (cells safe to open in a spreadsheet)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["participant_id", "note", "link"])
    for i in created:
        writer.writerow([safe_cell(i.participant_id), safe_cell(i.note), i.link(base_url)])
    return out.getvalue()


# ----------------------------------------------------------------------------- the consent page's check

LinkOutcome = Literal["none", "valid", "invalid", "required", "reserved"]


@dataclass(frozen=True)
class LinkCheck:
    """What a consent page's URL says about who is starting.

    ``valid``: a private link whose key matches (``participant_id`` is set); ``invalid``: a private link
    with an unknown id or a wrong or missing key (the two are not told apart: a stranger learns nothing
    about which ids exist); ``required``: the study admits invited participants only and the URL has no
    private link; ``reserved``: an open study's ``PROLIFIC_PID`` that is an invited participant's id (that
    id starts only with its key); ``none``: nothing to do with invitations.
    """

    outcome: LinkOutcome
    participant_id: str = ""


def check_link(store: Store, query: Mapping[str, str], mode: str) -> LinkCheck:
    """Decide from the URL's query and the stored participants (``mode``: ``[study] participants``)."""
    pid = (query.get(PARTICIPANT_PARAM) or "").strip()[:200]
    key = (query.get(KEY_PARAM) or "").strip()[:200]
    if pid:
        found = store.participant(pid)
        if found is not None and key_matches(found, key):
            return LinkCheck("valid", found.participant_id)
        return LinkCheck("invalid")
    if mode == "invited":
        return LinkCheck("required")
    external = (query.get("PROLIFIC_PID") or "").strip()[:200]
    if external and store.participant(external) is not None:
        return LinkCheck("reserved")
    return LinkCheck("none")


def invited_resume(earlier: Session | None) -> Literal["start", "resume", "refuse"]:
    """For a valid private link: start a session, resume the participant's own, or refuse.

    The key proves who opens the link, so the participant's session (one started from this private link)
    is resumed, finished or not. A session under the same id that was not started from the private link
    (only possible for an id someone else used before it was invited) is not handed over: ``refuse``.
    """
    if earlier is None:
        return "start"
    return "resume" if earlier.meta.get(INVITED_META) is True else "refuse"


# ----------------------------------------------------------------------------- who has not started / finished

STATUSES = ("not started", "not finished", "finished")


@dataclass(frozen=True)
class ParticipantStatus:
    """An invited participant and where they stand (from their newest session that is not in the trash)."""

    participant_id: str
    note: str
    invited_at: str
    status: str  # one of STATUSES
    session_id: str = ""
    started_at: str = ""
    completed_at: str = ""
    #: how a finished session ended (:data:`evalkit.checks.OUTCOMES`; "" when not finished or not stored)
    outcome: str = ""

    @property
    def flag(self) -> str:
        """What a researcher should look at: a finished session that got no queued judgment (the study was full)
        or that completed without its attention checks or judgments; "" otherwise."""
        return OUTCOME_FLAGS.get(self.outcome, "")


#: how status listings name the outcomes that need a look (:attr:`ParticipantStatus.flag`)
OUTCOME_FLAGS = {"full": "no queued judgment (study full)", "incomplete": "without its checks or judgments"}


def participant_statuses(participants: Sequence[Participant], sessions: Sequence[Session]) -> list[ParticipantStatus]:
    """Each participant's status, in invitation order: not started (no session), not finished, finished."""
    newest: dict[str, Session] = {}
    for s in sessions:  # in start order: the newest wins, as in Store.find_session
        if s.external_id and s.status not in ("trashed", "abandoned"):  # (as Store.find_session)
            newest[s.external_id] = s
    out = []
    for p in participants:
        s = newest.get(p.participant_id)
        if s is None:
            out.append(ParticipantStatus(p.participant_id, p.note, p.created_at, "not started"))
        else:
            out.append(ParticipantStatus(p.participant_id, p.note, p.created_at,
                                         "finished" if s.completed_at else "not finished", s.session_id,
                                         s.started_at, s.completed_at or "",
                                         outcome_of(s)))
    return out


def statuses_of(store: Store) -> list[ParticipantStatus]:
    """:func:`participant_statuses` of everything stored. The sessions are read only when somebody is invited
    (the results page asks on every render: an open study of 20,000 sessions would read them all, 0.6 s)."""
    participants = store.participants()
    return participant_statuses(participants, store.sessions()) if participants else []


def status_counts(statuses: Sequence[ParticipantStatus]) -> dict[str, int]:
    """How many participants are in each status (every status listed, zeros included)."""
    return {s: sum(x.status == s for x in statuses) for s in STATUSES}


def status_frame(statuses: Sequence[ParticipantStatus]) -> pd.DataFrame:
    """The statuses as a table (participant, note, status, session, started, finished)."""
    import pandas as pd  # (here: the CLI's other commands and `check` need not load pandas)

    return pd.DataFrame(
        [{"participant_id": s.participant_id, "note": s.note, "status": s.status, "session": s.session_id[:8],
          "started_at": s.started_at or None, "completed_at": s.completed_at or None, "flag": s.flag}
         for s in statuses],
        columns=["participant_id", "note", "status", "session", "started_at", "completed_at", "flag"])


# ----------------------------------------------------------------------------- progress through fixed lists


def fixed_tasks(study: Study, item_sets: Mapping[Path, ItemSet]) -> dict[str, Mapping[str, tuple[str, ...]]]:
    """The tasks with ``assignment = "fixed"``, each with its lists (participant id -> item ids in order)."""
    return {t.id: fixed_lists(t.source, item_sets[t.source.items]) for t in study.tasks
            if getattr(getattr(t, "source", None), "fixed", None) is not None}


def list_progress(lists: Mapping[str, tuple[str, ...]], statuses: Sequence[ParticipantStatus],
                  answered: Mapping[str, set[str]]) -> pd.DataFrame:
    """Each participant's progress through their fixed list in one task: participant, status (one of
    :data:`STATUSES`, or "not invited": a list whose id ``evalkit invite`` has not created), the list's length,
    how many of its items they answered (``answered``: the items each session answered,
    :meth:`Store.answered_items`; a check item on the list counts, the task's other checks do not) and the share;
    then the invited participants without a list (they get no question of the task)."""
    import pandas as pd

    by_id = {s.participant_id: s for s in statuses}
    rows = []
    for pid, ids in lists.items():
        s = by_id.get(pid)
        done = len(set(ids) & answered.get(s.session_id, set())) if s is not None and s.session_id else 0
        rows.append({"participant_id": pid, "status": s.status if s is not None else "not invited",
                     "items": len(ids), "answered": done, "share": done / len(ids)})
    rows += [{"participant_id": s.participant_id, "status": "no list", "items": 0, "answered": 0, "share": None}
             for s in statuses if s.participant_id not in lists]
    return pd.DataFrame(rows, columns=["participant_id", "status", "items", "answered", "share"])


def status_text(statuses: Sequence[ParticipantStatus]) -> str:
    """The CLI's summary: the counts, then who has not started and who has not finished."""
    counts = status_counts(statuses)
    lines = [f"Invited participants: {len(statuses)} · not started {counts['not started']} · "
             f"not finished {counts['not finished']} · finished {counts['finished']}"]
    for status in ("not started", "not finished"):
        rows = [s for s in statuses if s.status == status]
        if rows:
            lines += ["", f"{status.capitalize()} ({len(rows)}):"]
            lines += [f"  {s.participant_id}" + (f"  {strip_controls(s.note)}" if s.note else "")
                      + (f"  (started {s.started_at})" if s.started_at else "") for s in rows]
    flagged = [s for s in statuses if s.flag]
    if flagged:
        lines += ["", f"Finished, but look at these ({len(flagged)}):"]
        lines += [f"  {s.participant_id}  {s.flag}" for s in flagged]
    return "\n".join(lines) + "\n"


def statuses_csv(statuses: Sequence[ParticipantStatus]) -> str:
    """Every participant's status as CSV (cells safe to open in a spreadsheet)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["participant_id", "note", "status", "session_id", "invited_at", "started_at", "completed_at",
                     "outcome"])
    for s in statuses:
        writer.writerow([safe_cell(s.participant_id), safe_cell(s.note), s.status, s.session_id, s.invited_at,
                         s.started_at, s.completed_at, s.outcome])
    return out.getvalue()
