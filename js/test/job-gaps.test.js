// The job view when the kernel is slow to answer: batches sent before the view rendered are
// lost, the `ready` answer comes late (the kernel's shell is busy with the next cell), and the
// final `tail` trait must still repair the stream. Also: a streamed job's result is not
// shown a second time.
import { afterEach, describe, expect, it, vi } from "vitest";
import view, { GAP_WAIT_MS, STREAM_DOM_CAP } from "../src/job.js";
import { mount, receive } from "./fake-model.js";

const traits = (overrides = {}) => {
  const job = {
    id: "job-1",
    endpointId: "demo",
    status: "IN_PROGRESS",
    delayTime: 5,
    executionTime: null,
    error: null,
    ...overrides.job,
  };
  return {
    tail: [],
    chunks: 0,
    rate: {},
    error: "",
    busy: "",
    connection: "ok",
    ...overrides,
    job,
    status: job.status,
  };
};

const words = (start, n) => Array.from({ length: n }, (_, k) => `w${start + k} `);
const tailOf = (start, n) => words(start, n).map((output, k) => ({ i: start + k, output }));

let mounted;
function render(overrides) {
  mounted = mount(view, traits(overrides));
  return mounted.model;
}
const chunks = (model, start, items) => receive(model, { type: "chunks", start, items });
const root = () => mounted.el.querySelector(".podbook-job");
const shown = () => root().querySelector(".podbook-stream-body").textContent;
const gaps = () => [...root().querySelectorAll(".podbook-gap")].map((g) => g.textContent);
const hiddenLine = () => root().querySelector(".podbook-hidden");
const readies = (model) => model.sent.filter((m) => m.type === "ready");
const textBlocks = () => root().querySelectorAll(".podbook-stream pre.podbook-text").length;

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
  vi.useRealTimers();
});

describe("job panel: lost first batches", () => {
  it("takes a late answer to ready after the gap wait gave up, and the marker goes", () => {
    vi.useFakeTimers();
    const model = render();
    expect(readies(model)).toEqual([{ type: "ready", have: 0 }]);
    // Batches 0..3 went out before the view rendered; the next ones arrive.
    chunks(model, 4, words(4, 2));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    chunks(model, 6, words(6, 2));
    expect(shown()).toBe("… 4 chunks missedw4 w5 w6 w7 ");
    expect(gaps()).toEqual(["… 4 chunks missed"]);
    expect(hiddenLine().hidden).toBe(true);
    // The kernel's shell gets to the queued `ready` (have 0) once the busy cell ends.
    chunks(model, 0, words(0, 8));
    expect(shown()).toBe(words(0, 8).join(""));
    expect(gaps()).toEqual([]);
    expect(hiddenLine().hidden).toBe(true);
    expect(root().dataset.chunks).toBe("8");
    expect(textBlocks()).toBe(1);
  });

  it("is repaired by the final tail when no ready answer ever comes", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 3, words(3, 3));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    chunks(model, 6, words(6, 4));
    expect(gaps()).toEqual(["… 3 chunks missed"]);
    model.set("job", { ...model.get("job"), status: "COMPLETED" });
    model.set("status", "COMPLETED");
    model.set("chunks", 10);
    model.set("tail", tailOf(0, 10));
    expect(shown()).toBe(words(0, 10).join(""));
    expect(gaps()).toEqual([]);
    expect(hiddenLine().hidden).toBe(true);
    expect(root().dataset.chunks).toBe("10");
  });

  it("fills a gap between chunks shown, in place, from a later batch", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 0, words(0, 2));
    chunks(model, 5, words(5, 2));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    expect(gaps()).toEqual(["… 3 chunks missed"]);
    chunks(model, 3, words(3, 1)); // the middle of the gap: two markers around it
    expect(gaps()).toEqual(["… 1 chunk missed", "… 1 chunk missed"]);
    expect(shown()).toBe("w0 w1 … 1 chunk missedw3 … 1 chunk missedw5 w6 ");
    chunks(model, 2, words(2, 3));
    expect(shown()).toBe(words(0, 7).join(""));
    expect(gaps()).toEqual([]);
    expect(textBlocks()).toBe(1);
    expect(root().dataset.chunks).toBe("7");
  });

  it("asks again from the first chunk still missing", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 0, words(0, 1));
    chunks(model, 3, words(3, 1));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    chunks(model, 6, words(6, 1));
    expect(readies(model).map((m) => m.have)).toEqual([0, 1, 1]);
  });

  it("still ignores duplicates, before and after a gap was filled", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 2, words(2, 2));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    chunks(model, 2, words(2, 2));
    chunks(model, 0, words(0, 4));
    chunks(model, 0, words(0, 4));
    chunks(model, 1, words(1, 2));
    model.set("tail", tailOf(0, 4));
    model.set("tail", tailOf(0, 4));
    expect(shown()).toBe(words(0, 4).join(""));
    expect(root().querySelectorAll(".podbook-stream-body pre")[0].childNodes).toHaveLength(4);
    expect(gaps()).toEqual([]);
  });

  it("counts as hidden only what the kernel no longer holds", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 250, words(250, 10));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    expect(gaps()).toEqual(["… 250 chunks missed"]);
    // The kernel's tail holds 60..259: 0..59 are gone, 60..249 fill the rest.
    model.set("tail", tailOf(60, 200));
    expect(hiddenLine().hidden).toBe(false);
    expect(hiddenLine().textContent).toBe("… 60 earlier chunks hidden");
    expect(gaps()).toEqual([]);
    expect(shown()).toBe(words(60, 200).join(""));
    // A late ready answer with chunks the view gave up on for good changes nothing.
    chunks(model, 0, words(0, 260));
    expect(shown()).toBe(words(60, 200).join(""));
    expect(root().dataset.chunks).toBe("260");
  });

  it("a gap between chunks shown that the tail no longer covers stays marked as missed", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 0, words(0, 2));
    chunks(model, 300, words(300, 2));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    model.set("tail", tailOf(102, 200));
    expect(gaps()).toEqual(["… 100 chunks missed"]);
    expect(hiddenLine().hidden).toBe(true);
    expect(shown()).toBe(`w0 w1 … 100 chunks missed${words(102, 200).join("")}`);
  });

  it("trims the oldest chunks with the gap markers behind them", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 0, words(0, 10));
    chunks(model, 20, words(20, STREAM_DOM_CAP));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    expect(gaps()).toEqual([]);
    expect(hiddenLine().textContent).toBe("… 20 earlier chunks hidden");
    chunks(model, 10, words(10, 10)); // too late: trimmed
    expect(shown().startsWith("w20 ")).toBe(true);
  });
});

