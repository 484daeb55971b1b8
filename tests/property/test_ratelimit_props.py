"""Property tests for the ``RateLimit`` / ``RateLimit-Policy`` structured-field headers.

Beyond the per-header round trip of ``tests/api/test_api_ratelimit.py``: both headers merged
into one state and read back window by window; hostile structured-field text built from
the grammar's own pieces; the client's header reader, which never raises (``None`` for
anything unreadable); and the formatters, which refuse bad input with ``ValueError`` only.
"""

from __future__ import annotations

import httpx
from hypothesis import example, given, settings
from hypothesis import strategies as st

from podbook.api.ratelimit import (
    RateLimitState,
    format_ratelimit,
    format_ratelimit_policy,
    parse_rate_limit_headers,
    parse_ratelimit,
    parse_ratelimit_policy,
)
from podbook.client._core import parse_rate_limit_headers as client_parse

NAMES = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=10)
COUNTS = st.integers(min_value=0, max_value=999_999_999_999_999)
WINDOWS = st.lists(st.tuples(NAMES, COUNTS, COUNTS), max_size=4, unique_by=lambda w: w[0])


@given(live=WINDOWS, policy=WINDOWS)
def test_both_headers_merge_into_one_state_window_by_window(live, policy) -> None:
    state = parse_rate_limit_headers(
        format_ratelimit(live) if live else None,
        format_ratelimit_policy(policy) if policy else None,
    )
    if not live and not policy:
        assert state is None
        return
    assert isinstance(state, RateLimitState)
    by_live = {n: (r, t) for n, r, t in live}
    by_policy = {n: (q, w) for n, q, w in policy}
    assert [w.name for w in state.windows] == list(dict.fromkeys([*by_live, *by_policy]))
    for window in state.windows:
        assert (window.remaining, window.reset) == by_live.get(window.name, (None, None))
        assert (window.quota, window.window) == by_policy.get(window.name, (None, None))
        fraction = window.fraction_remaining
        assert fraction is None or 0.0 <= fraction <= 1.0
    exhausted = [t for _, r, t in live if r == 0]
    assert state.seconds_until_available() == max(exhausted, default=0)


# Pieces of the structured-field grammar, well-formed or not, glued together at random.
TOKENS = st.sampled_from(["minute", "hour", "day", "*x", "a:b/c", "1abc", "", "é", "-"])
STRINGS = st.text(max_size=6).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"')
NUMBERS = st.sampled_from(["0", "12", "-1", "1.5", "?1", "?0", '"5"', ":aGk=:", "1e3", "", "x"])
NUMBERS |= st.integers(min_value=-(10**20), max_value=10**20).map(str)
KEYS = st.sampled_from(["r", "t", "q", "w", "R", "x", "", "r r"])
PARAMS = st.lists(st.tuples(KEYS, NUMBERS), max_size=4).map(
    lambda pairs: "".join(f";{k}={v}" for k, v in pairs)
)
MEMBERS = st.tuples(TOKENS | STRINGS | st.just("(a b)"), PARAMS).map("".join)
SEPARATORS = st.sampled_from([", ", ",", " , ", ",,", "\t,", ";", " "])
HOSTILE = st.lists(st.tuples(MEMBERS, SEPARATORS), min_size=1, max_size=4).map(
    lambda parts: "".join(m + s for m, s in parts)[: -len(parts[-1][1]) or None]
)


@settings(max_examples=300)
@given(ratelimit=HOSTILE | st.none(), policy=HOSTILE | st.none())
def test_hostile_structured_fields_parse_or_raise_value_error(ratelimit, policy) -> None:
    try:
        state = parse_rate_limit_headers(ratelimit, policy)
    except ValueError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    if state is None:
        assert ratelimit is None and policy is None
        return
    for window in state.windows:
        for number in (window.remaining, window.reset, window.quota, window.window):
            assert number is None or (type(number) is int and number >= 0)


@settings(max_examples=200)
@given(
    ratelimit=HOSTILE | st.text(max_size=40) | st.none(),
    policy=HOSTILE | st.text(max_size=40) | st.none(),
)
def test_the_client_reads_any_headers_without_raising(ratelimit, policy) -> None:
    headers = {}
    if ratelimit is not None:
        headers["RateLimit"] = ratelimit
    if policy is not None:
        headers["ratelimit-policy"] = policy
    try:
        as_sent = [httpx.Headers(headers)]
    except UnicodeEncodeError:
        as_sent = []  # not sendable over HTTP; a plain mapping may still hold it
    for given_headers in [headers, *as_sent]:
        state = client_parse(given_headers)
        assert state is None or isinstance(state, RateLimitState)
        if state is not None:
            fraction = state.lowest_fraction_remaining()
            assert fraction is None or 0.0 <= fraction <= 1.0
            assert state.seconds_until_available() >= 0


ANY = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)


@given(st.lists(st.tuples(ANY, ANY, ANY), max_size=3))
@example([("", 0, 0)])  # valid; its policy text read as a RateLimit header was refused
def test_formatters_refuse_bad_windows_with_value_error_only(windows) -> None:
    """Each formatter raises ``ValueError`` or writes a header that its own parser (not the
    other header's) reads back as the windows given (the last of a repeated name wins)."""
    pairs = (
        (format_ratelimit, parse_ratelimit),
        (format_ratelimit_policy, parse_ratelimit_policy),
    )
    for formatter, parse in pairs:
        try:
            text = formatter(windows)
        except ValueError:
            continue
        if not windows:
            assert text == ""
            continue
        assert parse(text) == {name: (first, second) for name, first, second in windows}
