"""The network between client and emulator breaks during ``runsync``, ``status`` and ``stream``.

A real emulator process (its built-in ``echo`` and ``stream-demo`` workers talk to it
directly), a :class:`~faultproxy.FaultProxy` in front of it, and the real ``podbook.Client`` /
``AsyncClient`` pointed at the proxy. The proxy resets connections mid-response, refuses
connections for a while, and stalls. What must hold:

- ``status`` (a read) recovers transparently, or raises one clear ``ConnectionFailed`` line;
- ``runsync``/``run`` (submissions) are never resent once they may have reached the server:
  one clear line says so, and the job ran exactly once; a submission that never connected
  is sent again;
- ``stream`` loses no chunk and repeats none: with the emulator's resumable cursor a dropped
  read is asked again from where it stopped (10,000 chunks, several drops); without it (the
  real service: the proxy hides the cursor) a lost answer raises ``StreamInterrupted``.
"""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from faultproxy import FaultProxy

from podbook import AsyncClient, Client
from podbook.client import RetryPolicy
from podbook.errors import ConnectionFailed, InvalidRequest, StreamInterrupted

PATIENT = RetryPolicy(max_attempts=12, max_wait=30.0, backoff=0.1, max_backoff=1.0)
BRIEF = RetryPolicy(max_attempts=3, max_wait=1.0, backoff=0.1, max_backoff=0.2)
DEMO = "stream-demo"


@pytest.fixture
def proxy(emulator):
    """A fault proxy in front of the session emulator."""
    with FaultProxy(emulator.port) as fault_proxy:
        yield fault_proxy


@pytest.fixture(scope="module")
def retaining_emulator(start_emulator):
    """An emulator of this module's own that keeps finished jobs 20 times the seed's
    retention, so its ``/health`` completed count only grows while a test stalls (on the
    session emulator, other tests' jobs expire meanwhile and the count drops)."""
    return start_emulator(extra_args=("--queue-time-scale", "20"))


@pytest.fixture
def retaining_proxy(retaining_emulator):
    """A fault proxy in front of :func:`retaining_emulator`."""
    with FaultProxy(retaining_emulator.port) as fault_proxy:
        yield fault_proxy


def proxied(emulator, proxy, **kwargs) -> Client:
    """A client of the emulator through ``proxy``."""
    kwargs.setdefault("retry", PATIENT)
    return Client(api_key=emulator.api_key, url=proxy.url, **kwargs)


def one_line_without_secret(error: BaseException, emulator) -> str:
    text = str(error)
    assert "\n" not in text and emulator.api_key not in text, text
    return text


def tokens(chunks) -> list[int]:
    """The ``output_tokens`` of stream-demo chunks: 1, 2, 3, ... when complete and in order."""
    return [chunk.output["output_tokens"] for chunk in chunks]


def completed(emulator, endpoint: str) -> int:
    with emulator.http() as http:
        return http.get(f"/v2/{endpoint}/health").json()["jobs"]["completed"]


# -- the emulator's cursor ---------------------------------------------------------------


def test_cursor_reads_drain_nothing_and_plain_reads_are_unchanged(emulator):
    with Client(api_key=emulator.api_key, url=emulator.url) as client:
        job = client.endpoint(DEMO).run({"prompt": "c", "max_tokens": 40, "delay_ms": 0})
        job.wait(timeout=60)
    path = f"/v2/{DEMO}/stream/{job.id}"
    with emulator.http() as http:
        first = http.get(path, params={"cursor": "0"}).json()
        again = http.get(path, params={"cursor": "0"}).json()
        assert first == again and first["cursor"] == 0 and first["next"] == 40
        assert [c["output"]["output_tokens"] for c in first["stream"]] == list(range(1, 41))
        later = http.get(path, params={"cursor": "25"}).json()
        assert later["cursor"] == 25 and later["next"] == 40 and len(later["stream"]) == 15
        # chunks before 25 were acknowledged and forgotten: an older cursor starts at 25
        assert http.get(path, params={"cursor": "3"}).json()["cursor"] == 25
        plain = http.get(path).json()  # drains, with the service's body exactly
        assert set(plain) == {"status", "stream"} and len(plain["stream"]) == 15
        assert http.get(path).json() == {"status": "COMPLETED", "stream": []}
        bad = http.get(path, params={"cursor": "-1"})
    assert bad.status_code == 400
    assert "cursor must be a non-negative integer" in bad.json()["error"]


