"""Static text/plain and text/html forms of the pod, pod list and cluster panels.

Used where no live kernel renders the widget view: terminal IPython, ``nbconvert``, a saved
notebook opened without a kernel. Every value is HTML-escaped; env values are already masked.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from podbook.notebook.billing.podspend import spend_text
from podbook.notebook.panels.data import cost_text, http_links, shape_text, ssh_commands
from podbook.notebook.panels.snapshot import (
    BOX_STYLE,
    CELL_STYLE,
    TABLE_STYLE,
    error_html,
    status_badge,
)
from podbook.notebook.pods.podcosts import list_rows, list_summary, summary_text

if TYPE_CHECKING:
    from podbook.notebook.panels.data import JsonDict

_STATUS_COLORS = {
    "RUNNING": "#1a7f37",
    "STARTING": "#9a6700",
    "PROVISIONING": "#9a6700",
    "EXITED": "#57606a",
    "ERROR": "#cf222e",
    "TERMINATED": "#6e7781",
}


def _rows(pairs: list[tuple[str, str]]) -> str:
    return "".join(
        f'<tr><th style="{CELL_STYLE}">{escape(k)}</th><td style="{CELL_STYLE}">{v}</td></tr>'
        for k, v in pairs
    )


def guard_text(pod: JsonDict, guard: JsonDict | None) -> str | None:
    """The guard line of a pod: its last report's summary, else its settings; None unguarded."""
    if guard and guard.get("summary"):
        return str(guard["summary"])
    settings = pod.get("guardSettings")
    return f"{settings['summary']}" if settings else None


def pod_text(
    pod: JsonDict, error: str = "", spend: JsonDict | None = None, guard: JsonDict | None = None
) -> str:
    """A few readable lines describing one pod (``spend``, ``guard``: the panel's traits)."""
    lines = [
        f"Pod {pod.get('name', '?')} ({pod.get('id', '?')}) — {pod.get('status', '?')}",
        f"  {shape_text(pod)} · {pod.get('image') or '-'} · {pod.get('dataCenterId') or 'unplaced'}"
        f" · {cost_text(pod)}",
    ]
    if spent := spend_text(spend):
        lines.append(f"  spend: {spent}")
    if guarded := guard_text(pod, guard):
        lines.append(f"  guard: {guarded}")
    lines += [f"  ssh ({kind}): {command}" for kind, command in ssh_commands(pod).items()]
    if unavailable := (pod.get("ssh") or {}).get("unavailable"):
        lines.append(f"  ssh: {unavailable}")
    if pod.get("ports"):
        lines.append(f"  ports: {', '.join(pod['ports'])}")
    if pod.get("env"):
        lines.append("  env: " + ", ".join(f"{k}={v}" for k, v in pod["env"].items()))
    if pod.get("actions"):
        lines.append(f"  actions: {', '.join(pod['actions'])}")
    if error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def pod_html(
    pod: JsonDict, error: str = "", spend: JsonDict | None = None, guard: JsonDict | None = None
) -> str:
    """A static HTML card for one pod (``spend``, ``guard``: the panel's traits)."""
    status = str(pod.get("status", "?"))
    badge = status_badge(status, _STATUS_COLORS)
    ssh = "".join(
        f'<div data-ssh="{kind}">{kind}: <code>{escape(command)}</code></div>'
        for kind, command in ssh_commands(pod).items()
    )
    links = http_links(pod)
    ports = ", ".join(
        f'<a data-port="{escape(p)}" href="{escape(links[p])}">{escape(p)}</a>'
        if p in links
        else escape(p)
        for p in pod.get("ports") or []
    )
    env = ", ".join(f"{escape(k)}={escape(str(v))}" for k, v in (pod.get("env") or {}).items())
    pairs = [
        ("shape", escape(shape_text(pod))),
        ("image", escape(str(pod.get("image") or "-"))),
        ("data center", escape(str(pod.get("dataCenterId") or "unplaced"))),
        ("cost", escape(cost_text(pod))),
    ]
    if spent := spend_text(spend):
        pairs.append(("spend", f'<span data-field="spend">{escape(spent)}</span>'))
    if guarded := guard_text(pod, guard):
        pairs.append(("guard", f'<span data-field="guard">{escape(guarded)}</span>'))
    if ssh:
        pairs.append(("ssh", ssh))
    if ports:
        pairs.append(("ports", ports))
    if env:
        pairs.append(("env", env))
    return (
        f'<div class="podbook-pod" data-status="{escape(status)}" '
        f'data-pod-id="{escape(str(pod.get("id", "")))}" style="{BOX_STYLE}">'
        f"<div><b>{escape(str(pod.get('name', '?')))}</b> "
        f"<code>{escape(str(pod.get('id', '?')))}</code> {badge}</div>"
        f'<table style="{TABLE_STYLE}">{_rows(pairs)}</table>{error_html(error)}</div>'
    )


def _pod_row_cells(pod: JsonDict) -> list[str]:
    return [
        str(pod.get("id", "?")),
        str(pod.get("name", "?")),
        str(pod.get("status", "?")),
        shape_text(pod),
        str(pod.get("dataCenterId") or "-"),
        cost_text(pod),
        pod.get("guardText") or "no guard",
    ]


