"""What a pod's kernel sends, shown through IPython's own display machinery.

Streams go to ``sys.stdout``/``sys.stderr`` (the cell's stream outputs), displays and results
to :func:`IPython.display.publish_display_data` with every MIME type the remote sent (so a
PNG, an HTML table or a widget's text fallback render as if made here), ``clear_output`` to
:func:`IPython.display.clear_output`, and an error to :class:`podbook.errors.RemoteExecutionError`,
which IPython prints with the remote traceback.
"""

from __future__ import annotations

import sys
from html import escape
from typing import Any

from IPython.display import clear_output, publish_display_data

from podbook.remote.outputs import (
    ClearOutput,
    DisplayData,
    ExecuteDone,
    ExecuteError,
    ExecuteResult,
    Reconnected,
    StreamText,
    UpdateDisplayData,
)


def show_marker(where: str) -> None:
    """The small line that says a cell ran in a pod (``%pod attach``)."""
    text = f"▸ ran in {where}"
    publish_display_data(
        {
            "text/plain": text,
            "text/html": f'<div class="podbook-remote-marker" style="color:#57606a;'
            f'font-size:85%">{escape(text)}</div>',
        }
    )


def show(outputs: Any, where: str) -> ExecuteDone | None:
    """Show each output of an execution as it arrives; the end (or None if none came).

    Raises :class:`podbook.errors.RemoteExecutionError` when the code failed; a
    ``KeyboardInterrupt`` raised meanwhile has already interrupted the remote kernel."""
    done: ExecuteDone | None = None
    for output in outputs:
        if isinstance(output, StreamText):
            stream = sys.stderr if output.name == "stderr" else sys.stdout
            stream.write(output.text)
            stream.flush()
        elif isinstance(output, UpdateDisplayData):
            publish_display_data(
                _shown(output.data), output.metadata, transient=_transient(output), update=True
            )
        elif isinstance(output, DisplayData):
            publish_display_data(_shown(output.data), output.metadata, transient=_transient(output))
        elif isinstance(output, ExecuteResult):
            publish_display_data(_shown(output.data), output.metadata)
        elif isinstance(output, ClearOutput):
            clear_output(wait=output.wait)
        elif isinstance(output, Reconnected):
            print(
                f"podbook: the connection to the kernel of {where} broke and was opened again "
                f"after {output.downtime:.1f} s; the code ran on meanwhile",
                file=sys.stderr,
            )
        elif isinstance(output, ExecuteError):
            continue  # the end says it again, and raises it
        elif isinstance(output, ExecuteDone):
            done = output
    if done is not None:
        done.raise_for_error(where)
    return done


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
"""A remote widget's view: its model lives in the pod's kernel, which this front end cannot
reach, so the widget's text fallback is shown instead."""


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    return {kind: value for kind, value in data.items() if kind != WIDGET_VIEW}


def _transient(output: DisplayData) -> dict[str, Any] | None:
    return {"display_id": output.display_id} if output.display_id else None
