"""Builders for small, synthetic studies in a temporary folder."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"  # beside the checkout in CI; absent in a user's fresh clone
SEMEVAL = SHARED_DATA / "semeval2016"
SEMEVAL_FILES = ("ABSA16_Laptops_Train_SB1_v2.xml", "ABSA16_Restaurants_Train_SB1_v2.xml")  # read by the tests
GRAPHMIND = SHARED_DATA / "graphmind" / "library.json.gz"  # GraphMind's demo output (24 papers), read as it is
WORDS = ["good", "bad", "fast", "slow", "screen", "food", "room", "staff", "battery", "price", "service", "clean",
         "quiet", "loud", "great", "poor", "really", "quite", "very", "nice", "awful", "fine", "decent", "cheap",
         "bright", "warm", "cold", "fresh", "comfortable"]


def write_reviews(path: Path, reviews: Sequence[Sequence[str]], *, rids: Sequence[str] | None = None) -> Path:
    """Write SemEval-style XML: one <Review> per entry, one <sentence> per string."""
    parts = ['<?xml version="1.0" encoding="UTF-8" standalone="yes"?>', "<Reviews>"]
    for k, sentences in enumerate(reviews):
        rid = rids[k] if rids else str(k + 1)
        parts.append(f'  <Review rid="{escape(rid)}"><sentences>')
        for j, s in enumerate(sentences):
            parts.append(f'    <sentence id="{escape(rid)}:{j}"><text>{escape(s)}</text>'
                         '<Opinions><Opinion category="X#Y" polarity="positive"/></Opinions></sentence>')
        parts.append("  </sentences></Review>")
    parts.append("</Reviews>\n")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def sentence(rng: random.Random, n_words: int) -> str:
    """A made-up sentence of n words ending with a period."""
    words = [rng.choice(WORDS) for _ in range(n_words)]
    return (" ".join(words)).capitalize() + "."


def random_reviews(n: int, seed: int, *, sentences: tuple[int, int] = (2, 4),
                   words: tuple[int, int] = (6, 16)) -> list[list[str]]:
    """n synthetic reviews whose sentence counts and lengths vary."""
    rng = random.Random(seed)
    return [[sentence(rng, rng.randint(*words)) for _ in range(rng.randint(*sentences))] for _ in range(n)]


PAPER = {
    "id": "p1", "title": "A Paper", "summary": "It does things.", "rating": 3,
    "supporting_evidence": ["new idea"], "contradictory_evidence": ["old idea"], "key_comparisons": ["X vs Y"],
    "graph": {"nodes": [{"id": "t", "label": "A Paper", "type": "title"},
                        {"id": "c", "label": "Claim", "type": "claim"}], "edges": [["t", "c"]]},
}

CONFIG = """
[study]
title = "Synthetic study"
datasets = "datasets"
database = "responses.sqlite"
seed = 99

[pool]
min_chars = 40
max_chars = 600

[[tasks]]
kind = "triplet"
id = "turing"
sources = ["real", "gen", "base"]
target = "real"
domains = {triplet_domains}

[[tasks]]
kind = "pairwise"
id = "pairs"
pairs = [["gen", "base"], ["gen", "real"], ["base", "real"]]
domains = ["alpha", "beta", "alpha"]

[[tasks]]
kind = "rating"
id = "rate"
items = "datasets/items.jsonl"

[[tasks.metrics]]
id = "quality"
question = "How good is it?"
anchors = ["bad", "poor", "fair", "good", "great"]
"""


def make_study(tmp: Path, *, per_pool: int = 30, triplet_domains: Sequence[str] = ("alpha", "alpha", "beta", "beta"),
               config: str | None = None, papers: int = 3) -> Path:
    """Write a complete small study under ``tmp``; returns the config path."""
    data = tmp / "datasets"
    data.mkdir(parents=True, exist_ok=True)
    for k, (source, domain) in enumerate((s, d) for s in ("real", "gen", "base") for d in ("alpha", "beta")):
        write_reviews(data / f"{source}-{domain}s.xml", random_reviews(per_pool, seed=k),
                      rids=[f"{source[0]}{domain[0]}{i}" for i in range(per_pool)])
    with open(data / "items.jsonl", "w", encoding="utf-8") as fh:
        for i in range(papers):
            fh.write(json.dumps({**PAPER, "id": f"p{i}", "title": f"Paper {i}"}) + "\n")
    text = config if config is not None else CONFIG.replace("{triplet_domains}", json.dumps(list(triplet_domains)))
    path = tmp / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def copy_demo(tmp: Path) -> Path:
    """A copy of the demo study (config, consent, datasets) under ``tmp``; returns the config path."""
    shutil.copytree(ROOT / "datasets", tmp / "datasets")
    shutil.copy(ROOT / "consent.md", tmp / "consent.md")
    shutil.copy(ROOT / "config.toml", tmp / "config.toml")
    return tmp / "config.toml"


# ----------------------------------------------------------------------------- a study with distinctive source names

SOURCES = {"human": "srcHumanQ7", "model": "srcModelK3", "base": "srcBaseZ9"}
XSS = ("<script>alert(1)</script> Honest take <img src=x onerror=alert(2)> on the [deal](javascript:alert(3)) "
       "![x](http://127.0.0.1:9/p.png) here.")

TOKENS_CONFIG = """
[study]
title = "Token study"
datasets = "datasets"
database = "responses.sqlite"
seed = 5
estimated_minutes = 3
consent = "consent.md"
completion_url = "https://example.org/done?cc={{code}}"

