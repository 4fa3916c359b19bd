// evalkit's error-span widget (Streamlit custom component v2: no iframe, no build step, no request).
//
// Draws each output of a "spans" question (side by side on a wide screen, stacked on a phone), segment by segment:
// the segment's source above, the output as real text (textContent, never HTML; dir="auto" for right-to-left
// languages), then the scales (per output, or per segment with scorePer "segment") and one "Next" button.
// The evaluator marks error spans with the mouse (drag, double-click a word, or click the first then the last
// character), with the keyboard alone (arrows move a caret, Shift+arrows select, the severities' keys mark, Delete
// removes, Tab goes from error to error) or by touch (tap the first then the last character; "Cancel" gives up a
// half-made span, as Esc does). Spans never overlap; ESA-AI suggestions are drawn dashed until kept, changed or
// deleted (one never touched is sent as "suggested-unreviewed"). Everything stays in the browser until "Next", which
// checks the answer here (scales moved, MQM categories chosen; unreviewed suggestions and "no errors yet a low score"
// asked once) and sends one trigger value, "submit" (shape: docs of issue 27 / the spans design), which the server
// validates again and may refuse (its message shown above Next). Unsent work survives a reload of the page
// (sessionStorage, under data.stateKey and data.qid).
//
// Offsets are JavaScript string (UTF-16) indices, end exclusive, as the server expects (it converts them to code
// points). A "character" here is a grapheme (Intl.Segmenter), so a surrogate pair (an emoji) is never split and a
// combining accent stays with its letter; the [missing] token after a text is start = text.length, end = +1.
// The text is drawn as text (a few text nodes), with an element only for each marked stretch, the selection, the
// caret's character and the [missing] token (paint); the character under a pointer is found from the browser's caret
// position at that point (caretPositionFromPoint, told about the shadow root) and Ranges' rectangles (unitAt).

const STATE = "__evalkitSpans";
const KNOWN = ["minor", "major", "critical", "neutral"];  // severities with a colour of their own (spans.css)
const WORDS = {  // the page's words; the server may replace any of them (data.words)
  next: "Next", saving: "Saving…", source: "Source", legend: "Severity:", suggested: "Suggested",
  keys: "Keys: Tab into the text · ←/→ move · Shift+←/→ select · {sev} mark · Del remove · " +
    "Tab next error · Enter edit · Esc cancel",
  keysSuggest: " · K keep", keysCategory: " · C category",
  mouse: "Mark an error: drag across it (double-click a word), or click its first and then its last character.",
  touch: "Mark an error: tap its first and then its last character (the same one twice marks just it).",
  missing: "[missing]", missingHint: "Omissions: mark the [missing] token at the end.", word: "Whole word",
  clickEnd: "Now click the last character of the error (the same one again marks just it; Esc cancels).",
  tapEnd: "Now tap the last character of the error (the same one again marks just it).",
  resizeTap: "Tap the first and then the last character of the new extent of this error.", cancel: "Cancel",
  overlap: "Not marked: errors may not overlap, and this one would overlap an error already marked.",
  resize: "Select the new extent of this error (drag, two clicks, or Shift+arrows then Enter); Esc cancels.",
  keep: "Keep", keepAll: "Keep all suggestions", delete: "Delete", extent: "Change extent", close: "Close",
  category: "Category", subcategory: "Subcategory", freeCategory: "Category (type it)", choose: "Choose…",
  needCategory: "choose a category", spansHeading: "Marked errors", none: "No errors marked.",
  segment: "Segment", sliderUnmoved: "Not scored yet: move the slider", scored: "Scored",
  missingScore: "Not scored yet.", space: "space", text: "text: select the errors",
  summary: "Still missing: {what}. It is marked above; nothing has been saved yet.",
  confirm: "No errors are marked, yet the score is below {min}: are you sure? Press Next again to send it as it is.",
  confirmIn: "No errors are marked in {output}, yet its score is below {min}: are you sure? " +
    "Press Next again to send it as it is.",
  confirmMany: "No errors are marked in {output}, yet their scores are below {min}: are you sure? " +
    "Press Next again to send them as they are.", output: "the output",
  unreviewed: "{n} suggested errors are not reviewed yet: keep, change or delete each (or press Next again to " +
    "leave them as suggested).",
  unreviewedOne: "1 suggested error is not reviewed yet: keep, change or delete it (or press Next again to leave " +
    "it as suggested).",
};

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "className") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const fill = (template, values) => template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
const sevClass = (id) => `s-${KNOWN.includes(id) ? id : "other"}`;
const splitCategory = (cat) => [cat.split("/")[0], cat.split("/").slice(1).join("/")];  // "Top/Sub" -> [top, sub]

// ---- characters: graphemes of a text (each with its UTF-16 start and end) and the words they belong to ----

function unitsOf(text, missingToken, words) {
  const units = [];
  if (typeof Intl !== "undefined" && Intl.Segmenter) {
    for (const g of new Intl.Segmenter(undefined, {granularity: "grapheme"}).segment(text)) {
      units.push({start: g.index, end: g.index + g.segment.length, text: g.segment});
    }
  } else {  // one code point per character (Array.from never splits a surrogate pair)
    let at = 0;
    for (const ch of Array.from(text)) {
      units.push({start: at, end: at + ch.length, text: ch});
      at += ch.length;
    }
  }
  units.forEach((u) => { u.space = /^\s+$/.test(u.text); });
  if (typeof Intl !== "undefined" && Intl.Segmenter) {  // the word around each character (for wordLevel)
    let k = 0;
    for (const w of new Intl.Segmenter(undefined, {granularity: "word"}).segment(text)) {
      const end = w.index + w.segment.length;
      for (; k < units.length && units[k].start < end; k++) if (w.isWordLike) units[k].word = [w.index, end];
    }
  }
  if (missingToken) units.push({start: text.length, end: text.length + 1, text: words.missing, missing: true});
  return units;
}

