"""``%pod logs ID [--follow] [--tail N] [--source container|system]``.

Without ``--follow`` the magic prints the pod's recent lines and returns them (a
:class:`PodLogLines`, a list of :class:`~podbook.api.logs.LogLine`). With ``--follow`` it
shows the pod's live panel opened on its Logs tab, which follows new lines on a background
thread (:mod:`podbook.notebook.pods.logfollow`) while the tab is open, and returns the pod.
Without a kernel's front end (terminal IPython) or with panels off, ``--follow`` prints new
lines until the pod is terminated or the user interrupts (Ctrl-C).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from podbook.notebook.display import StaticView
from podbook.notebook.parsing import (
    MagicArgumentParser,
    Subcommand,
    add_output_argument,
    add_pod_id_argument,
)

if TYPE_CHECKING:
    from podbook.api.pods import Pod
    from podbook.client import Client
    from podbook.notebook.session import NotebookSession

TAIL_MAX = 5000  # as podbook.api.logs (not imported here: %load_ext stays light)


@dataclass(frozen=True)
class PodLogsCommand:
    """``%pod logs``: which pod, how much backfill, which source, follow or not."""

    pod_id: str
    follow: bool = False
    tail: int | None = None
    source: str | None = None
    output: str | None = None


def _tail(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= TAIL_MAX:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {TAIL_MAX}")
    return value


def logs_subcommand() -> Subcommand:
    """The ``%pod logs`` parser and command builder."""
    parser = MagicArgumentParser(
        prog="%pod logs", description="Print a pod's log, or follow it live in its panel."
    )
    add_pod_id_argument(parser)
    parser.add_argument(
        "--follow", "-f", action="store_true", help="follow new lines live (Logs tab)"
    )
    parser.add_argument(
        "--tail", type=_tail, metavar="N", help=f"lines of history, 0..{TAIL_MAX} (default 100)"
    )
    parser.add_argument(
        "--source", choices=("container", "system"), help="one log source (default both)"
    )
    add_output_argument(parser)
    return Subcommand(
        parser,
        lambda ns: PodLogsCommand(ns.pod_id, ns.follow, ns.tail, ns.source, ns.output),
        "print or follow a pod's log",
    )


class PodLogLines(list):
    """The result of ``%pod logs ID``: the lines, shown as a block of text."""

    pod_id: str = ""

    def __str__(self) -> str:
        return "\n".join(str(line) for line in self) or f"No log lines for {self.pod_id} yet."


def log_lines_view(lines: PodLogLines) -> StaticView:
    """The lines as text and as an HTML ``pre`` (also what a saved notebook keeps)."""
    rows = "".join(
        f'<div class="podbook-log-line" data-source="{escape(line.source)}">'
        f'<span class="podbook-log-ts">{escape(line.ts)}</span> {escape(line.line)}</div>'
        for line in lines
    )
    html = (
        f'<pre class="podbook-logs" data-pod-id="{escape(lines.pod_id)}" '
        f'data-lines="{len(lines)}">{rows or escape(str(lines))}</pre>'
    )
    return StaticView(str(lines), html)


def show_logs(session: NotebookSession, command: PodLogsCommand) -> Pod | PodLogLines:
    """Run ``%pod logs``."""
    from podbook.notebook.pods.views import pod_panel

    client = session.client
    if command.follow:
        pod = client.pods.get(command.pod_id)
        if session.panels_on() and getattr(session.shell, "kernel", None) is not None:
            panel = pod_panel(session, pod)
            panel.open_logs(tail=command.tail, source=command.source)
            session.presenter.present(pod, panel)
            return pod
        _print_following(client, command)
        return pod
    lines = PodLogLines(client.pods.logs(command.pod_id, tail=command.tail, source=command.source))
    lines.pod_id = command.pod_id
    return session.show(lines, log_lines_view)


def _print_following(client: Client, command: PodLogsCommand) -> None:
    """Print lines as they come until the pod is terminated or the user interrupts."""
    stream = client.pods.logs(command.pod_id, tail=command.tail, source=command.source, follow=True)
    try:
        for line in stream:
            print(line, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        stream.close()
