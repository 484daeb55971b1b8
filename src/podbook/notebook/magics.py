"""The magics of podbook: each one delegates to its family's package (``%pod`` and
``%cluster`` to :mod:`~podbook.notebook.pods`, ``%catalog`` to
:mod:`~podbook.notebook.catalog`, ...), which parses the line, runs it and returns the object.

Configurable like any IPython component: ``%config PodMagics.refresh_interval = 2``,
``%config PodMagics.on_exit = "stop"``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from traitlets import Bool, Enum, Float, default
from traitlets.config import Configurable

from podbook.client import on_pod_created
from podbook.notebook.errors import is_local_emulator_gone, one_line_errors
from podbook.notebook.kernel_exit.policy import ON_EXIT_CHOICES, default_on_exit

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from podbook.api.pods import Pod
    from podbook.client.config import Settings
    from podbook.notebook.kernel_exit.watch import ExitWatch
    from podbook.notebook.session import NotebookSession


def _account_magic(family: str, doc: str) -> Callable[..., object]:
    """The line magic ``%<family>`` of :mod:`podbook.notebook.account` (``%template``,
    ``%volume``, ``%registry``, ``%sshkey``), documented by ``doc``."""

    def account_magic(self: PodMagics, line: str = "") -> object:
        from podbook.notebook.account import magic

        return magic.run(self, family, line)

    account_magic.__name__ = family
    account_magic.__qualname__ = f"PodMagics.{family}"
    account_magic.__doc__ = doc
    return line_magic(account_magic)


@magics_class
class PodMagics(Magics, Configurable):
    """Magics for pods, clusters and the catalog of a RunPod-style cloud."""

    refresh_interval = Float(
        2.0, help="Seconds between refreshes of the live panels (the quota may lengthen it)."
    ).tag(config=True)
    max_refresh_interval = Float(
        60.0, help="Longest pause between refreshes when the rate-limit quota runs low."
    ).tag(config=True)
    show_panels = Bool(True, help="Display a panel for each magic's result.").tag(config=True)
    on_exit = Enum(
        ON_EXIT_CHOICES,
        help="What happens to the pods this kernel created when it ends: warn (one line "
        "naming those still running), stop, terminate or keep; %pod create --on-exit "
        "overrides it per pod. Default: $PODBOOK_ON_EXIT, else stop in a headless run "
        "(a kernel no Jupyter server started: nbclient, papermill), else warn.",
    ).tag(config=True)

    @default("on_exit")
    def _default_on_exit(self) -> str:
        choice, note = default_on_exit(self.shell, os.environ)
        if note:
            print(note, file=sys.stderr)
        return choice

    def __init__(self, shell: InteractiveShell | None = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        _ = self.on_exit  # read PODBOOK_ON_EXIT now: a bad value is said when podbook loads
        for table in self.magics.values():  # every error a magic shows stays one short line
            for name, method in table.items():
                table[name] = one_line_errors(method)
        self._session: NotebookSession | None = None
        self._exit_watch: ExitWatch | None = None
        # pods made by any client of this kernel (podbook.Client() in a cell too) end with it
        self._forget_created = on_pod_created(self._pod_created)

    @property
    def exit_watch(self) -> ExitWatch:
        """The pods this kernel created and what settles them when it ends (made on first
        use: ``%load_ext`` imports no more than it must)."""
        if self._exit_watch is None:
            from podbook.notebook.kernel_exit.watch import ExitWatch

            self._exit_watch = ExitWatch(self.shell, lambda: self.on_exit)
        return self._exit_watch

    def _pod_created(self, pod: Pod, settings: Settings) -> None:
        self.exit_watch.track(pod, settings)

    @property
    def session(self) -> NotebookSession:
        """The :class:`~podbook.notebook.session.NotebookSession`, created on first use."""
        if self._session is None:
            from podbook.notebook.session import NotebookSession

            self._session = NotebookSession(
                self.shell,
                interval=lambda: self.refresh_interval,
                max_interval=lambda: self.max_refresh_interval,
                show_panels=lambda: self.show_panels,
                exit_watch=self.exit_watch,
            )
        return self._session

    def close(self) -> None:
        """Stop the refresher and release the client (``%unload_ext podbook``); the pods this
        kernel created are then left as they are."""
        self._forget_created()
        if self._exit_watch is not None:
            self._exit_watch.close()
        if self._session is not None:
            from podbook.notebook.chat.conversation import close_conversations
            from podbook.notebook.endpoints.book import close_book
            from podbook.notebook.remote.kernels import close_kernels

            close_conversations(self._session)
            close_book(self._session)
            close_kernels(self._session)
            self._session.close()
            self._session = None

    @contextmanager
    def forget_a_stopped_emulator(self) -> Iterator[None]:
        """When the local emulator stopped, drop the client: the next call starts it again."""
        try:
            yield
        except Exception as err:
            if is_local_emulator_gone(err):
                self.session.reset_client()
            raise

    @line_cell_magic
    def pod(self, line: str = "", cell: str | None = None) -> object:
        """Pods: ``%pod create|list|show|start|stop|restart|terminate|ssh|logs ...``, and work
        on a pod: ``%%pod exec POD`` (the cell in the pod's kernel), ``%pod attach|detach``,
        ``%%pod sh POD`` (a shell script over SSH), ``%pod push|pull|sync`` (files).

        ``%pod create --gpu "NVIDIA GeForce RTX 4090" --image runpod/pytorch --ssh``
        creates a pod and shows its live panel; ``%pod SUBCOMMAND --help`` lists the flags.
        ``{var}`` is expanded; ``-o NAME`` also stores the result in ``NAME``.
        """
        from podbook.notebook.pods import magic

        return magic.pod(self, line, cell)

    @line_magic
    def cluster(self, line: str = "") -> object:
        """Clusters: ``%cluster show ID`` shows its members with rank, role, IP and status."""
        from podbook.notebook.pods import magic

        return magic.cluster(self, line)

    @line_magic
    def catalog(self, line: str = "") -> object:
        """The catalog: ``%catalog gpus|cpus|datacenters``.

        ``%catalog gpus --min-vram 40 --cuda 12.4 --cloud SECURE --dc EU-* --max-price 2
        --available --count 2`` is the GPU finder: a sortable panel whose buttons fill
        ``%pod create`` into a new cell or create the pod.
        """
        from podbook.notebook.catalog import magic

        return magic.catalog(self, line)

    template = _account_magic(
        "template",
        """Templates: ``%template create|list|show|update|delete``; returns the template.""",
    )
    volume = _account_magic(
        "volume",
        """Network volumes: ``%volume create|list|show|update|delete``; returns the volume.""",
    )
    registry = _account_magic(
        "registry",
        """Registry credentials: ``%registry create|list|delete`` (the password is asked for
        with a hidden prompt, or read from ``--password-env VAR``; never typed in a cell).""",
    )
    sshkey = _account_magic(
        "sshkey",
        """SSH keys: ``%sshkey list|add|remove|set`` (``--from-home`` reads ~/.ssh/*.pub).""",
    )

    @line_magic
    def billing(self, line: str = "") -> object:
        """Spend over time: ``%billing [--last 7d] [--by day|hour] [--kind pods|...]``."""
        from podbook.notebook.billing import magic

        return magic.billing(self, line)

    @cell_magic
    def runjob(self, line: str = "", cell: str | None = None) -> object:
        """Run a serverless job: ``%%runjob ENDPOINT [--sync | --async] [--wait MS]
        [--timeout MS] [--ttl MS] [--low-priority] [--webhook URL] [-o NAME]``.

        The cell holds the job's input (JSON or a Python dict; ``{var}`` is expanded). Shows
        the job's live panel (its stream as it arrives, tokens/s, Cancel) and returns the Job.
        """
        from podbook.notebook.endpoints import magic

        return magic.runjob(self, line, cell)

    @line_magic
    def job(self, line: str = "") -> object:
        """Jobs: ``%job status|cancel|retry JOB_ID --endpoint ID``; returns the Job."""
        from podbook.notebook.endpoints import magic

        return magic.job(self, line)

    @line_cell_magic
    def chat(self, line: str = "", cell: str | None = None) -> object:
        """Chat with an endpoint's OpenAI-compatible route: ``%%chat ENDPOINT [--model M]
        [--system TEXT] [--temperature T] [--max-tokens N] [-o NAME]`` with your message in the
        cell streams the reply into a chat panel (time to first token, tokens/s, Stop) and
        returns the turn; the conversation goes on across cells. ``%chat history [ENDPOINT]``
        shows it, ``%chat reset [ENDPOINT | --all]`` forgets it."""
        from podbook.notebook.chat import magic

        return magic.chat(self, line, cell)

    @line_magic
    def endpoint(self, line: str = "") -> object:
        """Endpoints: ``%endpoint create|list|show|update|delete ...``,
        ``%endpoint health|purge ID``, ``%endpoint serve FUNC --name ID``."""
        from podbook.notebook.endpoints import magic

        return magic.endpoint(self, line)
