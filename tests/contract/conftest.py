"""Fixtures of the contract tests: two Stoplight Prism mocks of the REST reference document.

Each is shared by the session, started when a test first needs it (about a second) and
stopped at the end:

- ``prism_static``: answers the document's examples;
- ``prism_dynamic`` (``-d``): answers data generated from the schemas, seeded with
  ``$PODBOOK_PRISM_SEED`` (default a fixed seed, so a failure can be reproduced); each request
  advances the generator, so repeated rounds see different data.

See ``prism.py`` for the process wrapper.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from prism import DEFAULT_SEED, PrismMock


def _started(tmp_path_factory: pytest.TempPathFactory, *, dynamic: bool) -> Iterator[PrismMock]:
    root = tmp_path_factory.mktemp("prism")
    seed = os.environ.get("PODBOOK_PRISM_SEED") or DEFAULT_SEED
    mock = PrismMock(root, dynamic=dynamic, seed=seed if dynamic else None)
    try:
        mock.launch()
        mock.wait_ready()
        yield mock
    finally:
        mock.stop()


@pytest.fixture(scope="session")
def prism_static(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrismMock]:
    """Prism answering the document's examples."""
    yield from _started(tmp_path_factory, dynamic=False)


@pytest.fixture(scope="session")
def prism_dynamic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrismMock]:
    """Prism answering data generated from the document's schemas (seeded)."""
    yield from _started(tmp_path_factory, dynamic=True)
