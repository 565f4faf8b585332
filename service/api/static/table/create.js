// Create a game: this browser's player takes seat 0; every other seat is a bot (at a level from
// GET /bots) or an open seat for a friend, who joins through an invite link.

import { game } from "./api.js";
import { h, replace } from "./dom.js";
import { remember } from "./seats.js";

const FALLBACK_BOTS = [
  { name: "random", description: "plays any legal move" },
  { name: "greedy", description: "plays its heaviest tile" },
  { name: "planner", description: "plans its longest train" },
];
const PRESETS = [
  ["standard", "Standard"],
  ["tournament", "Tournament"],
  ["classic", "Classic (double-12)"],
];
const CLOCKS = [
  [0, "No clock"],
  [15, "15 seconds"],
  [30, "30 seconds"],
  [60, "1 minute"],
  [120, "2 minutes"],
  [300, "5 minutes"],
];
const LENGTHS = [
  ["", "Full game"],
  [1, "1 round"],
  [3, "3 rounds"],
  [5, "5 rounds"],
];
const MAX_PLAYERS = 8;

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
  const level = h("select", { name: `level-${index}`, "aria-label": `Seat ${index + 1} bot level` }, levelOptions(bots, "greedy"));
  const kind = h("select", { name: `kind-${index}`, "aria-label": `Seat ${index + 1} is` },
    options([["bot", "Bot"], ["open", "Friend (link)"]], "bot"));
  kind.addEventListener("change", () => {
    level.disabled = kind.value !== "bot";
    level.closest(".seat-row").classList.toggle("is-open", kind.value === "open");
  });
  return h("div", { class: "seat-row" },
    h("span", { class: "seat-label" }, `Seat ${index + 1}`), kind, level);
}

function players(form, count, me) {
  const list = [{ name: me }];
  for (let i = 1; i < count; i += 1) {
    const kind = form.elements[`kind-${i}`].value;
    const level = form.elements[`level-${i}`].value;
    list.push(kind === "open" ? { open: true } : { name: `${level} ${i}`, bot: level });
  }
  return list;
}

export function joinUrl(gameId, invite) {
  return `${location.origin}/#/join/${encodeURIComponent(gameId)}/${encodeURIComponent(invite)}`;
}

async function submit(form, error) {
  const me = form.elements.name.value.trim() || "You";
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
    remember(created.game_id, { seat: 0, name: me, token: created.seats[0].token, hostToken: created.host_token, invites });
    location.hash = `#/game/${created.game_id}`;
  } catch (problem) {
    error.textContent = problem.message;
    button.disabled = false;
  }
}

export function showCreate(app) {
  document.title = "Mexican Train — new game";
  const seats = h("div", { class: "seats", id: "seats" });
  const count = h("select", { name: "count", id: "count" },
    options(Array.from({ length: MAX_PLAYERS - 1 }, (_, i) => [i + 2, `${i + 2} players`]), 4));
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
    h("h1", { id: "create-title" }, "New game"),
    h("p", { class: "lead" }, "Play against the server's bots, or invite friends with a link."),
    h("label", { for: "name" }, "Your name"),
    h("input", { id: "name", name: "name", value: "You", maxlength: 40, autocomplete: "nickname", required: true }),
    h("label", { for: "count" }, "Players"), count,
    h("fieldset", {}, h("legend", {}, "Other seats"), seats),
    h("div", { class: "row2" },
      h("div", {}, h("label", { for: "preset" }, "Rules"), h("select", { id: "preset", name: "preset" }, options(PRESETS, "standard"))),
      h("div", {}, h("label", { for: "clock" }, "Turn clock"), h("select", { id: "clock", name: "clock" }, options(CLOCKS, 0)))),
    h("label", { for: "rounds" }, "Length"), h("select", { id: "rounds", name: "rounds" }, options(LENGTHS, "")),
    h("label", { class: "check" }, h("input", { type: "checkbox", name: "auto", id: "auto", checked: true }),
      " Deal each round automatically"),
    error,
    h("button", { type: "submit", class: "primary" }, "Create game"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit(form, error);
  });
  replace(app, form);
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
