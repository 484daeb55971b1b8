"""Run code in a kernel on a pod's own Jupyter server, from a script or a notebook.

::

    from podbook.remote import connect_kernel

    with connect_kernel(pod) as kernel:          # a Pod (or its dict) that runs Jupyter
        for output in kernel.execute("x = 41; print(x + 1)"):
            print(output)                         # StreamText(name='stdout', text='42\\n'), ...
        kernel.put(data=[1, 2, 3])                # pickled over to the kernel's namespace
        kernel.get("x")                           # {'x': 41}

:func:`connect_kernel` logs in to the pod's Jupyter server with the pod's
``JUPYTER_PASSWORD`` (the ``/login`` form, as a browser does), starts a kernel or attaches
to one, and opens the server's kernel WebSocket (``/api/kernels/{id}/channels``). A thread
of the :class:`RemoteKernel` reads that socket: it keeps :attr:`RemoteKernel.state` current
(``busy``/``idle``, from the kernel's status messages), routes each message to the request it
answers (by its parent's ``msg_id``; other requests' messages are ignored) and, when the
socket breaks, opens it again on the same session id, so that jupyter_server replays what it
buffered meanwhile.

Everything is synchronous (``websockets.sync``, ``httpx``): usable from a script and from a
magic, with no event loop and no ``asyncio.run``. Nothing here imports IPython.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from podbook.client.config import Secret, SecretLike, reveal
from podbook.errors import (
    JupyterAuthFailed,
    KernelConnectionLost,
    KernelDied,
    KernelNotFound,
    NoJupyter,
    PodNotRunning,
    RemoteKernelError,
)
from podbook.remote import _kernel_wire as wire
from podbook.remote._jupyter_http import JupyterServer
from podbook.remote.execution import POLL, Execution, Pending
from podbook.remote.outputs import (
    ExecuteDone,
    KernelOutput,
    KernelState,
    Reconnected,
)
from podbook.remote.podurl import pod_http_url

if TYPE_CHECKING:
    from websockets.sync.client import ClientConnection

__all__ = [
    "DEFAULT_RECONNECT_TIMEOUT",
    "DEFAULT_SERVER_TIMEOUT",
    "JUPYTER_PORT",
    "Execution",
    "RemoteKernel",
    "connect_kernel",
]

log = logging.getLogger("podbook.remote")

JUPYTER_PORT = 8888
"""The container port of a pod's Jupyter server (``8888/http``)."""

DEFAULT_SERVER_TIMEOUT = 30.0
"""Seconds :func:`connect_kernel` waits for the pod's Jupyter server to answer (it starts a
few seconds after the pod is RUNNING)."""

DEFAULT_RECONNECT_TIMEOUT = 30.0
"""Seconds a broken WebSocket is retried before :class:`KernelConnectionLost`."""

OPEN_TIMEOUT = 20.0
"""Seconds one opening of the kernel's WebSocket may take (the server answers once the kernel
does; it is tried twice)."""


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _status_text(pod: Any) -> str:
    status = _field(pod, "status")
    return str(getattr(status, "value", status) or "unknown")


