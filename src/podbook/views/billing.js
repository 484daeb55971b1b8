// podbook billing panel: the anywidget view of `%billing` (BillingPanel, see
// docs/architecture.md). Renders the traits `chart`, `error`, `loading` and `updated`: a
// stacked bar chart of spend per bucket (one series per resource kind, or per resource),
// drawn as dependency-free SVG with axes, labels, hover tooltips and a legend, and a totals
// table beside it. Colors of text, axes and grid follow JupyterLab's theme variables. Sends
// `{type: "refresh"}` when Refresh is clicked. The static SVG of a saved notebook is drawn by
// podbook/notebook/billing/svg.py with the same layout.

// <podbook-common>
// Shared helpers of podbook's views: the single source of truth.
//
// anywidget loads each view's ESM from a blob URL, so a view cannot import a sibling
// module. Each view therefore carries a copy of the block below between the
// `<podbook-common>` markers; `npm run sync` (in js/) rewrites those copies from this file
// and a vitest test fails when one has drifted. Edit here, never in a view's copy.

/** The value the notebook side puts in place of a secret-looking env value. */
export const MASK = "••••••";

/** Lifecycle statuses whose badge pulses: the pod is on its way to RUNNING. */
export const PENDING_STATUSES = ["PROVISIONING", "STARTING"];

/**
 * Builds an element. `attrs` keys: `class`, `text`, `title`, `on<event>` handlers,
 * `data-*`/`aria-*`/other attributes (null or false values are left out).
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A status badge; its colour and animation come from `data-status` in podbook.css. */
export function statusBadge(status) {
  const text = status || "UNKNOWN";
  return h("span", {
    class: "podbook-badge",
    "data-status": text,
    "data-pending": PENDING_STATUSES.includes(text) ? "true" : null,
    text,
  });
}

/** `2 × NVIDIA GeForce RTX 4090` for a GPU pod, `cpu5c · 4 vCPU · 16 GB` for a CPU pod. */
export function formatShape(pod) {
  if (pod && pod.gpu && pod.gpu.id) return `${pod.gpu.count ?? 1} × ${pod.gpu.id}`;
  if (pod && pod.cpu && pod.cpu.id) {
    const parts = [pod.cpu.id];
    if (pod.cpu.vcpuCount !== undefined) parts.push(`${pod.cpu.vcpuCount} vCPU`);
    if (pod.cpu.memory !== undefined) parts.push(`${pod.cpu.memory} GB`);
    return parts.join(" · ");
  }
  return "—";
}

/** `$0.69/h`; three decimals for tiny non-zero rates so they do not read as free. */
export function formatCost(cost) {
  if (typeof cost !== "number" || Number.isNaN(cost)) return "—";
  const digits = cost > 0 && cost < 0.1 ? 3 : 2;
  return `$${cost.toFixed(digits)}/h`;
}

