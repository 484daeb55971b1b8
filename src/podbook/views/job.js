// podbook job panel: the anywidget view of one serverless job (JobPanel, see
// docs/architecture.md, "Serverless jobs").
//
// Traits: `job` (id, endpointId, status, delayTime, executionTime, error), `status`, `tail`
// (the last ≤ 200 chunks as `{i, output}`), `chunks`, `rate` (tokensPerSecond,
// chunksPerSecond, metrics), `error`, `busy`, `connection`. The stream itself arrives as
// custom messages `{type: "chunks", start, items}`; on render the view draws `tail`, then
// sends `{type: "ready", have}` (the index after the last chunk it holds) so the kernel
// sends what it missed. Buttons send `{type: "action", action: "cancel" | "retry"}`.
//
// The stream is never re-rendered: each chunk becomes one text node (text chunks, appended
// to a `<pre>`) or one collapsible JSON block, appended in index order; duplicates are
// dropped by index; a batch that arrives ahead of a gap makes the view ask again (`ready`)
// and waits briefly for the gap to be filled, then goes on under a "… N chunks missed"
// marker. Missed chunks are still taken in place whenever they come (a late `ready` answer:
// the kernel's shell may be busy with the next cell; a later batch; the `tail` trait), and
// the marker goes once filled. Only chunks the kernel no longer holds (before its tail) are
// given up for good. Only the last STREAM_DOM_CAP chunks stay in the DOM, under a
// "… N earlier chunks hidden" line. A streamed job's result is not repeated: nothing when it
// is the list of the chunks shown, else a closed "Output (N items)". `chunks` set to 0 (a retried job streams again) empties the stream.

import { h, statusBadge, formatUptime, notices, onTraits, fact, patchChildren } from "./common.js";

/** How many chunks stay in the DOM; older ones are removed and counted in a "hidden" line. */
export const STREAM_DOM_CAP = 5000;

/** Text chunks per `<pre>` block: a new block starts at a line end past the first, always at
 * the second (see StreamArea.blockFull). */
export const TEXT_BLOCK_CHUNKS = 200;
export const TEXT_BLOCK_MAX = 1000;

/** How long a batch that arrived ahead of a gap waits for the missing chunks (ms). */
export const GAP_WAIT_MS = 400;

/** Job statuses: the ones that allow Cancel, and the ones that allow Retry. */
export const CANCELLABLE = ["IN_QUEUE", "IN_PROGRESS"];
export const RETRYABLE = ["FAILED", "TIMED_OUT"];

/** The seed's stream metrics, in display order, with their labels. */
const SEED_METRICS = [
  ["avg_gen_throughput", "gen tok/s"],
  ["avg_prompt_throughput", "prompt tok/s"],
  ["input_tokens", "input tokens"],
  ["output_tokens", "output tokens"],
  ["gpu_kv_cache_usage", "GPU KV cache"],
  ["cpu_kv_cache_usage", "CPU KV cache"],
  ["running", "running"],
  ["pending", "pending"],
  ["swapped", "swapped"],
  ["stream_index", "stream index"],
  ["scenario", "scenario"],
];

const ACTIONS = {
  cancel: ["Cancel", "Cancelling…"],
  retry: ["Retry", "Retrying…"],
};

/**
 * The text of a text chunk, or null for any other chunk: a string, or an object whose `text`
 * is a string or a list of strings (the seed's sample shape), joined as they come.
 */
export function chunkText(output) {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && !Array.isArray(output)) {
    const { text } = output;
    if (typeof text === "string") return text;
    if (Array.isArray(text) && text.every((t) => typeof t === "string")) return text.join("");
  }
  return null;
}

