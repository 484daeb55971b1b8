"""A fault-injecting TCP proxy for tests: a real wire between a real client and a real server.

``FaultProxy(port)`` listens on a free loopback port and forwards every connection to
``127.0.0.1:port``. On command it breaks the wire the way networks do:

- :meth:`drop_after` — reset (RST) the connection that carries the next ``n`` response bytes,
  right after forwarding them (so a response is cut off mid-way); ``times`` drops in a row,
  each counting ``n`` bytes from the previous one;
- :meth:`cut_all` — reset every open connection now;
- :meth:`refuse` — close the listening socket for ``seconds`` (new connections are refused,
  as when the server is down), then listen again on the same port;
- :meth:`stall` — hold every response byte for ``seconds`` (open connections and new ones),
  then let them through.

``hide_cursor = True`` strips the ``cursor`` query parameter from every request on the way, so
the emulator behind answers ``/stream`` as the real service does (draining, no ``next``).

``drops`` counts the connections reset so far, ``connections`` those accepted. Threads only;
every socket is closed by :meth:`close` (also a context manager).
"""

from __future__ import annotations

import contextlib
import re
import socket
import struct
import threading
import time
from types import TracebackType

__all__ = ["FaultProxy"]

_BUFFER = 65536
_CURSOR_FIRST = re.compile(rb"(?<=\?)cursor=\d+&")
_CURSOR_ANY = re.compile(rb"[?&]cursor=\d+(?=[ &])")


def _reset(sock: socket.socket) -> None:
    """Close ``sock`` with an RST (linger 0) instead of a FIN.

    ``shutdown(SHUT_RD)`` first wakes the other pump thread blocked in ``recv`` on it (a bare
    ``close`` would leave the socket alive until that ``recv`` returns) and sends nothing.
    """
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)
    with contextlib.suppress(OSError):
        sock.close()


class _Link:
    """One proxied connection: the client's socket and the upstream one."""

    def __init__(self, downstream: socket.socket, upstream: socket.socket) -> None:
        self.downstream = downstream
        self.upstream = upstream
        self.closed = False
        self.lock = threading.Lock()

    def reset(self) -> bool:
        """RST both sides; False when it was closed already."""
        with self.lock:
            if self.closed:
                return False
            self.closed = True
        _reset(self.downstream)
        _reset(self.upstream)
        return True

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for sock in (self.downstream, self.upstream):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()


class FaultProxy:
    """A TCP proxy to ``127.0.0.1:target_port`` that drops, refuses and stalls on command."""

    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.hide_cursor = False
        self.port = 0
        self.drops = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._links: set[_Link] = set()
        self._plan: list[int] = []  # response bytes before each planned drop
        self._counted = 0  # response bytes since the previous drop (while a plan is armed)
        self._stalled_until = 0.0
        self._listener: socket.socket | None = None
        self._closing = threading.Event()
        self._accept_thread: threading.Thread | None = None

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Listen on a free loopback port and start accepting."""
        self._listen()
        return self

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` of the proxy."""
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop listening and close every connection."""
        self._closing.set()
        self._stop_listening()
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- faults -----------------------------------------------------------------------------

    def drop_after(self, n: int, times: int = 1) -> None:
        """Reset the connection carrying the ``n``-th response byte from now, ``times`` times
        (each ``n`` bytes after the previous drop)."""
        with self._lock:
            self._plan = [n] * times
            self._counted = 0

    @property
    def pending_drops(self) -> int:
        """Planned drops not made yet."""
        with self._lock:
            return len(self._plan)

    def cut_all(self) -> int:
        """Reset every open connection; how many were reset."""
        with self._lock:
            links = list(self._links)
        cut = sum(1 for link in links if link.reset())
        with self._lock:
            self.drops += cut
        return cut

    def refuse(self, seconds: float) -> None:
        """Refuse new connections for ``seconds`` (the port is closed), then accept again.
        Open connections are reset too (as when the server went away)."""
        self._stop_listening()
        self.cut_all()
        timer = threading.Timer(seconds, self._reopen)
        timer.daemon = True
        timer.start()

    def stall(self, seconds: float) -> None:
        """Hold every response byte for ``seconds`` from now."""
        with self._lock:
            self._stalled_until = time.monotonic() + seconds

    # -- internals --------------------------------------------------------------------------

    def _listen(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._accept_thread = threading.Thread(
            target=self._accept, args=(listener,), name="faultproxy-accept", daemon=True
        )
        self._accept_thread.start()

    def _reopen(self) -> None:
        if self._closing.is_set():
            return
        for _ in range(100):  # the old listener may take a moment to release the port
            try:
                self._listen()
                return
            except OSError:
                time.sleep(0.05)

    def _stop_listening(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                listener.close()
        thread = self._accept_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(2)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                downstream, _ = listener.accept()
            except OSError:
                return  # listener closed
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                _reset(downstream)
                continue
            for sock in (downstream, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(downstream, upstream)
            with self._lock:
                self._links.add(link)
                self.connections += 1
            for target, args in (
                (self._pump_requests, (link,)),
                (self._pump_responses, (link,)),
            ):
                threading.Thread(target=target, args=args, daemon=True).start()

    def _forget(self, link: _Link) -> None:
        link.close()
        with self._lock:
            self._links.discard(link)

    def _pump_requests(self, link: _Link) -> None:
        try:
            while data := link.downstream.recv(_BUFFER):
                if self.hide_cursor:
                    data = _CURSOR_ANY.sub(b"", _CURSOR_FIRST.sub(b"", data))
                link.upstream.sendall(data)
        except OSError:
            pass
        finally:
            self._forget(link)

    def _pump_responses(self, link: _Link) -> None:
        try:
            while data := link.upstream.recv(_BUFFER):
                self._hold()
                keep, drop = self._budget(len(data))
                if keep:
                    link.downstream.sendall(data[:keep])
                if drop:
                    if link.reset():
                        with self._lock:
                            self.drops += 1
                    return
        except OSError:
            pass
        finally:
            self._forget(link)

    def _hold(self) -> None:
        while not self._closing.is_set():
            with self._lock:
                left = self._stalled_until - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.05))

    def _budget(self, size: int) -> tuple[int, bool]:
        """(bytes to forward, whether to drop the connection after them)."""
        with self._lock:
            if not self._plan:
                return size, False
            room = self._plan[0] - self._counted
            if size < room:
                self._counted += size
                return size, False
            self._plan.pop(0)
            self._counted = 0
            return room, True