/** `42s`, `5m 07s`, `2h 03m`, `3d 4h`. */
export function formatUptime(seconds) {
  if (typeof seconds !== "number" || seconds < 0) return "—";
  const s = Math.floor(seconds);
  const pad = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** True for env keys the notebook masks: JUPYTER_PASSWORD, PUBLIC_KEY, *KEY*, *TOKEN*, ... */
export function isSecretKey(key) {
  return /KEY|TOKEN|SECRET|PASSWORD/i.test(String(key));
}

/** The env value to show: masked again here so a view never shows a secret-looking value. */
export function displayEnvValue(key, value) {
  return isSecretKey(key) ? MASK : String(value ?? "");
}

/** The panel's notes: the error line (`.podbook-error`) and the reconnecting note. */
export function notices(model) {
  const nodes = [];
  if (model.get("connection") === "reconnecting") {
    nodes.push(h("div", { class: "podbook-reconnecting", role: "status", text: "reconnecting…" }));
  }
  const error = model.get("error");
  if (error) nodes.push(h("div", { class: "podbook-error", role: "alert", text: error }));
  return nodes;
}

/**
 * Copies `text` to the clipboard: the async Clipboard API where the page allows it, else a
 * selected off-screen textarea and `document.execCommand("copy")`. Resolves to true on success.
 */
export async function copyText(text) {
  try {
    if (globalThis.navigator && navigator.clipboard && navigator.clipboard.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Denied (no user gesture, insecure context): try the textarea fallback below.
  }
  const area = h("textarea", {
    readonly: true,
    "aria-hidden": "true",
    class: "podbook-offscreen",
    style: "position: fixed; top: -1000px; left: -1000px; opacity: 0",
  });
  area.value = text;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = typeof document.execCommand === "function" && document.execCommand("copy") === true;
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

/**
 * A copy button for `text`. `feedback` remembers which button last copied, so its "Copied"
 * label survives the re-render that the next trait change causes. When no way of copying
 * works, the label says "Press Ctrl+C" and the sibling `code` is selected for the user.
 */
export function copyButton(key, text, feedback, rerender) {
  const button = h("button", {
    class: "podbook-copy",
    type: "button",
    title: "Copy to clipboard",
    "data-copy": key,
    text: feedback.key === key ? feedback.label : "Copy",
  });
  button.addEventListener("click", async () => {
    const copied = await copyText(text);
    if (!copied) selectCode(button);
    clearTimeout(feedback.timer);
    feedback.key = key;
    feedback.label = copied ? "Copied" : "Press Ctrl+C";
    if (button.isConnected) button.textContent = feedback.label;
    else rerender();
    feedback.timer = setTimeout(() => {
      feedback.key = null;
      if (button.isConnected) button.textContent = "Copy";
      else rerender();
    }, 1500);
  });
  return button;
}

function selectCode(button) {
  const code = button.parentElement && button.parentElement.querySelector("code");
  const selection = globalThis.getSelection && getSelection();
  if (code && selection) selection.selectAllChildren(code);
}

/** Subscribes `handler` to each `change:<trait>`; returns the function that unsubscribes. */
export function onTraits(model, traits, handler) {
  for (const trait of traits) model.on(`change:${trait}`, handler);
  return () => {
    for (const trait of traits) model.off(`change:${trait}`, handler);
  };
}

/** A `<dt>`/`<dd>` pair for a facts list, or null when there is no value to show. */
export function fact(label, value, attrs = {}) {
  if (value === null || value === undefined || value === "") return null;
  return [h("dt", { text: label }), h("dd", attrs, value)];
}

/**
 * Makes `parent`'s children equal to `nodes`, keeping every existing child that is already
 * equal (`isEqualNode`). A refresh that only moves the utilization bars then leaves the
 * buttons, links and commands in place, so a click, a hover or a text selection in progress
 * is not lost to a re-render.
 */
export function patchChildren(parent, nodes) {
  nodes.forEach((node, i) => {
    const current = parent.children[i];
    if (!current) parent.append(node);
    else if (!current.isEqualNode(node)) current.replaceWith(node);
  });
  while (parent.children.length > nodes.length) parent.lastElementChild.remove();
}
// </podbook-common>

const SVG_NS = "http://www.w3.org/2000/svg";
export const LAYOUT = { width: 560, height: 260, left: 64, right: 12, top: 12, bottom: 48, ticks: 4 };
const TEXT = "fill:var(--jp-ui-font-color1,#24292f)";
const AXIS = "stroke:var(--jp-border-color1,#8c959f)";
const GRID = "stroke:var(--jp-border-color2,#d0d7de)";

/** The smallest 1, 2 or 5 × 10^k at or above `value` (1 when nothing was spent). */
export function niceMax(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    if (step * power >= value * (1 - 1e-12)) return step * power;
  }
  return 10 * power;
}

/** `$12.34`, or three significant digits under a dollar (`$0.00123`). */
export function money(value) {
  if (!value) return "$0";
  if (Math.abs(value) >= 1) {
    return `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  }
  const digits = Math.max(2, 2 - Math.floor(Math.log10(Math.abs(value))));
  return `$${value.toFixed(digits)}`;
}

const stackTotal = (bucket) => Object.values(bucket.values || {}).reduce((a, b) => a + b, 0);

/** Every bar segment of the chart (same layout as the Python static SVG). */
export function barLayout(chart) {
  const buckets = chart.buckets || [];
  const top = niceMax(Math.max(0, ...buckets.map(stackTotal)));
  const { width: W, height: H, left, right, top: T, bottom } = LAYOUT;
  const plotW = W - left - right;
  const plotH = H - T - bottom;
  const slot = plotW / Math.max(1, buckets.length);
  const barW = Math.max(1, slot * 0.7);
  const segments = [];
  buckets.forEach((bucket, index) => {
    let base = 0;
    for (const series of chart.series || []) {
      const amount = bucket.values?.[series.key] || 0;
      if (amount <= 0) continue;
      const yTop = T + plotH * (1 - (base + amount) / top);
      const yBase = T + plotH * (1 - base / top);
      segments.push({
        bucket: index,
        key: series.key,
        label: series.label,
        color: series.color,
        x: left + slot * index + (slot - barW) / 2,
        y: yTop,
        width: barW,
        height: Math.max(0.5, yBase - yTop),
        amount,
      });
      base += amount;
    }
  });
  return { segments, top };
}

function s(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawChart(chart, tooltip) {
  const { width: W, height: H, left, right, top: T, bottom, ticks } = LAYOUT;
  const plotH = H - T - bottom;
  const buckets = chart.buckets || [];
  const { segments, top } = barLayout(chart);
  const svg = s("svg", {
    class: "podbook-billing-svg",
    width: W,
    height: H,
    viewBox: `0 0 ${W} ${H}`,
    role: "img",
    "aria-label": chart.title || "Spend",
    style: "font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:11px",
  });
  for (let tick = 0; tick <= ticks; tick += 1) {
    const y = T + plotH * (1 - tick / ticks);
    svg.append(
      s("line", { x1: left, x2: W - right, y1: y, y2: y, style: GRID, "data-tick": tick }),
      s("text", { x: left - 6, y: y + 4, "text-anchor": "end", style: TEXT, class: "podbook-y-label" }, money((top * tick) / ticks)),
    );
  }
  svg.append(
    s("line", { x1: left, x2: left, y1: T, y2: T + plotH, style: AXIS, class: "podbook-axis" }),
    s("line", { x1: left, x2: W - right, y1: T + plotH, y2: T + plotH, style: AXIS, class: "podbook-axis" }),
  );
  for (const seg of segments) {
    const bucket = buckets[seg.bucket];
    const tip = `${bucket.label} · ${seg.label}: ${money(seg.amount)}`;
    const rect = s("rect", {
      class: "podbook-billing-bar",
      "data-key": seg.key,
      "data-bucket": bucket.start,
      x: seg.x.toFixed(1),
      y: seg.y.toFixed(1),
      width: seg.width.toFixed(1),
      height: seg.height.toFixed(1),
      fill: seg.color,
    });
    rect.append(s("title", {}, tip));
    rect.addEventListener("mouseenter", () => {
      tooltip.textContent = tip;
      tooltip.style.left = `${seg.x + seg.width + 4}px`;
      tooltip.style.top = `${seg.y}px`;
      tooltip.hidden = false;
    });
    rect.addEventListener("mouseleave", () => {
      tooltip.hidden = true;
    });
    svg.append(rect);
  }
  const slot = (W - left - right) / Math.max(1, buckets.length);
  const every = Math.max(1, Math.round(buckets.length / 8));
  buckets.forEach((bucket, index) => {
    if (index % every) return;
    svg.append(
      s("text", { x: (left + slot * (index + 0.5)).toFixed(1), y: T + plotH + 16, "text-anchor": "middle", style: TEXT, class: "podbook-x-label" }, bucket.label),
    );
  });
  let x = left;
  for (const series of chart.series || []) {
    const item = s("g", { class: "podbook-legend-item", "data-key": series.key });
    item.append(
      s("rect", { x, y: H - 16, width: 10, height: 10, fill: series.color }),
      s("text", { x: x + 14, y: H - 7, style: TEXT }, series.label),
    );
    svg.append(item);
    x += 24 + 7 * series.label.length;
  }
  return svg;
}

function drawTable(chart) {
  const cell = "padding:2px 8px;border-bottom:1px solid var(--jp-border-color2,#eaeef2)";
  const rows = (chart.series || []).map((series) =>
    h(
      "tr",
      { "data-key": series.key },
      h("td", { style: cell }, h("span", { style: `color:${series.color}`, text: "■ " }), series.label),
      h("td", { style: `${cell};text-align:right`, "data-field": "amount", text: money(chart.totals?.[series.key] || 0) }),
    ),
  );
  rows.push(
    h(
      "tr",
      { "data-key": "total" },
      h("th", { style: cell, text: "Total" }),
      h("th", { style: `${cell};text-align:right`, "data-field": "amount", text: money(chart.total || 0) }),
    ),
  );
  return h("table", { class: "podbook-billing-table", style: "border-collapse:collapse;font-size:13px" }, h("tbody", {}, rows));
}

function render({ model, el }) {
  const root = h("div", {
    class: "podbook-billing",
    style: "font-family:var(--jp-ui-font-family,system-ui,sans-serif);color:var(--jp-ui-font-color1,#24292f)",
  });
  el.append(root);

  function rerender() {
    const chart = model.get("chart") || {};
    const span = chart.window || {};
    const tooltip = h("div", {
      class: "podbook-billing-tooltip",
      role: "tooltip",
      hidden: true,
      style:
        "position:absolute;pointer-events:none;padding:2px 6px;border-radius:4px;font-size:12px;" +
        "background:var(--jp-layout-color2,#f6f8fa);color:var(--jp-ui-font-color1,#24292f);" +
        "border:1px solid var(--jp-border-color1,#d0d7de);white-space:nowrap",
    });
    const refresh = h("button", {
      class: "podbook-button",
      "data-action": "refresh",
      disabled: model.get("loading") || null,
      text: model.get("loading") ? "Refreshing…" : "Refresh",
      onclick: () => model.send({ type: "refresh" }),
    });
    const error = model.get("error");
    const empty = !(chart.total > 0);
    const parts = [
      h(
        "div",
        { class: "podbook-header" },
        h("b", { text: chart.title || "Spend" }),
        ` · per ${chart.bucketSize || "day"} · ${span.start || ""} → ${span.end || ""} `,
        refresh,
      ),
      error ? h("div", { class: "podbook-error", role: "alert", text: error }) : null,
      h(
        "div",
        { style: "display:flex;gap:16px;align-items:flex-start;flex-wrap:wrap" },
        h("div", { class: "podbook-billing-chart", style: "position:relative" }, drawChart(chart, tooltip), tooltip),
        drawTable(chart),
      ),
      empty ? h("div", { class: "podbook-billing-empty", text: "Nothing spent in this window." }) : null,
    ];
    root.replaceChildren(...parts.filter(Boolean));
  }

  const unsubscribe = onTraits(model, ["chart", "error", "loading"], rerender);
  rerender();
  return () => {
    unsubscribe();
    root.remove();
  };
}

export default { render };
