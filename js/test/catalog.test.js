import { afterEach, describe, expect, it } from "vitest";
import view, { sortRows } from "../src/catalog.js";
import { mount } from "./fake-model.js";

const gpu = (id, extra = {}) => ({
  id,
  name: id.replace("NVIDIA ", ""),
  manufacturer: "NVIDIA",
  memory: 24,
  secure: true,
  community: true,
  price: { secure: 0.69, community: 0.34 },
  maxCount: { secure: 8, community: 8 },
  availability: "HIGH",
  cudaVersions: ["12.4", "12.8"],
  dataCenters: [
    { id: "EU-RO-1", name: "EU Romania 1", availability: "HIGH" },
    { id: "EU-NL-1", name: "EU Netherlands 1", availability: "NONE" },
  ],
  command: `%pod create --gpu "${id}" --image runpod/pytorch`,
  ...extra,
});

const GPUS = [
  gpu("NVIDIA GeForce RTX 4090"),
  gpu("NVIDIA A40", { memory: 48, price: { secure: 0.4, community: 0.2 }, availability: "LOW" }),
  gpu("NVIDIA H100 80GB HBM3", {
    memory: 80,
    community: false,
    price: { secure: 2.99, community: 0 },
    availability: "MEDIUM",
    cudaVersions: ["13.0"],
  }),
];

let mounted;
const render = (gpus = GPUS, extra = {}) => {
  mounted = mount(view, {
    gpus,
    filters: { text: "VRAM ≥ 24 GB · SECURE" },
    busy: "",
    created: {},
    error: "",
    connection: "ok",
    ...extra,
  });
  return mounted;
};
const ids = () => [...mounted.el.querySelectorAll("tbody tr[data-gpu-id]")].map((r) => r.dataset.gpuId);
const row = (id) => mounted.el.querySelector(`tr[data-gpu-id="${id}"]`);
const sortBy = (key) => mounted.el.querySelector(`th[data-sort="${key}"] button`).click();

afterEach(() => {
  mounted?.cleanup();
  document.body.replaceChildren();
});

