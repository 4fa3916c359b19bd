"""Builders for small, synthetic studies in a temporary folder."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
SEMEVAL = ROOT.parent / "shared" / "data" / "semeval2016"
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
