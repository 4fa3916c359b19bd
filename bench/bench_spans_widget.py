"""Benchmark 13: the span widget (``components/spans/``) in a real browser: a 1,000-word document drawn, against the
same text drawn by ``st.markdown`` in the same run, and a span made with the keyboard, key to screen.

    python bench/bench_spans_widget.py [--rounds 12] [--keys 20] [--width 1280] [--component DIR]

A small Streamlit script, written into a temporary folder by this benchmark and served by `streamlit run` (from the
project root, with the app's flush setting), draws on each run one of: nothing; the span widget (registered from
the repository's components/spans files as pages/tasks/spans.py registers it, or from ``--component DIR``, with
the DATA an ESA question sends: two severities, the [missing] token, one 0-100 slider, a key to keep unsent marks
under) holding the document as 40 segments of 25 words (a document item) or as one segment of 1,000 words; or the
same text with ``st.markdown``, as 40 paragraphs or as one. Chromium (Debian's /usr/bin/chromium through
Playwright, headless) picks what to draw with a radio; between two draws it draws nothing, so each draw mounts a
new widget with a new question id, as every new question does in the app.

Measured in the page, with ``performance.now()``:

* a draw: from the run's start as the page sees it (its first message from the server handled; the run's script
  time is inside the figure, the click's trip to the server is not) to the document's last words in the DOM (a
  MutationObserver on the page and on every shadow root, which a patched ``attachShadow`` hands it), then laid
  out (a forced layout) and painted (the next animation frame, then a message posted from it, which runs after
  that frame's paint). Rounds alternate the order of the four draws; the first round warms the page up (the
  widget's module compiled, caches) and is not counted. Beside it, the renderer's own work per draw from the
  DevTools protocol (``Performance.getMetrics``: script, style and layout time from the click to the paint).
* a span made with the keyboard: the first text focused (Tab's target), Home, Ctrl+Right a few words on, then
  Shift+Right four times and "1" (the first severity); from the keydown's ``timeStamp`` (when the browser received
  the key) to the span's highlight in the DOM (an element of class ``sp``, added or given the class, seen by a
  MutationObserver) and to the next painted frame; then Delete removes it. Every key's key -> painted frame is kept
  too (caret and selection steps).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_concurrency import start_server
from common import HEADER, ROOT, fmt_s, row, sentence

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
WORDS, SEGMENTS = 1000, 40
DRAWS = ("widget, document", "markdown, document", "widget, one segment", "markdown, one paragraph")
FLOOR = {"widget, document": "markdown, document", "widget, one segment": "markdown, one paragraph"}
NAMES = {"widget, document": "span widget, 40 segments of 25 words (a document item)",
         "markdown, document": "`st.markdown`, the same 40 segments as paragraphs",
         "widget, one segment": "span widget, one segment of 1,000 words",
         "markdown, one paragraph": "`st.markdown`, the same text as one paragraph"}

SCRIPT = '''"""bench_spans_widget.py's page: draws nothing, the span widget or st.markdown of the same document."""
import json
from pathlib import Path

import streamlit as st
import streamlit.components.v2 as components_v2
from streamlit.runtime import runtime

runtime.MESSAGE_FLUSH_INTERVAL_SECS = 0.0  # as app.py sets it (ui.send_messages_promptly)
COMPONENT_DIR = Path(__COMPONENT__)
SPANS = components_v2.component(
    "evalkit_spans", js=(COMPONENT_DIR / "spans.js").read_text(encoding="utf-8"),
    css=(Path(__COMMON__).read_text(encoding="utf-8") if Path(__COMMON__).is_file() else "")
    + (COMPONENT_DIR / "spans.css").read_text(encoding="utf-8"), isolate_styles=True)
DOC = json.loads((Path(__file__).parent / "document.json").read_text(encoding="utf-8"))
what = st.radio("Draw", ["nothing", *__DRAWS__], horizontal=True, key="what")
n = st.session_state["n"] = st.session_state.get("n", 0) + 1
if what.startswith("widget"):
    segments = DOC if what == "widget, document" else [" ".join(DOC)]
    SPANS(key=f"spans-{n}", data={
        "qid": f"bench-{n}", "words": {"source": "Source"}, "protocol": "esa",
        "severities": [{"id": "minor", "label": "Minor", "key": "1"}, {"id": "major", "label": "Major", "key": "2"}],
        "categories": None, "missingToken": True, "wordLevel": False,
        "outputs": [{"heading": "", "segments": [{"source": None, "text": s, "dir": "auto", "suggestions": []}
                                                 for s in segments]}],
        "scorePer": "document",
        "scales": [{"id": "quality", "label": "Quality", "type": "slider", "min": 0, "max": 100, "anchors": []}],
        "minScoreWithoutSpans": None, "outputLabel": "Translation", "refused": 0, "serverMessage": "",
        "serverKind": "warning", "stateKey": f"bench-{n}"})