// the index of the unit holding UTF-16 offset `off` (binary search; the last unit when past the end)
function unitIndex(units, off) {
  let lo = 0, hi = units.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (units[mid].end <= off) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// the word (letters/digits) around unit i as [start, end), or null (a space, punctuation, [missing]): the word
// Intl.Segmenter found, else the run of letter/digit characters around it
function wordAround(units, i) {
  const isWord = (x) => x && !x.missing && /^[\p{L}\p{N}\p{M}]+$/u.test(x.text);
  if (!isWord(units[i])) return null;
  if (units[i].word) return units[i].word;
  let a = i, b = i;
  while (isWord(units[a - 1])) a--;
  while (isWord(units[b + 1])) b++;
  return [units[a].start, units[b].end];
}

const STORE_PREFIX = "evalkit-spans:";
function storage() {  // sessionStorage, or null where the browser refuses it (privacy settings)
  try { return window.sessionStorage; } catch (e) { return null; }
}

function build(root, data, send) {
  const words = {...WORDS, ...(data.words || {})};
  const sevs = data.severities;
  const cats = data.categories;  // null (ESA), "free" or {top: [subcategories]}
  const perSegment = data.scorePer === "segment";
  const st = {qid: data.qid, t0: performance.now(), actions: [], outputs: [], active: null, drag: null,
    values: {}, marks: {}, widgets: {}, sent: false, asked: false, refused: data.refused, kbd: false, touch: false,
    sync: {}, room: null};
  // a coarse pointer (a phone): "tap" in the help line, no key numbers on the severities (spans.css)
  const coarse = typeof matchMedia === "function" && matchMedia("(pointer: coarse)").matches;
  const saveKey = data.stateKey ? `${STORE_PREFIX}${data.stateKey}:${data.qid}` : null;  // (no key: not kept)
  const hasSuggestions = data.outputs.some((o) => o.segments.some((s) => (s.suggestions || []).length));
  root.querySelectorAll(".evalkit-spans").forEach((node) => node.remove());
  const form = el("div", {className: "evalkit-spans", "data-testid": "evalkit-spans"});
  form.style.setProperty("--evalkit-n", String(data.outputs.length));
  const live = el("div", {className: "evalkit-sr", "aria-live": "polite"});
  form.addEventListener("keydown", (e) => {  // a letter typed in the widget is ours, never one of Streamlit's
    if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) e.stopPropagation();  // keys ("c" clears caches, "r" reruns)
    st.touch = false;
    st.kbd = true;
  });
  form.addEventListener("pointerdown", (e) => {  // the caret's frame is for keyboard use only (st.kbd, paint)
    st.kbd = false;
    st.touch = e.pointerType !== "mouse";
    st.pressed = performance.now();
  }, true);

  // ---- the legend (severities with their keys; suggestions; "Keep all") and how to mark ----
  const legend = el("div", {className: "evalkit-legend", "data-testid": "evalkit-legend"});
  legend.append(el("span", {className: "evalkit-legend-title"}, words.legend));
  sevs.forEach((sev) => {
    const chip = el("span", {className: `evalkit-chip ${sevClass(sev.id)}`});
    if (sev.key) chip.append(el("kbd", {}, sev.key));
    chip.append(document.createTextNode(sev.label));
    legend.append(chip);
  });
  if (hasSuggestions) {
    legend.append(el("span", {className: "evalkit-chip evalkit-chip-sug"}, words.suggested));
    const keepAll = el("button", {type: "button", className: "evalkit-btn", "data-testid": "evalkit-keep-all"},
      words.keepAll);
    keepAll.addEventListener("click", () => st.outputs.forEach((o) => o.segs.forEach((seg) => {
      seg.spans.filter(undecided).forEach((span) => keep(seg, span));
    })));
    legend.append(keepAll);
    st.keepAll = keepAll;
  }
  form.append(legend, el("p", {className: "evalkit-help", "data-testid": "evalkit-help"},
    (coarse ? words.touch : words.mouse) + (data.missingToken ? ` ${words.missingHint}` : "")));

  // ---- the outputs: segments (source, text, message, [scales]), the keys, the list of errors, [scales] ----
  const grid = el("div", {className: "evalkit-spans-grid"});
  const keyLine = fill(words.keys, {sev: sevs.map((s) => s.key).filter(Boolean).join("/")}) +
    (hasSuggestions ? words.keysSuggest : "") + (cats ? words.keysCategory : "");
  data.outputs.forEach((output, k) => {
    const column = el("div", {className: "evalkit-spans-output", "data-output": k, role: "group"});
    const out = {k, heading: output.heading || "", segs: []};
    if (output.heading) {
      const headingId = `${data.qid}-heading-${k}`;
      column.append(el("p", {className: "evalkit-heading", id: headingId}, output.heading));
      column.setAttribute("aria-labelledby", headingId);
    }
    // what the server found wrong with this output (a check question's feedback): under its heading, as text
    // (filled on every render: the feedback comes with the rerun after a wrong answer)
    out.problems = el("div", {className: "evalkit-mark evalkit-problems", "data-testid": "evalkit-problems",
      role: "status", hidden: true});
    column.append(out.problems);
    const keysId = `${data.qid}-keys-${k}`;
    output.segments.forEach((segment, s) => {
      const seg = {k, s, out, text: segment.text, spans: [], deleted: [], caret: 0, anchor: null, pending: null,
        resize: null, focused: false, twin: null,
        units: unitsOf(segment.text, data.missingToken && !segment.media, words),
        sugs: segment.suggestions || []};
      (segment.suggestions || []).forEach((sug, j) => {
        const span = {start: sug.start, end: sug.end, severity: sug.severity, category: sug.category ?? null,
          suggestion: j, decided: false};
        span.orig = {start: span.start, end: span.end, severity: span.severity, category: span.category};
        seg.spans.push(span);
      });
      seg.spans.sort((a, b) => a.start - b.start);
      seg.block = el("div", {className: "evalkit-seg", "data-segment": s});
      if (segment.source) {
        const src = el("div", {className: "evalkit-source"});
        src.append(el("span", {className: "evalkit-source-label"}, words.source),
          el("p", {dir: "auto"}, segment.source));
        seg.block.append(src);
      }
      const name = [output.heading, output.segments.length > 1 ? `${words.segment} ${s + 1}` : ""]
        .filter(Boolean).join(", ");
      seg.box = el("div", {className: "evalkit-text", role: "textbox", "aria-readonly": "true",
        "aria-multiline": "true", tabindex: 0, "data-testid": "evalkit-text",
        "aria-label": name ? `${name}: ${words.text}` : words.text, "aria-describedby": keysId});
      seg.box.setAttribute("dir", segment.dir || "auto");
      seg.runs = [];  // the text's stretches as drawn (paint): plain text nodes, an element per marked stretch
      seg.msg = el("div", {className: "evalkit-msg", role: "status", "data-testid": "evalkit-msg"});
      // the message line, with "Cancel" while a span is half made or its extent changed (a phone has no Esc)
      seg.cancel = button(words.cancel, "evalkit-cancel", () => cancel(seg));
      seg.note = el("div", {className: "evalkit-note", hidden: true});
      seg.note.append(seg.msg, seg.cancel);
      seg.hover = el("div", {className: "evalkit-hover", "aria-hidden": "true", hidden: true});  // (mouse: paint)
      seg.block.append(seg.box, seg.note, seg.hover);
      if (segment.media) {  // an image, audio clip or video (drawn by the page above): scored, never marked
        seg.box.hidden = true;
        seg.block.append(el("p", {className: "evalkit-help", "data-testid": "evalkit-media-output"}, segment.media));
      }
      seg.block.addEventListener("focusout", () => setTimeout(() => {  // focus left the text and its toolbox
        if (st.active && st.active.seg === seg && !seg.block.contains(seg.block.getRootNode().activeElement)) {
          deactivate();
        }
      }, 0));
      wireText(seg);
      column.append(seg.block);
      if (perSegment) data.scales.forEach((scale) => seg.block.append(scaleBox(scale, k, s)));
      out.segs.push(seg);
      paint(seg);
    });
    const keys = el("p", {className: "evalkit-keys", id: keysId, "data-testid": "evalkit-keys"}, keyLine);
    keys.hidden = output.segments.every((segment) => segment.media);  // (nothing to mark)
    column.append(keys);
    out.list = el("div", {className: "evalkit-list", "data-testid": "evalkit-list"});
    column.append(out.list);
    if (!perSegment) data.scales.forEach((scale) => column.append(scaleBox(scale, k, null)));
    st.outputs.push(out);
    relist(out);
    grid.append(column);
  });
  form.append(grid);

  // ---- the toolbox: one, moved next to the active span ----
  const tools = el("div", {className: "evalkit-tools", role: "group", "data-testid": "evalkit-tools", hidden: true});
  tools.addEventListener("keydown", (e) => { if (e.key === "Escape" && st.active) cancel(st.active.seg); });

  // ---- the end: what is missing, the server's message, "Next" ----
  const summary = el("div", {className: "evalkit-mark evalkit-summary", role: "alert",
    "data-testid": "evalkit-summary", hidden: true});
  const server = el("div", {className: "evalkit-mark evalkit-server", role: "alert",
    "data-testid": "evalkit-server", hidden: true});
  const next = el("button", {type: "button", className: "evalkit-next", "data-testid": "evalkit-next"}, words.next);
  form.append(summary, server, next, live);
  root.append(form);
  Object.assign(st, {server, next, words});

  // ---------------------------------------------------------------------------------------------------------
  // spans: what is marked, drawn and listed

  function undecided(span) { return span.suggestion !== null && !span.decided; }

  function log(action, seg, span) {
    st.actions.push({t: Math.round(performance.now() - st.t0), action, output: seg.k, segment: seg.s,
      start: span.start, end: span.end, severity: span.severity, category: span.category ?? null});
    persist();
  }

  function spanAt(seg, i) {
    const u = seg.units[i];
    return u ? seg.spans.find((sp) => sp.start < u.end && u.start < sp.end) || null : null;
  }

  function marked(seg, span) {
    const inside = seg.text.slice(span.start, Math.min(span.end, seg.text.length));
    return inside + (span.end > seg.text.length ? words.missing : "");
  }

  function sevLabel(id) { return (sevs.find((s) => s.id === id) || {label: id}).label; }

  function catOk(cat) {
    if (!cats) return true;
    if (!cat || !cat.trim()) return false;
    if (cats === "free") return true;
    const [top, sub] = splitCategory(cat);
    if (!(top in cats)) return false;
    return cats[top].length ? cats[top].includes(sub) : !sub;
  }

  // the span as words: "Minor, Accuracy/Mistranslation: “the words” (suggested)"
  function describe(seg, span) {
    const cat = cats ? `, ${span.category || words.needCategory}` : "";
    return `${sevLabel(span.severity)}${cat}: “${marked(seg, span)}”` +
      (undecided(span) ? ` (${words.suggested.toLowerCase()})` : "");
  }

  function say(seg, text, warn) {
    clearTimeout(seg.sayTimer);
    seg.msg.textContent = text || "";
    seg.msg.classList.toggle("evalkit-warn", !!warn);
    if (warn) seg.sayTimer = setTimeout(() => say(seg, ""), 8000);  // a refusal stays a while, then goes
    seg.note.hidden = !seg.msg.textContent && seg.cancel.hidden;
  }

  // draw a segment's spans, selection and caret: its text as plain text nodes, split only where a span, the
  // selection, the pending first click or the caret begins or ends; each marked stretch one element with its classes,
  // the caret's character always one of its own (to scroll to; framed when keys are in use), the [missing] token
  // one. Only the stretches that changed are replaced (the same ones at the start and the end are kept).
  function paint(seg) {
    const units = seg.units, n = units.length;
    const cls = new Array(n).fill(""), owner = new Int32Array(n).fill(-1), ends = [];
    seg.spans.forEach((span, j) => {
      const a = unitIndex(units, span.start), b = unitIndex(units, span.end - 1);
      const extra = ` sp ${sevClass(span.severity)}${undecided(span) ? " sug" : ""}` +
        `${st.active === span ? " act" : ""}${catOk(span.category) ? "" : " nocat"}`;
      ends.push([a, b]);
      for (let i = a; i <= b; i++) [cls[i], owner[i]] = [extra, j];
    });
    if (seg.anchor !== null) {
      const [a, b] = [Math.min(seg.anchor, seg.caret), Math.max(seg.anchor, seg.caret)];
      for (let i = a; i <= b; i++) cls[i] += " sel";
    }
    if (seg.pending !== null) cls[seg.pending] += " pend";
    const caret = n ? Math.min(seg.caret, n - 1) : -1;
    if (caret >= 0 && seg.focused && st.kbd) cls[caret] += " caret";  // (not after a drag or a tap: a key shows it)
    const runs = [];
    for (let i = 0; i < n;) {
      let j = i + 1;
      if (i !== caret && !units[i].missing) {
        while (j < n && j !== caret && !units[j].missing && cls[j] === cls[i] && owner[j] === owner[i]) j++;
      }
      const o = owner[i];
      const c = o < 0 ? cls[i] : cls[i] + (ends[o][0] === i ? " s0" : "") + (ends[o][1] === j - 1 ? " s1" : "");
      const wrap = c !== "" || i === caret || units[i].missing;
      runs.push({a: i, b: j, cls: wrap ? `u${units[i].missing ? " miss" : ""}${c}` : null});
      i = j;
    }
    const old = seg.runs, same = (x, y) => x.a === y.a && x.b === y.b && x.cls === y.cls;
    let p = 0, q = 0;
    for (; p < old.length && p < runs.length && same(old[p], runs[p]); p++) runs[p] = old[p];
    while (q < old.length - p && q < runs.length - p && same(old[old.length - 1 - q], runs[runs.length - 1 - q])) {
      runs[runs.length - 1 - q] = old[old.length - 1 - q];
      q++;
    }
    if (p < old.length - q || p < runs.length - q) {
      const frag = document.createDocumentFragment();
      for (let r = p; r < runs.length - q; r++) {
        const run = runs[r], u = units[run.a];
        const text = u.missing ? words.missing : seg.text.slice(u.start, units[run.b - 1].end);
        run.node = run.cls === null ? document.createTextNode(text) : el("span", {className: run.cls,
          dir: u.missing ? "ltr" : null, "data-testid": u.missing ? "evalkit-missing" : null}, text);
        frag.append(run.node);
      }
      for (let r = p; r < old.length - q; r++) old[r].node.remove();
      seg.box.insertBefore(frag, q ? runs[runs.length - q].node : null);
    }
    seg.runs = runs;
    seg.hover.hidden = true;
    seg.cancel.hidden = seg.pending === null && !seg.resize;
    seg.note.hidden = !seg.msg.textContent && seg.cancel.hidden;
  }

  // the stretch drawn (paint) that holds unit i (binary search)
  function runOf(seg, i) {
    const runs = seg.runs;
    let lo = 0, hi = runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (runs[mid].a <= i) lo = mid; else hi = mid - 1;
    }
    return runs[lo];
  }

  // where unit i is drawn (its glyphs' box, a Range over its text; the [missing] token's element)
  function unitRect(seg, i) {
    const run = runOf(seg, i), u = seg.units[i];
    if (u.missing) return run.node.getBoundingClientRect();
    const text = run.cls === null ? run.node : run.node.firstChild, base = seg.units[run.a].start;
    const range = document.createRange();
    range.setStart(text, u.start - base);
    range.setEnd(text, u.end - base);
    return range.getBoundingClientRect();
  }

  // scroll the caret's character into view (it is always an element of its own: paint)
  function reveal(seg) {
    if (seg.units.length) runOf(seg, seg.caret).node.scrollIntoView({block: "nearest"});
  }

  // the list of an output's errors under its text (for review; screen readers read it as a list)
  function relist(out) {
    out.list.replaceChildren();
    const all = out.segs.flatMap((seg) => seg.spans.map((span) => [seg, span]));
    const headId = `${data.qid}-list-${out.k}`;
    out.list.append(el("p", {className: "evalkit-list-title", id: headId}, `${words.spansHeading} (${all.length})`));
    if (!all.length) {
      out.list.append(el("p", {className: "evalkit-help"}, words.none));
      return;
    }
    const ol = el("ol", {"aria-labelledby": headId});
    all.forEach(([seg, span]) => {
      const li = el("li", {className: `evalkit-item${catOk(span.category) ? "" : " evalkit-need"}`,
        "data-testid": "evalkit-item"});
      li.append(el("span", {className: `evalkit-chip ${sevClass(span.severity)}${undecided(span) ? " sug" : ""}`,
        "aria-hidden": "true"}, sevLabel(span.severity)));
      const where = out.segs.length > 1 ? `${words.segment} ${seg.s + 1}: ` : "";
      // the chip shows the severity: the visible words start with the category (if any) and the marked text; the
      // button's accessible name says it all (the chip is hidden from screen readers)
      const full = where + describe(seg, span);
      const shown = where + full.slice(where.length + sevLabel(span.severity).length).replace(/^, /, "")
        .replace(/^: /, "");
      const label = el("button", {type: "button", className: "evalkit-link", "aria-label": full}, shown);
      label.addEventListener("click", () => goTo(seg, span, true));
      li.append(label);
      if (undecided(span)) {
        const b = el("button", {type: "button", className: "evalkit-btn", "data-testid": "evalkit-item-keep",
          "aria-label": `${words.keep}: ${describe(seg, span)}`}, words.keep);
        b.addEventListener("click", () => keep(seg, span));
        li.append(b);
      }
      const del = el("button", {type: "button", className: "evalkit-btn evalkit-del", "data-testid": "evalkit-item-del",
        "aria-label": `${words.delete}: ${describe(seg, span)}`}, "✕");
      del.addEventListener("click", () => remove(seg, span));
      li.append(del);
      ol.append(li);
    });
    out.list.append(ol);
  }

  function redraw(seg) {
    paint(seg);
    relist(seg.out);
    if (st.active && st.active.seg === seg) showTools();
    if (st.keepAll) st.keepAll.hidden = !st.outputs.some((o) => o.segs.some((sg) => sg.spans.some(undecided)));
    resummarize();
  }

  function overlaps(seg, start, end, except) {
    return seg.spans.some((sp) => sp !== except && sp.start < end && start < sp.end);
  }

  // units i..j (either order) as a span's [start, end): wordLevel snaps to words and drops spaces at the ends
  function extent(seg, i, j) {
    const u = seg.units;
    [i, j] = [Math.min(i, j), Math.max(i, j)];
    if (data.wordLevel) {
      while (i < j && u[i].space) i++;
      while (j > i && u[j].space) j--;
    }
    let start = u[i].start, end = u[j].end;
    if (data.wordLevel && u[i].word) start = u[i].word[0];
    if (data.wordLevel && u[j].word) end = Math.max(end, u[j].word[1]);
    return [start, end];
  }

  // a selection of units i..j made (drag, two clicks, Shift+arrows): a new span, or the new extent of one
  function commit(seg, i, j, severity) {
    const [start, end] = extent(seg, i, j);
    const target = seg.resize;
    seg.anchor = seg.pending = seg.resize = null;
    if (overlaps(seg, start, end, target)) {
      say(seg, words.overlap, true);
      deactivate();
      paint(seg);
      return null;
    }
    say(seg, "");
    let span = target;
    if (target) {
      target.start = start;
      target.end = end;
      if (severity) target.severity = severity;
      changed(seg, target);
    } else {
      span = {start, end, severity: severity || sevs[0].id, category: null, suggestion: null, orig: null,
        decided: true};
      seg.spans.push(span);
      log("create", seg, span);
    }
    seg.spans.sort((a, b) => a.start - b.start);
    seg.caret = unitIndex(seg.units, span.end - 1);
    activate(seg, span);
    announce(describe(seg, span));
    return span;
  }

  function changed(seg, span) {
    if (span.suggestion !== null) span.decided = true;
    log("change", seg, span);
  }

  function setSeverity(seg, span, id) {
    if (span.severity === id) {
      if (undecided(span)) keep(seg, span);  // pressing a suggestion's own severity accepts it
      return;
    }
    span.severity = id;
    changed(seg, span);
    redraw(seg);
    announce(describe(seg, span));
  }

  function setCategory(seg, span, cat) {
    cat = cat && cat.trim() ? cat.trim() : null;
    if (cat === span.category) return;
    span.category = cat;
    changed(seg, span);
    redraw(seg);
  }

  function keep(seg, span) {
    if (!undecided(span)) return;
    span.decided = true;
    log("keep", seg, span);
    redraw(seg);
    announce(`${words.keep}: ${describe(seg, span)}`);
  }

  function remove(seg, span) {
    seg.spans = seg.spans.filter((sp) => sp !== span);
    if (span.suggestion !== null) seg.deleted.push({...span.orig, suggestion: span.suggestion});
    log("delete", seg, span);
    if (st.active === span) deactivate();
    redraw(seg);
    announce(`${words.delete}: ${describe(seg, span)}`);
  }

  function activate(seg, span) {
    const before = st.active;
    st.active = span;
    if (span) span.seg = seg;
    if (before && before.seg && before.seg !== seg) paint(before.seg);
    redraw(seg);
    if (!span) hideTools();
  }

  function deactivate(keepRoom) {
    const seg = st.active && st.active.seg;
    st.active = null;
    hideTools(keepRoom);
    if (seg) {
      seg.resize = null;
      paint(seg);
    }
  }

  // caret to a span (from the list, or Tab): the text focused, the toolbox shown
  function goTo(seg, span, focus) {
    seg.anchor = seg.pending = null;
    seg.caret = unitIndex(seg.units, span.start);
    if (focus) seg.box.focus({preventScroll: true});
    activate(seg, span);
    reveal(seg);
    announce(describe(seg, span));
  }

  function announce(text) { live.textContent = text; }

  // ---- the toolbox of the active span: severity, category, keep, change extent, delete ----
  function showTools() {
    const span = st.active, seg = span.seg;
    const had = tools.contains(tools.getRootNode().activeElement) ? tools.getRootNode().activeElement : null;
    tools.replaceChildren();
    tools.setAttribute("aria-label", describe(seg, span));
    const sevRow = el("div", {className: "evalkit-tools-row", role: "group", "aria-label": words.legend});
    sevs.forEach((sev) => {
      const b = el("button", {type: "button", className: `evalkit-btn evalkit-sev ${sevClass(sev.id)}`,
        "aria-pressed": String(span.severity === sev.id), "data-severity": sev.id});
      if (sev.key) b.append(el("span", {className: "evalkit-key"}, `${sev.key} `));
      b.append(sev.label);
      b.addEventListener("click", () => setSeverity(seg, span, sev.id));
      sevRow.append(b);
    });
    tools.append(sevRow);
    if (cats) tools.append(categoryRow(seg, span));
    const row = el("div", {className: "evalkit-tools-row"});
    if (undecided(span)) row.append(button(words.keep, "evalkit-keep", () => keep(seg, span)));
    if (wider(seg, span)) row.append(button(words.word, "evalkit-word", () => toWord(seg, span)));
    row.append(button(words.extent, "evalkit-extent", () => startResize(seg, span)),
      button(words.delete, "evalkit-delete", () => {
        remove(seg, span);
        seg.box.focus({preventScroll: true});
      }),
      button("✕", "evalkit-close", () => cancel(seg), words.close));
    tools.append(row);
    if (tools.parentNode !== seg.block) seg.note.after(tools);  // (on a phone: under the text, in the flow)
    tools.hidden = false;
    place(seg, span);
    if (had) {  // the control that had the focus, drawn again: it keeps it
      const d = had.dataset;
      const same = d.severity ? `[data-severity="${d.severity}"]` : `[data-testid="${d.testid}"]`;
      (tools.querySelector(same) || tools.querySelector("button")).focus({preventScroll: true});
    }
  }

  function button(text, testid, onClick, label) {
    const b = el("button", {type: "button", className: "evalkit-btn", "data-testid": testid, "aria-label": label},
      text);
    b.addEventListener("click", onClick);
    return b;
  }

  function categoryRow(seg, span) {
    const row = el("div", {className: "evalkit-tools-row evalkit-cats"});
    const id = `${data.qid}-cat`;
    if (cats === "free") {
      const input = el("input", {type: "text", id, maxlength: 100, className: "evalkit-cat",
        "data-testid": "evalkit-cat", "aria-label": words.freeCategory, placeholder: words.freeCategory});
      input.value = span.category || "";
      input.addEventListener("change", () => setCategory(seg, span, input.value));
      input.addEventListener("keydown", (e) => { if (e.key === "Enter") setCategory(seg, span, input.value); });
      row.append(input);
      return row;
    }
    const [top, sub] = splitCategory(span.category || "");
    const pick = el("select", {id, className: "evalkit-cat", "data-testid": "evalkit-cat",
      "aria-label": words.category});
    pick.append(el("option", {value: ""}, `${words.category}: ${words.choose}`));
    Object.keys(cats).forEach((c) => pick.append(el("option", {value: c, selected: c === top}, c)));
    row.append(pick);
    pick.addEventListener("change", () => setCategory(seg, span, pick.value));
    if (top && cats[top] && cats[top].length) {
      const subPick = el("select", {className: "evalkit-cat", "data-testid": "evalkit-subcat",
        "aria-label": words.subcategory});
      subPick.append(el("option", {value: ""}, `${words.subcategory}: ${words.choose}`));
      cats[top].forEach((c) => subPick.append(el("option", {value: c, selected: c === sub}, c)));
      subPick.addEventListener("change", () => setCategory(seg, span, subPick.value ? `${top}/${subPick.value}` : top));
      row.append(subPick);
    }
    return row;
  }

  // the toolbox under the span's last character, kept inside its segment's width
  function place(seg, span) {
    const last = unitRect(seg, unitIndex(seg.units, span.end - 1));
    const first = unitRect(seg, unitIndex(seg.units, span.start));
    const box = seg.block.getBoundingClientRect();
    const width = tools.offsetWidth;
    const rtl = getComputedStyle(seg.box).direction === "rtl";
    let left = (rtl ? first.right - width : first.left) - box.left;
    left = Math.max(0, Math.min(left, box.width - width));
    const below = seg.units[unitIndex(seg.units, span.end - 1)].missing ? 0 : pad(seg);  // (its padding, underline)
    const top = last.bottom + below - box.top + 6;
    tools.style.left = `${left}px`;
    tools.style.top = `${top}px`;
    // floating past the text's bottom it would cover what follows (the keys, the list of errors): room is made
    // under the text while it is open
    if (st.room && st.room !== seg) st.room.box.style.marginBottom = "";
    const room = getComputedStyle(tools).position === "absolute"
      ? top + tools.offsetHeight + 8 - (seg.box.offsetTop + seg.box.offsetHeight) : 0;
    seg.box.style.marginBottom = room > 0 ? `${room}px` : "";
    st.room = room > 0 ? seg : null;
  }

  // keepRoom: the room made under a text for the toolbox stays (a first click elsewhere closes the toolbox: were
  // the room to go, the text below would move up under the pointer before the second click); it goes when the
  // next toolbox is placed, or on the next hideTools()
  function hideTools(keepRoom) {
    tools.hidden = true;
    if (keepRoom) return;
    if (st.room) st.room.box.style.marginBottom = "";
    st.room = null;
  }

  // the word around a one-character span, if wider and free ("Whole word"; a double click on a character)
  function wider(seg, span) {
    const i = unitIndex(seg.units, span.start);
    const w = seg.units[i].end === span.end ? wordAround(seg.units, i) : null;
    return w && w[1] - w[0] > span.end - span.start && !overlaps(seg, w[0], w[1], span) ? w : null;
  }

  function toWord(seg, span) {
    const w = wider(seg, span);
    if (!w) return;
    const last = st.actions[st.actions.length - 1];  // the one-character span just made: its "create" amended
    const amend = last && (last.action === "create" || last.action === "change") && last.output === seg.k &&
      last.segment === seg.s && last.start === span.start && last.end === span.end;
    [span.start, span.end] = w;
    if (amend) Object.assign(last, {start: w[0], end: w[1]});
    else changed(seg, span);
    persist();
    seg.caret = unitIndex(seg.units, span.end - 1);
    activate(seg, span);
    announce(describe(seg, span));
  }

  function cancel(seg) {  // Esc, or "Cancel": no half-made span, no extent being changed
    seg.anchor = seg.pending = seg.resize = null;
    if (!st.active) hideTools();  // (a room kept for a click-click goes too)
    say(seg, "");
    deactivate();
    paint(seg);
    seg.box.focus({preventScroll: true});
  }

  function startResize(seg, span) {
    seg.resize = span;
    seg.anchor = unitIndex(seg.units, span.start);
    seg.caret = unitIndex(seg.units, span.end - 1);
    hideTools();
    say(seg, st.touch ? words.resizeTap : words.resize);
    seg.box.focus({preventScroll: true});
    paint(seg);
  }

  // ---------------------------------------------------------------------------------------------------------
  // the text's mouse, touch and keyboard

  function wireText(seg) {
    const box = seg.box;
    box.addEventListener("focus", () => {
      seg.focused = true;
      // (Tab into the text: the caret shows; a focus that follows a press or a click does not show it)
      if (!(performance.now() - st.pressed < 1000) && box.matches(":focus-visible")) st.kbd = true;
      paint(seg);
    });
    box.addEventListener("blur", () => { seg.focused = false; paint(seg); });
    box.addEventListener("pointerdown", (e) => {
      if (e.pointerType === "mouse" && e.button !== 0) return;
      const i = unitAt(seg, e.clientX, e.clientY, true);
      seg.twin = null;
      if (i === null) return;
      st.outputs.forEach((o) => o.segs.forEach((other) => {  // a half-made span elsewhere is left: it is dropped
        if (other !== seg && other.pending !== null) {
          other.pending = null;
          say(other, "");
          paint(other);
        }
      }));
      st.drag = {seg, from: i, to: i, mouse: e.pointerType === "mouse", double: false};
      if (st.drag.mouse) {
        box.focus({preventScroll: true});
        box.setPointerCapture(e.pointerId);
      }
    });
    box.addEventListener("mousedown", (e) => {  // (after pointerdown)
      const d = st.drag;
      if (!d || d.seg !== seg || !d.mouse) return;
      e.preventDefault();  // no native selection; our own is drawn
      // the press's count of clicks: a double click (told here: the first click draws the character pressed anew,
      // and the browser then fires no "dblclick")
      d.double = e.detail === 2;
    });
    box.addEventListener("pointermove", (e) => {
      const d = st.drag;
      if (!d && e.pointerType === "mouse") hover(seg, e.clientX, e.clientY);
      if (!d || d.seg !== seg || !d.mouse) return;
      const i = dragEnd(seg, e.clientX, e.clientY);  // (off the characters: the nearest one)
      if (i === d.to) return;
      d.to = i;
      seg.pending = null;
      seg.anchor = d.from;
      seg.caret = i;
      paint(seg);
    });
    box.addEventListener("pointercancel", () => { st.drag = null; });  // a touch that scrolls the page
    box.addEventListener("pointerleave", () => { seg.hover.hidden = true; });
    box.addEventListener("pointerup", (e) => {
      const d = st.drag;
      st.drag = null;
      if (!d || d.seg !== seg) return;
      if (d.mouse && box.hasPointerCapture(e.pointerId)) box.releasePointerCapture(e.pointerId);
      // a drag that ends off the characters ends at the nearest one; outside the text it always makes the span
      const r = box.getBoundingClientRect(), x = e.clientX, y = e.clientY;
      const end = d.mouse ? dragEnd(seg, x, y) : d.to;
      const out = d.mouse && !(x >= r.left && x <= r.right && y >= r.top && y <= r.bottom);
      if (end !== d.from || out) commit(seg, d.from, end);
      else tap(seg, d.from);
      // a double click on a character: the word around it (the two clicks made it a one-character span: widened)
      if (d.double && d.mouse && seg.twin && seg.spans.includes(seg.twin) && !data.wordLevel) toWord(seg, seg.twin);
      if (d.double) seg.twin = null;
    });
    box.addEventListener("keydown", (e) => key(seg, e));
  }

  // ---- where the characters are: the browser's caret position at a point, Ranges' rectangles ----

  // the shadow roots around the text (caretPositionFromPoint looks only into those it is given)
  function shadowRoots(node) {
    const out = [];
    for (let r = node.getRootNode(); typeof ShadowRoot !== "undefined" && r instanceof ShadowRoot;
      r = r.host.getRootNode()) out.push(r);
    return out;
  }

  // the caret position the browser finds at a point, as k (between units k - 1 and k; the [missing] token's own
  // index on it), or null when it is not in this text (another element is there, or the browser cannot tell)
  function boundaryAt(seg, x, y) {
    let node = null, offset = 0;
    if (document.caretPositionFromPoint) {
      try {
        const p = document.caretPositionFromPoint(x, y, {shadowRoots: shadowRoots(seg.box)});
        if (p) [node, offset] = [p.offsetNode, p.offset];
      } catch (e) { node = null; }
    }
    if (!(node && seg.box.contains(node)) && document.caretRangeFromPoint) {  // (a browser without the former)
      const r = document.caretRangeFromPoint(x, y);
      if (r) [node, offset] = [r.startContainer, r.startOffset];
    }
    if (!node || !seg.box.contains(node)) return null;
    const units = seg.units, runs = seg.runs;
    if (node === seg.box) return offset < runs.length ? runs[offset].a : units.length;
    const own = node.parentNode === seg.box ? node : node.parentNode;  // (a marked stretch's text: its element)
    const run = runs.find((r) => r.node === own);
    if (!run) return null;
    if (units[run.a].missing) return run.a;
    if (node === own && node.nodeType !== Node.TEXT_NODE) return offset ? run.b : run.a;
    const at = units[run.a].start + offset;
    return at >= seg.text.length ? units.length - (data.missingToken ? 1 : 0) : unitIndex(units, at);
  }

  const distance = (r, x, y) => Math.max(0, r.top - y, y - r.bottom) * 1e4 + Math.max(0, r.left - x, x - r.right);
  // a marked stretch's padding and underline below and above its glyphs (spans.css: .evalkit-text .u)
  const pad = (seg) => parseFloat(getComputedStyle(seg.box).fontSize) * 0.2 + 2;

  // the character at a point: of the two around the browser's caret position there, the nearer (where the browser
  // finds none in this text: the nearest of all); with `strict`, null unless the point is on it (or its padding)
  function unitAt(seg, x, y, strict) {
    const n = seg.units.length;
    if (!n) return null;
    const k = boundaryAt(seg, x, y);
    let best = null, bd = Infinity;
    if (k === null) best = nearest(seg, x, y);
    else {
      for (const i of [k - 1, k]) {
        if (i < 0 || i >= n) continue;
        const d = distance(unitRect(seg, i), x, y);
        if (d < bd) [bd, best] = [d, i];
      }
    }
    if (!strict) return best;
    const r = unitRect(seg, best);
    return x >= r.left - 1 && x <= r.right + 1 && y >= r.top - pad(seg) && y <= r.bottom + pad(seg) ? best : null;
  }

  // where a drag ends: the character under the pointer, or off the characters the nearest one; but the [missing]
  // token only when the pointer is on it (an overshoot past the last word is not an omission too)
  function dragEnd(seg, x, y) {
    const on = unitAt(seg, x, y, true);
    if (on !== null) return on;
    const i = unitAt(seg, x, y, false);
    return i !== null && i > 0 && seg.units[i].missing ? i - 1 : i;
  }

  // two rectangles on the same line (they overlap vertically: lines are further apart than glyphs are tall)
  const sameLine = (r, s) => r.top < s.bottom && s.top < r.bottom;

  // the character nearest to a point: the nearest line (lines follow the text's order: a binary search), then the
  // nearest character on it
  function nearest(seg, x, y) {
    const n = seg.units.length;
    let lo = 0, hi = n - 1;
    while (lo < hi) {  // the first character whose line is not above y
      const mid = (lo + hi) >> 1;
      if (unitRect(seg, mid).bottom < y) lo = mid + 1; else hi = mid;
    }
    let line = unitRect(seg, lo);
    if (lo > 0 && y < line.top) {  // between two lines: the nearer
      const above = unitRect(seg, lo - 1);
      if (y - above.bottom < line.top - y) [lo, line] = [lo - 1, above];
    }
    let best = lo, bd = Infinity;
    for (const step of [-1, 1]) {
      for (let i = lo; i >= 0 && i < n; i += step) {
        const r = unitRect(seg, i);
        if (!sameLine(r, line)) break;
        const d = distance(r, x, (line.top + line.bottom) / 2);
        if (d < bd) [bd, best] = [d, i];
      }
    }
    return best;
  }

  // the character under a mouse, tinted (where a click would go; a span has its own hover: spans.css)
  function hover(seg, x, y) {
    const i = unitAt(seg, x, y, true);
    seg.hover.hidden = i === null || !!spanAt(seg, i);
    if (seg.hover.hidden) return;
    const r = unitRect(seg, i), b = seg.block.getBoundingClientRect(), p = seg.units[i].missing ? 0 : pad(seg) - 2;
    Object.assign(seg.hover.style, {left: `${r.left - b.left}px`, top: `${r.top - p - b.top}px`,
      width: `${r.width}px`, height: `${r.height + 2 * p + 2}px`});
  }

  // a click or a tap on character i: opens the span there, or starts (then ends) a new one
  function tap(seg, i) {
    seg.caret = i;
    seg.anchor = null;
    const span = spanAt(seg, i);
    if (seg.pending === null && span && !seg.resize) {
      say(seg, "");
      activate(seg, span);
      announce(describe(seg, span));
      return;
    }
    if (seg.pending === null) {
      seg.pending = i;
      if (st.active && !seg.resize) deactivate(true);  // (the layout stays until the second click)
      say(seg, seg.resize ? (st.touch ? words.resizeTap : words.resize) : st.touch ? words.tapEnd : words.clickEnd);
      paint(seg);
      return;
    }
    const one = seg.pending === i;
    const made = commit(seg, seg.pending, i);
    seg.twin = one && !st.touch ? made : null;  // (a mouse's second click on the same one: a double click?)
  }

  function move(seg, to, extend) {
    const n = seg.units.length;
    to = Math.max(0, Math.min(n - 1, to));
    if (extend && seg.anchor === null) seg.anchor = seg.caret;
    if (!extend) seg.anchor = null;
    seg.caret = to;
    const span = spanAt(seg, to);
    if (span && seg.anchor === null && !seg.resize) {
      if (st.active !== span) activate(seg, span);
      else paint(seg);
    } else {
      if (st.active && !seg.resize) deactivate();
      paint(seg);
    }
    reveal(seg);
    const u = seg.units[to];
    const what = u.space ? words.space : u.text;
    announce(span && seg.anchor === null ? `${what}, ${describe(seg, span)}` : what);
  }

  // the unit on the line above (dir -1) or below (+1), nearest in x
  function vertical(seg, dir) {
    const units = seg.units, cur = unitRect(seg, seg.caret);
    const x = (cur.left + cur.right) / 2;
    let best = null, line = null, dx = Infinity;
    for (let i = seg.caret + dir; i >= 0 && i < units.length; i += dir) {
      const r = unitRect(seg, i);
      if (sameLine(r, cur)) continue;  // (still the caret's line)
      if (line === null) line = r;
      else if (!sameLine(r, line)) break;
      const d = Math.abs((r.left + r.right) / 2 - x);
      if (d < dx) [dx, best] = [d, i];
    }
    return best === null ? (dir > 0 ? units.length - 1 : 0) : best;
  }

  function wordJump(seg, dir) {
    const u = seg.units;
    let i = seg.caret + dir;
    if (dir > 0) {
      while (i < u.length && !u[i].space) i++;
      while (i < u.length && u[i].space) i++;
    } else {
      while (i > 0 && u[i].space) i--;
      while (i > 0 && !u[i - 1].space) i--;
    }
    return i;
  }

  function key(seg, e) {
    if (e.altKey || e.metaKey) return;
    if (!st.kbd) { st.kbd = true; paint(seg); }  // a key pressed: the caret shows again
    const rtl = getComputedStyle(seg.box).direction === "rtl";
    const span = seg.anchor === null ? spanAt(seg, seg.caret) : null;
    const sev = sevs.find((s) => s.key && s.key === e.key);
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    let handled = true;
    if (k === "ArrowLeft" || k === "ArrowRight") {
      const step = (k === "ArrowRight") !== rtl ? 1 : -1;
      move(seg, e.ctrlKey ? wordJump(seg, step) : seg.caret + step, e.shiftKey);
    } else if (k === "ArrowUp" || k === "ArrowDown") {
      move(seg, vertical(seg, k === "ArrowDown" ? 1 : -1), e.shiftKey);
    } else if (k === "Home" || k === "End") {
      move(seg, k === "Home" ? 0 : seg.units.length - 1, e.shiftKey);
    } else if (sev && !e.ctrlKey) {  // a severity key: mark the selection (or the character / word at the caret)
      if (seg.anchor !== null || seg.resize) commit(seg, seg.anchor ?? seg.caret, seg.caret, sev.id);
      else if (span) setSeverity(seg, span, sev.id);
      else commit(seg, seg.caret, seg.caret, sev.id);
    } else if (k === "Enter" || k === " ") {
      if (seg.anchor !== null || seg.resize) commit(seg, seg.anchor ?? seg.caret, seg.caret);
      else if (span) {  // into the toolbox of the span at the caret
        activate(seg, span);
        const first = tools.querySelector("button[aria-pressed=true]") || tools.querySelector("button");
        if (first) first.focus();
      } else tap(seg, seg.caret);
    } else if (k === "Delete" || k === "Backspace") {
      if (span) remove(seg, span);
    } else if (k === "k" && !e.ctrlKey) {
      if (span) keep(seg, span);
    } else if (k === "c" && !e.ctrlKey && cats && span) {
      activate(seg, span);
      const pick = tools.querySelector("[data-testid=evalkit-cat]");
      if (pick) pick.focus();
    } else if (k === "e" && !e.ctrlKey && span) {
      startResize(seg, span);
    } else if (k === "Escape") {
      cancel(seg);
    } else if (k === "Tab") {  // to the next (previous) error of this text; past the last one, out of the text
      const here = seg.units[seg.caret].start;
      const target = e.shiftKey ? [...seg.spans].reverse().find((sp) => sp.start < here && sp !== span)
        : seg.spans.find((sp) => sp.start > here);
      if (target) goTo(seg, target, false);
      else handled = false;
    } else handled = false;
    if (handled) e.preventDefault();
  }

  // ---------------------------------------------------------------------------------------------------------
  // the scales (as the score widget: a slider counts only once moved; Likert levels as radios)

  function scaleBox(scale, k, s) {
    const id = s === null ? `${scale.id}-${k}` : `${scale.id}-${k}-${s}`;
    const box = el("div", {className: `evalkit-scale evalkit-${scale.type}`, "data-scale": id});
    const record = (value) => {  // logged; a run of changes to one scale (a slider moved by keys) is one action
      st.values[id] = value;
      clearMark(id);
      const last = st.actions[st.actions.length - 1];
      const t = Math.round(performance.now() - st.t0);
      if (last && last.action === "score" && last.output === k && last.segment === (s ?? 0) && last.scale === scale.id
        && t - last.t < 2000) Object.assign(last, {t, value});
      else st.actions.push({t, action: "score", output: k, segment: s ?? 0, scale: scale.id, value});
      persist();
    };
    if (scale.type === "slider") {
      const inputId = `${data.qid}-${id}`;
      const head = el("div", {className: "evalkit-slider-head"});
      const number = el("output", {for: inputId, className: "evalkit-slider-value", "aria-live": "polite"});
      head.append(el("label", {for: inputId, className: "evalkit-label"}, scale.label), number);
      const input = el("input", {type: "range", id: inputId, min: scale.min, max: scale.max, step: 1,
        value: Math.floor((scale.min + scale.max) / 2), "data-testid": "evalkit-slider"});
      const status = el("span", {className: "evalkit-slider-status"});
      const ends = el("div", {className: "evalkit-slider-ends"});
      ends.append(el("span", {}, scale.min), status, el("span", {}, scale.max));
      const show = () => {
        const moved = st.values[id] !== undefined;
        box.classList.toggle("evalkit-unmoved", !moved);
        number.textContent = moved ? input.value : "\u00a0";
        status.textContent = moved ? words.scored : words.sliderUnmoved;
        input.setAttribute("aria-valuetext", moved ? input.value : words.sliderUnmoved);
      };
      input.addEventListener("input", () => {
        st.values[id] = Number(input.value);
        clearMark(id);
        show();
        persist();
      });
      // a press on the thumb where it sits (the middle) changes no value, so no "input": it counts as moved too
      // (pointerup: a tap fires no click on a range input; a touch that scrolls the page ends in pointercancel)
      const press = (always) => () => {
        if (always || st.values[id] === undefined) record(Number(input.value));
        show();
      };
      input.addEventListener("pointerup", press(false));
      input.addEventListener("change", press(true));
      st.sync[id] = () => { input.value = st.values[id]; show(); };  // (a value restored after a reload)
      show();
      box.append(head, input, ends);
      st.widgets[id] = input;
    } else {
      const group = el("div", {role: "radiogroup", className: "evalkit-levels", "aria-label": scale.label,
        "data-testid": "evalkit-likert"});
      if (scale.horizontal) group.classList.add("evalkit-levels-row");
      box.append(el("p", {className: "evalkit-label", "aria-hidden": "true"}, scale.label));
      (scale.anchors || []).forEach((anchor, j) => {
        const option = el("label", {className: "evalkit-level"});
        const radio = el("input", {type: "radio", name: `${data.qid}-${id}`, value: j + 1});
        radio.addEventListener("change", () => record(j + 1));
        if (j === 0) st.sync[id] = () => group.querySelectorAll("input").forEach((r) => {
          r.checked = Number(r.value) === st.values[id];
        });
        option.append(radio, el("span", {}, `${j + 1} · ${anchor}`));
        group.append(option);
      });
      box.append(group);
      st.widgets[id] = group;
    }
    const mark = el("div", {className: "evalkit-mark", "data-testid": "evalkit-mark", id: `${data.qid}-mark-${id}`,
      hidden: true});
    st.widgets[id].setAttribute("aria-describedby", mark.id);
    box.append(mark);
    st.marks[id] = mark;
    return box;
  }

  function clearMark(id) {
    const mark = st.marks[id];
    if (mark && !mark.hidden) {
      mark.hidden = true;
      st.widgets[id]?.removeAttribute("aria-invalid");
      resummarize();
    }
  }

  // ---------------------------------------------------------------------------------------------------------
  // "Next": check, ask once, send

  function scoreIds() {
    return data.outputs.flatMap((o, k) => (perSegment ? o.segments.map((_, s) => `-${k}-${s}`) : [`-${k}`])
      .flatMap((tail) => data.scales.map((scale) => `${scale.id}${tail}`)));
  }

  // the outputs with no span whose score (the first scale's; with scorePer "segment" its segments' mean) is below
  // minScoreWithoutSpans (the server's rule, evalkit.tasks.spans.parse_answer, exactly)
  function lowWithoutSpans() {
    const min = data.minScoreWithoutSpans, first = data.scales[0];
    if (min === null || min === undefined || !first) return [];
    return st.outputs.filter((out) => {
      const given = perSegment ? out.segs.map((seg) => st.values[`${first.id}-${out.k}-${seg.s}`])
        : [st.values[`${first.id}-${out.k}`]];
      return !out.segs.some((seg) => seg.spans.length) && given.reduce((a, b) => a + b, 0) / given.length < min;
    });
  }

  // "no errors, yet a low score": one output unnamed; several named by their headings as sent
  function confirmText(low) {
    const names = low.map((out) => out.heading || words.output).join(", ");
    const template = st.outputs.length === 1 ? words.confirm : low.length === 1 ? words.confirmIn : words.confirmMany;
    return fill(template, {output: names, min: data.minScoreWithoutSpans});
  }

  function value(confirmed) {
    const scores = {};
    data.scales.forEach((scale) => {
      scores[scale.id] = data.outputs.map((o, k) => (perSegment
        ? o.segments.map((_, s) => st.values[`${scale.id}-${k}-${s}`]) : st.values[`${scale.id}-${k}`]));
    });
    const spans = st.outputs.map((out) => out.segs.map((seg) => [
      ...seg.spans.map((sp) => {
        const same = sp.orig && ["start", "end", "severity", "category"].every((f) => sp[f] === sp.orig[f]);
        // (a suggestion nobody kept, changed or deleted is "suggested-unreviewed")
        return {start: sp.start, end: sp.end, severity: sp.severity, category: sp.category ?? null,
          origin: sp.suggestion === null ? "added" : !sp.decided ? "suggested-unreviewed"
            : same ? "suggested-kept" : "suggested-changed",
          suggestion: sp.suggestion};
      }),
      ...seg.deleted.map((d) => ({start: d.start, end: d.end, severity: d.severity, category: d.category ?? null,
        origin: "suggested-deleted", suggestion: d.suggestion})),
    ]));
    return {spans, scores, actions: st.actions, confirmedNoSpans: confirmed};
  }

  // what keeps the answer from being sent: scales not given, spans without their category (and the summary's words)
  function problems() {
    const missing = scoreIds().filter((id) => st.values[id] === undefined);
    const noCat = st.outputs.flatMap((out) => out.segs.flatMap((seg) =>
      seg.spans.filter((sp) => !catOk(sp.category)).map((sp) => [seg, sp])));
    const parts = [];
    if (missing.length) parts.push(`${missing.length} ${missing.length === 1 ? "score" : "scores"}`);
    if (noCat.length) parts.push(`${noCat.length} ${noCat.length === 1 ? "category" : "categories"}`);
    return {missing, noCat, text: parts.length ? fill(words.summary, {what: parts.join(", ")}) : ""};
  }

  // the summary of what is missing follows the evaluator's fixes, and goes once everything is given
  function resummarize() {
    if (summary.hidden || !st.missingShown) return;
    summary.textContent = problems().text;
    summary.hidden = !summary.textContent;
  }

  next.addEventListener("click", () => {
    if (st.sent) return;  // a double click sends one answer
    const {missing, noCat, text} = problems();
    missing.forEach((id) => {
      st.marks[id].textContent = words.missingScore;
      st.marks[id].hidden = false;
      st.widgets[id].setAttribute("aria-invalid", "true");
    });
    st.missingShown = !!text;
    if (text) {  // nothing is sent: what is missing is marked where it is
      summary.textContent = text;
      summary.hidden = false;
      if (noCat.length) goTo(noCat[0][0], noCat[0][1], true);
      else {  // keyboard and screen-reader users land on the first missing score
        const w = st.widgets[missing[0]];
        (w.tagName === "INPUT" ? w : w.querySelector("input")).focus({preventScroll: true});
        st.marks[missing[0]].scrollIntoView({block: "center"});
      }
      return;
    }
    const open = allSegs().reduce((n, seg) => n + seg.spans.filter(undecided).length, 0);
    const low = lowWithoutSpans();
    // suggestions nobody reviewed, then "no errors yet a low score": each asked once; a press again sends
    const ask = open && !st.askedOpen ? "open" : low.length && !st.asked ? "low" : null;
    if (ask) {
      st[ask === "open" ? "askedOpen" : "asked"] = true;
      summary.textContent = ask === "low" ? confirmText(low)
        : fill(open === 1 ? words.unreviewedOne : words.unreviewed, {n: open});
      summary.hidden = false;
      return;
    }
    summary.hidden = true;
    st.sent = true;
    next.setAttribute("aria-disabled", "true");
    next.textContent = words.saving;
    send(value(low.length > 0));
    flush(true);  // (kept, marked sent: cleared when the next question comes; a refusal keeps it)
    st.timer = setTimeout(() => reopen(st), 4000);  // the next question replaces this one; if not, resend
  });

  // ---------------------------------------------------------------------------------------------------------
  // unsent work kept across a reload of the page (sessionStorage, per tab): spans with their origins, the
  // suggestions' decisions, the scores and the action log, under data.stateKey and data.qid; restored only onto
  // the same question (its texts' lengths, suggestions and severities: the signature), else ignored
  const sig = JSON.stringify([data.outputs.map((o) => o.segments.map((g) => [g.text.length, g.suggestions || []])),
    sevs.map((v) => v.id), scoreIds()]);
  const allSegs = () => st.outputs.flatMap((out) => out.segs);

  function flush(sent) {
    clearTimeout(st.saveTimer);
    const store = saveKey && storage();
    if (!store) return;
    const spans = allSegs().map((seg) => [seg.spans, seg.deleted.map((d) => d.suggestion)]);
    const saved = {sig, sent: sent === true || st.sent, t: Math.round(performance.now() - st.t0), values: st.values,
      actions: st.actions, spans};
    try {  // (a span's own fields: not its segment, nor the suggestion it was, which DATA holds)
      store.setItem(saveKey, JSON.stringify(saved, (name, v) => (name === "seg" || name === "orig" ? undefined : v)));
    } catch (e) { /* full or refused: not kept */ }
  }
  st.flush = flush;
  st.saveKey = saveKey;

  function persist() {  // (a moment after the last change; at once when the page goes: pagehide)
    if (!saveKey || st.sent) return;
    clearTimeout(st.saveTimer);
    st.saveTimer = setTimeout(() => flush(false), 300);
  }

  function restore() {
    const store = storage();
    if (!saveKey || !store) return;
    const read = (name) => { try { return JSON.parse(store.getItem(name)); } catch (e) { return null; } };
    for (let i = store.length - 1; i >= 0; i--) {  // another question's state, sent: done with
      const name = store.key(i);
      if (name?.startsWith(STORE_PREFIX) && name !== saveKey && (read(name) || {sent: 1}).sent) store.removeItem(name);
    }
    const saved = read(saveKey), segs = allSegs();
    if (!saved || saved.sig !== sig || !Array.isArray(saved.spans) || saved.spans.length !== segs.length) return;
    const orig = (seg, j) => ({...seg.sugs[j], category: seg.sugs[j].category ?? null});
    try {  // (all rebuilt first: a part that does not fit throws, and nothing is restored)
      const rebuilt = segs.map((seg, n) => {
        const [spans, deleted] = saved.spans[n];
        const at = (off) => seg.units.some((u) => u.start === off) || off === seg.units[seg.units.length - 1].end;
        if (!spans.every((sp) => sp.start < sp.end && at(sp.start) && at(sp.end))) throw new Error("offsets");
        return [spans.map((sp) => ({...sp, decided: sp.suggestion === null || sp.decided === true,
          orig: sp.suggestion === null ? null : orig(seg, sp.suggestion)})),
        deleted.map((j) => ({...orig(seg, j), suggestion: j}))];
      });
      segs.forEach((seg, n) => { [seg.spans, seg.deleted] = rebuilt[n]; });
    } catch (e) { return; }
    for (const [id, v] of Object.entries(saved.values || {})) if (st.sync[id] && Number.isFinite(v)) st.values[id] = v;
    st.actions = Array.isArray(saved.actions) ? saved.actions : [];
    st.t0 = performance.now() - (Number.isFinite(saved.t) ? saved.t : 0);
    Object.keys(st.values).forEach((id) => st.sync[id]());
    segs.forEach((seg) => redraw(seg));
  }
  restore();
  window.addEventListener("pagehide", flush);
  return st;
}

