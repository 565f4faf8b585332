// Plays one whole game against two of the server's bots: creates the table, follows the game's
// stream with EventSource (a single-use stream ticket in the URL, since EventSource sends no
// headers), and plays the first of the legal moves that entries and answers carry on its turn.
//
//   node dist/play.js <base url> <path of openapi.json>
//
// Prints one JSON line when the game is over: its id, final version, winners, our moves, how
// many refusals for now (429, 502-504) it waited out (as their Retry-After said), and how many
// requests whose answer never came it sent again (api.ts).

import { randomUUID } from "node:crypto";
import { EventSource } from "eventsource";
import type { FetchLike } from "eventsource";
import { api, bearer, entryValidator, parseEntry, retryAfterMs, waited } from "./api.js";
import type { Api, Entry, Move } from "./api.js";

const [baseUrl = "http://127.0.0.1:8000", specPath = "../../openapi/openapi.json"] =
  process.argv.slice(2);
const GIVE_UP_MS = 240_000;
/** The wait before a stream is opened again after it ended or failed, unless its refusal
 * (429: the address's streams are all open; 503) said how long in Retry-After. */
const REOPEN_MS = 500;
/** The longest Retry-After a stream's refusal is waited out for. */
const MAX_REOPEN_MS = 60_000;

interface Seat {
  client: Api;
  gameId: string;
  token: string;
  moves: number;
}

async function createTable(client: Api): Promise<Seat> {
  const { data, error } = await client.POST("/api/v1/games", {
    body: {
      players: ["ts", { name: "cpu1", bot: "random" }, { name: "cpu2", bot: "greedy" }],
      options: { set: 6, rounds: 2 },
      auto_deal: true,
    },
    // A bare UUID: the service takes it as it takes the quoted form.
    params: { header: { "Idempotency-Key": randomUUID() } },
  });
  if (error) throw new Error(`create: ${error.code}: ${error.detail}`);
  const token = data.seats[0]?.token;
  if (!token) throw new Error("seat 0 has no token");
  return { client, gameId: data.game_id, token, moves: 0 };
}

/** The newest thing this seat knows: a version and, on its turn, its legal moves there. */
interface Turn {
  version: number;
  moves: Move[] | null;
}

/** Plays while the newest answer or entry gives this seat moves: the answers carry them
 * (`legal_moves`), so each action is one request and `legal-moves` is never asked. */
async function playTurns(seat: Seat, turn: Turn): Promise<void> {
  const path = { game_id: seat.gameId };
  for (let move = turn.moves?.[0]; move !== undefined; move = turn.moves?.[0]) {
    const done = await seat.client.POST("/api/v1/games/{game_id}/moves", {
      params: {
        path,
        // No Idempotency-Key: patientFetch makes one for the call, sent on each of its tries.
        header: { "If-Match": `"${turn.version}"` },
      },
      headers: bearer(seat.token),
      body: move, // listed moves are `Move` bodies as typed
    });
    if (done.error) {
      // Someone moved in between (a bot, the turn clock): the stream brings what happened.
      if (done.response.status === 409 || done.response.status === 412) turn.moves = null;
      else throw new Error(`move: ${done.error.code}: ${done.error.detail}`);
      continue;
    }
    seat.moves += 1;
    if (done.data.version >= turn.version) {
      turn.version = done.data.version;
      turn.moves = done.data.legal_moves ?? null;
    }
  }
}

/** Runs `act` once at a time: a call while it runs asks for one more run after it. `idle`
 * resolves once no run is going on, so a move whose answer is still on its way is counted. */
function serialised(
  act: () => Promise<void>,
  failed: (error: unknown) => void,
): { kick: () => void; idle: () => Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  const run = async (): Promise<void> => {
    try {
      do {
        again = false;
        await act();
      } while (again);
    } catch (error) {
      failed(error);
    } finally {
      running = null;
    }
  };
  return {
    kick: () => {
      if (running) again = true;
      else running = run();
    },
    idle: async () => {
      while (running) await running;
    },
  };
}

