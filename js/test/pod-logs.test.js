import { afterEach, describe, expect, it } from "vitest";
import view, { MAX_LOG_LINES } from "../src/pod.js";
import { mount, receive } from "./fake-model.js";
import { gpuPod } from "./fixtures.js";

const traits = (extra = {}) => ({
  pod: gpuPod(),
  error: "",
  busy: "",
  connection: "ok",
  updated: "",
  tab: "overview",
  ...extra,
});

let mounted;
const root = () => mounted.el.querySelector(".podbook-pod");
const tab = (name) => root().querySelector(`button[data-tab="${name}"]`);
const lines = () => [...root().querySelectorAll(".podbook-log-line")];
const line = (seq, text, source = "container") => ({
  seq,
  ts: `2026-06-01T12:00:${String(seq % 60).padStart(2, "0")}.000Z`,
  source,
  line: text,
});

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
});

describe("pod panel: Logs tab", () => {
  it("opens on Overview and asks for nothing until the Logs tab is chosen", () => {
    mounted = mount(view, traits());
    expect(root().dataset.tab).toBe("overview");
    expect(tab("overview").getAttribute("aria-selected")).toBe("true");
    expect(root().querySelector("[data-ssh]")).not.toBeNull();
    expect(mounted.model.sent).toEqual([]);

    tab("logs").click();
    expect(root().dataset.tab).toBe("logs");
    expect(root().querySelector(".podbook-logs")).not.toBeNull();
    expect(root().querySelector("[data-ssh]")).toBeNull();
    expect(mounted.model.sent).toEqual([{ type: "logs", follow: true, have: 0 }]);
  });

  it("appends lines as they arrive, in order, with source and time", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    expect(root().querySelector(".podbook-log-status").textContent).toContain("waiting");
    receive(mounted.model, { type: "log-lines", lines: [line(1, "starting"), line(2, "ready")] });
    receive(mounted.model, { type: "log-lines", lines: [line(3, "pod is RUNNING", "system")] });
    expect(lines().map((n) => n.querySelector(".podbook-log-text").textContent)).toEqual([
      "starting",
      "ready",
      "pod is RUNNING",
    ]);
    expect(lines()[2].dataset.source).toBe("system");
    expect(lines()[0].querySelector(".podbook-log-ts").textContent).toBe(
      "2026-06-01T12:00:01.000Z",
    );
    expect(root().querySelector(".podbook-logs").dataset.lines).toBe("3");
  });

  it("drops lines it already holds (a replay after reopening overlaps)", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    receive(mounted.model, { type: "log-lines", lines: [line(1, "a"), line(2, "b")] });
    receive(mounted.model, { type: "log-lines", lines: [line(2, "b"), line(3, "c")] });
    expect(lines().map((n) => n.dataset.seq)).toEqual(["1", "2", "3"]);
  });

  it("keeps only the last MAX_LOG_LINES lines", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    const batch = Array.from({ length: MAX_LOG_LINES + 50 }, (_, i) => line(i + 1, `l${i + 1}`));
    receive(mounted.model, { type: "log-lines", lines: batch });
    expect(lines()).toHaveLength(MAX_LOG_LINES);
    expect(lines()[0].dataset.seq).toBe("51");
  });

  it("stops following when the tab closes and resumes from the last line it holds", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    receive(mounted.model, { type: "log-lines", lines: [line(7, "x")] });
    tab("overview").click();
    tab("logs").click();
    expect(mounted.model.sent).toEqual([
      { type: "logs", follow: true, have: 0 },
      { type: "logs", follow: false },
      { type: "logs", follow: true, have: 7 },
    ]);
    expect(lines()).toHaveLength(1); // the lines survive the tab switch
  });

  it("keeps lines through pod refreshes and tells the end of the stream", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    receive(mounted.model, { type: "log-lines", lines: [line(1, "a")] });
    mounted.model.set("pod", gpuPod({ status: "EXITED", actions: ["start", "terminate"] }));
    expect(lines()).toHaveLength(1);
    receive(mounted.model, { type: "log-end" });
    expect(root().querySelector(".podbook-logs").dataset.ended).toBe("true");
    expect(root().querySelector(".podbook-log-status").textContent).toContain("ended");
  });

  it("shows why the stream stopped, and stops following on dispose", () => {
    mounted = mount(view, traits({ tab: "logs" }));
    receive(mounted.model, { type: "log-end", error: "404 Not Found: pod x not found" });
    expect(root().querySelector(".podbook-log-status.podbook-error").textContent).toContain(
      "404 Not Found",
    );
    mounted.cleanup();
    expect(mounted.model.sent.at(-1)).toEqual({ type: "logs", follow: false });
    expect(mounted.model.listenerCount()).toBe(0);
    mounted = null;
  });

  it("opens the Logs tab when the kernel sets `tab`", () => {
    mounted = mount(view, traits());
    mounted.model.set("tab", "logs");
    expect(root().dataset.tab).toBe("logs");
    expect(mounted.model.sent).toEqual([{ type: "logs", follow: true, have: 0 }]);
  });
});
