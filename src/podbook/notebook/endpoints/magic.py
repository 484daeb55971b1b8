"""The bodies of ``%endpoint``, ``%%runjob`` and ``%job`` (``PodMagics`` delegates here).

``%endpoint create|list|show|update|delete|logs`` (:mod:`.manage`) run like the other
subcommand magics (:func:`~podbook.notebook.dispatch.run_line`); ``%endpoint
health|purge|serve``, ``%%runjob`` and ``%job`` run inside :func:`.errors.job_errors`, which
says what a 404 means for an endpoint or a job. Every failure is one line; the result is
stored under ``-o NAME`` and returned.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from podbook.notebook import parsing
from podbook.notebook.dispatch import run_line, store_output
from podbook.notebook.endpoints import commands
from podbook.notebook.endpoints.book import book_for
from podbook.notebook.endpoints.errors import job_errors

if TYPE_CHECKING:
    from podbook.notebook.magics import PodMagics


_runjob_parser = cache(commands.build_runjob_parser)
_job_subcommands = cache(commands.build_job_subcommands)


@cache
def _endpoint_subcommands() -> dict[str, parsing.Subcommand]:
    """Every ``%endpoint`` subcommand: the job ones (``health``, ``purge``, ``serve``) and
    the ones that manage endpoints (:mod:`.manage`), for usage and errors."""
    from podbook.notebook.endpoints.manage import build_subcommands

    return {**commands.build_endpoint_subcommands(), **build_subcommands()}


def runjob(magics: PodMagics, line: str, cell: str | None) -> object:
    """``%%runjob ENDPOINT [flags]`` with the job's input in the cell."""
    from podbook.notebook.endpoints.cellbody import parse_job_input
    from podbook.notebook.endpoints.handlers import run_job

    try:
        command = commands.parse_runjob_line(line, _runjob_parser())
    except parsing.HelpShown:
        return None
    job_input = parse_job_input(cell or "", magics.shell.user_ns)
    with job_errors("runjob"):
        result = run_job(book_for(magics.session), command, job_input)
    return store_output(magics.shell, command.output, result)


def job(magics: PodMagics, line: str) -> object:
    """``%job status|cancel|retry JOB_ID --endpoint ID``."""
    from podbook.notebook.endpoints.handlers import JOB_HANDLERS

    try:
        name, command = parsing.parse_line("job", line, _job_subcommands())
    except parsing.HelpShown:
        return None
    with job_errors(f"job {name}"):
        result = JOB_HANDLERS[name](book_for(magics.session), command)
    return store_output(magics.shell, command.output, result)


def endpoint(magics: PodMagics, line: str) -> object:
    """``%endpoint SUBCOMMAND ...``: ``create|list|show|update|delete|logs`` manage
    endpoints, ``health|purge ID`` and ``serve FUNC --name ID`` work with their jobs."""
    from podbook.notebook.endpoints.handlers import ENDPOINT_HANDLERS, endpoint_serve
    from podbook.notebook.endpoints.manage import HANDLERS

    words = parsing.split_line(line, "%endpoint")
    if not words or words[0] in HANDLERS or words[0] not in _endpoint_subcommands():
        return run_line(magics, "endpoint", line, _endpoint_subcommands(), HANDLERS)
    try:
        name, command = parsing.parse_line("endpoint", line, _endpoint_subcommands())
    except parsing.HelpShown:
        return None
    book = book_for(magics.session)
    with job_errors(f"endpoint {name}"):
        if name == "serve":
            result = endpoint_serve(book, command, magics.shell.user_ns)
        else:
            result = ENDPOINT_HANDLERS[name](book, command)
    return store_output(magics.shell, command.output, result)
