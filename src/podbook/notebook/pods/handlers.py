"""What each ``%pod`` and ``%cluster`` subcommand does: call the client, show the panel,
return the object.

One small function per subcommand, looked up in a dict by name (no if/elif chains).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from podbook.errors import GuardWarning
from podbook.notebook.pods.commands import (
    ClusterCommand,
    CreatePodCommand,
    ListPodsCommand,
    PodCommand,
)
from podbook.notebook.pods.views import (
    PodList,
    SshCommands,
    cluster_panel,
    cluster_static,
    pod_list_panel,
    pod_list_static,
    shown_pod,
    ssh_view,
)
from podbook.notebook.remote.handlers import REMOTE_HANDLERS, ssh_key_for_create

if TYPE_CHECKING:
    from podbook.api.clusters import Cluster
    from podbook.api.pods import Pod
    from podbook.notebook.dispatch import Handler
    from podbook.notebook.pods.logs import PodLogsCommand
    from podbook.notebook.session import NotebookSession


def create_pod(session: NotebookSession, command: CreatePodCommand) -> Pod:
    """``%pod create``: create the pod (armed with the pod guard when ``--idle-stop`` or
    ``--max-runtime`` is given), remember it for when this kernel ends, and show its live
    panel (``--ssh``: with a key of this machine registered first, see
    :func:`~podbook.notebook.remote.handlers.ssh_key_for_create`)."""
    ssh_key_for_create(session, command.fields)
    client = session.client
    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always", GuardWarning)
        pod = client.pods.create(command.request(), **command.guard)
    for note in notes:  # the guard's notes as plain lines; any other warning as it came
        if issubclass(note.category, GuardWarning):
            print(note.message)
        else:
            warnings.warn_explicit(note.message, note.category, note.filename, note.lineno)
    session.created(pod, client, command.on_exit)
    if note := session.runtime_note():
        print(note)
    if command.wait:  # the panel is live while the cell waits; the fresh record is returned
        shown_pod(session, pod)
        ready = client.pods.wait_for(pod, "RUNNING", ready=command.wait)
        session.presenter.mark_shown(ready)
        return ready
    return shown_pod(session, pod)


def list_pods(session: NotebookSession, command: ListPodsCommand) -> PodList:
    """``%pod list [--all]``."""
    pods = PodList(session.client.pods.list(include_cluster_pods=command.all))
    pods.include_cluster_pods = command.all
    return session.show(pods, lambda item: pod_list_panel(session, item), pod_list_static)


def show_pod(session: NotebookSession, command: PodCommand) -> Pod:
    """``%pod show ID``."""
    return shown_pod(session, session.client.pods.get(command.pod_id))


def pod_action(session: NotebookSession, command: PodCommand) -> Pod:
    """``%pod start|stop|restart ID``: the updated pod, shown live."""
    result = getattr(session.client.pods, command.verb)(command.pod_id)
    pod = result if result is not None else session.client.pods.get(command.pod_id)
    return shown_pod(session, pod)


def terminate_pod(session: NotebookSession, command: PodCommand) -> Pod:
    """``%pod terminate ID``: the pod's last state, marked TERMINATED (no SSH, no cost)."""
    from podbook.notebook.panels.data import terminated

    pod = session.client.pods.get(command.pod_id)
    session.client.pods.terminate(command.pod_id)
    gone = type(pod).model_validate({**pod.model_dump(mode="json"), **terminated({})})
    return shown_pod(session, gone)


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
    return session.show(result, ssh_view)


def pod_logs(session: NotebookSession, command: PodLogsCommand) -> object:
    """``%pod logs ID [--follow] [--tail N] [--source ...]`` (:mod:`.logs`)."""
    from podbook.notebook.pods.logs import show_logs

    return show_logs(session, command)


def show_cluster(session: NotebookSession, command: ClusterCommand) -> Cluster:
    """``%cluster show ID``: the cluster with its members, shown live."""
    cluster = session.client.clusters.get(command.cluster_id)
    return session.show(cluster, lambda item: cluster_panel(session, item), cluster_static)


POD_HANDLERS: dict[str, Handler] = {
    "create": create_pod,
    "list": list_pods,
    "show": show_pod,
    "ssh": pod_ssh,
    "start": pod_action,
    "stop": pod_action,
    "restart": pod_action,
    "terminate": terminate_pod,
    "logs": pod_logs,
    **REMOTE_HANDLERS,
}
CLUSTER_HANDLERS: dict[str, Handler] = {"show": show_cluster}
