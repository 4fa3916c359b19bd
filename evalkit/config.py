"""``config.toml`` -> a typed, validated :class:`Study`.

Every mistake raises :class:`ConfigError` with a message that names the file
and the key, e.g. ``config.toml: [[tasks]] #2 (id 'pairwise'): key 'response':
must be one of 'choice', 'slider'; got 'stars'``. Unknown keys are errors too
(with a did-you-mean hint), because a misspelt key silently ignored would run a
different study than the one the researcher wrote.

Checks that need the review files (a source with no dataset file, a domain list
asking for more reviews than the pool holds) are in :func:`check_pools`;
:func:`open_study` runs both.

Floor: the study (``.importlinter``). May import the checks, the task kinds and the core (items, datasets, rng,
store, ...); never the planner, the analysis or anything above them.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checks import TaskChecks, parse_max_failed_checks, parse_task_checks, validate_checks
from .datasets import (
    DatasetError,
    Pools,
    dataset_files,
    load_pools,
    read_file_bytes,
    review_counts,
)
from .items import ItemSet, load_items
from .media import MediaError, hosts, local_file, remote_problem
from .rating_items import RatingItem, load_rating_items
from .store import Database, StoreError, resolve_database
from .tasks import KINDS, Common, PairwiseTask, RatingTask, Task, TripletTask, known_kinds
from .tasks.base import ConfigError, StudyPaths, Table, type_name
from .tasks.itemsource import ItemsSource, long_texts
from .tasks.rating import Metric
from .text import is_code

__all__ = [
    "BiasControls",
    "ConfigError",
    "LoadedStudy",
    "Metric",
    "PairwiseTask",
    "PoolFilters",
    "RatingTask",
    "SessionLimits",
    "Study",
    "Task",
    "TripletTask",
    "check_pools",
    "load_study",
    "needed_reviews",
    "open_study",
]

_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])/(?:[^\s'\"(),;:]+/)*[^\s'\"(),;:]*")


def relative_paths(message: str, base: str | Path) -> str:
    """``message`` with absolute paths made relative to the study folder ``base``, for evaluators' screens.

    Paths inside ``base`` lose that prefix (``/srv/study/datasets/x.xml`` -> ``datasets/x.xml``); any
    other absolute path is cut to its last part (``.../x.sqlite``), so a set-up message shown in a browser
    names the file without revealing the server's folders. The full message belongs in the log and in
    ``evalkit check``.
    """
    root = str(Path(base).resolve()).rstrip("/") + "/"
    message = message.replace(root, "")  # first, whole: the folder's name may contain spaces

    def shorten(match: re.Match[str]) -> str:
        path = match.group(0)
        if path.startswith(root):
            return path[len(root):] or "."
        if path.rstrip("/") == root.rstrip("/"):
            return "."
        name = path.rstrip("/").rsplit("/", 1)[-1]
        return f".../{name}" if name else path

    return _ABSOLUTE_PATH.sub(shorten, message)


@dataclass(frozen=True)
class PoolFilters:
    """Which reviews are eligible (see :func:`evalkit.datasets.load_reviews`)."""

    max_sentences: int = 4
    min_sentences: int = 2
    min_chars: int = 120
    max_chars: int = 600

    def as_kwargs(self) -> dict[str, int]:
        """The filters as keyword arguments of ``load_reviews`` / ``load_pools``."""
        return {"max_sentences": self.max_sentences, "min_sentences": self.min_sentences,
                "min_chars": self.min_chars, "max_chars": self.max_chars}


@dataclass(frozen=True)
class BiasControls:
    """Length matching at selection and length normalisation at display."""

    length_tolerance: float = 0.40  # others within +-40 % of the anchor's characters
    sentence_tolerance: int = 1  # ... and +-1 sentence
    truncate_low: float = 0.85  # display target drawn from 85-100 % of the shortest text
    truncate_high: float = 1.00


@dataclass(frozen=True)
class SessionLimits:
    """``[study.session]``: limits against fatigue (None = no limit, see :func:`evalkit.survey.session_step`).

    ``max_minutes``: a session that has run this long (from its start) ends at its next question;
    ``questions``: at most this many judgments (answers and rated items, attention checks included; practice
    questions and forms not); ``pause_every``: a "take a short break" screen after every this many.
    ``abandon_minutes``: a session with nothing recorded this long after its start is marked abandoned (its
    claims and arrival number go to others, see :meth:`evalkit.store.Store.abandon_idle`); 0 = never."""

    max_minutes: int | None = None
    questions: int | None = None
    pause_every: int | None = None
    abandon_minutes: int = 60


#: ``[study] participants``: who may start a session.
PARTICIPANT_MODES = ("open", "invited")
#: ``[study] positions``: how the texts of a question are placed (see :mod:`evalkit.balance`)
POSITION_MODES = ("rotation", "shuffle")
#: ``[study] done_message``'s placeholders and what each stands for: the completion code shown, or the participant's
#: id (an invited participant's, else the platform's, else empty). Pearmut's ``${TOKEN}`` / ``${USER_ID}`` and
#: evalkit's ``{code}`` / ``{participant}``; any other ``${...}`` is an error.
DONE_PLACEHOLDERS = {"${TOKEN}": "code", "${USER_ID}": "participant", "{code}": "code", "{participant}": "participant"}


@dataclass(frozen=True)
class Study:
    """A whole study as described by one ``config.toml``."""

    path: Path
    title: str
    datasets: Path
    database: Database  # a SQLite file's path, or a PostgreSQL URL (str; print it with store.describe)
    completion_url: str
    seed: int
    estimated_minutes: int | None
    consent_text: str
    description: str
    pool: PoolFilters
    bias: BiasControls
    tasks: tuple[Task, ...]
    #: store the browser's User-Agent with each session (off by default: say so in the consent text if on)
    record_user_agent: bool = False
    config_sha256: str = field(repr=False, default="")
    domain_names: tuple[tuple[str, str], ...] = ()  # ([study.domain_names]) domain -> name shown to evaluators
    #: who may start: "open" (anyone with the study URL) or "invited" (only a valid private link of
    #: ``python -m evalkit invite``)
    participants: str = "open"
    #: tutorials and attention checks, by task id (see evalkit.checks)
    checks: tuple[tuple[str, TaskChecks], ...] = ()
    #: [study.quality]: more failed attention checks than this = failed (a count, or a proportion below 1)
    max_failed_checks: int | float = 0
    completion_code_pass: str = ""  # study-level codes a platform verifies ("" = a per-session code)
    completion_code_fail: str = ""
    #: the code of a session that could not get work (the queue was full): a platform's screen-out code for a fixed
    #: payment; "" = no code, the evaluator is asked to return the study (see evalkit.checks.completion_code)
    completion_code_full: str = ""
    redirect_seconds: int = 5  # the done screen sends the evaluator to completion_url after this (0 = never)
    session: SessionLimits = SessionLimits()  # [study.session]: time / question limits and pauses
    #: ``[study] positions``: "rotation" (Williams rows keyed by arrival, every kind), "shuffle" (an independent
    #: draw per evaluator, every kind) or None (unset: rotation for the items kinds, shuffle for the review pools)
    positions: str | None = None
    #: ``evalkit check``'s warnings about the config's paths: each absolute path outside the study folder
    path_warnings: tuple[str, ...] = ()
    #: ``[study] blind``: False shows each output's system name in its card (tasks over items files; Pearmut's
    #: ``show_model_names``); True (the default): system names never reach the browser
    blind: bool = True
    #: ``[study] done_message``: the researcher's Markdown shown on the done screen instead of the thanks line, with
    #: :data:`DONE_PLACEHOLDERS` filled in (see :func:`evalkit.survey.done_text`); "" = the default line
    done_message: str = ""
    #: ``[study] media``: the folder every local media file of the items must be in (resolved); None: the config's
    #: folder's ``media``
    media: Path | None = None
    #: ``[study] allow_remote_media``: items may name media by ``url`` (the evaluators' browsers then fetch them
    #: from those hosts, which learn each evaluator's address); False (the default): remote media are refused
    allow_remote_media: bool = False

    @property
    def media_folder(self) -> Path:
        """The study's media folder (``[study] media``, default ``media`` beside the config)."""
        return self.media if self.media is not None else self.path.parent / "media"

    def rotates(self, kind: str) -> bool:
        """Whether tasks of ``kind`` take display orders from the Williams rotation (for sessions with an
        arrival): ``[study] positions``, by default only the kinds over items files."""
        if self.positions is not None:
            return self.positions == "rotation"
        return KINDS[kind].source == "items"

    def task_checks(self, task_id: str) -> TaskChecks | None:
        """The tutorial and attention-check settings of a task, or None."""
        return dict(self.checks).get(task_id)

    def domain_label(self, domain: str) -> str:
        """The name evaluators see for ``domain``: ``[study.domain_names]``, else the key capitalised."""
        return dict(self.domain_names).get(domain) or domain.capitalize()

    @property
    def sampled_tasks(self) -> list[TripletTask | PairwiseTask]:
        """The triplet and pairwise blocks (the ones drawn from review pools), in order."""
        return [t for t in self.tasks if KINDS[t.kind].source == "pools"]  # type: ignore[misc]

    def task(self, task_id: str) -> Task:
        """The task with this id (KeyError if none)."""
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def pool_slots(self) -> list[tuple[str, tuple[tuple[str, ...], str]]]:
        """(task id, (sources, domain)) of every question any task draws from the review pools."""
        return [(t.id, slot) for t in self.tasks for slot in KINDS[t.kind].pool_slots(t)]

    @property
    def sources(self) -> list[str]:
        """Every source named by a task that draws from the review pools, in first-use order."""
        out: list[str] = []
        for _, (sources, _domain) in self.pool_slots():
            out.extend(s for s in sources if s not in out)
        return out

    @property
    def domains(self) -> list[str]:
        """Every domain named by a task that draws from the review pools, in first-use order."""
        out: list[str] = []
        for _, (_sources, d) in self.pool_slots():
            if d not in out:
                out.append(d)
        return out


