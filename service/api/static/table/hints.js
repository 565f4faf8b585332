// What the player can do now and why, in words, from the view and the server's legal moves;
// and the server's refusals worded for people (by the problem's stable code, never its text).

import { t } from "./i18n.js";
import { trainLabel } from "./entries.js";
import { tileName } from "./tiles.js";

function reason(view, me, plays) {
  const opts = (view.rules && view.rules.options) || {};
  const state = view.turn_state || {};
  // "or draw" holds only until the player has drawn: then the drawn tile covers it or the
  // player passes, which the next step says.
  if (state.must_follow !== null && state.must_follow !== undefined && !state.drawn) {
    // Under `any` (rule 7) the tile after a double may go anywhere legal, not only onto it.
    if (opts.double_follow !== "satisfy") return t("hint.follow_double_any");
    return t("hint.follow_double", { train: trainLabel(view, state.must_follow) });
  }
  // A player in their opening turn ignores open doubles (rule 5): no hint about them. Without
  // a tile to start their train there is no chain to lay either (the next step says so).
  if (me && !me.opened) {
    if (opts.opening !== "chain" || (!plays.length && !state.tiles_played)) return "";
    return state.tiles_played ? t("hint.opening_more") : t("hint.opening_chain");
  }
  if (view.open_doubles.length > 1) {
    return t("hint.doubles_oldest", { train: trainLabel(view, view.open_doubles[0]) });
  }
  if (view.open_doubles.length === 1 && plays.length) {
    return t("hint.double_open", { train: trainLabel(view, view.open_doubles[0]) });
  }
  return "";
}

// A pass without a draw before it, the boneyard not empty: an opening turn without a tile to
// start the train, which the standard preset marks at once (opening_no_play: mark).
function action(view, plays, actions) {
  if (plays.length) return t("hint.choose_tile");
  if (actions.has("draw")) return t("hint.draw");
  if (actions.has("mark") && !view.boneyard_size) return t("hint.mark_empty");
  if (actions.has("mark")) return (view.turn_state || {}).drawn ? t("hint.mark_after_draw") : t("hint.mark_no_opening");
  if (actions.has("end_turn")) return t("hint.end_turn");
  return "";
}

// The hint under the hand: whose turn, the rule that applies now, and the next step. While a
// move is `sending` (sent, or waiting to be sent again) there is no next step to choose.
export function hint(view, { legal, seat, selected, settled, sending }) {
  if (view.status !== "in_round") return "";
  if (view.turn !== seat) {
    const turn = view.players.find((p) => p.seat === view.turn);
    return t("hint.wait", { name: turn ? turn.name : "…" });
  }
  if (sending) return t("hint.sending");
  if (!settled) return t("hint.loading");
  if (selected) return t("hint.choose_train", { tile: tileName(selected) });
  const plays = legal.filter((m) => m.action === "play");
  const actions = new Set(legal.map((m) => m.action));
  const me = view.players.find((p) => p.seat === seat);
  return [reason(view, me, plays), action(view, plays, actions)].filter(Boolean).join(" ");
}

// Why a tile of the hand cannot be played now (it is never sent to the server).
export function whyNot(view, tile, { legal }) {
  const plays = legal.filter((m) => m.action === "play");
  if (!plays.length) return t("refuse.no_tile_fits", { tile: tileName(tile) });
  const ends = [...new Set(plays.map((m) => view.trains.find((tr) => tr.id === m.train)).filter(Boolean).map((tr) => tr.open_end))];
  return t("refuse.tile_no_fit", { tile: tileName(tile), ends: ends.join(", ") });
}

const TRANSIENT = new Set(["network", "rate_limited", "storage_unavailable", "redis_unavailable", "unavailable", "internal_error"]);

// A problem in words; `transient` ones clear themselves once the server answers again.
export function worded(error) {
  const code = error.code || "unknown";
  const texts = {
    not_your_turn: () => t("refuse.not_your_turn"),
    illegal_move: () => t("refuse.illegal_move"),
    invalid_move: () => t("refuse.illegal_move"),
    round_not_running: () => t("refuse.round_not_running"),
    game_over: () => t("refuse.game_over"),
    version_conflict: () => t("refuse.changed"),
    stale_version: () => t("refuse.changed"),
    invalid_token: () => t("refuse.seat_lost"),
    unauthorized: () => t("refuse.seat_lost"),
    not_host: () => t("refuse.not_host"),
    too_many_seat_changes: () => t("refuse.too_many_changes"),
    game_not_found: () => t("refuse.game_not_found"),
    rate_limited: () => t("refuse.rate_limited"),
    network: () => t("refuse.network"),
    transfer_not_found: () => t("refuse.transfer_not_found"),
    transfer_used: () => t("refuse.transfer_not_found"),
    invite_not_found: () => t("join.invite_not_found"),
    invite_used: () => t("join.invite_used"),
    already_seated: () => t("refuse.already_seated"),
    rematch_closed: () => t("refuse.rematch_closed"),
    unrated_seat: () => t("refuse.unrated_seat"),
  };
  const status = Number(error.status) || 0;
  const text = texts[code] ? texts[code]() : status >= 500 ? t("refuse.server_trouble") : t("refuse.other");
  return { text, transient: TRANSIENT.has(code) || status >= 500, code };
}
