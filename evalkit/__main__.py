"""Command line: ``evalkit check | plan | report | export | copy | invite | serve`` (the ``evalkit`` command of
``pip install .``, or ``python -m evalkit``).

Exit status 0 on success, 1 when the study or its data is invalid (the message
names the file and the key), 2 for a usage error (and for ``serve``, a study
config that is not there). Nothing here imports Streamlit: ``serve`` starts it
in its own process (:mod:`evalkit.serve`).

Floor: the command line, the top of evalkit (``.importlinter``). May import any evalkit module (the heavy ones,
analysis and export, inside the commands that need them).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .balance import audit, audit_lines
from .checks import TaskChecks
from .config import ConfigError, LoadedStudy, RatingTask, Study, load_study, needed_reviews, open_study
from .datasets import DatasetError, count_reviews
from .invite import (
    InviteError,
    check_base_url,
    generated_ids,
    invitations_csv,
    invite,
    read_participants_csv,
    reissue,
    status_text,
    statuses_csv,
    statuses_of,
)
from .items import ItemSet
from .pearmut_import import PearmutError, import_campaign, read_campaign
from .queue import count_units
from .sampling import PlanError, plan
from .serve import app_dir, run, streamlit_command
from .store import Store, StoreError, check_database, describe, open_store, resolve_database
from .tasks import kind_of

if TYPE_CHECKING:
    from .analysis import Report

# The analysis and the exports (pandas, scipy: a second and 150 MB) are imported by the commands that use them,
# so `check` on a large items file holds little more than the items (docs/explanation/performance.md, benchmark 10).


def database_secret() -> str | None:
    """The ``database_url`` of Streamlit's secrets files, as ``streamlit run`` from this folder would see it
    (``./.streamlit/secrets.toml`` over ``~/.streamlit/secrets.toml``), or None."""
    for folder in (Path.cwd(), Path.home()):
        path = folder / ".streamlit" / "secrets.toml"
        if path.is_file():
            try:
                value = tomllib.loads(path.read_text(encoding="utf-8")).get("database_url")
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                raise ConfigError(f"{path}: cannot be read: {exc}") from None
            if value:
                return str(value)
    return None


def _open(path: str) -> LoadedStudy:
    """The study as the app opens it: ``EVALKIT_DATABASE``, else the ``database_url`` secret, overrides
    ``[study] database`` here too."""
    if os.environ.get("EVALKIT_DATABASE"):
        return open_study(path, database=os.environ["EVALKIT_DATABASE"])
    return open_study(path, database=database_secret(), database_from="the database_url secret")


def cmd_check(args: argparse.Namespace) -> int:
    """Validate the config and the datasets; print pool sizes per (source, domain)."""
    loaded = _open(args.config)
    study, pools = loaded.study, loaded.pools
    print(f"Study: {study.title}")
    print(f"Config: {study.path}  (version {loaded.version})")
    absent = "" if study.datasets.is_dir() else " (no such folder: no task reads the review pools)"
    print(f"Datasets: {study.datasets}{absent}")
    print(f"Database: {describe(study.database)}: {check_database(study.database)}")  # read-only: changes nothing
    if study.pool_slots():  # the review pools matter only to tasks that draw from them
        f = study.pool
        print(f"Pool filters: {f.min_sentences}..{f.max_sentences} sentences (cut to the first {f.max_sentences}), "
              f"{f.min_chars}..{f.max_chars} characters")
        need = needed_reviews(study)
        print()
        print("Eligible reviews per (source, domain)  [eligible / in file; needed per evaluator]")
        sources = sorted({s for s, _ in pools})
        domains = sorted({d for _, d in pools})
        width = max([len(s) for s in sources] + [6])
        print(" " * (width + 2) + "".join(f"{d:>22}" for d in domains))
        for s in sources:
            cells = []
            for d in domains:
                if (s, d) not in pools:
                    cells.append(f"{'-':>22}")
                    continue
                n_need = sum(need.get((s, d), {}).values())
                cell = f"{len(pools[(s, d)])} / {count_reviews(pools.files[(s, d)])}; {n_need}"
                cells.append(f"{cell:>22}")
            print(f"  {s:<{width}}" + "".join(cells))
    print()
    for task in study.tasks:
        if isinstance(task, RatingTask):
            items = loaded.items[task.id]
            print(f"Task {task.id!r} (rating): {len(items)} items in {task.items.name}, "
                  f"{len(task.metrics)} metrics, at least {task.min_items} item(s) per evaluator")
        elif outline := kind_of(task.kind).outline(task, loaded.item_sets):  # items kinds, forms
            print(f"Task {task.id!r} ({task.kind}): {outline}{checks_outline(loaded.study.task_checks(task.id))}"
                  f"{queue_outline(task, loaded.item_sets, study.seed)}")
        else:
            print(f"Task {task.id!r} ({task.kind}): {len(task.slots())} questions, selection {task.selection}, "
                  f"order {task.order}")
    unmatched = total = 0
    plans = []
    for seed in range(args.samples):  # simulated evaluators: seed i arriving i-th
        planned = plan(study, pools, seed, loaded.item_sets, arrival=seed)  # (every kind's plan is run)
        plans.append(planned)
        questions = [q for q in planned if kind_of(q.kind).source == "pools"]  # only these are length-matched
        total += len(questions)
        unmatched += sum(not q.matched for q in questions)
    warnings: list[str] = loaded.warnings()  # absolute paths outside the study folder, missing outputs
    if not study.consent_text.strip():  # the consent page then only asks "I agree to take part in this study."
        warnings.append("The study has no consent text ([study] consent): evaluators are asked to agree to take part "
                        "without being told what the study is, who runs it or what is recorded. Write it in a "
                        "markdown file and name that file in [study] consent.")
    if args.samples and total:
        share = unmatched / total if total else 0.0
        print(f"Length matching over {args.samples} sample plans: {unmatched} of {total} questions "
              f"unmatched ({share:.1%})")
        if share > args.max_unmatched:
            warnings.append(
                f"{share:.0%} of the sampled questions could not be length-matched (more than "
                f"{args.max_unmatched:.0%}): their texts differ in length beyond [bias] length_tolerance / "
                "sentence_tolerance, so length may give the answer away. Add reviews of similar length, relax "
                "the tolerances or the [pool] filters.")
    if balances := audit(plans):
        print(f"\nBalance over {args.samples} simulated evaluators (arrivals and seeds 0..{args.samples - 1}): "
              "how often each system (or source) was shown at each position, and each pair")
        modes = {t.id: "rotation" if study.rotates(t.kind) else "shuffle" for t in study.tasks}
        print("\n".join(audit_lines(balances, modes=modes)))
    for warning in warnings:
        print(f"\nWARNING: {warning}", file=sys.stderr)
    if warnings and args.strict:
        print("\nFAILED: the study is valid but has warnings, and --strict was given.", file=sys.stderr)
        return 1
    print("\nOK: the study is valid." + (" (with warnings, see above)" if warnings else ""))
    return 0


def queue_outline(task: Any, items: Mapping[Path, ItemSet], study_seed: int) -> str:
    """``evalkit check``'s note on a ``judgments_per_item`` task: units, judgments, evaluators to fill it."""
    spec = kind_of(task.kind).queue_spec(task)
    if spec is None:
        return ""
    n = count_units(task, items)
    questions = task.source.questions
    return (f"; items from a queue shared by all evaluators: {n} units (item and systems) x {spec.k} judgments = "
            f"{n * spec.k} judgments, filled by about {math.ceil(n * spec.k / questions)} evaluators of {questions} "
            f"questions; an unanswered claim returns to the queue after {spec.claim_minutes:g} min")