def connect_kernel(
    pod: Any = None,
    *,
    password: str | SecretLike | None = None,
    kernel_id: str | None = None,
    name: str | None = None,
    kernel_name: str = "python3",
    url: str | None = None,
    server_timeout: float = DEFAULT_SERVER_TIMEOUT,
    reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
    on_status: Callable[[KernelState], None] | None = None,
) -> RemoteKernel:
    """Connect to a kernel on the pod's Jupyter server.

    Which kernel:

    - ``kernel_id="..."``: attach to that running kernel (its variables are there);
    - ``name="..."``: "the" kernel of that name on the pod: the kernel of the server's
      session ``podbook/<name>`` (a console session, as JupyterLab lists it), started the
      first time and found again by any later ``connect_kernel(pod, name=...)``, from this
      process or another one (a notebook restarted, a script);
    - neither: a new kernel of ``kernel_name`` (shut down when a ``with`` block ends).

    :param pod: the pod, a :class:`podbook.api.pods.Pod` or its wire dict, fresh from
        ``client.pods.get``: it must be RUNNING and expose ``8888/http``. May be None
        when ``url`` and ``password`` are given.
    :param password: the server's password; default the pod's ``env["JUPYTER_PASSWORD"]``.
    :param kernel_id: attach to this kernel.
    :param name: find or start the kernel of this name.
    :param kernel_name: the kernel spec of a new kernel (``python3``).
    :param url: the server's address, instead of :func:`podbook.remote.pod_http_url`.
    :param server_timeout: seconds to wait for the server to answer (it starts a few seconds
        after the pod is RUNNING).
    :param reconnect_timeout: seconds to keep trying when the WebSocket breaks.
    :param on_status: called with each new :attr:`RemoteKernel.state` (from the reader
        thread: keep it short, and route anything it prints yourself).
    :raises PodNotRunning: the pod is not RUNNING.
    :raises NoJupyter: the pod has no ``8888/http`` port or no ``JUPYTER_PASSWORD``.
    :raises JupyterNotAnswering: the server did not answer within ``server_timeout``.
    :raises JupyterAuthFailed: the password was refused.
    :raises KernelNotFound: no kernel ``kernel_id`` runs there.
    """
    if kernel_id is not None and name is not None:
        raise ValueError("pass kernel_id= or name=, not both")
    if isinstance(pod, str):
        raise TypeError(f"pass the pod's record (client.pods.get({pod!r})), not its id")
    pod_id = str(_field(pod, "id") or "") if pod is not None else ""
    where = f"pod {pod_id}" if pod_id else (url or "the Jupyter server")
    if pod is not None:
        status = _status_text(pod)
        if status != "RUNNING":
            raise PodNotRunning(pod_id, status)
    if url is None:
        if pod is None:
            raise ValueError("pass the pod, or url= and password=")
        url = pod_http_url(pod, JUPYTER_PORT)
        if url is None:
            raise NoJupyter(pod_id, f"no {JUPYTER_PORT}/http port")
    source = "the password given"
    if password is None:
        if pod is None:
            raise ValueError("pass password= with url= when no pod is given")
        env = _field(pod, "env") or {}
        password = env.get("JUPYTER_PASSWORD") if isinstance(env, Mapping) else None
        if not password:
            raise NoJupyter(pod_id, "no JUPYTER_PASSWORD in its env")
        source = "the pod's JUPYTER_PASSWORD"
    secret = Secret(reveal(password) or "")
    server = JupyterServer(url, secret, where=where, password_source=source)
    try:
        server.wait_and_login(server_timeout)
        session_record: str | None = None
        if kernel_id is not None:
            model = server.kernel(kernel_id)
        elif name is not None:
            session = server.named_session(name, kernel_name)
            model = session.get("kernel") or {}
            session_record = str(session.get("id") or "") or None
        else:
            model = server.start_kernel(kernel_name)
        if not model.get("id"):
            raise RemoteKernelError(f"the Jupyter server of {where} named no kernel; try again")
        kernel = RemoteKernel(
            server,
            str(model["id"]),
            kernel_name=str(model.get("name") or kernel_name),
            name=name,
            pod_id=pod_id or None,
            owned=kernel_id is None and name is None,
            session_record=session_record,
            reconnect_timeout=reconnect_timeout,
            on_status=on_status,
            state=str(model.get("execution_state") or "starting"),
        )
    except BaseException:
        server.close()
        raise
    return kernel


