"""The Hypothesis profiles of the suite (tests/conftest.py) and the make targets that pick them.

``make test`` (and every target but ``make test-explore``) runs the ``deterministic`` profile:
a property test draws the same examples on every run, so a run cannot fail by chance on code
that passed before. ``make test-explore`` runs the Hypothesis tests with fresh randomness.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
HYPOTHESIS_PROFILE_VAR = "PODBOOK_HYPOTHESIS_PROFILE"  # read by tests/conftest.py


def _requested_profile(config: pytest.Config) -> str:
    """The profile this run asked for: ``--hypothesis-profile``, else the variable, else the
    default."""
    return (
        config.getoption("hypothesis_profile", None)
        or os.environ.get(HYPOTHESIS_PROFILE_VAR)
        or "deterministic"
    )


def _draws(profile: str) -> list[list[int]]:
    """The examples one run of a small property test draws under ``profile``."""
    seen: list[list[int]] = []

    @settings(settings.get_profile(profile), max_examples=20)
    @given(st.lists(st.integers(), min_size=1, max_size=5))
    def record(values: list[int]) -> None:
        seen.append(values)

    record()
    return seen


def test_the_run_uses_the_profile_it_asked_for(request: pytest.FixtureRequest) -> None:
    wanted = _requested_profile(request.config)
    assert settings.default == settings.get_profile(wanted)
    if wanted == "deterministic":
        assert settings.default.derandomize and settings.default.database is None


def test_the_deterministic_profile_draws_the_same_examples_every_run() -> None:
    assert _draws("deterministic") == _draws("deterministic")
    profile = settings.get_profile("deterministic")
    assert profile.derandomize and profile.database is None and profile.deadline is None


def test_the_explore_profile_draws_fresh_examples() -> None:
    profile = settings.get_profile("explore")
    assert not profile.derandomize and profile.database is not None
    assert _draws("explore") != _draws("explore")  # 20 random lists twice: never all equal


@pytest.mark.parametrize(
    ("target", "explores"),
    [("test-python", False), ("test-fast", False), ("test-explore", True)],
)
def test_only_test_explore_explores(target: str, explores: bool) -> None:
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTEST_ARGS": ""},
    ).stdout
    pytest_lines = [line for line in printed.splitlines() if "/pytest " in line]
    assert pytest_lines, printed
    assert all(("--hypothesis-profile explore" in line) is explores for line in pytest_lines)
    if explores:
        assert all('-m "hypothesis' in line for line in pytest_lines)
