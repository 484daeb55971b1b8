"""The OpenAI-compatible route in ``bench/stream.py``: the ``openai`` package against the
emulator, each figure beside the same through ``/stream`` long-polling in the same run.

- yield → chunk latency: a handler built with ``podbook.openai_handler`` yields pieces that
  carry the worker's monotonic clock; the ``openai`` client's stream and ``Client.stream``
  (``/stream``) read the same handler (an OpenAI request, and a native ``/run`` job);
- time to first token of ``chat-demo`` (``delay_ms`` per token) against ``stream-demo`` read
  through ``/stream``, both less the handler's own delay;
- many concurrent streams (``AsyncOpenAI`` with ``max_retries=0``, so a 429 shows) against the
  same number of ``/run`` jobs read with ``AsyncClient.stream``: every chunk, in order, 429s.

Imported by ``bench/stream.py`` (``import _openai_route``).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from _common import verdict

STAMP_HANDLERS = '''
"""The OpenAI-compatible handler of the streaming benchmark."""
import asyncio
import time

from podbook import openai_handler


async def stamped(prompt_or_messages, params):
    """``n`` pieces ``"i:t "``, t this process's monotonic clock at the yield."""
    gap = params.get("gap_ms", 0) / 1000
    for i in range(params.get("n", 100)):
        await asyncio.sleep(gap)
        yield f"{i}:{time.monotonic():.6f} "