def _read_text(paths: StudyPaths, rel: str, table: Table, key: str) -> str:
    path = paths.resolve(table, key, rel)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        table.fail(key, f"file {rel!r} not found (looked for {path})")
    except (OSError, UnicodeDecodeError) as exc:
        table.fail(key, f"cannot read {rel!r}: {exc}")
    raise AssertionError("unreachable")


def _task(data: Any, file: Path, base: Path, n: int, checks: dict[str, TaskChecks] | None = None,
          paths: StudyPaths | None = None) -> Task:
    """One ``[[tasks]]`` table: the keys every kind takes, then the kind's own (see :mod:`evalkit.tasks`)."""
    probe = data if isinstance(data, dict) else {}
    label = f"[[tasks]] #{n}" + (f" (id {probe['id']!r})" if isinstance(probe.get("id"), str) else "")
    t = Table(data, file, label)
    kind = KINDS[t.choice("kind", tuple(KINDS))]
    task_id = t.ident("id")
    paths = paths or StudyPaths(file)
    common = Common(file=file, base=base, label=label, id=task_id, title=t.str("title", task_id.capitalize()),
                    instructions=t.str("instructions", "", nonempty=False), paths=paths)
    task = kind.parse(t, common)
    pools = kind.source == "pools" or (kind.name == "realfake" and getattr(task, "source", None) is None)
    if pools and isinstance(t.data.get("checks"), str):  # the checks file: a path key like the others
        paths.resolve(t, "checks", t.data["checks"])
    found = parse_task_checks(t, common, kind.name, pools)
    if found is not None and checks is not None:
        checks[task_id] = found
    t.done()
    return task


