"""``%pod`` and ``%cluster``: pods and clusters as live panels.

:mod:`.commands` parses a line into a small command (``%pod create`` into the fields of its
request), :mod:`.handlers` calls the client and shows the result, :mod:`.views` makes the
live panels and the static forms, :mod:`.logs` is ``%pod logs``, :mod:`.magic` ties them to
the magics. The subcommands that work in the pod itself (``%%pod exec``, ``%pod push`` ...)
are in :mod:`podbook.notebook.remote`; the pod panels in :mod:`podbook.notebook.panels`.
"""
