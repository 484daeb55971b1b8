"""The old name of :mod:`podbook.worker._handlers`, kept while
``src/podbook/notebook/endpoints/commands.py`` and ``serving.py`` import ``HandlerSpec`` from
here; delete it with those imports."""

from podbook.worker._handlers import HandlerSpec

__all__ = ["HandlerSpec"]
