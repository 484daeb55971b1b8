import { afterEach, describe, expect, it, vi } from "vitest";
import view, {
  GAP_WAIT_MS,
  STREAM_DOM_CAP,
  TEXT_BLOCK_CHUNKS,
  TEXT_BLOCK_MAX,
  chunkText,
  formatDuration,
  formatMetric,
} from "../src/job.js";
import { mount, receive } from "./fake-model.js";

// A job record as the JobPanel puts it in the `job` trait (camelCase, error normalised).
function job(overrides = {}) {
  return {
    id: "job-7f3a",
    endpointId: "stream-demo",
    status: "IN_PROGRESS",
    delayTime: 1234,
    executionTime: null,
    error: null,
    ...overrides,
  };
}

const traits = (overrides = {}) => {
  const j = job(overrides.job);
  return {
    job: j,
    status: j.status,
    tail: [],
    chunks: 0,
    rate: {},
    error: "",
    busy: "",
    connection: "ok",
    ...overrides,
    job: j,
  };
};

/** A tail trait: chunks `start..start+n-1` whose output is produced by `make(i)`. */
const tailOf = (start, n, make = (i) => `t${i} `) =>
  Array.from({ length: n }, (_, k) => ({ i: start + k, output: make(start + k) }));

let mounted;
function render(overrides) {
  mounted = mount(view, traits(overrides));
  return mounted;
}

const chunks = (model, start, items) => receive(model, { type: "chunks", start, items });

const root = () => mounted.el.querySelector(".podbook-job");
const streamEl = () => root().querySelector(".podbook-stream");
const streamText = () =>
  [...root().querySelectorAll(".podbook-stream pre.podbook-text")]
    .map((p) => p.textContent)
    .join("|");
const hiddenLine = () => root().querySelector(".podbook-hidden");
const actionNames = () =>
  [...root().querySelectorAll("button[data-action]")].map((b) => b.dataset.action);
const button = (action) => root().querySelector(`button[data-action="${action}"]`);
const readies = (model) => model.sent.filter((m) => m.type === "ready");

afterEach(() => {
  mounted?.cleanup();
  mounted = null;
  document.body.replaceChildren();
  vi.useRealTimers();
});

describe("job panel: render and catch up", () => {
  it("draws the tail first, then asks for what it missed with the tail's length", () => {
    const { model } = render({ tail: tailOf(0, 3), chunks: 3 });
    expect(streamText()).toBe("t0 t1 t2 ");
    expect(root().dataset.chunks).toBe("3");
    expect(model.sent).toEqual([{ type: "ready", have: 3 }]);
  });

  it("sends ready with 0 when nothing has streamed yet", () => {
    const { model } = render({ job: { status: "IN_QUEUE" } });
    expect(readies(model)).toEqual([{ type: "ready", have: 0 }]);
    expect(root().querySelector(".podbook-waiting").hidden).toBe(false);
    expect(root().querySelector(".podbook-stream-wrap").hidden).toBe(true);
  });

  it("after a late render of a long stream, says how many earlier chunks are not shown", () => {
    const { model } = render({ tail: tailOf(800, 200), chunks: 1000 });
    expect(model.sent).toEqual([{ type: "ready", have: 1000 }]);
    expect(hiddenLine().hidden).toBe(false);
    expect(hiddenLine().textContent).toBe("… 800 earlier chunks hidden");
    expect(streamText().startsWith("t800 t801 ")).toBe(true);
    expect(root().dataset.chunks).toBe("1000");
  });

  it("the answer to ready continues the stream without repeating the tail", () => {
    const { model } = render({ tail: tailOf(0, 3) });
    chunks(model, 1, ["t1 ", "t2 ", "t3 ", "t4 "]);
    expect(streamText()).toBe("t0 t1 t2 t3 t4 ");
    expect(root().dataset.chunks).toBe("5");
  });

  it("takes later tail updates, ignoring what it already has", () => {
    const { model } = render({ tail: tailOf(0, 2) });
    chunks(model, 2, ["t2 "]);
    model.set("tail", tailOf(0, 5));
    expect(streamText()).toBe("t0 t1 t2 t3 t4 ");
  });
});

