"""The old name of :mod:`podbook.worker._openai_compat`, kept while ``src/podbook/__init__.py``
and ``src/podbook/notebook/endpoints/serving.py`` import ``openai_handler`` from here (it is
public as ``podbook.worker.openai_handler``); delete it with those imports."""

from podbook.worker._openai_compat import openai_handler

__all__ = ["openai_handler"]
