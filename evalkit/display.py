"""Presentation helpers of the results page (no Streamlit): readable column names and local times.

Stored times stay ISO 8601 UTC; only what the page shows is converted, to the researcher's time zone.

Floor: core (``.importlinter``). Imports nothing from evalkit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

__all__ = ["COLUMN_LABELS", "TIME_FORMAT", "Zone", "format_clock", "readable", "resolve_zone", "to_local"]

#: Table column names as the page shows them: one place for every table of the results page.
COLUMN_LABELS: dict[str, str] = {
    "checks_passed": "Attention checks passed",
    "checks_failed": "Attention checks failed",
    "tutorial_first_try": "Practice right first time",
    "checks_result": "Checks",
    "session": "Session",
    "evaluator_name": "Evaluator",
    "external_id": "External id",
    "status": "Status",
    "started_at": "Started",
    "completed_at": "Completed",
    "completed": "Finished",
    "ended_by": "Ended by limit",
    "outcome": "Outcome",
    "answers": "Answers",
    "total_time_s": "Total (s)",
    "median_time_s": "Median (s)",
    "fast_answers": "Fast answers",
    "longest_same_run": "Max identical run",
    "majority_agreement": "Majority agreement %",
    "source": "Source",
    "role": "Role",
    "picked": "Picked",
    "n": "n",
    "rate": "Rate %",
    "rate %": "Rate %",
    "domain": "Domain",
    "pair": "Pair",
    "wins": "Wins",
    "ties": "Ties",
    "favoured": "Favoured",
    "mean": "Mean",
    "sd": "SD",
    "positive_draws": "Positive draws",
    "negative_draws": "Negative draws",
    "needed_total": "Judgments needed (total)",
    "further": "Still needed",
    "h": "Cohen's h",
    "log_strength": "Log-strength",
    "label": "Metric",
    "weighted_mean": "Familiarity-weighted mean",
    "alpha": "Krippendorff's alpha",
    "items": "Items",
    "raters": "Raters",
    "system": "System",
    "scale": "Scale",
    "losses": "Losses",
    "comparisons": "Comparisons",
    "shown": "Shown",
    "measure": "Human measure",
    "metric": "Automatic metric",
    "method": "Method",
    "level": "Level",
    "units": "Units",
    "correct": "Correct",
    "versus": "Against",
    "what": "Rate",
    "confidence": "Confidence",
    "at": "Time",
    "actor": "Who",
    "action": "Action",
    "detail": "Detail",
}

#: How the page's tables show a time (Streamlit's DatetimeColumn format, moment.js tokens).
TIME_FORMAT = "D MMM YYYY, HH:mm"


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with readable column names (``COLUMN_LABELS``); unknown names are kept, underscores spaced."""
    return frame.rename(columns=lambda c: COLUMN_LABELS.get(str(c), str(c).replace("_", " ")))


@dataclass(frozen=True)
class Zone:
    """The time zone the page shows times in, and its label (e.g. ``Europe/Berlin``, ``UTC+02:00``, ``UTC``)."""

    tz: tzinfo
    label: str


def resolve_zone(name: str | None, offset_minutes: int | float | None = None) -> Zone:
    """The browser's time zone: its IANA ``name`` if known, else its offset (JavaScript's ``getTimezoneOffset``
    convention: minutes to add to local time to get UTC, so UTC+2 is -120), else UTC."""
    if name:
        try:
            return Zone(ZoneInfo(str(name)), str(name))
        except (ZoneInfoNotFoundError, ValueError):
            pass
    if offset_minutes is not None:
        try:
            minutes = -int(offset_minutes)
            if abs(minutes) < 24 * 60:
                if minutes == 0:
                    return Zone(UTC, "UTC")
                sign, m = ("+" if minutes > 0 else "-"), abs(minutes)
                return Zone(timezone(timedelta(minutes=minutes)), f"UTC{sign}{m // 60:02d}:{m % 60:02d}")
        except (TypeError, ValueError, OverflowError):
            pass
    return Zone(UTC, "UTC")


def to_local(values: pd.Series | list, zone: Zone) -> pd.Series:
    """Stored ISO 8601 UTC strings (or datetimes) as timezone-aware datetimes in ``zone``; missing or
    unparseable values become ``NaT``."""
    series = values if isinstance(values, pd.Series) else pd.Series(values, dtype=object)
    parsed = pd.to_datetime(series, utc=True, errors="coerce", format="ISO8601")
    return parsed.dt.tz_convert(zone.tz)


def format_clock(moment: datetime, zone: Zone) -> str:
    """A wall-clock time in ``zone``, for short notes such as "Updated 14:03:07"."""
    return moment.astimezone(zone.tz).strftime("%H:%M:%S")
