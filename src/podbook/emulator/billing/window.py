"""The billing query window: parsing, bucket alignment, and the buckets themselves.

As the reference says: ``startTime`` defaults to 30 days ago and is snapped down to the start
of its bucket; ``endTime`` (exclusive) defaults to now and is snapped up to the end of the
bucket it lands in unless already on a boundary; ``lastN`` gives the last N buckets ending
with the current (in-progress) one and excludes ``startTime``/``endTime``. Buckets are UTC;
weeks start on Monday, months on the 1st, years on January 1st.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from podbook.emulator.problems import Problem

BUCKET_SIZES = ("hour", "day", "week", "month", "year")
MAX_BUCKETS = 10_000
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class Window:
    """A resolved, aligned window ``[start, end)`` and its bucket size."""

    start: datetime
    end: datetime
    bucket_size: str

    def buckets(self) -> list[tuple[datetime, datetime]]:
        """The buckets of the window, in order."""
        out: list[tuple[datetime, datetime]] = []
        at = self.start
        while at < self.end:
            nxt = step(at, self.bucket_size, 1)
            out.append((at, nxt))
            at = nxt
        return out


def floor(moment: datetime, size: str) -> datetime:
    """The start of the bucket ``moment`` lies in."""
    moment = moment.astimezone(timezone.utc)
    if size == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if size == "day":
        return day
    if size == "week":
        return day - timedelta(days=day.weekday())
    if size == "month":
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def step(moment: datetime, size: str, count: int) -> datetime:
    """``moment`` (a bucket start) moved by ``count`` buckets (may be negative)."""
    if size == "hour":
        return moment + timedelta(hours=count)
    if size == "day":
        return moment + timedelta(days=count)
    if size == "week":
        return moment + timedelta(weeks=count)
    months = moment.month - 1 + (count if size == "month" else 12 * count)
    return moment.replace(year=moment.year + months // 12, month=months % 12 + 1)


def ceil(moment: datetime, size: str) -> datetime:
    """``moment`` if on a bucket boundary, else the end of its bucket."""
    start = floor(moment, size)
    return start if start == moment else step(start, size, 1)


def _invalid(name: str, message: str) -> Problem:
    return Problem(422, f"query parameter {name} {message}", errors=[f"{name}: {message}"])


def parse_time(name: str, raw: str) -> datetime:
    """An RFC 3339 timestamp (422 otherwise); a time without offset is refused."""
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise _invalid(name, "must be an RFC 3339 time with offset, e.g. 2026-06-01T00:00:00Z")
    return moment.astimezone(timezone.utc)


def resolve(params: dict[str, str], now: float) -> Window:
    """The aligned window of a query (400 for lastN with start/end, 422 for bad values)."""
    size = params.get("bucketSize", "day")
    if size not in BUCKET_SIZES:
        raise _invalid("bucketSize", f"has unknown value {size!r}; use {', '.join(BUCKET_SIZES)}")
    current = datetime.fromtimestamp(now, tz=timezone.utc)
    if "lastN" in params:
        sent = [name for name in ("startTime", "endTime") if name in params]
        if sent:
            raise Problem(
                400,
                f"lastN and {' and '.join(sent)} exclude each other; send lastN alone or "
                "startTime/endTime without lastN",
                errors=[f"lastN: not allowed with {', '.join(sent)}"],
            )
        raw = params["lastN"]
        if not raw.isdigit() or int(raw) < 1:
            raise _invalid("lastN", "must be an integer of 1 or more")
        count = int(raw)
        if count > MAX_BUCKETS:
            raise _invalid("lastN", f"must be at most {MAX_BUCKETS}")
        end = step(floor(current, size), size, 1)
        return Window(step(end, size, -count), end, size)
    start_raw = params.get("startTime")
    end_raw = params.get("endTime")
    start = (
        current - timedelta(DEFAULT_DAYS)
        if start_raw is None
        else parse_time("startTime", start_raw)
    )
    end = current if end_raw is None else parse_time("endTime", end_raw)
    window = Window(floor(start, size), ceil(end, size), size)
    if window.start >= window.end:
        raise Problem(
            400,
            "startTime must be before endTime; send an earlier startTime or a later endTime",
            errors=["startTime: not before endTime"],
        )
    if len(window.buckets()) > MAX_BUCKETS:
        raise Problem(
            400,
            f"the window holds more than {MAX_BUCKETS} {size} buckets; use a larger bucketSize "
            "or a shorter window",
        )
    return window


def iso(moment: datetime) -> str:
    """``2026-06-01T00:00:00Z`` (the year always four digits: ``0261-01-01T00:00:00Z``)."""
    return moment.astimezone(timezone.utc).replace(tzinfo=None).isoformat("T", "seconds") + "Z"
