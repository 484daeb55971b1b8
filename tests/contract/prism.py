"""An independent mock of the REST reference document: Stoplight Prism on loopback.

Stoplight Prism (``js/node_modules/.bin/prism``, a dev dependency of ``js/``) serves
``reference/runpod-rest-v2.openapi.json`` on a free loopback port. With ``--errors`` it
validates every request against the document (a violating request is refused with 4xx, the
violations in the ``sl-violations`` header) and every answer it builds (an answer that breaks
the document becomes a 500). Static mode answers the document's examples (``Prefer:
example=NAME`` picks one); dynamic mode (``-d``) answers data generated from the schemas,
with a seed. ``Prefer: code=NNN`` makes either answer a documented status instead of 2xx.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import httpx
from processes import stop_process
from reference_docs import REST_REFERENCE

from podbook import Client
from podbook.client._core import RetryPolicy

ROOT = Path(__file__).resolve().parents[2]
PRISM = ROOT / "js" / "node_modules" / ".bin" / "prism"
DEFAULT_SEED = "20261125"
API_KEY = "contract-test-key"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrismMock:
    """One Prism mock server process on loopback."""

    def __init__(self, root: Path, *, dynamic: bool, seed: str | None = None) -> None:
        self.dynamic = dynamic
        self.seed = seed
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = root / ("prism-dynamic.log" if dynamic else "prism-static.log")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def mode(self) -> str:
        """``"dynamic"`` (generated answers) or ``"static"`` (the document's examples)."""
        return "dynamic" if self.dynamic else "static"

    def command(self) -> list[str]:
        """The command line that starts this mock."""
        command = [str(PRISM), "mock", "-h", "127.0.0.1", "-p", str(self.port), "--errors"]
        if self.dynamic:
            command += ["-d", "--seed", self.seed or DEFAULT_SEED]
        return [*command, str(REST_REFERENCE)]

    def launch(self) -> None:
        """Start the process (without waiting for it to answer)."""
        if not PRISM.exists() or shutil.which("node") is None:
            raise RuntimeError(
                f"Stoplight Prism is missing ({PRISM}); run `make setup` (npm ci in js/)"
            )
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command(), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait until the mock answers HTTP (Prism takes about 5 s to start)."""
        assert self.proc is not None, "launch() first"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"prism exited with {self.proc.returncode}: "
                    f"{self.log_path.read_text(errors='replace')[-2000:]}"
                )
            try:
                httpx.get(f"{self.url}/v2/pods", headers=self.headers(), timeout=2)
            except httpx.TransportError:
                time.sleep(0.1)
                continue
            return
        self.stop()
        raise RuntimeError(f"prism did not answer within {timeout:g} s; log: {self.log_path}")

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL)."""
        if self.proc is not None:
            stop_process(self.proc)

    @staticmethod
    def headers() -> dict[str, str]:
        """The headers every request carries (the document requires a bearer token)."""
        return {"Authorization": f"Bearer {API_KEY}"}

    def client(self, transport: httpx.BaseTransport) -> Client:
        """A ``podbook.Client`` of this mock that never retries (a retry would hide the
        first answer) and sends through ``transport``."""
        return mock_client(self.url, transport)


def mock_client(url: str, transport: httpx.BaseTransport) -> Client:
    """A ``podbook.Client`` of ``url`` (every base) that never retries."""
    return Client(
        api_key=API_KEY,
        rest_url=url,
        queue_url=url,
        v1_url=url,
        transport=transport,
        retry=RetryPolicy(max_attempts=1),
        timeout=10.0,
    )
