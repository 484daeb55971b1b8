"""Handler specs, loading and kinds (no broker needed)."""

from __future__ import annotations

import functools

import pytest

from podbook.errors import ConfigError
from podbook.worker._handlers import HandlerKind, HandlerSpec, handler_kind, load_handler

from .conftest import SAMPLES


@pytest.mark.parametrize(
    ("text", "target", "function"),
    [
        ("handler.py", "handler.py", "handler"),
        ("handler.py:run", "handler.py", "run"),
        ("dir/handler.py:run", "dir/handler.py", "run"),
        ("pkg.mod:fn", "pkg.mod", "fn"),
        ("podbook.worker.builtins:echo", "podbook.worker.builtins", "echo"),
    ],
)
def test_spec_parsing(text, target, function):
    spec = HandlerSpec.parse(text)
    assert (spec.target, spec.function) == (target, function)


@pytest.mark.parametrize("text", ["", "handler.py:not-a-name", ":fn"])
def test_bad_specs_say_how_to_write_one(text):
    with pytest.raises(ConfigError) as info:
        HandlerSpec.parse(text)
    assert "\n" not in str(info.value)


def test_load_from_a_file_and_from_a_module():
    assert load_handler(f"{SAMPLES}:raises").__name__ == "raises"
    assert load_handler(str(SAMPLES)).__name__ == "handler"  # default function name
    from podbook.worker.builtins import echo

    assert load_handler("podbook.worker.builtins:echo") is echo


def test_missing_file_function_and_module_are_one_line_errors(tmp_path):
    with pytest.raises(ConfigError, match=r"handler file .*nope\.py not found"):
        load_handler(str(tmp_path / "nope.py"))
    with pytest.raises(ConfigError, match=r"has no function 'missing'; name the handler with"):
        load_handler(f"{SAMPLES}:missing")
    with pytest.raises(ConfigError, match=r"no module named 'no_such_pkg'"):
        load_handler("no_such_pkg.mod:fn")


def test_an_import_error_names_the_line(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import os\n\nvalue = undefined_name\n")
    with pytest.raises(ConfigError) as info:
        load_handler(str(broken))
    message = str(info.value)
    assert message.startswith(f"importing {broken} failed: NameError")
    assert "line 3" in message and "\n" not in message


def test_a_handler_file_imports_its_neighbours(tmp_path):
    (tmp_path / "helper_mod_for_test.py").write_text("VALUE = 41\n")
    (tmp_path / "main.py").write_text(
        "from helper_mod_for_test import VALUE\n\ndef handler(job):\n    return VALUE + 1\n"
    )
    assert load_handler(str(tmp_path / "main.py"))({"input": None}) == 42


def test_kinds():
    def plain(job):
        return job

    async def coroutine(job):
        return job

    def generator(job):
        yield job

    async def async_generator(job):
        yield job

    class Callable:
        async def __call__(self, job):
            return job

    assert handler_kind(plain) is HandlerKind.SYNC
    assert handler_kind(coroutine) is HandlerKind.ASYNC
    assert handler_kind(generator) is HandlerKind.GENERATOR
    assert handler_kind(async_generator) is HandlerKind.ASYNC_GENERATOR
    assert handler_kind(functools.partial(async_generator)) is HandlerKind.ASYNC_GENERATOR
    assert handler_kind(Callable()) is HandlerKind.ASYNC
    assert HandlerKind.GENERATOR.streams and not HandlerKind.ASYNC.streams
