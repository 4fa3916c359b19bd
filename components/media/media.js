// evalkit's media player (Streamlit custom component v2, no iframe, no build step): one audio clip or video of a
// question, played by the browser's own <audio> / <video> controls, whose play, pause, seek and end are logged.
//
// data: {clip, type: "audio" | "video", src (a Streamlit media URL of a file in the study's media folder, or a
// remote http(s) URL the study allows), alt, label}. Each logged event is {action: "play" | "pause" | "seek" |
// "ended", t: ms since the player was first shown, at: the clip's time in seconds}; the whole log (at most 200
// entries, the newest) is the component's state "events": inside a form it goes with the form's submit, elsewhere
// it is sent at once. The server checks it again (evalkit/tasks/media_log.py) and decides whether a clip was played
// to the end. Every text from the server is set as text (textContent / attributes), never as HTML.

const STATE = "__evalkitMedia";
const MAX_EVENTS = 200;

function build(root, data, send) {
  root.querySelectorAll(".evalkit-media").forEach((node) => node.remove());
  const st = {clip: data.clip, src: data.src, events: [], shown: performance.now()};
  const box = document.createElement("figure");
  box.className = "evalkit-media";
  box.setAttribute("data-testid", "evalkit-media");
  const player = document.createElement(data.type === "video" ? "video" : "audio");
  player.controls = true;
  player.preload = "metadata";
  player.setAttribute("playsinline", "");
  player.setAttribute("data-testid", `evalkit-${data.type === "video" ? "video" : "audio"}`);
  if (data.label || data.alt) player.setAttribute("aria-label", [data.label, data.alt].filter(Boolean).join(": "));
  player.src = data.src;
  box.append(player);
  if (data.alt) {
    const caption = document.createElement("figcaption");
    caption.className = "evalkit-media-alt";
    caption.textContent = data.alt;
    box.append(caption);
  }
  const note = document.createElement("p");
  note.className = "evalkit-media-note";
  note.setAttribute("data-testid", "evalkit-media-note");
  note.setAttribute("aria-live", "polite");
  note.hidden = true;
  note.textContent = "Played to the end.";
  box.append(note);
  root.append(box);

  function log(action) {
    const at = Number.isFinite(player.currentTime) ? Math.round(player.currentTime * 1000) / 1000 : 0;
    st.events.push({action, t: Math.max(0, Math.round(performance.now() - st.shown)), at});
    if (st.events.length > MAX_EVENTS) st.events = st.events.slice(-MAX_EVENTS);
    if (action === "ended") note.hidden = false;
    send(st.events.slice());
  }
  player.addEventListener("play", () => log("play"));
  // (a pause at the very end comes with "ended": that one is not logged twice)
  player.addEventListener("pause", () => { if (!player.ended) log("pause"); });
  player.addEventListener("seeked", () => log("seek"));
  player.addEventListener("ended", () => log("ended"));
  st.player = player;
  return st;
}

export default function (component) {
  const {data, parentElement, setStateValue} = component;
  if (!data) return;
  const st = parentElement[STATE];
  if (st && st.clip === data.clip && st.src === data.src) return;  // drawn again (a rerun): keep it playing
  parentElement[STATE] = build(parentElement, data, (events) => setStateValue("events", events));
}
