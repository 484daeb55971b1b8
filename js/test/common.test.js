import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { VIEWS, VIEWS_DIR, commonBlock, viewBlock } from "../scripts/sync-common.mjs";
import {
  formatCost,
  formatShape,
  formatUptime,
  isSecretKey,
  displayEnvValue,
  MASK,
} from "../src/common.js";

describe("views are self-contained ESM", () => {
  it.each(VIEWS)("%s carries the current copy of common.js (run `npm run sync`)", (view) => {
    expect(viewBlock(view)).toBe(commonBlock());
  });

  it.each(VIEWS)("%s imports nothing (anywidget loads it from a blob URL)", (view) => {
    const source = readFileSync(`${VIEWS_DIR}${view}`, "utf8");
    expect(source).not.toMatch(/^\s*import\b/m);
    expect(source).not.toMatch(/\bimport\s*\(/);
    expect(source).not.toMatch(/\bfetch\s*\(|XMLHttpRequest|WebSocket/);
    expect(source).toMatch(/export default \{ render \}/);
  });

  it("the stylesheet fetches nothing from a network", () => {
    const css = readFileSync(`${VIEWS_DIR}podbook.css`, "utf8");
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