def load_study(path: str | Path = "config.toml", *, database: str | Path | None = None,
               database_from: str = "EVALKIT_DATABASE") -> Study:
    """Parse and validate ``config.toml`` (no dataset reading beyond file checks).

    Relative paths in the config are relative to the config file's folder and must stay in the study folder
    (:class:`~evalkit.tasks.base.StudyPaths`); absolute ones are accepted (``Study.path_warnings`` notes those
    outside it). ``database`` overrides ``[study] database`` (tests, deployments).
    """
    path = Path(path)
    raw = read_file_bytes(path, "study config", ConfigError)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path.name}: not valid UTF-8 ({exc.reason})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path.name}: not valid TOML: {exc}") from None
    base = path.resolve().parent
    paths = StudyPaths(path)  # every path key is resolved here, under the study-folder rule
    top = Table(data, path, "top level")

    st = Table(top.get("study"), path, "[study]")
    title = st.str("title")
    datasets = paths.resolve(st, "datasets", st.str("datasets", "datasets"))
    # A folder the config names must exist; the default one only when a task draws reviews from the pools (a
    # study over items files alone needs none: checked below, once the tasks are known).
    if not datasets.is_dir() and "datasets" in st.data:
        st.fail("datasets", f"folder {st.data['datasets']!r} not found (looked for {datasets})")
    configured_db = st.str("database", "data/responses.sqlite")
    try:
        db = resolve_database(configured_db, base)
        if isinstance(db, Path) and database is None:  # a SQLite file (not a URL) in use: a path like the others
            paths.check(st, "database", configured_db, db,
                        absolute=Path(resolve_database(configured_db)).is_absolute())
        if database is not None:  # EVALKIT_DATABASE or a test's override
            db = resolve_database(database, Path.cwd())
    except StoreError as exc:
        where = "key 'database'" if database is None else f"the database override ({database_from})"
        raise ConfigError(f"{path.name}: [study] {where}: {exc}") from None
    completion_url = st.str("completion_url", "", nonempty=False).strip()
    if completion_url:
        if not re.match(r"^https?://[^\s]+$", completion_url):
            st.fail("completion_url", f"must be an http(s) URL, got {completion_url!r}")
        fields = set(re.findall(r"\{([^{}]*)\}", completion_url))
        if fields - {"code"}:
            st.fail("completion_url", f"only the placeholder {{code}} is allowed, found {sorted(fields - {'code'})}")
    seed = st.int("seed", 0, minimum=0)
    if seed > 0xFFFFFFFF:
        st.fail("seed", f"must fit in 32 bits (0..4294967295), got {seed}")
    minutes = st.get("estimated_minutes", None)
    if minutes is not None:
        minutes = st.int("estimated_minutes", minimum=1)
    consent_rel = st.get("consent", None)
    consent_text = "" if consent_rel is None else _read_text(paths, st.str("consent"), st, "consent")
    description = st.str("description", "", nonempty=False)
    record_user_agent = st.get("record_user_agent", False)
    if not isinstance(record_user_agent, bool):
        st.fail("record_user_agent", f"must be true or false, got {type_name(record_user_agent)}")
    blind = st.get("blind", True)
    if not isinstance(blind, bool):
        st.fail("blind", f"must be true or false (false shows the system names to the evaluators), got "
                         f"{type_name(blind)}")
    done_message = st.str("done_message", "", nonempty=False).strip()
    media_folder = paths.resolve(st, "media", st.str("media", "media"))
    if media_folder.exists() and not media_folder.is_dir():
        st.fail("media", f"{st.data.get('media', 'media')!r} is a file, not a folder (looked for {media_folder})")
    allow_remote_media = st.get("allow_remote_media", False)
    if not isinstance(allow_remote_media, bool):
        st.fail("allow_remote_media", f"must be true or false, got {type_name(allow_remote_media)}")
    unknown = sorted({f"${{{name}}}" for name in re.findall(r"\$\{([^{}]*)\}", done_message)} - set(DONE_PLACEHOLDERS))
    if unknown:
        st.fail("done_message", f"unknown placeholder {unknown[0]}; the placeholders are "
                                f"{', '.join(DONE_PLACEHOLDERS)}")
    participants = st.get("participants", "open")
    if participants not in PARTICIPANT_MODES:
        st.fail("participants", f"must be one of {', '.join(repr(m) for m in PARTICIPANT_MODES)} (\"invited\": only "
                                f"the private links of `python -m evalkit invite` may start), got {participants!r}")
    positions = st.get("positions", None)
    if positions is not None and positions not in POSITION_MODES:
        st.fail("positions", f"must be one of {', '.join(repr(m) for m in POSITION_MODES)} (\"rotation\": the "
                             f"texts' positions rotate over evaluators in arrival order), got {positions!r}")
    codes = {}
    for key in ("completion_code_pass", "completion_code_fail", "completion_code_full"):
        code = st.str(key, "", nonempty=False).strip()
        if code and not is_code(code):
            st.fail(key, f"must be 1-64 letters, digits, '_' or '-', got {code!r}")
        codes[key] = code
    if codes["completion_code_pass"] and codes["completion_code_pass"] == codes["completion_code_fail"]:
        st.fail("completion_code_fail", "must differ from completion_code_pass")
    if codes["completion_code_full"] and codes["completion_code_full"] == codes["completion_code_pass"]:
        st.fail("completion_code_full", "must differ from completion_code_pass")
    redirect_seconds = st.int("redirect_seconds", 5, minimum=0)
    if redirect_seconds > 600:
        st.fail("redirect_seconds", f"must be at most 600 (0 = no automatic redirect), got {redirect_seconds}")
    qt = Table(st.get("quality", {}), path, "[study.quality]")
    max_failed = parse_max_failed_checks(qt)
    qt.done()
    se = Table(st.get("session", {}), path, "[study.session]")
    session = SessionLimits(**{key: se.int(key, minimum=1) if se.get(key, None) is not None else None
                               for key in ("max_minutes", "questions", "pause_every")},
                            abandon_minutes=se.int("abandon_minutes", 60, minimum=0))
    se.done()
    names = Table(st.get("domain_names", {}), path, "[study.domain_names]")
    domain_names = {key: names.str(key).strip() for key in names.data}
    st.done()

    pt = Table(top.get("pool", {}), path, "[pool]")
    pool = PoolFilters(
        max_sentences=pt.int("max_sentences", 4, minimum=1),
        min_sentences=pt.int("min_sentences", 2, minimum=0),
        min_chars=pt.int("min_chars", 120, minimum=0),
        max_chars=pt.int("max_chars", 600, minimum=1),
    )
    if pool.min_sentences > pool.max_sentences:
        pt.fail("min_sentences", f"({pool.min_sentences}) is greater than max_sentences ({pool.max_sentences})")
    if pool.min_chars > pool.max_chars:
        pt.fail("min_chars", f"({pool.min_chars}) is greater than max_chars ({pool.max_chars})")
    pt.done()

    bt = Table(top.get("bias", {}), path, "[bias]")
    trunc = bt.get("truncate", [0.85, 1.0])
    if (not isinstance(trunc, list) or len(trunc) != 2
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in trunc)):
        bt.fail("truncate", f"must be [low, high] fractions, e.g. [0.85, 1.0]; got {trunc!r}")
    low, high = float(trunc[0]), float(trunc[1])
    if not (0 < low <= high <= 1):
        bt.fail("truncate", f"needs 0 < low <= high <= 1, got [{low}, {high}]")
    bias = BiasControls(
        length_tolerance=bt.float("length_tolerance", 0.40, low=0.0, high=10.0),
        sentence_tolerance=bt.int("sentence_tolerance", 1, minimum=0),
        truncate_low=low,
        truncate_high=high,
    )
    bt.done()

    raw_tasks = top.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        top.fail("tasks", f"needs at least one [[tasks]] block (kind = {known_kinds()})")
    task_checks: dict[str, TaskChecks] = {}
    tasks = tuple(_task(d, path, base, n, task_checks, paths) for n, d in enumerate(raw_tasks, start=1))
    ids = Counter(t.id for t in tasks)
    dup = [i for i, c in ids.items() if c > 1]
    if dup:
        raise ConfigError(f"{path.name}: [[tasks]]: task id {dup[0]!r} is used by more than one task")
    top.done()
    known = [d for t in tasks for _, d in KINDS[t.kind].pool_slots(t)]
    for key in domain_names:
        if key not in known:
            near = difflib.get_close_matches(key, sorted(set(known)), n=1)
            hint = f" (did you mean '{near[0]}'?)" if near else ""
            names.fail(key, f"is not a domain of any task{hint}; the tasks' domains: "
                            f"{', '.join(sorted(set(known))) or 'none'}")
    if known and not datasets.is_dir():
        st.fail("datasets", f"folder 'datasets' not found (looked for {datasets}); the tasks over the review pools "
                            "read their reviews there")
    return Study(
        path=path.resolve(), title=title.strip(), datasets=datasets,
        database=db.resolve() if isinstance(db, Path) else db,
        completion_url=completion_url, seed=seed, estimated_minutes=minutes, consent_text=consent_text,
        description=description, pool=pool, bias=bias, tasks=tasks, record_user_agent=record_user_agent,
        config_sha256=hashlib.sha256(raw).hexdigest(), domain_names=tuple(sorted(domain_names.items())),
        participants=participants,
        checks=tuple(task_checks.items()), max_failed_checks=max_failed,
        completion_code_pass=codes["completion_code_pass"], completion_code_fail=codes["completion_code_fail"],
        completion_code_full=codes["completion_code_full"],
        redirect_seconds=redirect_seconds, session=session, positions=positions,
        path_warnings=tuple(paths.outside), blind=blind, done_message=done_message,
        media=media_folder, allow_remote_media=allow_remote_media,
    )


