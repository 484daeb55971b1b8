import { afterEach, describe, expect, it } from "vitest";
import view, { SPARK_SAMPLES } from "../src/health.js";
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
