// podbook pod panel: the anywidget view of one pod (PodPanel, see docs/architecture.md).
//
// Dumb by design: every value comes from the traits `pod`, `error`, `busy`, `connection`,
// `updated` and `tab`; the view sends `{type: "action", action}`, and `{type: "logs", follow,
// have}` when its Logs tab opens or closes (the kernel then streams `{type: "log-lines",
// lines}` and, at the end, `{type: "log-end", error?}`). The only timers are the copy
// feedback and the one-second uptime tick while the pod is RUNNING.
//
// HTTP port links: the real service serves a pod's HTTP port `P` at
// `https://{podId}-{P}.proxy.runpod.net`. When `pod.runtime.ports` maps `P` to a loopback
// address (what the local emulator reports, e.g. `{private: 8888, public: 41234,
// ip: "127.0.0.1", type: "http"}`), the link is `http://{ip}:{public}/` instead.

// <podbook-common>
// Shared helpers of podbook's views: the single source of truth.
//
// anywidget loads each view's ESM from a blob URL, so a view cannot import a sibling
// module. Each view therefore carries a copy of the block below between the
// `<podbook-common>` markers; `npm run sync` (in js/) rewrites those copies from this file
// and a vitest test fails when one has drifted. Edit here, never in a view's copy.

/** The value the notebook side puts in place of a secret-looking env value. */
export const MASK = "••••••";

/** Lifecycle statuses whose badge pulses: the pod is on its way to RUNNING. */
export const PENDING_STATUSES = ["PROVISIONING", "STARTING"];

/**
 * Builds an element. `attrs` keys: `class`, `text`, `title`, `on<event>` handlers,
 * `data-*`/`aria-*`/other attributes (null or false values are left out).
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A status badge; its colour and animation come from `data-status` in podbook.css. */
export function statusBadge(status) {
  const text = status || "UNKNOWN";
  return h("span", {
    class: "podbook-badge",
    "data-status": text,
    "data-pending": PENDING_STATUSES.includes(text) ? "true" : null,
    text,
  });
}

/** `2 × NVIDIA GeForce RTX 4090` for a GPU pod, `cpu5c · 4 vCPU · 16 GB` for a CPU pod. */
export function formatShape(pod) {
  if (pod && pod.gpu && pod.gpu.id) return `${pod.gpu.count ?? 1} × ${pod.gpu.id}`;
  if (pod && pod.cpu && pod.cpu.id) {
    const parts = [pod.cpu.id];
    if (pod.cpu.vcpuCount !== undefined) parts.push(`${pod.cpu.vcpuCount} vCPU`);
    if (pod.cpu.memory !== undefined) parts.push(`${pod.cpu.memory} GB`);
    return parts.join(" · ");
  }
  return "—";
}

/** `$0.69/h`; three decimals for tiny non-zero rates so they do not read as free. */
export function formatCost(cost) {
  if (typeof cost !== "number" || Number.isNaN(cost)) return "—";
  const digits = cost > 0 && cost < 0.1 ? 3 : 2;
  return `$${cost.toFixed(digits)}/h`;
}

