"""Static tables for ``%catalog gpus|cpus|datacenters`` and the GPU finder's saved form."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from podbook.notebook.display import StaticView
from podbook.notebook.panels.data import to_wire
from podbook.notebook.panels.snapshot import table_html, table_text

if TYPE_CHECKING:
    from podbook.notebook.catalog.finder import CatalogRows, GpuRows
    from podbook.notebook.panels.data import JsonDict


def _money(value: object, digits: int = 2) -> str:
    return f"${value:.{digits}f}" if isinstance(value, (int, float)) else "-"


def _gpu_row(gpu: JsonDict) -> dict[str, object]:
    price = gpu.get("price") or {}
    max_count = gpu.get("maxCount") or {}
    versions = [v.get("version") for v in gpu.get("cudaVersions") or [] if v.get("available", True)]
    return {
        "id": gpu.get("id"),
        "VRAM GB": gpu.get("memory"),
        "secure $/h": _money(price.get("secure")) if gpu.get("secure") else "-",
        "community $/h": _money(price.get("community")) if gpu.get("community") else "-",
        "max count": "/".join(str(max_count.get(c, "-")) for c in ("secure", "community")),
        "availability": gpu.get("availability"),
        "CUDA": ", ".join(v for v in versions if v) or None,
    }


def _cpu_row(cpu: JsonDict) -> dict[str, object]:
    vcpu = cpu.get("vcpu") or {}
    return {
        "id": cpu.get("id"),
        "name": cpu.get("name"),
        "group": cpu.get("group"),
        "vCPUs": f"{vcpu.get('min', '?')}–{vcpu.get('max', '?')} (powers of two)",
        "RAM GB/vCPU": cpu.get("ramGbPerVcpu"),
        "$/vCPU/h": _money((cpu.get("price") or {}).get("securePerVcpu"), 3),
    }


def _datacenter_row(dc: JsonDict) -> dict[str, object]:
    return {
        "id": dc.get("id"),
        "name": dc.get("name"),
        "region": dc.get("region"),
        "global networking": dc.get("globalNetwork"),
        "network volumes": dc.get("networkVolumeTypes"),
    }


ROWS: dict[str, Callable[[JsonDict], dict[str, object]]] = {
    "gpus": _gpu_row,
    "cpus": _cpu_row,
    "datacenters": _datacenter_row,
}
TITLES = {"gpus": "GPU types", "cpus": "CPU flavors", "datacenters": "Data centers"}


def _finder_row(row: JsonDict) -> dict[str, object]:
    """A static row of the GPU finder from a panel row (:func:`.finder.panel_row`)."""
    flat = _gpu_row({**row, "cudaVersions": [{"version": v} for v in row.get("cudaVersions", [])]})
    stocked = [dc for dc in row.get("dataCenters") or [] if dc.get("availability") != "NONE"]
    flat["data centers"] = ", ".join(f"{dc['id']}:{dc['availability']}" for dc in stocked) or "-"
    return flat


def gpu_finder_view(
    rows: list[JsonDict],
    filters: str = "",
    created: JsonDict | None = None,
    error: str = "",
) -> StaticView:
    """The GPU finder's saved form: the filters, then the table (panel rows)."""
    from html import escape

    flat = [_finder_row(row) for row in rows]
    columns = list(flat[0]) if flat else ["id"]
    title = f"GPU types ({len(flat)})" + (f" — {filters}" if filters else "")
    notes = []
    if created:
        notes.append(f"created pod {created.get('id')} ({created.get('gpu')})")
    if error:
        notes.append(error)
    if not flat:
        notes.append("no GPU type matches; loosen the filters")
    text = "\n".join([title, table_text(flat, columns) if flat else "", *notes]).strip()
    extra = "".join(f"<div>{escape(n)}</div>" for n in notes)
    html = table_html(flat, columns, title).replace("</table>", "</table>" + extra, 1)
    if not flat:
        html += extra
    return StaticView(text, html)


def catalog_view(rows: CatalogRows) -> StaticView:
    """The table of ``rows`` (their ``kind`` picks the columns; the GPU finder's rows have
    their own view, :func:`finder_view`)."""
    kind = rows.kind
    flat = [ROWS[kind](to_wire(entry)) for entry in rows]
    columns = list(flat[0]) if flat else ["id"]
    title = f"{TITLES.get(kind, kind)} ({len(flat)})"
    return StaticView(f"{title}\n{table_text(flat, columns)}", table_html(flat, columns, title))


def finder_view(rows: GpuRows) -> StaticView:
    """The finder's static form: its filters, then the table of its rows."""
    from podbook.notebook.catalog.finder import panel_row

    found = [panel_row(to_wire(entry), rows.filters) for entry in rows]
    return gpu_finder_view(found, rows.filters.describe())
