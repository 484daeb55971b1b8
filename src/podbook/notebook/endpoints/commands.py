"""Parsers of ``%%runjob``, ``%job`` and ``%endpoint``, and the small commands they build.

The parsers reuse :mod:`podbook.notebook.parsing` (``shlex`` split, one-line
:class:`UsageError`, ``-o NAME``); flag values are checked here so that a bad one names the
flag and the accepted range before anything is sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError

from podbook.api import queue
from podbook.notebook.parsing import (
    MagicArgumentParser,
    Subcommand,
    add_output_argument,
    magic_parser,
    split_line,
    verb_subcommands,
)
from podbook.notebook.values import NAME, POSITIVE_INT, value_type


def _milliseconds(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        value = int(text.replace("_", ""))
        if not low <= value <= high:
            raise ValueError(text)
        return value

    return value_type(parse, f"milliseconds from {low} to {high}")


def _url(text: str) -> str:
    if not text.startswith(("http://", "https://")) or len(text) < 10:
        raise ValueError(text)
    return text


WAIT_MS = _milliseconds(queue.WAIT_MIN_MS, queue.WAIT_MAX_MS)
EXECUTION_TIMEOUT_MS = _milliseconds(queue.EXECUTION_TIMEOUT_MIN_MS, queue.EXECUTION_TIMEOUT_MAX_MS)
TTL_MS = _milliseconds(queue.TTL_MIN_MS, queue.TTL_MAX_MS)
URL = value_type(_url, "an http:// or https:// URL")


@dataclass(frozen=True)
class RunJobCommand:
    """``%%runjob ENDPOINT ...``: how to submit the cell's input and follow the job.

    ``mode`` is ``"stream"`` (run, then read the stream), ``"sync"`` (runsync) or
    ``"async"`` (run, then follow the status only).
    """

    endpoint_id: str
    mode: str = "stream"
    wait_ms: int | None = None
    policy: dict[str, Any] = field(default_factory=dict)
    webhook: str | None = None
    output: str | None = None


@dataclass(frozen=True)
class JobCommand:
    """``%job status|cancel|retry JOB_ID --endpoint ID``."""

    verb: str
    job_id: str
    endpoint_id: str
    output: str | None = None


@dataclass(frozen=True)
class EndpointCommand:
    """``%endpoint health|purge ID``."""

    verb: str
    endpoint_id: str
    output: str | None = None


@dataclass(frozen=True)
class ServeCommand:
    """``%endpoint serve FUNC --name ID [--concurrency N] [--openai [--model NAME]]``,
    ``%endpoint serve --watch FILE.py[:FUNC] --name ID [...]`` and
    ``%endpoint serve APP --lb --name ID``.

    ``openai``: FUNC is a text generator served as an OpenAI-compatible endpoint (wrapped by
    ``podbook.openai_handler``, answering under ``model``, default the endpoint's ID).
    ``lb``: the name is an ASGI/WSGI app served as a worker of a load-balancing endpoint.
    ``watch``: the handler comes from this file (``function`` in it, ``handler`` by
    default) and is reloaded whenever the file changes.
    """

    function: str
    endpoint_id: str
    concurrency: int = 1
    output: str | None = None
    openai: bool = False
    model: str | None = None
    lb: bool = False
    watch: str | None = None


def build_runjob_parser() -> MagicArgumentParser:
    """The parser of the ``%%runjob`` line."""
    parser = magic_parser(
        "%%runjob",
        "Run the cell's input (JSON or a Python dict; {var} is expanded) on a serverless "
        "endpoint, show the job's live panel and return the Job. By default the job's "
        "stream is shown as it arrives.",
    )
    parser.add_argument("endpoint_id", metavar="ENDPOINT", help="the endpoint's ID, e.g. echo")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--sync", action="store_true", help="use /runsync (waits for the result)")
    mode.add_argument("--async", dest="async_", action="store_true", help="submit, follow status")
    parser.add_argument("--wait", type=WAIT_MS, metavar="MS", help="--sync: how long to wait")
    parser.add_argument(
        "--timeout", type=EXECUTION_TIMEOUT_MS, metavar="MS", help="policy executionTimeout"
    )
    parser.add_argument("--ttl", type=TTL_MS, metavar="MS", help="policy ttl (the job's life)")
    parser.add_argument("--low-priority", action="store_true", help="policy lowPriority")
    parser.add_argument("--webhook", type=URL, metavar="URL", help="POSTed the result at the end")
    add_output_argument(parser)
    return parser


def parse_runjob_line(line: str, parser: MagicArgumentParser) -> RunJobCommand:
    """The :class:`RunJobCommand` of a ``%%runjob`` line (``HelpShown`` after ``--help``)."""
    ns = parser.parse_args(split_line(line, parser.prog))
    mode = "sync" if ns.sync else "async" if ns.async_ else "stream"
    if ns.wait is not None and mode != "sync":
        raise UsageError("%%runjob: --wait applies to --sync only; add --sync or drop --wait.")
    policy = {
        key: value
        for key, value in (
            ("executionTimeout", ns.timeout),
            ("ttl", ns.ttl),
            ("lowPriority", True if ns.low_priority else None),
        )
        if value is not None
    }
    return RunJobCommand(
        endpoint_id=ns.endpoint_id,
        mode=mode,
        wait_ms=ns.wait,
        policy=policy,
        webhook=ns.webhook,
        output=ns.output,
    )


def build_job_subcommands() -> dict[str, Subcommand]:
    """The ``%job`` subcommands, by name."""
    helps = {
        "status": "show a job's status in its panel",
        "cancel": "cancel a queued or running job",
        "retry": "retry a FAILED or TIMED_OUT job (same ID, original input)",
    }

    def add_arguments(parser: MagicArgumentParser, verb: str) -> None:
        parser.add_argument("job_id", metavar="JOB_ID", help="the job's ID")
        parser.add_argument(
            "--endpoint", required=True, metavar="ID", help="the endpoint the job ran on"
        )

    return verb_subcommands(
        "job",
        helps,
        add_arguments,
        lambda verb, ns: JobCommand(
            verb=verb, job_id=ns.job_id, endpoint_id=ns.endpoint, output=ns.output
        ),
    )


def build_endpoint_subcommands() -> dict[str, Subcommand]:
    """The ``%endpoint`` subcommands, by name."""
    helps = {
        "health": "show an endpoint's job and worker counts, kept current",
        "purge": "remove an endpoint's queued jobs (running jobs go on)",
    }
    commands = verb_subcommands(
        "endpoint",
        helps,
        lambda parser, verb: parser.add_argument(
            "endpoint_id", metavar="ID", help="the endpoint's ID"
        ),
        lambda verb, ns: EndpointCommand(verb=verb, endpoint_id=ns.endpoint_id, output=ns.output),
    )
    serve = magic_parser(
        "%endpoint serve",
        "Serve a handler function of this notebook on an endpoint (background worker thread). "
        "Run it again on the same endpoint to swap the handler for the next job (hot reload).",
    )
    serve.add_argument(
        "function", type=NAME, nargs="?", metavar="FUNC", help="the handler's variable name"
    )
    serve.add_argument("--name", required=True, metavar="ID", help="the endpoint's ID")
    serve.add_argument(
        "--concurrency", type=POSITIVE_INT, default=1, metavar="N", help="jobs run at once"
    )
    serve.add_argument(
        "--openai",
        action="store_true",
        help="FUNC(prompt_or_messages, params) yields text pieces: serve it as an "
        "OpenAI-compatible endpoint (podbook.openai_handler)",
    )
    serve.add_argument("--model", metavar="NAME", help="--openai: the model name it answers as")
    serve.add_argument(
        "--lb",
        action="store_true",
        help="FUNC names an ASGI/WSGI app (e.g. FastAPI()): serve it as a worker of a "
        "load-balancing endpoint",
    )
    serve.add_argument(
        "--watch",
        metavar="FILE.py[:FUNC]",
        help="serve FUNC (default: handler) of this file, reloaded whenever the file changes",
    )
    add_output_argument(serve)
    commands["serve"] = Subcommand(serve, _build_serve, "serve a handler function on an endpoint")
    return commands


def _serve_source(ns: Any) -> tuple[str, str | None]:
    """The handler's name and the watched file spec (``FILE.py:FUNC``) of a serve line."""
    if ns.watch is None:
        if ns.function is None:
            raise UsageError(
                "%endpoint serve: name the handler function (FUNC) or a file to watch "
                "(--watch handler.py[:FUNC])."
            )
        return ns.function, None
    if ns.lb:
        raise UsageError("%endpoint serve: --watch serves handler functions, not an app (--lb).")
    if ns.function is not None:
        raise UsageError(
            "%endpoint serve: with --watch, name the function in the file spec "
            f"(--watch FILE.py:{ns.function}), not as FUNC."
        )
    from podbook.errors import ConfigError
    from podbook.worker._handlers import HandlerSpec

    try:
        spec = HandlerSpec.parse(ns.watch)
    except ConfigError as err:
        raise UsageError(f"%endpoint serve --watch: {err}.") from None
    if not spec.target.endswith(".py"):
        raise UsageError(
            f"%endpoint serve --watch: {spec.target!r} is not a Python file; give "
            "handler.py[:FUNC]."
        )
    return spec.function, str(spec)


def _build_serve(ns: Any) -> ServeCommand:
    if ns.model is not None and not ns.openai:
        raise UsageError("%endpoint serve: --model applies to --openai only; add --openai.")
    if ns.lb and (ns.openai or ns.concurrency != 1):
        flag = "--openai" if ns.openai else "--concurrency"
        raise UsageError(
            f"%endpoint serve: {flag} applies to handler functions, not to an app served "
            "with --lb; drop one of them."
        )
    function, watch = _serve_source(ns)
    return ServeCommand(
        function=function,
        endpoint_id=ns.name,
        concurrency=ns.concurrency,
        output=ns.output,
        openai=ns.openai,
        model=ns.model,
        lb=ns.lb,
        watch=watch,
    )
