// What this browser holds for each game: its seat and token, and for the game's creator the
// host token and the invite links. Kept in localStorage, so a reload keeps the seat; never in
// the address.

const KEY = "mexican-train.seats";

function load() {
  try {
    return JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch (error) {
    return {};
  }
}

export function held(gameId) {
  return load()[gameId] || null;
}

export function remember(gameId, data) {
  const all = load();
  all[gameId] = { ...(all[gameId] || {}), ...data, updated: Date.now() };
  // Old games expire on the server; keep the 50 most recent here.
  const recent = Object.entries(all).sort((a, b) => b[1].updated - a[1].updated).slice(0, 50);
  localStorage.setItem(KEY, JSON.stringify(Object.fromEntries(recent)));
}