describe("job panel: the stream", () => {
  it("appends chunks in order across batches", () => {
    const { model } = render();
    chunks(model, 0, ["Hello", ", "]);
    chunks(model, 2, ["world"]);
    chunks(model, 3, ["!"]);
    expect(streamText()).toBe("Hello, world!");
    expect(root().dataset.chunks).toBe("4");
    expect(root().querySelector(".podbook-waiting").hidden).toBe(true);
  });

  it("ignores duplicates by index, also inside a batch that overlaps", () => {
    const { model } = render();
    chunks(model, 0, ["a", "b", "c"]);
    chunks(model, 0, ["a", "b", "c"]);
    chunks(model, 1, ["b", "c", "d"]);
    chunks(model, 2, ["c"]);
    expect(streamText()).toBe("abcd");
    expect(root().dataset.chunks).toBe("4");
  });

  it("holds a batch that arrives ahead of a gap until the gap is filled", () => {
    const { model } = render();
    chunks(model, 0, ["a"]);
    chunks(model, 3, ["d", "e"]);
    expect(streamText()).toBe("a");
    chunks(model, 1, ["b", "c"]);
    expect(streamText()).toBe("abcde");
    expect(root().dataset.chunks).toBe("5");
  });

  it("asks the kernel again when a gap opens, and the answer fills it", () => {
    const { model } = render({ tail: tailOf(0, 2) });
    chunks(model, 5, ["t5 "]);
    expect(readies(model)).toEqual([
      { type: "ready", have: 2 },
      { type: "ready", have: 2 },
    ]);
    chunks(model, 2, ["t2 ", "t3 ", "t4 ", "t5 "]);
    expect(streamText()).toBe("t0 t1 t2 t3 t4 t5 ");
    expect(root().querySelector(".podbook-gap")).toBeNull();
  });

  it("a tail that starts past what the view holds marks the lost stretch at once", () => {
    const { model } = render();
    chunks(model, 0, ["a", "b"]);
    model.set(
      "tail",
      tailOf(10, 3, (i) => `[${i}]`),
    );
    expect(root().querySelector(".podbook-gap").textContent).toBe("… 8 chunks missed");
    expect(streamText()).toBe("ab|[10][11][12]");
    expect(root().dataset.chunks).toBe("13");
  });

  it("gives up on a gap that is never filled and marks it", () => {
    vi.useFakeTimers();
    const { model } = render();
    chunks(model, 0, ["a"]);
    chunks(model, 4, ["e"]);
    vi.advanceTimersByTime(GAP_WAIT_MS + 1);
    expect(root().querySelector(".podbook-gap").textContent).toBe("… 3 chunks missed");
    chunks(model, 5, ["f"]);
    expect(streamText()).toBe("a|ef");
    expect(root().dataset.chunks).toBe("6");
  });

  it("renders text chunks as text: strings and objects whose text is a string or a list", () => {
    const { model } = render();
    chunks(model, 0, [
      "plain ",
      { text: "object ", output_tokens: 1 },
      { input_tokens: 5, output_tokens: 3, text: ["to", "ken", "s"] },
    ]);
    expect(streamText()).toBe("plain object tokens");
    expect(root().querySelectorAll(".podbook-stream pre.podbook-text")).toHaveLength(1);
    expect(root().querySelector(".podbook-json")).toBeNull();
  });

  it("renders other chunks as collapsible JSON, filled when opened", () => {
    const { model } = render();
    chunks(model, 0, ["before ", { step: 1, loss: 0.25 }, [1, 2], 42, { text: 7 }, "after"]);
    const blocks = root().querySelectorAll(".podbook-stream details.podbook-json");
    expect(blocks).toHaveLength(4);
    expect(blocks[0].open).toBe(false);
    expect(blocks[0].querySelector("summary").textContent).toBe('{"step":1,"loss":0.25}');
    blocks[0].open = true;
    blocks[0].dispatchEvent(new Event("toggle"));
    expect(JSON.parse(blocks[0].querySelector("pre").textContent)).toEqual({ step: 1, loss: 0.25 });
    expect(blocks[0].querySelector("pre").textContent).toContain("\n");
    // Text after a JSON block starts a new <pre>; text order is kept.
    expect(streamText()).toBe("before |after");
  });

  it("appends text nodes: earlier chunks and the panel around them stay the same nodes", () => {
    const { model } = render();
    chunks(model, 0, ["one "]);
    const pre = root().querySelector(".podbook-stream pre");
    const first = pre.firstChild;
    const stream = streamEl();
    chunks(model, 1, ["two ", "three "]);
    model.set("rate", { tokensPerSecond: 12 });
    model.set("job", job({ executionTime: 500 }));
    expect(streamEl()).toBe(stream);
    expect(root().querySelector(".podbook-stream pre")).toBe(pre);
    expect(pre.firstChild).toBe(first);
    expect(pre.childNodes).toHaveLength(3);
    expect(pre.textContent).toBe("one two three ");
  });

  it(`keeps only the last ${STREAM_DOM_CAP} chunks in the DOM, with a hidden line`, () => {
    const { model } = render();
    const total = STREAM_DOM_CAP + 1000;
    for (let start = 0; start < total; start += 250) {
      chunks(
        model,
        start,
        Array.from({ length: 250 }, (_, k) => `c${start + k};`),
      );
    }
    const nodes = [...root().querySelectorAll(".podbook-stream pre.podbook-text")].flatMap((p) => [
      ...p.childNodes,
    ]);
    expect(nodes).toHaveLength(STREAM_DOM_CAP);
    expect(nodes[0].textContent).toBe("c1000;");
    expect(nodes.at(-1).textContent).toBe(`c${total - 1};`);
    expect(hiddenLine().textContent).toBe("… 1000 earlier chunks hidden");
    expect(root().dataset.chunks).toBe(String(total));
  });

  it("splits long text into blocks at line ends, so an append lays out one small block", () => {
    const { model } = render();
    const lines = Array.from({ length: 3 * TEXT_BLOCK_CHUNKS }, (_, k) =>
      k % 10 === 9 ? `w${k}\n` : `w${k} `,
    );
    for (let start = 0; start < lines.length; start += 7)
      chunks(model, start, lines.slice(start, start + 7));
    const blocks = [...root().querySelectorAll(".podbook-stream pre.podbook-text")];
    expect(blocks).toHaveLength(3);
    for (const block of blocks)
      expect(block.textContent.endsWith("\n") || block === blocks.at(-1)).toBe(true);
    expect(blocks.map((b) => b.textContent).join("")).toBe(lines.join(""));
    // Without line ends a block still ends at TEXT_BLOCK_MAX chunks.
    const words = Array.from({ length: TEXT_BLOCK_MAX + 5 }, (_, k) => `x${k} `);
    chunks(model, lines.length, words);
    const last = [...root().querySelectorAll(".podbook-stream pre.podbook-text")].slice(-2);
    expect(last[0].childNodes).toHaveLength(TEXT_BLOCK_MAX);
    expect(last[1].childNodes).toHaveLength(5);
  });

  it("trims JSON blocks and emptied text blocks too", () => {
    const { model } = render();
    chunks(model, 0, ["x", { n: 0 }, "y"]);
    chunks(
      model,
      3,
      Array.from({ length: STREAM_DOM_CAP }, (_, k) => ({ n: k + 1 })),
    );
    const body = root().querySelector(".podbook-stream-body");
    expect(body.querySelectorAll("pre.podbook-text")).toHaveLength(0);
    expect(body.querySelectorAll("details.podbook-json")).toHaveLength(STREAM_DOM_CAP);
    expect(body.firstElementChild.dataset.index).toBe("3");
    expect(hiddenLine().textContent).toBe("… 3 earlier chunks hidden");
  });
});