describe("GPU finder panel", () => {
  it("shows each GPU type with VRAM, both prices, availability and CUDA versions", () => {
    render();
    expect(ids()).toEqual(GPUS.map((g) => g.id));
    const cells = [...row("NVIDIA GeForce RTX 4090").querySelectorAll("td")].map((td) => td.textContent);
    expect(cells.slice(1, 7)).toEqual([
      "GeForce RTX 4090NVIDIA GeForce RTX 4090",
      "24 GB",
      "$0.69/h",
      "$0.34/h",
      "HIGH",
      "12.4, 12.8",
    ]);
    expect(row("NVIDIA H100 80GB HBM3").querySelector('[data-price="community"]').textContent).toBe("—");
  });

  it("shows the filters that were applied and the count", () => {
    render();
    expect(mounted.el.querySelector(".podbook-filters").textContent).toBe("VRAM ≥ 24 GB · SECURE");
    expect(mounted.el.querySelector(".podbook-catalog").dataset.count).toBe("3");
  });

  it("sorts by a column header, and the other way on a second click", () => {
    render();
    sortBy("memory");
    expect(ids()).toEqual(["NVIDIA GeForce RTX 4090", "NVIDIA A40", "NVIDIA H100 80GB HBM3"]);
    expect(mounted.el.querySelector('th[data-sort="memory"]').getAttribute("aria-sort")).toBe("ascending");
    sortBy("memory");
    expect(ids()).toEqual(["NVIDIA H100 80GB HBM3", "NVIDIA A40", "NVIDIA GeForce RTX 4090"]);
    expect(mounted.el.querySelector('th[data-sort="memory"]').getAttribute("aria-sort")).toBe("descending");
    sortBy("secure");
    expect(ids()[0]).toBe("NVIDIA A40");
    sortBy("availability");
    expect(ids()).toEqual(["NVIDIA A40", "NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 4090"]);
    sortBy("cuda");
    expect(ids().at(-1)).toBe("NVIDIA H100 80GB HBM3");
  });

  it("puts types without a price in a cloud last, whatever the direction", () => {
    const rows = sortRows(GPUS, "community", 1);
    expect(rows.at(-1).id).toBe("NVIDIA H100 80GB HBM3");
    expect(sortRows(GPUS, "community", -1).at(-1).id).toBe("NVIDIA H100 80GB HBM3");
  });

  it("keeps the sort when the rows change", () => {
    const { model } = render();
    sortBy("memory");
    sortBy("memory");
    model.set("gpus", [...GPUS, gpu("NVIDIA H200", { memory: 141 })]);
    expect(ids()[0]).toBe("NVIDIA H200");
  });

  it("expands a row into its per-data-center availability", () => {
    render();
    expect(mounted.el.querySelector(".podbook-details")).toBeNull();
    row("NVIDIA A40").querySelector(".podbook-expand").click();
    const details = mounted.el.querySelector('[data-details-for="NVIDIA A40"]');
    expect(details).not.toBeNull();
    expect(row("NVIDIA A40").dataset.expanded).toBe("true");
    const dcs = [...details.querySelectorAll("[data-dc]")].map((li) => [
      li.dataset.dc,
      li.querySelector(".podbook-avail").dataset.availability,
    ]);
    expect(dcs).toEqual([
      ["EU-RO-1", "HIGH"],
      ["EU-NL-1", "NONE"],
    ]);
    expect(details.querySelector(".podbook-command").textContent).toContain('--gpu "NVIDIA A40"');
    row("NVIDIA A40").querySelector(".podbook-expand").click();
    expect(mounted.el.querySelector(".podbook-details")).toBeNull();
  });

  it("says when nothing matches", () => {
    render([]);
    expect(mounted.el.querySelector("table")).toBeNull();
    expect(mounted.el.querySelector(".podbook-empty").textContent).toContain("loosen");
  });

  it("sends a run message for Create now, and disables the buttons while busy", () => {
    const { model } = render();
    row("NVIDIA A40").querySelector('[data-action="run"]').click();
    expect(model.sent).toEqual([{ type: "run", gpu: "NVIDIA A40" }]);
    model.set("busy", "NVIDIA A40");
    expect(row("NVIDIA A40").querySelector('[data-action="run"]').textContent).toBe("Creating…");
    expect(row("NVIDIA GeForce RTX 4090").querySelector('[data-action="run"]').disabled).toBe(true);
    model.set("busy", "");
    model.set("created", { id: "pod_1", status: "PROVISIONING", gpu: "NVIDIA A40" });
    const created = mounted.el.querySelector("[data-created]");
    expect(created.dataset.created).toBe("pod_1");
    expect(created.textContent).toContain("%pod show pod_1");
  });

  it("outside a notebook, New cell asks the kernel to fill the next cell", async () => {
    const { model } = render();
    row("NVIDIA A40").querySelector('[data-action="fill"]').click();
    await expect.poll(() => model.sent).toEqual([{ type: "fill", gpu: "NVIDIA A40" }]);
    await expect.poll(() => mounted.el.querySelector("[data-note]")?.dataset.note).toBe("queued");
  });

  it("in an app that exposes its commands, New cell inserts the line below", async () => {
    const source = [];
    const executed = [];
    const content = { activeCellIndex: 0, widgets: [] };
    globalThis.jupyterapp = {
      commands: {
        execute: async (id) => {
          executed.push([id, content.activeCellIndex]);
          content.activeCell = { model: { sharedModel: { setSource: (t) => source.push(t) } } };
        },
      },
      shell: { currentWidget: { content } },
    };
    try {
      const { model, el } = render();
      content.widgets = [{ node: document.createElement("div") }, { node: el }];
      row("NVIDIA A40").querySelector('[data-action="fill"]').click();
      await expect.poll(() => mounted.el.querySelector("[data-note]")?.dataset.note).toBe("filled");
      expect(executed).toEqual([["notebook:insert-cell-below", 1]]);
      expect(source).toEqual(['%pod create --gpu "NVIDIA A40" --image runpod/pytorch']);
      expect(model.sent).toEqual([]);
    } finally {
      delete globalThis.jupyterapp;
    }
  });

  it("shows the error line", () => {
    render(GPUS, { error: "'X' is not in this table; run %catalog gpus again." });
    expect(mounted.el.querySelector(".podbook-error").textContent).toContain("run %catalog gpus");
  });
});
