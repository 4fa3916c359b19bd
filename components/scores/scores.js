// evalkit's score widget (Streamlit custom component v2, no iframe, no build step, no request).
//
// Draws, for each output of a score question, every scale of the task: a slider (<input type=range>) that
// counts only once moved, Likert levels as radio buttons with their anchors, and the comment / post-edit box
// when the task has one. Everything stays in the browser until "Next": with a score missing it marks each
// missing score under its widget (yellow) and sends nothing; complete, it sends one trigger value,
// {"scores": {scale: [value per output]}, "texts": [...] | null}, which the server validates again and stores
// (pages/tasks/score.py). Every text from the server is set as text (textContent / value), never as HTML.
// A practice or attention question answered wrong comes back with what is wrong with each output (data.problems,
// lines per output, decided on the server): shown under that output's card, at the top of its column.

const STATE = "__evalkitScores";

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

function summaryText(names) {
  // the words of evalkit.tasks.score.missing_summary
  const m = names.length;
  return `${m} ${m === 1 ? "score is" : "scores are"} still missing (${names.join("; ")}): ` +
    `${m === 1 ? "it is" : "they are"} marked above. Nothing has been saved yet.`;
}

function build(root, data, send) {
  const n = data.outputs.length;
  const st = {qid: data.qid, values: {}, moved: {}, marks: {}, widgets: {}, texts: [], problems: [], sent: false};
  // our own node inside the host: the host also holds the style element Streamlit put there, which stays
  // (":scope >" matches nothing when the host is a shadow root, as with isolate_styles: remove by class)
  root.querySelectorAll(".evalkit-scores").forEach((node) => node.remove());
  const form = el("div", {className: "evalkit-scores", "data-testid": "evalkit-scores"});
  form.style.setProperty("--evalkit-n", String(n));
  const grid = el("div", {className: "evalkit-scores-grid"});
  data.outputs.forEach((output, k) => {
    // one group per output, named by its heading (three "Overall quality" sliders are then told apart)
    const column = el("div", {className: "evalkit-scores-output", "data-output": k, role: "group"});
    if (output.heading) {
      const headingId = `${data.qid}-heading-${k}`;
      column.append(el("p", {className: "evalkit-scores-heading", id: headingId}, output.heading));
      column.setAttribute("aria-labelledby", headingId);
    }
    if (output.text) {  // shown on a phone only (the page's cards, side by side, are hidden there): each output's
      // text right above its own scales instead of every card first and every scale two screens further down
      column.append(el("div", {className: "evalkit-card-in", "data-testid": "evalkit-card-in"}, output.text));
    }
    // what the server found wrong with this output (a check question's feedback): right under its card
    const problems = el("div", {className: "evalkit-mark evalkit-problems", "data-testid": "evalkit-problems",
      role: "status", hidden: true});
    column.append(problems);
    st.problems[k] = problems;
    data.scales.forEach((scale) => {
      const id = `${scale.id}-${k}`;
      const box = el("div", {className: `evalkit-scale evalkit-${scale.type}`, "data-scale": id});
      if (scale.type === "slider") {
        const inputId = `${data.qid}-${id}`;
        const head = el("div", {className: "evalkit-slider-head"});
        head.append(el("label", {for: inputId, className: "evalkit-label"}, scale.label));
        const number = el("output", {for: inputId, className: "evalkit-slider-value", "aria-live": "polite"});
        head.append(number);
        const mid = Math.floor((scale.min + scale.max) / 2);
        const input = el("input", {type: "range", id: inputId, min: scale.min, max: scale.max, step: 1,
          value: mid, "data-testid": "evalkit-slider", "aria-valuetext": "not scored yet"});
        const ends = el("div", {className: "evalkit-slider-ends"});
        const status = el("span", {className: "evalkit-slider-status"}, "Not scored yet: move the slider");
        ends.append(el("span", {}, scale.min), status, el("span", {}, scale.max));
        const show = () => {
          const moved = !!st.moved[id];
          box.classList.toggle("evalkit-unmoved", !moved);
          number.textContent = moved ? input.value : "\u00a0";  // hidden until moved; the row keeps its height
          status.textContent = moved ? "Scored" : "Not scored yet: move the slider";
          input.setAttribute("aria-valuetext", moved ? input.value : "not scored yet");
        };
        input.addEventListener("input", () => {
          st.moved[id] = true;
          st.values[id] = Number(input.value);
          clearMark(id);
          show();
        });
        show();
        box.append(head, input, ends);
        st.widgets[id] = input;
      } else {
        const group = el("div", {role: "radiogroup", className: "evalkit-levels",
          "aria-label": scale.label, "data-testid": "evalkit-likert"});
        if (scale.horizontal) group.classList.add("evalkit-levels-row");
        box.append(el("p", {className: "evalkit-label", "aria-hidden": "true"}, scale.label));
        scale.anchors.forEach((anchor, j) => {
          const option = el("label", {className: "evalkit-level"});
          const radio = el("input", {type: "radio", name: `${data.qid}-${id}`, value: j + 1});
          radio.addEventListener("change", () => {
            st.values[id] = j + 1;
            clearMark(id);
          });
          option.append(radio, el("span", {}, `${j + 1} · ${anchor}`));
          group.append(option);
        });
        box.append(group);
        st.widgets[id] = group.querySelector("input");
      }
      // the mark describes its control (read with it), and the control says it is missing while it shows
      const markId = `${data.qid}-mark-${id}`;
      const mark = el("div", {className: "evalkit-mark", "data-testid": "evalkit-mark", id: markId, hidden: true});
      (scale.type === "slider" ? st.widgets[id] : box.querySelector("[role=radiogroup]"))
        .setAttribute("aria-describedby", markId);
      box.append(mark);
      st.marks[id] = mark;
      column.append(box);
    });
    if (data.textfield !== "none") {
      const boxId = `${data.qid}-text-${k}`;
      const wrap = el("div", {className: "evalkit-text"});
      wrap.append(el("label", {for: boxId, className: "evalkit-label"}, output.textLabel));
      if (output.textHelp) wrap.append(el("p", {className: "evalkit-help"}, output.textHelp));
      const area = el("textarea", {id: boxId, rows: 4, maxlength: data.maxChars,
        placeholder: output.placeholder || null, "data-testid": "evalkit-text"});
      area.value = output.prefill || "";
      st.texts[k] = area;
      wrap.append(area);
      column.append(wrap);
    }
    grid.append(column);
  });
  form.append(grid);
  const summary = el("div", {className: "evalkit-mark evalkit-summary", "data-testid": "evalkit-summary",
    role: "alert", hidden: true});
  const next = el("button", {type: "button", className: "evalkit-next", "data-testid": "evalkit-next"}, "Next");
  form.append(summary, next);
  root.append(form);

  function clearMark(id) {
    const mark = st.marks[id];
    if (mark && !mark.hidden) {
      mark.hidden = true;
      mark.textContent = "";
      invalid(id, false);
      const left = Object.values(st.marks).filter((m) => !m.hidden).length;
      if (!left) summary.hidden = true;
    }
  }
  st.clearMark = clearMark;

  function missing() {
    const out = [];
    data.outputs.forEach((_, k) => data.scales.forEach((scale) => {
      const id = `${scale.id}-${k}`;
      if (st.values[id] === undefined) out.push(id);
    }));
    return out;
  }

  function invalid(id, on) {
    const target = st.widgets[id]?.closest("[role=radiogroup]") || st.widgets[id];
    if (on) target?.setAttribute("aria-invalid", "true"); else target?.removeAttribute("aria-invalid");
  }

  function showMarks(ids, texts) {
    ids.forEach((id) => {
      st.marks[id].textContent = texts[id] || data.marks[id];
      st.marks[id].hidden = false;
      invalid(id, true);
    });
    // keyboard and screen-reader users land on the first missing score (the summary says how many: one alert)
    const first = ids.map((id) => st.widgets[id]).find(Boolean);
    if (first) first.focus({preventScroll: true});
  }
  st.showMarks = showMarks;
  st.summary = summary;

  function showProblems(lines) {  // one line each, per output (set as text; "" hides the box)
    st.problems.forEach((box, k) => {
      box.textContent = (lines[k] || []).join("\n");
      box.hidden = !box.textContent;
    });
  }
  st.showProblems = showProblems;

  next.addEventListener("click", () => {
    if (st.sent) return;  // a double click sends one answer (and the server stores one)
    const absent = missing();
    if (absent.length) {  // nothing is sent: each missing score is marked under its widget
      showMarks(absent, {});
      summary.textContent = summaryText(absent.map((id) => data.names[id]));
      summary.hidden = false;
      revealFirstMark(root);
      return;
    }
    const scores = {};
    data.scales.forEach((scale) => {
      scores[scale.id] = data.outputs.map((_, k) => st.values[`${scale.id}-${k}`]);
    });
    const texts = data.textfield === "none" ? null : st.texts.map((area) => area.value);
    st.sent = true;  // (aria-disabled, not disabled: the button keeps the keyboard's focus while it saves)
    next.setAttribute("aria-disabled", "true");
    next.textContent = "Saving…";
    send({scores, texts});
    // the next question replaces this one; if the server answers with this one again (refused), it can be resent
    st.timer = setTimeout(() => {
      st.sent = false;
      next.removeAttribute("aria-disabled");
      next.textContent = "Next";
    }, 4000);
  });
  return st;
}