def checks_outline(tc: TaskChecks | None) -> str:
    """``evalkit check``'s note on a task's tutorial and attention checks (empty without them)."""
    if tc is None or not (tc.tutorial or tc.attention_checks):
        return ""
    parts = []
    if tc.tutorial:
        parts.append(f"{len(tc.tutorial)} tutorial question(s) first"
                     + (" (skippable)" if tc.tutorial_skippable else ""))
    if tc.attention_checks:
        parts.append(f"{len(tc.attention_checks)} attention check(s) "
                     + ("with feedback" if tc.attention_feedback else "silent"))
    return "; plus " + ", ".join(parts)


def cmd_plan(args: argparse.Namespace) -> int:
    """Print one evaluator's plan as JSON, sources included (for audit)."""
    loaded = _open(args.config)
    questions = plan(loaded.study, loaded.pools, args.seed, loaded.item_sets, args.arrival, args.participant)
    out = {"study": loaded.study.title, "version": loaded.version, "seed": args.seed, "arrival": args.arrival,
           **({"participant": args.participant} if args.participant else {}),
           "questions": [q.as_dict(with_sources=True) for q in questions]}
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def _open_db(location: str) -> Store:
    """A database for reading (reports, exports): a path, sqlite:///path or postgresql://..., never created
    or written here."""
    db = resolve_database(location, Path.cwd())
    if isinstance(db, Path) and not db.exists():
        raise ConfigError(f"{describe(db)}: database not found")
    return open_store(db, writable=False)


