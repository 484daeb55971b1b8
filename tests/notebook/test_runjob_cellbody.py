"""The ``%%runjob`` cell body: JSON or a Python dict, ``{var}`` expansion, one-line errors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from IPython.core.error import UsageError

from podbook.notebook.endpoints.cellbody import parse_job_input
from podbook.notebook.endpoints.commands import build_runjob_parser, parse_runjob_line


def one_line(err: pytest.ExceptionInfo[UsageError]) -> str:
    text = str(err.value)
    assert "\n" not in text and text.startswith("%%runjob"), text
    return text


def test_json_body_with_variables_inside_and_outside_strings() -> None:
    ns = {"name": 'Ada "the first"', "count": 3, "opts": {"t": 0.5}}
    body = '{\n  "prompt": "Hello {name}!",\n  "n": {count},\n  "options": {opts}\n}'
    assert parse_job_input(body, ns) == {
        "prompt": 'Hello Ada "the first"!',
        "n": 3,
        "options": {"t": 0.5},
    }


def test_nested_json_objects_are_not_mistaken_for_variables() -> None:
    body = '{"a": {"b": {"c": 1}}, "text": "{unknown} stays"}'
    assert parse_job_input(body, {}) == {"a": {"b": {"c": 1}}, "text": "{unknown} stays"}


def test_python_dict_expression_with_expansion() -> None:
    ns = {"topic": "it's sunny", "cfg": SimpleNamespace(max_tokens=16)}
    body = "{'prompt': 'Say: {topic}', 'max_tokens': cfg.max_tokens, 'ok': True, 'n': {cfg.max_tokens}}"
    assert parse_job_input(body, ns) == {
        "prompt": "Say: it's sunny",
        "max_tokens": 16,
        "ok": True,
        "n": 16,
    }


def test_bad_json_names_line_and_column() -> None:
    body = '{\n  "prompt": "hi"\n  "n": 3\n}'
    with pytest.raises(UsageError) as err:
        parse_job_input(body, {})
    text = one_line(err)
    assert "not valid JSON" in text and "line 3, column 3" in text


def test_a_trailing_comma_is_fine_python() -> None:
    assert parse_job_input('{"prompt": "hi",}', {}) == {"prompt": "hi"}


def test_json_with_true_and_a_mistake_is_reported_as_json() -> None:
    with pytest.raises(UsageError) as err:
        parse_job_input('{"stream": true "n": 1}', {})
    assert "line 1, column 17" in one_line(err)


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("[1, 2]", "not a list"),
        ('"text"', "not a str"),
        ("{'a': undefined_name}", "NameError"),
    ],
)
def test_other_mistakes_are_one_line(body: str, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_job_input(body, {})
    assert needle in one_line(err)


def test_line_flags_build_the_policy() -> None:
    parser = build_runjob_parser()
    command = parse_runjob_line(
        "echo --timeout 6000 --ttl 20000 --low-priority --webhook https://example.org/hook -o j",
        parser,
    )
    assert command.endpoint_id == "echo" and command.mode == "stream" and command.output == "j"
    assert command.policy == {"executionTimeout": 6000, "ttl": 20000, "lowPriority": True}
    assert command.webhook == "https://example.org/hook"
    assert parse_runjob_line("echo --sync --wait 2000", parser).wait_ms == 2000
    assert parse_runjob_line("echo --async", parser).mode == "async"


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ("echo --wait 500 --sync", "argument --wait"),
        ("echo --wait 2000", "--wait applies to --sync"),
        ("echo --timeout 100", "argument --timeout"),
        ("echo --ttl 5000", "argument --ttl"),
        ("echo --sync --async", "not allowed with"),
        ("echo --webhook ftp://x", "argument --webhook"),
        ("echo --bogus", "unknown argument --bogus"),
        ("", "missing ENDPOINT"),
    ],
)
def test_bad_lines_are_one_line_usage_errors(line: str, needle: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_runjob_line(line, build_runjob_parser())
    assert needle in one_line(err)
