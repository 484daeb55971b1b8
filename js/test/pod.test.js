import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import view, { portUrl } from "../src/pod.js";
import { mount } from "./fake-model.js";
import { cpuPod, gpuPod, provisioningPod } from "./fixtures.js";

const traits = (pod, extra = {}) => ({
  pod,
  error: "",
  busy: "",
  connection: "ok",
  updated: "",
  ...extra,
});

let mounted;
function render(pod, extra) {
  mounted = mount(view, traits(pod, extra));
  return mounted;
}

const root = () => mounted.el.querySelector(".podbook-pod");
const badge = () => root().querySelector(".podbook-header .podbook-badge");
const actionNames = () =>
  [...root().querySelectorAll("button[data-action]")].map((b) => b.dataset.action);
const button = (action) => root().querySelector(`button[data-action="${action}"]`);

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
  vi.useRealTimers();
});

describe("pod panel: identity and shape", () => {
  it("shows name, id, GPU shape, image, data center, CUDA and cost", () => {
    render(gpuPod());
    expect(root().dataset.podId).toBe("pod_abc123");
    const text = root().textContent;
    expect(text).toContain("my-training-pod");
    expect(text).toContain("pod_abc123");
    expect(root().querySelector('[data-field="shape"]').textContent).toBe(
      "2 × NVIDIA GeForce RTX 4090",
    );
    expect(root().querySelector('[data-field="image"]').textContent).toContain("runpod/pytorch");
    expect(root().querySelector('[data-field="dataCenterId"]').textContent).toBe("US-TX-3");
    expect(root().querySelector('[data-field="cudaVersion"]').textContent).toBe("12.8");
    expect(root().querySelector(".podbook-cost").textContent).toBe("$0.69/h");
  });

  it("shows a CPU pod's flavor, vCPUs and memory", () => {
    render(cpuPod());
    expect(root().querySelector('[data-field="shape"]').textContent).toBe("cpu5c · 4 vCPU · 16 GB");
    expect(root().querySelector('[data-field="cudaVersion"]')).toBeNull();
  });

  it("renders an empty pod trait without failing", () => {
    render({});
    expect(badge().textContent).toBe("UNKNOWN");
    expect(actionNames()).toEqual([]);
  });
});

describe("pod panel: status badge follows the lifecycle", () => {
  it("walks PROVISIONING → STARTING → RUNNING → EXITED on change:pod", () => {
    const { model } = render(provisioningPod());
    expect(root().dataset.status).toBe("PROVISIONING");
    expect(badge().dataset.status).toBe("PROVISIONING");
    expect(badge().hasAttribute("data-pending")).toBe(true);

    model.set("pod", provisioningPod({ status: "STARTING", dataCenterId: "US-TX-3" }));
    expect(badge().textContent).toBe("STARTING");
    expect(badge().hasAttribute("data-pending")).toBe(true);

    model.set("pod", gpuPod());
    expect(root().dataset.status).toBe("RUNNING");
    expect(badge().textContent).toBe("RUNNING");
    expect(badge().hasAttribute("data-pending")).toBe(false);

    model.set("pod", gpuPod({ status: "EXITED", cost: 0, runtime: null, actions: ["start"] }));
    expect(badge().textContent).toBe("EXITED");
    expect(root().querySelector(".podbook-cost").textContent).toBe("$0.00/h");
  });
});

describe("pod panel: actions", () => {
  it("shows exactly the buttons in pod.actions, in order", () => {
    const { model } = render(provisioningPod());
    expect(actionNames()).toEqual(["start", "terminate"]);
    model.set("pod", gpuPod({ actions: ["stop", "restart", "terminate"] }));
    expect(actionNames()).toEqual(["stop", "restart", "terminate"]);
    model.set("pod", gpuPod({ status: "TERMINATED", actions: [] }));
    expect(actionNames()).toEqual([]);
  });

  it("sends {type: action} when a button is clicked", () => {
    const { model } = render(gpuPod());
    button("stop").click();
    button("restart").click();
    expect(model.sent).toEqual([
      { type: "action", action: "stop" },
      { type: "action", action: "restart" },
    ]);
  });

  it("asks for a second click before terminating", () => {
    const { model } = render(gpuPod());
    button("terminate").click();
    expect(model.sent).toEqual([]);
    expect(button("terminate").textContent).toMatch(/again/i);
    button("terminate").click();
    expect(model.sent).toEqual([{ type: "action", action: "terminate" }]);
  });

  it("lets the user cancel an armed terminate", () => {
    const { model } = render(gpuPod());
    button("terminate").click();
    root().querySelector("button.podbook-cancel").click();
    expect(button("terminate").textContent).toBe("Terminate");
    button("terminate").click();
    expect(model.sent).toEqual([]);
  });

  it("keeps the terminate confirmation across a refresh of the same status", () => {
    const { model } = render(gpuPod());
    button("terminate").click();
    model.set("pod", gpuPod({ runtime: { ...gpuPod().runtime, uptime: 3800 } }));
    button("terminate").click();
    expect(model.sent).toEqual([{ type: "action", action: "terminate" }]);
  });

  it("disables every action with a spinner on the one in flight while busy", () => {
    const { model } = render(gpuPod());
    model.set("busy", "stop");
    for (const name of actionNames()) expect(button(name).disabled).toBe(true);
    expect(button("stop").querySelector(".podbook-spinner")).not.toBeNull();
    expect(button("stop").textContent).toContain("Stopping");
    expect(button("restart").querySelector(".podbook-spinner")).toBeNull();
    button("restart").click();
    expect(model.sent).toEqual([]);

    model.set("busy", "");
    expect(button("stop").disabled).toBe(false);
    expect(button("stop").querySelector(".podbook-spinner")).toBeNull();
  });
});

