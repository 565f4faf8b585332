// Pieces of the table drawn from a game view: seats, trains, the hand, scores. Pure functions
// of their arguments; the handlers they wire come from table.js.

import { h } from "./dom.js";
import { t, tn } from "./i18n.js";
import { tileBack, tileFace, tileName } from "./tiles.js";
import { trainLabel } from "./entries.js";
import { markerIcon, trainIcon, trophyIcon } from "./icons.js";

export const isDouble = (tile) => tile[0] === tile[1];
const sameTile = (a, b) => Boolean(a && b) && ((a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]));

function badge(text, kind) {
  return h("span", { class: `badge ${kind || ""}` }, text);
}

function playerWords(view, player, me, turn, name) {
  return [
    me ? t("player.you_named", { name }) : name,
    player.bot ? t("player.bot_level", { level: player.bot }) : null,
    player.bot || player.open ? null : player.present ? t("player.present") : t("player.away"),
    tn("count.tiles", player.hand_size),
    t("player.score", { score: player.score }),
    player.marked ? t("player.marked") : null,
    turn ? t("player.to_play") : null,
  ].filter(Boolean).join(", ");
}

// Whether a person is at the table (an open stream, or a request within the last 30 s).
function presence(present) {
  return h("span", { class: ["presence", present ? "present" : "away"] },
    h("span", { class: "presence-dot", "aria-hidden": "true" }, present ? "●" : "○"), " ",
    present ? t("player.present") : t("player.away"));
}

// A seat's card; `hostAction` (host only) draws its "let a bot play" control, which asks first.

export function playerCard(view, player, mySeat, { hostAction = null, lastMover = null } = {}) {
  const turn = view.status === "in_round" && view.turn === player.seat;
  const me = player.seat === mySeat;
  const name = player.open ? t("player.open_seat") : player.name;
  const backs = Array.from({ length: Math.min(player.hand_size, 6) }, () => tileBack());
  return h("li", { class: ["player", turn && "turn", me && "me", player.open && "open", lastMover === player.seat && "last-mover"], "aria-label": playerWords(view, player, me, turn, name), dataset: { seat: player.seat } },
    h("div", { class: "who" },
      turn ? h("span", { class: "turn-arrow", "aria-hidden": "true" }, "▶") : null,
      h("span", { class: "name" }, name),
      me ? badge(t("player.you"), "you") : null,
      player.bot ? badge(t("player.bot_badge", { level: player.bot }), "bot") : null,
      player.bot || player.open ? null : presence(player.present)),
    h("div", { class: "stats" },
      h("span", { class: "backs", "aria-hidden": "true" }, backs),
      h("span", { class: "count" }, tn("count.tiles", player.hand_size)),
      h("span", { class: "score" }, t("player.score", { score: player.score })),
      player.marked ? h("span", { class: "marked-flag" }, markerIcon(), " ", t("player.marked_short")) : null),
    hostAction && !me && !player.bot && !player.open && view.status !== "game_over" ? hostAction(player, name) : null,
    turn ? h("div", { class: "turn-line" }, t("player.to_play")) : null);
}

function trainTile(tile, { open, last, arriving }) {
  const double = isDouble(tile);
  const pops = last && arriving !== null;
  const element = h("span", { class: ["ttile", double && "double", open && "open-double", last && "last-play", pops && "arriving"] },
    tileFace(tile, { vertical: double }),
    last ? h("span", { class: "last-mark", "aria-hidden": "true" }, t("train.last_short")) : null);
  // A redraw during the pop goes on with it where it was, rather than starting it again.
  if (pops && arriving > 0) element.style.animationDelay = `-${Math.round(arriving)}ms`;
  return element;
}

function trainState(view, train, { target, selected, open, last }) {
  return [
    trainLabel(view, train.id),
    tn("count.tiles", train.tiles.length),
    train.open_end === null ? null : t("train.open_end", { end: train.open_end }),
    train.marked ? t("train.marked_long") : null,
    open ? t("train.open_double_long") : null,
    last ? t("train.last_long", { tile: tileName(last.tile) }) : null,
    target === true ? t("train.can_play", { tile: tileName(selected) }) : null,
  ].filter(Boolean).join(", ");
}

