// podbook health panel: the anywidget view of an endpoint's `/health` (HealthPanel, see
// docs/architecture.md, "Serverless jobs").
//
// Traits: `endpointId`, `health` (the `/health` body: `{jobs: {completed, failed,
// inProgress, inQueue, retried}, workers: {idle, running, ...}}`), `timeline` (the worker
// timeline the kernel builds from its samples of `/health` and the workers listing:
// podbook/notebook/jobs/timeline.py), `error`, `connection`, `updated`. Sends nothing. The
// view keeps the queue depth (`jobs.inQueue`) of the last SPARK_SAMPLES refreshes and draws
// it as a sparkline; a refresh is a change of `health` and/or `updated` (changes in the same
// tick count once). The timeline is drawn as it comes: one lane per worker (starting, idle,
// running, gone) under the queue depth, on one time axis ending at the latest sample.

import { h, notices, onTraits, patchChildren, updatedFooter } from "./common.js";

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

/** The timeline's drawing: sizes in SVG units (the SVG scales down to the panel's width). */
export const TIMELINE_LAYOUT = {
  width: 620,
  left: 112,
  right: 70,
  top: 6,
  queueHeight: 34,
  lane: 12,
  gap: 5,
  axis: 20,
};

/** The worker states a lane draws, in the legend's order: [state, label, fallback fill]. */
export const LANE_STATES = [
  ["INITIALIZING", "starting", "#ef6c00"],
  ["IDLE", "idle", "#9e9e9e"],
  ["RUNNING", "running", "#2e7d32"],
  ["THROTTLED", "throttled", "#8250df"],
  ["UNHEALTHY", "unhealthy", "#d32f2f"],
];
/** The states the legend always shows (the others only once a lane has them). */
const LEGEND_ALWAYS = ["INITIALIZING", "IDLE", "RUNNING"];
const GONE_STATE = "GONE";
const SVG = "http://www.w3.org/2000/svg";

function svgNode(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== null && value !== undefined) node.setAttribute(key, String(value));
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

/** `2.1 s`, `1.5 min`. */
export function seconds(value) {
  return value < 60 ? `${value.toFixed(1)} s` : `${(value / 60).toFixed(1)} min`;
}

function clock(ms) {
  const time = new Date(ms);
  return Number.isNaN(time.getTime()) ? String(ms) : time.toLocaleTimeString();
}

/**
 * The spans of a step series `[[t, value], ...]` (each value holds until the next point, the
 * last one until `end`), clipped to `[start, end]`: `{from, to, value, at}` where `at` is the
 * point's own time. A point at `end` itself (a worker gone at the latest sample) is kept.
 */
export function spans(points, start, end) {
  const out = [];
  const list = points || [];
  list.forEach(([at, value], i) => {
    const to = i + 1 < list.length ? list[i + 1][0] : end;
    const from = Math.max(at, start);
    const until = Math.min(to, end);
    if (until > from || (i + 1 === list.length && at >= start && at <= end)) {
      out.push({ from, to: Math.max(from, until), value, at });
    }
  });
  return out;
}

function tickStep(windowSeconds) {
  if (windowSeconds >= 240) return 60;
  if (windowSeconds >= 100) return 30;
  if (windowSeconds >= 20) return 10;
  return 5;
}

function tickLabel(back) {
  if (back === 0) return "now";
  return back % 60 === 0 ? `−${back / 60} min` : `−${back} s`;
}

/** A lane's or the queue band's label, right-aligned left of the plot. */
function label(L) {
  return { class: "podbook-tl-label", x: L.left - 6, "text-anchor": "end" };
}

