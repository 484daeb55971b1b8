"""Static tables for ``%catalog gpus|cpus|datacenters``."""

from __future__ import annotations

from typing import Any

from podbook.notebook.display import StaticView
from podbook.notebook.panels.data import to_wire
from podbook.notebook.panels.snapshot import table_html, table_text

COLUMNS: dict[str, list[str]] = {
    "gpus": ["id", "memory", "maxCount", "secure", "community", "price", "cudaVersions"],
    "cpus": ["id", "name", "group", "vcpu", "ramGbPerVcpu", "price"],
    "datacenters": ["id", "name", "region", "globalNetwork", "networkVolumeTypes"],
}
TITLES = {"gpus": "GPU types", "cpus": "CPU flavors", "datacenters": "Data centers"}


def catalog_row(kind: str, entry: Any) -> dict[str, Any]:
    """A flat dict of the columns shown for one catalog entry."""
    row = to_wire(entry)
    if kind == "gpus" and "cudaVersions" not in row:
        availability = row.get("availability") or {}
        versions = availability.get("cudaVersions") if isinstance(availability, dict) else None
        if versions:
            row["cudaVersions"] = [
                v.get("version", v) if isinstance(v, dict) else v for v in versions
            ]
    return row


def catalog_view(rows: list[Any]) -> StaticView:
    """The table of ``rows`` (a :class:`CatalogRows`, whose ``kind`` picks the columns)."""
    kind = getattr(rows, "kind", "gpus")
    flat = [catalog_row(kind, entry) for entry in rows]
    columns = COLUMNS.get(kind, sorted({k for r in flat for k in r}))
    title = f"{TITLES.get(kind, kind)} ({len(flat)})"
    return StaticView(f"{title}\n{table_text(flat, columns)}", table_html(flat, columns, title))
