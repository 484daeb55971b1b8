// Copies src/common.js into the `<podbook-common>` block of each view, so every view stays
// one self-contained ESM file (anywidget imports it from a blob URL, where relative imports
// cannot resolve). Run with `npm run sync`; `test/common.test.js` fails when a copy drifts.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const VIEWS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "/");
export const VIEWS = ["pod.js", "podlist.js", "cluster.js", "job.js", "health.js", "billing.js", "catalog.js"];
const BLOCK = /\/\/ <podbook-common>\n[\s\S]*?\/\/ <\/podbook-common>\n/;

/** The block a view must carry: common.js verbatim between the markers. */
export function commonBlock() {
  const common = readFileSync(`${VIEWS_DIR}common.js`, "utf8");
  return `// <podbook-common>\n${common.trimEnd()}\n// </podbook-common>\n`;
}

/** The view's current copy of the block, or null when the markers are missing. */
export function viewBlock(view) {
  const match = readFileSync(`${VIEWS_DIR}${view}`, "utf8").match(BLOCK);
  return match ? match[0] : null;
}

function sync() {
  const block = commonBlock();
  for (const view of VIEWS) {
    const path = `${VIEWS_DIR}${view}`;
    const source = readFileSync(path, "utf8");
    if (!BLOCK.test(source)) throw new Error(`${view}: no // <podbook-common> block to fill`);
    const updated = source.replace(BLOCK, () => block);
    if (updated !== source) {
      writeFileSync(path, updated);
      console.log(`synced ${view}`);
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) sync();
