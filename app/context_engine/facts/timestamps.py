"""RFC 3339 UTC timestamps as written in fact frontmatter (S3.1)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?"
    r"\s*([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
)


def format_timestamp(dt: datetime) -> str:
    """RFC 3339 in UTC with a ``Z`` suffix and fractional seconds only as needed."""
    if dt.tzinfo is None:
        # A naive value is taken as UTC: the engine only ever builds aware values.
        dt = dt.replace(tzinfo=UTC)
    dt = dt.astimezone(UTC)
    text = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        text += "." + f"{dt.microsecond:06d}".rstrip("0")
    return text + "Z"


# The exact shape our writer produces: parsed by the C ``fromisoformat`` (hot path on open).
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?Z")


def parse_timestamp(text: str) -> datetime | None:
    """Parse an RFC 3339 / ISO 8601 timestamp to aware UTC; ``None`` when unreadable.

    Date-only values read as UTC midnight and a missing offset reads as UTC (legacy files);
    fractions beyond microseconds are truncated (Go writes nanoseconds).
    """
    if _CANONICAL.fullmatch(text):
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            return None
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, frac, offset = match.groups()
    micro = int((frac or "0")[:6].ljust(6, "0"))
    try:
        value = datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            micro,
            tzinfo=UTC,
        )
    except ValueError:
        return None
    if offset and offset not in ("Z", "z"):
        sign = -1 if offset[0] == "-" else 1
        digits = offset[1:].replace(":", "")
        off_h, off_m = int(digits[:2]), int(digits[2:4] or 0)
        if off_h > 23 or off_m > 59:
            return None
        try:
            value -= sign * timedelta(hours=off_h, minutes=off_m)
        except OverflowError:
            return None
    return value