describe("job panel: auto-scroll", () => {
  // jsdom has no layout: give the stream a fixed viewport over a growing content height.
  function fakeScroller(el) {
    let top = 0;
    Object.defineProperty(el, "clientHeight", { configurable: true, get: () => 100 });
    Object.defineProperty(el, "scrollHeight", {
      configurable: true,
      get: () => 20 * el.querySelector(".podbook-stream-body").textContent.length,
    });
    Object.defineProperty(el, "scrollTop", {
      configurable: true,
      get: () => top,
      set: (v) => {
        top = Math.max(0, Math.min(v, el.scrollHeight - el.clientHeight));
      },
    });
    return el;
  }

  it("follows the end, stops when the user scrolls up, resumes from the follow button", () => {
    const { model } = render();
    const el = fakeScroller(streamEl());
    chunks(model, 0, ["0123456789"]);
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);
    el.dispatchEvent(new Event("scroll"));
    chunks(model, 1, ["abcdefghij"]);
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);

    el.scrollTop = 20; // the user scrolls up
    el.dispatchEvent(new Event("scroll"));
    const follow = root().querySelector(".podbook-follow");
    expect(follow.hidden).toBe(false);
    chunks(model, 2, ["klmnopqrst"]);
    expect(el.scrollTop).toBe(20);

    follow.click();
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);
    expect(follow.hidden).toBe(true);
    chunks(model, 3, ["uvwxyz"]);
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);
  });

  it("a wheel or key gesture upwards stops following before any scroll event", () => {
    const { model } = render();
    const el = fakeScroller(streamEl());
    chunks(model, 0, ["0123456789", "0123456789"]);
    el.dispatchEvent(new WheelEvent("wheel", { deltaY: -120 }));
    chunks(model, 2, ["more"]);
    const bottom = el.scrollHeight - el.clientHeight;
    expect(el.scrollTop).toBeLessThan(bottom);
    root().querySelector(".podbook-follow").click();
    el.dispatchEvent(new KeyboardEvent("keydown", { key: "PageUp" }));
    chunks(model, 3, ["again"]);
    expect(el.scrollTop).toBeLessThan(el.scrollHeight - el.clientHeight);
  });

  it("does not pull the view to the end while the user drags the scrollbar", () => {
    const { model } = render();
    const el = fakeScroller(streamEl());
    chunks(model, 0, ["0123456789"]);
    el.dispatchEvent(new Event("pointerdown"));
    const top = el.scrollTop;
    chunks(model, 1, ["abcdefghij"]);
    expect(el.scrollTop).toBe(top);
    document.dispatchEvent(new Event("pointerup"));
    chunks(model, 2, ["klm"]);
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);
  });

  it("scrolling back down to the end resumes following", () => {
    const { model } = render();
    const el = fakeScroller(streamEl());
    chunks(model, 0, ["0123456789", "0123456789"]);
    el.scrollTop = 0;
    el.dispatchEvent(new Event("scroll"));
    el.scrollTop = el.scrollHeight;
    el.dispatchEvent(new Event("scroll"));
    chunks(model, 2, ["more"]);
    expect(el.scrollTop).toBe(el.scrollHeight - el.clientHeight);
  });
});

