import { afterEach, describe, expect, it } from "vitest";
import view, {
  PlainReply,
  formatSeconds,
  renderInline,
  renderMarkdown,
  safeHref,
} from "../src/chat.js";
import { mount, receive } from "./fake-model.js";

// The traits as the ChatPanel sets them for a turn that has just been sent.
const traits = (extra = {}) => ({
  endpoint: "chat-demo",
  prompt: "Tell me a story",
  status: "WAITING",
  pieces: 0,
  tail: [],
  reply: "",
  stats: {},
  busy: "",
  error: "",
  connection: "ok",
  updated: "",
  ...extra,
});

let mounted;
function render(extra) {
  mounted = mount(view, traits(extra));
  return mounted;
}
const root = () => mounted.el.querySelector(".podbook-chat");
const reply = () => root().querySelector(".podbook-chat-reply");
const stop = () => root().querySelector('button[data-action="stop"]');
const stat = (key) => root().querySelector(`[data-stat="${key}"] b`)?.textContent;
const chunks = (model, start, items) => receive(model, { type: "chunks", start, items });

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
});

describe("chat panel", () => {
  it("shows the question, waits for the first token and asks for what it missed", () => {
    const { model } = render();
    expect(root().dataset.status).toBe("WAITING");
    expect(root().querySelector('[data-role="user"]').textContent).toBe("Tell me a story");
    expect(root().querySelector(".podbook-waiting").hidden).toBe(false);
    expect(root().querySelector(".podbook-badge").textContent).toBe("WAITING");
    expect(root().querySelector(".podbook-name").textContent).toBe("Chat with chat-demo");
    expect(stop()).not.toBeNull();
    expect(model.sent).toEqual([{ type: "ready", have: 0 }]);
  });

  it("appends pieces as plain text while streaming, in order, without duplicates", () => {
    const { model } = render();
    model.set("status", "STREAMING");
    chunks(model, 0, ["Once", " upon"]);
    chunks(model, 1, [" upon", " a"]); // overlaps: only the new piece is taken
    chunks(model, 3, [" *time*"]);
    expect(reply().dataset.rendered).toBe("plain");
    expect(reply().textContent).toBe("Once upon a *time*");
    expect(reply().querySelector("em")).toBeNull(); // no markdown while streaming
    expect(root().dataset.pieces).toBe("4");
    expect(root().querySelector(".podbook-waiting").hidden).toBe(true);
  });

  it("asks again once for a gap, and takes the pieces when they come", () => {
    const { model } = render({ status: "STREAMING" });
    chunks(model, 0, ["a"]);
    chunks(model, 3, ["d"]);
    chunks(model, 4, ["e"]);
    expect(model.sent.filter((m) => m.type === "ready")).toEqual([
      { type: "ready", have: 0 },
      { type: "ready", have: 1 },
    ]);
    chunks(model, 1, ["b", "c", "d", "e"]);
    expect(reply().textContent).toBe("abcde");
  });

  it("draws the tail on render (a re-rendered or late view)", () => {
    const tail = [0, 1, 2].map((i) => ({ i, output: `p${i} ` }));
    const { model } = render({ status: "STREAMING", tail, pieces: 3 });
    expect(reply().textContent).toBe("p0 p1 p2 ");
    expect(model.sent).toEqual([{ type: "ready", have: 3 }]);
  });

  it("renders the whole reply as markdown once it has ended, with its timings", () => {
    const { model } = render({ status: "STREAMING" });
    chunks(model, 0, ["# Ti", "tle"]);
    model.set("stats", { ttft: 0.25, tokensPerSecond: 46.85, tokens: 10, model: "chat-demo" });
    expect(stat("ttft")).toBe("250 ms");
    expect(stat("finishReason")).toBeUndefined();
    model.set("reply", "# Title\n\nSome **bold** and `code`.");
    model.set("stats", { ttft: 1.5, tokensPerSecond: 46.85, tokens: 10, finishReason: "stop" });
    model.set("status", "DONE");
    expect(reply().dataset.rendered).toBe("markdown");
    expect(reply().querySelector("h3").textContent).toBe("Title");
    expect(reply().querySelector("strong").textContent).toBe("bold");
    expect(reply().querySelector("code").textContent).toBe("code");
    expect(stat("ttft")).toBe("1.50 s");
    expect(stat("tokensPerSecond")).toBe("46.9");
    expect(stat("tokens")).toBe("10");
    expect(stat("finishReason")).toBe("stop");
    expect(stop()).toBeNull();
    expect(root().querySelector('button[data-copy="reply"]')).not.toBeNull();
    expect(root().querySelector(".podbook-badge").textContent).toBe("DONE");
  });

  it("a saved notebook's view shows the whole reply from the final traits alone", () => {
    render({ status: "STOPPED", reply: "All of it, even past the tail.", pieces: 900 });
    expect(reply().textContent).toBe("All of it, even past the tail.");
    expect(root().dataset.status).toBe("STOPPED");
  });

  it("Stop sends one stop message and shows Stopping… while busy", () => {
    const { model } = render({ status: "STREAMING" });
    stop().click();
    expect(model.sent.at(-1)).toEqual({ type: "stop" });
    model.set("busy", "stop");
    expect(stop().disabled).toBe(true);
    expect(stop().textContent).toBe("Stopping…");
    stop().click();
    expect(model.sent.filter((m) => m.type === "stop")).toHaveLength(1);
  });

  it("shows the error line of a failed turn", () => {
    const { model } = render();
    model.set("error", "404 endpoint not found → check the endpoint ID");
    model.set("status", "FAILED");
    expect(root().querySelector(".podbook-error").textContent).toContain("404");
    expect(stop()).toBeNull();
  });

  it("a reply or a question with markup stays text", () => {
    const evil = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    render({ status: "DONE", reply: evil, prompt: evil });
    expect(root().querySelector("img")).toBeNull();
    expect(root().querySelector("script")).toBeNull();
    expect(reply().textContent).toBe(evil);
    expect(root().querySelector('[data-role="user"]').textContent).toBe(evil);
  });

  it("cleans up its listeners", () => {
    const { model, cleanup } = render();
    cleanup();
    expect(model.listenerCount()).toBe(0);
    mounted = null;
  });
});