def needed_reviews(study: Study) -> dict[tuple[str, str], dict[str, int]]:
    """Reviews one evaluator's plan draws per (source, domain), broken down by task id."""
    need: dict[tuple[str, str], dict[str, int]] = {}
    for task_id, (sources, domain) in study.pool_slots():
        for s in sources:
            per_task = need.setdefault((s, domain), {})
            per_task[task_id] = per_task.get(task_id, 0) + 1
    return need


def check_pools(study: Study, pools: Mapping[tuple[str, str], list[Any]]) -> None:
    """Check the config against the loaded review pools; :class:`ConfigError` on the first problem.

    Every (source, domain) a task asks for must have a dataset file, and enough
    eligible reviews that no evaluator's plan repeats a review.
    """
    name = study.path.name
    for task_id, (sources, domain) in study.pool_slots():
        for s in sources:
            if (s, domain) not in pools:
                expected = f"{s}-{domain}s.xml"
                have = sorted({d for (src, d) in pools if src == s})
                why = (f"source {s!r} has files for {have} only" if have
                       else f"no dataset file names source {s!r}")
                raise ConfigError(
                    f"{name}: [[tasks]] id {task_id!r}: source {s!r} in domain {domain!r} has no dataset "
                    f"file: expected {study.datasets / expected} ({why})"
                )
    for (s, d), per_task in needed_reviews(study).items():
        total = sum(per_task.values())
        have = len(pools[(s, d)])
        if total > have:
            detail = ", ".join(f"task {t!r}: {n}" for t, n in per_task.items())
            file = getattr(pools, "files", {}).get((s, d))
            n_reviews, n_text = review_counts(file) if file is not None else (None, None)
            if n_reviews == 0 or n_text == 0:  # not a filter problem: say what is wrong with the file
                what = "has no <Review> elements" if n_reviews == 0 else (
                    f"has {n_reviews} reviews but every one of them has empty text (no <text> content)")
                raise ConfigError(f"{name}: [[tasks]] id {next(iter(per_task))!r}: source {s!r} in domain {d!r}: "
                                  f"{file} {what}, so there is nothing to show")
            raise ConfigError(
                f"{name}: [[tasks]] domains: the tasks ask for {total} different reviews of source {s!r} in "
                f"domain {d!r} ({detail}) but only {have} are eligible in {s}-{d}s.xml under the [pool] "
                "filters; shorten the domain lists, add reviews or relax the filters"
            )


