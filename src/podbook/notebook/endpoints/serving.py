"""``%endpoint serve FUNC --name ID`` and ``%endpoint serve --watch FILE.py[:FUNC] --name ID``:
a handler of the notebook, or of a file, served on a background worker of this kernel.

Run again on an endpoint this kernel already serves (same ``--concurrency``), the cell swaps
the handler for the next job instead of starting a second worker (hot reload, see
:mod:`podbook.worker._reload`): a running job finishes on the old code, the swap is a release
of the endpoint, and the cell prints one line saying so. With ``--watch`` the worker also
reloads the file whenever it changes, until it is stopped.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from podbook.errors import ConfigError
from podbook.notebook.endpoints.book import JobBook
from podbook.notebook.endpoints.commands import ServeCommand

__all__ = ["endpoint_serve_file", "endpoint_serve_function"]

Handler = Callable[..., Any]


def _notebook_function(command: ServeCommand, namespace: Mapping[str, Any]) -> Handler:
    """The function that FUNC names in the user's namespace."""
    fn = namespace.get(command.function)
    if fn is None:
        raise UsageError(
            f"%endpoint serve: no variable named {command.function!r}; define the handler "
            "function in a cell first."
        )
    if not callable(fn):
        raise UsageError(
            f"%endpoint serve: {command.function} is a {type(fn).__name__}, not a function; "
            "pass the handler function's name."
        )
    return fn


def _preparer(command: ServeCommand) -> Callable[[Handler], Handler]:
    """What turns a loaded function into the handler served (``--openai`` wraps it)."""
    if not command.openai:
        return lambda fn: fn
    from podbook.worker import openai_handler

    def prepare(fn: Handler) -> Handler:
        if not (inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)):
            name = getattr(fn, "__name__", command.function)
            raise ConfigError(
                f"{name} must be a generator function such as "
                "`def generate(prompt_or_messages, params): yield 'Hello'`"
            )
        return openai_handler(fn, model=command.model or command.endpoint_id)

    return prepare


def _served_here(book: JobBook, command: ServeCommand) -> Any:
    """The worker of this kernel that serves the endpoint and can take a new handler (the
    same ``--concurrency``; a different one starts a new worker in its place)."""
    from podbook.worker._background import served_worker

    worker = served_worker(book.session.client.settings.queue_url, command.endpoint_id)
    if worker is None or worker.concurrency != command.concurrency:
        return None
    return worker


def _start(book: JobBook, command: ServeCommand, fn: Handler, name: str, watched: str) -> Any:
    """A new background worker serving ``fn``; prints where it serves."""
    from podbook.worker import serve

    try:
        handle = serve(
            fn,
            endpoint=command.endpoint_id,
            concurrency=command.concurrency,
            client=book.session.client,
        )
    except (TypeError, ValueError) as err:
        raise UsageError(f"%endpoint serve: {err}.") from None
    book.keep_served(handle)
    print(
        f"Serving {name} on endpoint {command.endpoint_id} ({command.concurrency} job(s) at "
        f"once){watched}; stop it with .stop() on the returned handle."
    )
    if command.openai:
        base_url = book.session.client.endpoint(command.endpoint_id).openai_base_url
        print(
            f"OpenAI-compatible (model {command.model or command.endpoint_id!r}): "
            f"base_url={base_url}; try `%%chat {command.endpoint_id}`."
        )
    return handle


def endpoint_serve_function(
    book: JobBook, command: ServeCommand, namespace: Mapping[str, Any]
) -> Any:
    """Serve the notebook function FUNC, or swap it in on the worker already serving the
    endpoint (which stops watching a file, if it did); returns the worker's handle."""
    original = _notebook_function(command, namespace)
    try:
        fn = _preparer(command)(original)
    except ConfigError as err:
        raise UsageError(f"%endpoint serve --openai: {err}.") from None
    worker = _served_here(book, command)
    if worker is None:
        return _start(book, command, fn, command.function, "")
    from podbook.worker._reload import code_label

    worker.stop_watching()
    label = code_label(original, command.function)
    print(worker.reload(fn, name=command.function, label=label).line())
    return worker


def endpoint_serve_file(book: JobBook, command: ServeCommand) -> Any:
    """Serve FUNC of the file ``--watch`` names and reload it whenever the file changes (on
    the worker already serving the endpoint, if any); returns the worker's handle."""
    from podbook.worker._handlers import HandlerSpec
    from podbook.worker._reload import HandlerWatch

    assert command.watch is not None
    watch = HandlerWatch(HandlerSpec.parse(command.watch), prepare=_preparer(command))
    try:
        fn = watch.load()
    except ConfigError as err:
        raise UsageError(f"%endpoint serve --watch: {err}.") from None
    file = Path(watch.spec.target).name
    worker = _served_here(book, command)
    if worker is None:
        worker = _start(book, command, fn, watch.name, f", reloaded whenever {file} changes")
    else:
        worker.stop_watching()
        line = worker.reload(fn, name=watch.name, label=watch.label).line()
        print(f"{line}; it reloads whenever {file} changes")
    worker.watch(watch)
    return worker
