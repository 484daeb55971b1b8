"""``%catalog gpus|cpus|datacenters``: the catalog, and the GPU finder.

:mod:`.commands` parses a line (the finder's filters, and the create request a row stands
for), :mod:`.finder` keeps the GPU types that pass the filters and draws their rows,
:mod:`.handlers` reads the catalog and shows it, :mod:`.views` draws the static tables and
:mod:`.panel` is the finder's widget (``views/catalog.js``).
"""
