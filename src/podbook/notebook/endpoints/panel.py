"""JobPanel: one serverless job, live (view: ``views/job.js``).

Traits (see ``docs/architecture.md``): ``job`` (id, endpointId, status, delayTime,
executionTime, error, output), ``status``, ``tail`` (the last ≤ 200 chunks as
``{"i", "output"}``), ``chunks`` (how many arrived), ``rate`` (tokensPerSecond,
chunksPerSecond, metrics), ``error``, ``busy``, ``connection``, ``updated``.

The panel follows its job in one of two ways:

- **stream**: a :class:`StreamPump` reads ``/stream/{id}`` on background threads; chunks go
  to the view as ``{"type": "chunks", "start", "items"}`` messages about every 75 ms. When
  the stream cannot be read (a service that does not stream this job), the panel falls back
  to polling; when it broke beyond the client's retries on a service that offers the
  resumable cursor, the panel shows "reconnecting" and reads on from where it stopped.
- **poll**: the session's one refresher thread reads ``/status`` each tick
  (:mod:`podbook.notebook.endpoints.polling`) until the job has ended.

The view's ``{"type": "ready", "have": n}`` is answered with the chunks after ``n`` still
in the tail; ``{"type": "action", "action": "cancel"|"retry"}`` runs on a worker thread.
After a retry the stream starts over: ``chunks`` goes back to 0 (the view then empties
its stream) and numbering restarts at 0. No key or client object ever reaches a trait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

import traitlets

from podbook.notebook.endpoints.pump import StreamPump
from podbook.notebook.endpoints.rate import RateMeter
from podbook.notebook.endpoints.records import (
    ACTIVE_JOB_STATUSES,
    RETRYABLE_JOB_STATUSES,
    TERMINAL_JOB_STATUSES,
    job_state,
)
from podbook.notebook.endpoints.static import job_html, job_text
from podbook.notebook.endpoints.streambuffer import TAIL_MAX, StreamBuffer
from podbook.notebook.panels.assets import view_asset
from podbook.notebook.panels.base import Panel, Snapshot, now_iso, run_in_worker

RATE_INTERVAL = 0.25
"""Seconds between two updates of the ``rate`` trait while chunks arrive."""
GONE = "the job no longer exists on the endpoint (its TTL or result retention has passed)."


class JobPanel(Panel):
    """A live serverless job: status, timings, its stream, tokens/s, Cancel and Retry."""

    _esm = view_asset("job.js")
    _css = view_asset("podbook.css")
    needs: ClassVar[frozenset[str]] = frozenset()

    job = traitlets.Dict().tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    tail = traitlets.List().tag(sync=True)
    chunks = traitlets.Int(0).tag(sync=True)
    rate = traitlets.Dict().tag(sync=True)
    busy = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        record: Any,
        endpoint_id: str,
        client: Any = None,
        register: Callable[[Any], None] | None = None,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(client=client, on_change=on_change)
        self.endpoint_id = endpoint_id
        self._register = register
        self._buffer = StreamBuffer()
        self._meter = RateMeter()
        self._pump: StreamPump | None = None
        self._polling = False
        self._gone = False
        self._rate_at = 0.0
        self._shown_status = ""  # the status the displays were last re-sent with
        self._view_ready = False
        self._follow_mode = "poll"
        self._set_record(record)
        self.on_msg(self._on_view_message)

    # -- state ----------------------------------------------------------------------------

    @property
    def job_id(self) -> str:
        """The job's ID."""
        return str(self.job.get("id", ""))

    @property
    def ended(self) -> bool:
        """True once the job has reached a final status (or no longer exists)."""
        return self._gone or self.status in TERMINAL_JOB_STATUSES

    @property
    def final(self) -> bool:
        """For the refresher: nothing to poll (streaming, ended, or gone)."""
        return not self._polling or self.ended

    @property
    def settled(self) -> bool:
        """True once the job has ended, its stream (if followed) was read to the end and the
        displays were re-sent with the end."""
        return self.ended and not self.streaming and self._shown_status == self.status

    @property
    def streaming(self) -> bool:
        """True while the stream pump follows the job."""
        return self._pump is not None and self._pump.running

    def _set_record(self, record: Any) -> None:
        with self._lock:
            state = job_state(record, self.endpoint_id, self.job)
            with self.hold_sync():
                self.job = state
                self.status = state["status"]
                self._touched_locally()

    def _set(self, **traits: Any) -> None:
        """Set traits under the panel's lock: the pump's flusher also sets traits, and
        ``hold_sync`` is not safe across threads."""
        with self._lock, self.hold_sync():
            for name, value in traits.items():
                setattr(self, name, value)

    def _set_status(self, status: str) -> None:
        with self._lock, self.hold_sync():
            self.job = {**self.job, "status": status}
            self.status = status
            self.updated = now_iso()

    def _endpoint(self) -> Any:
        client = self.client
        if client is None:
            raise RuntimeError("this panel has no client; show the job with %job status.")
        return client.endpoint(self.endpoint_id)

    # -- following the job ------------------------------------------------------------------

    def follow(self, mode: str) -> JobPanel:
        """Follow the job by ``"stream"`` or ``"poll"`` until it ends (no-op once ended)."""
        self._follow_mode = mode
        if self.ended:
            return self
        if mode == "stream":
            self._start_pump()
        else:
            self._start_polling()
        return self

    def _start_polling(self) -> None:
        self._polling = True
        if self._register is not None:
            self._register(self)

    def _start_pump(self, cursor: int = 0) -> None:
        endpoint = self._endpoint()
        job_id = self.job_id
        self._pump = StreamPump(
            lambda: endpoint.stream_batches(job_id, cursor=cursor),
            self._flush,
            self._buffer,
            self._meter,
            name=f"podbook-job-{job_id[:12]}",
        )
        self._pump.start()  # after the assignment: the flusher may finish at once

    def stop(self) -> None:
        """Stop following the job (the panel keeps what it has)."""
        self._polling = False
        if self._pump is not None:
            self._pump.stop()

    def _flush(self, final: bool) -> None:
        """Send what arrived (on the pump's flusher thread); see the module docstring."""
        pump = self._pump
        if pump is None:
            return
        buffer, meter = pump.buffer, pump.meter
        while (batch := buffer.take()) is not None:
            self.send(batch.message())
        now = time.monotonic()
        with self._lock, self.hold_sync():
            if self.chunks != buffer.total:
                self.chunks = buffer.total
                if self.connection != "ok":  # chunks flow again after an interruption
                    self.connection = "ok"
            moved = pump.status and pump.status != self.status
            if not final and moved and self.status not in TERMINAL_JOB_STATUSES:
                self._set_status(pump.status)  # never back from CANCELLED (the button's)
            if final or now - self._rate_at >= RATE_INTERVAL:
                if meter.chunks:
                    self.rate = meter.snapshot(finished=final)
                self._rate_at = now
            tail = buffer.tail_to_send(now, final=final, view_ready=self._view_ready)
            if tail is not None:
                self.tail = tail
        if final:
            self._stream_ended(pump)

    def _stream_ended(self, pump: StreamPump) -> None:
        from podbook import errors

        failure = pump.failure
        if isinstance(failure, errors.NotFound):
            self._job_gone()
        elif isinstance(failure, errors.StreamInterrupted) and failure.cursor is not None:
            # The service stayed unreachable beyond the client's retry budget and offers the
            # resumable cursor (or had not answered yet): read on from the chunk the stream
            # stopped at (none shown twice) until it answers again.
            self._set(connection="reconnecting")
            self._start_pump(failure.cursor)
        elif failure is not None:
            # The stream could not be read (the service does not stream this job, or the
            # connection failed): the refresher's status polls take over.
            self._set(connection="ok" if isinstance(failure, errors.APIError) else "reconnecting")
            self._start_polling()
        else:
            self._fetch_final(pump.status)
        self._changed()
        if self.ended:
            self.refresh_displays()

    def _fetch_final(self, streamed_status: str | None) -> None:
        from podbook import errors

        try:
            self._set_record(self._endpoint().status(self.job_id))
        except errors.NotFound:
            if streamed_status:
                self._set_status(streamed_status)
            else:
                self._job_gone()
            return
        except errors.PodbookError:
            if streamed_status:
                self._set_status(streamed_status)
            self._start_polling()
            return
        if not self.ended:
            self._start_polling()

    def _job_gone(self) -> None:
        self._gone = True
        self._polling = False
        self._set(error=GONE, updated=now_iso())

    # -- the refresher (poll mode) ----------------------------------------------------------

    def apply_snapshot(self, snapshot: Snapshot) -> None:
        """Pod snapshots do not concern a job; its status arrives through :meth:`apply_queue`."""

    def queue_key(self) -> tuple[str, ...] | None:
        """What the refresher must read for this panel this tick (None: nothing)."""
        if not self._polling or self.ended:
            return None
        return ("status", self.endpoint_id, self.job_id)

    def apply_queue(self, result: Any) -> None:
        """Take the refresher's ``/status`` answer (a record, or the exception it raised)."""
        from podbook import errors

        if isinstance(result, errors.NotFound):
            self._job_gone()
        elif isinstance(result, BaseException):
            self._set(connection="reconnecting")
            return
        else:
            self._set_record(result)
            self._set(connection="ok")
        if self.ended:
            self.refresh_displays()

    # -- displays ---------------------------------------------------------------------------

    def display(self) -> None:
        """Display the panel (see :meth:`Panel.display`); what it shows is then current."""
        super().display()
        self._shown_status = self.status

    def refresh_displays(self) -> None:
        """Re-send this panel's outputs once the job ended, so the static text/HTML forms a
        saved notebook keeps (nbconvert, a viewer without widgets) show the end too.

        Only while the whole stream is in the tail: a front end re-renders an updated output,
        and the new view could only get the tail back (see :meth:`Panel.redisplay`).
        """
        if self.chunks <= TAIL_MAX:
            self.redisplay()
        self._shown_status = self.status

    # -- actions ----------------------------------------------------------------------------

    def _on_view_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("type") == "ready":
            self.answer_ready(content.get("have"))
        elif content.get("type") == "action":
            self.request_action(str(content.get("action", "")))

    def answer_ready(self, have: Any) -> None:
        """Send a view that rendered late the chunks after ``have`` still in the tail.

        Runs on the kernel's shell thread (where comm messages arrive), so it waits for a
        busy cell to end; until then the flusher keeps the ``tail`` trait current
        (:data:`~podbook.notebook.endpoints.streambuffer.UNANSWERED_TAIL_INTERVAL`)."""
        self._view_ready = True
        batch = self._buffer.backlog_after(have)
        if batch is not None:
            self.send(batch.message())

    def request_action(self, action: str) -> None:
        """Cancel (while IN_QUEUE/IN_PROGRESS) or Retry (after FAILED/TIMED_OUT), on a worker."""
        allowed = {"cancel": ACTIVE_JOB_STATUSES, "retry": RETRYABLE_JOB_STATUSES}.get(action)
        if allowed is None:
            self._set(error=f"unknown action {action!r}; the job panel offers cancel and retry.")
            return
        if self.status not in allowed:
            when = " or ".join(sorted(allowed))
            self._set(error=f"{action} is possible when the job is {when}; it is {self.status}.")
            return
        if self.busy:
            self._set(error=f"wait until {self.busy} has finished.")
            return
        if self.client is None:
            self._set(error="this panel has no client; show the job with %job status.")
            return
        self._set(busy=action, error="")
        run_in_worker(lambda: self._run_action(action))

    def _run_action(self, action: str) -> None:
        from podbook import errors
        from podbook.notebook.endpoints.errors import describe_job_failure

        try:
            if action == "cancel":
                self._set_record(self._endpoint().cancel(self.job_id))
            else:
                self._retry()
        except errors.NotFound:
            self._job_gone()
        except errors.PodbookError as err:
            self._set(error=describe_job_failure(err, "job " + action))
        except Exception as err:  # noqa: BLE001 - a button must never fail silently
            self._set(error=f"{action} failed: {type(err).__name__}: {err}")
        finally:
            self._set(busy="")
            self._changed()
        if self.ended and not self.streaming:  # a followed stream re-sends them as it ends
            self.refresh_displays()

    def _retry(self) -> None:
        pump = self._pump
        if pump is not None:
            pump.join(timeout=15)
        # Through a Job handle: every other handle of this job (the one %%runjob returned)
        # then follows the new run too, instead of its final record.
        self.restart(self._endpoint().job(self.job_id).retry())

    def restart(self, record: Any) -> None:
        """Follow the job again after a retry: the stream starts over (``chunks`` back to 0,
        which empties the view's stream), in the same mode as before."""
        with self._lock, self.hold_sync():
            self._buffer = StreamBuffer()
            self._meter = RateMeter()
            self._rate_at = 0.0
            self._gone = False
            self._shown_status = ""
            self._settled_sent = False  # its new end is sent again as a cell ends
            self.chunks = 0
            self.tail = []
            self.rate = {}
            self.job = {**self.job, "error": None, "output": None}
        self._set_record(record)
        self.follow(self._follow_mode)

    # -- static forms -----------------------------------------------------------------------

    def snapshot_text(self) -> str:
        return job_text(self.job, self._buffer.peek_tail(), self.chunks, self.rate, self.error)

    def snapshot_html(self) -> str:
        return job_html(self.job, self._buffer.peek_tail(), self.chunks, self.rate, self.error)
