"""The ``%pod`` and ``%cluster`` subcommands: their parsers and commands.

Each subcommand parses into a small frozen dataclass that its handler in
:mod:`~podbook.notebook.pods.handlers` receives. ``%pod logs`` is defined with its feature
(:mod:`~podbook.notebook.pods.logs`), the subcommands that work in the pod itself in
:mod:`podbook.notebook.remote.commands`.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from podbook.guard.settings import IDLE_ACTIONS
from podbook.notebook.kernel_exit.policy import ON_EXIT_CHOICES
from podbook.notebook.parsing import (
    Subcommand,
    add_output_argument,
    add_pod_id_argument,
    magic_parser,
    verb_subcommands,
)
from podbook.notebook.pods.logs import logs_subcommand
from podbook.notebook.remote.commands import remote_subcommands
from podbook.notebook.values import (
    CLOUD,
    COMMA_LIST,
    CPU,
    DURATION,
    ENV,
    GPU,
    PERSISTENT,
    PORTS,
    POSITIVE_INT,
    READY,
    VOLUME,
)

if TYPE_CHECKING:
    from podbook.api.pods import CreatePodRequest

POD_ACTIONS = ("start", "stop", "restart", "terminate")


@dataclass(frozen=True)
class CreatePodCommand:
    """``%pod create``: the fields of the create request the line gave (by their Python
    names), the pod guard's options (``idle_stop`` and ``max_runtime`` in seconds,
    ``idle_action``: only those given), what to do with the pod when this kernel ends
    (``None``: ``PodMagics.on_exit``), where to store the result."""

    fields: dict[str, Any]
    output: str | None = None
    guard: dict[str, Any] = field(default_factory=dict)
    on_exit: str | None = None
    wait: tuple[str, ...] = ()
    """``--wait ssh,jupyter``: the services to wait for before the cell ends."""

    def request(self) -> CreatePodRequest:
        """The create request (:class:`~podbook.errors.InvalidRequest` for a value the
        service would refuse, before anything is sent)."""
        from podbook.api.pods import CreatePodRequest
        from podbook.notebook.request import request_model

        return request_model(CreatePodRequest, **self.fields)


@dataclass(frozen=True)
class ListPodsCommand:
    """``%pod list [--all]``: ``all`` includes cluster member pods."""

    all: bool = False
    output: str | None = None


@dataclass(frozen=True)
class PodCommand:
    """A command on one pod: show, ssh, or one of the lifecycle actions."""

    verb: str
    pod_id: str
    output: str | None = None


@dataclass(frozen=True)
class ClusterCommand:
    """``%cluster show ID``."""

    verb: str
    cluster_id: str
    output: str | None = None


# ---------------------------------------------------------------------------- argument groups


def add_compute_arguments(parser: argparse.ArgumentParser) -> None:
    """``--gpu`` / ``--cpu`` (exactly one) and the CUDA constraints."""
    group = parser.add_argument_group("compute (exactly one of --gpu / --cpu)")
    shape = group.add_mutually_exclusive_group()
    shape.add_argument("--gpu", type=GPU, metavar="ID[:COUNT]", help="GPU type and count")
    shape.add_argument("--cpu", type=CPU, metavar="FLAVOR:VCPUS", help="CPU flavor and vCPUs")
    cuda = group.add_mutually_exclusive_group()
    cuda.add_argument(
        "--cuda", type=COMMA_LIST, metavar="X.Y[,X.Y]", help="allowed CUDA versions (exact)"
    )
    cuda.add_argument("--min-cuda", metavar="X[.Y]", help="lowest acceptable CUDA version")


def add_container_arguments(parser: argparse.ArgumentParser) -> None:
    """Image, template and the container's configuration."""
    group = parser.add_argument_group("container")
    group.add_argument("--image", help="container image, e.g. runpod/pytorch")
    group.add_argument("--template", metavar="TEMPLATE_ID", help="base the pod on a template")
    group.add_argument("--name", help="pod name (default: a generated readable name)")
    group.add_argument("--disk", type=POSITIVE_INT, metavar="GB", help="container disk in GB")
    group.add_argument("--ports", type=PORTS, metavar="P/PROTO,...", help="e.g. 8888/http,22/tcp")
    group.add_argument("--env", type=ENV, action="append", metavar="KEY=VALUE", help="repeatable")
    group.add_argument("--registry", metavar="CREDENTIAL_ID", help="registry credential ID")
    group.add_argument("--args", dest="container_args", metavar="ARGS", help="entrypoint args")