handler = openai_handler(stamped, model="bench")
'''


def read_stamp(piece: str) -> tuple[int, float]:
    """``(index, yield time)`` of a ``"i:t "`` piece."""
    index, _, stamp = piece.strip().partition(":")
    return int(index), float(stamp)


def openai_client(emu: Any, endpoint_id: str, *, asynchronous: bool = False) -> Any:
    """The ``openai`` package pointed at the endpoint's OpenAI-compatible route (no retries:
    a 429 must show)."""
    import openai

    base = f"{emu.url}/v2/{endpoint_id}/openai/v1"
    kind = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return kind(base_url=base, api_key=emu.api_key, max_retries=0, timeout=300)


def _chat_body(count: int, gap_ms: int) -> dict[str, Any]:
    return {
        "model": "bench",
        "messages": [{"role": "user", "content": "stream stamps"}],
        "extra_body": {"n": count, "gap_ms": gap_ms},
    }


def openai_latency(emu: Any, endpoint_id: str, count: int, gap_ms: int) -> list[float]:
    """Seconds from each yield to its chunk out of the ``openai`` client's stream."""
    client = openai_client(emu, endpoint_id)
    delays: list[float] = []
    with client.chat.completions.create(stream=True, **_chat_body(count, gap_ms)) as stream:
        for chunk in stream:
            now = time.monotonic()
            if chunk.choices and chunk.choices[0].delta.content:
                delays.append(now - read_stamp(chunk.choices[0].delta.content)[1])
    client.close()
    if len(delays) != count:
        raise RuntimeError(f"the OpenAI stream delivered {len(delays)} of {count} chunks")
    return delays


def long_poll_latency(client: Any, endpoint_id: str, count: int, gap_ms: int) -> list[float]:
    """The same handler as a ``/run`` job read through ``Client.stream`` (``/stream``)."""
    endpoint = client.endpoint(endpoint_id)
    job = endpoint.run({"prompt": "stream stamps", "n": count, "gap_ms": gap_ms})
    delays = [time.monotonic() - read_stamp(piece)[1] for piece in endpoint.stream(job.id)]
    if len(delays) != count:
        raise RuntimeError(f"the /stream read delivered {len(delays)} of {count} chunks")
    return delays


def openai_first_token(emu: Any, delay_ms: int, rounds: int) -> list[float]:
    """Seconds from the request to ``chat-demo``'s first content piece, ``rounds`` times."""
    client = openai_client(emu, "chat-demo")
    firsts = []
    messages = [{"role": "user", "content": "Say something."}]
    for _ in range(rounds):
        started = time.monotonic()
        with client.chat.completions.create(
            model="chat-demo",
            messages=messages,  # type: ignore[arg-type]
            max_tokens=3,
            stream=True,
            extra_body={"delay_ms": delay_ms},
        ) as stream:
            first = None
            for chunk in stream:
                if first is None and chunk.choices and chunk.choices[0].delta.content:
                    first = time.monotonic() - started
        assert first is not None
        firsts.append(first)
    client.close()
    return firsts


def long_poll_first_token(client: Any, delay_ms: int, rounds: int) -> list[float]:
    """The same for ``stream-demo`` through ``/run`` and ``Client.stream``."""
    endpoint = client.endpoint("stream-demo")
    firsts = []
    for _ in range(rounds):
        started = time.monotonic()
        job = endpoint.run({"prompt": "Say something.", "max_tokens": 3, "delay_ms": delay_ms})
        first = None
        for _chunk in endpoint.stream(job.id):
            if first is None:
                first = time.monotonic() - started
        assert first is not None
        firsts.append(first)
    return firsts


@dataclass
class ManyStreams:
    """What ``streams`` concurrent streams of ``chunks`` chunks delivered."""

    route: str
    streams: int
    chunks: int
    seconds: float = 0.0
    complete: int = 0
    """Streams that delivered every chunk, in order."""
    delivered: int = 0
    refused: int = 0
    """429 answers."""
    errors: list[str] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)
    """CPU seconds each process spent on the run (emulator, worker, client)."""

    @property
    def lost(self) -> int:
        """Chunks not delivered."""
        return self.streams * self.chunks - self.delivered

    @property
    def ok(self) -> bool:
        """Every stream complete and in order, no 429, no error."""
        return self.complete == self.streams and self.refused == 0 and not self.errors


def _check_order(indexes: list[int], chunks: int) -> bool:
    return indexes == list(range(chunks))


async def _collect(result: ManyStreams, pieces: Any) -> None:
    """Read one stream's ``"i:t "`` pieces (an async iterator) into ``result``."""
    indexes: list[int] = []
    try:
        async for piece in pieces:
            index, stamp = read_stamp(piece)
            indexes.append(index)
            result.delays.append(time.monotonic() - stamp)
    finally:
        result.delivered += len(indexes)
        result.complete += _check_order(indexes, result.chunks)


async def _openai_streams(emu: Any, endpoint_id: str, result: ManyStreams, gap_ms: int) -> None:
    import openai

    client = openai_client(emu, endpoint_id, asynchronous=True)

    async def pieces() -> Any:
        stream = await client.chat.completions.create(
            stream=True, **_chat_body(result.chunks, gap_ms)
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content

    async def one() -> None:
        try:
            await _collect(result, pieces())
        except openai.RateLimitError:
            result.refused += 1
        except openai.OpenAIError as exc:
            result.errors.append(f"{type(exc).__name__}: {exc}"[:200])

    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(result.streams)))
    result.seconds = time.perf_counter() - started
    await client.close()


class _CountingTransport(httpx.AsyncHTTPTransport):
    """An httpx transport that counts 429 answers (the podbook client retries them)."""

    def __init__(self, result: ManyStreams, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._result = result

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        if response.status_code == 429:
            self._result.refused += 1
        return response


async def _long_poll_streams(emu: Any, endpoint_id: str, result: ManyStreams, gap_ms: int) -> None:
    from podbook import AsyncClient
    from podbook.errors import PodbookError

    limits = httpx.Limits(max_connections=2 * result.streams, max_keepalive_connections=None)
    transport = _CountingTransport(result, limits=limits)
    async with AsyncClient(api_key=emu.api_key, url=emu.url, transport=transport) as client:
        endpoint = client.endpoint(endpoint_id)

        async def pieces() -> Any:
            job = await endpoint.run({"prompt": "stamps", "n": result.chunks, "gap_ms": gap_ms})
            async for piece in endpoint.stream(job.id):
                yield piece

        async def one() -> None:
            try:
                await _collect(result, pieces())
            except PodbookError as exc:
                result.errors.append(f"{type(exc).__name__}: {exc}"[:200])

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(result.streams)))
        result.seconds = time.perf_counter() - started


def _cpu_seconds(pid: int | None = None) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def many_streams(
    emu: Any,
    endpoint_id: str,
    route: str,
    shape: tuple[int, int, int],
    worker_pid: int,
) -> ManyStreams:
    """``streams`` concurrent streams of ``chunks`` pieces ``gap_ms`` apart (``shape``), all
    started at once (``route``: ``openai`` or ``stream``), with the CPU each process spent."""
    streams, chunks, gap_ms = shape
    result = ManyStreams(route, streams, chunks)
    run = _openai_streams if route == "openai" else _long_poll_streams
    pids = {"emulator": emu.proc.pid, "worker": worker_pid, "client": None}
    before = {name: _cpu_seconds(pid) for name, pid in pids.items()}
    asyncio.run(run(emu, endpoint_id, result, gap_ms))
    result.cpu = {name: _cpu_seconds(pid) - before[name] for name, pid in pids.items()}
    return result


def p50_ms(seconds: list[float]) -> float:
    """The median, in ms."""
    return statistics.median(seconds) * 1000 if seconds else float("nan")


TARGET_YIELD_P50_MS = 5.0
TARGET_FIRST_TOKEN_OVER_DELAY_MS = 10.0


@dataclass
class Figures:
    """Everything the OpenAI part of the benchmark measured."""

    gap_ms: int
    first_token_delay_ms: int
    openai_delays: list[float]
    poll_delays: list[float]
    openai_firsts: list[float]
    poll_firsts: list[float]
    openai_many: ManyStreams
    poll_many: ManyStreams
    many_gap_ms: int


def measure(emu: Any, endpoint_id: str, args: Any, worker_pid: int) -> Figures:
    """Every OpenAI-route figure and its ``/stream`` counterpart, on ``endpoint_id`` (served
    by the worker ``worker_pid`` of :data:`STAMP_HANDLERS`, with room for
    ``args.openai_streams`` jobs)."""
    from podbook import Client

    with Client(api_key=emu.api_key, url=emu.url) as client:
        openai_latency(emu, endpoint_id, 20, args.gap_ms)  # warm-up
        long_poll_latency(client, endpoint_id, 20, args.gap_ms)
        openai_delays = openai_latency(emu, endpoint_id, args.latency_chunks, args.gap_ms)
        poll_delays = long_poll_latency(client, endpoint_id, args.latency_chunks, args.gap_ms)
        delay = args.first_token_delay_ms
        openai_first_token(emu, delay, 3)  # warm-up: starts chat-demo's worker
        long_poll_first_token(client, delay, 3)
        openai_firsts = openai_first_token(emu, delay, args.first_token_rounds)
        poll_firsts = long_poll_first_token(client, delay, args.first_token_rounds)
    many = (args.openai_streams, args.openai_chunks, args.openai_gap_ms)
    openai_many = many_streams(emu, endpoint_id, "openai", many, worker_pid)
    poll_many = many_streams(emu, endpoint_id, "stream", many, worker_pid)
    return Figures(
        args.gap_ms,
        delay,
        openai_delays,
        poll_delays,
        openai_firsts,
        poll_firsts,
        openai_many,
        poll_many,
        args.openai_gap_ms,
    )


def _p99_ms(seconds: list[float]) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000


def _row(label: str, openai_ms: float, poll_ms: float, target: str = "") -> str:
    ratio = openai_ms / poll_ms if poll_ms else float("nan")
    return f"  {label:<44} {openai_ms:9.2f} ms {poll_ms:9.2f} ms {ratio:7.2f}x  {target}"


def _many_line(result: ManyStreams) -> str:
    total = result.streams * result.chunks
    rate = result.delivered / result.seconds if result.seconds else 0.0
    line = (
        f"    {result.route:<7} {result.complete}/{result.streams} streams complete and in "
        f"order, {result.delivered:,}/{total:,} chunks ({result.lost} lost), "
        f"{result.refused} × 429, {result.seconds:.1f} s ({rate:,.0f} chunks/s), yield → "
        f"chunk p50 {p50_ms(result.delays):.1f} ms p99 {_p99_ms(result.delays):.1f} ms"
    )
    line += "; CPU s " + ", ".join(f"{name} {sec:.1f}" for name, sec in result.cpu.items())
    if result.errors:
        line += f"; {len(result.errors)} error(s), first: {result.errors[0]}"
    return line


def report(fig: Figures) -> tuple[list[str], bool]:
    """The report lines, and whether every target of the OpenAI route was met."""
    yield_p50 = p50_ms(fig.openai_delays)
    over = [t * 1000 - fig.first_token_delay_ms for t in fig.openai_firsts]
    poll_over = [t * 1000 - fig.first_token_delay_ms for t in fig.poll_firsts]
    over_p50, poll_over_p50 = statistics.median(over), statistics.median(poll_over)
    yield_ok = yield_p50 <= TARGET_YIELD_P50_MS
    first_ok = over_p50 <= TARGET_FIRST_TOKEN_OVER_DELAY_MS
    many_ok = fig.openai_many.ok
    lines = [
        "the OpenAI-compatible route (the openai package) beside /stream long-polling "
        "(podbook Client), same run:",
        f"  {'':<44} {'OpenAI route':>12} {'/stream':>12} {'ratio':>8}",
        _row(
            f"yield → chunk p50 ({len(fig.openai_delays)} chunks, {fig.gap_ms} ms apart)",
            yield_p50,
            p50_ms(fig.poll_delays),
            f"target p50 <= {TARGET_YIELD_P50_MS:.0f} ms → {verdict(yield_ok)}",
        ),
        _row("yield → chunk p99", _p99_ms(fig.openai_delays), _p99_ms(fig.poll_delays)),
        _row(
            f"first token p50 over the {fig.first_token_delay_ms} ms delay ({len(over)} requests)",
            over_p50,
            poll_over_p50,
            f"target <= {TARGET_FIRST_TOKEN_OVER_DELAY_MS:.0f} ms → {verdict(first_ok)}",
        ),
        "    (chat-demo through /openai/v1/chat/completions; stream-demo through /run + "
        "/stream; both from the request to the first token)",
        f"  {fig.openai_many.streams} concurrent streams × {fig.openai_many.chunks} chunks "
        f"({fig.many_gap_ms} ms apart), one podbook worker: no chunk lost and no 429 → "
        f"{verdict(many_ok)}",
        _many_line(fig.openai_many),
        _many_line(fig.poll_many),
    ]
    return lines, yield_ok and first_ok and many_ok