/** `340 ms`, `1.25 s`, `2m 05s` for a duration in milliseconds; `—` when unknown. */
export function formatDuration(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(2)} s`;
  return formatUptime(ms / 1000);
}

/** A metric value for display: integers as they are, other numbers with two decimals. */
export function formatMetric(value) {
  if (typeof value !== "number") return String(value ?? "—");
  if (!Number.isFinite(value)) return "—";
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function jsonPreview(output) {
  let text;
  try {
    text = JSON.stringify(output);
  } catch {
    text = String(output);
  }
  if (text === undefined) text = String(output);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** One non-text chunk: a `<details>` whose pretty JSON is built the first time it opens. */
function jsonChunk(output, index) {
  const pre = h("pre", { class: "podbook-json-body" });
  const details = h(
    "details",
    { class: "podbook-json", "data-index": index },
    h("summary", {}, h("code", { text: jsonPreview(output) })),
    pre,
  );
  details.addEventListener("toggle", () => {
    if (details.open && !pre.firstChild) pre.textContent = JSON.stringify(output, null, 2);
  });
  return details;
}

/** Merges two adjacent text blocks (`<pre class="podbook-text">`): `b`'s text goes into `a`. */
function mergeTextBlocks(a, b) {
  const isText = (n) => n && n.tagName === "PRE" && n.classList.contains("podbook-text");
  if (!isText(a) || !isText(b) || a.nextSibling !== b) return;
  a.append(...b.childNodes);
  b.remove();
}

/** True when two chunk outputs are the same JSON. */
function sameJson(a, b) {
  if (a === b) return true;
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/**
 * The stream area: appends chunks in index order, drops duplicates, holds batches that
 * arrive ahead of a gap for GAP_WAIT_MS, caps the DOM and follows the end unless the user
 * scrolled up. `onChange` runs after every change of the count of chunks held; `onGap(have)`
 * when a gap opens (the view then asks the kernel again, as on render).
 */
class StreamArea {
  constructor(onChange, onGap) {
    this.onChange = onChange;
    this.onGap = onGap;
    this.next = 0; // index after the last chunk held: everything below is in or was in the DOM
    this.floor = 0; // chunks before this index are gone for good (trimmed, or not in the tail)
    this.pending = new Map(); // start index -> outputs, for batches ahead of a gap
    this.holes = []; // {a, b, node, entry}: chunks a..b-1 missed but still taken, by index
    // {index, node, output} per chunk in the DOM, in DOM order (gap markers: index -1, hole)
    this.entries = [];
    this.head = 0; // first live entry in `entries`
    this.inDom = 0; // chunks currently in the DOM
    this.blockChunks = 0; // text chunks in the last <pre> block
    this.blockEndsLine = false; // the last text chunk ended with a newline
    this.gapTimer = null;
    this.stick = true;
    this.dragging = false;
    this.autoTop = 0;

    this.hiddenLine = h("div", { class: "podbook-hidden", hidden: true });
    this.body = h("div", { class: "podbook-stream-body" });
    this.el = h(
      "div",
      {
        class: "podbook-stream",
        tabindex: "0",
        "aria-label": "job output stream",
        "aria-live": "off",
      },
      this.hiddenLine,
      this.body,
    );
    this.followButton = h("button", {
      type: "button",
      class: "podbook-follow",
      hidden: true,
      text: "↓ Follow output",
      onclick: () => {
        this.stick = true;
        this.scrollToEnd();
        this.followButton.hidden = true;
      },
    });
    this.el.addEventListener("scroll", () => this.onScroll());
    // A scroll event comes after the fact, possibly after the next append scrolled back to
    // the end; the user's own gestures upwards stop following at once.
    this.el.addEventListener("wheel", (event) => {
      if (event.deltaY < 0) this.unstick();
    });
    this.el.addEventListener("keydown", (event) => {
      if (["ArrowUp", "PageUp", "Home"].includes(event.key)) this.unstick();
    });
    this.el.addEventListener("pointerdown", () => {
      this.dragging = true; // on the scrollbar, say: do not pull the view away meanwhile
    });
    this.el.ownerDocument.addEventListener("pointerup", this.onPointerUp);
    // Rendered while detached or hidden, the area has no height yet: scroll to the end once
    // it gets one (and whenever it resizes) as long as the view follows the output.
    this.resizeObserver =
      typeof ResizeObserver === "function"
        ? new ResizeObserver(() => {
            if (this.stick) this.scrollToEnd();
          })
        : null;
    this.resizeObserver?.observe(this.el);
  }

  /** True when the user is at (or within a few pixels of) the end of the stream. */
  atEnd() {
    return this.el.scrollHeight - this.el.scrollTop - this.el.clientHeight <= 4;
  }

  onPointerUp = () => {
    if (!this.dragging) return;
    this.dragging = false;
    this.onScroll();
  };

  unstick() {
    if (this.el.scrollTop <= 0 || this.el.scrollHeight <= this.el.clientHeight) return;
    this.stick = false;
    this.followButton.hidden = false;
  }

  onScroll() {
    // Our own scrolls land at `autoTop`; only a move above it is the user scrolling up.
    if (this.atEnd()) this.stick = true;
    else if (this.el.scrollTop < this.autoTop - 4) this.stick = false;
    this.followButton.hidden = this.stick;
  }

  scrollToEnd() {
    this.el.scrollTop = this.el.scrollHeight;
    this.autoTop = this.el.scrollTop;
  }

  /** The index a `ready` asks from: the first chunk still missing. */
  have() {
    return this.holes.length ? this.holes[0].a : this.next;
  }

  /** Takes a batch of consecutive outputs starting at index `start`. */
  ingest(start, items) {
    if (!Array.isArray(items) || !items.length) return;
    const first = Number.isInteger(start) && start >= 0 ? start : this.next;
    const end = first + items.length;
    if (end <= this.floor) return; // the kernel no longer holds these, nor does the view
    // Chunks below `next` are duplicates, except those that fill a gap: always taken.
    if (first < this.next && this.holes.length) {
      this.fillHoles(first, items.slice(0, Math.min(end, this.next) - first));
    }
    if (end <= this.next) return;
    if (first > this.next) {
      const held = this.pending.get(first);
      if (!held || held.length < items.length) this.pending.set(first, items);
      this.armGapTimer();
      return;
    }
    this.append(this.next, items.slice(this.next - first));
    this.drainPending();
  }

  /** Takes the `tail` trait: `[{i, output}]`; chunks before its first are gone for good. */
  ingestTail(tail) {
    const entries = (Array.isArray(tail) ? tail : [])
      .filter((c) => c && Number.isInteger(c.i))
      .sort((a, b) => a.i - b.i);
    if (!entries.length) return;
    this.forgetBefore(entries[0].i);
    let runStart = entries[0].i;
    let run = [];
    for (const entry of entries) {
      if (entry.i !== runStart + run.length) {
        this.ingest(runStart, run);
        runStart = entry.i;
        run = [];
      }
      run.push(entry.output);
    }
    this.ingest(runStart, run);
  }

  /**
   * The kernel no longer holds the chunks before `index`: what the view lacks of them can
   * never come. Lacking before any chunk shown, they count as hidden; between chunks shown,
   * they stay marked as missed (no longer waited for).
   */
  forgetBefore(index) {
    if (!(index > this.floor)) return;
    for (const hole of [...this.holes]) {
      if (hole.a >= index) continue;
      const goneEnd = Math.min(hole.b, index);
      if (this.isLeading(hole)) {
        this.floor = Math.max(this.floor, goneEnd);
        this.resizeHole(hole, goneEnd, hole.b);
      } else if (hole.b <= index) {
        this.holes.splice(this.holes.indexOf(hole), 1); // missed for good: the marker stays
      } else {
        this.insertBefore(hole.node, [this.marker(hole.a, index, false)]);
        this.resizeHole(hole, index, hole.b);
      }
    }
    const firstHeld = Math.min(index, ...this.pending.keys());
    if (firstHeld > this.next) {
      if (this.inDom === 0 && !this.holes.length) {
        this.floor = firstHeld;
        this.next = firstHeld;
      } else {
        this.markGapTo(firstHeld, false);
      }
      this.drainPending();
    }
    this.updateHiddenLine();
    this.onChange();
  }

  /** On a new gap: ask the kernel for what is missing, and stop waiting after GAP_WAIT_MS. */
  armGapTimer() {
    if (this.gapTimer !== null) return;
    this.onGap(this.have());
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      if (this.pending.size) this.skipTo(Math.min(...this.pending.keys()));
    }, GAP_WAIT_MS);
  }

  /**
   * Goes on from `index` without the chunks before it: they are marked as missed, and still
   * taken (in place) if they arrive later, from a late `ready` answer, a batch or the tail.
   */
  skipTo(index) {
    if (!(index > this.next)) return;
    this.markGapTo(index, true);
    this.drainPending();
    this.updateHiddenLine();
    this.onChange();
  }

  /** Shows a gap marker for the chunks from `next` to `index - 1`, and goes on from `index`. */
  markGapTo(index, open) {
    const marker = this.marker(this.next, index, open);
    this.body.append(marker.node);
    this.entries.push(marker);
    this.next = index;
  }

  /** A gap marker entry for chunks `a..b-1`; `open` ones are still waited for (in `holes`). */
  marker(a, b, open) {
    const node = h("div", { class: "podbook-gap" });
    const entry = { index: -1, node, hole: null };
    const hole = { a, b, node, entry };
    entry.hole = hole;
    this.setMarkerText(hole);
    if (open) {
      this.holes.push(hole);
      this.holes.sort((x, y) => x.a - y.a);
    }
    return entry;
  }

  setMarkerText(hole) {
    const missed = hole.b - hole.a;
    hole.node.textContent = `… ${missed} chunk${missed === 1 ? "" : "s"} missed`;
  }

  /** Sets a hole to `a..b-1`; an empty one is removed with its marker. */
  resizeHole(hole, a, b) {
    hole.a = a;
    hole.b = b;
    if (a < b) {
      this.setMarkerText(hole);
      return;
    }
    const at = this.holes.indexOf(hole);
    if (at !== -1) this.holes.splice(at, 1);
    const k = this.entries.indexOf(hole.entry, this.head);
    if (k !== -1) this.entries.splice(k, 1);
    const before = hole.node.previousSibling;
    const after = hole.node.nextSibling;
    hole.node.remove();
    mergeTextBlocks(before, after);
    this.blockChunks = this.lastBlockChunks();
  }

  /** True when no chunk is shown before the hole's marker. */
  isLeading(hole) {
    for (let k = this.head; k < this.entries.length; k += 1) {
      const entry = this.entries[k];
      if (entry === hole.entry) return true;
      if (entry.index !== -1) return false;
    }
    return true;
  }

  /** Puts the late outputs `first, first+1, ...` into the holes they fill. */
  fillHoles(first, outputs) {
    const end = first + outputs.length;
    let filled = 0;
    for (const hole of [...this.holes]) {
      const s = Math.max(hole.a, first);
      const e = Math.min(hole.b, end);
      if (s >= e) continue;
      const before = [];
      if (s > hole.a) before.push(this.marker(hole.a, s, true));
      const made = this.buildEntries(s, outputs.slice(s - first, e - first));
      this.insertBefore(hole.node, [...before, ...made]);
      this.inDom += made.length;
      filled += made.length;
      this.resizeHole(hole, e, hole.b);
    }
    if (!filled) return;
    this.trim();
    this.updateHiddenLine();
    this.onChange();
  }

  /** Inserts entries (chunks and markers) before the marker `node`, in the DOM and in order. */
  insertBefore(node, entries) {
    const fragment = document.createDocumentFragment();
    let pre = null;
    for (const entry of entries) {
      if (entry.node.nodeType === Node.TEXT_NODE) {
        if (!pre) {
          pre = h("pre", { class: "podbook-text" });
          fragment.append(pre);
        }
        pre.append(entry.node);
      } else {
        pre = null;
        fragment.append(entry.node);
      }
    }
    const previous = node.previousSibling;
    const firstNew = fragment.firstChild;
    node.before(fragment);
    mergeTextBlocks(previous, firstNew);
    let k = this.head;
    while (k < this.entries.length && this.entries[k].node !== node) k += 1;
    this.entries.splice(k, 0, ...entries);
  }

  /** Chunk entries `{index, node, output}` for outputs `start, ...`, not yet in the DOM. */
  buildEntries(start, outputs) {
    return outputs.map((output, k) => {
      const index = start + k;
      const text = chunkText(output);
      const node = text !== null ? document.createTextNode(text) : jsonChunk(output, index);
      return { index, node, output };
    });
  }

  /** Text chunks in the last `<pre>` (it goes on taking text). */
  lastBlockChunks() {
    const last = this.body.lastElementChild;
    const open = last && last.tagName === "PRE" && last.classList.contains("podbook-text");
    return open ? last.childNodes.length : 0;
  }

  drainPending() {
    for (;;) {
      let progressed = false;
      for (const [start, items] of this.pending) {
        if (start > this.next) continue;
        this.pending.delete(start);
        if (start + items.length > this.next) {
          this.append(this.next, items.slice(this.next - start));
        }
        progressed = true;
      }
      if (!progressed) break;
    }
    if (!this.pending.size && this.gapTimer !== null) {
      clearTimeout(this.gapTimer);
      this.gapTimer = null;
    }
  }

  /**
   * True when `output` is a list of exactly the chunks streamed, all shown here: the
   * aggregate a streaming worker returns, nothing new to show.
   */
  matches(output) {
    if (!Array.isArray(output) || output.length !== this.next) return false;
    if (this.floor > 0 || this.inDom !== this.next) return false;
    for (let k = this.head; k < this.entries.length; k += 1) {
      const { index, output: shown } = this.entries[k];
      if (index === -1) return false;
      if (!sameJson(shown, output[index])) return false;
    }
    return true;
  }

  /** Appends outputs `start, start+1, ...` (start === this.next) with one DOM insertion per run. */
  append(start, outputs) {
    if (!outputs.length) return;
    const fragment = document.createDocumentFragment();
    let pre = this.openPre();
    let textRun = null; // fragment of text nodes bound for `pre`
    const flushText = () => {
      if (!textRun) return;
      if (!pre) {
        pre = h("pre", { class: "podbook-text" });
        fragment.append(pre);
      }
      pre.append(textRun);
      textRun = null;
    };
    outputs.forEach((output, k) => {
      const index = start + k;
      const text = chunkText(output);
      if (text !== null) {
        if (this.blockFull()) {
          flushText();
          pre = null;
          this.blockChunks = 0;
        }
        const node = document.createTextNode(text);
        textRun = textRun || document.createDocumentFragment();
        textRun.append(node);
        this.blockChunks += 1;
        this.blockEndsLine = text.endsWith("\n");
        this.entries.push({ index, node, output });
      } else {
        flushText();
        pre = null;
        this.blockChunks = 0;
        const node = jsonChunk(output, index);
        fragment.append(node);
        this.entries.push({ index, node, output });
      }
    });
    flushText();
    this.body.append(fragment);
    this.inDom += outputs.length;
    this.next = start + outputs.length;
    this.trim();
    this.updateHiddenLine();
    this.onChange(); // may reveal the stream area: scroll after it has a height
    if (this.stick && !this.dragging) this.scrollToEnd();
  }

  /**
   * True when text should go on in a new `<pre>`: a browser lays out a block's text as a
   * whole, so one ever-growing block makes every append cost more. A block ends at a line
   * end once it holds TEXT_BLOCK_CHUNKS chunks (invisible: the next block starts a new line
   * anyway), or at TEXT_BLOCK_MAX chunks whatever the text.
   */
  blockFull() {
    return (
      (this.blockChunks >= TEXT_BLOCK_CHUNKS && this.blockEndsLine) ||
      this.blockChunks >= TEXT_BLOCK_MAX
    );
  }

  /** The `<pre>` that text chunks go on into: the last block when it is one. */
  openPre() {
    const last = this.body.lastElementChild;
    const open = last && last.tagName === "PRE" && last.classList.contains("podbook-text");
    if (!open) this.blockChunks = 0;
    return open ? last : null;
  }

  /** Removes the oldest chunks beyond STREAM_DOM_CAP (and gap markers right after them). */
  trim() {
    let trimmed = false;
    while (
      this.inDom > STREAM_DOM_CAP ||
      (trimmed && this.head < this.entries.length && this.entries[this.head].index === -1)
    ) {
      const { index, node, hole } = this.entries[this.head];
      this.head += 1;
      const parent = node.parentNode;
      node.remove();
      if (parent && parent !== this.body && !parent.firstChild) parent.remove();
      if (index !== -1) {
        this.inDom -= 1;
        this.floor = Math.max(this.floor, index + 1);
        trimmed = true;
      } else {
        const at = this.holes.indexOf(hole);
        if (at !== -1) this.holes.splice(at, 1);
        this.floor = Math.max(this.floor, hole.b);
      }
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Chunks before the oldest one shown that can never come: trimmed, or no longer held. */
  hiddenCount() {
    return this.floor;
  }

  updateHiddenLine() {
    const hidden = this.hiddenCount();
    this.hiddenLine.hidden = hidden === 0;
    this.hiddenLine.textContent = hidden
      ? `… ${hidden} earlier chunk${hidden === 1 ? "" : "s"} hidden`
      : "";
  }

  /** Starts over with an empty stream (a retried job streams again from index 0). */
  reset() {
    clearTimeout(this.gapTimer);
    this.gapTimer = null;
    this.pending.clear();
    this.holes = [];
    this.body.replaceChildren();
    this.entries = [];
    this.head = 0;
    this.inDom = 0;
    this.floor = 0;
    this.next = 0;
    this.stick = true;
    this.followButton.hidden = true;
    this.updateHiddenLine();
    this.onChange();
  }

  dispose() {
    this.el.ownerDocument.removeEventListener("pointerup", this.onPointerUp);
    this.resizeObserver?.disconnect();
    clearTimeout(this.gapTimer);
    this.gapTimer = null;
  }
}

function header(job, status) {
  return h(
    "div",
    { class: "podbook-header" },
    statusBadge(status),
    h("span", { class: "podbook-name", text: "Job" }),
    h("code", { class: "podbook-id", "data-field": "id", text: job.id || "" }),
    job.endpointId
      ? h(
          "span",
          { class: "podbook-endpoint", "data-field": "endpointId", title: "endpoint" },
          "on ",
          h("code", { text: job.endpointId }),
        )
      : null,
  );
}

function timings(job) {
  return h(
    "dl",
    { class: "podbook-facts podbook-timings" },
    fact("Delay", formatDuration(job.delayTime), {
      "data-field": "delayTime",
      title: "time in the queue",
    }),
    fact("Execution", formatDuration(job.executionTime), {
      "data-field": "executionTime",
      title: "time on a worker",
    }),
  );
}

/** The seed metrics: `rate.metrics`, or (also accepted) seed fields placed in `rate` itself. */
function seedMetrics(rate) {
  const nested = rate.metrics && typeof rate.metrics === "object" ? rate.metrics : {};
  const flat = Object.fromEntries(
    Object.entries(rate).filter(
      ([k]) => !["metrics", "tokensPerSecond", "chunksPerSecond"].includes(k),
    ),
  );
  return { ...flat, ...nested };
}

function metricItem(key, label, value) {
  return h(
    "span",
    { class: "podbook-metric", "data-metric": key },
    h("span", { class: "podbook-metric-value", text: value }),
    h("span", { class: "podbook-metric-label", text: label }),
  );
}

function metricsSection(rate) {
  const items = [];
  if (typeof rate.tokensPerSecond === "number") {
    items.push(metricItem("tokensPerSecond", "tok/s", rate.tokensPerSecond.toFixed(1)));
  }
  if (typeof rate.chunksPerSecond === "number") {
    items.push(metricItem("chunksPerSecond", "chunks/s", rate.chunksPerSecond.toFixed(1)));
  }
  const metrics = seedMetrics(rate);
  const known = new Set(SEED_METRICS.map(([k]) => k));
  for (const [key, label] of SEED_METRICS) {
    if (metrics[key] !== undefined && metrics[key] !== null) {
      items.push(metricItem(key, label, formatMetric(metrics[key])));
    }
  }
  for (const [key, value] of Object.entries(metrics)) {
    if (!known.has(key) && (typeof value === "number" || typeof value === "string")) {
      items.push(metricItem(key, key, formatMetric(value)));
    }
  }
  return items.length ? h("div", { class: "podbook-section podbook-metrics" }, items) : null;
}

/** The handler's error: `{type, message, traceback}` (or a plain string), traceback folded. */
function jobError(error) {
  if (!error) return null;
  const e = typeof error === "object" ? error : { message: String(error) };
  const line = [e.type, e.message].filter(Boolean).join(": ") || "The job failed.";
  return h(
    "div",
    { class: "podbook-error podbook-job-error", role: "alert", "data-error": "job" },
    h("div", { class: "podbook-error-line", text: line }),
    e.traceback
      ? h(
          "details",
          { class: "podbook-traceback" },
          h("summary", { text: "Traceback" }),
          h("pre", { text: String(e.traceback) }),
        )
      : null,
  );
}

/**
 * The job's `output`: its result once it ended, or the progress update the handler sent
 * while IN_PROGRESS. When chunks were streamed, the result is not repeated: nothing when it
 * is the list of the chunks shown (a worker's aggregated stream), else a closed `<details>`.
 */
function finalOutput(job, status, stream, folded) {
  if (job.output === undefined || job.output === null) return null;
  const progress = CANCELLABLE.includes(status);
  if (stream.next > 0) {
    if (progress || stream.matches(job.output)) return null;
    return foldedOutput(job.output, folded);
  }
  const text = chunkText(job.output);
  return h(
    "div",
    { class: "podbook-section podbook-output", "data-output": progress ? "progress" : "result" },
    h("span", { class: "podbook-label", text: progress ? "Progress" : "Output" }),
    text !== null
      ? h("pre", { class: "podbook-text", text })
      : h("pre", { class: "podbook-json-body", text: JSON.stringify(job.output, null, 2) }),
  );
}

/** The result of a streamed job, folded: "Output (N items)", opened by the user only. */
function foldedOutput(output, folded) {
  if (folded.output !== output) {
    const text = chunkText(output);
    folded.output = output;
    folded.text = text !== null ? text : JSON.stringify(output, null, 2);
    folded.open = false;
  }
  const count = Array.isArray(output) ? output.length : null;
  const details = h(
    "details",
    {
      class: "podbook-section podbook-output",
      "data-output": "aggregate",
      open: folded.open,
    },
    h("summary", {
      class: "podbook-label",
      text: count === null ? "Output" : `Output (${count} item${count === 1 ? "" : "s"})`,
    }),
    h("pre", { class: "podbook-json-body", text: folded.text }),
  );
  details.addEventListener("toggle", () => {
    folded.open = details.open;
  });
  return details;
}

function actionsSection(model, status) {
  const busy = model.get("busy") || "";
  const names = [];
  if (CANCELLABLE.includes(status)) names.push("cancel");
  if (RETRYABLE.includes(status)) names.push("retry");
  if (!names.length) return null;
  return h(
    "div",
    { class: "podbook-actions" },
    names.map((action) => {
      const [label, busyLabel] = ACTIONS[action];
      const inFlight = busy === action;
      return h(
        "button",
        {
          type: "button",
          class: `podbook-action${action === "cancel" ? " podbook-danger" : ""}`,
          "data-action": action,
          disabled: Boolean(busy),
          "aria-busy": inFlight ? "true" : null,
          onclick: () => {
            if (!model.get("busy")) model.send({ type: "action", action });
          },
        },
        inFlight ? h("span", { class: "podbook-spinner", "aria-hidden": "true" }) : null,
        inFlight ? busyLabel : label,
      );
    }),
  );
}

/** Renders the job panel into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-job" });
  const top = h("div", { class: "podbook-job-top" });
  const bottom = h("div", { class: "podbook-job-bottom" });
  const waiting = h("div", { class: "podbook-empty podbook-waiting", text: "Waiting for output…" });
  const folded = { output: undefined, text: "", open: false };
  const stream = new StreamArea(
    () => {
      root.setAttribute("data-chunks", String(stream.next));
      renderBottom();
      showStream();
    },
    (have) => model.send({ type: "ready", have }),
  );
  const streamWrap = h(
    "div",
    { class: "podbook-section podbook-stream-wrap" },
    stream.el,
    stream.followButton,
  );
  root.append(top, waiting, streamWrap, bottom);
  el.append(root);

  const status = () => model.get("status") || (model.get("job") || {}).status || "";

  function showStream() {
    const any = stream.next > 0;
    streamWrap.hidden = !any;
    waiting.hidden = any || !CANCELLABLE.includes(status());
  }

  function rerender() {
    const job = model.get("job") || {};
    const current = status();
    root.setAttribute("data-status", current);
    root.setAttribute("data-job-id", job.id || "");
    root.setAttribute("data-chunks", String(stream.next));
    root.setAttribute("aria-busy", model.get("busy") ? "true" : "false");
    patchChildren(
      top,
      [
        header(job, current),
        ...notices(model),
        timings(job),
        metricsSection(model.get("rate") || {}),
        jobError(job.error),
      ].filter(Boolean),
    );
    renderBottom();
    showStream();
  }

  function renderBottom() {
    const job = model.get("job") || {};
    patchChildren(
      bottom,
      [finalOutput(job, status(), stream, folded), actionsSection(model, status())].filter(
        Boolean,
      ),
    );
  }

  function onMessage(message) {
    if (message && message.type === "chunks") stream.ingest(message.start, message.items);
  }

  const onTail = () => stream.ingestTail(model.get("tail"));
  // The kernel sets `chunks` to 0 when the job starts streaming again (after a retry).
  const onCount = () => {
    if (model.get("chunks") === 0 && stream.next > 0) stream.reset();
  };
  const unsubscribe = onTraits(
    model,
    ["job", "status", "rate", "error", "busy", "connection"],
    rerender,
  );
  const unsubscribeTail = onTraits(model, ["tail"], onTail);
  const unsubscribeCount = onTraits(model, ["chunks"], onCount);
  model.on("msg:custom", onMessage);

  rerender();
  stream.ingestTail(model.get("tail"));
  model.send({ type: "ready", have: stream.have() });

  return () => {
    unsubscribe();
    unsubscribeTail();
    unsubscribeCount();
    model.off("msg:custom", onMessage);
    stream.dispose();
    root.remove();
  };
}

export default { render };
