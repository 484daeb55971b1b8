import { afterEach, describe, expect, it, vi } from "vitest";
import view, { formatDollars, formatTimeLeft, spendLine } from "../src/pod.js";
import { mount } from "./fake-model.js";
import { gpuPod } from "./fixtures.js";

const NOW = Date.parse("2026-06-01T13:40:00Z");
const spent = (extra = {}) => ({
  total: 1.234,
  per_hour: 0.69,
  as_of: "2026-06-01T13:40:00+00:00",
  lagging: false,
  ...extra,
});

let mounted;
function render(extra) {
  mounted = mount(view, {
    pod: gpuPod(),
    error: "",
    busy: "",
    connection: "ok",
    updated: "",
    ...extra,
  });
  return mounted;
}
const line = () => mounted.el.querySelector(".podbook-spend");
const part = (name) => mounted.el.querySelector(`.podbook-spend [data-spend="${name}"]`);

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
  vi.useRealTimers();
});

describe("pod panel: spend", () => {
  it("shows the spend so far under the price, and nothing before the spend is known", () => {
    const { model } = render({ spend: {} });
    expect(line()).toBeNull();
    model.set("spend", spent());
    expect(line().dataset.field).toBe("spend");
    expect(part("total").textContent).toBe("$1.23 spent so far");
    expect(part("as-of")).toBeNull();
    expect(part("projected")).toBeNull(); // no guard trait at all
    expect(mounted.el.querySelector(".podbook-header .podbook-cost").textContent).toBe("$0.69/h");
  });

  it("says 'as of HH:MM' when the billing records lag", () => {
    const asOf = new Date(2026, 5, 1, 13, 0, 0); // local 13:00
    render({ spend: spent({ lagging: true, as_of: asOf.toISOString() }) });
    expect(part("as-of").textContent).toBe("as of 13:00");
  });

  it("projects the cost until the guard's deadline: per_hour × hours left", () => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
    const deadline = NOW / 1000 + 40 * 60; // 40 min: 0.69 × 2/3 = $0.46
    const { model } = render({ spend: spent(), guard: { deadline, state: "armed" } });
    expect(part("projected").textContent).toBe("≈ $0.46 more until it stops (in 40 min)");
    expect(line().textContent).toBe(
      "$1.23 spent so far · ≈ $0.46 more until it stops (in 40 min)",
    );
    model.set("guard", { deadline: null, state: "off" });
    expect(part("projected")).toBeNull();
    expect(part("total").textContent).toBe("$1.23 spent so far");
  });

  it("projects nothing without a deadline, past it, or while the pod is not running", () => {
    const now = NOW;
    expect(spendLine(spent(), { deadline: null, state: "off" }, "RUNNING", now).textContent).toBe(
      "$1.23 spent so far",
    );
    expect(spendLine(spent(), undefined, "RUNNING", now).textContent).toBe("$1.23 spent so far");
    const past = { deadline: now / 1000 - 5, state: "firing" };
    expect(spendLine(spent(), past, "RUNNING", now).querySelector('[data-spend="projected"]')).toBeNull();
    const later = { deadline: now / 1000 + 600, state: "armed" };
    expect(spendLine(spent(), later, "EXITED", now).querySelector('[data-spend="projected"]')).toBeNull();
    expect(spendLine(undefined, later, "RUNNING", now)).toBeNull();
  });

  it("formats dollars and the time left as the panel rounds them", () => {
    expect(formatDollars(0)).toBe("$0.00");
    expect(formatDollars(0.0004)).toBe("< $0.01");
    expect(formatDollars(1234.5)).toBe("$1,234.50");
    expect(formatTimeLeft(45.4)).toBe("in 45 s");
    expect(formatTimeLeft(12 * 60 + 10)).toBe("in 12 min");
    expect(formatTimeLeft(2 * 3600 + 5 * 60)).toBe("in 2 h 05 min");
    const tiny = spendLine(spent({ per_hour: 0.01 }), { deadline: NOW / 1000 + 50 }, "RUNNING", NOW);
    expect(tiny.querySelector('[data-spend="projected"]').textContent).toBe(
      "< $0.01 more until it stops (in 50 s)",
    );
  });
});
