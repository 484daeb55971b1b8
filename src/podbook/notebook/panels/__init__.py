"""The machinery the anywidget panels of every magic family share: the panel base and the
refresh snapshot (:mod:`.base`), the views' assets and ESM (:mod:`.assets`, :mod:`.esm`), the
plain-dict data of the client's models (:mod:`.data`, :mod:`.masking`) and the static pieces
(:mod:`.snapshot`). Each family's panels live in its package (the pod panels in
:mod:`podbook.notebook.pods`).

Importing this package imports anywidget; the magics import it only on first use.
"""

from podbook.notebook.panels.base import Panel, Snapshot

__all__ = ["Panel", "Snapshot"]
