"""Parse magic lines into small typed commands.

Each subcommand has an argparse parser built from reusable argument groups. The line is
split with :func:`shlex.split` (quotes work, ``str.split`` is never used) and a parse error
becomes one :class:`UsageError` line that names the argument and the fix.
"""

from __future__ import annotations

import argparse
import random
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from IPython.core.error import UsageError

from podbook.notebook.values import (
    CLOUD,
    COMMA_LIST,
    CPU,
    ENV,
    GPU,
    NAME,
    PERSISTENT,
    PORTS,
    POSITIVE_INT,
    VOLUME,
)

POD_ACTIONS = ("start", "stop", "restart", "terminate")
CATALOG_KINDS = ("gpus", "cpus", "datacenters")


class HelpShown(Exception):
    """Raised after ``--help`` printed the help text; the magic then returns ``None``."""


class MagicArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser that raises :class:`UsageError` instead of exiting the kernel."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("add_help", True)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        message = echo_safe(_rephrase(message))
        raise UsageError(f"{self.prog}: {message}. See `{self.prog} --help`.")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:
            raise HelpShown()
        self.error(message or "invalid arguments")


_LONG_RUN = re.compile(r"[^\s'\"]{81,}")


def echo_safe(text: str, limit: int = 300) -> str:
    """``text`` that echoes user input, made fit for a one-line error: control characters
    escaped, any run of more than 80 characters cut to 77 + "…", at most ``limit`` long."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    text = _LONG_RUN.sub(lambda match: match.group()[:77] + "…", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _rephrase(message: str) -> str:
    """Make argparse's messages name the argument first."""
    if message.startswith("unrecognized arguments: "):
        extra = message.removeprefix("unrecognized arguments: ")
        if extra.startswith("-"):
            return f"unknown argument {extra}"
        return f"unexpected words {extra!r}; quote values that contain spaces"
    if message.startswith("the following arguments are required: "):
        return f"missing {message.removeprefix('the following arguments are required: ')}"
    return message


def split_line(line: str, prog: str) -> list[str]:
    """Split a magic line like a shell would; unbalanced quotes are a usage error."""
    try:
        return shlex.split(line)
    except ValueError as err:
        raise UsageError(f"{prog}: {echo_safe(str(err))} in the line; close the quote.") from None


# ---------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class CreatePodCommand:
    """``%pod create``: the request body in wire form, plus where to store the result."""

    body: dict[str, Any]
    output: str | None = None


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


@dataclass(frozen=True)
class CatalogCommand:
    """``%catalog gpus|cpus|datacenters``."""

    kind: str
    output: str | None = None


@dataclass
class Subcommand:
    """A subcommand: its parser and the function that turns parsed args into a command."""

    parser: MagicArgumentParser
    build: Callable[[argparse.Namespace], Any]
    help: str = ""


# ---------------------------------------------------------------------------- argument groups


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    """``-o NAME``: also store the result in the user namespace."""
    parser.add_argument(
        "-o", "--output", type=NAME, metavar="NAME", help="store the result in variable NAME"
    )


def add_pod_id_argument(parser: argparse.ArgumentParser) -> None:
    """The positional pod ID."""
    parser.add_argument("pod_id", metavar="POD_ID", help="the pod's ID (see %%pod list)")


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


