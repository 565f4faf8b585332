// An answer whose body stalls, against a stand-in server on loopback: the first try of
// `POST /api/v1/games` gets the answer's headers and the first bytes of its JSON body, then
// nothing more; the second try gets the whole answer. The client must take the first as
// unanswered and send the request again (with its one key), not hand its caller a body that
// does not end.
//
//   node dist/stalls.js
//
// Prints {"tries", "keys", "outcome", "game_id"} as JSON: `keys`, how many different
// Idempotency-Keys the tries carried; `outcome` "answered" when the call ended with the game,
// "waiting" when it went on for GIVE_UP_MS, else what it failed with.

import { createServer } from "node:http";
import { api } from "./api.js";

/** Past the client's 30 s for an answer, well short of fetch's own 300 s for a body. */
const GIVE_UP_MS = 45_000;
const BODY = JSON.stringify({ game_id: "stalled0001" });

const keys: string[] = [];
const server = createServer((request, response) => {
  keys.push(String(request.headers["idempotency-key"] ?? ""));
  request.resume();
  const length = String(Buffer.byteLength(BODY));
  response.writeHead(201, { "Content-Type": "application/json", "Content-Length": length });
  if (keys.length === 1) {
    response.write(BODY.slice(0, 5)); // and then nothing, as an instance that hung
    return;
  }
  response.end(BODY);
});

async function main(): Promise<void> {
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no TCP port");
  const call = api(`http://127.0.0.1:${address.port}`).POST("/api/v1/games", {
    body: { players: ["ann", "bo"] },
  });
  const ended = await Promise.race([
    call.then(
      ({ data }) => ({ outcome: data ? "answered" : "refused", game_id: data?.game_id ?? null }),
      (error: unknown) => ({ outcome: `failed: ${String(error)}`, game_id: null }),
    ),
    new Promise<{ outcome: string; game_id: null }>((late) =>
      setTimeout(() => late({ outcome: "waiting", game_id: null }), GIVE_UP_MS),
    ),
  ]);
  console.log(JSON.stringify({ tries: keys.length, keys: new Set(keys).size, ...ended }));
  server.closeAllConnections();
  server.close();
  process.exit(0); // a call still waiting would hold the process for fetch's own timeout
}

await main();