function queueBand(svg, queue, x, L) {
  const peak = Math.max(0, ...queue.map((span) => span.value));
  const base = L.top + L.queueHeight;
  const y = (depth) => (base - (depth / Math.max(1, peak)) * (L.queueHeight - 2)).toFixed(1);
  let path = "";
  for (const span of queue) {
    const x0 = x(span.from).toFixed(1);
    const x1 = x(span.to).toFixed(1);
    const level = y(span.value);
    path += `${path ? "L" : `M${x0},${base} L`}${x0},${level} L${x1},${level} `;
  }
  if (path) path += `L${x(queue[queue.length - 1].to).toFixed(1)},${base} Z`;
  const right = L.width - L.right;
  svg.append(
    svgNode("text", { ...label(L), y: base - 4 }, "in queue"),
    svgNode("line", { class: "podbook-tl-baseline", x1: L.left, x2: right, y1: base, y2: base }),
    svgNode("path", {
      class: "podbook-tl-queue",
      d: path || `M${L.left},${base}`,
      "data-peak": peak,
      "data-spans": queue.length,
      fill: "#1976d2",
      "fill-opacity": 0.18,
      stroke: "#1976d2",
    }),
    svgNode("text", { class: "podbook-tl-side", x: right + 6, y: base - 4 }, `peak ${peak}`),
  );
}

function goneMarker(at, x, top, L) {
  const gx = x(at);
  const marker = svgNode("g", { class: "podbook-tl-gone", "data-at": at, stroke: "#6e7781" });
  marker.append(
    svgNode("line", { x1: gx - 3, x2: gx + 3, y1: top + 2, y2: top + L.lane - 2 }),
    svgNode("line", { x1: gx - 3, x2: gx + 3, y1: top + L.lane - 2, y2: top + 2 }),
    svgNode("title", {}, `gone by ${clock(at)}`),
  );
  return marker;
}

function segment(span, x, top, L) {
  const fill = LANE_STATES.find(([state]) => state === span.value)?.[2] || "#8a8a8a";
  const rect = svgNode("rect", {
    class: "podbook-tl-segment",
    "data-state": span.value,
    "data-from": span.from,
    "data-to": span.to,
    x: x(span.from).toFixed(1),
    y: top,
    width: Math.max(1, x(span.to) - x(span.from)).toFixed(1),
    height: L.lane,
    fill,
  });
  const lasted = seconds((span.to - span.from) / 1000);
  rect.append(
    svgNode(
      "title",
      {},
      `${span.value.toLowerCase()} ${clock(span.from)}–${clock(span.to)} (${lasted})`,
    ),
  );
  return rect;
}

function lane(entry, top, x, range, L) {
  const points = entry.points || [];
  const state = points.length ? points[points.length - 1][1] : GONE_STATE;
  const cold = typeof entry.coldStart === "number" ? entry.coldStart : null;
  const row = svgNode("g", {
    class: "podbook-tl-lane",
    "data-worker": entry.id,
    "data-state": state,
    "data-cold-start": cold ?? "",
  });
  const id = String(entry.id || "");
  const short = id.length > 17 ? `…${id.slice(-16)}` : id;
  const name = svgNode("text", { ...label(L), y: top + L.lane - 2 }, short);
  name.append(svgNode("title", {}, id));
  row.append(name);
  for (const span of spans(points, range.start, range.end)) {
    row.append(
      span.value === GONE_STATE ? goneMarker(span.at, x, top, L) : segment(span, x, top, L),
    );
  }
  const side = { class: "podbook-tl-side podbook-tl-cold", x: L.width - L.right + 6 };
  const text = cold === null ? "" : `cold ${seconds(cold)}`;
  row.append(svgNode("text", { ...side, y: top + L.lane - 2 }, text));
  return row;
}

/**
 * The worker timeline as an inline SVG: the queue depth on top, one lane per worker
 * (segments by state, a ✕ where it was gone, its cold start on the right), a time axis
 * ending at the latest sample (`timeline.now`). Draws what it gets; computes nothing else.
 */