@dataclass(frozen=True)
class LoadedStudy:
    """A study with its pools and rating items, validated together."""

    study: Study
    pools: Pools
    items: dict[str, list[RatingItem]]
    version: str
    #: the items files of compare / score / rank / realfake tasks, by resolved path (indexes built)
    item_sets: dict[Path, ItemSet] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        """What ``evalkit check`` warns about (the study runs, but maybe not as meant): absolute paths outside
        the study folder, then each task's data warnings (items lacking an output of a listed system), then texts
        longer than :data:`~evalkit.tasks.itemsource.LONG_TEXT` characters."""
        out = [*not_blind(self.study), *fixed_but_open(self.study), *self.study.path_warnings]
        for task in self.study.tasks:
            out.extend(KINDS[task.kind].warnings(task, self.study.path, self.item_sets))
        for items in self.item_sets.values():  # texts too long for a question, once per items file
            out.extend(long_texts(items, self.study.path.parent))
        out.extend(media_warnings(self.study, self.item_sets))
        return out


def check_media(study: Study, item_sets: Mapping[Path, ItemSet]) -> None:
    """ConfigError for the first media value of the items files that may not be shown: a local file that is
    missing or not inside the study's media folder (``..`` and symbolic links resolved, see
    :func:`evalkit.media.local_file`), or a remote one in a study without ``[study] allow_remote_media = true``.
    The message names the items file, the line, the item and the key."""
    base, folder = study.path.parent, study.media_folder
    for items in item_sets.values():
        for item in items:
            for key, value in item.media():
                problem = remote_problem(value, study.allow_remote_media)
                if problem is None and value.path is not None:
                    try:
                        local_file(value, base, folder)
                    except MediaError as exc:
                        problem = str(exc)
                if problem is not None:
                    raise ConfigError(f"{study.path.name}: {items.path.name}, line {item.line} (item {item.id!r}): "
                                      f"key {key}: {problem}")