async function ticket(seat: Seat): Promise<string> {
  const { data, error } = await seat.client.POST("/api/v1/games/{game_id}/stream-tickets", {
    // patientFetch gives it a key, so a ticket whose answer was lost is asked for again.
    params: { path: { game_id: seat.gameId } },
    headers: bearer(seat.token),
  });
  if (error) throw new Error(`stream ticket: ${error.code}`);
  return data.ticket;
}

function endsGame(entry: Entry): boolean {
  return entry.events.some((event) => event.type === "game_over");
}

/** Follows the game until its last entry, playing our turns; resolves with the last version. */
function follow(seat: Seat, isEntry: ReturnType<typeof entryValidator>): Promise<number> {
  return new Promise((resolve, reject) => {
    let last = 0;
    let source: EventSource | null = null;
    const turn: Turn = { version: 0, moves: null };
    const act = serialised(() => playTurns(seat, turn), reject);
    const finish = (version: number): void => {
      act.idle().then(() => resolve(version), reject);
    };
    const open = async (): Promise<void> => {
      const url = new URL(`/api/v1/games/${seat.gameId}/events`, baseUrl);
      url.searchParams.set("after", String(last));
      url.searchParams.set("access_token", await ticket(seat));
      // EventSource shows no status: its fetch keeps what a refusal asks for.
      let reopenMs = REOPEN_MS;
      const watching: FetchLike = async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 429 || response.status === 503) {
          reopenMs = Math.min(MAX_REOPEN_MS, Math.max(REOPEN_MS, retryAfterMs(response)));
        }
        return response;
      };
      const current = new EventSource(url, { fetch: watching });
      source = current;
      current.addEventListener("entry", (message) => {
        const entry = parseEntry(message.data, isEntry);
        if (entry === null) return reject(new Error(`not an entry: ${String(message.data)}`));
        last = entry.version;
        if (endsGame(entry)) {
          current.close();
          return finish(last);
        }
        if (entry.version > turn.version) {
          turn.version = entry.version;
          turn.moves = entry.legal_moves ?? null;
        }
        act.kick();
      });
      // A ticket opens one connection: reconnect with a fresh one from the last entry seen,
      // after what a refusal's Retry-After asked for. A 409 is the only one of GET /events
      // (after_ahead_of_log): Redis lost entries we were sent, and the versions past its
      // stored one come anew, so go on from the game as stored.
      current.addEventListener("error", (event) => {
        current.close();
        const next = event.code === 409 ? reload : open;
        setTimeout(() => void next().catch(reject), reopenMs);
      });
    };
    // The game view gives the stored version and this seat's moves there.
    const reload = async (): Promise<void> => {
      const { data, error } = await seat.client.GET("/api/v1/games/{game_id}", {
        params: { path: { game_id: seat.gameId } },
        headers: bearer(seat.token),
      });
      if (error) throw new Error(`view: ${error.code}`);
      if (data.status === "game_over") return finish(data.version); // its end was lost to us
      last = data.version;
      turn.version = data.version;
      turn.moves = data.legal_moves ?? null;
      act.kick();
      await open();
    };
    open().catch(reject);
    setTimeout(() => {
      source?.close();
      reject(new Error(`the game did not end within ${GIVE_UP_MS} ms (at version ${last})`));
    }, GIVE_UP_MS).unref();
  });
}

async function main(): Promise<void> {
  const seat = await createTable(api(baseUrl));
  const version = await follow(seat, entryValidator(specPath));
  const score = await seat.client.GET("/api/v1/games/{game_id}/score", {
    params: { path: { game_id: seat.gameId } },
  });
  if (score.error) throw new Error(`score: ${score.error.code}`);
  const { status, winners, rounds, totals } = score.data;
  console.log(
    JSON.stringify({
      game_id: seat.gameId,
      version,
      status,
      winners,
      rounds,
      totals,
      moves: seat.moves,
      waited: waited.count,
      resent: waited.resent,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
