"""The bodies of ``%%runjob``, ``%job`` and ``%endpoint`` (``PodMagics`` delegates here).

Parse the line (and the cell), run the handler inside :func:`job_errors` so that every
failure is one line, store the result under ``-o NAME``, return it.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from podbook.notebook import parsing
from podbook.notebook.jobs import commands
from podbook.notebook.jobs.book import book_for
from podbook.notebook.jobs.errors import job_errors


@cache
def _runjob_parser() -> parsing.MagicArgumentParser:
    return commands.build_runjob_parser()


@cache
def _subcommands(magic: str) -> dict[str, parsing.Subcommand]:
    builders = {
        "job": commands.build_job_subcommands,
        "endpoint": commands.build_endpoint_subcommands,
    }
    return builders[magic]()


def _store(shell: Any, output: str | None, result: Any) -> Any:
    if output:
        shell.user_ns[output] = result
    return result


def runjob(magics: Any, line: str, cell: str | None) -> Any:
    """``%%runjob ENDPOINT [flags]`` with the job's input in the cell."""
    from podbook.notebook.jobs.cellbody import parse_job_input
    from podbook.notebook.jobs.handlers import run_job

    try:
        command = commands.parse_runjob_line(line, _runjob_parser())
    except parsing.HelpShown:
        return None
    job_input = parse_job_input(cell or "", magics.shell.user_ns)
    with job_errors("runjob"):
        result = run_job(book_for(magics.session), command, job_input)
    return _store(magics.shell, command.output, result)


def job(magics: Any, line: str) -> Any:
    """``%job status|cancel|retry JOB_ID --endpoint ID``."""
    from podbook.notebook.jobs.handlers import JOB_HANDLERS

    try:
        name, command = parsing.parse_line("job", line, _subcommands("job"))
    except parsing.HelpShown:
        return None
    with job_errors(f"job {name}"):
        result = JOB_HANDLERS[name](book_for(magics.session), command)
    return _store(magics.shell, command.output, result)


def endpoint(magics: Any, line: str) -> Any:
    """``%endpoint health|purge ID`` and ``%endpoint serve FUNC --name ID``."""
    from podbook.notebook.jobs.handlers import ENDPOINT_HANDLERS, endpoint_serve

    try:
        name, command = parsing.parse_line("endpoint", line, _subcommands("endpoint"))
    except parsing.HelpShown:
        return None
    book = book_for(magics.session)
    with job_errors(f"endpoint {name}"):
        if name == "serve":
            result = endpoint_serve(book, command, magics.shell.user_ns)
        else:
            result = ENDPOINT_HANDLERS[name](book, command)
    return _store(magics.shell, command.output, result)
