// podbook chat panel: the anywidget view of one %%chat turn (ChatPanel, see
// podbook/notebook/chat/panel.py).
//
// Traits: `endpoint`, `prompt` (the user's message), `status` (WAITING, STREAMING, DONE,
// STOPPED, FAILED), `pieces`, `tail` (the last ≤ 200 pieces as `{i, output}`), `reply` (the
// whole reply, set once it has ended), `stats` (ttft, tokensPerSecond, tokens, finishReason,
// model, jobId), `busy`, `error`, `connection`. The reply arrives as custom messages
// `{type: "chunks", start, items}` (items are text pieces) and is shown as plain text while it
// streams; once it has ended the `reply` trait is rendered as markdown by the small renderer
// below, which builds DOM nodes only (never innerHTML), so nothing in a reply can inject markup,
// and allows only http(s) and mailto links. On render the view draws `tail` and sends
// `{type: "ready", have}` so the kernel sends what it missed. Stop sends `{type: "stop"}`.

import { h, notices, onTraits, patchChildren, copyButton } from "./common.js";

/** Statuses of a turn: while these, the reply is on its way and Stop is offered. */
export const ACTIVE = ["WAITING", "STREAMING"];
export const ENDED = ["DONE", "STOPPED", "FAILED"];

/** `250 ms`, `1.25 s`; `—` when unknown. */
export function formatSeconds(seconds) {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) return "—";
  return seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`;
}

/** The link target a reply may use: http(s) and mailto URLs only, else null. */
export function safeHref(url) {
  const text = String(url ?? "").trim();
  return /^(https?:\/\/|mailto:)/i.test(text) ? text : null;
}

// ---------------------------------------------------------------------------- markdown

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const ESCAPABLE = /[\\`*_[\]()#+\-.!~>|{}]/;

function startsBlock(line) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    BULLET.test(line) ||
    NUMBERED.test(line)
  );
}

/** The index of the `close` that ends a span opened at `from` (not escaped), or -1. */
function findClose(text, close, from) {
  for (let j = from; j <= text.length - close.length; j += 1) {
    if (text[j] === "\\") {
      j += 1;
      continue;
    }
    if (text.startsWith(close, j)) return j;
  }
  return -1;
}

/** A link at `i` (`[label](url)`): `{label, url, end}` or null. */
function linkAt(text, i) {
  const closeLabel = findClose(text, "]", i + 1);
  if (closeLabel === -1 || text[closeLabel + 1] !== "(") return null;
  const closeUrl = text.indexOf(")", closeLabel + 2);
  if (closeUrl === -1) return null;
  return {
    label: text.slice(i + 1, closeLabel),
    url: text.slice(closeLabel + 2, closeUrl).trim().split(/\s+/)[0] || "",
    end: closeUrl + 1,
  };
}

