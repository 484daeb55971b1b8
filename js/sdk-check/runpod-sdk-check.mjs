// The service's official JS SDK (runpod-sdk, unmodified, from js/node_modules) against a
// queue API: tests/worker/test_runpod_sdk_js.py runs this against the podbook emulator.
//
//   node runpod-sdk-check.mjs BASE_URL API_KEY GATED_ENDPOINT STREAM_ENDPOINT
//
// BASE_URL is what a user passes as the SDK's `baseUrl` (the service's is
// https://api.runpod.ai/v2; the emulator's is http://HOST:PORT/v2). GATED_ENDPOINT is served
// by a worker whose jobs with `input.gate = NAME` end only once the test opens gate NAME;
// STREAM_ENDPOINT streams like the built-in `stream-demo`.
//
// Protocol on stdout (other lines are the SDK's own console.log): each line of ours starts
// with "sdk-check " and carries one JSON object: {"open": NAME} asks the test to open a gate;
// {"step": NAME, "result": ..., "sent": [...]} is what one step got back and the requests
// it sent ("METHOD /path?query", observed by wrapping the global fetch the SDK calls);
// {"failed": message} ends the run early.

import runpodSdk from "runpod-sdk";

const [baseUrl, apiKey, gatedId, streamId] = process.argv.slice(2);
const STEP_DEADLINE_MS = 60_000;
const say = (message) => process.stdout.write(`sdk-check ${JSON.stringify(message)}\n`);

let sent = [];
let gateOnStatusSync = null; // a gate to open when the SDK goes on with status-sync
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === "string" ? input : input.url);
  sent.push(`${init?.method ?? "GET"} ${url.pathname}${url.search}`);
  if (gateOnStatusSync !== null && url.pathname.includes("/status-sync/")) {
    say({ open: gateOnStatusSync });
    gateOnStatusSync = null;
  }
  return realFetch(input, init);
};

async function step(name, body) {
  sent = [];
  const timer = setTimeout(() => {
    const line = { failed: `step ${name} took over ${STEP_DEADLINE_MS} ms`, sent: sent.slice(-20) };
    process.stdout.write(`sdk-check ${JSON.stringify(line)}\n`, () => process.exit(3));
  }, STEP_DEADLINE_MS);
  try {
    const result = await body();
    say({ step: name, result, sent });
    return result;
  } finally {
    clearTimeout(timer);
  }
}

/** What the SDK throws for an HTTP error (it does not catch them itself). */
function httpError(error) {
  return { status: error?.response?.status ?? null, data: error?.response?.data ?? null };
}

/** Read the status until `wanted` (a job taken by the worker), 20 ms apart. */
async function untilStatus(endpoint, id, wanted) {
  for (;;) {
    const record = await endpoint.status(id);
    if (record.status === wanted) return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sdk = runpodSdk(apiKey, { baseUrl });
const gated = sdk.endpoint(gatedId);
const streaming = sdk.endpoint(streamId);

try {
  await step("run-status", async () => {
    const queued = await gated.run({ input: { word: "hello" } });
    const status = await gated.status(queued.id);
    const final = await gated.statusSync(queued.id, 20_000);
    return { queued, status, final };
  });
  await step("runsync-fast", () => gated.runSync({ input: { word: "fast" } }, 20_000));
  await step("runsync-outlives-its-wait", () => {
    gateOnStatusSync = "slow";
    return gated.runSync({ input: { word: "slow", gate: "slow" } }, 2_000);
  });
  await step("cancel", async () => {
    const job = await gated.run({ input: { gate: "cancelled" } });
    const cancelled = await gated.cancel(job.id);
    const status = await gated.status(job.id);
    say({ open: "cancelled" }); // let the handler return if it had taken the job
    return { cancelled, status };
  });
  await step("purge-queue", async () => {
    const busy = await gated.run({ input: { gate: "busy", word: "busy" } });
    await untilStatus(gated, busy.id, "IN_PROGRESS"); // the only worker slot is taken
    const waiting = [
      await gated.run({ input: { word: "never run 1" } }),
      await gated.run({ input: { word: "never run 2" } }),
    ];
    const healthBefore = await gated.health();
    const purged = await gated.purgeQueue();
    const waitingAfter = [];
    for (const job of waiting) waitingAfter.push(await gated.status(job.id));
    say({ open: "busy" });
    const busyFinal = await gated.statusSync(busy.id, 20_000);
    return { healthBefore, purged, waitingAfter, busyFinal };
  });
  await step("health", () => gated.health());
  await step("errors", async () => {
    try {
      return { answered: await gated.status("no-such-job") };
    } catch (error) {
      return httpError(error);
    }
  });
  await step("stream", async () => {
    const job = await streaming.run({
      input: { prompt: "Why do GPUs stream?", max_tokens: 6, delay_ms: 5 },
    });
    const items = [];
    for await (const item of streaming.stream(job.id)) items.push(item);
    const final = await streaming.status(job.id);
    return { items, final };
  });
  say({ done: true });
} catch (error) {
  say({ failed: `${error?.message ?? error}`, http: httpError(error), sent: sent.slice(-20) });
  process.exitCode = 2;
}
