"""``podbook live-check`` (``make test-live``): the checks in order, the one-line plan before
them, the summary after them, and the exit code.

Exit codes: 0 every check passed; 1 a check failed; 2 nothing was run (no
``RUNPOD_API_KEY``, or an unusable setting); 130 interrupted (after the cleanup).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

from podbook.livecheck.options import (
    NAME_PREFIX,
    LiveOptions,
    OptionsError,
    add_arguments,
    options_from,
)

__all__ = ["build_parser", "main", "plan_line", "run_live_check"]

PROG = "podbook live-check"
DESCRIPTION = (
    "Check the real service with your key (RUNPOD_API_KEY): read-only calls by default, "
    "validated against podbook's models; with --spend (PODBOOK_LIVE_SPEND=1) one CPU pod is "
    "also created, cycled and terminated. See docs/live-check.md."
)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The ``live-check`` flags, on ``parser`` (a subcommand's) or a new one."""
    parser = parser or argparse.ArgumentParser(prog=PROG, description=DESCRIPTION)
    add_arguments(parser)
    return parser


def plan_line(target: str, options: LiveOptions) -> str:
    """The one line said before anything is sent: what will happen, and what it may cost."""
    reads = "catalog, pods, endpoints, templates, network volumes, registries, SSH keys, billing"
    if options.endpoint:
        reads += f", queue health of {options.endpoint}"
    line = f"live check of {target}: read-only calls ({reads})"
    if not options.spend:
        return line + "; costs nothing (PODBOOK_LIVE_SPEND=1 also cycles a CPU pod)"
    return line + (
        f"; then creates the cheapest available CPU pod ({NAME_PREFIX}*, at most "
        f"${options.max_price:.2f}/h), waits for RUNNING, reads SSH and logs, stops, starts "
        f"and terminates it: at most ${options.worst_case_cost:.2f} if it lives its full "
        f"{options.timeout:g} s, usually under a cent"
    )


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt (so the cleanup runs) while inside."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_live_check(
    args: argparse.Namespace,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the live check as ``args`` and ``env`` say; report to ``out``; the exit code."""
    env = os.environ if env is None else env
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    key = env.get("RUNPOD_API_KEY", "").strip()
    if not key:
        print(
            f"{PROG}: RUNPOD_API_KEY is not set; nothing was run. Set it to your API key "
            "(export RUNPOD_API_KEY=...) to check the service; see docs/live-check.md",
            file=err,
        )
        return 2

    from podbook.client import Client
    from podbook.client.config import resolve_settings
    from podbook.errors import PodbookError
    from podbook.livecheck.readonly import run_read_only
    from podbook.livecheck.report import Reporter
    from podbook.livecheck.spend import SpendRun

    try:
        options = options_from(args, env)
        settings = resolve_settings(local=False, env=env)
    except (OptionsError, PodbookError) as exc:
        print(f"{PROG}: {str(exc).replace(key, '***')}", file=err)
        return 2

    reporter = Reporter(out, secrets=(key,))
    reporter.line(plan_line(settings.describe(), options))
    spend: SpendRun | None = None
    interrupted = False
    with _sigterm_interrupts():
        client = Client(settings=settings)
        try:
            run_read_only(client, reporter, options)
            if options.spend:
                spend = SpendRun(client, reporter, options)
                spend.run()
        except KeyboardInterrupt:
            interrupted = True
        finally:
            client.close()

    counts = f"{reporter.passed} passed, {reporter.failed} failed, {reporter.skipped} skipped"
    mode = "with a pod" if options.spend else "read-only"
    money = ""
    if spend is not None and spend.pod_id is not None:
        usd = spend.meter.usd
        money = f"; the pod cost ≈ ${usd:.4f}" if usd >= 0.0001 else "; the pod cost < $0.0001"
    if interrupted:
        reporter.line(f"live check interrupted after {reporter.elapsed():.1f} s: {counts}{money}")
        return 130
    verdict = "OK" if reporter.failed == 0 else "FAILED"
    reporter.line(f"live check {verdict} ({mode}): {counts} in {reporter.elapsed():.1f} s{money}")
    return 0 if reporter.failed == 0 else 1


def main(
    argv: Sequence[str] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """``python -m podbook.livecheck [flags]``: parse, run, return the exit code."""
    args = build_parser().parse_args(argv)
    return run_live_check(args, env=env, out=out, err=err)
