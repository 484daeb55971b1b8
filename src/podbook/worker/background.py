"""The old name of :mod:`podbook.worker._background`, kept while ``src/podbook/__init__.py``
(``serve``) and ``src/podbook/notebook/endpoints/serving.py`` (``served_worker``) import from
here; delete it with those imports."""

from podbook.worker._background import serve, served_worker

__all__ = ["serve", "served_worker"]
