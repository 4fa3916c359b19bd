"""Command line: ``python -m evalkit check | plan`` (``export`` and ``report`` come with the results).

Exit status 0 on success, 1 when the study or its data is invalid (the message
names the file and the key), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .config import ConfigError, LoadedStudy, RatingTask, needed_reviews, open_study
from .datasets import DatasetError, count_reviews
from .sampling import PlanError, plan


def _open(path: str) -> LoadedStudy:
    return open_study(path)


def cmd_check(args: argparse.Namespace) -> int:
    """Validate the config and the datasets; print pool sizes per (source, domain)."""
    loaded = _open(args.config)
    study, pools = loaded.study, loaded.pools
    print(f"Study: {study.title}")
    print(f"Config: {study.path}  (version {loaded.version})")
    print(f"Datasets: {study.datasets}")
    print(f"Database: {study.database}")
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
        else:
            print(f"Task {task.id!r} ({task.kind}): {len(task.slots())} questions, selection {task.selection}, "
                  f"order {task.order}")
    unmatched = total = 0
    for seed in range(args.samples):
        questions = plan(study, pools, seed)
        total += len(questions)
        unmatched += sum(not q.matched for q in questions)
    if args.samples:
        share = unmatched / total if total else 0.0
        print(f"Length matching over {args.samples} sample plans: {unmatched} of {total} questions "
              f"unmatched ({share:.1%})")
    print("\nOK: the study is valid.")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Print one evaluator's plan as JSON, sources included (for audit)."""
    loaded = _open(args.config)
    questions = plan(loaded.study, loaded.pools, args.seed)
    out = {"study": loaded.study.title, "version": loaded.version, "seed": args.seed,
           "questions": [q.as_dict(with_sources=True) for q in questions]}
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError("the seed must be in 0..4294967295")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m evalkit`` argument parser."""
    parser = argparse.ArgumentParser(prog="python -m evalkit",
                                     description="evalkit: human evaluation of generated text")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="validate config.toml and the datasets; print pool sizes")
    p.add_argument("config", nargs="?", default="config.toml", help="study config (default: config.toml)")
    p.add_argument("--samples", type=int, default=100, help="sample plans to check length matching (default 100)")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("plan", help="print the plan of one evaluator seed as JSON (sources included)")
    p.add_argument("--seed", type=_seed, required=True, help="evaluator seed, 0..2**32-1")
    p.add_argument("--config", default="config.toml", help="study config (default: config.toml)")
    p.set_defaults(func=cmd_plan)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, DatasetError, PlanError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `python -m evalkit plan --seed 1 | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
