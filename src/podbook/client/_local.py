"""Find the local emulator, or start it as a detached process that outlives the kernel.

The emulator keeps its files in ``$PODBOOK_HOME`` (default ``~/.podbook``):
``emulator.json`` (``{"url", "pid", "db"}``, written once it listens), ``emulator.key``
(the default account's key, mode 0600) and ``emulator.log``. :func:`ensure_emulator`
reuses a running emulator that answers ``GET /healthz``; otherwise it starts
``python -m podbook emulator --port 0 --home HOME`` in a new session, under a file lock so
two kernels starting at once do not start two emulators.

Finding and checking it needs the standard library only (no httpx, no pydantic).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from podbook.client._home import default_home
from podbook.client._secret import Secret
from podbook.errors import LocalEmulatorError

__all__ = [
    "DEFAULT_LOCAL_URL",
    "LocalEmulator",
    "emulator_is_healthy",
    "emulator_pods",
    "ensure_emulator",
    "no_sandbox_line",
    "read_emulator_record",
]

DEFAULT_LOCAL_URL = "http://127.0.0.1:8765"
START_TIMEOUT = 30.0
_POLL_INTERVAL = 0.02
# Variables a child emulator must never see: the user's real credentials.
_SECRET_ENV = ("RUNPOD_API_KEY", "RUNPOD_AI_API_KEY")
# Emulators started by this process: kept referenced so that Popen never warns that a
# (deliberately) still running child is being garbage-collected.
_STARTED: list[subprocess.Popen[bytes]] = []


@dataclass(frozen=True)
class LocalEmulator:
    """A running (or last recorded) local emulator: its URL, key and process id."""

    url: str
    api_key: Secret | None = field(repr=False)
    pid: int | None = None
    home: Path | None = None

    @property
    def log_path(self) -> Path | None:
        """The emulator's log file, when its home is known."""
        return self.home / "emulator.log" if self.home else None


def _home_dir(home: str | os.PathLike[str] | None) -> Path:
    if home is not None:
        return Path(home).expanduser()
    return default_home()


