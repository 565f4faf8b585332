// Pieces of the table drawn from a game view: seats, trains, the hand, scores. Pure functions
// of their arguments; the handlers they wire come from table.js.

import { h } from "./dom.js";
import { tileBack, tileFace, tileName } from "./tiles.js";
import { trainLabel } from "./entries.js";
import { clockIcon, markerIcon, trainIcon, trophyIcon } from "./icons.js";

export const isDouble = (tile) => tile[0] === tile[1];

export function clockText(deadline) {
  if (!deadline) return "";
  const left = Math.max(0, Math.round((Date.parse(deadline) - Date.now()) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

function badge(text, kind) {
  return h("span", { class: `badge ${kind || ""}` }, text);
}

export function playerCard(view, player, mySeat, takeOver = null) {
  const turn = view.status === "in_round" && view.turn === player.seat;
  const me = player.seat === mySeat;
  const deadline = turn && view.clock && view.clock.deadline;
  const name = player.open ? "Open seat" : player.name;
  const words = [
    `${name}${me ? " (you)" : ""}`,
    player.bot ? `bot, ${player.bot}` : null,
    `${player.hand_size} tiles`,
    `score ${player.score}`,
    player.marked ? "train marked" : null,
    turn ? "to play" : null,
  ].filter(Boolean);
  const backs = Array.from({ length: Math.min(player.hand_size, 6) }, () => tileBack());
  return h("li", { class: ["player", turn && "turn", me && "me", player.open && "open"], "aria-label": words.join(", "), dataset: { seat: player.seat } },
    h("div", { class: "who" },
      turn ? h("span", { class: "turn-arrow", "aria-hidden": "true" }, "▶") : null,
      h("span", { class: "name" }, name),
      me ? badge("you", "you") : null,
      player.bot ? badge(`bot · ${player.bot}`, "bot") : null),
    h("div", { class: "stats" },
      h("span", { class: "backs", "aria-hidden": "true" }, backs),
      h("span", { class: "count" }, `${player.hand_size} tile${player.hand_size === 1 ? "" : "s"}`),
      h("span", { class: "score" }, `score ${player.score}`),
      player.marked ? h("span", { class: "marked-flag" }, markerIcon(), " marked") : null),
    takeOver && !me && !player.bot && !player.open && view.status !== "game_over"
      ? h("button", { type: "button", class: "take-over", onclick: () => takeOver(player.seat), "aria-label": `Let a bot play for ${name}` }, "Bot takes over")
      : null,
    turn ? h("div", { class: "turn-line" }, "to play",
      deadline ? h("span", { class: "clock", dataset: { deadline } }, " ", clockIcon(), " ", h("span", { class: "clock-left" }, clockText(deadline))) : null) : null);
}

function trainTile(tile, open) {
  const double = isDouble(tile);
  return h("span", { class: ["ttile", double && "double", open && "open-double"] }, tileFace(tile, { vertical: double }));
}

// One train: who owns it, its marker, its tiles from the engine outwards and its open end.
// `target` says whether the selected tile may be played here (null: no tile selected).
export function trainRow(view, train, { target, selected, onChoose }) {
  const open = view.open_doubles.includes(train.id);
  const owner = train.owner === null ? null : view.players.find((p) => p.seat === train.owner);
  const title = train.id === "mexican" ? "Mexican train" : `${owner ? owner.name : `Seat ${train.owner + 1}`}`;
  const state = [
    train.id === "mexican" ? "Mexican train" : trainLabel(view, train.id),
    `${train.tiles.length} tile${train.tiles.length === 1 ? "" : "s"}`,
    `open end ${train.open_end}`,
    train.marked ? "marked: open to everyone" : null,
    open ? "open double: must be covered first" : null,
    target === true ? `you can play ${tileName(selected)} here` : null,
  ].filter(Boolean).join(", ");
  const last = train.tiles.length - 1;
  const button = h("button", {
    type: "button",
    class: ["train-target", target === true && "legal", target === false && "not-legal"],
    "aria-label": selected ? `Play ${tileName(selected)} on ${state}` : state,
    "aria-disabled": selected ? null : "true",
    dataset: { train: train.id, key: `train-${train.id}` },
    onclick: () => onChoose(train.id),
  },
  h("span", { class: "train-name" }, train.id === "mexican" ? [trainIcon(), " "] : null, title),
  h("span", { class: "train-flags" },
    train.marked ? h("span", { class: "flag marked-flag" }, markerIcon(), " open to all") : null,
    open ? h("span", { class: "flag double-flag" }, "◆ open double") : null,
    target === true ? h("span", { class: "flag play-flag" }, "✓ play here") : null));
  const tiles = train.tiles.length
    ? train.tiles.map((tile, i) => trainTile(tile, open && i === last))
    : [h("span", { class: "empty" }, train.started ? "" : "not started")];
  return h("li", { class: ["train", train.id === "mexican" && "mexican", open && "has-open-double", target === true && "legal"], dataset: { train: train.id } },
    button,
    h("div", { class: "line", "aria-hidden": "true" },
      tiles,
      h("span", { class: "open-end", title: "open end" }, h("span", { class: "end-label" }, "end"), h("span", { class: "end-value" }, String(train.open_end)))));
}

export function handTile(tile, { playable, selected, onSelect }) {
  const name = tileName(tile);
  const label = `${name}${playable ? ", playable" : ""}${selected ? ", selected" : ""}`;
  return h("button", {
    type: "button",
    class: ["htile", playable && "playable", selected && "selected"],
    "aria-label": `Tile ${label}`,
    "aria-pressed": selected ? "true" : "false",
    dataset: { tile: name, key: `tile-${name}` },
    onclick: () => onSelect(tile),
  }, tileFace(tile, { vertical: true }), playable ? h("span", { class: "tick", "aria-hidden": "true" }, "✓") : null);
}

export function scoreTable(score, view) {
  const rounds = Math.max(0, ...score.players.map((p) => p.rounds.length));
  const winners = new Set(score.winners || []);
  const low = Math.min(...score.players.map((p) => p.total));
  return h("table", { class: "scores" },
    h("caption", {}, score.status === "game_over" ? "Final scores (lowest wins)" : `Scores after round ${rounds} (lowest wins)`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Player"),
      Array.from({ length: rounds }, (_, i) => h("th", { scope: "col" }, `R${i + 1}`)),
      h("th", { scope: "col" }, "Total"))),
    h("tbody", {}, score.players.map((p) => h("tr", { class: [winners.has(p.seat) && "winner", p.total === low && "leader"], dataset: { seat: p.seat } },
      h("th", { scope: "row" }, winners.has(p.seat) ? [trophyIcon(), " "] : "", view.players[p.seat] ? view.players[p.seat].name : p.name),
      p.rounds.map((r) => h("td", {}, String(r))),
      h("td", { class: "total" }, String(p.total))))));
}
