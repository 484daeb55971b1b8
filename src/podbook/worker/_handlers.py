"""Handlers: loading them from a spec, and telling their kinds apart.

A spec is ``path/to/handler.py[:fn]`` (a file; ``fn`` defaults to ``handler``) or
``package.module:fn`` (an importable module). Handlers follow the ``runpod`` convention:
``fn(job) -> result`` where ``job`` is the whole job object (``{"id", "input", ...}``);
coroutine functions are awaited, generators and async generators stream their chunks.
"""

from __future__ import annotations

import enum
import functools
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from podbook.errors import ConfigError

__all__ = ["HandlerKind", "HandlerSpec", "handler_kind", "import_target", "load_handler"]

DEFAULT_FUNCTION = "handler"


class HandlerKind(enum.Enum):
    """How a handler is run."""

    SYNC = "sync"
    """A plain function, run in a worker thread."""
    ASYNC = "async"
    """A coroutine function, awaited on the runner's event loop."""
    GENERATOR = "generator"
    """A generator function: each ``next()`` runs in a worker thread; chunks stream."""
    ASYNC_GENERATOR = "async-generator"
    """An async generator function, iterated on the runner's event loop; chunks stream."""

    @property
    def streams(self) -> bool:
        """Whether this kind yields chunks."""
        return self in (HandlerKind.GENERATOR, HandlerKind.ASYNC_GENERATOR)


def _unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    while isinstance(fn, functools.partial):
        fn = fn.func
    if not inspect.isfunction(fn) and not inspect.ismethod(fn) and callable(fn):
        call = getattr(fn, "__call__", None)  # noqa: B004 - a callable object's method
        if call is not None:
            return call
    return fn


def handler_kind(fn: Callable[..., Any]) -> HandlerKind:
    """The kind of ``fn`` (a plain function that returns a generator is found at run time)."""
    target = _unwrap(fn)
    if inspect.isasyncgenfunction(target):
        return HandlerKind.ASYNC_GENERATOR
    if inspect.isgeneratorfunction(target):
        return HandlerKind.GENERATOR
    if inspect.iscoroutinefunction(target):
        return HandlerKind.ASYNC
    return HandlerKind.SYNC


@dataclass(frozen=True)
class HandlerSpec:
    """A parsed ``handler.py[:fn]`` or ``package.module:fn``."""

    target: str
    function: str = DEFAULT_FUNCTION

    @property
    def is_file(self) -> bool:
        """Whether ``target`` names a Python file rather than a module."""
        return self.target.endswith(".py") or "/" in self.target or "\\" in self.target

    @classmethod
    def parse(cls, text: str, default: str = DEFAULT_FUNCTION) -> HandlerSpec:
        """Parse a spec (``default`` is the name used when none is given); ``ConfigError``
        names what is wrong with it."""
        text = text.strip()
        if not text:
            raise ConfigError("empty handler; give handler.py[:fn] or package.module:fn")
        target, sep, function = text.rpartition(":")
        if not sep or (len(target) == 1 and target.isalpha()):  # no ":" (or a drive letter)
            target, function = text, default
        if not target:
            raise ConfigError(f"handler {text!r} names no file or module before ':'")
        if not function.isidentifier():
            raise ConfigError(
                f"handler {text!r}: {function!r} is not a function name; use handler.py:fn"
            )
        return cls(target, function)

    def __str__(self) -> str:
        return f"{self.target}:{self.function}"


def load_handler(spec: str | HandlerSpec) -> Callable[..., Any]:
    """Import the handler that ``spec`` names; ``ConfigError`` says what went wrong."""
    if isinstance(spec, str):
        spec = HandlerSpec.parse(spec)
    module = import_target(spec)
    try:
        fn = getattr(module, spec.function)
    except AttributeError:
        raise ConfigError(
            f"{spec.target} has no function {spec.function!r}; "
            f"name the handler with {spec.target}:FUNCTION"
        ) from None
    if not callable(fn):
        raise ConfigError(f"{spec} is a {type(fn).__name__}, not a function")
    return fn


def import_target(spec: HandlerSpec, what: str = "handler") -> Any:
    """The module ``spec.target`` names (a file or an importable module), imported;
    ``ConfigError`` says what went wrong (``what`` names the file's role in it)."""
    return _import_file(spec.target, what) if spec.is_file else _import_module(spec.target)


def _import_failure(what: str, exc: BaseException) -> ConfigError:
    """One line naming the import error and the line of the handler file it came from."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.lineno:
        where = f" (line {exc.lineno})"
    elif frames:
        where = f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})"
    text = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)  # no "(file, line)"
    message = text.splitlines()[0] if text else ""
    detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return ConfigError(f"importing {what} failed: {detail}{where}")


def _import_file(target: str, what: str = "handler") -> Any:
    path = Path(target).expanduser().resolve()
    if not path.is_file():
        raise ConfigError(f"{what} file {target} not found; give a path to a .py file")
    name = f"podbook_handler_{path.stem}_{abs(hash(str(path))) % 10**8}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise ConfigError(f"cannot load {target} as Python; give a .py file")
    module = importlib.util.module_from_spec(module_spec)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the handler can import its neighbours
    sys.modules[name] = module
    try:  # from its source, never a cached .pyc: an edit of the same size within one second
        # (a hot reload) would otherwise run the old bytecode
        exec(compile(path.read_bytes(), str(path), "exec", dont_inherit=True), module.__dict__)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _import_failure(target, exc) from None
    return module


def _import_module(target: str) -> Any:
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # `python -m` semantics: the cwd is importable
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise ConfigError(
                f"no module named {exc.name!r}; give handler.py[:fn] or an importable "
                "package.module:fn"
            ) from None
        raise _import_failure(target, exc) from None
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _import_failure(target, exc) from None
