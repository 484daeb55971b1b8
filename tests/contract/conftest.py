"""Fixtures of the contract tests: two Stoplight Prism mocks of the REST reference document.

Both are shared by the session, started together (start-up takes about 5 s) and stopped at
the end:

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


@pytest.fixture(scope="session")
def prism_mocks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, PrismMock]]:
    """Both mocks, started together (their start-up overlaps) and stopped at the end."""
    root = tmp_path_factory.mktemp("prism")
    seed = os.environ.get("PODBOOK_PRISM_SEED") or DEFAULT_SEED
    mocks = {
        "static": PrismMock(root, dynamic=False),
        "dynamic": PrismMock(root, dynamic=True, seed=seed),
    }
    try:
        for mock in mocks.values():
            mock.launch()
        for mock in mocks.values():
            mock.wait_ready()
        yield mocks
    finally:
        for mock in mocks.values():
            mock.stop()


@pytest.fixture(scope="session")
def prism_static(prism_mocks: dict[str, PrismMock]) -> PrismMock:
    """Prism answering the document's examples."""
    return prism_mocks["static"]


@pytest.fixture(scope="session")
def prism_dynamic(prism_mocks: dict[str, PrismMock]) -> PrismMock:
    """Prism answering data generated from the document's schemas (seeded)."""
    return prism_mocks["dynamic"]