elif what == "markdown, document":
    st.markdown("\\n\\n".join(DOC))
elif what == "markdown, one paragraph":
    st.markdown(" ".join(DOC))
'''

# Every shadow root the page makes is handed to the draw's observers (mutations inside one do not reach an
# observer of the document), and the time every message from the server reaches the page is kept (a run's first
# message, its start, is handled before Streamlit's own handler sees it). (The page's data-test-script-state is not
# a usable start: when a short run's messages arrive together, React draws "notRunning" only.)
INIT = """
(() => {
  const roots = [];
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    roots.push(root);
    (window.__benchWatch || []).forEach((watch) => watch(root));
    return root;
  };
  window.__benchRoots = roots;
  window.__benchMessages = [];
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", () => {
        window.__benchMessages.push(performance.now());
        if (window.__benchOnMessage) window.__benchOnMessage();
      });
    }
  };
})();
"""

# One draw: click the radio option `label`, resolve with the times (ms, performance.now()) of the click, the run's
# first message, the document's last words in the DOM, laid out, and painted.
DRAW = """
([label, markdown, end]) => new Promise((resolve) => {
  const r = {};
  const observers = [];
  let timer = null;
  const finish = () => {
    clearTimeout(timer);
    observers.forEach((o) => o.disconnect());
    window.__benchWatch = [];
    window.__benchOnMessage = null;
    resolve(r);
  };
  const last = () => {  // the element holding the document's last words (the radio's labels are markdown too)
    const roots = markdown ? [document] : window.__benchRoots.filter((root) => root.host.isConnected);
    for (const root of roots) {
      const found = root.querySelectorAll(markdown ? "[data-testid=stMarkdown] p" : ".evalkit-text");
      const node = found[found.length - 1];
      if (node && node.textContent.includes(end)) return node;
    }
    return null;
  };
  const check = () => {
    if (r.dom !== undefined || r.start === undefined) return;
    const node = last();
    if (!node) return;
    r.dom = performance.now();
    node.getBoundingClientRect();
    document.body.offsetHeight;
    r.layout = performance.now();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { r.paint = performance.now(); finish(); };
      channel.port2.postMessage(0);
    });
  };
  const watch = (root) => {
    const o = new MutationObserver(check);
    o.observe(root, {childList: true, subtree: true, characterData: true});
    observers.push(o);
  };
  window.__benchWatch = [watch];
  watch(document.body);
  window.__benchRoots.forEach(watch);
  window.__benchOnMessage = () => {
    if (r.start === undefined) r.start = window.__benchMessages[window.__benchMessages.length - 1];
  };
  timer = setTimeout(() => {
    r.timeout = true;
    r.messages = window.__benchMessages.length;
    r.texts = window.__benchRoots.filter((root) => root.host.isConnected)
      .map((root) => root.querySelectorAll(".evalkit-text").length);
    r.checked = [...document.querySelectorAll("[data-testid=stRadio] input")].map((i) => i.checked);
    finish();
  }, 20000);
  const option = [...document.querySelectorAll("[data-testid=stRadio] label")]
    .find((l) => l.textContent.trim() === label);
  window.__benchMessages = [];
  r.click = performance.now();
  option.click();
})
"""

# The keys' probe: every keydown on the page is timed (its timeStamp, when the browser received it) to the next
# painted frame; for a severity key also to the span's highlight in the DOM.
KEYS = """
(box) => {
  window.__benchKeys = [];
  window.__benchPending = 0;
  window.__benchBox = box;
  if (window.__benchListening) return;
  window.__benchListening = true;
  window.addEventListener("keydown", (e) => {
    const box = window.__benchBox;
    const k = {key: e.key, t0: e.timeStamp, seen: performance.now()};
    window.__benchPending++;
    if (e.key === "1") {
      const o = new MutationObserver(() => {
        if (k.dom === undefined && box.querySelector(".sp")) {
          k.dom = performance.now();
          box.getBoundingClientRect();
          k.layout = performance.now();
          o.disconnect();
        }
      });
      o.observe(box, {attributes: true, childList: true, subtree: true, attributeFilter: ["class"]});
    }
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        k.paint = performance.now();
        k.spans = box.querySelectorAll(".sp").length;
        window.__benchKeys.push(k);
        window.__benchPending--;
      };
      channel.port2.postMessage(0);
    });
  }, {capture: true});
}
"""


def write_document(folder: Path, component: Path) -> list[str]:
    """The document (1,000 words of made-up review sentences in 40 segments of 25 words, one emoji in it) and the
    page drawing it with the widget's files in ``component``."""
    rng = random.Random(13)
    words: list[str] = []
    while len(words) < WORDS:
        words += sentence(rng).split()
    words = words[:WORDS]
    words[WORDS // 2] += " 😺"
    segments = [" ".join(words[k:k + WORDS // SEGMENTS]) for k in range(0, WORDS, WORDS // SEGMENTS)]
    segments = [s if s.endswith(".") else s + "." for s in segments]
    (folder / "document.json").write_text(json.dumps(segments, ensure_ascii=False), encoding="utf-8")
    page = SCRIPT.replace("__COMPONENT__", repr(str(component))).replace("__DRAWS__", repr(list(DRAWS))).replace(
        "__COMMON__", repr(str(component.parent / "common.css")))  # (what the widgets share, sent first, as the app)
    (folder / "page.py").write_text(page, encoding="utf-8")
    return segments


def idle(page: Any) -> None:
    """Wait until Streamlit's run is over (the signals Streamlit's own browser tests use)."""
    page.wait_for_timeout(150)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(state="attached")
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached")


def choose(page: Any, label: str) -> None:
    page.locator("[data-testid=stRadio] label").filter(has_text=label).first.click()
    idle(page)


def metrics(cdp: Any) -> dict[str, float]:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def draw(page: Any, cdp: Any, label: str, end: str) -> dict[str, float]:
    """Draw nothing, then ``label`` (``end``: the document's last words); the times of the draw (ms from the run's
    first message; ``idle``: its last) and the renderer's work."""
    choose(page, "nothing")
    page.wait_for_timeout(200)
    before = metrics(cdp)
    r = page.evaluate(DRAW, [label, label.startswith("markdown"), end])
    after = metrics(cdp)
    if r.get("timeout") or "paint" not in r:
        raise RuntimeError(f"{label}: the draw was not seen within 20 s: {r}")
    idle(page)
    out = {k: r[k] - r["start"] for k in ("click", "dom", "layout", "paint")}
    out["idle"] = page.evaluate("window.__benchMessages")[-1] - r["start"]
    for name in ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration"):
        out[name] = (after[name] - before[name]) * 1000
    return out


def keyboard(page: Any, label: str, spans: int) -> list[dict[str, float]]:
    """``spans`` spans made with the keyboard in the first text of the widget drawn as ``label``, each deleted
    again; every key's times (ms from its keydown's timeStamp)."""
    choose(page, "nothing")
    choose(page, label)
    box = page.locator(".evalkit-text").first
    box.evaluate(KEYS)
    box.focus()

    def press(key: str) -> None:
        page.keyboard.press(key)
        page.wait_for_function("window.__benchPending === 0")

    for k in range(spans):
        press("Home")
        for _ in range(1 + k % 15):
            press("Control+ArrowRight")
        for _ in range(4):
            press("Shift+ArrowRight")
        press("1")
        press("Delete")
    keys = page.evaluate("window.__benchKeys")
    made = [k for k in keys if k["key"] == "1"]
    if len(made) != spans or any(k.get("dom") is None or k["spans"] < 1 for k in made):
        raise RuntimeError(f"{label}: not every '1' made a span: {made[:3]}")
    if any(k["spans"] for k in keys if k["key"] == "Delete"):
        raise RuntimeError(f"{label}: Delete left a span")
    return [{"key": k["key"], "paint": k["paint"] - k["t0"], "dom": k.get("dom", k["paint"]) - k["t0"],
             "queued": k["seen"] - k["t0"]} for k in keys]


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def ms(value: float) -> str:
    return fmt_s(value / 1000)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12, help="rounds of the four draws (the first not counted)")
    ap.add_argument("--keys", type=int, default=20, help="spans made with the keyboard per widget shape")
    ap.add_argument("--width", type=int, default=1280, help="the browser window's width, px")
    ap.add_argument("--component", default=str(ROOT / "components" / "spans"), metavar="DIR",
                    help="the widget's files (spans.js, spans.css) to measure: another version of them, e.g. "
                         "`git show REV:components/spans/spans.js` and its spans.css written into DIR")
    args = ap.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"Debian chromium not found at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp())
    segments = write_document(tmp, Path(args.component).resolve())
    proc, url = start_server(tmp / "unused.toml", tmp / "unused.sqlite", tmp / "server.log", script=tmp / "page.py")
    draws: dict[str, list[dict[str, float]]] = {label: [] for label in DRAWS}
    keys: dict[str, list[dict[str, float]]] = {}
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": 900})
        page.add_init_script(INIT)
        errors: list[str] = []  # the page's script errors, said when a draw is not seen
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.locator("[data-testid=stRadio]").wait_for()
        idle(page)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        t0 = time.monotonic()
        for r in range(args.rounds):
            for label in DRAWS if r % 2 == 0 else DRAWS[::-1]:
                try:
                    got = draw(page, cdp, label, segments[-1][-40:])
                except RuntimeError as exc:
                    raise RuntimeError(f"{exc}; the page's errors: {errors[-3:]}") from None
                if r > 0:
                    draws[label].append(got)
        for label in ("widget, document", "widget, one segment"):
            keys[label] = keyboard(page, label, args.keys)
        took = time.monotonic() - t0
        version = browser.version
        browser.close()
    finally:
        pw.stop()
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    chars = sum(len(s) for s in segments) + len(segments) - 1
    n = len(draws[DRAWS[0]])
    print(f"## The span widget in Chromium {version}, {args.width} px: a {WORDS:,}-word document ({chars:,} "
          f"characters) drawn vs the same text drawn by `st.markdown`, and a span made with the keyboard "
          f"({took:.0f} s; medians of {n} draws each, alternated; {args.keys} spans per shape)\n")
    print(HEADER)
    med = {label: {k: statistics.median(d[k] for d in got) for k in got[0]} for label, got in draws.items()}
    for label in DRAWS:
        m = med[label]
        value = f"{ms(m['dom'])} / {ms(m['layout'])} / {ms(m['paint'])}"
        floor = FLOOR.get(label)
        if floor is None:
            print(row(f"{NAMES[label]} (floor): run start -> text in the DOM / laid out / painted", value))
            continue
        f = med[floor]
        print(row(f"{NAMES[label]}: run start -> text in the DOM / laid out / painted", value, ms(f["paint"]),
                  f"{m['paint'] / f['paint']:.2f}x (laid out {m['layout'] / f['layout']:.2f}x)", "<= 2x",
                  m["paint"] / f["paint"] <= 2))
    for label in DRAWS:
        m = med[label]
        print(row(f"{NAMES[label]}: the renderer's work per draw, script / style / layout (all its tasks)",
                  f"{ms(m['ScriptDuration'])} / {ms(m['RecalcStyleDuration'])} / {ms(m['LayoutDuration'])} "
                  f"({ms(m['TaskDuration'])})"))
    for label in DRAWS:
        m = med[label]
        print(row(f"{NAMES[label]}: click -> painted (with the click's trip to the server) / run start -> the run's "
                  "last message", f"{ms(m['paint'] - m['click'])} / {ms(m['idle'])}"))
    for label, got in keys.items():
        made = [k["paint"] for k in got if k["key"] == "1"]
        dom = [k["dom"] for k in got if k["key"] == "1"]
        steps = [k["paint"] for k in got if k["key"] not in ("1", "Delete", "Control", "Shift")]
        print(row(f"{NAMES[label]}: \"1\" -> the span's highlight painted, p50 / p95 / max (in the DOM: p50 "
                  f"{ms(statistics.median(dom))})", f"{ms(statistics.median(made))} / {ms(p95(made))} / "
                  f"{ms(max(made))}", "", "", "<= 100 ms (every span)", max(made) <= 100))
        print(row(f"{NAMES[label]}: a caret or selection step (an arrow key) -> painted, p50 / p95 ({len(steps)} keys)",
                  f"{ms(statistics.median(steps))} / {ms(p95(steps))}"))


if __name__ == "__main__":
    main()
