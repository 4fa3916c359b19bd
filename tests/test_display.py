"""evalkit.display: readable column names and the researcher's local time."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest

from evalkit.display import COLUMN_LABELS, format_clock, readable, resolve_zone, to_local


def test_readable_names_replace_code_names() -> None:
    frame = pd.DataFrame(columns=["needed_total", "longest_same_run", "majority_agreement", "something_new"])
    shown = list(readable(frame).columns)
    assert shown == ["Judgments needed (total)", "Max identical run", "Majority agreement %", "something new"]
    assert not [label for label in COLUMN_LABELS.values() if "_" in label]


@pytest.mark.parametrize(("name", "offset", "label", "hours"), [
    ("Europe/Berlin", None, "Europe/Berlin", 1),       # January: UTC+1
    ("Not/AZone", -120, "UTC+02:00", 2),               # unknown name: the browser's offset (JS sign convention)
    (None, 330, "UTC-05:30", -5.5),
    (None, 0, "UTC", 0),
    (None, None, "UTC", 0),                             # nothing known: UTC, labelled
    ("", "garbage", "UTC", 0),
    (None, 99_999, "UTC", 0),                           # impossible offset
])
def test_resolve_zone(name, offset, label, hours) -> None:
    zone = resolve_zone(name, offset)
    assert zone.label == label
    assert datetime(2026, 1, 1, tzinfo=UTC).astimezone(zone.tz).utcoffset().total_seconds() == hours * 3600


def test_to_local_converts_stored_utc_and_tolerates_bad_values() -> None:
    zone = resolve_zone("America/New_York")
    local = to_local(pd.Series(["2026-07-01T12:00:00.123Z", None, "not a time", "2026-01-01T00:00:00Z"]), zone)
    assert local.iloc[0] == pd.Timestamp("2026-07-01 08:00:00.123", tz="America/New_York")  # EDT, UTC-4
    assert local.isna().tolist() == [False, True, True, False]
    assert local.iloc[3].strftime("%Y-%m-%d %H:%M") == "2025-12-31 19:00"  # EST, UTC-5, the day before
    assert format_clock(datetime(2026, 1, 1, 12, 0, 5, tzinfo=UTC), zone) == "07:00:05"
