"""Where a worker takes its jobs from: the worker protocol's URLs, key and id.

A worker is configured exactly like an unmodified ``runpod`` worker, by the
``RUNPOD_WEBHOOK_*`` variables (see ``reference/queue-and-worker-protocol.md``), or from a
queue base URL and an endpoint id, which build the same templates for the emulator.

Templates keep the SDK's placeholders: ``$ID`` in the take URL is the worker id; in the
output and stream URLs ``$RUNPOD_POD_ID`` is the worker id and ``$ID`` the job id. The take,
output and stream templates end in ``?`` because the SDK appends its query parameters by
plain string concatenation (``&job_in_progress=0``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import quote

from podbook.errors import ConfigError

__all__ = [
    "DEFAULT_PING_INTERVAL_MS",
    "WorkerConfig",
    "new_worker_id",
    "webhook_templates",
]

DEFAULT_PING_INTERVAL_MS = 10_000

_TRUE = {"1", "true", "yes", "on"}


def new_worker_id() -> str:
    """A fresh worker id, e.g. ``podbook-3f9a1c2e``."""
    return f"podbook-{secrets.token_hex(4)}"


def webhook_templates(queue_url: str, endpoint_id: str) -> dict[str, str]:
    """The ``RUNPOD_WEBHOOK_*`` URL templates of ``endpoint_id`` on the broker at ``queue_url``."""
    base = f"{queue_url.rstrip('/')}/v2/{quote(endpoint_id, safe='')}"
    return {
        "RUNPOD_WEBHOOK_GET_JOB": f"{base}/job-take/$ID?",
        "RUNPOD_WEBHOOK_POST_OUTPUT": f"{base}/job-done/$RUNPOD_POD_ID/$ID?",
        "RUNPOD_WEBHOOK_POST_STREAM": f"{base}/job-stream/$RUNPOD_POD_ID/$ID?",
        "RUNPOD_WEBHOOK_PING": f"{base}/ping/$RUNPOD_POD_ID?",
    }


@dataclass(frozen=True)
class WorkerConfig:
    """Everything a :class:`~podbook.worker._runner.Runner` needs to talk to its broker.

    The URLs are templates with the worker id already filled in (``$ID`` of the output and
    stream URLs stays: it is the job id). ``worker_key`` never shows in a repr.
    """

    take_url: str
    output_url: str
    stream_url: str
    ping_url: str
    worker_key: str = field(repr=False)
    worker_id: str
    endpoint_id: str = ""
    concurrency: int = 1
    ping_interval: float = DEFAULT_PING_INTERVAL_MS / 1000
    refresh_worker: bool = False
    aggregate_stream: bool = True
    shutdown_grace: float = 10.0
    push: bool = True
    """Try the broker's push socket first (``docs/queue-push.md``); HTTP when refused.
    ``PODBOOK_WORKER_PUSH=0`` turns it off."""

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"concurrency {self.concurrency} is below 1; use 1 or more")
        if not self.worker_key:
            raise ConfigError(
                "no worker key: set RUNPOD_AI_API_KEY (`podbook worker-env ENDPOINT` prints one)"
            )

    @property
    def broker_url(self) -> str:
        """``scheme://host:port`` of the broker (for log lines)."""
        scheme, _, rest = self.take_url.partition("://")
        return f"{scheme}://{rest.split('/', 1)[0]}"

    @property
    def stop_url(self) -> str:
        """The job-stop long-poll URL: the take URL with ``/job-take/`` → ``/job-stop/``."""
        return self.take_url.replace("/job-take/", "/job-stop/")

    def batch_take_url(self, batch_size: int) -> str:
        """The take URL for ``batch_size`` jobs (``/job-take-batch/`` when more than one)."""
        if batch_size <= 1:
            return self.take_url
        return self.take_url.replace("/job-take/", "/job-take-batch/") + f"&batch_size={batch_size}"

    def result_url(self, job_id: str, *, is_stream: bool) -> str:
        """Where the result (or a progress update) of ``job_id`` is posted."""
        flag = "true" if is_stream else "false"
        return self.output_url.replace("$ID", quote(job_id, safe="")) + f"&isStream={flag}"

    def chunk_url(self, job_id: str) -> str:
        """Where one streamed chunk of ``job_id`` is posted."""
        return self.stream_url.replace("$ID", quote(job_id, safe="")) + "&isStream=false"

    def with_options(self, **changes: object) -> WorkerConfig:
        """A copy with some fields changed (``concurrency=``, ``refresh_worker=``, ...)."""
        return replace(self, **changes)  # type: ignore[arg-type]

    @classmethod
    def for_endpoint(
        cls,
        queue_url: str,
        endpoint_id: str,
        worker_key: str,
        *,
        worker_id: str | None = None,
        **options: object,
    ) -> WorkerConfig:
        """A config for ``endpoint_id`` on the broker at ``queue_url`` (e.g. the emulator)."""
        if not queue_url.startswith(("http://", "https://")):
            raise ConfigError(f"--url {queue_url!r} is not an http(s) URL")
        env = dict(webhook_templates(queue_url, endpoint_id))
        env["RUNPOD_AI_API_KEY"] = worker_key
        if os.environ.get("PODBOOK_WORKER_PUSH"):
            env["PODBOOK_WORKER_PUSH"] = os.environ["PODBOOK_WORKER_PUSH"]
        if worker_id:
            env["RUNPOD_POD_ID"] = worker_id
        return cls.from_env(env, endpoint_id=endpoint_id, **options)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, *, endpoint_id: str = "", **options: object
    ) -> WorkerConfig:
        """A config from the ``RUNPOD_*`` variables an unmodified ``runpod`` worker reads."""
        env = os.environ if env is None else env
        take = env.get("RUNPOD_WEBHOOK_GET_JOB", "").strip()
        if not take:
            raise ConfigError(
                "RUNPOD_WEBHOOK_GET_JOB is not set; pass --endpoint ID (and --url) "
                "or set the variables `podbook worker-env ENDPOINT` prints"
            )
        worker_id = env.get("RUNPOD_POD_ID", "").strip() or new_worker_id()
        missing = [
            name
            for name in ("RUNPOD_WEBHOOK_POST_OUTPUT", "RUNPOD_WEBHOOK_POST_STREAM")
            if not env.get(name, "").strip()
        ]
        if missing:
            raise ConfigError(
                f"{' and '.join(missing)} not set; set every RUNPOD_WEBHOOK_* variable "
                "(`podbook worker-env ENDPOINT` prints them)"
            )
        ping = env.get("RUNPOD_WEBHOOK_PING", "").strip()
        if "ping_interval" not in options:
            options["ping_interval"] = _ping_interval(env)
        if "push" not in options and env.get("PODBOOK_WORKER_PUSH"):
            options["push"] = env["PODBOOK_WORKER_PUSH"].strip().lower() in _TRUE
        if "refresh_worker" not in options and env.get("RUNPOD_REFRESH_WORKER"):
            options["refresh_worker"] = env["RUNPOD_REFRESH_WORKER"].strip().lower() in _TRUE
        return cls(
            take_url=_query_ready(take.replace("$ID", worker_id)),
            output_url=_query_ready(
                env["RUNPOD_WEBHOOK_POST_OUTPUT"].strip().replace("$RUNPOD_POD_ID", worker_id)
            ),
            stream_url=_query_ready(
                env["RUNPOD_WEBHOOK_POST_STREAM"].strip().replace("$RUNPOD_POD_ID", worker_id)
            ),
            ping_url=ping.replace("$RUNPOD_POD_ID", worker_id),
            worker_key=env.get("RUNPOD_AI_API_KEY", "").strip(),
            worker_id=worker_id,
            endpoint_id=endpoint_id or env.get("RUNPOD_ENDPOINT_ID", "").strip(),
            **options,  # type: ignore[arg-type]
        )


def _query_ready(url: str) -> str:
    """``url`` made ready for ``&name=value`` to be appended (a ``?`` added if it has none)."""
    return url if "?" in url else url + "?"


def _ping_interval(env: Mapping[str, str]) -> float:
    raw = env.get("RUNPOD_PING_INTERVAL", "").strip()
    if not raw:
        return DEFAULT_PING_INTERVAL_MS / 1000
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(
            f"RUNPOD_PING_INTERVAL={raw!r} is not a whole number of milliseconds"
        ) from None
    if value < 100:
        raise ConfigError(f"RUNPOD_PING_INTERVAL={value} is too short; use 100 ms or more")
    return value / 1000
