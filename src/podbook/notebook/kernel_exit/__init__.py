"""What happens to the pods a kernel created when that kernel ends.

``PodMagics.on_exit`` (``warn``, ``stop``, ``terminate`` or ``keep``; ``%pod create
--on-exit`` per pod) says what: :mod:`.policy` picks the default (``PODBOOK_ON_EXIT``, else
``stop`` in a headless run, else ``warn``), :mod:`.ledger` remembers the pods, :mod:`.settle`
does it within a short deadline, :mod:`.report` words it in one line each, and :mod:`.watch`
runs it once when the kernel ends (``exit``, a shutdown or restart request, interpreter exit).
See ``docs/cost-control.md#when-the-kernel-ends``.

Importing the package stays light (``%load_ext podbook`` reads :mod:`.policy`); the rest
loads with the first pod created.
"""
