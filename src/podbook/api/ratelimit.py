"""``RateLimit`` / ``RateLimit-Policy`` headers (HTTP structured-field lists), and ``Retry-After``.

``RateLimit: "minute";r=0;t=12, "hour";r=2800;t=1812`` gives, per window, the remaining
requests ``r`` and seconds until reset ``t``; ``RateLimit-Policy: "minute";q=60;w=60, ...``
the quota ``q`` and window length ``w``. Parsing garbage raises ``ValueError`` and nothing else.
The emulator formats these headers with the same module.
"""

from __future__ import annotations

import email.utils
import functools
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import http_sf

__all__ = [
    "RateLimitWindow",
    "RateLimitState",
    "parse_ratelimit",
    "parse_ratelimit_policy",
    "parse_rate_limit_headers",
    "format_ratelimit",
    "format_ratelimit_policy",
    "parse_retry_after",
]


@dataclass(frozen=True)
class RateLimitWindow:
    """One window (``minute``, ``hour``, ``day``...): live state and policy, when known."""

    name: str
    remaining: int | None = None
    reset: int | None = None
    quota: int | None = None
    window: int | None = None

    @property
    def fraction_remaining(self) -> float | None:
        """``remaining / quota`` in 0..1, or ``None`` when either is unknown."""
        if self.remaining is None or not self.quota:
            return None
        return max(0.0, min(1.0, self.remaining / self.quota))


@dataclass(frozen=True)
class RateLimitState:
    """Every window of a response, live state merged with policy by window name."""

    windows: tuple[RateLimitWindow, ...] = ()

    def get(self, name: str) -> RateLimitWindow | None:
        """The window called ``name``, if present."""
        return next((window for window in self.windows if window.name == name), None)

    def lowest_fraction_remaining(self) -> float | None:
        """The smallest ``remaining / quota`` over all windows (``None`` if none is known).

        A refresher polls more slowly as this approaches 0.
        """
        fractions = [w.fraction_remaining for w in self.windows]
        known = [fraction for fraction in fractions if fraction is not None]
        return min(known) if known else None

    def seconds_until_available(self) -> int:
        """Seconds until every exhausted window (``remaining == 0``) resets; 0 when none is."""
        waits = [w.reset or 0 for w in self.windows if w.remaining == 0]
        return max(waits, default=0)


# The common shape of these headers (names and non-negative integer parameters only) is read
# with one regular expression: http_sf's general parser costs about 100 µs per header, paid on
# every response. Anything else goes through http_sf, so both paths accept exactly the
# structured-field grammar (a test checks they agree).
_SF_NAME = (
    r'"[\x20\x21\x23-\x2b\x2d-\x3a\x3c\x3e-\x5b\x5d-\x7e]*"'
    r"|[A-Za-z*][A-Za-z0-9!#$%&'*+\-.^_`|~:/]*"
)
_SF_PARAM = r";[ ]*[a-z*][a-z0-9_\-.*]*=[0-9]{1,15}"
_SF_MEMBER = rf"(?:{_SF_NAME})(?:{_SF_PARAM})+"
_SIMPLE_LIST = re.compile(rf"[ ]*{_SF_MEMBER}(?:[ \t]*,[ \t]*{_SF_MEMBER})*[ ]*")
_PARAM = re.compile(r";[ ]*([a-z*][a-z0-9_\-.*]*)=([0-9]+)")


def _simple_members(text: str) -> list[tuple[str, dict[str, int]]] | None:
    """The members of a header in the common shape, or ``None`` when it is not in it."""
    if not _SIMPLE_LIST.fullmatch(text):
        return None
    members = []
    for part in text.split(","):
        part = part.strip(" \t")
        cut = part.index(";")
        name = part[:cut]
        params = {key: int(number) for key, number in _PARAM.findall(part, cut)}
        members.append((name[1:-1] if name.startswith('"') else name, params))
    return members