class RemoteKernel:
    """A kernel on a pod's Jupyter server; create it with :func:`connect_kernel`.

    One kernel keeps its state between requests. Requests of one object are answered in
    the order they were sent (the kernel runs them one at a time).

    Attributes for a panel: :attr:`state` (``idle``/``busy``/``starting`` from the
    kernel's status messages, which every client of the kernel sees, or ``reconnecting``,
    ``disconnected``, ``closed``), :attr:`attached`, :attr:`busy`, and the ``on_status``
    callback (called from the reader thread with each new state).
    """

    def __init__(
        self,
        server: JupyterServer,
        kernel_id: str,
        *,
        kernel_name: str = "python3",
        name: str | None = None,
        pod_id: str | None = None,
        owned: bool = False,
        session_record: str | None = None,
        reconnect_timeout: float = DEFAULT_RECONNECT_TIMEOUT,
        on_status: Callable[[KernelState], None] | None = None,
        state: str = "starting",
        session_id: str | None = None,
    ) -> None:
        self.kernel_id = kernel_id
        """The kernel's id on the server: ``connect_kernel(pod, kernel_id=...)`` attaches
        to it again."""
        self.kernel_name = kernel_name
        self.name = name
        """The name it was found or started by (``connect_kernel(pod, name=...)``)."""
        self.pod_id = pod_id
        self.reconnect_timeout = reconnect_timeout
        self.on_status = on_status
        self.remote_python: str | None = None
        """The kernel's Python version (``"3.11.9"``), once a transfer asked for it."""
        self._server = server
        self._owned = owned
        self._session_record = session_record
        self._session_id = session_id or uuid.uuid4().hex
        self._session = wire.new_session(self._session_id)
        self._state: KernelState = _kernel_state(state) or "starting"
        self._lock = threading.RLock()
        self._send_lock = threading.Lock()
        self._pending: dict[str, Pending] = {}
        self._busy: set[str] = set()  # requests the kernel announced busy, not yet idle
        self._probes: dict[str, list[str]] = {}  # kernel_info probe id -> unconfirmed ids
        self._connected = threading.Event()
        self._closing = False
        self._lost: RemoteKernelError | None = None
        self._restarted = False  # the kernel restarted: wait for its iopub before a request
        self._ws: ClientConnection | None = None
        self._ws_stack: contextlib.ExitStack | None = None
        self._reader: threading.Thread | None = None
        self._open()
        self._start_reader()

    # -- public -----------------------------------------------------------------------------

    @property
    def where(self) -> str:
        """How messages name the kernel's home (``"pod abc123"``)."""
        return self._server.where

    @property
    def url(self) -> str:
        """The Jupyter server's address."""
        return self._server.url

    @property
    def session_id(self) -> str:
        """The kernel-protocol session id of this client (reused on reconnects)."""
        return self._session_id

    @property
    def state(self) -> KernelState:
        """``idle``, ``busy``, ``starting``, ``reconnecting``, ``disconnected`` or ``closed``."""
        return self._state

    @property
    def attached(self) -> bool:
        """Whether the WebSocket to the kernel is open."""
        return self._connected.is_set() and not self._closing

    @property
    def busy(self) -> bool:
        """Whether the kernel runs a request (any client's)."""
        return self._state == "busy"

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name else ""
        return (
            f"RemoteKernel(kernel_id={self.kernel_id!r}{name}, where={self.where!r}, "
            f"state={self._state!r})"
        )

    def execute(self, code: str, timeout: float | None = None) -> Execution:
        """Send ``code`` to the kernel and return its outputs as they arrive.

        The request is sent before this returns; iterate the :class:`Execution` for
        :class:`StreamText`, :class:`DisplayData`, :class:`UpdateDisplayData`,
        :class:`ExecuteResult`, :class:`ClearOutput`, :class:`ExecuteError` and
        :class:`Reconnected`, in the order the kernel sent them, then one
        :class:`ExecuteDone`. An exception in the code is an :class:`ExecuteError` output
        and ``ExecuteDone(status="error")``, not a raise (``done.raise_for_error()``).

        :param code: Python source, run as a notebook cell (it counts in the history and
            the execution count; ``input()`` is not available).
        :param timeout: seconds from now; then the kernel is interrupted and iterating
            raises :class:`podbook.errors.RemoteTimeout`.
        """
        content = {
            "code": code,
            "silent": False,
            "store_history": True,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        return self._submit("execute_request", content, timeout)

    def run(self, code: str, timeout: float | None = None) -> list[KernelOutput]:
        """Run ``code`` to its end and return its outputs (the last one is
        :class:`ExecuteDone`).

        :raises podbook.errors.RemoteExecutionError: the code raised an exception.
        :raises podbook.errors.RemoteTimeout: it ran longer than ``timeout`` seconds.
        """
        outputs = list(self.execute(code, timeout))
        done = outputs[-1]
        assert isinstance(done, ExecuteDone)
        done.raise_for_error(f"the kernel of {self.where}")
        return outputs

    def interrupt(self) -> None:
        """Interrupt the code the kernel runs (``POST /api/kernels/{id}/interrupt``): it
        raises ``KeyboardInterrupt`` there; the kernel and its variables stay."""
        self._server.interrupt(self.kernel_id)

    def put(self, **values: Any) -> None:
        """Set variables in the kernel's namespace: ``kernel.put(df=df, n=3)``.

        Values travel pickled, in chunks (each well under the server's 10 MiB WebSocket
        message limit), up to :data:`podbook.remote.MAX_TRANSFER_BYTES` in all. Nothing is
        set unless every value arrived and loaded. Both sides must run the same Python
        major.minor, and the pod must be able to import each value's type.

        :raises podbook.errors.TransferError: a value cannot be pickled or loaded, the
            values are too large, or the Pythons differ (one line naming it).
        """
        from podbook.remote._kernel_vars import put_values

        put_values(self, values)

    def get(self, *names: str) -> dict[str, Any]:
        """The values of variables of the kernel's namespace: ``kernel.get("df", "n")`` →
        ``{"df": ..., "n": 3}`` (pickled over in chunks, as :meth:`put`).

        :raises podbook.errors.TransferError: a name is not defined there, a value cannot
            be pickled or loaded here, the values are too large, or the Pythons differ.
        """
        from podbook.remote._kernel_vars import get_values

        return get_values(self, names)

    def close(self, shutdown: bool = False) -> None:
        """Close the WebSocket (the kernel keeps running unless ``shutdown``).

        :param shutdown: also shut the kernel down (and its named session, if it has one).
        """
        with self._lock:
            if self._closing:
                already = True
            else:
                already = False
                self._closing = True
        if not already:
            self._connected.clear()
            self._close_socket()
            reader = self._reader
            if reader is not None and reader is not threading.current_thread():
                reader.join(5)
            self._fail_pending(
                RemoteKernelError(f"the connection to the kernel of {self.where} was closed")
            )
            self._set_state("closed")
        if shutdown:
            with contextlib.suppress(RemoteKernelError):
                if self._session_record:
                    self._server.delete_session(self._session_record)
                else:
                    self._server.shutdown(self.kernel_id)
        self._server.close()

    def __enter__(self) -> RemoteKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        """Close; a kernel this object started itself (no ``name``, no ``kernel_id``) is
        shut down too."""
        self.close(shutdown=self._owned)

    # -- requests ---------------------------------------------------------------------------

    def _submit(
        self,
        msg_type: str,
        content: dict[str, Any],
        timeout: float | None = None,
        *,
        interrupt_on_stop: bool = True,
    ) -> Execution:
        """Send a request; its :class:`Execution`."""
        self._ensure_connected()
        if self._restarted:
            self._await_iopub()
        msg_id, text = wire.encode(self._session, msg_type, content)
        pending = Pending(msg_id, text)
        with self._lock:
            self._pending[msg_id] = pending
        execution = Execution(self, pending, timeout, interrupt_on_stop=interrupt_on_stop)
        self._send(pending)
        return execution

    def _await_iopub(self, timeout: float = 30.0) -> None:
        """After the kernel restarted: ask for its ``kernel_info`` until an iopub message
        answers. The server's subscription to the new kernel process's iopub takes a moment
        (ZeroMQ's slow joiner) and output published before it is lost; jupyter_server waits
        the same way when a WebSocket opens, but not after a restart."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg_id, text = wire.encode(self._session, "kernel_info_request", {})
            pending = Pending(msg_id, text)
            with self._lock:
                self._pending[msg_id] = pending
            try:
                self._send(pending)
                answer_by = min(time.monotonic() + 0.5, deadline)
                while (left := answer_by - time.monotonic()) > 0:
                    try:
                        msg = pending.queue.get(timeout=left)
                    except queue.Empty:
                        break
                    if isinstance(msg, BaseException):
                        raise msg
                    if isinstance(msg, dict) and msg.get("channel") == "iopub":
                        self._restarted = False
                        return
            finally:
                self._forget(pending)
        self._restarted = False  # the request itself will tell what is wrong

    def _send(self, pending: Pending) -> None:
        """Send the request once the socket is open. A send that fails on a broken socket
        is left to the reconnect, which sends again what the kernel never received."""
        deadline = time.monotonic() + self.reconnect_timeout + 5
        while not self._connected.wait(POLL):
            if self._lost is not None:
                raise self._lost
            if self._closing:
                raise RemoteKernelError(f"the connection to the kernel of {self.where} is closed")
            if time.monotonic() > deadline:
                raise KernelConnectionLost(
                    self.where, self.kernel_id, self.reconnect_timeout, "no connection"
                )
        with self._send_lock:
            pending.sent = True
            ws = self._ws
            if ws is None:
                return
            try:
                ws.send(pending.text)
            except Exception as exc:  # the reader sees the break and reconnects
                log.debug("send failed (%s); the reconnect will resend", type(exc).__name__)

    def _forget(self, pending: Pending) -> None:
        with self._lock:
            self._pending.pop(pending.msg_id, None)

    def _interrupt_quietly(self) -> None:
        """Interrupt the kernel; a failure is logged, not raised (we are already leaving)."""
        try:
            self.interrupt()
        except Exception as exc:
            log.warning("could not interrupt the kernel of %s: %s", self.where, exc)

    def _ensure_connected(self) -> None:
        """Open the socket again if the reader gave up earlier (a new bounded try)."""
        if self._closing:
            raise RemoteKernelError(
                f"the connection to the kernel of {self.where} is closed; connect again"
            )
        with self._lock:
            reader = self._reader
            if self._lost is None and reader is not None and reader.is_alive():
                return
            if isinstance(self._lost, (KernelNotFound, KernelDied)):
                raise self._lost
            self._lost = None
            if not self._reopen(RemoteKernelError("the previous connection broke")):
                assert self._lost is not None
                raise self._lost
            self._start_reader()

    # -- the socket -------------------------------------------------------------------------

    def _open(self) -> None:
        """Open the kernel's WebSocket (logging in again once if the server asks)."""
        from websockets.exceptions import InvalidStatus
        from websockets.sync.client import connect

        for attempt in (1, 2):
            try:
                connection = connect(
                    self._server.channels_url(self.kernel_id, self._session_id),
                    additional_headers=self._server.ws_headers(),
                    max_size=None,
                    compression=None,
                    open_timeout=OPEN_TIMEOUT,
                    ping_interval=15,
                    ping_timeout=15,
                    close_timeout=2,
                    proxy=True if self._server.trust_env else None,
                )
            except TimeoutError:
                # The server answers the upgrade once the kernel answers it: a kernel still
                # starting on a busy pod can take long. Once more, then one clear line.
                if attempt == 1:
                    continue
                raise RemoteKernelError(
                    f"the Jupyter server of {self.where} did not answer the kernel's WebSocket "
                    f"within {OPEN_TIMEOUT:.0f} s, twice; try again, or look at the pod's log"
                ) from None
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status == 404:
                    raise KernelNotFound(self.where, self.kernel_id) from None
                if status == 403 and attempt == 1:
                    self._server.login()
                    continue
                raise RemoteKernelError(
                    f"the Jupyter server of {self.where} refused the kernel's WebSocket "
                    f"(HTTP {status})"
                ) from None
            stack = contextlib.ExitStack()
            ws = stack.enter_context(connection)
            with self._lock:
                self._ws, self._ws_stack = ws, stack
            self._connected.set()
            return

    def _close_socket(self) -> None:
        with self._lock:
            stack, self._ws_stack = self._ws_stack, None
        if stack is not None:
            with contextlib.suppress(Exception):
                stack.close()

    def _start_reader(self) -> None:
        self._reader = threading.Thread(
            target=self._read_loop, name=f"podbook-kernel-{self.kernel_id[:8]}", daemon=True
        )
        self._reader.start()

    def _read_loop(self) -> None:
        while not self._closing:
            ws = self._ws
            if ws is None:
                return
            try:
                frame = ws.recv()
            except Exception as exc:  # ConnectionClosed, OSError: the socket broke
                if self._closing:
                    return
                log.info("the WebSocket to the kernel of %s broke: %s", self.where, exc)
                if not self._reopen(exc):
                    return
                continue
            _quick_ack(ws)
            msg = wire.decode(frame)
            if msg is not None:
                try:
                    self._dispatch(msg)
                except Exception:  # never let one odd message end the reader
                    log.exception("could not handle a message from the kernel")

    def _reopen(self, exc: BaseException) -> bool:
        """Open the socket again with a short back-off, up to ``reconnect_timeout`` seconds;
        on success tell every request (:class:`Reconnected`), on failure fail them."""
        started = time.monotonic()
        self._connected.clear()
        self._close_socket()
        self._set_state("reconnecting")
        reason = _describe(exc)
        attempts, pause = 0, 0.05
        while not self._closing:
            attempts += 1
            try:
                self._open()
            except (KernelNotFound, JupyterAuthFailed) as error:
                self._give_up(error)
                return False
            except Exception as error:
                reason = _describe(error)
            else:
                event = Reconnected(attempts=attempts, downtime=time.monotonic() - started)
                log.info("reconnected to the kernel of %s after %d tries", self.where, attempts)
                self._refresh_state()
                with self._lock:
                    pendings = list(self._pending.values())
                for pending in pendings:
                    pending.queue.put(event)
                self._probe(pendings)
                return True
            if time.monotonic() - started + pause > self.reconnect_timeout:
                self._give_up(
                    KernelConnectionLost(self.where, self.kernel_id, self.reconnect_timeout, reason)
                )
                return False
            time.sleep(pause)
            pause = min(pause * 2, 1.0)
        return False

    def _refresh_state(self) -> None:
        """The kernel's state from the server (statuses sent while away may be missing)."""
        try:
            model = self._server.kernel(self.kernel_id)
        except RemoteKernelError:
            return
        state = _kernel_state(str(model.get("execution_state") or ""))
        if state is not None:
            with self._lock:
                self._busy.clear()
            self._set_state(state)

    def _track(self, status: str, parent: str | None) -> None:
        """Follow the kernel's status messages. The kernel handles some requests (the
        server's ``kernel_info`` nudges) beside an execute, so their statuses interleave:
        it is busy while any request it announced busy has not gone idle."""
        with self._lock:
            if status == "busy" and parent:
                self._busy.add(parent)
            elif status == "idle":
                self._busy.discard(parent or "")
            elif status == "starting":
                self._busy.clear()
            else:
                return
            state: KernelState = (
                "starting" if status == "starting" else ("busy" if self._busy else "idle")
            )
        self._set_state(state)

    def _give_up(self, error: RemoteKernelError) -> None:
        self._lost = error
        self._set_state("disconnected")
        self._fail_pending(error)

    def _fail_pending(self, error: BaseException) -> None:
        with self._lock:
            pendings = list(self._pending.values())
        for pending in pendings:
            pending.queue.put(error)

    def _probe(self, pendings: list[Pending]) -> None:
        """After a reconnect: ask the kernel for its info; requests still unanswered when
        that reply comes never reached the kernel (it answers in order) and are sent again."""
        unconfirmed = [p.msg_id for p in pendings if p.sent and not p.seen]
        if not unconfirmed:
            return
        msg_id, text = wire.encode(self._session, "kernel_info_request", {})
        with self._lock:
            self._probes = {msg_id: unconfirmed}
        ws = self._ws
        with contextlib.suppress(Exception), self._send_lock:
            if ws is not None:
                ws.send(text)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = wire.msg_type(msg)
        parent = wire.parent_id(msg)
        if kind == "status" and msg.get("channel") == "iopub":
            state = (msg.get("content") or {}).get("execution_state")
            if state == "restarting" and not parent:
                self._restarted = True
                self._set_state("starting")
                self._fail_pending(KernelDied(self.where, self.kernel_id, restarted=True))
                return
            if state == "dead" and not parent:
                self._give_up(KernelDied(self.where, self.kernel_id, restarted=False))
                return
            self._track(str(state), parent)
        if parent is None:
            return
        with self._lock:
            unconfirmed = self._probes.pop(parent, None) if kind == "kernel_info_reply" else None
            pending = self._pending.get(parent)
            resend = [
                self._pending[i] for i in unconfirmed or () if i in self._pending
            ]  # still unseen: lost on the way
        for lost in resend:
            if not lost.seen:
                log.info("a request never reached the kernel of %s; sending it again", self.where)
                with contextlib.suppress(Exception), self._send_lock:
                    if self._ws is not None:
                        self._ws.send(lost.text)
        if pending is not None:
            pending.seen = True
            pending.queue.put(msg)

    def _set_state(self, state: KernelState) -> None:
        if state == self._state:
            return
        self._state = state
        callback = self.on_status
        if callback is not None:
            try:
                callback(state)
            except Exception:
                log.exception("the kernel's on_status callback failed")


def _kernel_state(state: str) -> KernelState | None:
    """The :data:`KernelState` of a kernel status (None for states a client ignores)."""
    if state in ("busy", "idle", "starting"):
        return state  # type: ignore[return-value]
    if state in ("restarting", "autorestarting"):
        return "starting"
    if state == "dead":
        return "disconnected"
    return None


def _quick_ack(ws: ClientConnection) -> None:
    """Acknowledge the server's next segments at once (Linux ``TCP_QUICKACK``).

    jupyter_server leaves Nagle's algorithm on for kernel WebSockets, so after its first
    small message it holds the next ones until that one is acknowledged, and a client's
    delayed acknowledgement costs each request ~40 ms (a trivial execute: 48 ms → 5 ms).
    """
    option = getattr(socket, "TCP_QUICKACK", None)
    if option is not None:
        with contextlib.suppress(OSError, AttributeError):
            ws.socket.setsockopt(socket.IPPROTO_TCP, option, 1)


def _describe(exc: BaseException) -> str:
    """One line about a connection failure (no headers, no cookies)."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