/** Inline markdown (code, strong, emphasis, strike, links, line breaks) as DOM nodes. */
export function renderInline(text) {
  const nodes = [];
  let plain = "";
  const flush = () => {
    if (plain) nodes.push(document.createTextNode(plain));
    plain = "";
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length && ESCAPABLE.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (c === "\n") {
      flush();
      nodes.push(h("br"));
      i += 1;
      continue;
    }
    if (c === "`") {
      const ticks = text.slice(i).match(/^`+/)[0];
      const end = text.indexOf(ticks, i + ticks.length);
      if (end !== -1) {
        flush();
        nodes.push(h("code", { text: text.slice(i + ticks.length, end).trim() || " " }));
        i = end + ticks.length;
        continue;
      }
    }
    const pair = text.slice(i, i + 2);
    if (pair === "**" || pair === "__" || pair === "~~") {
      const end = findClose(text, pair, i + 2);
      if (end > i + 2 && text[i + 2] !== " ") {
        flush();
        const tag = pair === "~~" ? "del" : "strong";
        nodes.push(h(tag, {}, renderInline(text.slice(i + 2, end))));
        i = end + 2;
        continue;
      }
    }
    const wordBefore = i > 0 && /[\p{L}\p{N}]/u.test(text[i - 1]);
    if ((c === "*" || (c === "_" && !wordBefore)) && text[i + 1] && text[i + 1] !== " ") {
      const end = findClose(text, c, i + 1);
      const wordAfter = end !== -1 && /[\p{L}\p{N}]/u.test(text[end + 1] || "");
      if (end > i + 1 && text[end - 1] !== " " && !(c === "_" && wordAfter)) {
        flush();
        nodes.push(h("em", {}, renderInline(text.slice(i + 1, end))));
        i = end + 1;
        continue;
      }
    }
    if (c === "[") {
      const link = linkAt(text, i);
      if (link) {
        flush();
        const href = safeHref(link.url);
        const label = renderInline(link.label);
        nodes.push(
          href
            ? h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, label)
            : h("span", { class: "podbook-chat-unsafe-link", title: link.url }, label),
        );
        i = link.end;
        continue;
      }
    }
    plain += c;
    i += 1;
  }
  flush();
  return nodes;
}

/** A list starting at `lines[i]` (items, and their indented continuation lines):
 * `[node, index of the next line]`. */
function listAt(lines, i) {
  const ordered = !BULLET.test(lines[i]);
  const pattern = ordered ? NUMBERED : BULLET;
  const items = [];
  let first = null;
  while (i < lines.length) {
    const line = lines[i];
    const match = line.match(pattern);
    if (match) {
      if (ordered && first === null) first = Number(match[1]);
      items.push([ordered ? match[2] : match[1]]);
    } else if (line.trim() && /^\s+/.test(line) && !startsBlock(line.trimStart())) {
      items[items.length - 1].push(line.trim());
    } else {
      break;
    }
    i += 1;
  }
  const list = h(
    ordered ? "ol" : "ul",
    { start: ordered && first !== 1 ? String(first) : null },
    items.map((item) => h("li", {}, renderInline(item.join("\n")))),
  );
  return [list, i];
}

/**
 * Markdown as DOM nodes (a `<div class="podbook-markdown">`): fenced code, headings, rules,
 * quotes, bullet and numbered lists, paragraphs (single newlines kept as line breaks), and the
 * inline forms of `renderInline`. Every text goes in as a text node.
 */
export function renderMarkdown(source) {
  const root = h("div", { class: "podbook-markdown" });
  const lines = String(source ?? "")
    .replace(/\r\n?/g, "\n")
    .split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1; // past the closing fence (or the end)
      const code = h("code", { text: body.join("\n"), "data-lang": fence[2] || null });
      root.append(h("pre", { class: "podbook-chat-code" }, code));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      root.append(h(`h${Math.min(6, heading[1].length + 2)}`, {}, renderInline(heading[2])));
      i += 1;
      continue;
    }
    if (RULE.test(line)) {
      root.append(h("hr"));
      i += 1;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        body.push(lines[i].match(QUOTE)[1]);
        i += 1;
      }
      root.append(h("blockquote", {}, [...renderMarkdown(body.join("\n")).childNodes]));
      continue;
    }
    if (BULLET.test(line) || NUMBERED.test(line)) {
      const [list, next] = listAt(lines, i);
      root.append(list);
      i = next;
      continue;
    }
    const body = [];
    while (i < lines.length && lines[i].trim() && (!body.length || !startsBlock(lines[i]))) {
      body.push(lines[i].trim());
      i += 1;
    }
    root.append(h("p", {}, renderInline(body.join("\n"))));
  }
  return root;
}

// ---------------------------------------------------------------------------- the reply

/**
 * The streamed reply as plain text: pieces appended in index order (each a text node),
 * duplicates dropped by index; a batch that arrives ahead of a gap makes the view ask again
 * (`onGap(have)`); pieces the kernel no longer holds are skipped under a "…" marker.
 */
export class PlainReply {
  constructor(onGap) {
    this.onGap = onGap;
    this.next = 0;
    this.asked = -1;
    this.el = h("div", { class: "podbook-chat-plain" });
  }

  ingest(start, items) {
    if (!Array.isArray(items) || !items.length) return;
    const first = Number.isInteger(start) && start >= 0 ? start : this.next;
    if (first > this.next) {
      if (this.asked !== this.next) this.onGap(this.next);
      this.asked = this.next;
      return;
    }
    for (const item of items.slice(this.next - first)) {
      const text = typeof item === "string" ? item : String(item ?? "");
      this.el.append(document.createTextNode(text));
      this.next += 1;
    }
  }

  ingestTail(tail) {
    const entries = (Array.isArray(tail) ? tail : [])
      .filter((e) => e && Number.isInteger(e.i))
      .sort((a, b) => a.i - b.i);
    if (!entries.length) return;
    if (entries[0].i > this.next) {
      this.el.append(h("span", { class: "podbook-gap", text: "… " }));
      this.next = entries[0].i;
    }
    this.ingest(
      entries[0].i,
      entries.map((e) => e.output),
    );
  }
}

function statsSection(stats, status) {
  const items = [];
  const add = (key, label, value) =>
    items.push(
      h(
        "span",
        { class: "podbook-chat-stat", "data-stat": key },
        h("b", { text: value }),
        label ? ` ${label}` : null,
      ),
    );
  const { ttft, tokensPerSecond, tokens, finishReason } = stats;
  if (typeof ttft === "number") add("ttft", "to first token", formatSeconds(ttft));
  if (typeof tokensPerSecond === "number") {
    add("tokensPerSecond", "tok/s", tokensPerSecond.toFixed(1));
  }
  if (typeof tokens === "number") add("tokens", "tokens", String(tokens));
  if (finishReason && ENDED.includes(status)) add("finishReason", "", String(finishReason));
  return items.length ? h("div", { class: "podbook-chat-stats" }, items) : null;
}

function header(model) {
  const status = model.get("status") || "WAITING";
  const stats = model.get("stats") || {};
  return h(
    "div",
    { class: "podbook-header" },
    h("span", { class: "podbook-badge", "data-status": status, text: status }),
    h("span", { class: "podbook-name", text: `Chat with ${model.get("endpoint") || "?"}` }),
    stats.model ? h("span", { class: "podbook-id", text: stats.model }) : null,
  );
}

/** Renders the chat panel into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-chat" });
  const top = h("div", { class: "podbook-chat-top" });
  const question = h("div", { class: "podbook-chat-message", "data-role": "user" });
  const plain = new PlainReply((have) => model.send({ type: "ready", have }));
  const answerBody = h("div", { class: "podbook-chat-reply" }, plain.el);
  const waiting = h("div", {
    class: "podbook-empty podbook-waiting",
    text: "Waiting for the first token…",
  });
  const answer = h(
    "div",
    { class: "podbook-chat-message", "data-role": "assistant" },
    waiting,
    answerBody,
  );
  const bottom = h("div", { class: "podbook-chat-bottom" });
  const feedback = { key: null, label: "", timer: null };
  let rendered = null; // the reply text rendered as markdown, once ended
  root.append(top, question, answer, bottom);
  el.append(root);

  const status = () => model.get("status") || "WAITING";

  function showReply() {
    const reply = model.get("reply") || "";
    const ended = ENDED.includes(status());
    if (ended && reply && rendered !== reply) {
      rendered = reply;
      answerBody.replaceChildren(renderMarkdown(reply));
      answerBody.setAttribute("data-rendered", "markdown");
    } else if (!rendered) {
      answerBody.setAttribute("data-rendered", "plain");
    }
    root.setAttribute("data-pieces", String(plain.next));
    waiting.hidden = status() !== "WAITING" || plain.next > 0;
  }

  function renderBottom() {
    const current = status();
    const busy = model.get("busy") || "";
    const reply = model.get("reply") || "";
    const nodes = [statsSection(model.get("stats") || {}, current)];
    const actions = [];
    if (ACTIVE.includes(current)) {
      actions.push(
        h(
          "button",
          {
            type: "button",
            class: "podbook-action podbook-danger",
            "data-action": "stop",
            disabled: Boolean(busy),
            "aria-busy": busy ? "true" : null,
            onclick: () => {
              if (!model.get("busy")) model.send({ type: "stop" });
            },
          },
          busy ? "Stopping…" : "Stop",
        ),
      );
    } else if (reply) {
      actions.push(copyButton("reply", reply, feedback, rerender));
    }
    if (actions.length) nodes.push(h("div", { class: "podbook-actions" }, actions));
    patchChildren(bottom, nodes.filter(Boolean));
  }

  function rerender() {
    const current = status();
    root.setAttribute("data-status", current);
    root.setAttribute("data-endpoint", model.get("endpoint") || "");
    root.setAttribute("aria-busy", ACTIVE.includes(current) ? "true" : "false");
    patchChildren(top, [header(model), ...notices(model)]);
    const prompt = model.get("prompt") || "";
    question.replaceChildren(h("div", { class: "podbook-chat-text", text: prompt }));
    showReply();
    renderBottom();
  }

  function onMessage(message) {
    if (message && message.type === "chunks") {
      plain.ingest(message.start, message.items);
      showReply();
    }
  }
  const onTail = () => {
    plain.ingestTail(model.get("tail"));
    showReply();
  };

  const unsubscribe = onTraits(
    model,
    ["status", "stats", "reply", "error", "busy", "connection", "prompt", "endpoint"],
    rerender,
  );
  const unsubscribeTail = onTraits(model, ["tail"], onTail);
  model.on("msg:custom", onMessage);

  plain.ingestTail(model.get("tail"));
  rerender();
  model.send({ type: "ready", have: plain.next });

  return () => {
    unsubscribe();
    unsubscribeTail();
    model.off("msg:custom", onMessage);
    clearTimeout(feedback.timer);
    root.remove();
  };
}

export default { render };
