"""What each subcommand does: call the client, show the panel, return the object.

One small function per subcommand, looked up in a dict by name (no if/elif chains).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from podbook.guard.settings import image_warning
from podbook.notebook.commands import (
    ClusterCommand,
    CreatePodCommand,
    ListPodsCommand,
    PodCommand,
)
from podbook.notebook.remote.handlers import REMOTE_HANDLERS, ssh_key_for_create
from podbook.notebook.session import NotebookSession, PodList, SshCommands

Handler = Callable[[NotebookSession, Any], Any]


def create_pod(session: NotebookSession, command: CreatePodCommand) -> Any:
    """``%pod create``: create the pod (armed with the pod guard when ``--idle-stop`` or
    ``--max-runtime`` is given), remember it for when this kernel ends, and show its live
    panel (``--ssh``: with a key of this machine registered first, see
    :func:`~podbook.notebook.remote.handlers.ssh_key_for_create`)."""
    ssh_key_for_create(session, command.body)
    client = session.client
    if command.guard and (note := image_warning(command.body.get("image"))):
        print(note)
    pod = client.pods.create(command.body, **command.guard)
    session.created(pod, client, command.on_exit)
    if note := session.runtime_note():
        print(note)
    if command.wait:  # the panel is live while the cell waits; the fresh record is returned
        session.show(pod, session.pod_panel, session.pod_static)
        ready = client.pods.wait_for(pod, "RUNNING", ready=command.wait)
        session.presenter.mark_shown(ready)
        return ready
    return session.show(pod, session.pod_panel, session.pod_static)


def list_pods(session: NotebookSession, command: ListPodsCommand) -> PodList:
    """``%pod list [--all]``."""
    from podbook.notebook.panels.data import records

    pods = PodList(records(session.client.pods.list(include_cluster_pods=command.all), "pods"))
    pods.include_cluster_pods = command.all
    return session.show(pods, session.pod_list_panel, session.pod_list_static)


def show_pod(session: NotebookSession, command: PodCommand) -> Any:
    """``%pod show ID``."""
    return session.show(
        session.client.pods.get(command.pod_id), session.pod_panel, session.pod_static
    )


def pod_action(session: NotebookSession, command: PodCommand) -> Any:
    """``%pod start|stop|restart ID``: the updated pod, shown live."""
    result = getattr(session.client.pods, command.verb)(command.pod_id)
    pod = result if result is not None else session.client.pods.get(command.pod_id)
    return session.show(pod, session.pod_panel, session.pod_static)


def terminate_pod(session: NotebookSession, command: PodCommand) -> Any:
    """``%pod terminate ID``: the pod's last state, marked TERMINATED (no SSH, no cost)."""
    from podbook.notebook.panels.data import terminated

    pod = session.client.pods.get(command.pod_id)
    session.client.pods.terminate(command.pod_id)
    if isinstance(pod, dict):
        return session.show(terminated(pod), session.pod_panel, session.pod_static)
    gone = type(pod).model_validate({**pod.model_dump(mode="json"), **terminated({})})
    return session.show(gone, session.pod_panel, session.pod_static)


def pod_ssh(session: NotebookSession, command: PodCommand) -> SshCommands:
    """``%pod ssh ID``: print the ready SSH commands (proxy and direct)."""
    from podbook.notebook.panels.data import ssh_commands, to_wire

    pod = to_wire(session.client.pods.get(command.pod_id))
    commands = ssh_commands(pod)
    notes = []
    unavailable = (pod.get("ssh") or {}).get("unavailable")
    if unavailable:
        notes.append(unavailable)
    elif "PUBLIC_KEY" not in (pod.get("env") or {}):
        notes.append(
            "no PUBLIC_KEY in the pod's env, so the pod refuses these logins: register your "
            "key (client.account.ssh_keys.put([...])), then create the pod with --ssh"
        )
    if "direct" not in commands:
        notes.append(
            "direct SSH (scp, rsync, port forwarding) needs 22/tcp in --ports and a RUNNING pod"
        )
    result = SshCommands(
        command.pod_id, commands.get("proxy"), commands.get("direct"), tuple(notes)
    )
    return session.show(result, session.ssh_view)


def show_cluster(session: NotebookSession, command: ClusterCommand) -> Any:
    """``%cluster show ID``: the cluster with its members, shown live."""
    cluster = session.client.clusters.get(command.cluster_id)
    return session.show(cluster, session.cluster_panel, session.cluster_static)


def _pod_logs(session: NotebookSession, command: Any) -> Any:
    """``%pod logs ID [--follow] [--tail N] [--source ...]`` (:mod:`podbook.notebook.podlogs`)."""
    from podbook.notebook.podlogs import show_logs

    return show_logs(session, command)


POD_HANDLERS: dict[str, Handler] = {
    "create": create_pod,
    "list": list_pods,
    "show": show_pod,
    "ssh": pod_ssh,
    "start": pod_action,
    "stop": pod_action,
    "restart": pod_action,
    "terminate": terminate_pod,
    "logs": _pod_logs,
    **REMOTE_HANDLERS,
}
CLUSTER_HANDLERS: dict[str, Handler] = {"show": show_cluster}
