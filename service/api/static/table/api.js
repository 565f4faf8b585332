// The public HTTP API, as any front end calls it: bearer tokens, JSON bodies, RFC 9457 problems.

export const API = "/api/v1";

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || "unknown";
    this.problem = problem;
  }
}

// A fresh key per request makes a retry of that request safe (crypto.randomUUID needs a secure
// context; a LAN address over plain http is not one).
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `"${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}"`;
}

export async function call(method, path, { token, body } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (method !== "GET") headers["Idempotency-Key"] = idempotencyKey();
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
    throw new ApiError(0, { code: "network", detail: "The server cannot be reached; check the connection and try again." });
  }
  const text = await response.text();
  let data = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch (error) {
    data = { detail: `The server answered ${response.status} without JSON.` };
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const game = {
  create: (body) => call("POST", "/games", { body }),
  view: (id, token) => call("GET", `/games/${encodeURIComponent(id)}`, { token }),
  legal: (id, token) => call("GET", `/games/${encodeURIComponent(id)}/legal-moves`, { token }),
  score: (id) => call("GET", `/games/${encodeURIComponent(id)}/score`),
  deal: (id, hostToken) => call("POST", `/games/${encodeURIComponent(id)}/deal`, { token: hostToken }),
  move: (id, token, move) => call("POST", `/games/${encodeURIComponent(id)}/moves`, { token, body: move }),
  join: (id, invite, name) => call("POST", `/games/${encodeURIComponent(id)}/join`, { body: { invite, name } }),
  seat: (id, hostToken, seat, body) =>
    call("PUT", `/games/${encodeURIComponent(id)}/seats/${seat}`, { token: hostToken, body }),
  events: (id, token, after) =>
    call("GET", `/games/${encodeURIComponent(id)}/events?after=${after}`, { token }),
  bots: () => call("GET", "/bots"),
};

export function eventsUrl(id, token, after) {
  const query = new URLSearchParams({ after: String(after) });
  // EventSource cannot send headers: the events endpoint alone takes the token in the query.
  if (token) query.set("access_token", token);
  return `${API}/games/${encodeURIComponent(id)}/events?${query}`;
}