def add_storage_arguments(parser: argparse.ArgumentParser) -> None:
    """``--volume`` (network volume) or ``--persistent`` (host-local), not both."""
    group = parser.add_argument_group("storage").add_mutually_exclusive_group()
    group.add_argument("--volume", type=VOLUME, metavar="ID:PATH", help="network volume mount")
    group.add_argument(
        "--persistent", type=PERSISTENT, metavar="SIZE:PATH", help="host-local mount (GPU only)"
    )


def add_placement_arguments(parser: argparse.ArgumentParser) -> None:
    """Cloud tier, data centers, networking and the create-time flags."""
    group = parser.add_argument_group("placement and access")
    group.add_argument("--cloud", type=CLOUD, metavar="SECURE|COMMUNITY")
    group.add_argument(
        "--dc", type=COMMA_LIST, action="append", metavar="DC_ID[,DC_ID]", help="repeatable"
    )
    group.add_argument("--global-networking", action="store_true", help="private global IP")
    group.add_argument("--ssh", action="store_true", help="inject your SSH public keys")
    group.add_argument("--jupyter", action="store_true", help="inject a JUPYTER_PASSWORD")


_COST_FLAGS: tuple[tuple[str, Any, tuple[str, ...] | None, str], ...] = (
    ("--idle-stop", DURATION, None, "stop the pod after this long idle, e.g. 30m"),
    ("--idle-action", str.lower, IDLE_ACTIONS, "what the guard does then (default: stop)"),
    ("--max-runtime", DURATION, None, "stop the pod this long after it started, e.g. 4h"),
    ("--on-exit", str.lower, ON_EXIT_CHOICES, "when this kernel ends (default: PodMagics.on_exit)"),
)


def add_cost_arguments(parser: argparse.ArgumentParser) -> None:
    """The pod guard inside the pod (idle stop, time limit, what it does then) and what
    happens to the pod when this kernel ends."""
    group = parser.add_argument_group("cost control (see docs/cost-control.md)")
    for flag, kind, choices, help_text in _COST_FLAGS:
        metavar = None if choices else "DURATION"
        group.add_argument(flag, type=kind, choices=choices, metavar=metavar, help=help_text)


# ---------------------------------------------------------------------------- builders

_ADJECTIVES = (
    "amber", "brave", "calm", "daring", "eager", "fuzzy", "gentle", "humble", "jolly",
    "keen", "lucky", "mellow", "nimble", "plucky", "quiet", "rapid", "sunny", "tidy",
)  # fmt: skip
_NOUNS = (
    "otter", "falcon", "badger", "heron", "lynx", "marmot", "newt", "orca", "panda",
    "quokka", "raven", "salmon", "tapir", "walrus", "yak", "zebra", "gecko", "ibis",
)  # fmt: skip


def generate_pod_name(rng: random.Random | None = None) -> str:
    """A readable default pod name such as ``brave-otter-417``."""
    rng = rng or random.Random()
    return f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}-{rng.randrange(100, 1000)}"


