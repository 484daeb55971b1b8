import { readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  formatCost,
  formatShape,
  formatUptime,
  isSecretKey,
  displayEnvValue,
  MASK,
} from "../src/common.js";

const VIEWS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const VIEWS = readdirSync(VIEWS_DIR).filter((f) => f.endsWith(".js") && f !== "common.js");
const read = (file) => readFileSync(join(VIEWS_DIR, file), "utf8");

describe("views share common.js by one import (the panels inline it at load)", () => {
  it("finds the eight views", () => {
    expect(VIEWS.sort()).toEqual(
      ["billing", "catalog", "chat", "cluster", "health", "job", "pod", "podlist"].map(
        (v) => `${v}.js`,
      ),
    );
  });

  it.each(VIEWS)("%s imports only from ./common.js, once", (view) => {
    const source = read(view);
    const imports = source.match(/^[ \t]*import\b[^;]*;/gm) ?? [];
    expect(imports).toHaveLength(1);
    expect(imports[0]).toMatch(/^import \{[\w\s,]+\} from "\.\/common\.js";$/);
    expect(source).not.toMatch(/\bimport\s*\(/);
    expect(source).not.toMatch(/\bfetch\s*\(|XMLHttpRequest|WebSocket/);
    expect(source).toMatch(/export default \{ render \}/);
  });

  it.each(VIEWS)("%s declares no name common.js declares (the panel inlines both)", (view) => {
    const declared = (source) =>
      [...source.matchAll(/^(?:export\s+)?(?:async\s+)?(?:function\*?|const|let|var|class)\s+([\w$]+)/gm)].map(
        (m) => m[1],
      );
    const common = new Set(declared(read("common.js")));
    expect(declared(read(view)).filter((name) => common.has(name))).toEqual([]);
  });

  it("common.js imports nothing and exports no default", () => {
    const source = read("common.js");
    expect(source).not.toMatch(/^\s*import\b|\bimport\s*\(/m);
    expect(source).not.toMatch(/export default/);
  });

  it("the stylesheet fetches nothing from a network", () => {
    const css = read("podbook.css");
    expect(css).not.toMatch(/@import|url\(|https?:/);
  });
});

describe("formatting helpers", () => {
  it("formats GPU and CPU shapes", () => {
    expect(formatShape({ gpu: { id: "NVIDIA GeForce RTX 4090", count: 2 } })).toBe(
      "2 × NVIDIA GeForce RTX 4090",
    );
    expect(formatShape({ gpu: { id: "NVIDIA L4" } })).toBe("1 × NVIDIA L4");
    expect(formatShape({ cpu: { id: "cpu3g", vcpuCount: 8, memory: 32 } })).toBe(
      "cpu3g · 8 vCPU · 32 GB",
    );
    expect(formatShape({})).toBe("—");
  });

  it("formats cost per hour", () => {
    expect(formatCost(0.69)).toBe("$0.69/h");
    expect(formatCost(0)).toBe("$0.00/h");
    expect(formatCost(0.034)).toBe("$0.034/h");
    expect(formatCost(23.92)).toBe("$23.92/h");
    expect(formatCost(undefined)).toBe("—");
  });

  it("formats uptime", () => {
    expect(formatUptime(42)).toBe("42s");
    expect(formatUptime(307)).toBe("5m 07s");
    expect(formatUptime(7380)).toBe("2h 03m");
    expect(formatUptime(273600)).toBe("3d 4h");
    expect(formatUptime(undefined)).toBe("—");
  });

  it("masks the env keys the notebook masks", () => {
    for (const key of ["JUPYTER_PASSWORD", "PUBLIC_KEY", "HF_TOKEN", "aws_secret", "OPENAI_API_KEY"]) {
      expect(isSecretKey(key)).toBe(true);
      expect(displayEnvValue(key, "plain")).toBe(MASK);
    }
    expect(isSecretKey("MODE")).toBe(false);
    expect(displayEnvValue("MODE", "train")).toBe("train");
  });
});
