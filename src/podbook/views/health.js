// podbook health panel: the anywidget view of an endpoint's `/health` (HealthPanel, see
// docs/architecture.md, "Serverless jobs").
//
// Traits: `endpointId`, `health` (the `/health` body: `{jobs: {completed, failed,
// inProgress, inQueue, retried}, workers: {idle, running, ...}}`), `error`, `connection`,
// `updated`. Sends nothing. The view keeps the queue depth (`jobs.inQueue`) of the last
// SPARK_SAMPLES refreshes and draws it as a sparkline; a refresh is a change of `health`
// and/or `updated` (changes in the same tick count once).

import { h, notices, onTraits, patchChildren } from "./common.js";

/** How many refreshes the queue-depth sparkline remembers. */
export const SPARK_SAMPLES = 40;

const JOB_COUNTS = [
  ["completed", "completed"],
  ["failed", "failed"],
  ["inProgress", "in progress"],
  ["inQueue", "in queue"],
  ["retried", "retried"],
];

const WORKER_COUNTS = [
  ["idle", "idle"],
  ["running", "running"],
];

/** Extra worker states the service's JS SDK knows; shown only when the body has them. */
const EXTRA_WORKER_COUNTS = [
  ["initializing", "initializing"],
  ["ready", "ready"],
  ["throttled", "throttled"],
  ["unhealthy", "unhealthy"],
];

function count(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function countItem(key, label, value) {
  return h(
    "div",
    { class: "podbook-count", "data-count": key, "data-value": value ?? "" },
    h("span", { class: "podbook-count-value", text: value ?? "—" }),
    h("span", { class: "podbook-count-label", text: label }),
  );
}

function group(title, section, pairs, extras = []) {
  const items = pairs.map(([key, label]) => countItem(key, label, count(section[key])));
  for (const [key, label] of extras) {
    if (count(section[key]) !== null) items.push(countItem(key, label, count(section[key])));
  }
  return h(
    "div",
    { class: "podbook-count-group", "data-group": title.toLowerCase() },
    h("span", { class: "podbook-label", text: title }),
    h("div", { class: "podbook-counts" }, items),
  );
}

/**
 * An inline SVG sparkline of `samples` (numbers, oldest first), scaled to the largest one;
 * the last value is printed beside it.
 */
export function sparkline(samples, width = 160, height = 28) {
  const svgNS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(svgNS, "svg");
  svg.setAttribute("class", "podbook-sparkline");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(height));
  svg.setAttribute("data-samples", String(samples.length));
  svg.setAttribute("role", "img");
  const last = samples.length ? samples[samples.length - 1] : 0;
  svg.setAttribute(
    "aria-label",
    `queue depth over the last ${samples.length} refreshes, now ${last}`,
  );
  if (samples.length) {
    const max = Math.max(1, ...samples);
    const step = samples.length > 1 ? width / (SPARK_SAMPLES - 1) : 0;
    const x0 = width - step * (samples.length - 1);
    const points = samples.map((v, i) => {
      const x = x0 + step * i;
      const y = height - 2 - (v / max) * (height - 4);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    const area = document.createElementNS(svgNS, "polygon");
    area.setAttribute("class", "podbook-spark-area");
    area.setAttribute(
      "points",
      `${x0.toFixed(1)},${height} ${points.join(" ")} ${width},${height}`,
    );
    const line = document.createElementNS(svgNS, "polyline");
    line.setAttribute("class", "podbook-spark-line");
    line.setAttribute("points", points.join(" "));
    svg.append(area, line);
  }
  return svg;
}

function queueSection(samples) {
  const last = samples.length ? samples[samples.length - 1] : null;
  const peak = samples.length ? Math.max(...samples) : null;
  return h(
    "div",
    { class: "podbook-section podbook-queue-depth" },
    h("span", { class: "podbook-label", text: "Queue depth" }),
    sparkline(samples),
    h("span", {
      class: "podbook-util-value",
      text: last === null ? "—" : `${last} now · peak ${peak}`,
    }),
  );
}

function footer(model) {
  const updated = model.get("updated");
  if (!updated) return null;
  const time = new Date(updated);
  const text = Number.isNaN(time.getTime()) ? updated : time.toLocaleTimeString();
  return h("div", { class: "podbook-updated", text: `updated ${text}` });
}

/** Renders the health panel into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-health" });
  el.append(root);
  const samples = [];
  let scheduled = false;
  let disposed = false;

  function takeSample() {
    scheduled = false;
    if (disposed) return;
    const jobs = (model.get("health") || {}).jobs || {};
    const depth = count(jobs.inQueue);
    if (depth === null) return;
    samples.push(depth);
    if (samples.length > SPARK_SAMPLES) samples.splice(0, samples.length - SPARK_SAMPLES);
    rerender();
  }

  // `health` and `updated` change together on a refresh: one sample per refresh.
  function scheduleSample() {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(takeSample);
  }

  function rerender() {
    const health = model.get("health") || {};
    const endpointId = model.get("endpointId") || "";
    root.setAttribute("data-endpoint-id", endpointId);
    patchChildren(
      root,
      [
        h(
          "div",
          { class: "podbook-header" },
          h("span", { class: "podbook-name", text: "Endpoint" }),
          h("code", { class: "podbook-id", text: endpointId }),
        ),
        ...notices(model),
        group("Jobs", health.jobs || {}, JOB_COUNTS),
        group("Workers", health.workers || {}, WORKER_COUNTS, EXTRA_WORKER_COUNTS),
        queueSection(samples),
        footer(model),
      ].filter(Boolean),
    );
  }

  const onRefresh = () => {
    scheduleSample();
    rerender();
  };
  const unsubscribeRefresh = onTraits(model, ["health", "updated"], onRefresh);
  const unsubscribeRest = onTraits(model, ["endpointId", "error", "connection"], rerender);
  takeSample();
  rerender();

  return () => {
    disposed = true;
    unsubscribeRefresh();
    unsubscribeRest();
    root.remove();
  };
}

export default { render };
