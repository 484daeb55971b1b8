// Shared helpers of podbook's views: the one source, never copied.
//
// Each view imports what it uses (`import { h, ... } from "./common.js";`), so the vitest
// tests in js/ load views as ordinary ES modules. anywidget loads a view from a blob URL,
// where a relative import cannot resolve, so the notebook side (podbook.notebook.panels.esm)
// builds each panel's `_esm` at load time: this file's text followed by the view's text
// without that import line. A view must not declare a name this file declares.

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

/** The "updated HH:MM:SS" line under a live panel (the `updated` trait), or null before one. */
export function updatedFooter(model) {
  const updated = model.get("updated");
  if (!updated) return null;
  const time = new Date(updated);
  const text = Number.isNaN(time.getTime()) ? updated : time.toLocaleTimeString();
  return h("div", { class: "podbook-updated", text: `updated ${text}` });
}