function reopen(st) {
  clearTimeout(st.timer);
  st.sent = false;
  st.next.removeAttribute("aria-disabled");
  st.next.textContent = st.words.next;
  st.flush(false);  // (not sent after all: kept as unsent)
}

export default function (component) {
  const {data, parentElement, setTriggerValue} = component;
  if (!data) return;
  let st = parentElement[STATE];
  let refused = false;
  if (!st || st.qid !== data.qid) {  // a new question: a new widget
    if (st) {  // (the old one's timers and listener go with it, and its kept state: the server moved on)
      [st.timer, st.saveTimer].forEach(clearTimeout);
      window.removeEventListener("pagehide", st.flush);
      if (st.saveKey) storage()?.removeItem(st.saveKey);
    }
    st = build(parentElement, data, (value) => setTriggerValue("submit", value));
    parentElement[STATE] = st;
  } else if (data.refused !== st.refused) {  // the server refused the answer sent: "Next" works again
    st.refused = data.refused;
    refused = true;
    reopen(st);
  }
  st.outputs.forEach((out, k) => {  // a check question's lines about one output, under its heading
    out.problems.textContent = ((data.problems || [])[k] || []).join("\n");
    out.problems.hidden = !out.problems.textContent;
  });
  // the server's refusal or practice feedback (lines kept), styled as its warning or error, brought into view
  st.server.textContent = data.serverMessage || "";
  st.server.hidden = !data.serverMessage;
  st.server.classList.toggle("evalkit-error", data.serverKind === "error");
  if (data.serverMessage && refused) requestAnimationFrame(() => st.server.scrollIntoView({block: "center"}));
}
