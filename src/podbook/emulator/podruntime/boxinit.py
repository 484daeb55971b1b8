"""The first process of a pod's bubblewrap box: it starts the pod's processes and carries its
ports. Standard library only; run as ``python boxinit.py`` inside the box.

Threads and blocking sockets, no asyncio: it is one small process in every pod (run with
``python -S``). From its environment (``PODBOOK_BOX``: JSON) it takes the descriptors the emulator opened for
it before the box existed: ``control`` (a listening Unix socket) and ``relays`` (listening TCP
sockets on the host's ``127.0.0.1``, each with the *private* address and port it serves).
Listening sockets keep their network namespace, so the host's public ports are accepted here
and each connection is carried to ``127.0.0.1:PRIVATE`` in the pod's own network namespace
(a cluster member: its cluster address), where the pod's process listens, as on the service.

On ``control``, one request per connection, a JSON line (descriptors passed alongside with
``SCM_RIGHTS``):

- ``{"op": "spawn", "argv", "env", "cwd", "session", "tty"}`` with three descriptors
  (stdin, stdout, stderr): the process is started in the box; the answer is
  ``{"pid": N}`` (its pid in the box), then ``{"exit": CODE}`` when it ends (a signal: its
  negative number).
``bridges`` (``[port, path]``) are the other way: the pod's ``127.0.0.1:PORT`` carried to a
Unix socket of the host shown in the box (the emulator's API, at the address it has on the
host).

- ``{"op": "connect", "host": H, "port": P}``: a TCP connection to ``H:P`` inside the box, its
  descriptor passed back with ``{"ok": true}``; ``{"error": "..."}`` when nothing listens.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import termios
import threading

CHUNK = 1 << 16


def _read_request(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 8)
    while not data.endswith(b"\n"):
        more = conn.recv(1 << 20)
        if not more:
            break
        data += more
    return json.loads(data or b"{}"), fds


def _send(conn: socket.socket, message: dict, fds: tuple[int, ...] = ()) -> None:
    payload = (json.dumps(message) + "\n").encode()
    if fds:
        socket.send_fds(conn, [payload], list(fds))
    else:
        conn.sendall(payload)


def _tty_preexec(tty: bool):  # noqa: ANN202 - a preexec_fn
    if not tty:
        return None

    def take_terminal() -> None:  # runs in the child: the pty on stdin becomes its terminal
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    return take_terminal


def _spawn(conn: socket.socket, request: dict, fds: list[int]) -> None:
    stdin, stdout, stderr = (fds + [-1, -1, -1])[:3]
    try:
        child = subprocess.Popen(
            request["argv"],
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=request.get("env") or {},
            cwd=request.get("cwd") or "/",
            start_new_session=bool(request.get("session", True)),
            preexec_fn=_tty_preexec(bool(request.get("tty"))),
            close_fds=True,
        )
    except OSError as exc:
        _send(conn, {"error": f"{exc.strerror or exc}: {request['argv'][0]}"})
        return
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    _send(conn, {"pid": child.pid})
    code = child.wait()
    with contextlib.suppress(OSError):
        _send(conn, {"exit": code})


def _connect(conn: socket.socket, request: dict) -> None:
    try:
        address = (str(request.get("host", "127.0.0.1")), int(request["port"]))
        peer = socket.create_connection(address, timeout=5)
    except OSError as exc:
        _send(conn, {"error": exc.strerror or str(exc)})
        return
    with peer:
        _send(conn, {"ok": True}, (peer.fileno(),))


def _handle(conn: socket.socket) -> None:
    with conn:
        try:
            request, fds = _read_request(conn)
            if request.get("op") == "spawn":
                _spawn(conn, request, fds)
            elif request.get("op") == "connect":
                _connect(conn, request)
            else:
                _send(conn, {"error": f"unknown op {request.get('op')!r}"})
        except Exception as exc:  # noqa: BLE001 - the emulator hears why, one line
            with contextlib.suppress(OSError):
                _send(conn, {"error": f"the box failed: {type(exc).__name__}: {exc}"})


def _serve_control(control: socket.socket) -> None:
    while True:
        conn, _ = control.accept()
        threading.Thread(target=_handle, args=(conn,), daemon=True).start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    """Copy ``source`` to ``target`` until its end, then pass the end on."""
    with contextlib.suppress(OSError):
        while chunk := source.recv(CHUNK):
            target.sendall(chunk)
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _carry(client: socket.socket, open_peer) -> None:  # noqa: ANN001
    """Carry one connection both ways to the peer ``open_peer()`` connects; closed at once
    when the peer cannot be reached (nothing listens on the private port yet)."""
    with client:
        try:
            peer = open_peer()
        except OSError:
            return
        with peer:
            back = threading.Thread(target=_pump, args=(peer, client), daemon=True)
            back.start()
            _pump(client, peer)
            back.join()


def _accept(listener: socket.socket, open_peer) -> None:  # noqa: ANN001
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_carry, args=(client, open_peer), daemon=True).start()


def _unix(path: str):  # noqa: ANN202
    def connect() -> socket.socket:
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            peer.connect(path)
        except OSError:
            peer.close()
            raise
        return peer

    return connect


def _tcp(host: str, port: int):  # noqa: ANN202
    return lambda: socket.create_connection((host, port))


def main(spec: dict) -> None:
    """Serve the box until SIGTERM (see the module docstring)."""
    for port, path in spec.get("bridges", []):  # a port of the pod's loopback → a host socket
        listener = socket.create_server(("127.0.0.1", port))
        threading.Thread(target=_accept, args=(listener, _unix(path)), daemon=True).start()
    for fd, host, port in spec.get("relays", []):
        listener = socket.socket(fileno=fd)
        listener.setblocking(True)
        threading.Thread(target=_accept, args=(listener, _tcp(host, port)), daemon=True).start()
    control = socket.socket(fileno=spec["control"])
    threading.Thread(target=_serve_control, args=(control,), daemon=True).start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print("ready", flush=True)
    while not stop.wait(3600):
        pass


if __name__ == "__main__":
    main(json.loads(os.environ.pop("PODBOOK_BOX")))
    sys.exit(0)
