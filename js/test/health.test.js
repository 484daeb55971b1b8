import { afterEach, describe, expect, it } from "vitest";
import view, { SPARK_SAMPLES, TIMELINE_LAYOUT, spans } from "../src/health.js";
import { mount } from "./fake-model.js";

// The `/health` body as the queue API answers it.
function health(jobs = {}, workers = {}) {
  return {
    jobs: { completed: 12, failed: 1, inProgress: 2, inQueue: 5, retried: 1, ...jobs },
    workers: { idle: 1, running: 2, ...workers },
  };
}

const traits = (overrides = {}) => ({
  endpointId: "stream-demo",
  health: health(),
  error: "",
  connection: "ok",
  updated: "2026-11-22T10:00:00+00:00",
  ...overrides,
});

let mounted;
function render(overrides) {
  mounted = mount(view, traits(overrides));
  return mounted;
}

const root = () => mounted.el.querySelector(".podbook-health");
const countOf = (key) =>
  root().querySelector(`[data-count="${key}"] .podbook-count-value`).textContent;
const samples = () => Number(root().querySelector("svg.podbook-sparkline").dataset.samples);
const flush = () => new Promise((resolve) => queueMicrotask(resolve));

/** One refresh as the panel does it: a new body and a new `updated` in the same tick. */
async function refresh(model, body, n) {
  model.set("health", body);
  model.set("updated", `2026-11-22T10:00:${String(n).padStart(2, "0")}+00:00`);
  await flush();
}

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
});

describe("health panel: counts", () => {
  it("shows every job and worker count of the /health body", () => {
    render();
    expect(root().dataset.endpointId).toBe("stream-demo");
    expect(root().querySelector(".podbook-header").textContent).toContain("stream-demo");
    const expected = {
      completed: "12",
      failed: "1",
      inProgress: "2",
      inQueue: "5",
      retried: "1",
      idle: "1",
      running: "2",
    };
    for (const [key, value] of Object.entries(expected)) expect(countOf(key)).toBe(value);
  });

  it("follows a refresh", async () => {
    const { model } = render();
    await refresh(model, health({ completed: 13, inQueue: 0 }, { idle: 3, running: 0 }), 1);
    expect(countOf("completed")).toBe("13");
    expect(countOf("inQueue")).toBe("0");
    expect(countOf("idle")).toBe("3");
    expect(countOf("running")).toBe("0");
  });

  it("shows a dash for a count the body lacks, and extra worker states when present", () => {
    render({ health: { jobs: { completed: 0 }, workers: { idle: 0, throttled: 2 } } });
    expect(countOf("completed")).toBe("0");
    expect(countOf("failed")).toBe("—");
    expect(countOf("throttled")).toBe("2");
    expect(root().querySelector('[data-count="initializing"]')).toBeNull();
  });

  it("renders before the first refresh without failing", () => {
    render({ health: {}, updated: "" });
    expect(countOf("inQueue")).toBe("—");
    expect(samples()).toBe(0);
  });
});

describe("health panel: queue-depth sparkline", () => {
  it("keeps one sample per refresh", async () => {
    const { model } = render();
    expect(samples()).toBe(1);
    await refresh(model, health({ inQueue: 9 }), 1);
    await refresh(model, health({ inQueue: 3 }), 2);
    expect(samples()).toBe(3);
    expect(root().querySelector(".podbook-queue-depth").textContent).toContain("3 now · peak 9");
    expect(
      root().querySelector("svg.podbook-sparkline polyline").getAttribute("points").split(" "),
    ).toHaveLength(3);
  });

  it("counts a refresh that repeats the same body (only `updated` changes)", async () => {
    const { model } = render();
    model.set("updated", "2026-11-22T10:00:05+00:00");
    await flush();
    expect(samples()).toBe(2);
  });

  it(`remembers only the last ${SPARK_SAMPLES} refreshes`, async () => {
    const { model } = render();
    for (let n = 1; n <= SPARK_SAMPLES + 10; n += 1)
      await refresh(model, health({ inQueue: n }), n);
    expect(samples()).toBe(SPARK_SAMPLES);
    expect(root().querySelector(".podbook-queue-depth").textContent).toContain(
      `${SPARK_SAMPLES + 10} now · peak ${SPARK_SAMPLES + 10}`,
    );
  });
});

describe("health panel: notes", () => {
  it("shows the reconnecting note and the error line", () => {
    const { model } = render();
    model.set("connection", "reconnecting");
    expect(root().querySelector(".podbook-reconnecting").textContent).toBe("reconnecting…");
    model.set("error", "404 Not Found: endpoint nope does not exist");
    expect(root().querySelector(".podbook-error").textContent).toBe(
      "404 Not Found: endpoint nope does not exist",
    );
    model.set("connection", "ok");
    expect(root().querySelector(".podbook-reconnecting")).toBeNull();
  });

  it("cleanup unsubscribes from every trait", () => {
    const { model, cleanup } = render();
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(mounted.el.querySelector(".podbook-health")).toBeNull();
  });
});

