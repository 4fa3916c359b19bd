"""What is missing when a button cannot act yet (issue 13, section 5: "never a silent no-op").

The screens outside the task kinds (the consent page, the results page's login and its confirmed actions) ask
here what stops a click; each message names the widget by its label, and the page draws it next to that widget.
The task kinds decide their own (``evalkit.tasks.<kind>``: the record functions' ``SurveyError`` and the
per-widget helpers such as ``score.missing_mark`` or ``rank.place_problems``). Nothing here imports Streamlit.

Floor: core (``.importlinter``). Imports nothing from evalkit.
"""

from __future__ import annotations

__all__ = ["AGREE_LABEL", "AGREE_LABEL_NO_TEXT", "NAME_LABEL", "agree_label", "confirm_problem", "consent_problems",
           "either", "login_problem"]

#: The consent page's two widgets, named by the messages below.
AGREE_LABEL = "I have read the information above and I agree to take part."
#: ... the box of a study without a consent text (``[study] consent``): there is no information above to confirm
AGREE_LABEL_NO_TEXT = "I agree to take part in this study."
NAME_LABEL = "Your name"


def agree_label(has_consent_text: bool) -> str:
    """The consent box's label: it confirms "the information above" only when the study has a consent text."""
    return AGREE_LABEL if has_consent_text else AGREE_LABEL_NO_TEXT


def either(names: list[str] | tuple[str, ...]) -> str:
    """ "A", "A or B", "A, B or C": the options a message offers."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def consent_problems(agreed: bool, name: str | None, name_required: bool) -> dict[str, str]:
    """What stops "Start the study": ``{"agree": ..., "name": ...}``, each message for the widget it names
    (empty when the session may start). The name counts once stripped of spaces."""
    problems: dict[str, str] = {}
    if not agreed:
        problems["agree"] = "Please tick the box “I agree to take part” above to start the study."
    if name_required and not (name or "").strip():
        problems["name"] = f"Please enter your name in “{NAME_LABEL}” to start the study."
    return problems


def login_problem(entered: str | None) -> str | None:
    """Why "Unlock" cannot try the results password: an empty box (not counted as a guess)."""
    if not (entered or "").strip():
        return "Please type the password in “Password” first: the box was empty, so nothing was checked."
    return None


def confirm_problem(confirmed: bool, checkbox: str, action: str) -> str | None:
    """Why a confirmed action (ending the study, deleting a session) did not run: its checkbox is not ticked."""
    if confirmed:
        return None
    return f"Nothing was done: tick “{checkbox}” first, then click “{action}” again."
