"""The old name of :mod:`podbook.worker._lb`, kept while
``src/podbook/notebook/endpoints/lbserve.py`` imports ``serve_app`` from here and
``app_interface`` from ``podbook.worker.lb.apps``; delete it with those imports."""

from podbook.worker._lb import serve_app

__all__ = ["serve_app"]