// A timeline as the kernel sends it (podbook/notebook/jobs/timeline.py): 5 minutes ending at
// NOW; the queue filled with 20 jobs, one worker came and went, one is running, one starts.
const NOW = Date.UTC(2026, 10, 22, 10, 5, 0);
const at = (secondsBefore) => NOW - secondsBefore * 1000;
function timeline(overrides = {}) {
  return {
    window: 300,
    now: NOW,
    since: at(60),
    samples: 31,
    resolution: 2,
    queue: [
      [at(60), 0],
      [at(50), 20],
      [at(30), 4],
      [at(10), 0],
    ],
    lanes: [
      {
        id: "worker-aaaa",
        points: [
          [at(50), "INITIALIZING"],
          [at(46), "RUNNING"],
          [at(20), "IDLE"],
          [at(12), "GONE"],
        ],
        startedAt: at(50),
        coldStart: 4.2,
      },
      {
        id: "worker-bbbb",
        points: [
          [at(44), "INITIALIZING"],
          [at(40), "RUNNING"],
        ],
        startedAt: at(44),
        coldStart: 3.5,
      },
      { id: "worker-cccc", points: [[at(2), "INITIALIZING"]], startedAt: at(3), coldStart: null },
    ],
    hiddenLanes: 0,
    ...overrides,
  };
}

const svg = () => root().querySelector("svg.podbook-timeline");
const laneOf = (id) => svg().querySelector(`.podbook-tl-lane[data-worker="${id}"]`);
const segments = (id) =>
  [...laneOf(id).querySelectorAll("rect.podbook-tl-segment")].map((r) => r.dataset.state);
const xOf = (node) => Number(node.getAttribute("x"));
const widthOf = (node) => Number(node.getAttribute("width"));

