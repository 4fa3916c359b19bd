"""Makes the example's images (media/*.png) and items file (items.jsonl): six small landscapes, each drawn three
ways. ``photo``: the "real" one (smooth light, fine detail on the hills); ``model-a``: a fair generator (colours a bit
off, softened); ``model-b``: a poor one (blocky, banded colours, a smeared sun). Pure numpy and the standard
library (zlib + struct write the PNGs); the same files every run. Run from anywhere:
``python examples/image-quality/make_media.py``.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
W, H = 240, 160
SCENES = [  # (id, prompt, sky top, sky bottom, sun colour, sun x, sun y, hill colours, hill heights)
    ("dawn", "A pale sun rising over green hills at dawn", (120, 160, 220), (250, 210, 170), (255, 240, 200),
     0.70, 0.45, [(70, 120, 70), (40, 90, 50)], (0.55, 0.70)),
    ("dusk", "An orange sun setting behind purple mountains", (60, 40, 110), (250, 150, 90), (255, 190, 90),
     0.35, 0.55, [(90, 60, 110), (50, 35, 70)], (0.50, 0.68)),
    ("noon", "A bright midday sky over a yellow wheat field", (60, 130, 230), (170, 210, 250), (255, 255, 235),
     0.20, 0.18, [(210, 180, 70), (180, 150, 50)], (0.66, 0.80)),
    ("winter", "A white winter sun over snowy hills", (150, 170, 200), (225, 230, 240), (250, 250, 255),
     0.50, 0.30, [(235, 240, 248), (200, 210, 225)], (0.58, 0.74)),
    ("desert", "A hot sun over red desert dunes", (230, 170, 110), (250, 220, 170), (255, 250, 210),
     0.80, 0.25, [(200, 110, 60), (170, 80, 45)], (0.62, 0.78)),
    ("lake", "A blue lake below dark forest hills at evening", (40, 60, 120), (150, 120, 170), (250, 220, 180),
     0.45, 0.40, [(30, 60, 45), (50, 90, 150)], (0.52, 0.72)),
]


def png(path: Path, rgb: np.ndarray) -> None:
    """An 8-bit RGB PNG of ``rgb`` (H x W x 3), each row with the Paeth-free "Up" filter (compresses smooth images)."""
    h, w, _ = rgb.shape
    rows = rgb.astype(np.uint8)
    up = np.vstack([rows[:1], (rows[1:].astype(np.int16) - rows[:-1].astype(np.int16)).astype(np.uint8)])
    raw = b"".join([b"\x00" + rows[0].tobytes()] + [b"\x02" + up[y].tobytes() for y in range(1, h)])

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def scene(spec: tuple, *, grain: float, shift: float, blur: int, block: int, levels: int, seed: int,
          texture_amp: float = 0.0) -> np.ndarray:
    """One landscape: a sky gradient, a sun, two hills; then the look of its system."""
    _id, _prompt, top, bottom, sun, sx, sy, hills, heights = spec
    y = np.linspace(0, 1, H)[:, None, None]
    x = np.linspace(0, 1, W)[None, :, None]
    img = np.array(top, float) * (1 - y) + np.array(bottom, float) * y + 0 * x
    d = np.sqrt(((x - sx) * W / H) ** 2 + (y - sy) ** 2)
    glow = np.clip(1 - d / 0.35, 0, 1) ** 2 * 0.35
    img = img * (1 - glow) + np.array(sun, float) * glow
    disc = np.clip((0.085 - d) / 0.01, 0, 1)
    img = img * (1 - disc) + np.array(sun, float) * disc
    for k, (colour, base) in enumerate(zip(hills, heights, strict=True)):
        ridge = base + 0.06 * np.sin(x * (5 + 3 * k) + k) + 0.03 * np.sin(x * (13 + k) + 2 * k)
        inside = np.clip((y - ridge) * H / 1.5, 0, 1)
        texture = 1 + texture_amp * np.sin(x * 400 + k) * np.sin(y * 300)  # grass, rock: fine detail
        shade = np.array(colour, float) * (1 - 0.25 * (y - ridge).clip(0, 1)) * texture
        img = img * (1 - inside) + shade * inside
    rng = np.random.default_rng(seed)
    img = img + shift * np.array([1.0, -0.6, 0.4])
    if blur:
        for _ in range(blur):
            img = (img + np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1) + np.roll(img, -1, 1)) / 5
    if block > 1:
        small = img[::block, ::block]
        img = np.repeat(np.repeat(small, block, 0), block, 1)[:H, :W]
    if levels:
        img = np.round(img / (256 / levels)) * (256 / levels)
    if grain:
        img = img + rng.normal(0, grain, img.shape[:2])[:, :, None]
    return np.clip(img, 0, 255)


LOOKS = {"photo": dict(grain=0.0, shift=0.0, blur=0, block=1, levels=0, texture_amp=0.08),
         "model-a": dict(grain=0.0, shift=14.0, blur=2, block=1, levels=0),
         "model-b": dict(grain=0.0, shift=-10.0, blur=0, block=6, levels=10)}


def main() -> None:
    media = HERE / "media"
    media.mkdir(exist_ok=True)
    lines = []
    for n, spec in enumerate(SCENES):
        outputs = {}
        for j, (system, look) in enumerate(LOOKS.items()):
            name = f"{spec[0]}-{'abc'[(j + n) % 3]}.png"  # (the file name says nothing of the system)
            png(media / name, scene(spec, seed=100 * n + j, **look))
            outputs[system] = {"type": "image", "path": f"media/{name}", "alt": spec[1]}
        lines.append(json.dumps({"id": spec[0], "input": spec[1], "outputs": outputs}))
    (HERE / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