def cmd_copy(args: argparse.Namespace) -> int:
    """Copy every table from one database to another (ids included) and check the row counts."""
    source_db, dest_db = resolve_database(args.source, Path.cwd()), resolve_database(args.destination, Path.cwd())
    if (isinstance(source_db, Path) and isinstance(dest_db, Path) and source_db.resolve() == dest_db.resolve()) \
            or source_db == dest_db:
        raise ConfigError("copy: the source and the destination are the same database")
    source = _open_db(args.source)
    try:
        with open_store(dest_db) as dest:
            counts = dest.import_from(source, replace=args.replace)
    finally:
        source.close()
    rows = ", ".join(f"{table} {n:,}" for table, n in counts.items())
    print(f"copied {describe(source_db)} to {describe(dest_db)}: {rows} (row counts checked)")
    return 0


def _invite_study(args: argparse.Namespace) -> tuple[Study | None, str | Path]:
    """The study config (when it can be read) and the database ``invite`` works on: ``--db``, else the
    config's database with the same overrides as the app (``EVALKIT_DATABASE``, the ``database_url`` secret)."""
    study = None
    if args.db is None or args.config is not None:  # with --db alone, no config is read
        config = args.config or "config.toml"
        if os.environ.get("EVALKIT_DATABASE"):
            study = load_study(config, database=os.environ["EVALKIT_DATABASE"])
        else:
            study = load_study(config, database=database_secret(), database_from="the database_url secret")
    database = resolve_database(args.db, Path.cwd()) if args.db is not None else study.database  # type: ignore[union-attr]
    return study, database


def _write_new(path: str, text: str) -> None:
    """Write ``text`` to a file that must not exist yet (an earlier export may hold links shown only once)."""
    try:
        with open(path, "x", encoding="utf-8", newline="") as fh:
            fh.write(text)
    except FileExistsError:
        raise InviteError(f"--out {path}: the file exists; choose another name (an earlier export may hold links "
                          "that cannot be shown again)") from None
    except OSError as exc:
        raise InviteError(f"--out {path}: cannot be written: {exc}") from None


