"""The score widget (a Streamlit custom component v2) in AppTest, which runs no JavaScript.

AppTest (Streamlit 1.67) parses a component as an unknown element and sends no value for it. What a browser
sends when the widget's "Next" is pressed is one widget state: the component's trigger aggregator
(``$$STREAMLIT_INTERNAL_KEY_<element id>__events``, a JSON list of ``{"event", "value"}``), as Streamlit's
frontend sends it (``streamlit/components/v2/bidi_component``). :func:`send_trigger` adds that state to the page's other
widget states and runs the question's fragment, as a browser does after the click.
"""

from __future__ import annotations

import json
from typing import Any

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX
from streamlit.testing.v1 import AppTest

from tests.apptest.fragments import fragment_reruns


def components(at: AppTest) -> list[Any]:
    """The custom components of the last run (unknown elements of type ``bidi_component``), in page order."""
    found: list[Any] = []

    def walk(node: Any) -> None:
        if getattr(node, "type", None) == "bidi_component":
            found.append(node)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def component(at: AppTest, key: str) -> Any:
    """The component drawn with ``key``."""
    [found] = [c for c in components(at) if c.proto.id.endswith(f"-{key}")]
    return found


def component_data(at: AppTest, key: str) -> dict[str, Any]:
    """The ``data`` the server sent to the component ``key`` (JSON)."""
    return json.loads(component(at, key).proto.json)


def trigger_state(element_id: str, event: str, value: Any) -> WidgetState:
    """The widget state a browser sends for ``setTriggerValue(event, value)`` of the component ``element_id``."""
    return WidgetState(id=f"{STREAMLIT_INTERNAL_KEY_PREFIX}_{element_id}__events",
                       json_trigger_value=json.dumps([{"event": event, "value": value}]))


def send_trigger(at: AppTest, key: str, event: str, value: Any, *, element_id: str | None = None,
                 fragment: bool = True) -> AppTest:
    """Run ``at`` as after ``setTriggerValue(event, value)`` in the component ``key`` (or the element
    ``element_id``, e.g. one drawn by an earlier run: a resend), rerunning only the question's fragment."""
    states = at._tree.get_widget_states()
    states.widgets.append(trigger_state(element_id or component(at, key).proto.id, event, value))
    if not fragment:
        return at._run(states)
    with fragment_reruns(at):
        return at._run(states)