[pool]
min_chars = 60
max_chars = 600

[[tasks]]
kind = "triplet"
id = "turing"
title = "Spot the human"
question = "Which review was written by a real person?"
instructions = "Pick the one a person wrote."
sources = ["{human}", "{model}", "{base}"]
target = "{human}"
domains = ["alpha", "alpha", "beta"]

[[tasks]]
kind = "pairwise"
id = "natural"
title = "More natural"
question = "Which sounds more natural and realistic?"
instructions = "Pick the more natural one."
response = "{response}"
pairs = [["{model}", "{base}"], ["{model}", "{human}"]]
domains = ["beta", "alpha"]

[[tasks]]
kind = "rating"
id = "novelty"
title = "Rate an assessment"
instructions = "Pick a paper you know."
items = "datasets/papers.jsonl"
min_items = {min_items}
suggested_items = 2

[tasks.familiarity]
question = "How familiar are you with this paper?"
anchors = ["Heard of it", "Skimmed", "Read once", "Read closely", "Know it in depth"]

[[tasks.metrics]]
id = "specificity"
label = "Specificity"
question = "How specific is the assessment?"
anchors = ["Generic", "Mostly generic", "Partly specific", "Specific", "Highly specific"]

[[tasks.metrics]]
id = "factuality"
label = "Factuality"
question = "How accurate is it?"
anchors = ["Many errors", "Several errors", "Some errors", "Minor issues", "Accurate"]
"""


def make_token_study(tmp: Path, *, response: str = "choice", min_items: int = 1, per_pool: int = 12) -> Path:
    """A small study whose source names are distinctive tokens (so a leak to the browser is detectable)
    and whose human reviews in domain 'alpha' all carry an XSS payload."""
    data = tmp / "datasets"
    data.mkdir(parents=True, exist_ok=True)
    rng = random.Random(11)
    for role, source in SOURCES.items():
        for domain in ("alpha", "beta"):
            reviews = []
            for _ in range(per_pool):
                body = [sentence(rng, rng.randint(18, 22)), sentence(rng, rng.randint(18, 22))]
                if role == "human" and domain == "alpha":  # the payload first, so truncation keeps it
                    body = [XSS, body[1]]
                reviews.append(body)
            write_reviews(data / f"{source}-{domain}s.xml", reviews, rids=[f"rid{role}{domain}{i}" for i in
                                                                            range(per_pool)])
    with open(data / "papers.jsonl", "w", encoding="utf-8") as fh:
        for i, title in enumerate(["Alpha Paper on Graphs", "Beta Paper on Text", "Gamma Paper on Images"]):
            # four claims side by side: a graph as wide as the demo's (too wide for a phone at full size)
            claims = [{"id": f"c{k}", "label": f"Claim {k}", "type": "claim",
                       "text": "<b>bold?</b> a claim that needs a few lines of text to state"} for k in range(4)]
            nodes = [{"id": "t", "label": title, "type": "title", "text": title}, *claims,
                     {"id": "m", "label": "Method", "type": "method", "text": "A method."},
                     {"id": "e", "label": "Experiment", "type": "experiment", "text": "An experiment."}]
            edges = [["t", c["id"]] for c in claims] + [["c0", "m"], ["m", "e"]]
            fh.write(json.dumps({**PAPER, "id": f"paper{i}", "title": title, "summary": f"Summary of {title}.",
                                 "graph": {"nodes": nodes, "edges": edges}}) + "\n")
    (tmp / "consent.md").write_text("You agree to **take part** in a short test study.\n", encoding="utf-8")
    text = TOKENS_CONFIG.format(**SOURCES, response=response, min_items=min_items)
    path = tmp / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def make_read_only(path: Path) -> Callable[[], None]:
    """Make ``path`` unwritable, also for root (``chattr +i``: root ignores file modes); returns the undo.

    Skips the calling test when the file system has no immutable flag for root.
    """
    import os
    import subprocess

    import pytest

    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        return lambda: path.chmod(mode)
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot make a file read-only for root here (chattr: {done.stderr.strip()})")
    return lambda: subprocess.run(["chattr", "-i", str(path)], check=False)


# ----------------------------------------------------------------------------- a study with every items kind

ITEMS_TASKS = """
[[tasks]]
kind = "compare"
id = "cmp"
title = "Which reply is better?"
instructions = "Pick the better reply."
items = "datasets/responses.jsonl"
questions = 6
response = "choice-tie"