_LIST_HEADER = ["id", "name", "status", "shape", "data center", "cost", "guard"]


def pod_list_text(pods: list[JsonDict], error: str = "") -> str:
    """A plain table of pods, highest price per hour first, with their guard and the total
    of those running."""
    pods = list_rows(pods)
    rows = [_LIST_HEADER] + [_pod_row_cells(p) for p in pods]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_LIST_HEADER))]
    lines = [f"{len(pods)} pod(s) · {summary_text(list_summary(pods))}"]
    lines += [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    if error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def pod_list_html(pods: list[JsonDict], error: str = "") -> str:
    """A static HTML table of pods, highest price per hour first, with their guard and the
    total of those running."""
    pods = list_rows(pods)
    summary = list_summary(pods)
    head = "".join(f'<th style="{CELL_STYLE}">{escape(h)}</th>' for h in _LIST_HEADER)
    body = "".join(
        f'<tr data-pod-id="{escape(str(p.get("id", "")))}" data-status="{escape(str(p.get("status", "")))}" '
        f'data-guarded="{"yes" if p["guardText"] else "no"}">'
        + "".join(f'<td style="{CELL_STYLE}">{escape(c)}</td>' for c in _pod_row_cells(p))
        + "</tr>"
        for p in pods
    )
    return (
        f'<div class="podbook-podlist" style="{BOX_STYLE}"><div><b>{len(pods)} pod(s)</b> · '
        f'<span class="podbook-podlist-summary" data-per-hour="{summary["perHour"]:.2f}" '
        f'data-unguarded="{summary["unguarded"]}">{escape(summary_text(summary))}</span></div>'
        f'<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f"{error_html(error)}</div>"
    )


def _member_cells(pod: JsonDict) -> list[str]:
    member = pod.get("cluster") or {}
    rank = member.get("rank")
    return [
        "-" if rank is None else str(rank),
        str(member.get("role") or "-"),
        str(member.get("ip") or "-"),
        str(pod.get("id", "?")),
        str(pod.get("status", "?")),
    ]


_MEMBER_HEADER = ["rank", "role", "ip", "pod", "status"]


def _sorted_members(members: list[JsonDict]) -> list[JsonDict]:
    def rank(pod: JsonDict) -> int:
        value = (pod.get("cluster") or {}).get("rank")
        return value if isinstance(value, int) else 1 << 30

    return sorted(members, key=rank)


def cluster_text(cluster: JsonDict, members: list[JsonDict], error: str = "") -> str:
    """A few readable lines describing a cluster and its members."""
    compute = cluster.get("compute") or {}
    primary = cluster.get("primary") or {}
    lines = [
        f"Cluster {cluster.get('name', '?')} ({cluster.get('id', '?')}) — {cluster.get('type', '?')}",
        f"  {compute.get('podCount', '?')} × {compute.get('gpuCountPerPod', '?')} × "
        f"{compute.get('gpuTypeId', '?')} · {cluster.get('dataCenterId') or 'unplaced'}",
    ]
    if primary.get("sshEndpoint"):
        lines.append(f"  primary ssh: {primary['sshEndpoint']}")
    for pod in _sorted_members(members):
        lines.append("  " + "  ".join(_member_cells(pod)))
    if error:
        lines.append(f"  error: {error}")
    return "\n".join(lines)


def cluster_html(cluster: JsonDict, members: list[JsonDict], error: str = "") -> str:
    """A static HTML card for a cluster and its members."""
    compute = cluster.get("compute") or {}
    primary = cluster.get("primary") or {}
    head = "".join(f'<th style="{CELL_STYLE}">{escape(h)}</th>' for h in _MEMBER_HEADER)
    rows = ""
    for pod in _sorted_members(members):
        cells = _member_cells(pod)
        rows += (
            f'<tr data-rank="{escape(cells[0])}" data-role="{escape(cells[1])}" '
            f'data-status="{escape(cells[4])}">'
            + "".join(f'<td style="{CELL_STYLE}">{escape(c)}</td>' for c in cells)
            + "</tr>"
        )
    ssh = (
        f"<div>primary ssh: <code>{escape(primary['sshEndpoint'])}</code></div>"
        if primary.get("sshEndpoint")
        else ""
    )
    return (
        f'<div class="podbook-cluster" data-cluster-id="{escape(str(cluster.get("id", "")))}" '
        f'style="{BOX_STYLE}"><div><b>{escape(str(cluster.get("name", "?")))}</b> '
        f"<code>{escape(str(cluster.get('id', '?')))}</code> {escape(str(cluster.get('type', '')))}"
        f"</div><div>{escape(str(compute.get('podCount', '?')))} × "
        f"{escape(str(compute.get('gpuCountPerPod', '?')))} × "
        f"{escape(str(compute.get('gpuTypeId', '?')))} · "
        f"{escape(str(cluster.get('dataCenterId') or 'unplaced'))}</div>{ssh}"
        f'<table style="{TABLE_STYLE}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
        f"{error_html(error)}</div>"
    )
