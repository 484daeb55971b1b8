"""``%pod attach POD``: every following cell runs in the pod's kernel (as ipyparallel's
``%autopx``), until ``%pod detach``.

A cleanup input transformer (it sees a cell's raw lines before IPython reads its magics)
puts ``%%pod exec POD --attached`` above each cell. A cell whose first line starts with
``%`` or ``!`` runs here as it is: ``%pod detach``, ``%pod push``, ``%%runjob`` and the other
magics keep working while attached.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from IPython.core.interactiveshell import InteractiveShell

_MARK = "__podbook_attached__"


def _transformer(pod_id: str, kernel: str) -> Callable[[list[str]], list[str]]:
    header = f"%%pod exec {shlex.quote(pod_id)} --kernel {shlex.quote(kernel)} --attached\n"

    def to_pod(lines: list[str]) -> list[str]:
        first = next((line.strip() for line in lines if line.strip()), "")
        if not first or first.startswith(("%", "!")):
            return lines
        return [header, *lines]

    setattr(to_pod, _MARK, pod_id)
    return to_pod


def attach(shell: InteractiveShell, pod_id: str, kernel: str) -> None:
    """Run the following cells of ``shell`` in ``pod_id``'s kernel (replacing an attach)."""
    detach(shell)
    shell.input_transformers_cleanup.append(_transformer(pod_id, kernel))


def detach(shell: InteractiveShell) -> str | None:
    """Run cells here again; the pod that was attached, if any."""
    kept, gone = [], None
    for transform in shell.input_transformers_cleanup:
        if hasattr(transform, _MARK):
            gone = getattr(transform, _MARK)
        else:
            kept.append(transform)
    shell.input_transformers_cleanup[:] = kept
    return gone