describe("job panel: a streamed job's result", () => {
  it("is not shown again when it is the list of the chunks streamed", () => {
    const model = render();
    chunks(model, 0, ["Hello ", "world"]);
    model.set("job", { ...model.get("job"), status: "COMPLETED", output: ["Hello ", "world"] });
    model.set("status", "COMPLETED");
    expect(shown()).toBe("Hello world");
    expect(root().querySelector(".podbook-output")).toBeNull();
    expect(root().textContent).not.toContain("Output");
  });

  it("when it differs, is folded: a closed Output (N items) that stays open once opened", () => {
    const model = render();
    chunks(model, 0, ["a ", "b "]);
    model.set("job", { ...model.get("job"), status: "COMPLETED", output: ["a ", "b ", "c "] });
    model.set("status", "COMPLETED");
    const output = () => root().querySelector(".podbook-output");
    expect(output().tagName).toBe("DETAILS");
    expect(output().open).toBe(false);
    expect(output().querySelector("summary").textContent).toBe("Output (3 items)");
    output().open = true;
    output().dispatchEvent(new Event("toggle"));
    model.set("rate", { tokensPerSecond: 3 });
    expect(output().open).toBe(true);
  });

  it("after a lost start, is hidden again once the tail repairs the stream", () => {
    vi.useFakeTimers();
    const model = render();
    chunks(model, 2, words(2, 2));
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    model.set("job", { ...model.get("job"), status: "COMPLETED", output: words(0, 4) });
    model.set("status", "COMPLETED");
    expect(root().querySelector(".podbook-output")).not.toBeNull();
    model.set("tail", tailOf(0, 4));
    expect(root().querySelector(".podbook-output")).toBeNull();
    expect(shown()).toBe(words(0, 4).join(""));
  });

  it("of a job that streamed nothing is still shown in full", () => {
    render({ job: { status: "COMPLETED", output: { echo: [1, 2] } } });
    const output = root().querySelector(".podbook-output");
    expect(output.dataset.output).toBe("result");
    expect(output.textContent).toContain('"echo"');
  });
});