def test_a_bad_cursor_is_refused_before_sending(emulator):
    with (
        Client(api_key=emulator.api_key, url=emulator.url) as client,
        pytest.raises(InvalidRequest) as info,
    ):
        next(client.endpoint(DEMO).stream("job-1", cursor=-2))
    assert "cursor must be a non-negative integer" in one_line_without_secret(info.value, emulator)


# -- stream ------------------------------------------------------------------------------


def test_10000_chunks_through_repeated_drops_arrive_complete_in_order(emulator, proxy):
    with proxied(emulator, proxy) as client:
        job = client.endpoint(DEMO).run({"prompt": "net", "max_tokens": 10_000, "delay_ms": 0})
        proxy.drop_after(300_000, times=8)  # ~3.5 MB of answers: eight resets mid-response
        started = time.monotonic()
        gaps, chunks, last, status = [], [], started, None
        for batch in client.endpoint(DEMO).stream_batches(job.id):
            now = time.monotonic()
            gaps.append(now - last)
            last, status = now, batch.status
            chunks.extend(batch.stream)
        elapsed = time.monotonic() - started
    got = tokens(chunks)
    print(
        f"\n10,000-chunk stream: {len(got)} chunks, {len(got) - len(set(got))} duplicates, "
        f"{proxy.drops} drops injected, {proxy.connections} connections, {elapsed:.2f} s, "
        f"longest wait between answers {max(gaps):.3f} s"
    )
    assert got == list(range(1, 10_001))
    assert proxy.drops >= 5
    assert status == "COMPLETED"


def test_job_stream_rides_out_resets_and_refused_connections(emulator, proxy):
    with proxied(emulator, proxy) as client:
        job = client.endpoint(DEMO).run({"prompt": "r", "max_tokens": 1500, "delay_ms": 2})
        faults_done = threading.Event()

        def break_the_wire():
            for _ in range(3):
                time.sleep(0.4)
                proxy.cut_all()
            proxy.refuse(1.0)
            time.sleep(1.5)
            proxy.cut_all()
            faults_done.set()

        breaker = threading.Thread(target=break_the_wire, daemon=True)
        breaker.start()
        chunks = list(job.stream_chunks())
        breaker.join(10)
    got = tokens(chunks)
    print(f"\nresets + 1 s refused: {len(got)} chunks, {proxy.drops} connections reset")
    assert got == list(range(1, 1501))
    assert proxy.drops >= 3


@pytest.mark.anyio
async def test_async_stream_through_drops_loses_and_repeats_nothing(emulator, proxy):
    async with AsyncClient(api_key=emulator.api_key, url=proxy.url, retry=PATIENT) as client:
        job = await client.endpoint(DEMO).run({"prompt": "a", "max_tokens": 4000, "delay_ms": 0})
        proxy.drop_after(60_000, times=5)
        chunks = [chunk async for chunk in job.stream_chunks()]
    assert tokens(chunks) == list(range(1, 4001))
    assert proxy.drops >= 3


def test_stream_down_beyond_the_budget_raises_one_line_and_resumes_later(emulator, proxy):
    with proxied(emulator, proxy, retry=BRIEF) as client:
        endpoint = client.endpoint(DEMO)
        job = endpoint.run({"prompt": "b", "max_tokens": 300, "delay_ms": 5})
        reader = endpoint.stream_chunks(job.id)
        chunks = [next(reader)]
        proxy.refuse(4.0)
        with pytest.raises(StreamInterrupted) as info:
            chunks.extend(reader)
        error = info.value
        text = one_line_without_secret(error, emulator)
        assert f"job {job.id}" in text and "nothing was lost" in text and not error.lost
        assert isinstance(error, ConnectionFailed) and error.cursor == error.received
        time.sleep(4.5)  # the proxy listens again
        chunks.extend(job.stream_chunks(cursor=error.cursor))
    assert tokens(chunks) == list(range(1, 301))


def test_without_the_cursor_a_lost_stream_answer_is_reported_not_skipped(emulator, proxy):
    proxy.hide_cursor = True  # the emulator now answers /stream as the real service does
    with proxied(emulator, proxy) as client:
        endpoint = client.endpoint(DEMO)
        whole = endpoint.run({"prompt": "s", "max_tokens": 500, "delay_ms": 0})
        assert tokens(endpoint.stream_chunks(whole.id)) == list(range(1, 501))
        job = endpoint.run({"prompt": "t", "max_tokens": 3000, "delay_ms": 0})
        job.wait(timeout=60)
        proxy.drop_after(20_000)
        with pytest.raises(StreamInterrupted) as info:
            list(job.stream_chunks())
    text = one_line_without_secret(info.value, emulator)
    assert info.value.lost and "keeps no stream cursor" in text and "job.output()" in text


