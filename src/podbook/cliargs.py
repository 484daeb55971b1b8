"""argparse value types shared by the ``podbook`` command line and its subcommands
(``podbook emulator`` in :mod:`podbook.cli`, ``podbook worker`` in :mod:`podbook.worker._cli`)."""

from __future__ import annotations

import argparse


def positive_seconds(text: str) -> float:
    """An argparse type: a number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more seconds")
    return value
