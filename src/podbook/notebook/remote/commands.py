"""The parsers and commands of ``%pod exec|attach|detach|sh|push|pull|sync``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from podbook.notebook.parsing import Subcommand, add_pod_id_argument, magic_parser
from podbook.notebook.values import POSITIVE_SECONDS, VARIABLES

CELL_SUBCOMMANDS = ("exec", "sh")
"""The subcommands whose cell body is their input (``%%pod exec``, ``%%pod sh``)."""


@dataclass
class ExecCommand:
    """``%%pod exec POD``: run the cell in the pod's kernel."""

    pod_id: str
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    timeout: float | None = None
    kernel: str = "python3"
    cell: str | None = None
    attached: bool = False  # a cell of %pod attach: marked as run in the pod


@dataclass
class AttachCommand:
    """``%pod attach POD`` / ``%pod detach``."""

    pod_id: str | None = None
    kernel: str = "python3"


@dataclass
class ShellCommand:
    """``%%pod sh POD``: run the cell as a shell script over the pod's direct SSH."""

    pod_id: str
    cell: str | None = None


@dataclass
class TransferCommand:
    """``%pod push|pull|sync``: what moves where."""

    verb: str
    pod_id: str
    local: str
    remote: str | None
    delete: bool = False
    watch: bool = False


def _pod_path(text: str, prog: str) -> tuple[str, str | None]:
    """``POD[:PATH]`` → ``(pod id, path or None)``."""
    pod_id, sep, path = text.partition(":")
    if not pod_id:
        raise argparse.ArgumentTypeError(f"{text!r} names no pod; write POD_ID:PATH")
    return pod_id, (path or None) if sep else None


def _exec_command(ns: argparse.Namespace) -> ExecCommand:
    return ExecCommand(
        pod_id=ns.pod_id,
        inputs=list(ns.inputs or []),
        outputs=list(ns.outputs or []),
        timeout=ns.timeout,
        kernel=ns.kernel,
        attached=ns.attached,
    )


_TRANSFER_HELP = {
    "push": "Copy a local file or folder to the pod over SFTP (its direct SSH endpoint), "
    "resumably, with a progress bar. REMOTE defaults to the pod's working directory.",
    "pull": "Copy a file or folder of the pod here over SFTP, resumably, with progress.",
    "sync": "Make a folder of the pod match a local folder: only files whose size or "
    "modification time changed move; .podbookignore rules are honoured.",
}


def _transfer(verb: str) -> Subcommand:
    prog = f"%pod {verb}"
    parser = magic_parser(prog, _TRANSFER_HELP[verb])
    if verb == "push":
        parser.add_argument("local", metavar="LOCAL", help="a local file or folder")
        parser.add_argument("target", metavar="POD[:REMOTE]", help="the pod, and where in it")
    elif verb == "pull":
        parser.add_argument("target", metavar="POD:REMOTE", help="the pod and the path in it")
        parser.add_argument("local", metavar="LOCAL", nargs="?", help="where (default: here)")
    else:
        parser.add_argument("local", metavar="LOCAL_DIR", help="the local folder")
        parser.add_argument("target", metavar="POD:REMOTE_DIR", help="the pod and its folder")
        parser.add_argument(
            "--delete", action="store_true", help="remove remote files absent locally"
        )
        parser.add_argument(
            "--watch", action="store_true", help="keep syncing local changes until stopped"
        )

    def build(ns: argparse.Namespace) -> TransferCommand:
        try:
            pod_id, remote = _pod_path(ns.target, prog)
        except argparse.ArgumentTypeError as err:
            parser.error(str(err))
        if verb == "pull" and not remote:
            parser.error(f"{ns.target!r} names no path in the pod; write POD_ID:PATH")
        return TransferCommand(
            verb=verb,
            pod_id=pod_id,
            local=ns.local or ".",
            remote=remote,
            delete=getattr(ns, "delete", False),
            watch=getattr(ns, "watch", False),
        )

    helps = {
        "push": "copy files to the pod",
        "pull": "copy files from the pod",
        "sync": "sync a folder to the pod",
    }
    return Subcommand(parser, build, helps[verb])


def remote_subcommands() -> dict[str, Subcommand]:
    """The ``%pod`` subcommands that work on the pod itself, by name."""
    run = magic_parser(
        "%%pod exec",
        "Run the cell in a Python kernel on the pod (its own Jupyter server; the pod needs "
        "--jupyter). One kernel per pod and notebook: state stays between cells.",
    )
    add_pod_id_argument(run)
    run.add_argument(
        "--in", dest="inputs", type=VARIABLES, metavar="NAMES", help="send these variables first"
    )
    run.add_argument(
        "--out", dest="outputs", type=VARIABLES, metavar="NAMES", help="bring these back after"
    )
    run.add_argument(
        "--timeout", type=POSITIVE_SECONDS, metavar="SECONDS", help="interrupt after SECONDS"
    )
    run.add_argument("--kernel", default="python3", metavar="NAME", help="kernel spec")
    run.add_argument("--attached", action="store_true", help=argparse.SUPPRESS)

    attach = magic_parser(
        "%pod attach",
        "Run every following cell in the pod's kernel (cells that start with % or %% run "
        "here); %pod detach ends it.",
    )
    add_pod_id_argument(attach)
    attach.add_argument("--kernel", default="python3", metavar="NAME", help="kernel spec")
    detach = magic_parser("%pod detach", "Run the following cells here again.")

    shell = magic_parser(
        "%%pod sh",
        "Run the cell as a shell script in the pod over its direct SSH endpoint (22/tcp), "
        "its output streamed here.",
    )
    add_pod_id_argument(shell)
    return {
        "exec": Subcommand(run, _exec_command, "run the cell in the pod's kernel"),
        "attach": Subcommand(
            attach,
            lambda ns: AttachCommand(pod_id=ns.pod_id, kernel=ns.kernel),
            "run the following cells in the pod",
        ),
        "detach": Subcommand(detach, lambda ns: AttachCommand(), "run cells here again"),
        "sh": Subcommand(shell, lambda ns: ShellCommand(pod_id=ns.pod_id), "run a shell script"),
        **{verb: _transfer(verb) for verb in ("push", "pull", "sync")},
    }
