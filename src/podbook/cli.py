"""The ``podbook`` command line: ``podbook emulator ...``, ``podbook worker ...``,
``podbook worker-env ...``, ``podbook live-check ...``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from podbook.cliargs import positive_seconds

DEFAULT_PORT = 8765


def default_home() -> Path:
    """``$PODBOOK_HOME`` or ``~/.podbook``."""
    return Path(os.environ.get("PODBOOK_HOME") or Path.home() / ".podbook").expanduser()


SIMULATED_SECONDS = 2.0
"""Default PROVISIONING and STARTING times of a simulated pod (``--runtime none``)."""
LOCAL_PROVISION_SECONDS = 0.2
LOCAL_START_SECONDS = 0.3
"""Defaults with ``--runtime local``: the pod really starts, so it waits only a moment in
each status (a new pod takes SSH in well under a second)."""


def _timing(given: float | None, runtime: str, local_default: float) -> float:
    """A lifecycle time: the one given, else the runtime's default."""
    if given is not None:
        return given
    return local_default if runtime == "local" else SIMULATED_SECONDS


def _time_scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (e.g. 0.01)") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 (1 = real time)")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (0-65535; 0 picks a free one)")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="podbook", description=__doc__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    emu = commands.add_parser(
        "emulator",
        help="run the local emulator of the cloud's REST and queue interface",
        description="Run the local emulator (REST v2, queue, REST v1 on one port).",
    )
    emu.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; any other needs --allow-remote)",
    )
    emu.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (requires --api-key or account keys in --config)",
    )
    emu.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 = any)"
    )
    emu.add_argument("--db", type=Path, help="SQLite file (default HOME/emulator.db)")
    emu.add_argument(
        "--api-key", help="the default account's full key (default: reuse or generate one)"
    )
    emu.add_argument(
        "--config",
        type=Path,
        help="TOML file with further accounts, read-only keys, SSH keys, templates and quotas",
    )
    emu.add_argument(
        "--home", type=Path, help="state directory (default $PODBOOK_HOME or ~/.podbook)"
    )
    emu.add_argument(
        "--provision-seconds",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="how long a new pod stays PROVISIONING (default 0.2; 2 with --runtime none)",
    )
    emu.add_argument(
        "--start-seconds",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="how long a pod stays STARTING after provisioning or a start "
        "(default 0.3; 2 with --runtime none)",
    )
    emu.add_argument(
        "--log-interval-seconds",
        type=positive_seconds,
        default=5.0,
        metavar="S",
        help="how often a RUNNING pod writes a periodic log line (default 5)",
    )
    emu.add_argument(
        "--runtime",
        choices=("none", "local"),
        default="local",
        help="local: pods run for real on this machine (default; their args, SSH, Jupyter, "
        "ports on loopback; see docs/local-runtime.md); none: pods are simulated records",
    )
    emu.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default=os.environ.get("PODBOOK_SANDBOX") or "auto",
        help="with --runtime local: bwrap runs each pod in a bubblewrap sandbox (its own "
        "/workspace and /data paths, PID and network namespaces, private ports behind its "
        "public ones); none: the process runtime; auto (default, or $PODBOOK_SANDBOX): bwrap "
        "where it works, else the process runtime (see docs/local-runtime.md)",
    )
    _repeatable(
        emu,
        "--share-ro",
        "FOLDER",
        "with the sandbox: show this host folder read-only at its own path in every pod "
        "(repeatable; the process runtime sees the host anyway)",
        type=Path,
    )
    emu.add_argument(
        "--max-running-pods",
        type=int,
        default=16,
        metavar="N",
        help="at most N pods run at once (default 16; not with --runtime none)",
    )
    _repeatable(
        emu,
        "--rate-limit",
        "WINDOW=N",
        "requests per window per account (minute, hour, day); repeatable",
    )
    queue = emu.add_argument_group("queue broker")
    _repeatable(
        queue,
        "--endpoint",
        "NAME[=handler.py[:fn]]",
        "declare a queue endpoint; with a handler the emulator runs podbook workers for it",
    )
    queue.add_argument(
        "--worker-poll-seconds",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="how long job-take and job-stop hold when there is nothing (default 30)",
    )
    queue.add_argument(
        "--worker-gone-seconds",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="a worker not heard from for this long is marked gone (default 30)",
    )
    queue.add_argument(
        "--queue-time-scale",
        type=_time_scale,
        default=1.0,
        metavar="FACTOR",
        help="multiply TTL, retention, executionTimeout and webhook retry delays (tests)",
    )
    _repeatable(
        queue,
        "--queue-rate-limit",
        "OP=RATE[/CONCURRENT]",
        "per-endpoint limit of a queue operation per 10 s (e.g. run=1000/200)",
    )
    balancing = emu.add_argument_group("load-balancing endpoints")
    balancing.add_argument(
        "--lb-health-seconds",
        type=positive_seconds,
        default=1.0,
        metavar="SECONDS",
        help="how often each load-balancing worker's /ping is polled (default 1)",
    )
    balancing.add_argument(
        "--lb-ready-wait-seconds",
        type=positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long a request waits for a registered worker to become healthy (default 10)",
    )
    balancing.add_argument(
        "--lb-timeout-seconds",
        type=positive_seconds,
        default=330.0,
        metavar="SECONDS",
        help="a worker that has not answered within this long gets the caller a 524 (default 330)",
    )
    emu.set_defaults(run=run_emulator)
    from podbook.worker._cli import add_worker_commands

    add_worker_commands(commands)
    add_live_check_command(commands)
    return parser