function revealFirstMark(root) {
  const first = root.querySelector(".evalkit-mark:not([hidden])");
  if (!first) return;
  const header = document.querySelector("[data-testid=stHeader]");
  const top = header ? header.getBoundingClientRect().bottom : 0;
  const box = first.getBoundingClientRect();
  if (box.top < top || box.bottom > window.innerHeight) first.scrollIntoView({block: "center"});
}

export default function (component) {
  const {data, parentElement, setTriggerValue} = component;
  if (!data) return;
  let st = parentElement[STATE];
  const fresh = !st || st.qid !== data.qid;
  if (fresh) {
    st = build(parentElement, data, (value) => setTriggerValue("submit", value));
    parentElement[STATE] = st;
  }
  if (!fresh && data.refused === st.refused) return;  // the same question drawn again: keep what was given
  st.refused = data.refused;
  st.showProblems(data.problems || []);
  if (!fresh) {  // the server refused a sent answer (data.refused counts refusals): it can be sent again
    clearTimeout(st.timer);
    st.sent = false;
    const next = parentElement.querySelector(".evalkit-next");
    next.removeAttribute("aria-disabled");
    next.textContent = "Next";
    if (!Object.keys(data.serverMarks || {}).length) next.focus({preventScroll: true});  // (its message is above)
  }
  // what the server found missing in a refused answer: marked under the widgets, as the browser's own marks
  const ids = Object.keys(data.serverMarks || {});
  if (ids.length) {
    st.showMarks(ids, data.serverMarks);
    revealFirstMark(parentElement);
  }
}
