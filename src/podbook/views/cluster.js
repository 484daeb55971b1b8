// podbook cluster panel: the anywidget view of `%cluster show` (ClusterPanel, see
// docs/architecture.md). Renders the traits `cluster`, `members`, `error` and
// `connection`; sends nothing. Members are sorted by rank (unassigned ranks last).

import { h, statusBadge, notices, copyButton, onTraits, fact, patchChildren } from "./common.js";

const MEMBER_COLUMNS = ["Rank", "Role", "IP", "Status", "Name", "ID"];

/** `4 pods × 8 × NVIDIA H100 80GB HBM3 (32 GPUs)`. */
export function formatCompute(compute) {
  if (!compute || !compute.gpuTypeId) return "—";
  const pods = compute.podCount ?? 0;
  const perPod = compute.gpuCountPerPod ?? 1;
  return `${pods} pods × ${perPod} × ${compute.gpuTypeId} (${pods * perPod} GPUs)`;
}

function formatByStatus(summary) {
  const counts = Object.entries((summary && summary.byStatus) || {});
  if (!counts.length) return summary && summary.total !== undefined ? `${summary.total}` : "—";
  return counts.map(([status, n]) => `${n} ${status}`).join(" · ");
}

function byRank(a, b) {
  const ra = a.cluster && typeof a.cluster.rank === "number" ? a.cluster.rank : Infinity;
  const rb = b.cluster && typeof b.cluster.rank === "number" ? b.cluster.rank : Infinity;
  return ra - rb;
}

function header(cluster) {
  return h(
    "div",
    { class: "podbook-header" },
    h("span", { class: "podbook-badge", "data-type": cluster.type || "", text: cluster.type || "CLUSTER" }),
    h("span", { class: "podbook-name", text: cluster.name || "(unnamed cluster)" }),
    h("code", { class: "podbook-id", text: cluster.id || "" }),
  );
}


/** `2 RUNNING · 1 STARTING` from the member pods themselves (they are always current). */
function formatMemberStatuses(members) {
  const counts = new Map();
  for (const pod of members) {
    const status = pod.status || "UNKNOWN";
    counts.set(status, (counts.get(status) || 0) + 1);
  }
  return [...counts].map(([status, n]) => `${n} ${status}`).join(" · ");
}

/** Why the primary has no SSH endpoint yet, in the user's terms. */
function primaryText(primary, members) {
  if (!primary) {
    const gone = members.length > 0 && members.every((pod) => pod.status === "TERMINATED");
    return gone ? "— (members terminated)" : "not placed yet";
  }
  const status = primary.status || "";
  if (status === "RUNNING") {
    return `${primary.podId} (RUNNING): no SSH endpoint; expose 22/tcp in the cluster's ports`;
  }
  if (status === "TERMINATED") return `${primary.podId} (TERMINATED)`;
  return `${primary.podId} (${status || "?"}): reachable once RUNNING`;
}

function facts(cluster, members, feedback, rerender) {
  const primary = cluster.primary;
  const endpoint = primary && primary.sshEndpoint;
  return h(
    "dl",
    { class: "podbook-facts" },
    fact("Compute", formatCompute(cluster.compute), { "data-field": "compute" }),
    fact("Data center", cluster.dataCenterId || "—", { "data-field": "dataCenterId" }),
    fact("Network", cluster.network ? cluster.network.cidr : "—", { "data-field": "network" }),
    fact("Members", members.length ? formatMemberStatuses(members) : formatByStatus(cluster.pods), {
      "data-field": "pods",
    }),
    fact(
      "Primary SSH",
      endpoint
        ? [
            h("code", { class: "podbook-command", text: endpoint }),
            copyButton("primary-ssh", endpoint, feedback, rerender),
          ]
        : primaryText(primary, members),
      { "data-field": "primary", "data-ssh": endpoint ? "primary" : null },
    ),
  );
}

function memberRow(pod) {
  const membership = pod.cluster || {};
  const rank = typeof membership.rank === "number" ? String(membership.rank) : "";
  return h(
    "tr",
    {
      "data-rank": rank,
      "data-role": membership.role || "",
      "data-status": pod.status || "",
      "data-pod-id": pod.id || "",
    },
    h("td", { class: "podbook-num", text: rank || "—" }),
    h("td", { text: membership.role || "—" }),
    h("td", {}, membership.ip ? h("code", { text: membership.ip }) : "—"),
    h("td", {}, statusBadge(pod.status)),
    h("td", { class: "podbook-name", text: pod.name || "" }),
    h("td", {}, h("code", { class: "podbook-id", text: pod.id || "" })),
  );
}

function membersTable(members) {
  if (!members.length) return h("div", { class: "podbook-empty", text: "No member pods yet." });
  return h(
    "table",
    { class: "podbook-table podbook-members" },
    h("thead", {}, h("tr", {}, MEMBER_COLUMNS.map((name) => h("th", { text: name })))),
    h("tbody", {}, [...members].sort(byRank).map(memberRow)),
  );
}

/** Renders the cluster panel into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-cluster" });
  el.append(root);
  const feedback = { key: null, label: "", timer: null };

  function rerender() {
    const cluster = model.get("cluster") || {};
    const members = model.get("members") || [];
    root.setAttribute("data-cluster-id", cluster.id || "");
    root.setAttribute("data-type", cluster.type || "");
    patchChildren(root, [
      header(cluster),
      ...notices(model),
      facts(cluster, members, feedback, rerender),
      membersTable(members),
    ]);
  }

  const unsubscribe = onTraits(model, ["cluster", "members", "error", "connection"], rerender);
  rerender();
  return () => {
    unsubscribe();
    clearTimeout(feedback.timer);
    root.remove();
  };
}

export default { render };
