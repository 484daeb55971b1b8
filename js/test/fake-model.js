// A tiny stand-in for anywidget's model: the same surface the views use (`get`, `set`,
// `on`, `off`, `save_changes`, `send`), with `set` firing `change:<name>` like Backbone.

export class FakeModel {
  constructor(traits = {}) {
    this.traits = { ...traits };
    this.handlers = new Map();
    this.sent = [];
    this.saves = 0;
  }

  get(name) {
    return this.traits[name];
  }

  set(name, value) {
    this.traits[name] = value;
    for (const handler of [...(this.handlers.get(`change:${name}`) || [])]) handler(value);
  }

  on(event, handler) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(handler);
  }

  off(event, handler) {
    this.handlers.get(event)?.delete(handler);
  }

  listenerCount() {
    let n = 0;
    for (const set of this.handlers.values()) n += set.size;
    return n;
  }

  save_changes() {
    this.saves += 1;
  }

  send(message) {
    this.sent.push(message);
  }
}

/** Renders `view` into a fresh element attached to the document; returns what a test needs. */
export function mount(view, traits) {
  const model = new FakeModel(traits);
  const el = document.createElement("div");
  document.body.append(el);
  const cleanup = view.render({ model, el });
  return { model, el, cleanup };
}

/** Delivers a custom message from the kernel to every view of `model` (anywidget's `msg:custom`). */
export function receive(model, message) {
  for (const handler of [...(model.handlers.get("msg:custom") || [])]) handler(message, []);
}
