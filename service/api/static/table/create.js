// Create a game: this browser's player takes seat 0; every other seat is a bot (at a level from
// GET /bots) or an open seat for a friend, who joins through an invite link. Above the form,
// the games this browser holds a seat in, to resume, and quick play (a seat at a table that
// seeks fill).

import { ApiError, game } from "./api.js";
import { h, replace } from "./dom.js";
import { t, tn } from "./i18n.js";
import { worded } from "./hints.js";
import { forget, heldGames, remember } from "./seats.js";

const FALLBACK_BOTS = [{ name: "random" }, { name: "greedy" }, { name: "planner" }];
const MAX_PLAYERS = 8;

const presets = () => [["standard", t("rules.standard")], ["tournament", t("rules.tournament")], ["classic", t("rules.classic_long")]];
const clocks = () => [[0, t("create.no_clock")], [15, tn("create.seconds", 15)], [30, tn("create.seconds", 30)], [60, tn("create.minutes", 1)], [120, tn("create.minutes", 2)], [300, tn("create.minutes", 5)]];
const lengths = () => [["", t("create.full_game")], [1, tn("create.rounds", 1)], [3, tn("create.rounds", 3)], [5, tn("create.rounds", 5)]];

const levelOptions = (bots, selected) =>
  bots.map((b) => h("option", { value: b.name, title: b.description || null, selected: b.name === selected }, b.name));

async function botLevels() {
  try {
    const levels = await game.bots();
    const list = Array.isArray(levels) ? levels : levels.bots;
    return list && list.length ? list : FALLBACK_BOTS;
  } catch (error) {
    return FALLBACK_BOTS;
  }
}

function options(pairs, selected) {
  return pairs.map(([value, label]) => h("option", { value, selected: String(value) === String(selected) }, label));
}

function seatRow(index, bots) {
  const level = h("select", { name: `level-${index}`, "aria-label": t("create.seat_level", { seat: index + 1 }) }, levelOptions(bots, "greedy"));
  const kind = h("select", { name: `kind-${index}`, "aria-label": t("create.seat_is", { seat: index + 1 }) },
    options([["bot", t("create.bot")], ["open", t("create.friend")]], "bot"));
  kind.addEventListener("change", () => {
    level.disabled = kind.value !== "bot";
    level.closest(".seat-row").classList.toggle("is-open", kind.value === "open");
  });
  return h("div", { class: "seat-row" }, h("span", { class: "seat-label" }, t("seat.number", { n: index + 1 })), kind, level);
}

function players(form, count, me) {
  const list = [{ name: me }];
  for (let i = 1; i < count; i += 1) {
    const kind = form.elements[`kind-${i}`].value;
    const level = form.elements[`level-${i}`].value;
    // Named with the number the form shows for the seat ("Seat 3": index 2), as the server names its bots.
    list.push(kind === "open" ? { open: true } : { name: `${level} ${i + 1}`, bot: level });
  }
  return list;
}

export function joinUrl(gameId, invite) {
  return `${location.origin}/#/join/${encodeURIComponent(gameId)}/${encodeURIComponent(invite)}`;
}

async function submit(form, error) {
  const me = form.elements.name.value.trim() || t("create.default_name");
  const count = Number(form.elements.count.value);
  const body = {
    players: players(form, count, me),
    preset: form.elements.preset.value,
    turn_seconds: Number(form.elements.clock.value),
    auto_deal: form.elements.auto.checked,
  };
  if (form.elements.rounds.value) body.options = { rounds: Number(form.elements.rounds.value) };
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  error.textContent = "";
  try {
    const created = await game.create(body);
    const invites = {};
    for (const seat of created.seats) {
      // Built from this page's own address: the one the friends can reach it at.
      if (seat.invite) invites[seat.seat] = joinUrl(created.game_id, seat.invite);
    }
    // The creator keeps their seat's token and the table token (deal, seats), never the host
    // token: it sees every hand, and its holder also sits at the table.
    remember(created.game_id, { seat: 0, name: me, token: created.seats[0].token, tableToken: created.table_token, invites });
    location.hash = `#/game/${created.game_id}`;
  } catch (problem) {
    if (!(problem instanceof ApiError)) throw problem;
    error.textContent = worded(problem).text;
    button.disabled = false;
  }
}

function gameStatus(view, seat) {
  if (view.status === "game_over") return t("games.over");
  if (view.status === "waiting_deal") return t("games.waiting");
  const turn = view.status === "in_round" && view.turn === seat;
  return `${t("facts.round", { round: view.round, rounds: view.rounds })} · ${turn ? t("status.your_turn") : t("games.playing")}`;
}

