import { afterEach, describe, expect, it, vi } from "vitest";
import view, { guardText, roundedLeft } from "../src/pod.js";
import { mount } from "./fake-model.js";
import { gpuPod } from "./fixtures.js";

const NOW = Date.parse("2026-06-01T13:40:00Z");
const settings = { idle_stop: 1800, max_runtime: null, idle_action: "stop", summary: "idle stop 30m, then stop" };
const idleGuard = (extra = {}) => ({ state: "idle", deadline: NOW / 1000 + 12 * 60, next: "idle", busy: [], settings, summary: "idle stop in 12 min", ...extra });

let mounted;
function render(extra) {
  mounted = mount(view, { pod: gpuPod(), error: "", busy: "", connection: "ok", updated: "", ...extra });
  return mounted;
}
const text = () => mounted.el.querySelector('[data-guard="summary"]')?.textContent;
const button = (op) => mounted.el.querySelector(`[data-guard-op="${op}"]`);

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
  vi.useRealTimers();
});

describe("pod panel: guard", () => {
  it("rounds a countdown as the kernel does", () => {
    expect(roundedLeft(45)).toBe("45 s");
    expect(roundedLeft(12 * 60 + 10)).toBe("12 min");
    expect(roundedLeft(3 * 3600 + 10 * 60)).toBe("3 h 10 min");
    expect(roundedLeft(4 * 3600)).toBe("4 h");
    expect(roundedLeft(-3)).toBe("0 s");
  });

  it("says what keeps the pod busy, and the time limit when there is one", () => {
    const busy = { state: "busy", busy: ["ssh"], deadline: null, settings };
    expect(guardText(busy, "RUNNING", NOW)).toBe("busy: SSH session open");
    const limited = { ...busy, busy: ["kernel", "gpu"], deadline: NOW / 1000 + 7200 };
    expect(guardText(limited, "RUNNING", NOW)).toBe(
      "busy: a Jupyter kernel is running code, GPU in use; time limit in 2 h",
    );
    expect(guardText(idleGuard({ next: "max" }), "RUNNING", NOW)).toBe("time limit in 12 min");
    expect(guardText(null, "RUNNING", NOW)).toBeNull();
  });

  it("counts down live from the deadline and offers Extend and Keep running", () => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
    const { model } = render({ guard: idleGuard() });
    expect(mounted.el.querySelector(".podbook-guard").dataset.state).toBe("idle");
    expect(text()).toBe("idle stop in 12 min");
    vi.advanceTimersByTime(2 * 60 * 1000);
    expect(text()).toBe("idle stop in 10 min");
    button("extend").click();
    expect(model.sent).toContainEqual({ type: "guard", op: "extend" });
    button("keep").click();
    expect(model.sent).toContainEqual({ type: "guard", op: "keep" });
  });

  it("disables Extend and Keep running on a pod without SSH, and says why", () => {
    const { model } = render({ pod: { ...gpuPod(), ssh: { proxy: null, direct: null } }, guard: idleGuard() });
    for (const op of ["extend", "keep"]) {
      expect(button(op).disabled).toBe(true);
      expect(button(op).title).toMatch(/over SSH, which this pod has not \(create it with --ports 22\/tcp\)$/);
      button(op).click();
    }
    expect(model.sent).toEqual([]);
    mounted.cleanup();
    render({ guard: idleGuard() });
    expect(button("extend").disabled).toBe(false);
  });

  it("shows the reason once it fired, without buttons, and nothing for an unguarded pod", () => {
    const fired = { state: "fired", reason: "idle", settings, summary: "stopped after 30m idle" };
    render({ pod: gpuPod({ status: "EXITED", actions: ["start", "terminate"] }), guard: fired });
    expect(text()).toBe("stopped after 30m idle");
    expect(button("extend")).toBeNull();
    mounted.cleanup();
    render({ guard: {} });
    expect(mounted.el.querySelector(".podbook-guard")).toBeNull();
  });

  it("disables its buttons while an operation runs", () => {
    render({ guard: idleGuard(), busy: "extend" });
    expect(button("extend").disabled).toBe(true);
    expect(button("keep").disabled).toBe(true);
  });
});