export function timelineSvg(timeline) {
  const L = TIMELINE_LAYOUT;
  const lanes = timeline.lanes || [];
  const windowSeconds = Number(timeline.window) || 300;
  const range = { end: Number(timeline.now) };
  range.start = range.end - windowSeconds * 1000;
  const plotW = L.width - L.left - L.right;
  const x = (t) => {
    const clipped = Math.min(Math.max(t, range.start), range.end);
    return L.left + ((clipped - range.start) / (windowSeconds * 1000)) * plotW;
  };
  const lanesTop = L.top + L.queueHeight + 8;
  const lanesBottom = lanesTop + Math.max(1, lanes.length) * (L.lane + L.gap);
  const height = lanesBottom + L.axis;
  const svg = svgNode("svg", {
    class: "podbook-timeline",
    viewBox: `0 0 ${L.width} ${height}`,
    width: L.width,
    height,
    role: "img",
    "aria-label": `worker timeline, last ${seconds(windowSeconds)}: ${lanes.length} worker(s)`,
    "data-lanes": lanes.length,
    "data-window": windowSeconds,
    "data-now": range.end,
    "data-samples": timeline.samples ?? 0,
  });
  const since = Number(timeline.since);
  if (since > range.start) {
    // Before its first sample the panel watched nothing: shaded.
    const width = (x(since) - L.left).toFixed(1);
    const shade = { class: "podbook-tl-unsampled", x: L.left, y: L.top, width };
    svg.append(svgNode("rect", { ...shade, height: lanesBottom - L.top }));
  }
  queueBand(svg, spans(timeline.queue, range.start, range.end), x, L);
  lanes.forEach((entry, index) => {
    svg.append(lane(entry, lanesTop + index * (L.lane + L.gap), x, range, L));
  });
  if (!lanes.length) {
    const where = { class: "podbook-tl-empty", x: L.left + plotW / 2, "text-anchor": "middle" };
    svg.append(svgNode("text", { ...where, y: lanesTop + L.lane - 2 }, "no worker seen"));
  }
  const step = tickStep(windowSeconds);
  for (let back = 0; back <= windowSeconds; back += step) {
    const tx = x(range.end - back * 1000);
    const tick = { class: "podbook-tl-axis", x: tx, y: lanesBottom + 14, "data-back": back };
    svg.append(
      svgNode("line", { class: "podbook-tl-tick", x1: tx, x2: tx, y1: L.top, y2: lanesBottom }),
      svgNode("text", { ...tick, "text-anchor": back ? "middle" : "end" }, tickLabel(back)),
    );
  }
  return svg;
}

function legend(timeline) {
  const seen = new Set(
    (timeline.lanes || []).flatMap((entry) => (entry.points || []).map(([, state]) => state)),
  );
  const shown = LANE_STATES.filter(([state]) => LEGEND_ALWAYS.includes(state) || seen.has(state));
  const keys = shown.map(([state, name, fill]) =>
    h(
      "span",
      { class: "podbook-tl-key", "data-state": state },
      h("span", { class: "podbook-tl-swatch", "data-state": state, style: `background:${fill}` }),
      name,
    ),
  );
  keys.push(h("span", { class: "podbook-tl-key", "data-state": GONE_STATE, text: "✕ gone" }));
  const resolution = timeline.resolution;
  const every = typeof resolution === "number" ? ` (a sample every ${seconds(resolution)})` : "";
  const notes = [
    h("div", {
      class: "podbook-tl-note",
      "data-note": "cold-start",
      text:
        "cold start: from the worker's startedAt to the first sample that shows it idle or " +
        `running, measured at the panel's sampling resolution${every}`,
    }),
  ];
  if (timeline.hiddenLanes) {
    const text = `${timeline.hiddenLanes} more worker(s) not shown`;
    notes.push(h("div", { class: "podbook-tl-note", "data-note": "hidden", text }));
  }
  if (timeline.note) {
    notes.push(h("div", { class: "podbook-tl-note", "data-note": "listing", text: timeline.note }));
  }
  return [h("div", { class: "podbook-tl-legend" }, keys), ...notes];
}

function timelineSection(timeline) {
  if (!timeline || typeof timeline.now !== "number") return null;
  const windowSeconds = Number(timeline.window) || 300;
  const span = windowSeconds % 60 === 0 ? `${windowSeconds / 60} min` : seconds(windowSeconds);
  return h(
    "div",
    { class: "podbook-section podbook-worker-timeline" },
    h("span", { class: "podbook-label", text: `Workers, last ${span}` }),
    timelineSvg(timeline),
    ...legend(timeline),
  );
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
        timelineSection(model.get("timeline")),
        updatedFooter(model),
      ].filter(Boolean),
    );
  }

  const onRefresh = () => {
    scheduleSample();
    rerender();
  };
  const unsubscribeRefresh = onTraits(model, ["health", "updated"], onRefresh);
  const unsubscribeRest = onTraits(
    model,
    ["endpointId", "timeline", "error", "connection"],
    rerender,
  );
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
