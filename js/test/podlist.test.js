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
  it("shows one row per pod with name, id, status, shape, cost and data center", () => {
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
