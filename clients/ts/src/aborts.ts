// The caller's AbortSignal on a request that is sent again, against a stand-in server on
// loopback. `/stream`: the first try is answered 503 (Retry-After: 0), the second with a
// stream's headers and a first chunk, then nothing more; the caller aborts once it has the
// headers, and reading the body must then fail at once, not wait for a body that never ends.
// `/busy`: every try is answered 503 (Retry-After: 30); the caller aborts during the wait,
// which must end it at once instead of waiting it out and sending again.
//
//   node dist/aborts.js
//
// Prints {"stream": {"tries", "status", "outcome", "ms"}, "busy": {"tries", "outcome", "ms"}}
// as JSON: `outcome` is "aborted" when the read (or the call) failed with the abort, "waiting"
// when it went on for GIVE_UP_MS.

import { createServer } from "node:http";
import { patientFetch } from "./api.js";

const GIVE_UP_MS = 3000;

const tries = { stream: 0, busy: 0 };
const server = createServer((request, response) => {
  if (request.url === "/busy") {
    tries.busy += 1;
    response.writeHead(503, { "Retry-After": "30" });
    response.end();
    return;
  }
  tries.stream += 1;
  if (tries.stream === 1) {
    response.writeHead(503, { "Retry-After": "0" });
    response.end();
    return;
  }
  response.writeHead(200, { "Content-Type": "text/event-stream" });
  response.write("retry: 1000\n\n"); // and then nothing, as a quiet game's stream
});

/** How `work` ended: "aborted" when it failed with an abort, "waiting" past GIVE_UP_MS. */
function outcome(work: Promise<unknown>, reason: Error): Promise<string> {
  const failed = (error: unknown): string =>
    error === reason || (error instanceof Error && error.name === "AbortError")
      ? "aborted"
      : `failed: ${String(error)}`;
  return Promise.race([
    work.then(() => "ended", failed),
    new Promise<string>((late) => setTimeout(() => late("waiting"), GIVE_UP_MS)),
  ]);
}

async function stream(base: string): Promise<object> {
  const caller = new AbortController();
  const reason = new Error("the caller gave up");
  const response = await patientFetch(new Request(`${base}/stream`, { signal: caller.signal }));
  const started = Date.now();
  caller.abort(reason);
  const ended = await outcome(response.text(), reason);
  return { tries: tries.stream, status: response.status, outcome: ended, ms: Date.now() - started };
}

async function busy(base: string): Promise<object> {
  const caller = new AbortController();
  const reason = new Error("the caller gave up");
  const call = patientFetch(new Request(`${base}/busy`, { signal: caller.signal }));
  while (tries.busy === 0) await new Promise((waited) => setTimeout(waited, 20));
  await new Promise((waited) => setTimeout(waited, 200)); // in the Retry-After wait by now
  const started = Date.now();
  caller.abort(reason);
  const ended = await outcome(call, reason);
  return { tries: tries.busy, outcome: ended, ms: Date.now() - started };
}

async function main(): Promise<void> {
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP port");
  const base = `http://127.0.0.1:${address.port}`;
  const found = { stream: await stream(base), busy: await busy(base) };
  console.log(JSON.stringify(found));
  server.closeAllConnections();
  server.close();
  process.exit(0); // a wait the abort did not end would hold the process for its 30 s
}

await main();