def media_warnings(study: Study, item_sets: Mapping[Path, ItemSet]) -> list[str]:
    """``evalkit check``'s warnings about media: the hosts remote media come from (loudly: each evaluator's address
    goes to them; the consent text should say so), ``allow_remote_media`` set with no remote media, and a task
    that requires full plays of items holding video players (YouTube, Vimeo) whose plays cannot be logged."""
    values = [value for items in item_sets.values() for item in items for _, value in item.media()]
    out = []
    remote = hosts(values)
    if remote:
        out.append(f"REMOTE MEDIA ([study] allow_remote_media = true): the evaluators' browsers fetch images, audio "
                   f"or video from {len(remote)} other host(s): {', '.join(remote)}. Each of them learns every "
                   "evaluator's address (and browser) and when they reached the question: say so in the consent "
                   "text, or put the files in the media folder.")
    elif study.allow_remote_media:
        out.append("[study] allow_remote_media = true has no effect: no item names a remote file (a 'url').")
    for task in study.tasks:
        source = getattr(task, "source", None)
        if not getattr(source, "require_full_play", False) or source.items not in item_sets:
            continue
        players = [item.id for item in item_sets[source.items] for _, value in item.media() if value.embed]
        if players:
            out.append(f"{study.path.name}: [[tasks]] id {task.id!r}: key 'require_full_play': {len(players)} "
                       f"item(s) hold a YouTube or Vimeo video (e.g. {players[0]!r}), whose plays cannot be logged; "
                       "they are not required to be played")
    return out