def _repeatable(group: Any, flag: str, metavar: str, help: str, **options: Any) -> None:
    """A flag that may be given again and again: its values collect in a list (empty when it
    is not given)."""
    group.add_argument(flag, action="append", default=[], metavar=metavar, help=help, **options)


def add_live_check_command(commands: Any) -> None:
    """``podbook live-check``: the opt-in check of the real service (``make test-live``)."""
    from podbook.livecheck.run import DESCRIPTION, build_parser, run_live_check

    live = commands.add_parser(
        "live-check",
        help="check the real service with RUNPOD_API_KEY (read-only; --spend cycles a CPU pod)",
        description=DESCRIPTION,
    )
    build_parser(live)
    live.set_defaults(run=run_live_check)


SANDBOXES = ("auto", "bwrap", "none")
"""The ``--sandbox`` choices (``$PODBOOK_SANDBOX`` gives the default)."""


def choose_sandbox(wanted: str) -> tuple[str | None, str | None]:
    """The pod sandbox to use for ``--sandbox wanted``, and a note: ``(None, why)`` when bwrap
    was asked for and cannot work; ``("none", why)`` when ``auto`` falls back."""
    if wanted == "none":
        return "none", None
    from podbook.emulator.podruntime.box import usable

    reason = usable()
    if reason is None:
        return "bwrap", None
    return (None, reason) if wanted == "bwrap" else ("none", reason)


