// Log entries from the events stream, applied to the view one by one so that each move shows
// on the table before the next (the view fetched afterwards is the truth), and told in words.

import { listOf, t } from "./i18n.js";

const sameTile = (a, b) => (a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]);
// Deals, seat changes and anything unexpected are not replayed here: the table reloads instead.
const REPLAYED = new Set(["play", "draw", "mark", "end_turn"]);

function trainOf(view, id) {
  return view.trains.find((train) => train.id === String(id));
}

function playerOf(view, seat) {
  return view.players.find((player) => player.seat === seat) || {};
}

const APPLY = {
  tile_played(view, event, mySeat) {
    const train = trainOf(view, event.train);
    if (train) {
      train.tiles.push(event.tile);
      train.open_end = event.tile[1];
      train.started = true;
    }
    playerOf(view, event.seat).hand_size -= 1;
    if (event.seat === mySeat && view.hand) {
      const index = view.hand.findIndex((tile) => sameTile(tile, event.tile));
      if (index >= 0) view.hand.splice(index, 1);
    }
  },
  tile_drawn(view, event, mySeat) {
    playerOf(view, event.seat).hand_size += 1;
    view.boneyard_size = Math.max(0, view.boneyard_size - 1);
    if (event.tile && event.seat === mySeat && view.hand) view.hand.push(event.tile);
  },
  marker_placed(view, event) {
    playerOf(view, event.seat).marked = true;
    const train = trainOf(view, event.seat);
    if (train) train.marked = true;
  },
  marker_removed(view, event) {
    playerOf(view, event.seat).marked = false;
    const train = trainOf(view, event.seat);
    if (train) train.marked = false;
  },
  double_opened(view, event) {
    view.open_doubles.push(String(event.train));
  },
  double_satisfied(view, event) {
    view.open_doubles = view.open_doubles.filter((id) => id !== String(event.train));
  },
  turn_passed(view, event) {
    view.turn = event.seat;
    view.clock = view.clock ? { ...view.clock, deadline: null } : view.clock;
  },
  round_over(view, event) {
    view.status = "round_over";
    view.turn = null;
    (event.totals || []).forEach((total, seat) => {
      playerOf(view, seat).score = total;
    });
  },
  game_over(view, event) {
    view.status = "game_over";
    view.winners = event.winners;
  },
};

// Applies the entry to `view` in place; false when the view must be fetched instead.
export function applyEntry(view, entry, mySeat) {
  if (entry.version !== view.version + 1 || !REPLAYED.has(entry.action && entry.action.action)) return false;
  for (const event of entry.events || []) {
    const apply = APPLY[event.type];
    if (apply) apply(view, event, mySeat);
  }
  view.version = entry.version;
  return true;
}

// `mySeat`: a line told to that seat's player names their own train as theirs (log.your_train).
export function trainLabel(view, id, mySeat = null) {
  if (id === "mexican") return t("train.mexican");
  if (mySeat !== null && Number(id) === mySeat) return t("log.your_train");
  const owner = playerOf(view, Number(id));
  return t("train.of", { name: owner.name || t("seat.number", { n: Number(id) + 1 }) });
}

const tileText = (tile) => `${tile[0]}-${tile[1]}`;

// What a seat's own player did is told to them in the second person (log.you_*): their name
// in the third person reads as someone else's move.
function ownText(view, event, mySeat) {
  switch (event.type) {
    case "tile_played":
      return t("log.you_played", { tile: tileText(event.tile), train: trainLabel(view, event.train, mySeat) });
    case "tile_drawn":
      return event.tile ? t("log.you_drew_tile", { tile: tileText(event.tile) }) : t("log.you_drew");
    case "marker_placed":
      return t("log.you_passed");
    case "double_opened":
      return t("log.you_double_opened", { train: trainLabel(view, event.train, mySeat) });
    case "seat_joined":
      return t("log.you_joined", { seat: event.seat + 1 });
    default:
      return null;
  }
}