def read_emulator_record(home: str | os.PathLike[str] | None = None) -> LocalEmulator | None:
    """The emulator recorded in ``home`` (``emulator.json`` + ``emulator.key``), or None.

    Says nothing about whether it still runs; see :func:`emulator_is_healthy`.
    """
    home_dir = _home_dir(home)
    try:
        record = json.loads((home_dir / "emulator.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    try:
        key_text = (home_dir / "emulator.key").read_text(encoding="utf-8").strip()
    except OSError:
        key_text = ""
    pid = record.get("pid")
    return LocalEmulator(
        url=url.rstrip("/"),
        api_key=Secret(key_text) if key_text else None,
        pid=pid if isinstance(pid, int) else None,
        home=home_dir,
    )


def _healthz(url: str, timeout: float) -> dict[str, Any]:
    """``GET {url}/healthz``'s JSON object when it answers 200, else empty.

    The standard library's HTTP client, not httpx: the local emulator speaks plain HTTP on
    loopback, and an httpx client builds a TLS context (tens of milliseconds) that this one
    request never uses; the first magic of a kernel asks this before anything else."""
    parts = urllib.parse.urlsplit(url.rstrip("/"))
    connection_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    connection = connection_type(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    try:
        connection.request("GET", f"{parts.path}/healthz")
        response = connection.getresponse()
        body = json.loads(response.read()) if response.status == 200 else {}
    except (OSError, ValueError, http.client.HTTPException):
        return {}
    finally:
        connection.close()
    return body if isinstance(body, dict) else {}


def emulator_is_healthy(url: str, timeout: float = 1.0) -> bool:
    """True when ``GET {url}/healthz`` answers ``{"ok": true}``."""
    return _healthz(url, timeout).get("ok") is True


def emulator_pods(url: str, timeout: float = 1.0) -> dict[str, str]:
    """How the emulator at ``url`` runs pods (``GET /healthz``'s ``pods``: ``runtime``,
    ``sandbox``, ``sandboxNote``); empty when it does not say."""
    pods = _healthz(url, timeout).get("pods")
    return pods if isinstance(pods, dict) else {}


def no_sandbox_line(note: str) -> str:
    """One line saying the emulator's pods run without a sandbox, why (``note``), and what
    that means for a script written for the service."""
    return (
        f"pods run without a sandbox ({note}): the process runtime maps a pod's paths and "
        "ports ($RUNPOD_MOUNT_WORKSPACE, $RUNPOD_HTTP_PORT_8000; see docs/local-runtime.md)"
    )


def _usable(record: LocalEmulator | None) -> bool:
    return record is not None and record.api_key is not None and emulator_is_healthy(record.url)


def ensure_emulator(
    home: str | os.PathLike[str] | None = None, *, timeout: float = START_TIMEOUT
) -> LocalEmulator:
    """Return the local emulator of ``home``, starting it when it does not answer.

    Raises :class:`LocalEmulatorError` (naming the log file) when it cannot be started
    within ``timeout`` seconds.
    """
    home_dir = _home_dir(home)
    record = read_emulator_record(home_dir)
    if _usable(record):
        assert record is not None
        return record
    try:
        home_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise LocalEmulatorError(
            f"cannot create {home_dir} for the local emulator ({exc.strerror}); "
            "set PODBOOK_HOME to a writable directory"
        ) from None
    with _file_lock(home_dir / "emulator.lock", timeout=timeout):
        record = read_emulator_record(home_dir)
        if _usable(record):
            assert record is not None
            return record
        return _start(home_dir, timeout)


def _start(home_dir: Path, timeout: float) -> LocalEmulator:
    log_path = home_dir / "emulator.log"
    with contextlib.suppress(FileNotFoundError):
        (home_dir / "emulator.json").unlink()
    _write_key_if_missing(home_dir / "emulator.key")
    env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
    env["PODBOOK_HOME"] = str(home_dir)
    if sys.platform.startswith("linux") and "PYTHONMALLOC" not in env:
        # the emulator's allocator (podbook.emulator.memory), chosen here: it need not restart
        env.update(PYTHONMALLOC="malloc", PODBOOK_SET_PYTHONMALLOC="1")
    command = [
        sys.executable,
        "-m",
        "podbook",
        "emulator",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--home",
        str(home_dir),
    ]
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as log:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=home_dir,
            env=env,
            close_fds=True,
            **_detached_kwargs(),
        )
    _STARTED.append(process)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = process.poll()
        if code is not None:
            raise LocalEmulatorError(
                f"the local emulator exited with code {code} while starting; see {log_path}"
            )
        record = read_emulator_record(home_dir)
        if record is not None and record.pid in (None, process.pid) and _usable(record):
            return record
        time.sleep(_POLL_INTERVAL)
    process.terminate()
    raise LocalEmulatorError(
        f"the local emulator did not answer within {timeout:g} s; see {log_path}"
    )


def _write_key_if_missing(path: Path) -> None:
    """Create the default account's key (mode 0600) before the emulator starts.

    The emulator reuses an existing ``emulator.key`` and then never prints the key, so its
    stdout (which goes to ``emulator.log``) stays free of it.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("pbk_" + secrets.token_urlsafe(32) + "\n")


def _detached_kwargs() -> dict[str, object]:
    """Popen options that let the emulator outlive this process (and its kernel)."""
    if os.name == "nt":  # pragma: no cover - Windows only
        flags = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
        return {"creationflags": flags}
    return {"start_new_session": True}


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float) -> Iterator[None]:
    """An exclusive advisory lock on ``path``, waited for at most ``timeout`` seconds."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise LocalEmulatorError(
                    f"another process holds {path} for more than {timeout:g} s; "
                    "if no podbook is starting, delete that file"
                )
            time.sleep(_POLL_INTERVAL)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    if os.name == "nt":  # pragma: no cover - Windows only
        import msvcrt

        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _unlock(fd: int) -> None:
    if os.name == "nt":  # pragma: no cover - Windows only
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
        return
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_UN)
