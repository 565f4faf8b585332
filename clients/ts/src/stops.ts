// Opens a standard EventSource (the `eventsource` package) on a game's stream from `after` and
// counts the requests it makes in `watch` milliseconds: on a finished game read to its end, the
// server's 204 must stop it after one request.
//
//   node dist/stops.js <base url> <game id> <after> [watch ms]
//
// Prints {"requests", "readyState", "errors", "entries", "statuses"} as JSON: `statuses`, the
// HTTP status of each error that came with one (a 409 after_ahead_of_log, past the stored log).

import { EventSource } from "eventsource";
import type { FetchLike } from "eventsource";

const [baseUrl = "", gameId = "", after = "0", watch = "3500"] = process.argv.slice(2);

let requests = 0;
let errors = 0;
let entries = 0;
const statuses: number[] = [];
const counting: FetchLike = (url, init) => {
  requests += 1;
  return fetch(url, init);
};
const url = new URL(`/api/v1/games/${gameId}/events`, baseUrl);
url.searchParams.set("after", after);
const source = new EventSource(url, { fetch: counting });
source.addEventListener("entry", () => {
  entries += 1;
});
source.addEventListener("error", (event) => {
  errors += 1;
  if (event.code !== undefined) statuses.push(event.code);
});
setTimeout(() => {
  const readyState = source.readyState;
  source.close();
  console.log(JSON.stringify({ requests, readyState, errors, entries, statuses }));
}, Number(watch));
