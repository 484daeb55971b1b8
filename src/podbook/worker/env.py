"""The old name of :mod:`podbook.worker._env`, kept while
``src/podbook/emulator/broker/autoscaler.py`` imports ``worker_env`` from here; delete it
with that import."""

from podbook.worker._env import worker_env

__all__ = ["worker_env"]
