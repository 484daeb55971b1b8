"""The old name of :mod:`podbook.worker._config`, kept while
``src/podbook/emulator/broker/autoscaler.py`` imports ``new_worker_id`` from here; delete it
with that import."""

from podbook.worker._config import new_worker_id

__all__ = ["new_worker_id"]
