"""The one text form of a stored time (aware UTC, microseconds, `Z`), shared by every store module."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def format_time(moment: datetime) -> str:
    """The one text form of a stored time: UTC, microseconds, `Z` (2026-03-02T09:00:00.000000Z)."""
    if moment.tzinfo is timezone.utc:
        # The append path: isoformat rather than strftime, same text at a fraction of the cost.
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"
    if moment.tzinfo is None:
        raise ValueError(f"time {moment!r} has no timezone; worldkit stores aware UTC times only")
    utc = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return utc.isoformat(timespec="microseconds") + "Z"


def parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"stored time {text!r} has no timezone")
    return moment.astimezone(timezone.utc)
