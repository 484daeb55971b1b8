"""What each job command does: call the client, show the panel, return the object.

One small function per command, looked up in a dict by name (no if/elif chains). Each
returns what a user assigns: ``%%runjob`` and ``%job ...`` a client ``Job``,
``%endpoint health`` an :class:`EndpointHealth`, ``purge`` the service's answer, ``serve``
the running worker's handle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from podbook.notebook.endpoints.book import EndpointHealth, JobBook
from podbook.notebook.endpoints.commands import (
    EndpointCommand,
    JobCommand,
    RunJobCommand,
    ServeCommand,
)

FOLLOW_BY_MODE = {"stream": "stream", "async": "poll", "sync": "poll"}


def show_job(book: JobBook, job: Any, follow: str) -> Any:
    """Display ``job``'s live panel (following it by ``follow``) and return ``job``."""
    book.job_panel(job, follow=follow)
    return book.session.show(job, book.job_view, book.job_static)


def run_job(book: JobBook, command: RunJobCommand, job_input: dict[str, Any]) -> Any:
    """``%%runjob``: submit the cell's input, show the job's panel, return the ``Job``."""
    endpoint = book.session.client.endpoint(command.endpoint_id)
    if command.mode == "sync":
        job = endpoint.runsync(
            job_input,
            wait=command.wait_ms,
            webhook=command.webhook,
            policy=command.policy or None,
        )
    else:
        job = endpoint.run(job_input, webhook=command.webhook, policy=command.policy or None)
    return show_job(book, job, FOLLOW_BY_MODE[command.mode])


def _on_job(
    book: JobBook, command: JobCommand, update: Callable[[Any, Any], None], follow: str
) -> Any:
    """Call the job's method named by the command's verb, hand the record it returns to the
    job's panel if one is shown (``update``), and show the job (``follow``: how)."""
    job = book.session.client.endpoint(command.endpoint_id).job(command.job_id)
    record = getattr(job, command.verb)()
    panel = book.known_panel(job.endpoint_id, job.id)
    if panel is not None:
        update(panel, record)
    return show_job(book, job, follow)


def job_status(book: JobBook, command: JobCommand) -> Any:
    """``%job status``: the job's current record in its panel (followed until it ends)."""

    def update(panel: Any, record: Any) -> None:
        if not panel.streaming:
            panel.apply_queue(record)

    return _on_job(book, command, update, "poll")


def job_cancel(book: JobBook, command: JobCommand) -> Any:
    """``%job cancel``: cancel a queued or running job; its panel shows CANCELLED."""
    return _on_job(book, command, lambda panel, record: panel.apply_queue(record), "poll")


def job_retry(book: JobBook, command: JobCommand) -> Any:
    """``%job retry``: queue a FAILED/TIMED_OUT job again and stream it in its panel."""
    return _on_job(book, command, lambda panel, record: panel.restart(record), "stream")


def endpoint_health(book: JobBook, command: EndpointCommand) -> EndpointHealth:
    """``%endpoint health``: job and worker counts and the worker timeline, in a panel that
    keeps refreshing."""
    from podbook.notebook.endpoints.polling import read_workers

    client = book.session.client
    health = client.endpoint(command.endpoint_id).health()
    report = EndpointHealth(command.endpoint_id, health, read_workers(client, command.endpoint_id))
    return book.session.show(report, book.health_panel, book.health_static)


def endpoint_purge(book: JobBook, command: EndpointCommand) -> Any:
    """``%endpoint purge``: remove the queued jobs; says how many."""
    result = book.session.client.endpoint(command.endpoint_id).purge_queue()
    removed = getattr(result, "removed", None)
    print(f"Removed {removed} queued job(s) from {command.endpoint_id}; running jobs go on.")
    return result


def endpoint_serve(book: JobBook, command: ServeCommand, namespace: Mapping[str, Any]) -> Any:
    """``%endpoint serve FUNC --name ID``: serve a handler of the notebook on a background
    worker thread; returns the worker's handle (``.stop()``). Run again on the same endpoint,
    it swaps the handler for the next job (hot reload); with ``--watch FILE.py[:FUNC]`` the
    handler comes from a file, reloaded whenever it changes
    (:mod:`~podbook.notebook.endpoints.serving`). With ``--openai``, FUNC is a generator of text
    pieces served as an OpenAI-compatible endpoint; with ``--lb`` the name is an app
    (:func:`~podbook.notebook.endpoints.lbserve.endpoint_serve_app`)."""
    if command.lb:
        from podbook.notebook.endpoints.lbserve import endpoint_serve_app

        return endpoint_serve_app(book, command, namespace)
    from podbook.notebook.endpoints.serving import endpoint_serve_file, endpoint_serve_function

    if command.watch is not None:
        return endpoint_serve_file(book, command)
    return endpoint_serve_function(book, command, namespace)


Handler = Callable[[JobBook, Any], Any]
JOB_HANDLERS: dict[str, Handler] = {
    "status": job_status,
    "cancel": job_cancel,
    "retry": job_retry,
}
ENDPOINT_HANDLERS: dict[str, Handler] = {
    "health": endpoint_health,
    "purge": endpoint_purge,
}