// One held game: its players and where it stands, asked of the server; a gone one can be forgotten.
function gameRow(gameId, mine, list) {
  const state = h("span", { class: "game-state" }, t("games.asking"));
  const row = h("li", { class: "my-game", dataset: { game: gameId } },
    h("a", { href: `#/game/${encodeURIComponent(gameId)}`, class: "resume" }, mine.name ? t("games.resume", { name: mine.name }) : t("games.open")),
    state);
  game.view(gameId, mine.token).then((view) => {
    state.textContent = `${view.players.map((p) => p.name).join(", ")} · ${gameStatus(view, mine.seat)}`;
  }, (error) => {
    if (!(error instanceof ApiError)) throw error;
    if (error.status !== 404) {
      state.textContent = worded(error).text;
      return;
    }
    state.textContent = t("games.gone");
    row.append(h("button", { type: "button", class: "button forget", onclick: () => { forget(gameId); row.remove(); if (!list.children.length) list.closest("section").remove(); } }, t("games.forget")));
  });
  return row;
}

function myGames() {
  const games = heldGames();
  if (!games.length) return null;
  const list = h("ul", { class: "my-games-list" });
  for (const [gameId, mine] of games) list.append(gameRow(gameId, mine, list));
  return h("section", { class: "panel my-games", "aria-labelledby": "my-games-title" },
    h("h2", { id: "my-games-title" }, t("games.title")), list);
}

// Quick play: a seat at the oldest table that seeks of the same kind made, or a new one; the
// game deals by itself once full (bots fill what is still empty after 30 s, if asked).
function quickPlay() {
  const error = h("p", { class: "problem", role: "alert", id: "quick-problem" });
  const form = h("form", { class: "panel quick", "aria-labelledby": "quick-title" },
    h("h2", { id: "quick-title" }, t("quick.title")),
    h("p", { class: "lead" }, t("quick.lead")),
    h("label", { for: "quick-name" }, t("create.your_name")),
    h("input", { id: "quick-name", name: "name", value: t("create.default_name"), maxlength: 40, autocomplete: "nickname", required: true }),
    h("label", { for: "quick-count" }, t("quick.players")),
    h("select", { id: "quick-count", name: "count" }, options(Array.from({ length: MAX_PLAYERS - 1 }, (_, i) => [i + 2, tn("create.players_n", i + 2)]), 4)),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "bots", id: "quick-bots", checked: true }), " ", t("quick.bots_after")),
    error,
    h("button", { type: "submit", class: "primary" }, t("quick.submit")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    seek(form, error);
  });
  return form;
}

async function seek(form, error) {
  const name = form.elements.name.value.trim() || t("create.default_name");
  const body = {
    name,
    players: Number(form.elements.count.value),
    fill_with_bots_after: form.elements.bots.checked ? 30 : null,
  };
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  error.textContent = "";
  try {
    const seated = await game.seek(body);
    const mine = { seat: seated.seat, name, token: seated.token };
    if (seated.table_token) mine.tableToken = seated.table_token;
    remember(seated.game_id, mine);
    location.hash = `#/game/${seated.game_id}`;
  } catch (problem) {
    if (!(problem instanceof ApiError)) throw problem;
    error.textContent = worded(problem).text;
    button.disabled = false;
  }
}

export function showCreate(app) {
  document.title = `${t("app.title")} — ${t("create.title")}`;
  const seats = h("div", { class: "seats", id: "seats" });
  const count = h("select", { name: "count", id: "count" },
    options(Array.from({ length: MAX_PLAYERS - 1 }, (_, i) => [i + 2, tn("create.players_n", i + 2)]), 4));
  const error = h("p", { class: "problem", role: "alert", id: "create-problem" });
  let bots = FALLBACK_BOTS;
  const fill = () => {
    const keep = Array.from(seats.querySelectorAll(".seat-row"));
    const rows = [];
    for (let i = 1; i < Number(count.value); i += 1) rows.push(keep[i - 1] || seatRow(i, bots));
    replace(seats, rows);
  };
  count.addEventListener("change", fill);
  const form = h("form", { class: "panel create", "aria-labelledby": "create-title" },
    h("h1", { id: "create-title" }, t("create.title")),
    h("p", { class: "lead" }, t("create.lead")),
    h("label", { for: "name" }, t("create.your_name")),
    h("input", { id: "name", name: "name", value: t("create.default_name"), maxlength: 40, autocomplete: "nickname", required: true }),
    h("label", { for: "count" }, t("create.players")), count,
    h("fieldset", {}, h("legend", {}, t("create.other_seats")), seats),
    h("div", { class: "row2" },
      h("div", {}, h("label", { for: "preset" }, t("create.rules")), h("select", { id: "preset", name: "preset" }, options(presets(), "standard"))),
      h("div", {}, h("label", { for: "clock" }, t("create.clock")), h("select", { id: "clock", name: "clock" }, options(clocks(), 0)))),
    h("label", { for: "rounds" }, t("create.length")), h("select", { id: "rounds", name: "rounds" }, options(lengths(), "")),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "auto", id: "auto", checked: true }), " ", t("create.auto_deal")),
    error,
    h("button", { type: "submit", class: "primary" }, t("create.submit")));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, error);
  });
  replace(app, h("div", { class: "front" }, myGames(), quickPlay(), form));
  fill();
  botLevels().then((levels) => {
    bots = levels;
    for (const select of seats.querySelectorAll("select[name^=level-]")) {
      const value = select.value;
      replace(select, levelOptions(bots, value));
    }
  });
  return { stop() {} };
}
