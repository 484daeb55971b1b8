"""anywidget panels (Python side) with static text/HTML snapshots.

Importing this package imports anywidget; the magics import it only on first use.
"""

from podbook.notebook.panels.base import Panel, Snapshot
from podbook.notebook.panels.cluster import ClusterPanel
from podbook.notebook.panels.pod import PodPanel
from podbook.notebook.panels.podlist import PodListPanel

__all__ = ["ClusterPanel", "Panel", "PodListPanel", "PodPanel", "Snapshot"]