describe("job panel: status, timings and rate", () => {
  it("shows the status badge, id, endpoint and timings", () => {
    const { model } = render({ job: { executionTime: 340 } });
    expect(root().dataset.status).toBe("IN_PROGRESS");
    expect(root().querySelector(".podbook-badge").textContent).toBe("IN_PROGRESS");
    expect(root().querySelector('[data-field="id"]').textContent).toBe("job-7f3a");
    expect(root().querySelector('[data-field="endpointId"]').textContent).toContain("stream-demo");
    expect(root().querySelector('dd[data-field="delayTime"]').textContent).toBe("1.23 s");
    expect(root().querySelector('dd[data-field="executionTime"]').textContent).toBe("340 ms");
    model.set("status", "COMPLETED");
    expect(root().dataset.status).toBe("COMPLETED");
    expect(root().querySelector(".podbook-badge").dataset.status).toBe("COMPLETED");
  });

  it("shows tokens/s, chunks/s and the seed's metrics from the rate trait", () => {
    const { model } = render();
    expect(root().querySelector("[data-metric]")).toBeNull();
    model.set("rate", {
      tokensPerSecond: 42.46,
      chunksPerSecond: 10,
      metrics: {
        avg_gen_throughput: 40.125,
        avg_prompt_throughput: 0,
        gpu_kv_cache_usage: 0.5,
        input_tokens: 12,
        output_tokens: 48,
        scenario: "stream",
      },
    });
    const metric = (k) =>
      root().querySelector(`[data-metric="${k}"] .podbook-metric-value`).textContent;
    expect(metric("tokensPerSecond")).toBe("42.5");
    expect(metric("chunksPerSecond")).toBe("10.0");
    expect(metric("avg_gen_throughput")).toBe("40.13");
    expect(metric("output_tokens")).toBe("48");
    expect(metric("scenario")).toBe("stream");
  });

  it("also accepts the seed's metrics flat in the rate trait", () => {
    const { model } = render();
    model.set("rate", { tokensPerSecond: 5, output_tokens: 7, stream_index: 3 });
    expect(root().querySelector('[data-metric="output_tokens"]').textContent).toContain("7");
    expect(root().querySelector('[data-metric="stream_index"]').textContent).toContain("3");
  });

  it("shows a progress update while running, labelled as such", () => {
    const { model } = render({ job: { output: { step: 3, of: 10 } } });
    const output = () => root().querySelector(".podbook-output");
    expect(output().dataset.output).toBe("progress");
    expect(output().querySelector(".podbook-label").textContent).toBe("Progress");
    model.set("job", job({ status: "COMPLETED", output: "done" }));
    model.set("status", "COMPLETED");
    expect(output().dataset.output).toBe("result");
    expect(output().querySelector("pre").textContent).toBe("done");
  });

  it("shows a final output when nothing was streamed", () => {
    render({ job: { status: "COMPLETED", output: { echo: [1, 2] } } });
    expect(root().querySelector(".podbook-output").textContent).toContain('"echo"');
    expect(root().querySelector(".podbook-waiting").hidden).toBe(true);
  });
});

