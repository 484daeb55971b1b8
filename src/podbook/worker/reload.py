"""The old name of :mod:`podbook.worker._reload`, kept while
``src/podbook/notebook/endpoints/serving.py`` imports ``code_label`` and ``HandlerWatch`` from
here; delete it with those imports."""

from podbook.worker._reload import HandlerWatch, code_label

__all__ = ["HandlerWatch", "code_label"]
