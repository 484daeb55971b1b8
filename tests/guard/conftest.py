"""Fixtures of the pod-guard tests: an emulator whose pods really run (``--runtime local``),
its typed client, and an SSH key registered on its account while the session runs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

for helpers in ("remote", "runtime"):  # transfer_helpers, ssh_helpers
    sys.path.insert(0, str(Path(__file__).parent.parent / helpers))

from transfer_helpers import new_key, registered, typed_client  # noqa: E402

from podbook import Client  # noqa: E402
from podbook.remote.keys import SshKeyPair  # noqa: E402


@pytest.fixture(scope="session")
def guard_emu(start_emulator: Any) -> Any:
    """An emulator whose pods run for real, shared by the guard tests."""
    return start_emulator(extra_args=("--runtime", "local"))


@pytest.fixture(scope="session")
def guard_client(guard_emu: Any) -> Iterator[Client]:
    """Account A's typed client of ``guard_emu``."""
    with typed_client(guard_emu) as client:
        yield client


@pytest.fixture(scope="session")
def guard_key(
    guard_client: Client, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SshKeyPair]:
    """A key pair registered on the account while the session runs."""
    key = new_key(tmp_path_factory.mktemp("guard-key"))
    with registered(guard_client, key):
        yield key