def run_emulator(args: argparse.Namespace) -> int:
    """``podbook emulator``: serve until interrupted."""
    from podbook.emulator.app import generate_api_key
    from podbook.emulator.broker.config import (
        BrokerSettings,
        EndpointSpecError,
        parse_declared_endpoint,
        parse_rate_limit,
    )
    from podbook.emulator.homeclaim import HomeTaken, claim_home
    from podbook.emulator.loadbalancer import LoadBalancerSettings
    from podbook.emulator.server import configure_logging, remote_bind_refusal, serve
    from podbook.emulator.settings import (
        DEFAULT_QUOTAS,
        EmulatorSettings,
        SettingsError,
        load_config,
        parse_quota,
    )

    home: Path = (args.home or default_home()).expanduser()
    # Everything the emulator writes is private whatever the caller's umask: its home, the
    # database (wherever --db puts it), pod trees, ledgers. Pod processes get 022 back.
    os.umask(0o077)
    try:
        accounts, quotas = load_config(args.config) if args.config else ([], {})
        for text in args.rate_limit:
            name, value = parse_quota(text)
            quotas[name] = value
        broker = BrokerSettings(
            take_wait_seconds=args.worker_poll_seconds,
            stop_wait_seconds=args.worker_poll_seconds,
            worker_gone_seconds=args.worker_gone_seconds,
            time_scale=args.queue_time_scale,
            endpoints=[parse_declared_endpoint(text) for text in args.endpoint],
            rate_limits=dict(parse_rate_limit(text) for text in args.queue_rate_limit),
            load_balancer=LoadBalancerSettings(
                health_seconds=args.lb_health_seconds,
                ready_wait_seconds=args.lb_ready_wait_seconds,
                request_timeout_seconds=args.lb_timeout_seconds,
            ),
        )
    except (SettingsError, EndpointSpecError) as exc:
        print(f"podbook emulator: {exc}", file=sys.stderr)
        return 2
    refusal = remote_bind_refusal(
        args.host,
        allow_remote=args.allow_remote,
        key_chosen=args.api_key is not None or any(a.keys for a in accounts),
    )
    if refusal:
        print(f"podbook emulator: {refusal}", file=sys.stderr)
        return 2
    try:
        claim = claim_home(home)  # held until this process ends
    except (HomeTaken, OSError) as exc:
        reason = exc if isinstance(exc, HomeTaken) else f"cannot use home {home} ({exc})"
        print(f"podbook emulator: {reason}", file=sys.stderr)
        return 2
    print_key = False
    api_key = args.api_key
    if api_key is not None and (not api_key.strip() or any(c.isspace() for c in api_key)):
        print(
            "podbook emulator: --api-key must be a non-empty string without spaces", file=sys.stderr
        )
        return 2
    if api_key is None:
        key_file = home / "emulator.key"
        try:
            api_key = key_file.read_text(encoding="utf-8").strip() or None
        except OSError:
            api_key = None
        if api_key is None:
            api_key = generate_api_key()
            print_key = True
    settings = EmulatorSettings(
        db_path=(args.db or home / "emulator.db").expanduser(),
        api_key=api_key,
        accounts=accounts,
        provision_seconds=_timing(args.provision_seconds, args.runtime, LOCAL_PROVISION_SECONDS),
        start_seconds=_timing(args.start_seconds, args.runtime, LOCAL_START_SECONDS),
        log_interval_seconds=args.log_interval_seconds,
        quotas={**DEFAULT_QUOTAS, **quotas},
        broker=broker,
        runtime=args.runtime,
        home=home,
        max_running_pods=max(1, args.max_running_pods),
        config_path=args.config.expanduser().resolve() if args.config else None,
    )
    if args.sandbox not in SANDBOXES:
        print(
            f"podbook emulator: no sandbox {args.sandbox!r} (from $PODBOOK_SANDBOX); "
            f"use one of {', '.join(SANDBOXES)}",
            file=sys.stderr,
        )
        claim.release()
        return 2
    if args.runtime == "local":
        sandbox, note = choose_sandbox(args.sandbox)
        if sandbox is None:
            print(f"podbook emulator: --sandbox bwrap cannot work here: {note}", file=sys.stderr)
            claim.release()
            return 2
        settings.sandbox, settings.sandbox_note = sandbox, note or ""
        shared = [folder.expanduser().resolve() for folder in args.share_ro]
        if missing := [str(folder) for folder in shared if not folder.is_dir()]:
            print(
                f"podbook emulator: --share-ro {missing[0]}: no such folder; "
                "name an existing folder to show in every pod",
                file=sys.stderr,
            )
            claim.release()
            return 2
        settings.share_ro = tuple(shared)
        if note:
            from podbook.client._local import no_sandbox_line

            print(f"podbook emulator: {no_sandbox_line(note)}", file=sys.stderr)
        settings.ssh_proxy_host = "127.0.0.1"
        settings.log_interval_seconds = 0.0  # no invented heartbeat: the log is the process's
    configure_logging()
    try:
        return serve(settings, host=args.host, port=args.port, home=home, print_key=print_key)
    except OSError as exc:
        claim.release()
        print(
            f"podbook emulator: cannot listen on {args.host}:{args.port} ({exc.strerror or exc}); "
            "pick another --port (0 picks a free one)",
            file=sys.stderr,
        )
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``podbook`` script."""
    if argv is None and sys.argv[1:2] == ["emulator"]:  # the process is the emulator's
        from podbook.emulator.memory import use_system_allocator

        use_system_allocator(sys.argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