def _decode(value: str | bytes, header: str) -> list[Any]:
    try:
        text = value if isinstance(value, str) else bytes(value).decode("ascii")
        simple = _simple_members(text)
        if simple is not None:
            return simple  # type: ignore[return-value]
        parsed = http_sf.parse(text.encode("ascii"), tltype="list")
    except Exception as exc:  # http_sf may raise several kinds; callers get one
        raise ValueError(f"{header} header is not a structured-field list: {exc}") from None
    if not isinstance(parsed, list):
        raise ValueError(f"{header} header is not a structured-field list")
    return parsed


@functools.lru_cache(maxsize=256)
def _cached_members(
    value: str | bytes, header: str, required: str, optional: str
) -> tuple[tuple[str, tuple[int, int | None]], ...]:
    result: dict[str, tuple[int, int | None]] = {}
    for member in _decode(value, header):
        if not (isinstance(member, tuple) and len(member) == 2):
            raise ValueError(f"{header} header has a malformed member")
        name, params = member
        if not isinstance(name, (str, http_sf.Token)):
            raise ValueError(f"{header} header member name must be a string or token")
        numbers: dict[str, int | None] = {}
        for key in (required, optional):
            number = params.get(key) if isinstance(params, Mapping) else None
            if number is not None and (type(number) is not int or number < 0):
                raise ValueError(f"{header} window {str(name)!r}: {key} must be an integer >= 0")
            numbers[key] = number
        if numbers[required] is None:
            raise ValueError(f"{header} window {str(name)!r} has no {required} parameter")
        result[str(name)] = (numbers[required], numbers[optional])  # type: ignore[assignment]
    return tuple(result.items())


def _members(
    value: str | bytes, header: str, required: str, optional: str
) -> dict[str, tuple[int, int | None]]:
    if isinstance(value, (bytearray, memoryview)):
        value = bytes(value)
    return dict(_cached_members(value, header, required, optional))


def parse_ratelimit(value: str | bytes) -> dict[str, tuple[int, int | None]]:
    """``RateLimit`` → ``{window: (remaining r, reset t)}``. Raises ``ValueError``."""
    return _members(value, "RateLimit", "r", "t")


def parse_ratelimit_policy(value: str | bytes) -> dict[str, tuple[int, int | None]]:
    """``RateLimit-Policy`` → ``{window: (quota q, window length w)}``. Raises ``ValueError``."""
    return _members(value, "RateLimit-Policy", "q", "w")


def parse_rate_limit_headers(
    ratelimit: str | bytes | None, policy: str | bytes | None
) -> RateLimitState | None:
    """Merge both headers into a :class:`RateLimitState`; ``None`` when both are absent
    (a rate-limit-exempt caller). Raises ``ValueError`` for a malformed header."""
    if ratelimit is None and policy is None:
        return None
    live = parse_ratelimit(ratelimit) if ratelimit is not None else {}
    quotas = parse_ratelimit_policy(policy) if policy is not None else {}
    names = list(dict.fromkeys([*live, *quotas]))
    windows = tuple(
        RateLimitWindow(
            name=name,
            remaining=live[name][0] if name in live else None,
            reset=live[name][1] if name in live else None,
            quota=quotas[name][0] if name in quotas else None,
            window=quotas[name][1] if name in quotas else None,
        )
        for name in names
    )
    return RateLimitState(windows)


def _format(items: Iterable[tuple[str, int, int]], first: str, second: str) -> str:
    members = []
    for name, a, b in items:
        if not isinstance(name, str):
            raise ValueError(f"window name {name!r} must be a string")
        if type(a) is not int or type(b) is not int or a < 0 or b < 0:
            raise ValueError(f"window {name!r}: {first} and {second} must be integers >= 0")
        members.append((name, {first: a, second: b}))
    return http_sf.ser(members) if members else ""


def format_ratelimit(windows: Iterable[tuple[str, int, int]]) -> str:
    """``[(name, remaining, reset_seconds), ...]`` → a ``RateLimit`` header value
    (``""`` for no windows: omit the header then)."""
    return _format(windows, "r", "t")


def format_ratelimit_policy(windows: Iterable[tuple[str, int, int]]) -> str:
    """``[(name, quota, window_seconds), ...]`` → a ``RateLimit-Policy`` header value."""
    return _format(windows, "q", "w")


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: an integer, or an HTTP date turned into a delay."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
