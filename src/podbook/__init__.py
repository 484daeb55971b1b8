"""podbook: a RunPod-style GPU cloud inside Jupyter, with a local emulator.

Heavy parts are imported lazily so that ``%load_ext podbook`` stays fast.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__version__ = "0.1.0"


def _lazy_getattr(namespace: dict[str, Any], homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of a package whose public names are imported on first use:
    ``homes`` maps each name to the module it lives in (a home named ``package.name`` is the
    module itself). The value is kept in the package's ``namespace`` (its ``globals()``), so
    the next use is an ordinary attribute; any other name raises ``AttributeError``."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home.rpartition(".")[2] == name else getattr(module, name)
        namespace[name] = value
        return value

    return __getattr__


def _lazy_dir(namespace: dict[str, Any], public: Iterable[str]) -> Callable[[], list[str]]:
    """The module ``__dir__`` of such a package: what it holds and its ``public`` names (those
    not imported yet included), each once."""

    def __dir__() -> list[str]:
        return sorted({*namespace, *public})

    return __dir__


__getattr__ = _lazy_getattr(
    globals(),
    {
        "Client": "podbook.client",
        "AsyncClient": "podbook.client",
        "errors": "podbook.errors",
        "serve": "podbook.worker",
        "openai_handler": "podbook.worker",
    },
)


def load_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%load_ext podbook``."""
    from podbook.notebook import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Entry point of ``%unload_ext podbook``."""
    from podbook.notebook import unload_ipython_extension as _unload

    _unload(ipython)
