"""The public packages' names: what ``dir()`` lists is what can be imported, once each."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("package", ["podbook.client", "podbook.worker", "podbook.remote"])
def test_dir_lists_each_public_name_once_before_and_after_use(package: str) -> None:
    module = importlib.import_module(package)
    for name in module.__all__:
        getattr(module, name)  # imported on first use
        listed = dir(module)
        assert len(listed) == len(set(listed)), package
        assert set(module.__all__) <= set(listed)
