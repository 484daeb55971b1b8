import { afterEach, describe, expect, it, vi } from "vitest";
import view, { formatCompute } from "../src/cluster.js";
import { mount } from "./fake-model.js";
import { cluster, member } from "./fixtures.js";

let mounted;
const render = (traits) => {
  mounted = mount(view, { cluster: cluster(), members: [], error: "", connection: "ok", ...traits });
  return mounted;
};
const root = () => mounted.el.querySelector(".podbook-cluster");
const field = (name) => root().querySelector(`[data-field="${name}"]`);
const memberRows = () => [...root().querySelectorAll("tbody tr[data-rank]")];

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
  vi.unstubAllGlobals();
});

describe("cluster panel", () => {
  it("shows name, type, compute shape, data center, network and primary SSH", () => {
    render();
    expect(root().dataset.clusterId).toBe("cluster_abc123");
    expect(root().querySelector(".podbook-header").textContent).toContain("my-training-cluster");
    expect(root().querySelector(".podbook-badge").textContent).toBe("SLURM");
    expect(field("compute").textContent).toBe(
      "3 pods × 8 × NVIDIA H100 80GB HBM3 (24 GPUs)",
    );
    expect(field("dataCenterId").textContent).toBe("US-TX-3");
    expect(field("network").textContent).toBe("10.65.0.0/16");
    expect(field("pods").textContent).toBe("2 RUNNING · 1 STARTING");
    expect(field("primary").querySelector("code").textContent).toBe("1.2.3.4:22001");
  });

  it("copies the primary SSH endpoint", async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    render();
    field("primary").querySelector("button.podbook-copy").click();
    await vi.waitFor(() =>
      expect(field("primary").querySelector(".podbook-copy").textContent).toBe("Copied"),
    );
    expect(writeText).toHaveBeenCalledWith("1.2.3.4:22001");
  });

  it("says what is missing while the cluster is still being placed", () => {
    render({
      cluster: cluster({ dataCenterId: undefined, network: undefined, primary: undefined }),
    });
    expect(field("dataCenterId").textContent).toBe("—");
    expect(field("network").textContent).toBe("—");
    expect(field("primary").textContent).toBe("not placed yet");
    expect(root().querySelector(".podbook-empty").textContent).toContain("No member pods");
  });

  it("says the primary is not reachable before it runs with SSH", () => {
    render({ cluster: cluster({ primary: { podId: "pod_node0", status: "STARTING" } }) });
    expect(field("primary").textContent).toContain("pod_node0 (STARTING)");
    expect(field("primary").querySelector("code")).toBeNull();
  });

  it("lists members by rank with role, overlay IP and status", () => {
    render({
      members: [
        member(2, "SLURM_COMPUTE", "STARTING", "10.65.0.4"),
        member(0, "SLURM_CONTROLLER", "RUNNING", "10.65.0.2"),
        member(1, "SLURM_COMPUTE", "RUNNING", "10.65.0.3"),
      ],
    });
    expect(memberRows().map((r) => [r.dataset.rank, r.dataset.role, r.dataset.status])).toEqual([
      ["0", "SLURM_CONTROLLER", "RUNNING"],
      ["1", "SLURM_COMPUTE", "RUNNING"],
      ["2", "SLURM_COMPUTE", "STARTING"],
    ]);
    const cells = [...memberRows()[0].querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual([
      "0",
      "SLURM_CONTROLLER",
      "10.65.0.2",
      "RUNNING",
      "my-training-cluster-0",
      "pod_node0",
    ]);
  });

  it("shows members without role or rank (TRAINING, before assignment) last, with dashes", () => {
    render({
      cluster: cluster({ type: "TRAINING" }),
      members: [member(null, null, "PROVISIONING", null), member(0, null, "RUNNING", "10.65.0.2")],
    });
    const [first, second] = memberRows();
    expect(first.dataset.rank).toBe("0");
    expect(first.dataset.role).toBe("");
    expect(second.dataset.rank).toBe("");
    expect([...second.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent)).toEqual([
      "—",
      "—",
      "—",
    ]);
  });

  it("says why a RUNNING primary has no SSH endpoint", () => {
    render({ cluster: cluster({ primary: { podId: "pod_node0", status: "RUNNING" } }) });
    expect(field("primary").textContent).toContain("expose 22/tcp");
    expect(field("primary").textContent).not.toContain("not reachable yet");
  });

  it("counts member statuses from the members themselves, not a stale summary", () => {
    render({
      cluster: cluster({ pods: { total: 2, byStatus: { RUNNING: 2 } } }),
      members: [member(0, "RAY_HEAD", "EXITED", "10.65.0.2"), member(1, "RAY_WORKER", "RUNNING")],
    });
    expect(field("pods").textContent).toBe("1 EXITED · 1 RUNNING");
  });

  it("shows a deleted cluster: members terminated, no primary, no stale RUNNING", () => {
    const { model } = render({
      members: [member(0, "SLURM_CONTROLLER", "RUNNING", "10.65.0.2")],
    });
    const { primary, pods, ...rest } = cluster();
    model.set("members", [member(0, "SLURM_CONTROLLER", "TERMINATED", "10.65.0.2")]);
    model.set("cluster", rest);
    model.set("error", "the cluster was deleted; its member pods are terminated.");
    expect(root().textContent).not.toContain("RUNNING");
    expect(field("pods").textContent).toBe("1 TERMINATED");
    expect(field("primary").textContent).toContain("terminated");
    expect(memberRows()[0].dataset.rank).toBe("0");
    expect(memberRows()[0].querySelector("td").textContent).toBe("0");
  });

  it("follows change:members and change:cluster", () => {
    const { model } = render({ members: [member(0, "RAY_HEAD", "STARTING", "10.65.0.2")] });
    model.set("members", [member(0, "RAY_HEAD", "RUNNING", "10.65.0.2")]);
    expect(memberRows()[0].dataset.status).toBe("RUNNING");
    model.set("cluster", cluster({ name: "renamed-cluster" }));
    expect(root().textContent).toContain("renamed-cluster");
  });

  it("shows the error and the reconnecting note", () => {
    const { model } = render();
    model.set("error", "404 Not Found: no cluster cluster_nope");
    model.set("connection", "reconnecting");
    expect(root().querySelector(".podbook-error").textContent).toContain("404 Not Found");
    expect(root().querySelector(".podbook-reconnecting")).not.toBeNull();
  });

  it("formats the compute shape", () => {
    expect(formatCompute({ gpuTypeId: "NVIDIA A100 80GB PCIe", gpuCountPerPod: 1, podCount: 2 })).toBe(
      "2 pods × 1 × NVIDIA A100 80GB PCIe (2 GPUs)",
    );
    expect(formatCompute(undefined)).toBe("—");
  });

  it("removes its listeners on cleanup", () => {
    const { model, cleanup } = render();
    cleanup();
    mounted = null;
    expect(model.listenerCount()).toBe(0);
  });
});