describe("job panel: actions", () => {
  const cases = [
    ["IN_QUEUE", ["cancel"]],
    ["IN_PROGRESS", ["cancel"]],
    ["COMPLETED", []],
    ["FAILED", ["retry"]],
    ["TIMED_OUT", ["retry"]],
    ["CANCELLED", []],
  ];
  it.each(cases)("%s shows %j", (status, expected) => {
    render({ job: { status } });
    expect(actionNames()).toEqual(expected);
  });

  it("Cancel and Retry send {type: action}", () => {
    const { model } = render();
    button("cancel").click();
    model.set("status", "FAILED");
    button("retry").click();
    expect(model.sent.filter((m) => m.type === "action")).toEqual([
      { type: "action", action: "cancel" },
      { type: "action", action: "retry" },
    ]);
  });

  it("disables the button with a spinner while its action is in flight", () => {
    const { model } = render();
    model.set("busy", "cancel");
    expect(button("cancel").disabled).toBe(true);
    expect(button("cancel").textContent).toContain("Cancelling");
    expect(button("cancel").querySelector(".podbook-spinner")).not.toBeNull();
    button("cancel").click();
    expect(model.sent.filter((m) => m.type === "action")).toEqual([]);
  });
});

describe("job panel: errors", () => {
  it("shows the handler's error with its traceback folded", () => {
    render({
      job: {
        status: "FAILED",
        error: {
          type: "ValueError",
          message: "prompt must not be empty",
          traceback:
            'Traceback (most recent call last):\n  File "handler.py", line 4\nValueError: prompt must not be empty',
        },
      },
    });
    const error = root().querySelector('.podbook-error[data-error="job"]');
    expect(error.querySelector(".podbook-error-line").textContent).toBe(
      "ValueError: prompt must not be empty",
    );
    const details = error.querySelector("details");
    expect(details.open).toBe(false);
    expect(details.querySelector("summary").textContent).toBe("Traceback");
    expect(details.querySelector("pre").textContent).toContain('File "handler.py", line 4');
  });

  it("shows an error given as a plain string, without a traceback block", () => {
    render({ job: { status: "FAILED", error: "worker went away" } });
    const error = root().querySelector('.podbook-error[data-error="job"]');
    expect(error.textContent).toBe("worker went away");
    expect(error.querySelector("details")).toBeNull();
  });

  it("shows the panel's error line and the reconnecting note", () => {
    const { model } = render();
    model.set("error", "404 Not Found: job job-7f3a expired");
    model.set("connection", "reconnecting");
    expect(root().querySelector(".podbook-error").textContent).toBe(
      "404 Not Found: job job-7f3a expired",
    );
    expect(root().querySelector(".podbook-reconnecting").textContent).toBe("reconnecting…");
  });
});

describe("job panel: lifecycle", () => {
  it("cleanup unsubscribes from every trait and message", () => {
    const { model, cleanup } = render();
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(mounted.el.querySelector(".podbook-job")).toBeNull();
    chunks(model, 0, ["ignored"]);
  });
});

describe("job helpers", () => {
  it("extracts text chunks", () => {
    expect(chunkText("a")).toBe("a");
    expect(chunkText({ text: "b" })).toBe("b");
    expect(chunkText({ text: ["c", "d"] })).toBe("cd");
    expect(chunkText({ text: ["c", 1] })).toBeNull();
    expect(chunkText({ value: "x" })).toBeNull();
    expect(chunkText(["a"])).toBeNull();
    expect(chunkText(null)).toBeNull();
  });

  it("formats durations and metrics", () => {
    expect(formatDuration(340)).toBe("340 ms");
    expect(formatDuration(1234)).toBe("1.23 s");
    expect(formatDuration(125000)).toBe("2m 05s");
    expect(formatDuration(null)).toBe("—");
    expect(formatMetric(3)).toBe("3");
    expect(formatMetric(0.125)).toBe("0.13");
    expect(formatMetric("x")).toBe("x");
  });
});

describe("job panel: retry starts the stream over", () => {
  it("empties the stream when the kernel sets chunks back to 0", () => {
    const { model } = render({ job: { status: "FAILED" } });
    chunks(model, 0, ["first try "]);
    model.set("chunks", 1);
    expect(streamText()).toBe("first try ");
    model.set("tail", []);
    model.set("chunks", 0);
    model.set("status", "IN_QUEUE");
    expect(root().dataset.chunks).toBe("0");
    expect(root().querySelector(".podbook-stream-wrap").hidden).toBe(true);
    chunks(model, 0, ["second ", "try"]);
    expect(streamText()).toBe("second try");
  });
});
