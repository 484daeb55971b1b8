// podbook GPU finder: the anywidget view of `%catalog gpus` (CatalogPanel, see
// docs/architecture.md). Traits: `gpus` (rows: id, name, memory, secure/community, price,
// maxCount, availability, cudaVersions, dataCenters, command), `filters` (`text`), `busy`,
// `created`, `error`, `connection`. Sorts by a column header, expands a row into its
// per-data-center availability. "New cell" puts the row's `%pod create` line in a new cell
// below (front end; sends `{type: "fill", gpu}` only when it cannot); "Create now" sends
// `{type: "run", gpu}`.

import { h, formatCost, notices, copyText, onTraits, patchChildren } from "./common.js";

const AVAILABILITY_RANK = { NONE: 0, LOW: 1, MEDIUM: 2, HIGH: 3 };

/** The sortable columns: label, sort key and the value sorted by (null sorts last). */
export const COLUMNS = [
  { key: "name", label: "GPU", value: (g) => String(g.name || g.id || "").toLowerCase() },
  { key: "memory", label: "VRAM", value: (g) => g.memory ?? null },
  { key: "secure", label: "Secure $/h", value: (g) => (g.secure ? (g.price?.secure ?? null) : null) },
  {
    key: "community",
    label: "Community $/h",
    value: (g) => (g.community ? (g.price?.community ?? null) : null),
  },
  {
    key: "availability",
    label: "Availability",
    value: (g) => AVAILABILITY_RANK[g.availability] ?? null,
  },
  { key: "cuda", label: "CUDA", value: (g) => maxCuda(g.cudaVersions) },
];

function maxCuda(versions) {
  const numbers = (versions || []).map((v) => {
    const [major, minor] = String(v).split(".").map(Number);
    return major * 1000 + (minor || 0);
  });
  return numbers.length ? Math.max(...numbers) : null;
}

/** `rows` sorted by column `key` (`dir` 1 ascending, -1 descending); nulls always last. */
export function sortRows(rows, key, dir) {
  const column = COLUMNS.find((c) => c.key === key);
  if (!column) return [...rows];
  return rows
    .map((row, index) => ({ row, index, value: column.value(row) }))
    .sort((a, b) => {
      if (a.value === null && b.value === null) return a.index - b.index;
      if (a.value === null) return 1;
      if (b.value === null) return -1;
      if (a.value < b.value) return -dir;
      if (a.value > b.value) return dir;
      return a.index - b.index;
    })
    .map((item) => item.row);
}

function price(gpu, cloud) {
  return gpu[cloud] ? formatCost(gpu.price?.[cloud]) : "—";
}

function availabilityBadge(level) {
  return h("span", {
    class: "podbook-avail",
    "data-availability": level || "UNKNOWN",
    text: level || "—",
  });
}

/**
 * Puts `text` into a new code cell below the cell that holds `el`, in JupyterLab or Notebook 7.
 * Uses the application when the page exposes it, else drives the notebook's own keyboard
 * commands (select the cell, `B` inserts a cell below, `Enter` edits it) and types the text.
 * Resolves to true when the new cell holds the text.
 */
export async function insertCellBelow(el, text) {
  const app = globalThis.jupyterapp;
  const notebookWidget = app?.shell?.currentWidget?.content;
  if (app?.commands && notebookWidget?.widgets) {
    const index = notebookWidget.widgets.findIndex((cell) => cell.node?.contains(el));
    if (index >= 0) notebookWidget.activeCellIndex = index;
    await app.commands.execute("notebook:insert-cell-below");
    notebookWidget.activeCell.model.sharedModel.setSource(text);
    return true;
  }
  const cell = el.closest(".jp-Cell");
  const notebook = el.closest(".jp-Notebook");
  if (!cell || !notebook) return false;
  const target = cell.querySelector(".jp-InputPrompt") || cell;
  for (const type of ["mousedown", "mouseup", "click"]) {
    target.dispatchEvent(new MouseEvent(type, { bubbles: true, cancelable: true, button: 0 }));
  }
  notebook.focus();
  const press = (key, code, keyCode) => {
    const init = { key, code, keyCode, which: keyCode, bubbles: true, cancelable: true };
    (document.activeElement || notebook).dispatchEvent(new KeyboardEvent("keydown", init));
  };
  press("Escape", "Escape", 27);
  press("b", "KeyB", 66);
  await nextFrame();
  // The inserted cell is the active one now (robust to windowed notebooks, which keep only
  // the cells near the viewport in the DOM).
  const added = notebook.querySelector(".jp-Cell.jp-mod-active");
  if (!added || added === cell) return false;
  press("Enter", "Enter", 13);
  await nextFrame();
  const editor = added.querySelector(".cm-content");
  if (!editor) return false;
  editor.focus();
  document.execCommand("insertText", false, text);
  await nextFrame();
  return editor.textContent.includes(text.slice(0, 20));
}

function nextFrame() {
  return new Promise((resolve) => setTimeout(resolve, 50));
}

function detailsRow(gpu, span) {
  const centers = gpu.dataCenters || [];
  const list = centers.length
    ? h(
        "ul",
        { class: "podbook-dcs" },
        centers.map((dc) =>
          h(
            "li",
            { "data-dc": dc.id },
            h("code", { text: dc.id }),
            ` ${dc.name || ""} `,
            availabilityBadge(dc.availability),
          ),
        ),
      )
    : h("div", { class: "podbook-empty", text: "No data center lists this GPU type." });
  const max = gpu.maxCount || {};
  return h(
    "tr",
    { class: "podbook-details", "data-details-for": gpu.id },
    h(
      "td",
      { colspan: String(span) },
      list,
      h("div", {
        class: "podbook-muted",
        text: `Up to ${max.secure ?? "—"} (secure) / ${max.community ?? "—"} (community) per pod · ${gpu.manufacturer || ""}`,
      }),
      h("code", { class: "podbook-command", text: gpu.command || "" }),
    ),
  );
}

