"""The IPython extension: ``%load_ext podbook``.

Loading registers the magics and prints one line saying which service they point at.
Nothing heavy (httpx, pydantic, anywidget) is imported here; the client, the panels and,
when no key is configured, the local emulator start on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

_MAGICS_KEY = "_podbook_magics"


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register ``%pod``, ``%cluster``, ``%catalog``, ``%%runjob``, ``%job`` and ``%endpoint``
    and say where they point."""
    from podbook.notebook.magics import PodMagics
    from podbook.notebook.target import describe_target

    if getattr(ipython, _MAGICS_KEY, None) is not None:
        unload_ipython_extension(ipython)
    magics = PodMagics(shell=ipython, parent=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    setattr(ipython, _MAGICS_KEY, magics)
    print(describe_target())


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Stop the refresher, release the client and remove the magics."""
    magics = getattr(ipython, _MAGICS_KEY, None)
    if magics is None:
        return
    magics.close()
    for kind in ("line", "cell"):
        table = ipython.magics_manager.magics[kind]
        for name in ("pod", "cluster", "catalog", "runjob", "job", "endpoint"):
            if getattr(table.get(name), "__self__", None) is magics:
                del table[name]
    if magics in ipython.configurables:
        ipython.configurables.remove(magics)
    setattr(ipython, _MAGICS_KEY, None)
