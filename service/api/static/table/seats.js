// What this browser holds for each game: its seat and token, and for the game's creator the
// table token and the invite links. Kept in localStorage, so a reload keeps the seat; never in
// the address. Never the host token: it sees every hand, and the creator also sits at the table.

const KEY = "mexican-train.seats";

function load() {
  let all;
  try {
    all = JSON.parse(localStorage.getItem(KEY) || "{}") || {};
  } catch (error) {
    return {};
  }
  // Pages before table tokens kept the creator's host token: forget it.
  if (Object.values(all).some((game) => game && game.hostToken)) {
    for (const game of Object.values(all)) if (game) delete game.hostToken;
    localStorage.setItem(KEY, JSON.stringify(all));
  }
  return all;
}

export function held(gameId) {
  return load()[gameId] || null;
}

// The games this browser holds a seat in, the most recent first.
export function heldGames() {
  return Object.entries(load())
    .filter(([, game]) => game && game.token)
    .sort((a, b) => (b[1].updated || 0) - (a[1].updated || 0));
}

export function remember(gameId, data) {
  const all = load();
  all[gameId] = { ...(all[gameId] || {}), ...data, updated: Date.now() };
  // Old games expire on the server; keep the 50 most recent here.
  const recent = Object.entries(all).sort((a, b) => b[1].updated - a[1].updated).slice(0, 50);
  localStorage.setItem(KEY, JSON.stringify(Object.fromEntries(recent)));
}

export function forget(gameId) {
  const all = load();
  delete all[gameId];
  localStorage.setItem(KEY, JSON.stringify(all));
}
