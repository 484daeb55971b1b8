"""Fixtures of the queue tests here: a fresh endpoint of the test's emulator (``emu``, the
shared one unless the module overrides it; ``http`` comes from tests/conftest.py) and a raw
worker of it (:class:`RawWorker`)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from test_queue_helpers import RawWorker, create_endpoint, worker_key


@pytest.fixture
def endpoint(http: httpx.Client) -> str:
    """A fresh endpoint served by nobody yet."""
    return create_endpoint(http, "ep-" + secrets.token_hex(4))


@pytest.fixture
def worker(emu: Any, http: httpx.Client, endpoint: str) -> Iterator[RawWorker]:
    """A raw worker of ``endpoint``."""
    w = RawWorker(emu.url, endpoint, worker_key(http, endpoint))
    yield w
    w.close()