[[tasks]]
kind = "compare"
id = "help"
title = "Slide towards the better reply"
instructions = "Slide."
items = "datasets/responses.jsonl"
questions = 3
response = "slider"

[[tasks]]
kind = "score"
id = "sc"
title = "Score the replies"
instructions = "Score each reply."
items = "datasets/responses.jsonl"
questions = 4
outputs_per_question = 2

[[tasks.scales]]
id = "fluency"
type = "likert"
anchors = ["bad", "poor", "fair", "good", "great"]

[[tasks.scales]]
id = "quality"
type = "slider"

[[tasks]]
kind = "rank"
id = "best"
title = "The best reply"
instructions = "Pick the best."
items = "datasets/responses.jsonl"
questions = 3

[[tasks]]
kind = "rank"
id = "order"
title = "Order the replies"
instructions = "Best first."
items = "datasets/responses.jsonl"
questions = 3
response = "ranking"

[[tasks]]
kind = "realfake"
id = "rf"
title = "Written by the owner?"
instructions = "Real or generated."
items = "datasets/responses.jsonl"
questions = 6
target = "human"
"""


def make_demo_with_items_tasks(tmp: Path) -> Path:
    """The demo study plus a task of every items kind (compare with ties and the slider, score on a Likert and a
    slider scale, rank best-of-n and full ranking, realfake with confidence) over ``datasets/responses.jsonl``,
    whose items carry made-up metrics; returns the config path."""
    config = copy_demo(tmp)
    config.write_text(config.read_text(encoding="utf-8") + ITEMS_TASKS, encoding="utf-8")
    return config


def answer_items_tasks(store, loaded, session, rng: random.Random) -> None:
    """Answer every items question of ``session``'s plan through the kinds' record functions, at random but
    leaning towards gpt4 (so the statistics have something to find)."""
    from evalkit.checks import CheckFeedback
    from evalkit.sampling import plan
    from evalkit.tasks import responses

    def weight(system: str) -> float:
        return {"gpt4": 3.0, "human": 2.0}.get(system, 1.0)

    from evalkit.queue import claim_question, is_queued, register

    register(store, loaded.study, loaded.item_sets)  # judgments_per_item tasks: their shared queue (idempotent)
    questions = plan(loaded.study, loaded.pools, session.seed, loaded.item_sets)
    for q in questions:
        if q.kind not in ("compare", "score", "spans", "rank", "realfake"):
            continue
        if is_queued(q):  # as the survey does when the evaluator reaches it: claim an item, fill the question in
            q = claim_question(store, loaded.study, loaded.item_sets, session, q, questions=questions)
            if q is None:
                continue
        if q.check is not None and q.check.type == "attention" and q.check.rule == "source" and q.kind == "compare":
            # attention checks answered as expected: these evaluators pass, and their answers count
            responses.record_choice(store, session, q, q.labels[q.sources.index(q.check.want)], 1000, ties=True)
            continue
        try:
            _answer_items_question(store, loaded, session, q, rng, weight)
        except CheckFeedback:  # a wrong practice answer: answer as the check expects (choices of a system)
            assert q.check is not None and q.check.rule == "source" and q.kind == "compare"
            responses.record_choice(store, session, q, q.labels[q.sources.index(q.check.want)], 1000, ties=True)


def _answer_items_question(store, loaded, session, q, rng: random.Random, weight) -> None:
    from evalkit.tasks import rank, realfake, responses, score

    task = loaded.study.task(q.task)
    ms = rng.randint(800, 9000)
    if q.kind == "compare" and task.response == "slider":
        a, b = (weight(s) for s in q.sources)
        value = max(-100, min(100, round(40 * (b - a) + rng.gauss(0, 40))))
        responses.record_slider(store, session, q, value, rng.choice(["accept", "reject"]), ms)
    elif q.kind == "compare":
        if rng.random() < 0.2:
            responses.record_choice(store, session, q, responses.TIE, ms, ties=True)
        else:
            label = rng.choices(q.labels, [weight(s) for s in q.sources])[0]
            responses.record_choice(store, session, q, label, ms, ties=True)
    elif q.kind == "score":
        scores = {s.id: [max(s.low, min(s.high, round(rng.gauss((s.low + s.high) / 2 + (s.high - s.low) / 6
                                                                 * (weight(src) - 1.5), (s.high - s.low) / 5))))
                         for src in q.sources] for s in task.scales}
        score.record_scores(store, session, task, q, scores, None, ms)
    elif q.kind == "spans":
        answer_spans_question(store, loaded, session, q, rng, ms, weight)
    elif q.kind == "rank":
        order = sorted(q.labels, key=lambda lab: -weight(q.source_of(lab)) * rng.random())
        rank.record_rank(store, session, task, q, order[:1] if task.response == "best" else order, ms)
    else:
        real = q.sources[0] == task.target
        answer = "real" if (rng.random() < 0.7) == real else "generated"
        realfake.record_realfake(store, session, task, q, answer, rng.randint(1, len(task.confidence)), ms)


def answer_spans_question(store, loaded, session, q, rng: random.Random, ms: int, weight) -> None:
    """Answer an error-span question through :func:`evalkit.tasks.spans.record_spans`: a check question as its
    expectation asks (each expected span at its ranges' widest, the score in the middle of its range), any other
    with a few random word spans per output segment (more on the systems ``weight`` favours less) and scores."""
    import json

    from evalkit.spans import to_utf16
    from evalkit.tasks.spans import record_spans, segments_of

    task = loaded.study.task(q.task)
    item = loaded.item_sets[task.source.items].by_id(q.review_ids[0])
    segments = segments_of(item)
    want = json.loads(q.check.want) if q.check is not None else None
    spans, scores = [], {s.id: [] for s in task.scales}
    from evalkit.tasks.spans import suggestions

    for system in q.sources:
        per_segment = []
        for segment in segments:
            text = segment.outputs[system]
            # suggestions: every other kept, the rest deleted (all on a check question: the expected spans are
            # marked instead); kept ones are not overlapped
            chosen, decided = [], []
            for n, sug in enumerate(suggestions(task, segment, system)):
                origin = "suggested-kept" if n % 2 == 0 and want is None else "suggested-deleted"
                entry = {"start": to_utf16(text, sug.start), "end": to_utf16(text, sug.end, missing_token=True),
                         "severity": sug.severity, "category": sug.category, "origin": origin, "suggestion": n}
                (chosen if origin == "suggested-kept" else decided).append(entry)
            if want is not None:
                for e in want.get(system, {}).get("error_spans", []):
                    start = e["start_i"][0] if e["start_i"] else 0
                    end = min(len(text) + 1, (e["end_i"][1] if e["end_i"] else start) + 1)
                    chosen.append({"start": to_utf16(text, start), "end": to_utf16(text, end, missing_token=True),
                                   "severity": e["severity"] or task.severities[0],
                                   "category": e.get("category") or _any_category(task)})
            else:
                words = [m for m in __import__("re").finditer(r"\w+", text)]
                for m in rng.sample(words, min(len(words), rng.randint(0, 3 if weight(system) < 2 else 1))):
                    # (after the kept suggestions: _without_overlaps keeps the first of two)
                    chosen.append({"start": to_utf16(text, m.start()), "end": to_utf16(text, m.end()),
                                   "severity": rng.choice(task.severities), "category": _any_category(task)})
                chosen = _without_overlaps(chosen)
            per_segment.append(chosen + decided)
        spans.append(per_segment)
        for s in task.scales:
            bounds = (want or {}).get(system, {}).get("score", {}).get(s.id)
            value = round(sum(bounds) / 2) if bounds else rng.randint(s.low, s.high)
            scores[s.id].append([value] * len(segments) if task.score_per == "segment" and item.segments else value)
    record_spans(store, session, task, q, item, {"spans": spans, "scores": scores, "actions": [],
                                                 "confirmedNoSpans": True}, ms)


def _any_category(task) -> str | None:
    if task.categories is None:
        return None
    if task.categories == "free":
        return "Other"
    top, subs = next(iter(task.categories.items()))
    return f"{top}/{subs[0]}" if subs else top


def _without_overlaps(spans: list[dict]) -> list[dict]:
    """``spans`` less each one overlapping an earlier one of the list."""
    out: list[dict] = []
    for span in spans:
        if all(span["end"] <= o["start"] or span["start"] >= o["end"] for o in out):
            out.append(span)
    return out