/** Renders the GPU finder into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-catalog" });
  el.append(root);
  const state = { key: null, dir: 1, open: new Set(), note: null };

  function fill(gpu) {
    const command = gpu.command || "";
    state.note = { gpu: gpu.id, text: "Adding a cell below…" };
    rerender();
    insertCellBelow(el, command)
      .catch(() => false)
      .then(async (done) => {
        if (done) {
          state.note = { gpu: gpu.id, kind: "filled", text: "Added a new cell below; run it to create the pod." };
        } else {
          model.send({ type: "fill", gpu: gpu.id });
          const copied = await copyText(command);
          state.note = {
            gpu: gpu.id,
            kind: "queued",
            text: copied
              ? "Copied the %pod create line; paste it into a cell (it also appears below the next cell you run)."
              : "The %pod create line appears below the next cell you run.",
          };
        }
        rerender();
      });
  }

  function run(gpu) {
    model.send({ type: "run", gpu: gpu.id });
  }

  function header() {
    return h(
      "tr",
      {},
      h("th", { "aria-hidden": "true" }),
      COLUMNS.map((column) => {
        const sorted = state.key === column.key;
        return h(
          "th",
          {
            "data-sort": column.key,
            "aria-sort": sorted ? (state.dir > 0 ? "ascending" : "descending") : "none",
            class: "podbook-sortable",
          },
          h("button", {
            type: "button",
            class: "podbook-sort",
            text: column.label + (sorted ? (state.dir > 0 ? " ▲" : " ▼") : ""),
            onclick: () => {
              state.dir = sorted ? -state.dir : 1;
              state.key = column.key;
              rerender();
            },
          }),
        );
      }),
      h("th", { text: "Create a pod" }),
    );
  }

  function gpuRow(gpu, busy) {
    const open = state.open.has(gpu.id);
    return h(
      "tr",
      {
        "data-gpu-id": gpu.id,
        "data-availability": gpu.availability || "UNKNOWN",
        "data-expanded": open ? "true" : "false",
      },
      h(
        "td",
        {},
        h("button", {
          type: "button",
          class: "podbook-expand",
          "aria-expanded": open ? "true" : "false",
          title: "Availability per data center",
          text: open ? "▾" : "▸",
          onclick: () => {
            if (open) state.open.delete(gpu.id);
            else state.open.add(gpu.id);
            rerender();
          },
        }),
      ),
      h("td", { title: gpu.id }, h("b", { text: gpu.name || gpu.id }), h("div", { class: "podbook-muted", text: gpu.id })),
      h("td", { class: "podbook-num", text: gpu.memory !== undefined ? `${gpu.memory} GB` : "—" }),
      h("td", { class: "podbook-num", "data-price": "secure", text: price(gpu, "secure") }),
      h("td", { class: "podbook-num", "data-price": "community", text: price(gpu, "community") }),
      h("td", {}, availabilityBadge(gpu.availability)),
      h("td", { "data-cuda": "", text: (gpu.cudaVersions || []).join(", ") || "—" }),
      h(
        "td",
        { class: "podbook-create" },
        h("button", {
          type: "button",
          "data-action": "fill",
          title: gpu.command,
          text: "New cell",
          onclick: () => fill(gpu),
        }),
        h("button", {
          type: "button",
          "data-action": "run",
          title: `Create the pod now: ${gpu.command}`,
          disabled: Boolean(busy),
          text: busy === gpu.id ? "Creating…" : "Create now",
          onclick: () => run(gpu),
        }),
      ),
    );
  }

  function table(gpus, busy) {
    if (!gpus.length) {
      return h("div", { class: "podbook-empty", text: "No GPU type matches these filters; loosen them." });
    }
    const rows = state.key ? sortRows(gpus, state.key, state.dir) : gpus;
    const span = COLUMNS.length + 2;
    return h(
      "table",
      { class: "podbook-table" },
      h("thead", {}, header()),
      h(
        "tbody",
        {},
        rows.flatMap((gpu) => [gpuRow(gpu, busy), state.open.has(gpu.id) ? detailsRow(gpu, span) : null]),
      ),
    );
  }

  function notes() {
    const nodes = [];
    const created = model.get("created") || {};
    if (created.id) {
      nodes.push(
        h(
          "div",
          { class: "podbook-created", role: "status", "data-created": created.id },
          `Created pod ${created.id} (${created.status || "?"}) with ${created.gpu}. `,
          h("code", { text: `%pod show ${created.id}` }),
        ),
      );
    }
    if (state.note) {
      nodes.push(
        h("div", { class: "podbook-note", role: "status", "data-note": state.note.kind || "pending", text: state.note.text }),
      );
    }
    return nodes;
  }

  function rerender() {
    const gpus = model.get("gpus") || [];
    const filters = model.get("filters") || {};
    const busy = model.get("busy") || "";
    root.setAttribute("data-count", String(gpus.length));
    root.setAttribute("data-sort-key", state.key || "");
    root.setAttribute("data-sort-dir", state.dir > 0 ? "asc" : "desc");
    patchChildren(root, [
      h(
        "div",
        { class: "podbook-header" },
        h("b", { text: `GPU types (${gpus.length})` }),
        h("span", { class: "podbook-filters", text: filters.text || "no filters" }),
      ),
      ...notices(model),
      ...notes(),
      table(gpus, busy),
    ]);
  }

  const unsubscribe = onTraits(model, ["gpus", "filters", "busy", "created", "error", "connection"], rerender);
  rerender();
  return () => {
    unsubscribe();
    root.remove();
  };
}

export default { render };