describe("health panel: worker timeline", () => {
  it("draws nothing before the kernel sent a timeline, and keeps the other sections", () => {
    render({ timeline: {} });
    expect(root().querySelector(".podbook-worker-timeline")).toBeNull();
    expect(root().querySelector("svg.podbook-sparkline")).not.toBeNull();
    expect(countOf("completed")).toBe("12");
  });

  it("draws one lane per worker with its states in order, and the gone marker", () => {
    render({ timeline: timeline() });
    expect(svg().dataset.lanes).toBe("3");
    expect(svg().dataset.window).toBe("300");
    expect(segments("worker-aaaa")).toEqual(["INITIALIZING", "RUNNING", "IDLE"]);
    expect(laneOf("worker-aaaa").dataset.state).toBe("GONE");
    const gone = laneOf("worker-aaaa").querySelectorAll(".podbook-tl-gone");
    expect(gone).toHaveLength(1);
    expect(Number(gone[0].dataset.at)).toBe(at(12));
    expect(segments("worker-bbbb")).toEqual(["INITIALIZING", "RUNNING"]);
    expect(laneOf("worker-bbbb").dataset.state).toBe("RUNNING");
    expect(laneOf("worker-bbbb").querySelector(".podbook-tl-gone")).toBeNull();
    expect(laneOf("worker-cccc").dataset.state).toBe("INITIALIZING");
    // lanes top to bottom in the order sent
    const ys = [...svg().querySelectorAll(".podbook-tl-lane rect:first-of-type")].map((r) =>
      Number(r.getAttribute("y")),
    );
    expect(ys).toEqual([...ys].sort((a, b) => a - b));
  });

  it("places segments on one time axis that ends at the latest sample", () => {
    render({ timeline: timeline() });
    const { left, right, width } = TIMELINE_LAYOUT;
    const plot = width - left - right;
    const [starting, running, idle] = laneOf("worker-aaaa").querySelectorAll("rect");
    expect(xOf(starting)).toBeCloseTo(left + plot * (250 / 300), 0);
    expect(xOf(starting) + widthOf(starting)).toBeCloseTo(xOf(running), 0);
    expect(xOf(idle) + widthOf(idle)).toBeCloseTo(left + plot * (288 / 300), 0);
    // a worker still running reaches the right edge ("now")
    const last = [...laneOf("worker-bbbb").querySelectorAll("rect")].pop();
    expect(xOf(last) + widthOf(last)).toBeCloseTo(left + plot, 0);
    expect(Number(last.dataset.to)).toBe(NOW);
    const ticks = [...svg().querySelectorAll(".podbook-tl-axis")].map((t) => t.textContent);
    expect(ticks).toEqual(["now", "−1 min", "−2 min", "−3 min", "−4 min", "−5 min"]);
    // before the first sample: shaded as not watched
    const shade = svg().querySelector(".podbook-tl-unsampled");
    expect(xOf(shade)).toBe(left);
    expect(widthOf(shade)).toBeCloseTo(plot * (240 / 300), 0);
  });

  it("labels a shorter axis (a young panel) in seconds", () => {
    render({ timeline: timeline({ window: 60 }) });
    expect(svg().dataset.window).toBe("60");
    const ticks = [...svg().querySelectorAll(".podbook-tl-axis")].map((t) => t.textContent);
    expect(ticks).toEqual(["now", "−10 s", "−20 s", "−30 s", "−40 s", "−50 s", "−1 min"]);
    expect(root().querySelector(".podbook-worker-timeline .podbook-label").textContent).toBe(
      "Workers, last 1 min",
    );
    // worker-aaaa's start (50 s ago) is 10 s from the left edge of a 60 s axis
    const { left, right, width } = TIMELINE_LAYOUT;
    const [starting] = laneOf("worker-aaaa").querySelectorAll("rect");
    expect(xOf(starting)).toBeCloseTo(left + (width - left - right) * (10 / 60), 0);
  });

  it("shows each cold start, and says how it is measured", () => {
    render({ timeline: timeline() });
    expect(laneOf("worker-aaaa").dataset.coldStart).toBe("4.2");
    expect(laneOf("worker-aaaa").querySelector(".podbook-tl-cold").textContent).toBe("cold 4.2 s");
    expect(laneOf("worker-bbbb").querySelector(".podbook-tl-cold").textContent).toBe("cold 3.5 s");
    expect(laneOf("worker-cccc").dataset.coldStart).toBe("");
    expect(laneOf("worker-cccc").querySelector(".podbook-tl-cold").textContent).toBe("");
    const note = root().querySelector('[data-note="cold-start"]').textContent;
    expect(note).toContain("sampling resolution");
    expect(note).toContain("a sample every 2.0 s");
  });

  it("draws the queue depth as a step area on the same axis, with its peak", () => {
    render({ timeline: timeline() });
    const queue = svg().querySelector("path.podbook-tl-queue");
    expect(queue.dataset.peak).toBe("20");
    expect(queue.dataset.spans).toBe("4");
    expect(svg().textContent).toContain("peak 20");
    const xs = queue
      .getAttribute("d")
      .match(/[ML]\s*([\d.]+),/g)
      .map((m) => Number(m.replace(/[ML\s,]/g, "")));
    const { left, right, width } = TIMELINE_LAYOUT;
    expect(Math.min(...xs)).toBeCloseTo(left + (width - left - right) * (240 / 300), 0);
    expect(Math.max(...xs)).toBeCloseTo(width - right, 0);
  });

  it("follows the kernel: a new timeline redraws (a worker gone, a lane more)", () => {
    const { model } = render({ timeline: timeline() });
    const next = timeline({ now: NOW + 2000 });
    next.lanes[1].points.push([NOW + 2000, "GONE"]);
    next.lanes.push({ id: "worker-dddd", points: [[NOW + 2000, "RUNNING"]], coldStart: 1.9 });
    model.set("timeline", next);
    expect(svg().dataset.lanes).toBe("4");
    expect(laneOf("worker-bbbb").dataset.state).toBe("GONE");
    expect(laneOf("worker-bbbb").querySelectorAll(".podbook-tl-gone")).toHaveLength(1);
    expect(laneOf("worker-dddd").querySelector(".podbook-tl-cold").textContent).toBe("cold 1.9 s");
  });

  it("clips what began before the window to its left edge", () => {
    const old = timeline({ since: at(400), queue: [[at(400), 7]] });
    old.lanes = [{ id: "old", points: [[at(400), "IDLE"]], coldStart: null }];
    render({ timeline: old });
    const [idle] = laneOf("old").querySelectorAll("rect");
    expect(xOf(idle)).toBe(TIMELINE_LAYOUT.left);
    expect(Number(idle.dataset.from)).toBe(at(300));
    expect(svg().querySelector(".podbook-tl-unsampled")).toBeNull();
  });

  it("says when no worker was seen, when lanes are hidden, and why lanes are missing", () => {
    render({
      timeline: timeline({
        lanes: [],
        hiddenLanes: 3,
        note: "worker lanes unavailable: 403 Forbidden",
      }),
    });
    expect(svg().dataset.lanes).toBe("0");
    expect(svg().querySelector(".podbook-tl-empty").textContent).toBe("no worker seen");
    expect(root().querySelector('[data-note="hidden"]').textContent).toBe(
      "3 more worker(s) not shown",
    );
    expect(root().querySelector('[data-note="listing"]').textContent).toContain("403");
  });

  it("names every state in the legend, the rarer ones once they occur", () => {
    const odd = timeline();
    odd.lanes[2].points.push([NOW, "THROTTLED"]);
    render({ timeline: odd });
    const keys = [...root().querySelectorAll(".podbook-tl-key")].map((k) => k.dataset.state);
    expect(keys).toEqual(["INITIALIZING", "IDLE", "RUNNING", "THROTTLED", "GONE"]);
  });
});

describe("health panel: step spans", () => {
  it("holds each value until the next point, the last until the end", () => {
    expect(
      spans(
        [
          [0, "a"],
          [5, "b"],
        ],
        0,
        10,
      ),
    ).toEqual([
      { from: 0, to: 5, value: "a", at: 0 },
      { from: 5, to: 10, value: "b", at: 5 },
    ]);
  });

  it("clips to the window and keeps a last point at the end itself", () => {
    expect(
      spans(
        [
          [-5, "a"],
          [-2, "b"],
          [10, "GONE"],
        ],
        0,
        10,
      ),
    ).toEqual([
      { from: 0, to: 10, value: "b", at: -2 },
      { from: 10, to: 10, value: "GONE", at: 10 },
    ]);
  });
});