// A round's end says who went out (the table's own player as "you", first among several:
// "you and bo went out"), or that it was blocked: "the round is over" alone leaves a screen
// reader's user to find the summary to know.
function roundOverText(view, event, mySeat) {
  const round = event.round;
  const out = event.reason === "blocked" ? [] : event.out || [];
  if (!out.length) return t("log.round_blocked", { round });
  const others = out.filter((seat) => seat !== mySeat).map((seat) => playerOf(view, seat).name || t("seat.number", { n: seat + 1 }));
  if (!others.length) return t("log.round_you_out", { round });
  if (others.length < out.length) return t("log.round_you_and_out", { round, names: listOf([t("player.you"), ...others]) });
  if (others.length > 1) return t("log.round_out_several", { round, names: listOf(others) });
  return t("log.round_out", { round, name: others[0] });
}

function eventText(view, event, mySeat) {
  const own = mySeat !== null && event.seat === mySeat ? ownText(view, event, mySeat) : null;
  if (own) return own;
  const who = playerOf(view, event.seat).name || t("seat.number", { n: event.seat + 1 });
  switch (event.type) {
    case "tile_played":
      return t("log.played", { name: who, tile: tileText(event.tile), train: trainLabel(view, event.train, mySeat) });
    case "tile_drawn":
      return event.tile ? t("log.drew_tile", { name: who, tile: tileText(event.tile) }) : t("log.drew", { name: who });
    case "marker_placed":
      return t("log.passed", { name: who });
    case "double_opened":
      return t("log.double_opened", { name: who, train: trainLabel(view, event.train, mySeat) });
    case "round_over":
      return roundOverText(view, event, mySeat);
    case "game_over":
      return t("log.game_over");
    case "seat_joined":
      return t("log.joined", { name: event.name, seat: event.seat + 1 });
    case "seat_changed":
      return event.open ? t("log.seat_open", { seat: event.seat + 1 }) : t("log.seat_bot", { bot: event.bot, seat: event.seat + 1 });
    case "round_started":
      return t("log.dealt", { round: event.round, engine: event.engine });
    default:
      return null;
  }
}

function suffix(by) {
  if (by === "bot") return t("log.by_bot");
  if (by === "clock") return t("log.by_clock");
  return "";
}

// What a move brought about: told after the move, each as a sentence of its own.
const OUTCOMES = new Set(["round_over", "game_over", "round_started"]);

// One line per entry for the table's log, e.g. "cpu played 5-3 on the Mexican train (bot)";
// `mySeat` (null for a spectator) hears its own moves in the second person. Each event is a
// sentence ("… (bot). Round 2 is over: cpu went out. The game is over"); who made the move
// (a bot, the clock) is said of the move, not of the game's end that followed it.
export function describe(view, entry, mySeat = null) {
  const action = (entry.action && entry.action.action) || "";
  if (action === "create") return t("log.created");
  const events = entry.events || [];
  // A deal's draws for the starter are not moves: the deal's own line tells the round.
  const dealt = events.some((event) => event.type === "round_started");
  const told = events.filter((event) => !dealt || event.type !== "tile_drawn");
  const texts = (outcome) => told.filter((event) => OUTCOMES.has(event.type) === outcome).map((event) => eventText(view, event, mySeat)).filter(Boolean);
  const moves = texts(false);
  const outcomes = texts(true);
  if (action === "end_turn" && !moves.length && !outcomes.length) {
    moves.push(mySeat !== null && entry.seat === mySeat ? t("log.you_ended_turn") : t("log.ended_turn", { name: playerOf(view, entry.seat).name }));
  }
  if (!moves.length && !outcomes.length) return null;
  if (!moves.length) return outcomes.join(". ") + suffix(entry.by);
  return [moves.join(". ") + suffix(entry.by), ...outcomes].join(". ");
}

// The tile an entry played last, for the table's highlight: {train, tile, seat} or null.
export function lastPlay(entry) {
  const plays = (entry.events || []).filter((event) => event.type === "tile_played");
  const play = plays[plays.length - 1];
  return play ? { train: String(play.train), tile: play.tile, seat: play.seat } : null;
}

// The round's end as the summary shows it (null when the entry ends no round).
export function roundEnd(entry) {
  return (entry.events || []).find((event) => event.type === "round_over") || null;
}
