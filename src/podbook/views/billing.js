// podbook billing panel: the anywidget view of `%billing` (BillingPanel, see
// docs/architecture.md). Renders the traits `chart`, `error`, `loading` and `updated`: a
// stacked bar chart of spend per bucket (one series per resource kind, or per resource),
// drawn as dependency-free SVG with axes, labels, hover tooltips and a legend, and a totals
// table beside it. Colors of text, axes and grid follow JupyterLab's theme variables. Sends
// `{type: "refresh"}` when Refresh is clicked. The static SVG of a saved notebook is drawn by
// podbook/notebook/billing/svg.py with the same layout.

import { h, onTraits } from "./common.js";

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
