"""podbook: a RunPod-style GPU cloud inside Jupyter, with a local emulator.

Heavy parts are imported lazily so that ``%load_ext podbook`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Client": "podbook.client",
    "AsyncClient": "podbook.client",
    "errors": "podbook.errors",
    "serve": "podbook.worker.background",
    "openai_handler": "podbook.worker.openai_compat",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'podbook' has no attribute {name!r}")
    mod = importlib.import_module(module)
    return mod if module.endswith(name) else getattr(mod, name)


def load_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%load_ext podbook``."""
    from podbook.notebook import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%unload_ext podbook``."""
    from podbook.notebook import unload_ipython_extension as _unload

    _unload(ipython)