describe("pod panel: SSH", () => {
  it("shows proxy and direct commands, each in a code with a copy button", () => {
    render(gpuPod());
    const proxy = root().querySelector('[data-ssh="proxy"]');
    const direct = root().querySelector('[data-ssh="direct"]');
    expect(proxy.querySelector("code").textContent).toBe("ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io");
    expect(direct.querySelector("code").textContent).toBe("ssh root@45.23.12.1 -p 22001");
    expect(proxy.querySelector("button.podbook-copy")).not.toBeNull();
    expect(direct.querySelector("button.podbook-copy")).not.toBeNull();
  });

  it("shows only the proxy while direct is null, and nothing before placement", () => {
    const { model } = render(provisioningPod());
    expect(root().querySelector("[data-ssh]")).toBeNull();
    model.set("pod", gpuPod({ ssh: { ...gpuPod().ssh, direct: null } }));
    expect(root().querySelector('[data-ssh="proxy"]')).not.toBeNull();
    expect(root().querySelector('[data-ssh="direct"]')).toBeNull();
  });

  it("shows the pod's kernel and the last transfer as they change", () => {
    const { model } = render(gpuPod());
    expect(root().querySelector('[data-field="kernel"]')).toBeNull();
    model.set("remote", { kernel: "busy", attached: true });
    const kernel = root().querySelector('[data-field="kernel"]');
    expect(kernel.dataset.kernel).toBe("busy");
    expect(kernel.textContent).toBe("busy · cells run here");
    model.set("remote", {
      kernel: "idle",
      attached: false,
      transfer: { title: "push data → p1:~", state: "done", summary: "pushed 2 files, 1.0 kB" },
    });
    expect(root().querySelector('[data-field="kernel"]').textContent).toBe("idle");
    expect(root().querySelector('[data-field="transfer"]').textContent).toBe(
      "push data → p1:~: pushed 2 files, 1.0 kB",
    );
  });

  it("says why there is no SSH command when no server serves the pod", () => {
    const reason = "no SSH server: the pod has no PUBLIC_KEY; register a key";
    render(gpuPod({ ssh: { proxy: null, direct: null, unavailable: reason } }));
    expect(root().querySelector('[data-ssh="unavailable"]').textContent).toBe(reason);
    expect(root().querySelector(".podbook-copy, button[data-copy]")).toBeNull();
  });

  it("shows no SSH command once the pod is TERMINATED, even if the last state had one", () => {
    const { model } = render(gpuPod());
    expect(root().querySelector('[data-ssh="direct"]')).not.toBeNull();
    model.set("pod", gpuPod({ status: "TERMINATED", actions: [], cost: 0 }));
    expect(root().querySelector("[data-ssh]")).toBeNull();
    expect(root().textContent).not.toContain("ssh root@45.23.12.1");
  });

  it("copies the command with the Clipboard API and says Copied", async () => {
    vi.useFakeTimers();
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal("navigator", { clipboard: { writeText } });
    render(gpuPod());
    root().querySelector('[data-ssh="direct"] button.podbook-copy').click();
    await vi.waitFor(() =>
      expect(root().querySelector('[data-ssh="direct"] button.podbook-copy').textContent).toBe(
        "Copied",
      ),
    );
    expect(writeText).toHaveBeenCalledWith("ssh root@45.23.12.1 -p 22001");
    expect(root().querySelector('[data-ssh="proxy"] button.podbook-copy').textContent).toBe("Copy");
    vi.advanceTimersByTime(2000);
    expect(root().querySelector('[data-ssh="direct"] button.podbook-copy').textContent).toBe("Copy");
    vi.unstubAllGlobals();
  });

  it("falls back to a selected textarea and execCommand without the Clipboard API", async () => {
    vi.stubGlobal("navigator", {});
    let copied = null;
    document.execCommand = vi.fn(() => {
      copied = document.activeElement?.value ?? document.querySelector("textarea")?.value;
      return true;
    });
    render(gpuPod());
    root().querySelector('[data-ssh="proxy"] button.podbook-copy').click();
    await vi.waitFor(() =>
      expect(root().querySelector('[data-ssh="proxy"] button.podbook-copy').textContent).toBe(
        "Copied",
      ),
    );
    expect(document.execCommand).toHaveBeenCalledWith("copy");
    expect(copied).toBe("ssh 7h9k2m4n6p-64411eb2@ssh.runpod.io");
    expect(document.querySelector("textarea")).toBeNull();
    delete document.execCommand;
    vi.unstubAllGlobals();
  });

  it("selects the command and says Press Ctrl+C when no way of copying works", async () => {
    vi.stubGlobal("navigator", { clipboard: { writeText: vi.fn().mockRejectedValue(new Error("denied")) } });
    document.execCommand = vi.fn(() => false);
    render(gpuPod());
    root().querySelector('[data-ssh="direct"] button.podbook-copy').click();
    await vi.waitFor(() =>
      expect(root().querySelector('[data-ssh="direct"] .podbook-copy').textContent).toBe(
        "Press Ctrl+C",
      ),
    );
    expect(String(document.getSelection())).toBe("ssh root@45.23.12.1 -p 22001");
    delete document.execCommand;
    vi.unstubAllGlobals();
  });

  it("keeps 'Copied' through a refresh that re-renders the panel", async () => {
    vi.stubGlobal("navigator", { clipboard: { writeText: vi.fn().mockResolvedValue(undefined) } });
    const { model } = render(gpuPod());
    root().querySelector('[data-ssh="proxy"] button.podbook-copy').click();
    await vi.waitFor(() =>
      expect(root().querySelector('[data-ssh="proxy"] .podbook-copy').textContent).toBe("Copied"),
    );
    model.set("updated", "2026-03-13T20:05:00Z");
    expect(root().querySelector('[data-ssh="proxy"] .podbook-copy').textContent).toBe("Copied");
    model.set("pod", gpuPod({ ssh: { ...gpuPod().ssh, direct: null } }));
    expect(root().querySelector('[data-ssh="proxy"] .podbook-copy').textContent).toBe("Copied");
    vi.unstubAllGlobals();
  });
});