def _create_body(ns: argparse.Namespace) -> dict[str, Any]:
    if ns.gpu is None and ns.cpu is None:
        raise UsageError(
            '%pod create: missing --gpu or --cpu; add e.g. --gpu "NVIDIA GeForce RTX 4090" '
            "or --cpu cpu3c:2."
        )
    if ns.image is None and ns.template is None:
        raise UsageError("%pod create: missing --image; add e.g. --image runpod/pytorch.")
    body: dict[str, Any] = {"name": ns.name or generate_pod_name()}
    optional = {
        "image": ns.image,
        "templateId": ns.template,
        "gpu": ns.gpu,
        "cpu": ns.cpu,
        "disk": ns.disk,
        "ports": ns.ports,
        "env": dict(ns.env) if ns.env else None,
        "registry": ns.registry,
        "args": ns.container_args,
        "cloud": ns.cloud,
        "dataCenterIds": [dc for group in ns.dc for dc in group] if ns.dc else None,
        "allowedCudaVersions": ns.cuda,
        "minCudaVersion": ns.min_cuda,
        "globalNetworking": ns.global_networking or None,
        "startSsh": ns.ssh or None,
        "startJupyter": ns.jupyter or None,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    if ns.volume is not None:
        body["mounts"] = {"network": [ns.volume]}
    elif ns.persistent is not None:
        body["mounts"] = {"persistent": ns.persistent}
    return body


def _parser(prog: str, description: str) -> MagicArgumentParser:
    return MagicArgumentParser(prog=prog, description=description)


def build_pod_subcommands() -> dict[str, Subcommand]:
    """The ``%pod`` subcommands, by name."""
    create = _parser("%pod create", "Create a GPU or CPU pod and show its live panel.")
    for add in (
        add_compute_arguments,
        add_container_arguments,
        add_storage_arguments,
        add_placement_arguments,
        add_output_argument,
    ):
        add(create)

    listing = _parser("%pod list", "List your pods in a live panel.")
    listing.add_argument("--all", action="store_true", help="include cluster member pods")
    add_output_argument(listing)

    commands = {
        "create": Subcommand(
            create,
            lambda ns: CreatePodCommand(body=_create_body(ns), output=ns.output),
            "create a pod",
        ),
        "list": Subcommand(
            listing, lambda ns: ListPodsCommand(all=ns.all, output=ns.output), "list pods"
        ),
    }
    from podbook.notebook.podlogs import logs_subcommand

    commands["logs"] = logs_subcommand()
    helps = {"show": "show one pod's live panel", "ssh": "print the ready SSH commands"}
    helps.update({action: f"{action} a pod" for action in POD_ACTIONS})
    for verb, help_text in helps.items():
        parser = _parser(f"%pod {verb}", help_text.capitalize() + ".")
        add_pod_id_argument(parser)
        add_output_argument(parser)
        commands[verb] = Subcommand(
            parser,
            lambda ns, verb=verb: PodCommand(verb=verb, pod_id=ns.pod_id, output=ns.output),
            help_text,
        )
    return commands


def build_cluster_subcommands() -> dict[str, Subcommand]:
    """The ``%cluster`` subcommands, by name."""
    show = _parser("%cluster show", "Show a cluster's live panel: members, ranks, roles.")
    show.add_argument("cluster_id", metavar="CLUSTER_ID", help="the cluster's ID")
    add_output_argument(show)
    return {
        "show": Subcommand(
            show,
            lambda ns: ClusterCommand(verb="show", cluster_id=ns.cluster_id, output=ns.output),
            "show a cluster",
        )
    }


def build_catalog_subcommands() -> dict[str, Subcommand]:
    """The ``%catalog`` subcommands, by name."""
    commands = {}
    for kind in CATALOG_KINDS:
        if kind == "gpus":
            from podbook.notebook.gpufinder import gpu_subcommand

            commands[kind] = gpu_subcommand()
            continue
        parser = _parser(f"%catalog {kind}", f"Show the catalog of {kind}.")
        add_output_argument(parser)
        commands[kind] = Subcommand(
            parser, lambda ns, kind=kind: CatalogCommand(kind=kind, output=ns.output), kind
        )
    return commands


def parse_line(magic: str, line: str, subcommands: dict[str, Subcommand]) -> tuple[str, Any]:
    """Parse ``%<magic> <line>`` into ``(subcommand name, command)``.

    Raises :class:`UsageError` for any mistake and :class:`HelpShown` after printing help.
    """
    words = split_line(line, f"%{magic}")
    names = ", ".join(subcommands)
    if not words or words[0] in ("-h", "--help", "help"):
        if words:
            print(usage_summary(magic, subcommands))
            raise HelpShown()
        raise UsageError(f"%{magic}: missing subcommand; use one of: {names}.")
    name, rest = words[0], words[1:]
    sub = subcommands.get(name)
    if sub is None:
        name = echo_safe(repr(name), 100)
        raise UsageError(f"%{magic}: unknown subcommand {name}; use one of: {names}.")
    return name, sub.build(sub.parser.parse_args(rest))


def usage_summary(magic: str, subcommands: dict[str, Subcommand]) -> str:
    """A short listing of the subcommands of ``%<magic>``."""
    rows = [f"  %{magic} {name:<10} {sub.help}" for name, sub in subcommands.items()]
    return "\n".join([f"Usage: %{magic} SUBCOMMAND [--help]", *rows])
