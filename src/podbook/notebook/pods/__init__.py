"""``%pod`` and ``%cluster``: pods and clusters as live panels.

:mod:`.commands` parses a line into a small command (``%pod create`` into the fields of its
request), :mod:`.handlers` calls the client and shows the result, :mod:`.views` makes the
live panels and the static forms, :mod:`.logs` is ``%pod logs``, :mod:`.magic` ties them to
the magics. The panels: :mod:`.panel` (a pod), :mod:`.podlist`, :mod:`.cluster`, their static
forms in :mod:`.static`; what a pod panel reads beside the refresher: its log
(:mod:`.logfollow`), its guard's reports (:mod:`.guardwatch`), its services
(:mod:`.readyfeed`), its spend (:mod:`.spendfeed`); the pod list's costs (:mod:`.podcosts`).
Panels get callbacks and never import the magic side. The subcommands that work in the pod
itself (``%%pod exec``, ``%pod push`` ...) are in :mod:`podbook.notebook.remote`.
"""