def not_blind(study: Study) -> list[str]:
    """``evalkit check``'s warning for ``[study] blind = false`` (first of all warnings): the evaluators see which
    system wrote each output, so their judgments may follow the names; and a realfake task gives its answer away."""
    if study.blind:
        return []
    items_tasks = [t for t in study.tasks if isinstance(getattr(t, "source", None), ItemsSource)]
    if not items_tasks:
        return ["[study] blind = false has no effect: no task reads an items file (system names are shown only on "
                "the cards of compare, score, spans, rank and realfake tasks over an items file)."]
    turing = [t.id for t in items_tasks if t.kind == "realfake"]
    spoiled = (f" In realfake task(s) {', '.join(repr(t) for t in turing)} the name tells whether the text is real: "
               "the test means nothing." if turing else "")
    return ["THE STUDY IS NOT BLIND ([study] blind = false): every output's card shows its system's name to the "
            f"evaluators (tasks {', '.join(repr(t.id) for t in items_tasks)}), so their judgments may be biased by "
            f"the names and are not comparable with a blind study's.{spoiled} Remove the key (or set blind = true) "
            "unless showing the names is the point of the study."]


def fixed_but_open(study: Study) -> list[str]:
    """``evalkit check``'s warning for a task with fixed lists in a study open to anyone: only a private link says
    who a participant is, so everyone else gets no question of the task."""
    fixed = [t.id for t in study.tasks if getattr(getattr(t, "source", None), "fixed", None) is not None]
    if not fixed or study.participants == "invited":
        return []
    return [f"tasks {', '.join(repr(t) for t in fixed)} give each participant their own list (assignment = "
            "\"fixed\"), but [study] participants = \"open\": only the private links of `evalkit invite` say who a "
            "participant is, so anyone else who opens the study gets no question of these tasks. Set participants "
            "= \"invited\"."]


