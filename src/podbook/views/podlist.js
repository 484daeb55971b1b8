// podbook pod list panel: the anywidget view of `%pod list` (PodListPanel, see
// docs/architecture.md). Renders the traits `pods` (in the kernel's order: highest price per
// hour first; each with `guardText`, "" when the pod has no guard), `summary` (`running`,
// `perHour`, `unguarded`), `error` and `connection`; sends nothing.

import {
  h,
  statusBadge,
  formatShape,
  formatCost,
  notices,
  onTraits,
  patchChildren,
} from "./common.js";

const COLUMNS = ["Name", "ID", "Status", "Shape", "Cost", "Guard", "Data center"];
const NO_GUARD = "no idle stop and no time limit: it bills until it is stopped";

function guardCell(pod) {
  if (pod.guardText) return h("td", { class: "podbook-podlist-guard", text: pod.guardText });
  return h(
    "td",
    { class: "podbook-podlist-guard" },
    h("span", { class: "podbook-tag podbook-noguard", title: NO_GUARD, text: "no guard" }),
  );
}

function podRow(pod) {
  return h(
    "tr",
    {
      "data-pod-id": pod.id || "",
      "data-status": pod.status || "",
      "data-guarded": pod.guardText ? "yes" : "no",
    },
    h(
      "td",
      { class: "podbook-name" },
      pod.name || "(unnamed pod)",
      pod.cluster
        ? h("span", { class: "podbook-tag", title: `member of ${pod.cluster.id}`, text: "cluster" })
        : null,
    ),
    h("td", {}, h("code", { class: "podbook-id", text: pod.id || "" })),
    h("td", {}, statusBadge(pod.status)),
    h("td", { text: formatShape(pod) }),
    h("td", { class: "podbook-num", text: formatCost(pod.cost) }),
    guardCell(pod),
    h("td", { text: pod.dataCenterId || "—" }),
  );
}

/** `2 running: $1.13/h · 1 without a guard`, or `nothing running`. */
export function summaryText(summary) {
  const running = (summary && summary.running) || 0;
  if (!running) return "nothing running";
  const unguarded = summary.unguarded ? ` · ${summary.unguarded} without a guard` : "";
  return `${running} running: ${formatCost(summary.perHour || 0)}${unguarded}`;
}

function summaryLine(summary) {
  const perHour = (summary && summary.perHour) || 0;
  return h("div", {
    class: "podbook-podlist-summary",
    "data-per-hour": perHour.toFixed(2),
    "data-unguarded": String((summary && summary.unguarded) || 0),
    text: summaryText(summary),
  });
}

function table(pods) {
  if (!pods.length) {
    return h("div", { class: "podbook-empty", text: "No pods. Create one with %pod create." });
  }
  return h(
    "table",
    { class: "podbook-table" },
    h("thead", {}, h("tr", {}, COLUMNS.map((name) => h("th", { text: name })))),
    h("tbody", {}, pods.map(podRow)),
  );
}

/** Renders the pod list into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-podlist" });
  el.append(root);

  function rerender() {
    const pods = model.get("pods") || [];
    root.setAttribute("data-count", String(pods.length));
    const summary = pods.length ? summaryLine(model.get("summary")) : null;
    patchChildren(root, [...notices(model), summary, table(pods)].filter(Boolean));
  }

  const unsubscribe = onTraits(model, ["pods", "summary", "error", "connection"], rerender);
  rerender();
  return () => {
    unsubscribe();
    root.remove();
  };
}

export default { render };