describe("pod panel: ports", () => {
  it("links HTTP ports to the service's proxy URL and lists TCP ports with their mapping", () => {
    render(gpuPod());
    const link = root().querySelector('a[data-port="8888/http"]');
    expect(link.getAttribute("href")).toBe("https://pod_abc123-8888.proxy.runpod.net");
    expect(link.getAttribute("target")).toBe("_blank");
    expect(link.getAttribute("rel")).toContain("noopener");
    expect(root().querySelector('a[data-port="22/tcp"]')).toBeNull();
    expect(root().querySelector('[data-port="22/tcp"]').textContent).toContain("45.23.12.1:22001");
  });

  it("links to a loopback runtime mapping, as the local emulator reports it", () => {
    const pod = gpuPod({
      runtime: { ...gpuPod().runtime, ports: [{ private: 8888, public: 41234, type: "http", ip: "127.0.0.1" }] },
    });
    render(pod);
    expect(root().querySelector('a[data-port="8888/http"]').getAttribute("href")).toBe(
      "http://127.0.0.1:41234/",
    );
  });

  it("builds the proxy URL before the pod has runtime ports", () => {
    expect(portUrl(provisioningPod(), 7860)).toBe("https://pod_abc123-7860.proxy.runpod.net");
    expect(portUrl(gpuPod({ runtime: null }), 8888)).toBe(
      "https://pod_abc123-8888.proxy.runpod.net",
    );
  });
});

