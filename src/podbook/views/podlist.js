// podbook pod list panel: the anywidget view of `%pod list` (PodListPanel, see
// docs/architecture.md). Renders the traits `pods`, `error` and `connection`; sends nothing.

import {
  h,
  statusBadge,
  formatShape,
  formatCost,
  notices,
  onTraits,
  patchChildren,
} from "./common.js";

const COLUMNS = ["Name", "ID", "Status", "Shape", "Cost", "Data center"];

function podRow(pod) {
  return h(
    "tr",
    { "data-pod-id": pod.id || "", "data-status": pod.status || "" },
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
    h("td", { text: pod.dataCenterId || "—" }),
  );
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
    patchChildren(root, [...notices(model), table(pods)]);
  }

  const unsubscribe = onTraits(model, ["pods", "error", "connection"], rerender);
  rerender();
  return () => {
    unsubscribe();
    root.remove();
  };
}

export default { render };