def _create_fields(ns: argparse.Namespace) -> dict[str, Any]:
    """The create request's fields the line gave (``None``: not given)."""
    if ns.gpu is None and ns.cpu is None:
        raise UsageError(
            '%pod create: missing --gpu or --cpu; add e.g. --gpu "NVIDIA GeForce RTX 4090" '
            "or --cpu cpu3c:2."
        )
    if ns.image is None and ns.template is None:
        raise UsageError("%pod create: missing --image; add e.g. --image runpod/pytorch.")
    fields = {
        "name": ns.name or generate_pod_name(),
        "image": ns.image,
        "template_id": ns.template,
        "gpu": ns.gpu,
        "cpu": ns.cpu,
        "disk": ns.disk,
        "ports": ns.ports,
        "env": dict(ns.env) if ns.env else None,
        "registry": ns.registry,
        "args": ns.container_args,
        "cloud": ns.cloud,
        "data_center_ids": [dc for group in ns.dc for dc in group] if ns.dc else None,
        "allowed_cuda_versions": ns.cuda,
        "min_cuda_version": ns.min_cuda,
        "global_networking": ns.global_networking or None,
        "start_ssh": ns.ssh or None,
        "start_jupyter": ns.jupyter or None,
    }
    if ns.volume is not None:
        fields["mounts"] = {"network": [ns.volume]}
    elif ns.persistent is not None:
        fields["mounts"] = {"persistent": ns.persistent}
    return {name: value for name, value in fields.items() if value is not None}


def _guard_options(ns: argparse.Namespace) -> dict[str, Any]:
    """The guard keywords of ``client.pods.create`` that the line gave."""
    if ns.idle_action is not None and ns.idle_stop is None and ns.max_runtime is None:
        raise UsageError(
            "%pod create: --idle-action needs --idle-stop or --max-runtime; add e.g. "
            "--idle-stop 30m."
        )
    options = {"idle_stop": ns.idle_stop, "max_runtime": ns.max_runtime}
    options["idle_action"] = ns.idle_action
    return {key: value for key, value in options.items() if value is not None}


def _create_command(ns: argparse.Namespace) -> CreatePodCommand:
    return CreatePodCommand(
        fields=_create_fields(ns),
        output=ns.output,
        guard=_guard_options(ns),
        on_exit=ns.on_exit,
        wait=ns.wait or (),
    )


def add_wait_argument(parser: argparse.ArgumentParser) -> None:
    """``--wait ssh,jupyter``: the cell ends once the pod runs and these answer."""
    parser.add_argument(
        "--wait",
        type=READY,
        metavar="SERVICES",
        help="wait until the pod runs and these answer: ssh, jupyter, PORT/http, PORT/tcp "
        "(comma-separated)",
    )


def build_pod_subcommands() -> dict[str, Subcommand]:
    """The ``%pod`` subcommands, by name."""
    create = magic_parser("%pod create", "Create a GPU or CPU pod and show its live panel.")
    for add in (
        add_compute_arguments,
        add_container_arguments,
        add_storage_arguments,
        add_placement_arguments,
        add_cost_arguments,
        add_wait_argument,
        add_output_argument,
    ):
        add(create)

    listing = magic_parser("%pod list", "List your pods in a live panel.")
    listing.add_argument("--all", action="store_true", help="include cluster member pods")
    add_output_argument(listing)

    commands = {
        "create": Subcommand(create, _create_command, "create a pod"),
        "list": Subcommand(
            listing, lambda ns: ListPodsCommand(all=ns.all, output=ns.output), "list pods"
        ),
    }
    commands["logs"] = logs_subcommand()
    commands.update(remote_subcommands())
    helps = {"show": "show one pod's live panel", "ssh": "print the ready SSH commands"}
    helps.update({action: f"{action} a pod" for action in POD_ACTIONS})
    commands.update(
        verb_subcommands(
            "pod",
            helps,
            lambda parser, verb: add_pod_id_argument(parser),
            lambda verb, ns: PodCommand(verb=verb, pod_id=ns.pod_id, output=ns.output),
        )
    )
    return commands


def build_cluster_subcommands() -> dict[str, Subcommand]:
    """The ``%cluster`` subcommands, by name."""
    show = magic_parser("%cluster show", "Show a cluster's live panel: members, ranks, roles.")
    show.add_argument("cluster_id", metavar="CLUSTER_ID", help="the cluster's ID")
    add_output_argument(show)
    return {
        "show": Subcommand(
            show,
            lambda ns: ClusterCommand(verb="show", cluster_id=ns.cluster_id, output=ns.output),
            "show a cluster",
        )
    }
