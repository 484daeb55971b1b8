"""The old name of :mod:`podbook.worker._lb.apps` (see :mod:`podbook.worker.lb`)."""

from podbook.worker._lb.apps import app_interface

__all__ = ["app_interface"]