def test_stream_interrupted_says_in_one_line_what_is_known_and_what_to_do():
    def text(**kw):
        return str(StreamInterrupted("j1", "ep", "http://x/v2/ep/stream/j1", "reset", **kw))

    unknown = text(received=5, cursor=5, lost=True)
    assert "before the service said whether it keeps a stream cursor" in unknown
    assert "stream('j1', cursor=5)" in unknown and "job.output()" in unknown
    assert "keeps no stream cursor" in text(received=5, cursor=None, lost=True)
    assert "nothing was lost" in text(received=5, cursor=5, lost=False)
    for line in (unknown, text(received=0, cursor=None, lost=False)):
        assert "\n" not in line and line.startswith("The stream of job j1 on endpoint ep broke")


# -- status ------------------------------------------------------------------------------


def test_status_recovers_from_resets_refusals_and_stalls(emulator, proxy):
    with Client(api_key=emulator.api_key, url=emulator.url) as direct:
        job_id = direct.endpoint("echo").runsync({"x": 1}, wait=30_000).id
    with proxied(emulator, proxy, timeout=httpx.Timeout(1.0)) as client:
        endpoint = client.endpoint("echo")
        proxy.drop_after(40)  # inside the status line's answer
        assert endpoint.status(job_id).status == "COMPLETED"
        proxy.refuse(1.0)
        started = time.monotonic()
        assert endpoint.status(job_id).output == {"x": 1}
        refused_for = time.monotonic() - started
        proxy.stall(2.0)  # longer than the 1 s read timeout: retried until it passes
        assert endpoint.status(job_id).status == "COMPLETED"
    print(f"\nstatus: recovered {refused_for:.2f} s after a 1 s refusal; {proxy.drops} drops")
    assert proxy.drops >= 1 and refused_for >= 0.9


def test_status_down_beyond_the_budget_is_one_clear_line(emulator, proxy):
    with proxied(emulator, proxy, retry=BRIEF) as client:
        proxy.refuse(5.0)
        with pytest.raises(ConnectionFailed) as info:
            client.endpoint("echo").status("some-job")
    text = one_line_without_secret(info.value, emulator)
    assert text.startswith("Could not reach ") and "/status/some-job" in text


# -- runsync -----------------------------------------------------------------------------


def test_runsync_whose_answer_is_lost_is_not_resent(retaining_emulator, retaining_proxy):
    emulator, proxy = retaining_emulator, retaining_proxy
    before = completed(emulator, "echo")
    with proxied(emulator, proxy) as client:
        proxy.drop_after(30)  # the job ran; its answer is cut
        with pytest.raises(ConnectionFailed) as info:
            client.endpoint("echo").runsync({"once": True}, wait=30_000)
    text = one_line_without_secret(info.value, emulator)
    assert "may have been carried out" in text and "health()" in text
    time.sleep(0.5)
    assert completed(emulator, "echo") == before + 1  # ran once, never resubmitted


def test_runsync_that_never_connected_is_sent_again(retaining_emulator, retaining_proxy):
    emulator, proxy = retaining_emulator, retaining_proxy
    before = completed(emulator, "echo")
    with proxied(emulator, proxy) as client:
        proxy.refuse(0.8)
        job = client.endpoint("echo").runsync({"later": 1}, wait=30_000)
    assert job.output() == {"later": 1}
    assert completed(emulator, "echo") == before + 1


def test_runsync_stalled_past_its_timeout_is_not_resent(retaining_emulator, retaining_proxy):
    emulator, proxy = retaining_emulator, retaining_proxy
    before = completed(emulator, "echo")
    with proxied(emulator, proxy, timeout=httpx.Timeout(5.0)) as client:
        proxy.stall(25.0)
        started = time.monotonic()
        with pytest.raises(ConnectionFailed) as info:
            client.endpoint("echo").runsync({"slow": 1}, wait=1000)  # read timeout 1 + 15 s
        waited = time.monotonic() - started
    assert "may have been carried out" in one_line_without_secret(info.value, emulator)
    assert 15 <= waited < 25
    proxy.stall(0)
    assert completed(emulator, "echo") == before + 1


