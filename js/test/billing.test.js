import { afterEach, describe, expect, it } from "vitest";
import view, { barLayout, money, niceMax } from "../src/billing.js";
import { mount } from "./fake-model.js";

const chart = (overrides = {}) => ({
  title: "Spend by resource kind",
  bucketSize: "day",
  window: { start: "2026-06-01T00:00:00Z", end: "2026-06-04T00:00:00Z" },
  series: [
    { key: "pods", label: "Pods", color: "#2f81f7" },
    { key: "serverless", label: "Serverless", color: "#a371f7" },
  ],
  buckets: [
    { start: "2026-06-01T00:00:00Z", label: "Jun 01", values: { pods: 3, serverless: 1 } },
    { start: "2026-06-02T00:00:00Z", label: "Jun 02", values: { pods: 0, serverless: 0 } },
    { start: "2026-06-03T00:00:00Z", label: "Jun 03", values: { pods: 1.5, serverless: 0.25 } },
  ],
  totals: { pods: 4.5, serverless: 1.25 },
  total: 5.75,
  ...overrides,
});

let mounted;
const render = (traits = {}) => {
  mounted = mount(view, { chart: chart(), error: "", loading: false, updated: "", ...traits });
  return mounted;
};
const root = () => mounted.el.querySelector(".podbook-billing");
const bars = () => [...root().querySelectorAll("rect.podbook-billing-bar")];

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
});

describe("billing chart helpers", () => {
  it("rounds the axis top to 1, 2 or 5 × 10^k", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(4)).toBe(5);
    expect(niceMax(5)).toBe(5);
    expect(niceMax(0.013)).toBeCloseTo(0.02);
    expect(niceMax(120)).toBe(200);
  });

  it("formats money with cents, or three significant digits under a dollar", () => {
    expect(money(0)).toBe("$0");
    expect(money(1234.5)).toBe("$1,234.50");
    expect(money(0.00123)).toBe("$0.00123");
    expect(money(0.5)).toBe("$0.500");
  });

  it("stacks the series of a bucket bottom to top, heights in proportion", () => {
    const { segments, top } = barLayout(chart());
    expect(top).toBe(5);
    const first = segments.filter((s) => s.bucket === 0);
    expect(first.map((s) => s.key)).toEqual(["pods", "serverless"]);
    expect(first[1].y + first[1].height).toBeCloseTo(first[0].y);
    expect(first[0].height / first[1].height).toBeCloseTo(3);
    expect(segments.some((s) => s.bucket === 1)).toBe(false);
  });
});

describe("billing panel", () => {
  it("draws one bar segment per spent series and bucket, axes, labels and a legend", () => {
    render();
    expect(bars()).toHaveLength(4);
    expect(bars()[0].getAttribute("fill")).toBe("#2f81f7");
    expect(root().querySelectorAll(".podbook-axis")).toHaveLength(2);
    const xLabels = [...root().querySelectorAll(".podbook-x-label")].map((n) => n.textContent);
    expect(xLabels).toEqual(["Jun 01", "Jun 02", "Jun 03"]);
    const yLabels = [...root().querySelectorAll(".podbook-y-label")].map((n) => n.textContent);
    expect(yLabels[0]).toBe("$0");
    expect(yLabels.at(-1)).toBe("$5.00");
    const legend = [...root().querySelectorAll(".podbook-legend-item")].map((n) => n.textContent);
    expect(legend).toEqual(["Pods", "Serverless"]);
    expect(root().querySelector(".podbook-header").textContent).toContain(
      "per day · 2026-06-01T00:00:00Z → 2026-06-04T00:00:00Z",
    );
  });

  it("names bucket, series and amount in each bar's tooltip, shown on hover", () => {
    render();
    const bar = bars()[1];
    expect(bar.querySelector("title").textContent).toBe("Jun 01 · Serverless: $1.00");
    const tooltip = root().querySelector(".podbook-billing-tooltip");
    expect(tooltip.hidden).toBe(true);
    bar.dispatchEvent(new MouseEvent("mouseenter"));
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.textContent).toBe("Jun 01 · Serverless: $1.00");
    bar.dispatchEvent(new MouseEvent("mouseleave"));
    expect(tooltip.hidden).toBe(true);
  });

  it("shows the totals table beside the chart", () => {
    render();
    const rows = [...root().querySelectorAll(".podbook-billing-table tr")];
    expect(rows.map((r) => r.dataset.key)).toEqual(["pods", "serverless", "total"]);
    expect(rows[0].textContent).toContain("Pods");
    expect(rows[0].querySelector('[data-field="amount"]').textContent).toBe("$4.50");
    expect(rows[2].querySelector('[data-field="amount"]').textContent).toBe("$5.75");
  });

  it("follows the theme through JupyterLab's CSS variables", () => {
    render();
    const label = root().querySelector(".podbook-x-label");
    expect(label.getAttribute("style")).toContain("var(--jp-ui-font-color1");
    expect(root().querySelector(".podbook-axis").getAttribute("style")).toContain(
      "var(--jp-border-color1",
    );
  });

  it("redraws when the chart changes and says when nothing was spent", () => {
    const { model } = render();
    model.set("chart", chart({ buckets: [], totals: {}, total: 0 }));
    expect(bars()).toHaveLength(0);
    expect(root().querySelector(".podbook-billing-empty").textContent).toContain("Nothing spent");
  });

  it("asks the kernel to refresh, and shows an error line", () => {
    const { model } = render({ error: "401 Unauthorized → set RUNPOD_API_KEY" });
    expect(root().querySelector(".podbook-error").textContent).toContain("RUNPOD_API_KEY");
    root().querySelector('[data-action="refresh"]').click();
    expect(model.sent).toEqual([{ type: "refresh" }]);
    model.set("loading", true);
    expect(root().querySelector('[data-action="refresh"]').disabled).toBe(true);
  });
});

describe("billing panel without an error", () => {
  it("shows no stray text for the parts it leaves out", () => {
    render();
    expect(root().textContent).not.toContain("null");
    expect(root().querySelector(".podbook-error")).toBeNull();
  });
});
