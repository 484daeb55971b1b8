"""``python -m podbook.worker HANDLER --endpoint ID ...``: the same as ``podbook worker``."""

import argparse
import sys

from podbook.worker._cli import add_worker_commands


def main(argv: list[str] | None = None) -> int:
    """Run ``podbook worker`` (or ``worker-env`` when the first argument says so)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("worker", "worker-env"):
        args.insert(0, "worker")
    parser = argparse.ArgumentParser(prog="python -m podbook.worker")
    add_worker_commands(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(args)
    return int(parsed.run(parsed) or 0)


raise SystemExit(main())
