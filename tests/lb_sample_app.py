"""A FastAPI app served by ``podbook worker --lb`` in the load-balancing tests.

``WORKER_NAME`` names the process in every answer (``x-worker`` header), so a test sees
which worker served a request. ``POST /control/health {"status": 503}`` (sent to the
worker's own port, not through the balancer) sets what ``GET /ping`` answers;
``APP_HEALTH`` sets it at start.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import time
from collections.abc import AsyncIterator

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

app = FastAPI()
NAME = os.environ.get("WORKER_NAME", "worker")
state = {"health": int(os.environ.get("APP_HEALTH", "200")), "served": 0}


@app.middleware("http")
async def name_every_answer(request: Request, call_next):  # type: ignore[no-untyped-def]
    response = await call_next(request)
    response.headers["x-worker"] = NAME
    return response


@app.get("/ping")
def ping() -> Response:
    status = state["health"]
    if status == 200:
        return JSONResponse({"status": "healthy"})
    return Response(status_code=status)


@app.post("/control/health")
async def set_health(request: Request) -> dict[str, int]:
    state["health"] = int((await request.json())["status"])
    return {"health": state["health"]}


@app.api_route("/echo/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def echo(request: Request, rest: str) -> Response:
    state["served"] += 1
    body = await request.body()
    return JSONResponse(
        {
            "method": request.method,
            "path": request.url.path,
            "raw_path": request.scope["raw_path"].decode(),
            "query": request.url.query,
            "headers": dict(request.headers),
            "body": body.decode(errors="replace"),
            "port": os.environ.get("PORT"),
        },
        status_code=201 if request.method == "POST" else 200,
        headers={"x-app": "echo", "set-cookie": "a=1"},
    )


@app.head("/echo/{rest:path}")
def echo_head(rest: str) -> Response:
    return Response(headers={"x-app": "head", "content-length": "42"})


GZIPPED_TEXT = "compressed by the app " * 50


@app.get("/gzip")
def gzipped() -> Response:
    """A body the app compressed itself: the caller must get these exact bytes."""
    return Response(
        gzip.compress(GZIPPED_TEXT.encode()),
        media_type="text/plain",
        headers={"content-encoding": "gzip"},
    )


@app.get("/stream")
async def stream(n: int = 5, delay: float = 0.3) -> StreamingResponse:
    async def lines() -> AsyncIterator[str]:
        for index in range(n):
            yield f"{index} {time.time():.6f}\n"
            await asyncio.sleep(delay)

    return StreamingResponse(lines(), media_type="text/plain")


@app.post("/upload")
async def upload(request: Request) -> dict[str, object]:
    """When each piece of the body arrived (wall clock), and how big it was."""
    pieces = []
    async for chunk in request.stream():
        if chunk:
            pieces.append([len(chunk), time.time()])
    return {"pieces": pieces, "total": sum(size for size, _ in pieces)}


@app.get("/slow")
async def slow(seconds: float = 2.0) -> dict[str, float]:
    await asyncio.sleep(seconds)
    return {"slept": seconds}


@app.get("/busy")
async def busy(seconds: float = 2.0) -> StreamingResponse:
    """Holds its worker busy (one request in flight) while it streams for ``seconds``."""

    async def lines() -> AsyncIterator[str]:
        yield "started\n"
        await asyncio.sleep(seconds)
        yield "done\n"

    return StreamingResponse(lines(), media_type="text/plain")