def study_summary(study: Study) -> dict[str, Any]:
    """What the analysis needs to know about the tasks, as JSON-ready data (stored in the database)."""
    tasks = [{"id": t.id, "kind": t.kind, "title": t.title, **KINDS[t.kind].describe(t)} for t in study.tasks]
    return {"title": study.title, "tasks": tasks, "max_failed_checks": study.max_failed_checks}


def study_version(study: Study) -> str:
    """A short hash of the config, the consent text and every dataset file the study reads."""
    h = hashlib.sha256()
    h.update(study.config_sha256.encode())
    h.update(study.consent_text.encode("utf-8"))
    # the review files count only for a study that reads the pools (one over items files alone does not load them)
    paths = sorted(dataset_files(study.datasets).values()) if study.pool_slots() else []
    paths += sorted({t.items for t in study.tasks if isinstance(t, RatingTask)})
    paths += sorted({p for t in study.tasks for p in KINDS[t.kind].items_files(t)} - set(paths))
    paths += sorted({c.file for _, c in study.checks if c.file is not None} - set(paths))
    for p in paths:
        h.update(p.name.encode("utf-8") + b"\0")
        with open(p, "rb") as fh:
            for chunk in iter(lambda fh=fh: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def open_study(path: str | Path = "config.toml", *, database: str | Path | None = None,
               database_from: str = "EVALKIT_DATABASE") -> LoadedStudy:
    """Load the config, the review pools and the rating items, and check them together.

    Raises :class:`ConfigError` for config mistakes and :class:`DatasetError`
    for broken data files; both messages name the file.
    """
    study = load_study(path, database=database, database_from=database_from)
    # (a study over items files alone never loads review files: its datasets folder may hold any, or be absent)
    pools = load_pools(study.datasets, **study.pool.as_kwargs()) if study.pool_slots() else Pools()
    check_pools(study, pools)
    for source, domain in pools:  # build the length indexes now, not during an evaluator's first click
        pools.index(source, domain)
    items: dict[str, list[RatingItem]] = {}
    for task in study.tasks:
        if isinstance(task, RatingTask):
            items[task.id] = load_rating_items(task.items, scale=task.system_label.scale)
            if len(items[task.id]) < task.min_items:
                raise ConfigError(
                    f"{study.path.name}: [[tasks]] id {task.id!r}: key 'min_items' asks for {task.min_items} "
                    f"items but {task.items.name} holds only {len(items[task.id])}"
                )
    item_sets: dict[Path, ItemSet] = {}
    for task in study.tasks:
        kind = KINDS[task.kind]
        for file in kind.items_files(task):
            if file not in item_sets:
                item_sets[file] = load_items(file)
        kind.check(task, study.path, item_sets)
    check_media(study, item_sets)
    validate_checks(study, pools, item_sets)
    return LoadedStudy(study=study, pools=pools, items=items, version=study_version(study), item_sets=item_sets)


__all__ += ["DatasetError", "study_version"]
__all__ += ["DONE_PLACEHOLDERS", "not_blind"]
