// The public HTTP API, as any front end calls it: bearer tokens, JSON bodies, RFC 9457 problems.

export const API = "/api/v1";

export class ApiError extends Error {
  // `retryAfter`: the wait in ms the answer's Retry-After asked for, or null without one.
  constructor(status, problem, retryAfter = null) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || "unknown";
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

// Retry-After (RFC 9110 section 10.2.3) in ms: delay-seconds, or an HTTP-date, which is read
// against the answer's own Date so that this device's clock does not matter. Null when absent
// or unreadable.
export function retryAfterMs(value, date, now = Date.now()) {
  const text = (value || "").trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const until = Date.parse(text);
  if (!text || Number.isNaN(until)) return null;
  const sent = Date.parse(date || "");
  return Math.max(0, until - (Number.isNaN(sent) ? now : sent));
}

// The longest a resend waits, whatever Retry-After says (a proxy may ask for hours): a resend
// under the same key is harmless, and a player left waiting longer would give up.
export const RETRY_MAX_MS = 30000;

// How long to wait before sending again a request that got `error`: as long as its Retry-After
// asks, up to RETRY_MAX_MS, and never less than `least` (the caller's own pace).
export function retryWait(error, least) {
  const asked = error.retryAfter === null || error.retryAfter === undefined ? 0 : error.retryAfter;
  return Math.max(least, Math.min(RETRY_MAX_MS, asked));
}

// Whether an error is an answer of the app's: a problem with a code of its own, 5xx ones
// included (storage_full, internal_error: an instance took the request and said why). Not when
// nothing answered (network), nor nginx's "unavailable" (no instance answered), nor a 5xx body
// that is no problem at all (call names it "unavailable": a proxy's page).
export function fromServer(error) {
  if (error.status === 0) return false;
  return error.status < 500 || (Boolean(error.problem.code) && error.code !== "unavailable");
}

// Every request with a seat's (or the table's) token on a game counts against one limit, that
// token's on that game: a 429 on any of them (a view polled, a stream ticket, a move) closes the
// window for all, so each timed request of that token on that game waits for the latest end
// asked (pausedFor), not only the one refused. Keyed by game and token: a rematch gives a seat
// the same token in the next game, whose window is its own.
const paused = new Map(); // "game token" -> Date.now() at which its requests may go again

const pauseKey = (gameId, token) => `${gameId} ${token}`;

// The game a request's path is about ("" for none): /games/<id>/...
function gameOf(path) {
  const found = /^\/games\/([^/?]+)/.exec(path);
  return found ? decodeURIComponent(found[1]) : "";
}

function pause(key, ms) {
  const until = Date.now() + Math.min(RETRY_MAX_MS, ms);
  if (until > (paused.get(key) || 0)) paused.set(key, until);
}

// How long (ms) a request with `token` on game `gameId` should still wait, as the last 429 of
// any of its requests there asked; 0 when none asks.
export function pausedFor(gameId, token) {
  const key = pauseKey(gameId, token);
  const left = (paused.get(key) || 0) - Date.now();
  if (left <= 0) paused.delete(key);
  return Math.max(0, left);
}

// A fresh key per request makes a retry of that request safe (crypto.randomUUID needs a secure
// context; a LAN address over plain http is not one).
export function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `"${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

// `key`: the Idempotency-Key of a request sent again, so the server answers it from its first
// answer if that one was applied.
export async function call(method, path, { token, body, key } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (method !== "GET") headers["Idempotency-Key"] = key || idempotencyKey();
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(API + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, { code: "network", detail: "network" });
  }
  const text = await response.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch (error) {
    data = { code: response.status >= 500 ? "unavailable" : "unknown" };
  }
  if (!response.ok) {
    const retryAfter = retryAfterMs(response.headers.get("Retry-After"), response.headers.get("Date"));
    if (response.status === 429 && token && retryAfter) pause(pauseKey(gameOf(path), token), retryAfter);
    throw new ApiError(response.status, data, retryAfter);
  }
  return data;
}

export const game = {
  create: (body) => call("POST", "/games", { body }),
  view: (id, token) => call("GET", `/games/${encodeURIComponent(id)}`, { token }),
  score: (id) => call("GET", `/games/${encodeURIComponent(id)}/score`),
  deal: (id, tableToken) => call("POST", `/games/${encodeURIComponent(id)}/deal`, { token: tableToken }),
  move: (id, token, move, key) => call("POST", `/games/${encodeURIComponent(id)}/moves`, { token, body: move, key }),
  join: (id, invite, name) => call("POST", `/games/${encodeURIComponent(id)}/join`, { body: { invite, name } }),
  seat: (id, tableToken, seat, body) =>
    call("PUT", `/games/${encodeURIComponent(id)}/seats/${seat}`, { token: tableToken, body }),
  ticket: (id, token) => call("POST", `/games/${encodeURIComponent(id)}/stream-tickets`, { token }),
  events: (id, token, after) =>
    call("GET", `/games/${encodeURIComponent(id)}/events?after=${after}`, { token }),
  bots: () => call("GET", "/bots"),
  history: (id) => call("GET", `/games/${encodeURIComponent(id)}/history`),
  transfer: (id, token) => call("POST", `/games/${encodeURIComponent(id)}/transfers`, { token }),
  rematch: (id, token) => call("POST", `/games/${encodeURIComponent(id)}/rematch`, { token }),
  seek: (body) => call("POST", "/lobby/seek", { body }),
  redeem: (id, ticket) =>
    call("POST", `/games/${encodeURIComponent(id)}/transfers/claim`, { body: { ticket } }),
};

export const leaderboard = (kind) => call("GET", `/leaderboard?kind=${encodeURIComponent(kind)}`);

// EventSource cannot send headers, so a stream's credential goes in its URL: a single-use ticket
// (valid one minute), never the token itself, which would stay in proxies' logs.
export function eventsUrl(id, ticket, after) {
  const query = new URLSearchParams({ after: String(after) });
  if (ticket) query.set("access_token", ticket);
  return `${API}/games/${encodeURIComponent(id)}/events?${query}`;
}
