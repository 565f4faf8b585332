// Round and game summaries: who went out or that the round was blocked, the hands left with
// their pips, the round's and the total scores. Each stays until the player dismisses it, and
// an automatic deal does not wait: the next round goes on beside it.

import { h } from "./dom.js";
import { listOf, t, tn } from "./i18n.js";
import { tileFace, tileName } from "./tiles.js";

// What a summary shows, from the round_over event and the view as that event left it; when the
// view is not at that entry (`exact` false), only who went out is known of the hands.
export function summaryOf(view, event, mySeat, { exact = true } = {}) {
  const out = event.out || [];
  return {
    round: event.round,
    rounds: view.rounds,
    blocked: event.reason === "blocked",
    out,
    scores: event.scores || [],
    totals: event.totals || [],
    names: view.players.map((p) => p.name),
    hands: view.players.map((p) => (exact ? p.hand_size : out.includes(p.seat) ? 0 : null)),
    mine: mySeat === null || !exact ? null : (view.hand || []).slice(),
    mySeat,
  };
}

const sameTile = (a, b) => (a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]);

// Every seat's tiles left at the end of each round, replayed from GET /history (open to all
// once the game is over): the hands after each deal, less the tiles played, plus those drawn.
export function handsLeft(history) {
  const rounds = {};
  let hands = null;
  for (const entry of history.entries || []) {
    if (entry.position) {
      hands = entry.position.hands.map((hand) => hand.map((tile) => tile.slice()));
      continue; // the deal's own draws are in the position already
    }
    if (!hands) continue;
    for (const event of entry.events || []) {
      if (event.type === "tile_played") {
        const hand = hands[event.seat];
        const index = hand.findIndex((tile) => sameTile(tile, event.tile));
        if (index >= 0) hand.splice(index, 1);
      } else if (event.type === "tile_drawn" && event.tile) {
        hands[event.seat].push(event.tile);
      } else if (event.type === "round_over") {
        rounds[event.round] = hands.map((hand) => hand.slice());
      }
    }
  }
  return rounds;
}

// The same from GET /score, for a page opened after the round ended (no event seen).
export function summaryOfScore(view, score, mySeat) {
  const last = (p) => p.rounds[p.rounds.length - 1] || 0;
  const out = view.players.filter((p) => p.hand_size === 0).map((p) => p.seat);
  return {
    round: Math.max(...score.players.map((p) => p.rounds.length)),
    rounds: view.rounds,
    blocked: out.length === 0,
    out,
    scores: score.players.map(last),
    totals: score.players.map((p) => p.total),
    names: view.players.map((p) => p.name),
    hands: view.players.map((p) => p.hand_size),
    mine: mySeat === null ? null : (view.hand || []).slice(),
    mySeat,
  };
}

// Told to the reader as the move log tells it: the reader who went out is "you" (first among
// several: "you and bo went out").
function headline(s) {
  const { round, rounds } = s;
  if (s.blocked || !s.out.length) return t("summary.blocked", { round, rounds });
  const others = s.out.filter((seat) => seat !== s.mySeat).map((seat) => s.names[seat]);
  if (!others.length) return t("summary.you_went_out", { round, rounds });
  if (others.length < s.out.length) return t("summary.you_and_went_out", { round, rounds, names: listOf([t("player.you"), ...others]) });
  if (others.length > 1) return t("summary.went_out_several", { round, rounds, names: listOf(others) });
  return t("summary.went_out", { round, rounds, name: others[0] });
}

function revealed(s, seat) {
  const tiles = s.revealed && s.revealed[seat];
  if (!tiles || !tiles.length) return null;
  const names = tiles.map((tile) => tileName(tile)).join(", ");
  return [h("span", { class: "visually-hidden" }, t("summary.tiles_of", { tiles: names })),
    h("span", { class: "row-tiles", "aria-hidden": "true" },
      tiles.map((tile) => h("span", { class: "stile", dataset: { tile: tileName(tile) } }, tileFace(tile, { vertical: true }))))];
}

function rows(s) {
  const low = Math.min(...s.totals);
  return s.names.map((name, seat) => h("tr", { dataset: { seat }, class: [s.out.includes(seat) && "went-out", s.totals[seat] === low && "leader"] },
    h("th", { scope: "row" }, name, seat === s.mySeat ? ` ${t("summary.you")}` : "", revealed(s, seat)),
    h("td", { class: "left" }, s.hands[seat] === null || s.hands[seat] === undefined ? "–" : String(s.hands[seat])),
    h("td", { class: "pips" }, String(s.scores[seat])),
    h("td", { class: "total" }, String(s.totals[seat]))));
}

// One summary panel; `onDismiss` closes it, `extra` (a host's deal button) goes at its foot.
export function summaryPanel(s, { onDismiss, extra = null }) {
  const mine = s.mine && s.mine.length && !s.revealed
    ? h("div", { class: "left-tiles" }, h("span", {}, t("summary.your_tiles")), h("span", { class: "tiles" }, s.mine.map((tile) => h("span", { class: "stile" }, tileFace(tile, { vertical: true })))))
    : null;
  return h("section", { class: "panel round-summary", id: `summary-${s.round}`, "aria-labelledby": `summary-title-${s.round}`, tabindex: "-1", dataset: { round: s.round, key: `summary-${s.round}` } },
    h("h2", { id: `summary-title-${s.round}` }, headline(s)),
    h("table", { class: "scores" },
      h("caption", {}, t("summary.caption")),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, t("score.player")),
        h("th", { scope: "col" }, t("summary.tiles_left")),
        h("th", { scope: "col" }, t("summary.pips")),
        h("th", { scope: "col" }, t("score.total")))),
      h("tbody", {}, rows(s))),
    mine,
    h("p", { class: "summary-note" }, s.round < s.rounds ? tn("summary.rounds_left", s.rounds - s.round) : t("summary.last_round")),
    h("div", { class: "summary-actions" },
      extra,
      h("button", { type: "button", class: "button dismiss", dataset: { key: `dismiss-${s.round}` }, onclick: onDismiss }, t("summary.dismiss"))));
}