describe("markdown renderer", () => {
  const md = (text) => renderMarkdown(text);

  it("renders blocks: headings, lists, quotes, rules, code fences, paragraphs", () => {
    const el = md(
      [
        "## Plan",
        "",
        "1. first",
        "2. second",
        "   continued",
        "",
        "- a",
        "* b",
        "",
        "> quoted *text*",
        "",
        "---",
        "```python",
        "x = '<b>'",
        "```",
        "line one",
        "line two",
      ].join("\n"),
    );
    expect(el.querySelector("h4").textContent).toBe("Plan");
    const ol = el.querySelector("ol");
    expect([...ol.children].map((li) => li.textContent)).toEqual(["first", "secondcontinued"]);
    expect(ol.children[1].querySelector("br")).not.toBeNull();
    expect(ol.getAttribute("start")).toBeNull();
    expect([...el.querySelector("ul").children].map((li) => li.textContent)).toEqual(["a", "b"]);
    expect(el.querySelector("blockquote em").textContent).toBe("text");
    expect(el.querySelector("hr")).not.toBeNull();
    const code = el.querySelector("pre code");
    expect(code.textContent).toBe("x = '<b>'");
    expect(code.dataset.lang).toBe("python");
    const last = el.lastElementChild;
    expect(last.textContent).toBe("line oneline two");
    expect(last.querySelector("br")).not.toBeNull();
  });

  it("numbers a list from its first number and closes an unterminated fence", () => {
    const el = md("3. three\n4. four\n\n```\nno end");
    expect(el.querySelector("ol").getAttribute("start")).toBe("3");
    expect(el.querySelector("pre code").textContent).toBe("no end");
  });

  it("renders inline code, strong, emphasis, strike and escapes", () => {
    const wrap = (text) => {
      const p = document.createElement("p");
      p.append(...renderInline(text));
      return p;
    };
    const p = wrap("a `x*y*` **b** *c* _d_ ~~e~~ \\*f\\* snake_case_name 2*3*4");
    expect(p.querySelector("code").textContent).toBe("x*y*");
    expect(p.querySelector("strong").textContent).toBe("b");
    expect([...p.querySelectorAll("em")].map((e) => e.textContent)).toEqual(["c", "d", "3"]);
    expect(p.querySelector("del").textContent).toBe("e");
    expect(p.textContent).toContain("*f*");
    expect(p.textContent).toContain("snake_case_name");
  });

  it("links only to http(s) and mailto, opened safely", () => {
    const el = md("[ok](https://example.org/a) [js](javascript:alert(1)) [mail](mailto:a@b.c)");
    const links = [...el.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "https://example.org/a",
      "mailto:a@b.c",
    ]);
    expect(links[0].getAttribute("rel")).toContain("noopener");
    expect(links[0].getAttribute("target")).toBe("_blank");
    expect(el.querySelector(".podbook-chat-unsafe-link").textContent).toBe("js");
    expect(el.innerHTML).not.toContain("javascript:alert(1)\"");
  });

  it("leaves unclosed markers as text", () => {
    const el = md("a **b and `c and [d](e");
    expect(el.textContent).toBe("a **b and `c and [d](e");
    expect(el.querySelector("strong, code, a")).toBeNull();
  });
});

describe("helpers", () => {
  it("formats seconds", () => {
    expect(formatSeconds(0.0123)).toBe("12 ms");
    expect(formatSeconds(2)).toBe("2.00 s");
    expect(formatSeconds(undefined)).toBe("—");
    expect(formatSeconds(-1)).toBe("—");
  });

  it("accepts only safe link targets", () => {
    expect(safeHref("https://a.b")).toBe("https://a.b");
    expect(safeHref(" HTTP://A.B ")).toBe("HTTP://A.B");
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("data:text/html,x")).toBeNull();
    expect(safeHref("//evil.example")).toBeNull();
  });

  it("PlainReply skips pieces the kernel no longer holds", () => {
    const asked = [];
    const plain = new PlainReply((have) => asked.push(have));
    plain.ingestTail([
      { i: 5, output: "f" },
      { i: 6, output: "g" },
    ]);
    expect(plain.el.textContent).toBe("… fg");
    expect(plain.next).toBe(7);
    expect(asked).toEqual([]);
  });
});
