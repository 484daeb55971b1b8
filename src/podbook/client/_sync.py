"""The synchronous face: :class:`Client`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import httpx

from podbook.client._core import Call
from podbook.client._face import ClientFace
from podbook.client.resources.queue import EndpointClient

__all__ = ["Client"]

T = TypeVar("T")


class Client(ClientFace[httpx.Client, httpx.BaseTransport]):
    """A typed client of the pod cloud (the real service or the local emulator).

    ``Client()`` resolves its target from the environment (starting the local emulator when
    nothing is configured); ``Client(url=..., api_key=...)`` points at one service.
    Resources: ``pods``, ``clusters``, ``catalog``, ``account.ssh_keys``, ``registries``,
    ``templates``, ``network_volumes``.
    Use it as a context manager, or call :meth:`close`.
    """

    _http_class = httpx.Client

    def endpoint(self, endpoint_id: str) -> EndpointClient:
        """One serverless queue endpoint: ``client.endpoint("echo").run({...})``."""
        return EndpointClient(self, endpoint_id)

    def _send(
        self, call: Call[Any], on_retry: Callable[[], None] | None, *, stream: bool
    ) -> httpx.Response:
        """The final answer to ``call`` (any status), tried again as its retry policy allows:
        this face's one send loop (:class:`~podbook.client._core.Attempts` decides)."""
        tries = self._core.attempts(self._http, call)
        while True:
            try:
                response = self._http.send(tries.request(), stream=stream)
            except httpx.TransportError as exc:
                delay = tries.after_error(exc)
            else:
                delay = tries.after_response(response)
                if delay is None:
                    return response
                response.close()
            time.sleep(delay)
            if on_retry is not None:
                on_retry()

    def request(self, call: Call[T]) -> T:
        """Send ``call`` (retrying as the retry policy allows) and return its result."""
        return self._core.finish(call, self._send(call, None, stream=False))

    @contextmanager
    def stream(
        self, call: Call[Any], *, on_retry: Callable[[], None] | None = None
    ) -> Iterator[httpx.Response]:
        """Send ``call`` as :meth:`request` does (same retries, ``Retry-After``, errors) and
        yield its answer open, its body not read yet (httpx's ``send(..., stream=True)``):
        ``with client.stream(call) as response: ...``. The response is closed on leaving.

        An error status raises its typed :class:`~podbook.errors.APIError` before anything
        is yielded; a transport error while the body is read raises
        :class:`~podbook.errors.ConnectionFailed` (caused by it). ``on_retry`` is called
        after each pause, just before the call is sent again.
        """
        response = self._send(call, on_retry, stream=True)
        try:
            with self._core.reading(call):
                if response.status_code >= 400:
                    response.read()
                    self._core.finish(call, response)
                yield response
        finally:
            response.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