@pytest.mark.anyio
async def test_async_runsync_whose_answer_is_lost_is_not_resent(
    retaining_emulator, retaining_proxy
):
    emulator, proxy = retaining_emulator, retaining_proxy
    before = completed(emulator, "echo")
    async with AsyncClient(api_key=emulator.api_key, url=proxy.url, retry=PATIENT) as client:
        proxy.drop_after(30)
        with pytest.raises(ConnectionFailed) as info:
            await client.endpoint("echo").runsync({"async": True}, wait=30_000)
    assert "may have been carried out" in one_line_without_secret(info.value, emulator)
    await asyncio.sleep(0.5)
    assert completed(emulator, "echo") == before + 1


# -- the notebook's %%runjob panel -------------------------------------------------------


@pytest.fixture
def nb_shell(emulator, proxy, monkeypatch, tmp_path):
    """The session's IPython shell with podbook loaded, pointed at the emulator via ``proxy``."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    for name in ("PODBOOK_REST_URL", "PODBOOK_QUEUE_URL", "PODBOOK_V1_URL", "PODBOOK_LOCAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PODBOOK_URL", proxy.url)
    monkeypatch.setenv("RUNPOD_API_KEY", emulator.api_key)
    monkeypatch.setenv("PODBOOK_HOME", str(tmp_path / "podbook-home"))
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.config.pop("PodMagics", None)
    with capture_output():
        shell.run_line_magic("load_ext", "podbook")
    try:
        yield shell
    finally:
        shell.run_line_magic("unload_ext", "podbook")
        shell.config.pop("PodMagics", None)
        shell.user_ns.pop("nbtest_net_job", None)


def test_runjob_panel_stream_loses_nothing_through_drops(nb_shell, proxy):
    from IPython.utils.capture import capture_output

    from podbook.notebook.endpoints.book import book_for

    body = '{"prompt": "nb", "max_tokens": 10000, "delay_ms": 0}'
    proxy.drop_after(300_000, times=6)
    with capture_output():
        result = nb_shell.run_cell(f"%%runjob stream-demo -o nbtest_net_job\n{body}")
    assert result.success
    job = nb_shell.user_ns["nbtest_net_job"]
    session = nb_shell.magics_manager.registry["PodMagics"].session
    panel = book_for(session).known_panel(job.endpoint_id, job.id)
    deadline = time.monotonic() + 120
    while not (panel.status == "COMPLETED" and not panel.streaming):
        assert time.monotonic() < deadline, (panel.status, panel.chunks, panel.error)
        time.sleep(0.05)
    print(f"\n%%runjob panel: {panel.chunks} chunks, {proxy.drops} drops injected")
    assert panel.chunks == 10_000 and proxy.drops >= 4
    assert [entry["i"] for entry in panel.tail] == list(range(9800, 10_000))
    assert [entry["output"]["output_tokens"] for entry in panel.tail] == list(range(9801, 10_001))


def test_runjob_panel_reads_on_after_an_outage_beyond_the_retry_budget(
    nb_shell, proxy, monkeypatch
):
    from IPython.utils.capture import capture_output

    from podbook.notebook.endpoints.book import book_for

    monkeypatch.setattr("podbook.client._face.RetryPolicy", lambda: BRIEF)  # 1 s budget
    body = '{"prompt": "out", "max_tokens": 600, "delay_ms": 10}'
    with capture_output():
        result = nb_shell.run_cell(f"%%runjob stream-demo -o nbtest_net_job\n{body}")
    assert result.success
    job = nb_shell.user_ns["nbtest_net_job"]
    panel = book_for(nb_shell.magics_manager.registry["PodMagics"].session).known_panel(
        job.endpoint_id, job.id
    )
    deadline = time.monotonic() + 60
    while panel.chunks < 50:
        assert time.monotonic() < deadline, (panel.status, panel.chunks, panel.error)
        time.sleep(0.02)
    proxy.refuse(3.0)  # three times the budget: the stream is interrupted, then read on
    states = set()
    while not (panel.status == "COMPLETED" and not panel.streaming):
        assert time.monotonic() < deadline, (panel.status, panel.chunks, panel.error)
        states.add(panel.connection)
        time.sleep(0.02)
    assert "reconnecting" in states and panel.connection == "ok"
    assert panel.chunks == 600
    assert [entry["output"]["output_tokens"] for entry in panel.tail] == list(range(401, 601))
