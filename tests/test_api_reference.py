"""The docs' API reference (docs/api/*.md) shows exactly the public surface.

Every name a public package exports (its ``__all__``) has an entry, and every entry names
its object by a public path (no ``_private`` module in it), so that what a user reads is
what they can import.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs" / "api"
PUBLIC_PACKAGES = ("podbook.client", "podbook.worker", "podbook.remote", "podbook.errors")


def targets() -> list[str]:
    """The ``::: path`` entries of every API reference page."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        found += re.findall(r"^::: (\S+)", page.read_text(), flags=re.MULTILINE)
    return found


def resolve(path: str) -> Any:
    """The module or object a reference entry names."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)


def members(module: ModuleType) -> list[Any]:
    """What a module entry shows: its ``__all__``, or its own public names."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")]
    return [getattr(module, name) for name in names]


def documented() -> list[Any]:
    shown: list[Any] = []
    for path in targets():
        obj = resolve(path)
        shown.append(obj)
        if isinstance(obj, ModuleType):
            shown += members(obj)
    return shown


def test_every_entry_names_a_public_path() -> None:
    private = [path for path in targets() if any(p.startswith("_") for p in path.split("."))]
    assert not private


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_exported_name_has_an_entry(package: str) -> None:
    module = importlib.import_module(package)
    shown = documented()
    missing = [
        name for name in module.__all__ if not any(getattr(module, name) is s for s in shown)
    ]
    assert not missing, f"{package} exports these without an API reference entry"
