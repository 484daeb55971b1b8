import { afterEach, describe, expect, it } from "vitest";
import view from "../src/podlist.js";
import { mount } from "./fake-model.js";
import { cpuPod, gpuPod, member, provisioningPod } from "./fixtures.js";

let mounted;
const render = (pods, extra = {}) => {
  mounted = mount(view, { pods, error: "", connection: "ok", ...extra });
  return mounted;
};
const rows = () => [...mounted.el.querySelectorAll("tbody tr[data-pod-id]")];

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
});

describe("pod list panel", () => {
  it("shows one row per pod with name, id, status, shape, cost, guard and data center", () => {
    render([gpuPod(), cpuPod({ status: "EXITED", cost: 0 }), provisioningPod({ id: "pod_new" })]);
    expect(rows().map((r) => [r.dataset.podId, r.dataset.status])).toEqual([
      ["pod_abc123", "RUNNING"],
      ["pod_cpu001", "EXITED"],
      ["pod_new", "PROVISIONING"],
    ]);
    const cells = [...rows()[0].querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual([
      "my-training-pod",
      "pod_abc123",
      "RUNNING",
      "2 × NVIDIA GeForce RTX 4090",
      "$0.69/h",
      "no guard",
      "US-TX-3",
    ]);
    expect(rows()[1].querySelector(".podbook-badge").dataset.status).toBe("EXITED");
    expect(rows()[1].textContent).toContain("cpu5c · 4 vCPU · 16 GB");
    expect(rows()[2].textContent).toContain("—");
  });

  it("follows change:pods", () => {
    const { model } = render([provisioningPod()]);
    model.set("pods", [gpuPod()]);
    expect(rows()[0].dataset.status).toBe("RUNNING");
    model.set("pods", [gpuPod(), cpuPod()]);
    expect(rows()).toHaveLength(2);
  });

  it("marks the pods without a guard and keeps the kernel's order (highest price first)", () => {
    const guarded = gpuPod({ id: "pod_guarded", guardText: "idle stop 30m, then stop" });
    render([guarded, cpuPod({ cost: 0.12, guardText: "" }), provisioningPod({ id: "pod_new" })]);
    expect(rows().map((r) => [r.dataset.podId, r.dataset.guarded])).toEqual([
      ["pod_guarded", "yes"],
      ["pod_cpu001", "no"],
      ["pod_new", "no"],
    ]);
    expect(rows()[0].querySelector(".podbook-podlist-guard").textContent).toBe("idle stop 30m, then stop");
    expect(rows()[0].querySelector(".podbook-noguard")).toBeNull();
    const mark = rows()[1].querySelector(".podbook-noguard");
    expect(mark.textContent).toBe("no guard");
    expect(mark.getAttribute("title")).toContain("bills until it is stopped");
  });

  it("shows the total per hour of what is running and how much of it has no guard", () => {
    const { model } = render([gpuPod(), cpuPod({ cost: 0.12 })], {
      summary: { running: 2, perHour: 0.81, unguarded: 2 },
    });
    const line = () => mounted.el.querySelector(".podbook-podlist-summary");
    expect(line().textContent).toBe("2 running: $0.81/h · 2 without a guard");
    expect(line().dataset.perHour).toBe("0.81");
    expect(line().dataset.unguarded).toBe("2");
    model.set("summary", { running: 1, perHour: 0.69, unguarded: 0 });
    expect(line().textContent).toBe("1 running: $0.69/h");
    model.set("summary", { running: 0, perHour: 0, unguarded: 0 });
    expect(line().textContent).toBe("nothing running");
    model.set("pods", []);
    expect(line()).toBeNull();
  });

  it("tags cluster members", () => {
    render([member(0, "SLURM_CONTROLLER", "RUNNING", "10.65.0.2")]);
    expect(rows()[0].querySelector(".podbook-tag").textContent).toBe("cluster");
  });

  it("shows an empty state without a table", () => {
    const { model } = render([]);
    expect(mounted.el.querySelector("table")).toBeNull();
    expect(mounted.el.querySelector(".podbook-empty").textContent).toContain("No pods");
    model.set("pods", [gpuPod()]);
    expect(mounted.el.querySelector(".podbook-empty")).toBeNull();
    expect(rows()).toHaveLength(1);
  });

  it("shows the error and the reconnecting note", () => {
    const { model } = render([gpuPod()]);
    model.set("error", "401 Unauthorized: the API key was not accepted");
    model.set("connection", "reconnecting");
    expect(mounted.el.querySelector(".podbook-error").textContent).toContain("401 Unauthorized");
    expect(mounted.el.querySelector(".podbook-reconnecting")).not.toBeNull();
    expect(rows()).toHaveLength(1);
  });

  it("removes its listeners on cleanup", () => {
    const { model, cleanup } = render([gpuPod()]);
    cleanup();
    mounted = null;
    expect(model.listenerCount()).toBe(0);
  });
});
