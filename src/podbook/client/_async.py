"""The asynchronous face: :class:`AsyncClient`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx

from podbook.client._core import Call
from podbook.client._face import ClientFace
from podbook.client.resources.queue import AsyncEndpointClient

__all__ = ["AsyncClient"]

T = TypeVar("T")


class AsyncClient(ClientFace[httpx.AsyncClient, httpx.AsyncBaseTransport]):
    """The async twin of :class:`~podbook.client.Client`: same resources, awaitable methods.

    Configuration is resolved when it is built (which may start the local emulator, a
    short blocking step); use ``async with AsyncClient() as client`` or ``await
    client.aclose()``.
    """

    _http_class = httpx.AsyncClient

    def endpoint(self, endpoint_id: str) -> AsyncEndpointClient:
        """One serverless queue endpoint: ``await client.endpoint("echo").run({...})``."""
        return AsyncEndpointClient(self, endpoint_id)

    async def _send(
        self, call: Call[Any], on_retry: Callable[[], None] | None, *, stream: bool
    ) -> httpx.Response:
        """The async twin of :meth:`Client._send <podbook.client.Client._send>`."""
        tries = self._core.attempts(self._http, call)
        while True:
            try:
                response = await self._http.send(tries.request(), stream=stream)
            except httpx.TransportError as exc:
                delay = tries.after_error(exc)
            else:
                delay = tries.after_response(response)
                if delay is None:
                    return response
                await response.aclose()
            await asyncio.sleep(delay)
            if on_retry is not None:
                on_retry()

    async def request(self, call: Call[T]) -> T:
        """Send ``call`` (retrying as the retry policy allows) and return its result."""
        return self._core.finish(call, await self._send(call, None, stream=False))

    @asynccontextmanager
    async def stream(
        self, call: Call[Any], *, on_retry: Callable[[], None] | None = None
    ) -> AsyncIterator[httpx.Response]:
        """:meth:`Client.stream <podbook.client.Client.stream>` of the async face (same
        retries, errors and ``on_retry``): ``async with client.stream(call) as response: ...``.
        """
        response = await self._send(call, on_retry, stream=True)
        try:
            with self._core.reading(call):
                if response.status_code >= 400:
                    await response.aread()
                    self._core.finish(call, response)
                yield response
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    async def close(self) -> None:
        """Alias of :meth:`aclose`."""
        await self.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