def cmd_invite(args: argparse.Namespace) -> int:
    """Create invited participants with private links (``--n`` or ``--csv``), or show their status."""
    study, database = _invite_study(args)
    if args.status:
        if isinstance(database, Path) and not database.exists():
            raise ConfigError(f"{describe(database)}: database not found (nobody has been invited yet)")
        with open_store(database, writable=False) as store:
            statuses = statuses_of(store)
        if args.out:
            _write_new(args.out, statuses_csv(statuses))
            print(f"wrote {args.out}", file=sys.stderr)
        sys.stdout.write(status_text(statuses) if statuses else "No participants have been invited.\n")
        return 0
    base_url = check_base_url(args.base_url)
    if args.reissue:
        return _reissue(args, database, base_url)
    wanted = ([(pid, "") for pid in generated_ids(args.n)] if args.n is not None
              else read_participants_csv(Path(args.csv), id_column=args.id_column, note_column=args.note_column))
    if args.out and Path(args.out).exists():  # checked before anything is stored: the new keys are shown once
        _write_new(args.out, "")
    with open_store(database) as store:
        result = invite(store, wanted)
    text = invitations_csv(result.created, base_url)
    if not result.created:
        pass  # nothing new: no file, no header without rows
    elif args.out:
        _write_new(args.out, text)
        print(f"wrote {len(result.created)} private link(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    if result.skipped:
        shown = ", ".join(result.skipped[:10]) + (f" and {len(result.skipped) - 10} more" if len(result.skipped) > 10
                                                  else "")
        print(f"skipped {len(result.skipped)} id(s) already invited: {shown}. Their links are unchanged (only a hash "
              "of each key is stored, so a link is shown only when its participant is invited).", file=sys.stderr)
    print(f"invited {len(result.created)} participant(s) in {describe(database)}; the links open {base_url}",
          file=sys.stderr)
    if study is not None and study.participants != "invited":
        print(f"note: [study] participants is {study.participants!r} in {study.path.name}: anyone with the "
              "study's address can start too; set participants = \"invited\" to admit only these links.",
              file=sys.stderr)
    return 0


def _reissue(args: argparse.Namespace, database: str | Path, base_url: str) -> int:
    """``invite --reissue ID ...``: new private links for participants who lost theirs (the old ones stop
    working); refused, changing nothing, when an id is not invited."""
    if isinstance(database, Path) and not database.exists():
        raise ConfigError(f"{describe(database)}: database not found (nobody has been invited yet)")
    if args.out and Path(args.out).exists():  # checked before anything is stored: the new keys are shown once
        _write_new(args.out, "")
    with open_store(database) as store:
        renewed = reissue(store, args.reissue)
        started = {s.participant_id: s.status for s in statuses_of(store)}
    text = invitations_csv(renewed, base_url)
    if args.out:
        _write_new(args.out, text)
        print(f"wrote {len(renewed)} new private link(s) to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    print(f"reissued {len(renewed)} link(s) in {describe(database)}: the old links of "
          f"{', '.join(r.participant_id for r in renewed)} no longer work.", file=sys.stderr)
    for r in renewed:
        if started.get(r.participant_id, "not started") != "not started":
            print(f"{r.participant_id} has already started ({started[r.participant_id]}): the new link resumes "
                  "their session.", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> Report:
    from .analysis import Options, analyse, items_of, load_frames

    items = items_of(open_study(args.config)) if args.config else None  # the items' automatic metrics
    store = _open_db(args.db)
    try:
        options = Options(completed_only=args.completed_only, fast_ms=args.fast_ms or Options.fast_ms,
                          familiarity_weighted=args.familiarity_weighted,
                          exclude_failed_checks=not args.keep_failed_checks,
                          include_check_questions=args.with_check_questions)
        return analyse(load_frames(store), options, items)
    finally:
        store.close()


def cmd_report(args: argparse.Namespace) -> int:
    """Print the results (the same numbers as the results page) as Markdown, LaTeX or CSV."""
    from .export import latex_table, markdown_report, results_csv

    report = _report(args)
    text = {"markdown": markdown_report, "latex": latex_table, "csv": results_csv}[args.format](report)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write all evaluations, ratings, scores (one row per score, numeric), form answers or error spans as CSV, or
    the error-span answers as Pearmut's annotation log (JSONL)."""
    from .analysis import evaluations_csv, items_of, load_frames, ratings_csv
    from .export import scores_csv
    from .span_export import pearmut_jsonl, spans_csv
    from .tasks.form_analysis import forms_csv

    items = items_of(open_study(args.config)) if args.config and args.what == "pearmut" else None
    if args.what == "pearmut" and items is None:  # (said, not silent: the file then differs from the page's)
        print("note: without --config the offsets are code points, not Pearmut's (they differ after an emoji or a "
              "line break), and the lines hold no texts; give the study's config to write Pearmut's",
              file=sys.stderr)
    store = _open_db(args.db)
    try:
        if args.what == "forms":
            text = forms_csv(store)
        elif args.what in ("spans", "pearmut"):
            text = spans_csv(store) if args.what == "spans" else pearmut_jsonl(store, items)
        else:
            frames = load_frames(store, full=True)
            text = {"evaluations": evaluations_csv, "ratings": ratings_csv, "scores": scores_csv}[args.what](frames)
    finally:
        store.close()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the survey (``streamlit run`` on the app) for the study ``args.config``."""
    args.config = args.config or os.environ.get("EVALKIT_CONFIG") or "config.toml"
    config = Path(args.config)
    if not config.is_file():
        print(f"error: {args.config}: study config not found; give the study's config.toml: "
              f"{args.prog} CONFIG", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["EVALKIT_CONFIG"] = str(config.resolve())  # its relative paths stay relative to its own folder
    if args.database is not None:  # absolute, so the server reads the database this folder's path names
        env["EVALKIT_DATABASE"] = str(resolve_database(args.database, Path.cwd()))
    # checked here, as the app will read it (same overrides), so a set-up error shows now, not on the first page
    if env.get("EVALKIT_DATABASE"):
        study = load_study(config, database=env["EVALKIT_DATABASE"])
    else:
        study = load_study(config, database=database_secret(), database_from="the database_url secret")
    try:
        folder = app_dir()
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from None
    print(f"serving {study.title!r} ({study.path}), database {describe(study.database)}", file=sys.stderr)
    return run(streamlit_command(folder, port=args.port, address=args.address, extra=args.streamlit_args), env)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("the port must be in 1..65535")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("the share must be in 0..1 (e.g. 0.10 for 10 %)")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError("the number of participants must be in 1..100000")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError("the seed must be in 0..4294967295")
    return value


def _arrival(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("the arrival must be 0 or more (the number of sessions started before)")
    return value


DB_HELP = "the study's database: a SQLite path, sqlite:///path or postgresql://user:password@host:port/db"


def build_parser(prog: str = "python -m evalkit") -> argparse.ArgumentParser:
    """The command line's argument parser; ``prog`` is the command as typed (``evalkit`` for the installed one)."""
    parser = argparse.ArgumentParser(prog=prog, description="evalkit: human evaluation of generated text")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate config.toml and the datasets; print pool sizes")
    p.add_argument("config", nargs="?", default="config.toml", help="study config (default: config.toml)")
    p.add_argument("--samples", type=int, default=100, help="sample plans to check length matching (default 100)")
    p.add_argument("--max-unmatched", type=_share, default=0.10, metavar="SHARE",
                   help="warn when more than this share of sampled questions is not length-matched (default 0.10)")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too (e.g. in a deployment pipeline)")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("plan", help="print the plan of one evaluator seed as JSON (sources included)")
    p.add_argument("--seed", type=_seed, required=True, help="evaluator seed, 0..2**32-1")
    p.add_argument("--arrival", type=_arrival, default=None,
                   help="the evaluator's arrival number (sessions started before; default: none, the plan of a "
                        "session from before arrivals were stored)")
    p.add_argument("--participant", default=None,
                   help="an invited participant's id: their list in tasks with assignment = \"fixed\"")
    p.add_argument("--config", default="config.toml", help="study config (default: config.toml)")
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("report", help="print the results from a database (same numbers as the results page)")
    p.add_argument("--db", required=True, help=DB_HELP)
    p.add_argument("--format", choices=("markdown", "latex", "csv"), default="markdown",
                   help="markdown: every table with its notes; latex: the headline table for a paper (booktabs); "
                        "csv: the headline rows with their intervals and p-values")
    p.add_argument("--completed-only", action="store_true", help="count only sessions that reached the end")
    p.add_argument("--fast-ms", type=int, default=None,
                   help="flag answers faster than this (ms; default: the results page's, 2000)")
    p.add_argument("--familiarity-weighted", action="store_true", help="weight rating means by familiarity")
    p.add_argument("--keep-failed-checks", action="store_true",
                   help="count evaluators who failed their attention checks (left out by default)")
    p.add_argument("--with-check-questions", action="store_true",
                   help="count the answers to tutorial and attention-check questions (left out by default)")
    p.add_argument("--config", help="the study's config: its items files' automatic metrics are correlated with "
                                    "the human judgments (the database does not hold them)")
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("export", help="write all evaluations, ratings, scores, form answers or error spans as CSV, "
                                      "or span and score answers as Pearmut's annotation log")
    p.add_argument("what", choices=("evaluations", "ratings", "scores", "forms", "spans", "pearmut"),
                   help="evaluations: one row per answer (CERA's columns, then evalkit's); ratings: one row per "
                        "rating; scores: one row per score of every kind that scores (score, rating), numeric; "
                        "forms: one row per answer to a background form's field; spans: one row per error span "
                        "(code points); pearmut: one JSON line per answer of a spans or score task (per document of an "
                        "imported Pearmut campaign) in Pearmut's annotation-log shape (UTF-16 offsets with --config)")
    p.add_argument("--db", required=True, help=DB_HELP)
    p.add_argument("--config", help="pearmut: the study's config, whose items give the texts (offsets in UTF-16 "
                                    "units as Pearmut counts them, and the items in the file); without it, code points")
    p.add_argument("-o", "--output", default="-", help="file to write (default: standard output)")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser("copy", help="copy a whole study (every table) between databases, e.g. SQLite to PostgreSQL")
    p.add_argument("source", help="the database to copy from: a SQLite path, sqlite:///path or postgresql://...")
    p.add_argument("destination", help="the database to copy into; created if it is a new SQLite file")
    p.add_argument("--replace", action="store_true", help="delete what the destination holds first")
    p.set_defaults(func=cmd_copy)
    p = sub.add_parser("import", help="make a study folder of another tool's study file (a Pearmut campaign)")
    p.add_argument("format", choices=("pearmut",), help="the file's format: pearmut (a campaign JSON)")
    p.add_argument("campaign", metavar="CAMPAIGN", help="the campaign file (JSON)")
    p.add_argument("--out", help="the study folder to write (default: the campaign id, beside the file)")
    p.add_argument("--force", action="store_true", help="overwrite the files of a study already in --out")
    p.add_argument("--allow-remote-media", action="store_true",
                   help="keep media the campaign loads from other hosts (each evaluator's browser then sends them "
                        "its address; say so in the consent text); without it such a campaign is refused")
    p.add_argument("--with-annotations", metavar="DIR",
                   help="also move a running campaign's saved state: Pearmut's folder holding data/outputs/*.jsonl "
                        "and data/progress.json (each user's annotations and progress)")
    p.set_defaults(func=cmd_import)
    p = sub.add_parser("invite", help="create invited participants with private links, or show who has not "
                                      "started or finished (--status)")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--n", type=_count, metavar="N", help="create N participants with generated ids")
    what.add_argument("--csv", metavar="FILE", help="a CSV of participant ids (a header row; a note, label or "
                                                   "email column is kept as a note)")
    what.add_argument("--status", action="store_true", help="who has not started and who has not finished")
    what.add_argument("--reissue", nargs="+", metavar="ID", help="new private links for these invited ids (a lost "
                                                                "link): their old links stop working")
    p.add_argument("--config", help="study config (default: config.toml, read unless only --db is given); its "
                                     "database is used unless --db is given")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--base-url", default="http://localhost:8501/",
                   help="the survey's address, the start of every link (default: http://localhost:8501/)")
    p.add_argument("--out", metavar="FILE", help="write the CSV to this new file instead of standard output")
    p.add_argument("--id-column", help="the CSV's id column (default: participant_id, participant, id or pid)")
    p.add_argument("--note-column", help="the CSV's note column (default: note, label, email or name)")
    p.set_defaults(func=cmd_invite)
    p = sub.add_parser("serve", help="start the survey (Streamlit) on a study",
                       usage="%(prog)s [-h] [--port PORT] [--address ADDRESS] [--database DATABASE] [CONFIG] "
                             "[-- STREAMLIT_ARGS ...]",
                       description="Start the survey app (streamlit run) on the study CONFIG, with the app's own "
                                   "Streamlit settings; the working directory's .streamlit/secrets.toml is read as "
                                   "by the app. Arguments after -- go to streamlit run, e.g. -- "
                                   "--server.headless=true --server.baseUrlPath=survey")
    p.add_argument("config", nargs="?", default=None, metavar="CONFIG",
                   help="study config (default: $EVALKIT_CONFIG if set, else config.toml); sets EVALKIT_CONFIG")
    p.add_argument("--port", type=_port, help="the port to serve on (default: Streamlit's, 8501)")
    p.add_argument("--address", help="the address to listen on (default: Streamlit's, every interface)")
    p.add_argument("--database", help=DB_HELP + "; overrides [study] database (sets EVALKIT_DATABASE)")
    p.set_defaults(func=cmd_serve, prog=p.prog, streamlit_args=[])
    return parser


def cmd_import(args: argparse.Namespace) -> int:
    """Make a study folder of a Pearmut campaign file, print what each key became, and check the folder."""
    users: list[str] = []
    if args.with_annotations:
        from .pearmut_history import state_users  # (the history needs the whole study: only when asked)

        users = state_users(Path(args.with_annotations), str(read_campaign(Path(args.campaign)).get("campaign_id")))
    result = import_campaign(Path(args.campaign), Path(args.out) if args.out else None, force=args.force,
                             users=users, allow_remote_media=args.allow_remote_media)
    history = None
    if args.with_annotations:
        from .pearmut_history import import_history

        history = import_history(result, Path(args.with_annotations))
    print(f"Wrote the study {result.folder}/ (config.toml, datasets/, consent.md, IMPORT.md):\n")
    print(result.table())
    for note in result.notes:
        print(f"note: {note}")
    if history is not None:
        print("\n" + history.summary())
    loaded = open_study(result.folder / "config.toml")  # the folder runs as written: a ConfigError here is a bug
    print(f"\nevalkit check: the study loads ({len(loaded.study.tasks)} task(s)); {len(result.users)} user(s) in "
          f"{result.folder / 'datasets' / 'participants.csv'}.\nNext: replace consent.md, then\n"
          f"  python -m evalkit invite --config {result.folder / 'config.toml'} --csv "
          f"{result.folder / 'datasets' / 'participants.csv'} --base-url https://YOUR-SURVEY-ADDRESS --out links.csv")
    return 0


def split_passthrough(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``serve ... -- ARGS``: evalkit's arguments and the ones after ``--`` for ``streamlit run``. Other commands
    keep their ``--`` (argparse's meaning)."""
    argv = list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)  # the top level has no options but -h
    if command == "serve" and "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def main(argv: Sequence[str] | None = None, prog: str = "python -m evalkit") -> int:
    """Entry point; returns the exit status. ``prog`` names the command in usage and messages."""
    own, passthrough = split_passthrough(sys.argv[1:] if argv is None else argv)
    args = build_parser(prog).parse_args(own)
    if passthrough:
        args.streamlit_args = passthrough
    try:
        return args.func(args)
    except (ConfigError, DatasetError, PlanError, StoreError, InviteError, PearmutError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `python -m evalkit plan --seed 1 | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def script() -> None:
    """The ``evalkit`` command of ``pip install .`` (``[project.scripts]``)."""
    sys.exit(main(prog="evalkit"))


if __name__ == "__main__":
    sys.exit(main())
