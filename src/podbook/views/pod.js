// podbook pod panel: the anywidget view of one pod (PodPanel, see docs/architecture.md).
//
// Dumb by design: every value comes from the traits `pod`, `error`, `busy`, `connection`,
// `updated`, `tab`, `remote`, `spend` (the billing records' spend) and `guard` (the pod
// guard's last report: state, deadline, busy, summary); the view sends `{type: "action",
// action}`, `{type: "guard", op: "extend" | "keep"}` (its Extend / Keep running buttons), and
// `{type: "logs", follow, have}` when its Logs tab opens or closes (the kernel then streams
// `{type: "log-lines", lines}` and, at the end, `{type: "log-end", error?}`). The only
// timers are the copy feedback and the one-second tick (uptime and the guard's countdown)
// while the pod is RUNNING.
//
// HTTP port links: the real service serves a pod's HTTP port `P` at
// `https://{podId}-{P}.proxy.runpod.net`. When `pod.runtime.ports` maps `P` to a loopback
// address (what the local emulator reports, e.g. `{private: 8888, public: 41234,
// ip: "127.0.0.1", type: "http"}`), the link is `http://{ip}:{public}/` instead.

import {
  h,
  statusBadge,
  formatShape,
  formatCost,
  formatUptime,
  displayEnvValue,
  notices,
  copyButton,
  onTraits,
  fact,
  patchChildren,
  updatedFooter,
} from "./common.js";

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