// One train: who owns it, its marker, its tiles from the engine outwards and its open end.
// `target` says whether the selected tile may be played here (null: no tile selected); `last`
// is the table's last play when it went here, and `arriving` how far into its pop it is (ms;
// null once the pop is over: a redraw after it does not start it again). `sending`: a play on
// this train is on its way to the server.
export function trainRow(view, train, { target, selected, last, arriving, sending = false, onChoose }) {
  // A round over (gone out on a double, or blocked) leaves its open doubles in the view, with
  // nobody to cover them.
  const open = view.status === "in_round" && view.open_doubles.includes(train.id);
  const oldest = open && view.open_doubles[0] === train.id && view.open_doubles.length > 1;
  const owner = train.owner === null ? null : view.players.find((p) => p.seat === train.owner);
  const title = train.id === "mexican" ? t("train.mexican_title") : owner ? owner.name : t("seat.number", { n: train.owner + 1 });
  const state = trainState(view, train, { target, selected, open, last });
  const lastIndex = train.tiles.length - 1;
  const lastTile = last ? lastIndex : -1;
  const button = h("button", {
    type: "button",
    class: ["train-target", target === true && "legal", target === false && "not-legal"],
    "aria-label": selected ? t("train.play_on", { tile: tileName(selected), train: state }) : state,
    "aria-disabled": target === true ? null : "true",
    dataset: { train: train.id, key: `train-${train.id}` },
    onclick: () => onChoose(train.id),
  },
  h("span", { class: "train-name" }, train.id === "mexican" ? [trainIcon(), " "] : null, title),
  h("span", { class: "train-flags" },
    train.marked ? h("span", { class: "flag marked-flag" }, markerIcon(), " ", t("train.marked_short")) : null,
    open ? h("span", { class: "flag double-flag" }, oldest ? t("train.open_double_first") : t("train.open_double_short")) : null,
    target === true ? h("span", { class: "flag play-flag" }, t("train.play_here")) : null,
    sending ? h("span", { class: "flag sending-flag" }, t("train.sending")) : null));
  const tiles = train.tiles.length
    ? train.tiles.map((tile, i) => trainTile(tile, { open: open && i === lastIndex, last: i === lastTile && sameTile(tile, last.tile), arriving }))
    : [h("span", { class: "empty" }, train.started ? "" : t("train.not_started"))];
  return h("li", { class: ["train", train.id === "mexican" && "mexican", open && "has-open-double", target === true && "legal", last && "has-last"], dataset: { train: train.id } },
    button,
    // A picture that its button above speaks for: out of the Tab order too, where Chromium puts
    // a row that scrolls sideways and a screen reader would find nothing to say.
    h("div", { class: "line", "aria-hidden": "true", tabindex: "-1" },
      tiles,
      h("span", { class: "open-end" }, h("span", { class: "end-label" }, t("train.end")), h("span", { class: "end-value" }, train.open_end === null ? "" : String(train.open_end)))));
}

// A tile of the hand. One without a move is shown dimmed and says why when chosen, instead of
// being taken to a train the server would refuse. While a move is in flight (`busy`) no tile
// can be chosen, so none looks or reads as playable (a tick there would promise a click that
// does nothing); the one played (`sending`) says it is on its way.
export function handTile(tile, { playable, selected, drawn, busy = false, sending = false, onSelect }) {
  const name = tileName(tile);
  const can = playable && !busy;
  const words = [t("tile.name", { tile: name }), sending ? t("tile.sending") : can ? t("tile.playable") : t("tile.not_playable"), drawn ? t("tile.drawn") : null, selected && !sending ? t("tile.selected") : null];
  return h("button", {
    type: "button",
    class: ["htile", can && "playable", !can && !sending && "unplayable", selected && !sending && "selected", sending && "sending", drawn && "drawn"],
    "aria-label": words.filter(Boolean).join(", "),
    "aria-pressed": selected && !sending ? "true" : "false",
    "aria-disabled": can ? null : "true",
    dataset: { tile: name, key: `tile-${name}` },
    onclick: () => onSelect(tile),
  }, tileFace(tile, { vertical: true }),
  can ? h("span", { class: "tick", "aria-hidden": "true" }, "✓") : null,
  sending ? h("span", { class: "sending-mark", "aria-hidden": "true" }, "…") : null,
  drawn ? h("span", { class: "new-flag", "aria-hidden": "true" }, t("tile.new")) : null);
}

// `mySeat`: the reader's row says "(you)", so a reader who did not win finds it at a glance.
export function scoreTable(score, view, mySeat = null) {
  const rounds = Math.max(0, ...score.players.map((p) => p.rounds.length));
  const winners = new Set(score.winners || []);
  const low = Math.min(...score.players.map((p) => p.total));
  return h("table", { class: "scores" },
    h("caption", {}, score.status === "game_over" ? t("score.final_caption") : t("score.caption", { round: rounds })),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("score.player")),
      Array.from({ length: rounds }, (_, i) => h("th", { scope: "col" }, t("score.round_short", { round: i + 1 }))),
      h("th", { scope: "col" }, t("score.total")))),
    h("tbody", {}, score.players.map((p) => h("tr", { class: [winners.has(p.seat) && "winner", p.total === low && "leader"], dataset: { seat: p.seat } },
      h("th", { scope: "row" }, winners.has(p.seat) ? [trophyIcon(), " "] : "", rowName(p, view, mySeat)),
      p.rounds.map((r) => h("td", {}, String(r))),
      h("td", { class: "total" }, String(p.total))))));
}

function rowName(player, view, mySeat) {
  const name = view.players[player.seat] ? view.players[player.seat].name : player.name;
  return player.seat === mySeat ? t("player.you_named", { name }) : name;
}
