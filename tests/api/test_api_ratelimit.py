"""RateLimit / RateLimit-Policy: parsing, formatting, and what a refresher reads from them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podbook.api import (
    format_ratelimit,
    format_ratelimit_policy,
    parse_rate_limit_headers,
    parse_ratelimit,
    parse_ratelimit_policy,
)

LIVE = '"minute";r=0;t=12, "hour";r=2800;t=1812, "day";r=49500;t=45012'
POLICY = '"minute";q=60;w=60, "hour";q=3000;w=3600, "day";q=50000;w=86400'


def test_reference_example():
    state = parse_rate_limit_headers(LIVE, POLICY)
    minute = state.get("minute")
    assert (minute.remaining, minute.reset, minute.quota, minute.window) == (0, 12, 60, 60)
    assert state.get("day").fraction_remaining == pytest.approx(0.99)
    assert state.lowest_fraction_remaining() == 0.0
    assert state.seconds_until_available() == 12
    assert [w.name for w in state.windows] == ["minute", "hour", "day"]


def test_plenty_left():
    state = parse_rate_limit_headers('"minute";r=45;t=30', '"minute";q=60;w=60')
    assert state.lowest_fraction_remaining() == pytest.approx(0.75)
    assert state.seconds_until_available() == 0


def test_exempt_caller_and_partial_headers():
    assert parse_rate_limit_headers(None, None) is None
    only_live = parse_rate_limit_headers('"minute";r=5;t=1', None)
    assert only_live.get("minute").quota is None
    assert only_live.lowest_fraction_remaining() is None
    assert parse_rate_limit_headers(None, POLICY).get("hour").remaining is None


def test_tokens_and_bytes_are_accepted():
    assert parse_ratelimit(b"minute;r=1;t=2") == {"minute": (1, 2)}
    assert parse_ratelimit('"hour";r=3') == {"hour": (3, None)}


def test_format_matches_the_reference_text():
    assert (
        format_ratelimit([("minute", 0, 12), ("hour", 2800, 1812), ("day", 49500, 45012)]) == LIVE
    )
    assert (
        format_ratelimit_policy([("minute", 60, 60), ("hour", 3000, 3600), ("day", 50000, 86400)])
        == POLICY
    )
    with pytest.raises(ValueError):
        format_ratelimit([("minute", -1, 3)])


@pytest.mark.parametrize(
    "garbage",
    [
        "x;;",
        ",,",
        '"minute";r=-1;t=2',
        '"minute";r=1.5;t=2',
        '"minute";r=?1',
        '"minute";r="5"',
        '"minute";t=5',
        "(a b);r=1",
        '"é";r=1',
        "minute;r=1, @",
        '"minute";r=1;t=2 junk',
    ],
)
def test_garbage_is_a_value_error(garbage):
    with pytest.raises(ValueError):
        parse_ratelimit(garbage)


def test_policy_needs_a_quota():
    with pytest.raises(ValueError, match="no q parameter"):
        parse_ratelimit_policy('"minute";w=60')


names = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
counts = st.integers(min_value=0, max_value=999_999_999_999_999)


@given(st.lists(st.tuples(names, counts, counts), max_size=5, unique_by=lambda w: w[0]))
def test_round_trip(windows):
    assert parse_ratelimit(format_ratelimit(windows)) == {n: (r, t) for n, r, t in windows}
    assert parse_ratelimit_policy(format_ratelimit_policy(windows)) == {
        n: (q, w) for n, q, w in windows
    }


@given(st.one_of(st.text(max_size=60), st.binary(max_size=60)))
def test_any_input_parses_or_raises_value_error(value):
    try:
        state = parse_rate_limit_headers(value, value)
    except ValueError:
        return
    assert state is not None
    fraction = state.lowest_fraction_remaining()
    assert fraction is None or 0.0 <= fraction <= 1.0
    assert state.seconds_until_available() >= 0


def _by_http_sf(text: str):
    import http_sf

    try:
        parsed = http_sf.parse(text.encode("ascii"), tltype="list")
    except Exception:
        return None
    return [(str(name), dict(params)) for name, params in parsed]


header_text = st.lists(
    st.tuples(
        st.one_of(
            st.from_regex(r'"[ a-z,;=\\"]{0,6}"', fullmatch=True),
            st.from_regex(r"[a-zA-Z*][a-z0-9:/.]{0,6}", fullmatch=True),
            st.sampled_from(["", "(a b)", "1x", "?1"]),
        ),
        st.lists(
            st.tuples(
                st.sampled_from(["r", "t", "q", "w", "R", "x-y", "*k", "1"]),
                st.sampled_from(
                    ["=1", "=007", "=-3", "=1.5", "", '="s"', "=?0", "=1234567890123456"]
                ),
                st.sampled_from(["", " ", "  "]),
            ),
            max_size=3,
        ),
    ),
    max_size=3,
).map(
    lambda members: ", ".join(
        name + "".join(f";{space}{key}{value}" for key, value, space in params)
        for name, params in members
    )
)


@given(header_text, st.sampled_from(["", " ", "\t"]), st.sampled_from(["", " ", "\t"]))
def test_fast_path_agrees_with_http_sf(text, before, after):
    from podbook.api.ratelimit import _simple_members

    text = before + text + after
    fast = _simple_members(text)
    if fast is not None:
        assert fast == _by_http_sf(text)


simple_header_text = st.lists(
    st.tuples(
        st.one_of(
            st.from_regex(r'"[ a-zA-Z0-9_!#%:]{0,6}"', fullmatch=True),
            st.from_regex(r"[a-zA-Z*][a-z0-9:/.!]{0,6}", fullmatch=True),
        ),
        st.lists(
            st.tuples(
                st.sampled_from(["r", "t", "q", "w", "x-y", "*k", "r"]),
                st.sampled_from(["=1", "=007", "=0", "=123456789012345"]),
                st.sampled_from(["", " "]),
            ),
            min_size=1,
            max_size=3,
        ),
        st.sampled_from([",", ", ", ",\t", " ,", "\t,  "]),
    ),
    min_size=1,
    max_size=4,
).map(
    lambda members: "".join(
        (separator if index else "")
        + name
        + "".join(f";{space}{key}{value}" for key, value, space in params)
        for index, (name, params, separator) in enumerate(members)
    )
)


@given(simple_header_text)
def test_fast_path_reads_the_common_shape_like_http_sf(text):
    from podbook.api.ratelimit import _simple_members

    fast = _simple_members(text)
    assert fast is not None
    assert fast == _by_http_sf(text)