/** `$12.34`; `< $0.01` for a spend above zero that rounds to nothing (as the kernel's text). */
export function formatDollars(value) {
  if (value > 0 && value < 0.005) return "< $0.01";
  return `$${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** `in 45 s`, `in 12 min`, `in 2 h 05 min`: the time left until a deadline. */
export function formatTimeLeft(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `in ${s} s`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `in ${minutes} min`;
  return `in ${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

function clockTime(iso) {
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return String(iso);
  return `${String(time.getHours()).padStart(2, "0")}:${String(time.getMinutes()).padStart(2, "0")}`;
}

/**
 * The spend line under the price: what the billing records say the pod has cost (`spend`
 * trait: `total`, `per_hour`, `as_of`, `lagging`), "as of HH:MM" when the records lag, and,
 * while the pod runs and its guard has a deadline (`guard.deadline`, epoch seconds), the
 * projected cost until the guard stops it: per_hour × the hours left. Null without a spend.
 */
export function spendLine(spend, guard, status, nowMs = Date.now()) {
  if (!spend || typeof spend.total !== "number") return null;
  const parts = [h("span", { "data-spend": "total", text: `${formatDollars(spend.total)} spent so far` })];
  if (spend.lagging && spend.as_of) {
    parts.push(h("span", { "data-spend": "as-of", title: "billing records arrive late", text: `as of ${clockTime(spend.as_of)}` }));
  }
  const deadline = guard ? guard.deadline : null;
  const left = typeof deadline === "number" ? deadline - nowMs / 1000 : NaN;
  if (status === "RUNNING" && left > 0 && typeof spend.per_hour === "number") {
    const more = formatDollars(spend.per_hour * (left / 3600));
    const approx = more.startsWith("<") ? more : `≈ ${more}`;
    parts.push(
      h("span", { "data-spend": "projected", text: `${approx} more until it stops (${formatTimeLeft(left)})` }),
    );
  }
  const items = parts.flatMap((part, i) => (i ? [" · ", part] : [part]));
  return h("div", { class: "podbook-spend", "data-field": "spend" }, items);
}

const BUSY_TEXT = { ssh: "SSH session open", kernel: "a Jupyter kernel is running code", gpu: "GPU in use" };

/** `45 s`, `12 min`, `3 h 10 min`: a countdown as the panel shows it (the kernel's rounding). */
export function roundedLeft(seconds) {
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}

/**
 * The guard's line: `idle stop in 12 min`, `busy: SSH session open`, `stopped after 30m idle`,
 * counted down from `guard.deadline` (epoch seconds) at `nowMs`. The kernel's `summary` for
 * every other state. Null for a pod without a guard.
 */
export function guardText(guard, status, nowMs = Date.now()) {
  if (!guard || !guard.state) return null;
  const settings = guard.settings || {};
  const action = settings.idle_action || "stop";
  const left = typeof guard.deadline === "number" ? guard.deadline - nowMs / 1000 : null;
  if (status === "RUNNING" && guard.state === "idle" && left !== null) {
    return `${guard.next === "max" ? "time limit" : `idle ${action}`} in ${roundedLeft(left)}`;
  }
  if (status === "RUNNING" && guard.state === "busy") {
    const what = (guard.busy || []).map((b) => BUSY_TEXT[b] || b).join(", ");
    return `busy: ${what}${left !== null ? `; time limit in ${roundedLeft(left)}` : ""}`;
  }
  return guard.summary || "";
}

/** The guard section: its line (with a live countdown) and, while it runs, Extend / Keep running. */
function guardSection(model, pod) {
  const guard = model.get("guard");
  const text = guardText(guard, pod.status);
  if (text === null) return null;
  const busy = model.get("busy") || "";
  const live = pod.status === "RUNNING" && ["idle", "busy", "armed", "unknown"].includes(guard.state);
  // The buttons write the guard's control file over SSH: without an SSH command they cannot.
  const ssh = pod.ssh || {};
  const reachable = SSH_KINDS.some(([kind]) => ssh[kind] && ssh[kind].command);
  const button = (op, label, busyLabel, title) =>
    h(
      "button",
      {
        type: "button",
        class: "podbook-guard-button",
        "data-guard-op": op,
        title: reachable ? title : `${label} reaches the guard over SSH, which this pod has not (create it with --ports 22/tcp)`,
        disabled: Boolean(busy) || !reachable,
        onclick: () => {
          if (!model.get("busy")) model.send({ type: "guard", op });
        },
      },
      busy === busyLabel ? h("span", { class: "podbook-spinner", "aria-hidden": "true" }) : null,
      label,
    );
  return h(
    "div",
    { class: "podbook-guard", "data-field": "guard", "data-state": guard.state },
    h("span", { class: "podbook-guard-label", text: "guard" }),
    h("span", { class: "podbook-guard-text", "data-guard": "summary", text }),
    live ? button("extend", "Extend 30 min", "extend", "push the guard's deadline back by 30 minutes") : null,
    live ? button("keep", "Keep running", "keep running", "turn the guard off until the pod stops") : null,
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

const SERVICE_TEXT = {
  ready: "ready",
  listening: "listening",
  waiting: "starting…",
};

/**
 * A service's readiness tag (`services` trait: `{state, note}` by name): "ready",
 * "listening", "starting…" (for a port: "nothing listening yet"). Null while unknown.
 */
export function serviceTag(services, name) {
  const service = (services || {})[name];
  if (!service || !service.state) return null;
  const port = name.includes("/");
  const text = port && service.state === "waiting" ? "nothing listening yet" : SERVICE_TEXT[service.state] || service.state;
  return h("span", {
    class: `podbook-service podbook-service-${service.state}`,
    "data-service": name,
    "data-state": service.state,
    title: service.note || "",
    text,
  });
}

function sshSection(pod, feedback, rerender, services) {
  // A terminated pod has no machine left: an old command would only mislead.
  if (pod.status === "TERMINATED") return null;
  const ssh = pod.ssh || {};
  const waiting = ((services || {}).ssh || {}).state === "waiting";
  const rows = SSH_KINDS.filter(([kind]) => ssh[kind] && ssh[kind].command).map(([kind, label, hint]) => {
    const copy = copyButton(`ssh-${kind}`, ssh[kind].command, feedback, rerender);
    if (waiting) copy.title = "copied commands will not connect yet: the SSH server is starting";
    return h(
      "div",
      { class: "podbook-ssh-row", "data-ssh": kind },
      h("span", { class: "podbook-label", title: hint, text: label }),
      h("code", { class: "podbook-command", text: ssh[kind].command }),
      copy,
      serviceTag(services, "ssh"),
    );
  });
  if (!rows.length && ssh.unavailable) {
    // No server of this pod answers SSH: say why instead of a command that leads elsewhere.
    rows.push(h("div", { class: "podbook-ssh-row podbook-muted", "data-ssh": "unavailable", text: ssh.unavailable }));
  }
  return rows.length ? h("div", { class: "podbook-section podbook-ssh" }, rows) : null;
}

const KERNEL_TEXT = {
  starting: "starting…",
  idle: "idle",
  busy: "busy",
  reconnecting: "reconnecting…",
  disconnected: "disconnected",
  closed: "closed",
};

/** What the notebook does on the pod: its kernel (%%pod exec, %pod attach), the last transfer. */
function workSection(remote) {
  if (!remote || (!remote.kernel && !remote.transfer)) return null;
  const kernel = remote.kernel
    ? (KERNEL_TEXT[remote.kernel] || remote.kernel) + (remote.attached ? " · cells run here" : "")
    : null;
  const transfer = remote.transfer
    ? `${remote.transfer.title}: ${remote.transfer.summary || remote.transfer.state}`
    : null;
  return h(
    "dl",
    { class: "podbook-facts podbook-work" },
    fact("Kernel", kernel, { "data-field": "kernel", "data-kernel": remote.kernel || "" }),
    fact("Transfer", transfer, { "data-field": "transfer" }),
  );
}

function portsSection(pod, services) {
  const ports = (pod.ports || []).map(parsePort);
  if (!ports.length) return null;
  const mappings = (pod.runtime && pod.runtime.ports) || [];
  const items = ports.map((port) => {
    const name = port.spec === "8888/http" && (services || {}).jupyter ? "jupyter" : port.spec;
    const tag = port.spec === "22/tcp" ? null : serviceTag(services, name);
    if (port.protocol === "http") {
      const starting = tag && tag.dataset.state === "waiting";
      return [
        h("a", {
          class: "podbook-port",
          "data-port": port.spec,
          href: portUrl(pod, port.number),
          target: "_blank",
          rel: "noopener noreferrer",
          title: pod.status !== "RUNNING" ? "reachable once the pod is RUNNING" : starting ? "not answering yet" : "open in a new tab",
          text: `${port.spec} ↗`,
        }),
        tag,
      ];
    }
    const mapping = mappings.find((p) => Number(p.private) === port.number && p.public);
    const where = mapping ? ` → ${mapping.ip ? `${mapping.ip}:` : ""}${mapping.public}` : "";
    return [h("span", { class: "podbook-port", "data-port": port.spec, text: port.spec + where }), tag];
  });
  return h(
    "div",
    { class: "podbook-section podbook-ports" },
    h("span", { class: "podbook-label", text: "Ports" }),
    items.flat(),
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

  const spend = (pod) => spendLine(model.get("spend"), model.get("guard"), pod.status);

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
        [
          header(pod),
          spend(pod),
          ...notices(model),
          tabBar(state.tab, selectTab),
          logs.box,
          updatedFooter(model),
        ].filter(Boolean),
      );
      return;
    }
    patchChildren(
      root,
      [
        header(pod),
        spend(pod),
        guardSection(model, pod),
        ...notices(model),
        tabBar(state.tab, selectTab),
        facts(pod, uptimeText()),
        sshSection(pod, feedback, rerender, model.get("services")),
        workSection(model.get("remote")),
        portsSection(pod, model.get("services")),
        utilizationSection(pod),
        envSection(pod, state),
        actionsSection(model, pod, state, rerender),
        updatedFooter(model),
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
    if (pod.status === "RUNNING") {
      ticker = setInterval(() => {
        const node = root.querySelector(".podbook-uptime");
        if (node && uptime.base !== null) node.textContent = uptimeText();
        const countdown = root.querySelector('[data-guard="summary"]');
        const text = guardText(model.get("guard"), (model.get("pod") || {}).status);
        if (countdown && text !== null && countdown.textContent !== text) countdown.textContent = text;
      }, 1000);
    }
    rerender();
  }

  const unsubscribePod = onTraits(model, ["pod"], onPodChange);
  const unsubscribeRest = onTraits(
    model,
    ["error", "busy", "connection", "updated", "remote", "spend", "guard", "services"],
    rerender,
  );
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
