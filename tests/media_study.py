"""Builders for studies whose items hold images and audio clips: tiny PNG and WAV files written with the standard
library, an items file whose outputs (and input) are media values, and a study of one items task over it."""

from __future__ import annotations

import json
import math
import struct
import wave
import zlib
from pathlib import Path
from typing import Any

#: distinctive system names and file names, so that a leak check can fail
SYSTEMS = ("sysImgAlpha", "sysImgBeta", "sysImgGamma")
N_ITEMS = 4


def write_png(path: Path, width: int = 24, height: int = 16, colour: tuple[int, int, int] = (200, 80, 40)) -> Path:
    """A small RGB PNG of one colour with a lighter diagonal (standard library only)."""
    rows = []
    for y in range(height):
        row = bytearray(b"\x00")
        for x in range(width):
            light = 60 if abs(x - y) < 2 else 0
            row += bytes(min(255, c + light) for c in colour)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(b"".join(rows))) + chunk(b"IEND", b""))
    return path


def write_wav(path: Path, seconds: float = 0.6, pitch: float = 440.0) -> Path:
    """A mono 8 kHz 16-bit WAV of a sine tone."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = 8000
    frames = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * pitch * t / rate)))
                      for t in range(int(seconds * rate)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return path


def write_media_items(folder: Path, kind: str = "image", *, media_input: bool = False) -> Path:
    """``folder/items.jsonl`` (N_ITEMS items, an output of every system each, as ``kind`` media: ``image`` or
    ``audio``) and the files under ``folder/media/``; with ``media_input`` each item's input is an image too."""
    lines = []
    for k in range(N_ITEMS):
        outputs: dict[str, Any] = {}
        for j, system in enumerate(SYSTEMS):
            if kind == "image":
                name = f"media/pic{k}x{j}.png"
                write_png(folder / name, colour=(40 * j + 60, 90, 30 * k + 40))
            else:
                name = f"media/clip{k}x{j}.wav"
                write_wav(folder / name, pitch=300 + 50 * j + 10 * k)
            outputs[system] = {"type": kind, "path": name, "alt": f"Output {k} number {j}"}
        entry: dict[str, Any] = {"id": f"itemMv{k}Zq", "outputs": outputs}
        if media_input:
            write_png(folder / f"media/in{k}.png", colour=(10, 10 * k, 200))
            entry["input"] = {"type": "image", "path": f"media/in{k}.png", "alt": f"The input picture {k}"}
        else:
            entry["input"] = f"Prompt number {k}"
        lines.append(json.dumps(entry))
    path = folder / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


HEAD = """
[study]
title = "Media study"
database = "responses.sqlite"
seed = 5
{extra}
"""

TASKS = {
    "compare": 'kind = "compare"\nquestions = 2\nresponse = "choice"\n',
    "compare-slider": 'kind = "compare"\nquestions = 2\nresponse = "slider"\n',
    "score": 'kind = "score"\nquestions = 2\n[[tasks.scales]]\nid = "quality"\nlabel = "Quality"\ntype = "likert"\n'
             'anchors = ["Bad", "Poor", "Fair", "Good", "Excellent"]\n',
    "score-two": 'kind = "score"\nquestions = 2\noutputs_per_question = 2\ntextfield = "post-edit"\n'
                 '[[tasks.scales]]\nid = "quality"\nlabel = "Quality"\ntype = "slider"\n',
    "rank": 'kind = "rank"\nquestions = 2\nresponse = "ranking"\n',
    "rank-best": 'kind = "rank"\nquestions = 2\nresponse = "best"\n',
    "realfake": f'kind = "realfake"\nquestions = 2\ntarget = "{SYSTEMS[0]}"\n',
    "spans": 'kind = "spans"\nquestions = 2\n',
}


def media_study(folder: Path, task: str, kind: str = "image", *, media_input: bool = False, extra: str = "",
                keys: str = "") -> Path:
    """A study of one task (a key of :data:`TASKS`) over media items; ``keys``: more keys of the task."""
    folder.mkdir(parents=True, exist_ok=True)
    write_media_items(folder, kind, media_input=media_input)
    block = TASKS[task]
    head, _, scales = block.partition("[[tasks.scales]]")
    body = (f'\n[[tasks]]\nid = "block"\ntitle = "The block"\ninstructions = "Read this."\nitems = "items.jsonl"\n'
            f"{head}{keys}" + (f"[[tasks.scales]]{scales}" if scales else ""))
    config = folder / "config.toml"
    config.write_text(HEAD.format(extra=extra) + body, encoding="utf-8")
    return config
