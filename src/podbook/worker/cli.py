"""The old name of :mod:`podbook.worker._cli`, kept while ``src/podbook/cli.py`` imports it
from here; delete it with that import."""

from podbook.worker._cli import add_worker_commands

__all__ = ["add_worker_commands"]