/** `42s`, `5m 07s`, `2h 03m`, `3d 4h`. */
export function formatUptime(seconds) {
  if (typeof seconds !== "number" || seconds < 0) return "—";
  const s = Math.floor(seconds);
  const pad = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** True for env keys the notebook masks: JUPYTER_PASSWORD, PUBLIC_KEY, *KEY*, *TOKEN*, ... */
export function isSecretKey(key) {
  return /KEY|TOKEN|SECRET|PASSWORD/i.test(String(key));
}

/** The env value to show: masked again here so a view never shows a secret-looking value. */
export function displayEnvValue(key, value) {
  return isSecretKey(key) ? MASK : String(value ?? "");
}

/** The panel's notes: the error line (`.podbook-error`) and the reconnecting note. */
export function notices(model) {
  const nodes = [];
  if (model.get("connection") === "reconnecting") {
    nodes.push(h("div", { class: "podbook-reconnecting", role: "status", text: "reconnecting…" }));
  }
  const error = model.get("error");
  if (error) nodes.push(h("div", { class: "podbook-error", role: "alert", text: error }));
  return nodes;
}

/**
 * Copies `text` to the clipboard: the async Clipboard API where the page allows it, else a
 * selected off-screen textarea and `document.execCommand("copy")`. Resolves to true on success.
 */
export async function copyText(text) {
  try {
    if (globalThis.navigator && navigator.clipboard && navigator.clipboard.writeText) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // Denied (no user gesture, insecure context): try the textarea fallback below.
  }
  const area = h("textarea", {
    readonly: true,
    "aria-hidden": "true",
    class: "podbook-offscreen",
    style: "position: fixed; top: -1000px; left: -1000px; opacity: 0",
  });
  area.value = text;
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = typeof document.execCommand === "function" && document.execCommand("copy") === true;
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

/**
 * A copy button for `text`. `feedback` remembers which button last copied, so its "Copied"
 * label survives the re-render that the next trait change causes. When no way of copying
 * works, the label says "Press Ctrl+C" and the sibling `code` is selected for the user.
 */
export function copyButton(key, text, feedback, rerender) {
  const button = h("button", {
    class: "podbook-copy",
    type: "button",
    title: "Copy to clipboard",
    "data-copy": key,
    text: feedback.key === key ? feedback.label : "Copy",
  });
  button.addEventListener("click", async () => {
    const copied = await copyText(text);
    if (!copied) selectCode(button);
    clearTimeout(feedback.timer);
    feedback.key = key;
    feedback.label = copied ? "Copied" : "Press Ctrl+C";
    if (button.isConnected) button.textContent = feedback.label;
    else rerender();
    feedback.timer = setTimeout(() => {
      feedback.key = null;
      if (button.isConnected) button.textContent = "Copy";
      else rerender();
    }, 1500);
  });
  return button;
}

function selectCode(button) {
  const code = button.parentElement && button.parentElement.querySelector("code");
  const selection = globalThis.getSelection && getSelection();
  if (code && selection) selection.selectAllChildren(code);
}

/** Subscribes `handler` to each `change:<trait>`; returns the function that unsubscribes. */
export function onTraits(model, traits, handler) {
  for (const trait of traits) model.on(`change:${trait}`, handler);
  return () => {
    for (const trait of traits) model.off(`change:${trait}`, handler);
  };
}

/** A `<dt>`/`<dd>` pair for a facts list, or null when there is no value to show. */
export function fact(label, value, attrs = {}) {
  if (value === null || value === undefined || value === "") return null;
  return [h("dt", { text: label }), h("dd", attrs, value)];
}

/**
 * Makes `parent`'s children equal to `nodes`, keeping every existing child that is already
 * equal (`isEqualNode`). A refresh that only moves the utilization bars then leaves the
 * buttons, links and commands in place, so a click, a hover or a text selection in progress
 * is not lost to a re-render.
 */
export function patchChildren(parent, nodes) {
  nodes.forEach((node, i) => {
    const current = parent.children[i];
    if (!current) parent.append(node);
    else if (!current.isEqualNode(node)) current.replaceWith(node);
  });
  while (parent.children.length > nodes.length) parent.lastElementChild.remove();
}
// </podbook-common>

const ACTION_LABELS = {
  start: ["Start", "Starting…"],
  stop: ["Stop", "Stopping…"],
  restart: ["Restart", "Restarting…"],
  terminate: ["Terminate", "Terminating…"],
};

const SSH_KINDS = [
  ["proxy", "SSH (proxy)", "interactive shell only"],
  ["direct", "SSH (direct)", "full SSH: scp, sftp, port forwarding"],
];

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/i;

/** The URL of an HTTP port: the emulator's loopback mapping, else the service's proxy. */
export function portUrl(pod, port) {
  const mapping = ((pod.runtime && pod.runtime.ports) || []).find(
    (p) => Number(p.private) === port && p.public !== null && p.public !== undefined && p.ip,
  );
  if (mapping && LOOPBACK.test(String(mapping.ip))) {
    const host = mapping.ip.includes(":") && !mapping.ip.startsWith("[") ? `[${mapping.ip}]` : mapping.ip;
    return `http://${host}:${mapping.public}/`;
  }
  return `https://${pod.id}-${port}.proxy.runpod.net`;
}

function parsePort(spec) {
  const [number, protocol = ""] = String(spec).split("/");
  return { number: Number(number), protocol: protocol.toLowerCase(), spec: String(spec) };
}


function header(pod) {
  return h(
    "div",
    { class: "podbook-header" },
    statusBadge(pod.status),
    h("span", { class: "podbook-name", text: pod.name || "(unnamed pod)" }),
    h("code", { class: "podbook-id", text: pod.id || "" }),
    h("span", { class: "podbook-cost", title: "current cost", text: formatCost(pod.cost) }),
  );
}

function facts(pod, uptimeText) {
  const running = pod.status === "RUNNING";
  return h(
    "dl",
    { class: "podbook-facts" },
    fact("Shape", formatShape(pod), { "data-field": "shape" }),
    fact("Image", pod.image, { "data-field": "image" }),
    fact("Data center", pod.dataCenterId || "—", { "data-field": "dataCenterId" }),
    fact("CUDA", pod.cudaVersion || null, { "data-field": "cudaVersion" }),
    fact("Cloud", pod.cloud, { "data-field": "cloud" }),
    pod.cluster
      ? fact("Cluster", `${pod.cluster.id} · rank ${pod.cluster.rank ?? "—"}`, {
          "data-field": "cluster",
        })
      : null,
    running && pod.runtime && typeof pod.runtime.uptime === "number"
      ? fact("Uptime", uptimeText, { "data-field": "uptime", class: "podbook-uptime" })
      : null,
  );
}

function sshSection(pod, feedback, rerender) {
  // A terminated pod has no machine left: an old command would only mislead.
  if (pod.status === "TERMINATED") return null;
  const ssh = pod.ssh || {};
  const rows = SSH_KINDS.filter(([kind]) => ssh[kind] && ssh[kind].command).map(
    ([kind, label, hint]) =>
      h(
        "div",
        { class: "podbook-ssh-row", "data-ssh": kind },
        h("span", { class: "podbook-label", title: hint, text: label }),
        h("code", { class: "podbook-command", text: ssh[kind].command }),
        copyButton(`ssh-${kind}`, ssh[kind].command, feedback, rerender),
      ),
  );
  return rows.length ? h("div", { class: "podbook-section podbook-ssh" }, rows) : null;
}

function portsSection(pod) {
  const ports = (pod.ports || []).map(parsePort);
  if (!ports.length) return null;
  const mappings = (pod.runtime && pod.runtime.ports) || [];
  const items = ports.map((port) => {
    if (port.protocol === "http") {
      return h("a", {
        class: "podbook-port",
        "data-port": port.spec,
        href: portUrl(pod, port.number),
        target: "_blank",
        rel: "noopener noreferrer",
        title: pod.status === "RUNNING" ? "open in a new tab" : "reachable once the pod is RUNNING",
        text: `${port.spec} ↗`,
      });
    }
    const mapping = mappings.find((p) => Number(p.private) === port.number && p.public);
    const where = mapping ? ` → ${mapping.ip ? `${mapping.ip}:` : ""}${mapping.public}` : "";
    return h("span", { class: "podbook-port", "data-port": port.spec, text: port.spec + where });
  });
  return h(
    "div",
    { class: "podbook-section podbook-ports" },
    h("span", { class: "podbook-label", text: "Ports" }),
    items,
  );
}

function bar(metric, value) {
  const pct = Math.max(0, Math.min(100, Number(value) || 0));
  return h(
    "span",
    { class: "podbook-bar", "data-metric": metric, "data-value": pct, title: `${metric} ${pct}%` },
    h("span", { class: "podbook-bar-fill", style: `width: ${pct}%` }),
  );
}

function utilRow(key, label, util, memoryUtil) {
  const text = memoryUtil === undefined ? `${util ?? 0}%` : `${util ?? 0}% · mem ${memoryUtil}%`;
  return h(
    "div",
    { class: "podbook-util-row", "data-util": key },
    h("span", { class: "podbook-label", text: label }),
    h(
      "span",
      { class: "podbook-bars" },
      bar("util", util),
      memoryUtil === undefined ? null : bar("memoryUtil", memoryUtil),
    ),
    h("span", { class: "podbook-util-value", text }),
  );
}

function utilizationSection(pod) {
  const runtime = pod.runtime;
  if (pod.status !== "RUNNING" || !runtime) return null;
  const rows = (runtime.gpus || []).map((gpu, i) =>
    utilRow(`gpu${i}`, `GPU ${i}`, gpu.util, gpu.memoryUtil ?? 0),
  );
  if (runtime.cpu) rows.push(utilRow("cpu", "CPU", runtime.cpu.util));
  if (runtime.memory) rows.push(utilRow("memory", "Memory", runtime.memory.util));
  return rows.length ? h("div", { class: "podbook-section podbook-util" }, rows) : null;
}

function envSection(pod, state) {
  const entries = Object.entries(pod.env || {});
  if (!entries.length) return null;
  const details = h(
    "details",
    { class: "podbook-section podbook-env", open: state.envOpen },
    h("summary", { text: `Environment (${entries.length})` }),
    h(
      "table",
      {},
      h(
        "tbody",
        {},
        entries.map(([key, value]) =>
          h(
            "tr",
            { "data-env": key },
            h("th", { text: key }),
            h("td", {}, h("code", { text: displayEnvValue(key, value) })),
          ),
        ),
      ),
    ),
  );
  details.addEventListener("toggle", () => {
    state.envOpen = details.open;
  });
  return details;
}

function actionsSection(model, pod, state, rerender) {
  const busy = model.get("busy") || "";
  const buttons = (pod.actions || []).map((action) => {
    const [label, busyLabel] = ACTION_LABELS[action] || [action, `${action}…`];
    const confirming = action === "terminate" && state.confirmTerminate;
    const inFlight = busy === action;
    return h(
      "button",
      {
        type: "button",
        class: `podbook-action${action === "terminate" ? " podbook-danger" : ""}${confirming ? " podbook-confirming" : ""}`,
        "data-action": action,
        disabled: Boolean(busy),
        "aria-busy": inFlight ? "true" : null,
        onclick: () => {
          if (model.get("busy")) return;
          if (action === "terminate" && !state.confirmTerminate) {
            state.confirmTerminate = true;
            rerender();
            return;
          }
          state.confirmTerminate = false;
          model.send({ type: "action", action });
        },
      },
      inFlight ? h("span", { class: "podbook-spinner", "aria-hidden": "true" }) : null,
      inFlight ? busyLabel : confirming ? "Click again to terminate" : label,
    );
  });
  if (state.confirmTerminate && !busy && (pod.actions || []).includes("terminate")) {
    buttons.push(
      h("button", {
        type: "button",
        class: "podbook-cancel",
        text: "Cancel",
        onclick: () => {
          state.confirmTerminate = false;
          rerender();
        },
      }),
    );
  }
  return buttons.length ? h("div", { class: "podbook-actions" }, buttons) : null;
}

function footer(model) {
  const updated = model.get("updated");
  if (!updated) return null;
  const time = new Date(updated);
  const text = Number.isNaN(time.getTime()) ? updated : time.toLocaleTimeString();
  return h("div", { class: "podbook-updated", text: `updated ${text}` });
}

const TABS = [
  ["overview", "Overview"],
  ["logs", "Logs"],
];

/** Most log lines the Logs tab keeps (the oldest are dropped beyond it). */
export const MAX_LOG_LINES = 1000;

function tabBar(current, select) {
  return h(
    "div",
    { class: "podbook-tabs", role: "tablist" },
    TABS.map(([name, label]) =>
      h(
        "button",
        {
          class: name === current ? "podbook-tab podbook-tab-active" : "podbook-tab",
          type: "button",
          role: "tab",
          "data-tab": name,
          "aria-selected": name === current ? "true" : "false",
          onclick: () => select(name),
        },
        label,
      ),
    ),
  );
}

/**
 * The Logs tab's area: kept across re-renders (lines are appended to it, never rebuilt).
 * Lines arrive as `{type: "log-lines", lines: [{seq, ts, source, line}]}`; a line whose
 * `seq` the view already holds is dropped, and only the last MAX_LOG_LINES are kept.
 */
function logArea() {
  const status = h("div", { class: "podbook-log-status", text: "waiting for log lines…" });
  const list = h("div", { class: "podbook-log-lines", role: "log", "aria-live": "polite" });
  const box = h("div", { class: "podbook-logs", "data-lines": "0" }, status, list);
  const logs = { box, list, status, lastSeq: 0 };

  logs.append = (lines) => {
    const stick = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    for (const item of lines || []) {
      if (typeof item.seq === "number") {
        if (item.seq <= logs.lastSeq) continue;
        logs.lastSeq = item.seq;
      }
      list.append(
        h(
          "div",
          { class: "podbook-log-line", "data-seq": item.seq, "data-source": item.source },
          h("span", { class: "podbook-log-ts", text: item.ts }),
          " ",
          h("span", { class: "podbook-log-text", text: item.line }),
        ),
      );
    }
    while (list.children.length > MAX_LOG_LINES) list.firstElementChild.remove();
    box.setAttribute("data-lines", String(list.children.length));
    status.textContent = list.children.length ? "" : "waiting for log lines…";
    if (stick) list.scrollTop = list.scrollHeight;
  };

  logs.end = (error) => {
    box.setAttribute("data-ended", "true");
    status.textContent = error ? `log stream stopped: ${error}` : "the log stream has ended";
    status.classList.toggle("podbook-error", Boolean(error));
  };
  return logs;
}

/** Renders the pod panel into `el`; returns the cleanup that anywidget calls on dispose. */
function render({ model, el }) {
  const root = h("div", { class: "podbook podbook-pod" });
  el.append(root);
  const feedback = { key: null, label: "", timer: null };
  const state = { confirmTerminate: false, envOpen: false, lastStatus: null, tab: "overview" };
  const logs = logArea();
  let following = false;
  let uptime = { base: null, receivedAt: 0 };
  let ticker = null;

  const uptimeText = () =>
    formatUptime(uptime.base + Math.floor((Date.now() - uptime.receivedAt) / 1000));

  function stopTicker() {
    clearInterval(ticker);
    ticker = null;
  }

  function rerender() {
    const pod = model.get("pod") || {};
    if (pod.status !== state.lastStatus) state.confirmTerminate = false;
    state.lastStatus = pod.status;
    root.setAttribute("data-status", pod.status || "");
    root.setAttribute("data-pod-id", pod.id || "");
    root.setAttribute("aria-busy", model.get("busy") ? "true" : "false");
    root.setAttribute("data-tab", state.tab);
    if (state.tab === "logs") {
      patchChildren(
        root,
        [header(pod), ...notices(model), tabBar(state.tab, selectTab), logs.box, footer(model)]
          .filter(Boolean),
      );
      return;
    }
    patchChildren(
      root,
      [
        header(pod),
        ...notices(model),
        tabBar(state.tab, selectTab),
        facts(pod, uptimeText()),
        sshSection(pod, feedback, rerender),
        portsSection(pod),
        utilizationSection(pod),
        envSection(pod, state),
        actionsSection(model, pod, state, rerender),
        footer(model),
      ].filter(Boolean),
    );
  }

  /** Follows the log (asks the kernel) while the Logs tab is open, and only then. */
  function follow(on) {
    if (on === following) return;
    following = on;
    model.send(
      on ? { type: "logs", follow: true, have: logs.lastSeq } : { type: "logs", follow: false },
    );
  }

  function selectTab(name) {
    state.tab = name === "logs" ? "logs" : "overview";
    follow(state.tab === "logs");
    rerender();
  }

  function onMessage(message) {
    if (!message || typeof message !== "object") return;
    if (message.type === "log-lines") logs.append(message.lines);
    else if (message.type === "log-end") logs.end(message.error);
  }

  function onPodChange() {
    const pod = model.get("pod") || {};
    const seconds = pod.runtime && pod.runtime.uptime;
    uptime = { base: typeof seconds === "number" ? seconds : null, receivedAt: Date.now() };
    stopTicker();
    if (pod.status === "RUNNING" && uptime.base !== null) {
      ticker = setInterval(() => {
        const node = root.querySelector(".podbook-uptime");
        if (node) node.textContent = uptimeText();
      }, 1000);
    }
    rerender();
  }

  const unsubscribePod = onTraits(model, ["pod"], onPodChange);
  const unsubscribeRest = onTraits(model, ["error", "busy", "connection", "updated"], rerender);
  const onTab = () => selectTab(model.get("tab"));
  model.on("change:tab", onTab);
  model.on("msg:custom", onMessage);
  state.tab = model.get("tab") === "logs" ? "logs" : "overview";
  follow(state.tab === "logs");
  onPodChange();

  return () => {
    follow(false);
    model.off("change:tab", onTab);
    model.off("msg:custom", onMessage);
    unsubscribePod();
    unsubscribeRest();
    stopTicker();
    clearTimeout(feedback.timer);
    root.remove();
  };
}

export default { render };
