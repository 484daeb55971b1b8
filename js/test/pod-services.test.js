import { afterEach, describe, expect, it } from "vitest";
import view from "../src/pod.js";
import { mount } from "./fake-model.js";
import { gpuPod } from "./fixtures.js";

let mounted;
function render(extra) {
  mounted = mount(view, { pod: gpuPod({ ports: ["8888/http", "22/tcp", "8000/http", "5432/tcp"] }), error: "", busy: "", connection: "ok", updated: "", ...extra });
  return mounted;
}
const tag = (name) => mounted.el.querySelector(`[data-service="${name}"]`);

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
});

describe("pod panel: readiness of its services", () => {
  it("says starting… until the kernel finds the service answering, then ready", () => {
    const { model } = render({
      services: {
        ssh: { state: "waiting", note: "SSH: nothing answers on 127.0.0.1:2222 yet" },
        jupyter: { state: "waiting", note: "Jupyter: nothing answers yet" },
        "8000/http": { state: "waiting", note: "8000/http: nothing answers yet" },
        "5432/tcp": { state: "listening" },
      },
    });
    expect(tag("jupyter").textContent).toBe("starting…");
    expect(tag("jupyter").dataset.state).toBe("waiting");
    expect(mounted.el.querySelector('[data-port="8888/http"]').title).toBe("not answering yet");
    expect(tag("8000/http").textContent).toBe("nothing listening yet");
    expect(tag("5432/tcp").textContent).toBe("listening");
    for (const row of mounted.el.querySelectorAll("[data-ssh]")) {
      expect(row.querySelector('[data-service="ssh"]').textContent).toBe("starting…");
      expect(row.querySelector('[data-service="ssh"]').title).toContain("nothing answers");
      expect(row.querySelector("button.podbook-copy").title).toContain("will not connect yet");
    }
    model.set("services", { ssh: { state: "ready" }, jupyter: { state: "ready" }, "8000/http": { state: "listening" }, "5432/tcp": { state: "listening" } });
    expect(tag("jupyter").textContent).toBe("ready");
    expect(mounted.el.querySelector('[data-port="8888/http"]').title).toBe("open in a new tab");
    expect(tag("ssh").textContent).toBe("ready");
  });

  it("shows no tag while nothing is known (a pod that is not RUNNING)", () => {
    render({ services: {} });
    expect(mounted.el.querySelector("[data-service]")).toBeNull();
  });
});