describe("pod panel: utilization and uptime", () => {
  it("shows a bar per GPU (util and memory), CPU and memory while RUNNING", () => {
    render(gpuPod());
    const utils = [...root().querySelectorAll("[data-util]")].map((n) => n.dataset.util);
    expect(utils).toEqual(["gpu0", "gpu1", "cpu", "memory"]);
    const gpu0 = root().querySelector('[data-util="gpu0"]');
    expect(gpu0.querySelector('[data-metric="util"]').dataset.value).toBe("94");
    expect(gpu0.querySelector('[data-metric="memoryUtil"]').dataset.value).toBe("78");
    expect(gpu0.querySelector('[data-metric="util"] .podbook-bar-fill').style.width).toBe("94%");
    expect(gpu0.textContent).toContain("94% · mem 78%");
    expect(root().querySelector('[data-util="cpu"]').textContent).toContain("45%");
  });

  it("shows no bars outside RUNNING", () => {
    const { model } = render(provisioningPod({ runtime: { uptime: 0, gpus: [{ util: 0 }] } }));
    expect(root().querySelector("[data-util]")).toBeNull();
    model.set("pod", gpuPod());
    expect(root().querySelector("[data-util]")).not.toBeNull();
    model.set("pod", gpuPod({ status: "EXITED", runtime: null, actions: ["start"] }));
    expect(root().querySelector("[data-util]")).toBeNull();
  });

  it("ticks the uptime every second while RUNNING and stops on cleanup", () => {
    vi.useFakeTimers();
    const { cleanup } = render(gpuPod({ runtime: { ...gpuPod().runtime, uptime: 59 } }));
    const uptime = () => root().querySelector('[data-field="uptime"]').textContent;
    expect(uptime()).toBe("59s");
    vi.advanceTimersByTime(1000);
    expect(uptime()).toBe("1m 00s");
    cleanup();
    expect(vi.getTimerCount()).toBe(0);
    mounted = null;
  });
});

describe("pod panel: errors, connection and secrets", () => {
  it("shows the error in the panel and removes it when cleared", () => {
    const { model } = render(gpuPod());
    expect(root().querySelector(".podbook-error")).toBeNull();
    model.set("error", "409 Conflict: pod pod_abc123 cannot stop while PROVISIONING");
    expect(root().querySelector(".podbook-error").textContent).toBe(
      "409 Conflict: pod pod_abc123 cannot stop while PROVISIONING",
    );
    model.set("error", "");
    expect(root().querySelector(".podbook-error")).toBeNull();
  });

  it("shows a reconnecting note while the connection is lost", () => {
    const { model } = render(gpuPod());
    expect(root().textContent).not.toContain("reconnecting");
    model.set("connection", "reconnecting");
    expect(root().querySelector(".podbook-reconnecting").textContent).toBe("reconnecting…");
    model.set("connection", "ok");
    expect(root().querySelector(".podbook-reconnecting")).toBeNull();
  });

  it("lists env with masked values and never shows a secret-looking value", () => {
    const pod = gpuPod({
      env: {
        JUPYTER_PASSWORD: "••••••",
        PUBLIC_KEY: "••••••",
        MODE: "train",
        // A value the notebook failed to mask must still not reach the DOM.
        WANDB_API_KEY: "wandb-live-1234567890",
        db_password: "hunter2",
      },
    });
    render(pod);
    const env = root().querySelector(".podbook-env");
    expect(env.querySelector('[data-env="MODE"] td').textContent).toBe("train");
    expect(env.querySelector('[data-env="JUPYTER_PASSWORD"] td').textContent).toBe("••••••");
    expect(env.querySelector('[data-env="WANDB_API_KEY"] td').textContent).toBe("••••••");
    expect(mounted.el.innerHTML).not.toContain("wandb-live-1234567890");
    expect(mounted.el.innerHTML).not.toContain("hunter2");
  });

  it("keeps the env section open across refreshes once the user opens it", () => {
    const { model } = render(gpuPod());
    const details = root().querySelector("details.podbook-env");
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
    model.set("pod", gpuPod({ cost: 0.7 }));
    expect(root().querySelector("details.podbook-env").open).toBe(true);
  });

  it("keeps the buttons and commands in place when a refresh only moves the metrics", () => {
    const { model } = render(gpuPod());
    const stop = button("stop");
    const proxy = root().querySelector('[data-ssh="proxy"]');
    const bars = root().querySelector(".podbook-util");
    const runtime = { ...gpuPod().runtime, uptime: 3800, cpu: { util: 80 } };
    model.set("pod", gpuPod({ runtime }));
    expect(button("stop")).toBe(stop);
    expect(root().querySelector('[data-ssh="proxy"]')).toBe(proxy);
    expect(root().querySelector(".podbook-util")).not.toBe(bars);
    expect(root().querySelector('[data-util="cpu"]').textContent).toContain("80%");
    model.set("busy", "stop");
    expect(button("stop")).not.toBe(stop);
    expect(button("stop").disabled).toBe(true);
  });

  it("removes its listeners and DOM on cleanup", () => {
    const { model, el, cleanup } = render(gpuPod());
    cleanup();
    mounted = null;
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".podbook-pod")).toBeNull();
  });
});
