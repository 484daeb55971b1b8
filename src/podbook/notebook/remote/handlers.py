"""What ``%pod exec|attach|detach|sh|push|pull|sync`` do, on :mod:`podbook.remote`."""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TextIO

from IPython.core.error import UsageError

from podbook.notebook.remote.commands import (
    AttachCommand,
    ExecCommand,
    ShellCommand,
    TransferCommand,
)
from podbook.notebook.remote.kernels import kernel_book
from podbook.remote.progress import TransferSummary

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable, Mapping

    from podbook.api.pods import Pod
    from podbook.notebook.dispatch import Handler
    from podbook.notebook.remote.transfers import SyncWatch
    from podbook.notebook.session import NotebookSession
    from podbook.remote import RemoteKernel


def _pod(session: NotebookSession, pod_id: str) -> Pod:
    return session.client.pods.get(pod_id)


def _where(pod: Pod) -> str:
    name = getattr(pod, "name", "") or ""
    return f"pod {name} ({pod.id})" if name else f"pod {pod.id}"


def run_in_pod(session: NotebookSession, command: ExecCommand) -> None:
    """``%%pod exec POD``: the cell in the pod's kernel, its outputs shown here as they come."""
    from podbook.notebook.remote.show import show, show_marker

    if not (command.cell or "").strip():
        raise UsageError(
            "%%pod exec: the cell is empty; write the code to run in the pod below "
            "`%%pod exec POD_ID`"
        )
    namespace = session.shell.user_ns
    missing = [name for name in command.inputs if name not in namespace]
    if missing:
        raise UsageError(
            f"%%pod exec --in: no variable {', '.join(missing)} in this notebook; define it "
            "first or remove it from --in"
        )
    pod = _pod(session, command.pod_id)
    where = _where(pod)
    book = kernel_book(session)
    kernel = book.kernel(pod, command.kernel)
    if command.attached:
        show_marker(where)
    if command.inputs:
        kernel.put(**{name: namespace[name] for name in command.inputs})
    show(kernel.execute(command.cell or "", timeout=command.timeout), where)
    if command.outputs:
        namespace.update(kernel.get(*command.outputs))


def attach(session: NotebookSession, command: AttachCommand) -> Attached | None:
    """``%pod attach POD`` and ``%pod detach``."""
    from podbook.notebook.remote import attach as attaching

    book = kernel_book(session)
    shell = session.shell
    if command.pod_id is None:
        gone = attaching.detach(shell)
        book.attached = None
        if gone is None:
            print("no pod was attached; cells run here")
            return None
        book.note(gone)
        print(f"detached from pod {gone}: cells run here again")
        return None
    pod = _pod(session, command.pod_id)
    kernel = book.kernel(pod, command.kernel)  # start it now: a wrong pod fails here, once
    previous = book.attached
    attaching.attach(shell, pod.id, command.kernel)
    book.attached = pod.id
    if previous and previous != pod.id:
        book.note(previous)
    book.note(pod.id, kernel=kernel.state)
    print(
        f"attached to {_where(pod)}: the following cells run in its kernel (cells starting "
        "with % or ! run here); %pod detach to come back"
    )
    return Attached(pod.id, kernel)


@dataclass(frozen=True)
class Attached:
    """What ``%pod attach`` returns: the pod and its :class:`~podbook.remote.RemoteKernel`
    (for ``put``/``get``/``interrupt`` from code). The cell already said what happened, so as
    a cell's value it shows nothing more."""

    pod_id: str
    kernel: RemoteKernel

    def _ipython_display_(self) -> None:
        return None


def run_shell(session: NotebookSession, command: ShellCommand) -> None:
    """``%%pod sh POD``: the cell as a shell script over the pod's direct SSH (a status other
    than 0 is an error naming it)."""
    from podbook.remote import run

    if not (command.cell or "").strip():
        raise UsageError("%%pod sh: the cell is empty; write the script below `%%pod sh POD_ID`")
    pod = _pod(session, command.pod_id)

    def write(stream: TextIO) -> Callable[[bytes | str], None]:
        def out(data: bytes | str) -> None:
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
            stream.write(text)
            stream.flush()

        return out

    status = run(
        pod,
        command.cell or "",
        client=session.client,
        on_stdout=write(sys.stdout),
        on_stderr=write(sys.stderr),
    )
    if status != 0:
        from podbook.notebook.errors import ServiceError

        raise ServiceError(f"the script exited with status {status} in {_where(pod)}")


def transfer(session: NotebookSession, command: TransferCommand) -> SyncWatch | ShownSummary:
    """``%pod push|pull|sync``: move files over SFTP, with a progress line."""
    from podbook.notebook.remote.transfers import SyncWatch, TransferView
    from podbook.remote import pull, push, sync, watch

    pod = _pod(session, command.pod_id)
    client = session.client
    book = kernel_book(session)
    remote = command.remote or "~"
    if command.verb == "push":
        title = f"push {command.local} → {pod.id}:{remote}"
    elif command.verb == "pull":
        title = f"pull {pod.id}:{remote} → {command.local}"
    else:
        title = f"sync {command.local} → {pod.id}:{remote}"
    book.note(pod.id, transfer={"title": title, "state": "running"})
    if command.watch:

        def run(stop: threading.Event, say: Callable[[str], None]) -> TransferSummary:
            return watch(
                pod,
                command.local,
                command.remote,
                delete=command.delete,
                stop=stop,
                client=client,
                on_sync=lambda summary: say(f"last change: {summary}"),
                progress=lambda progress: say(progress.line()),
            )

        return SyncWatch(title, run)
    view = TransferView(title)
    try:
        if command.verb == "push":
            summary = push(pod, command.local, command.remote, client=client, progress=view.update)
        elif command.verb == "pull":
            summary = pull(pod, remote, command.local, client=client, progress=view.update)
        else:
            summary = sync(
                pod,
                command.local,
                command.remote,
                delete=command.delete,
                client=client,
                progress=view.update,
            )
    except BaseException as exc:
        view.finish(
            "interrupted: run it again to resume"
            if isinstance(exc, KeyboardInterrupt)
            else "failed"
        )
        book.note(pod.id, transfer={"title": title, "state": "failed"})
        raise
    view.finish(summary)
    book.note(pod.id, transfer={"title": title, "state": "done", "summary": str(summary)})
    return ShownSummary(**{f.name: getattr(summary, f.name) for f in fields(summary)})


class ShownSummary(TransferSummary):
    """A transfer's summary whose line the cell already shows (its progress line ends with
    it): as a cell's value it shows nothing more."""

    def _ipython_display_(self) -> None:
        return None


def ssh_key_for_create(session: NotebookSession, fields: Mapping[str, Any]) -> None:
    """``%pod create --ssh``: make sure a key of this machine is on the account, so the pod
    accepts it (the user's ``~/.ssh/id_*``, else a podbook key made once); say so if it was
    added. ``fields``: the create request's fields, by their Python names."""
    if not fields.get("start_ssh") or "PUBLIC_KEY" in (fields.get("env") or {}):
        return
    from podbook.remote import ensure_key_registered

    registration = ensure_key_registered(session.client)
    if registration.added or registration.key.created:
        print(registration)


REMOTE_HANDLERS: dict[str, Handler] = {
    "exec": run_in_pod,
    "attach": attach,
    "detach": attach,
    "sh": run_shell,
    "push": transfer,
    "pull": transfer,
    "sync": transfer,
}
