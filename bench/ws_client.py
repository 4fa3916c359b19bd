"""A minimal client of Streamlit's websocket protocol that walks an evalkit survey like an evaluator.

It speaks the same protobuf messages as the browser (BackMsg.rerun_script with widget states, ForwardMsg
deltas), so a server can be loaded with dozens of evaluators from one process without dozens of browsers.
Used by bench_concurrency.py and the end-to-end tests.

Like a browser, a click on a widget drawn inside an ``st.fragment`` (every question of the survey) sends the
fragment's id, so the server reruns only that fragment; the client then replaces only what that fragment
drew. ``fragments=False`` sends every click as a whole-page rerun instead (what the survey cost before its
questions were fragments; used by bench_rerun.py for the comparison).

When the app cannot reach its database (its "cannot reach its database" warning) the evaluator reloads the
page, and when a click could not be saved (the screen stays, with a "please try again" message) it clicks
again, as a person would: so a crowd survives a database restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

WIDGETS = ("button", "checkbox", "text_input", "radio", "selectbox", "slider", "text_area")
UNAVAILABLE = "cannot reach its database"  # app.py's warning when a page run could not reach the database


@dataclass
class Widget:
    kind: str
    id: str
    label: str
    proto: Any
    fragment: str = ""  # the id of the fragment that drew it ("" outside any fragment)


@dataclass
class Evaluator:
    """One simulated evaluator; ``latencies`` collects click-to-next-screen times in seconds.

    ``alerts`` keeps the text of every message shown (st.error, st.warning, ...), ``progress`` the progress
    bar's text after every run that showed one, and ``reloads`` counts the reloads after the app could not
    reach its database. ``runs`` counts the script runs the server started, whole-page and fragment-only.
    """

    base_url: str
    name: str
    think: tuple[float, float] = (0.0, 0.0)
    rng: random.Random = field(default_factory=random.Random)
    latencies: list[float] = field(default_factory=list)
    query: str = ""
    page_hash: str = ""
    widgets: list[Widget] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    text_fragments: list[str] = field(default_factory=list)  # the fragment of each of ``texts``
    sticky: dict[str, Any] = field(default_factory=dict)  # values of widgets outside forms, resent every run
    alerts: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    reloads: int = 0
    max_reloads: int = 20
    fragments: bool = True
    runs: dict[str, int] = field(default_factory=lambda: {"page": 0, "fragment": 0})
    ws: Any = None

    # ------------------------------------------------------------------ protocol

    async def _send(self, states: list[Any], fragment: str = "") -> None:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash
        if fragment:
            cs.fragment_id = fragment
        sent = {st.id for st in states}
        for st in [*states, *(v for k, v in self.sticky.items() if k not in sent)]:
            cs.widget_states.widgets.append(st)
        await self.ws.send(msg.SerializeToString())

    async def _settle(self, timeout: float = 60.0) -> None:
        """Read messages until a run finishes successfully (page switches rerun on their own)."""
        deadline = time.monotonic() + timeout
        while True:
            raw = await asyncio.wait_for(self.ws.recv(), max(0.1, deadline - time.monotonic()))
            fm = ForwardMsg()
            fm.ParseFromString(raw)
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                rerun = set(fm.metadata.run.fragment_ids)  # a fragment run replaces only what they drew
                self.runs["fragment" if rerun else "page"] += 1
                kept = [k for k, f in enumerate(self.text_fragments) if rerun and f and f not in rerun]
                self.texts = [self.texts[k] for k in kept]
                self.text_fragments = [self.text_fragments[k] for k in kept]
                self.widgets = [w for w in self.widgets if rerun and w.fragment and w.fragment not in rerun]
                if fm.new_session.page_script_hash:
                    self.page_hash = fm.new_session.page_script_hash
            elif kind == "page_info_changed":
                self.query = fm.page_info_changed.query_string
            elif kind == "navigation":
                if fm.navigation.page_script_hash:
                    self.page_hash = fm.navigation.page_script_hash
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                element = fm.delta.new_element
                etype = element.WhichOneof("type")
                if etype in WIDGETS:
                    proto = getattr(element, etype)
                    self.widgets = [w for w in self.widgets if w.id != proto.id] + [
                        Widget(etype, proto.id, proto.label, proto, fm.delta.fragment_id)]
                elif etype == "bidi_component":  # a custom component (the score widget): its trigger is its value
                    proto = element.bidi_component
                    self.widgets = [w for w in self.widgets if w.id != proto.id] + [
                        Widget(etype, proto.id, proto.component_name, proto, fm.delta.fragment_id)]
                elif etype in ("text", "markdown", "heading", "alert", "code"):
                    self.texts.append(str(getattr(element, etype)))
                    self.text_fragments.append(fm.delta.fragment_id)
                    if etype == "alert":
                        self.alerts.append(element.alert.body)
                elif etype == "progress":
                    self.progress.append(element.progress.text)
            elif kind == "script_finished":
                status = fm.script_finished
                if status in (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
                    return
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise RuntimeError("the app failed to compile")

    async def act(self, states: list[Any], *, measure: bool = True, fragment: str = "") -> None:
        """Send one rerun (a click; inside ``fragment``, if given) and wait for the next screen; record the
        latency."""
        t0 = time.perf_counter()
        await self._send(states, fragment if self.fragments else "")
        await self._settle()
        if measure:
            self.latencies.append(time.perf_counter() - t0)

    # ------------------------------------------------------------------ widgets

    def find(self, kind: str, label: str | None = None) -> Widget | None:
        for w in self.widgets:
            if w.kind == kind and (label is None or w.label == label):
                return w
        return None

    @staticmethod
    def state(widget: Widget, **value: Any) -> Any:
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        ws = WidgetState(id=widget.id)
        for key, v in value.items():
            if key == "double_array_value":
                ws.double_array_value.data.extend(v)
            else:
                setattr(ws, key, v)
        return ws

    @staticmethod
    def trigger(widget: Widget, event: str, value: Any) -> Any:
        """The widget state a browser sends for ``setTriggerValue(event, value)`` in the custom component ``widget``
        (Streamlit's trigger aggregator of the component: a JSON list of events)."""
        import json

        from streamlit.proto.WidgetStates_pb2 import WidgetState
        from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX

        return WidgetState(id=f"{STREAMLIT_INTERNAL_KEY_PREFIX}_{widget.id}__events",
                           json_trigger_value=json.dumps([{"event": event, "value": value}]))

    async def think_time(self) -> None:
        low, high = self.think
        if high > 0:
            await asyncio.sleep(self.rng.uniform(low, high))

    async def click(self, label: str, *others: Any) -> None:
        button = self.find("button", label)
        if button is None:
            raise RuntimeError(f"{self.name}: no button {label!r} on screen; texts: {self.texts[:5]}")
        await self.think_time()
        await self.act([*others, self.state(button, trigger_value=True)], fragment=button.fragment)

    # ------------------------------------------------------------------ the survey

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[Evaluator]:
        """Open the page (a websocket session and its first run) for the duration of the block."""
        ws_url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        async with websockets.connect(ws_url, subprotocols=["streamlit"], max_size=None,
                                      open_timeout=60, ping_interval=None) as ws:
            self.ws = ws
            await self.act([], measure=False)
            yield self

    async def run(self) -> str:
        """Consent, every question, one rating, done. Returns the session token."""
        async with self.connected():
            for _ in range(200):
                if any(UNAVAILABLE in t for t in self.texts):  # reload: the page runs again, from the database
                    self.reloads += 1
                    if self.reloads > self.max_reloads:
                        raise RuntimeError(f"{self.name}: the database stayed unreachable; texts {self.texts[:4]}")
                    await self.act([], measure=False)
                    continue
                agree, name = self.find("checkbox"), self.find("text_input")
                if agree is not None and name is not None and self.find("button", "Start the study"):
                    await self.click("Start the study", self.state(agree, bool_value=True),
                                     self.state(name, string_value=self.name))
                    continue
                if self.find("button", "Begin"):
                    await self.click("Begin")
                    continue
                choice = self.find("radio")
                if self.find("button", "Next") and choice is not None:
                    pick = self.rng.choice(list(choice.proto.options))
                    await self.click("Next", self.state(choice, string_value=pick))
                    continue
                slider = self.find("slider")
                if slider is not None and self.find("button", "Accept: both are suitable"):
                    await self.click("Accept: both are suitable",
                                     self.state(slider, double_array_value=[self.rng.randint(-100, 100)]))
                    continue
                item = self.find("selectbox", "Paper")
                save = self.find("button", "Save and finish")
                if item is not None and save is None:
                    await self.think_time()
                    chosen = self.state(item, string_value=self.rng.choice(list(item.proto.options)))
                    self.sticky[item.id] = chosen
                    await self.act([chosen], fragment=item.fragment)
                    continue
                if save is not None:
                    scores = [self.state(w, string_value=w.proto.options[self.rng.randrange(len(w.proto.options))])
                              for w in self.widgets if w.kind == "radio"]
                    await self.click("Save and finish", *scores)
                    continue
                if any("Thank you" in t for t in self.texts):
                    token = self.query.split("s=")[1].split("&")[0]
                    return token
                raise RuntimeError(f"{self.name}: stuck; widgets {[(w.kind, w.label) for w in self.widgets]}, "
                                   f"texts {self.texts[:4]}")
        raise RuntimeError(f"{self.name}: did not finish")
