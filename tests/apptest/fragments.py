"""Fragment reruns in AppTest, as a browser asks for them.

AppTest (Streamlit 1.67) always asks for a full run: ``at.button[0].click().run()`` reruns the whole app, also
for a widget inside an ``st.fragment``. A browser instead sends the fragment's id with the click, and the
server then runs only that fragment (after the widgets' callbacks). :func:`fragment_run` does what the browser
does: the same run, with the fragment's id in the rerun request (``RerunData.fragment_id_queue``, the field
the server fills from the browser's ``fragment_id``).

After such a run ``at`` holds only the elements the fragment sent (a browser keeps the rest of the page).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from streamlit.testing.v1 import AppTest, local_script_runner


def fragment_ids(at: AppTest) -> list[str]:
    """Ids of the fragments the last runs registered (AppTest keeps its fragment storage between runs)."""
    return list(at._fragment_storage._fragments)  # no public accessor in 1.67


@contextmanager
def fragment_reruns(at: AppTest) -> Iterator[None]:
    """Inside the block, every run of ``at`` reruns only its one fragment (the question), as a click inside it
    does in a browser; runs that the fragment itself starts (``st.rerun(scope="app")``, ``st.switch_page``)
    are full runs, as on a server."""
    [fragment] = fragment_ids(at)
    real = local_script_runner.RerunData

    def rerun_data(**kwargs: object) -> object:
        return real(**kwargs, fragment_id_queue=[fragment])  # type: ignore[arg-type]

    with mock.patch.object(local_script_runner, "RerunData", rerun_data):
        yield


def fragment_run(at: AppTest) -> AppTest:
    """Run ``at`` as a browser does after a click inside its fragment (set the widget's value first, e.g.
    ``button.click()`` or ``radio.set_value("A")``)."""
    with fragment_reruns(at):
        return at.run()
