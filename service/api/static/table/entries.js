// Log entries from the events stream, applied to the view one by one so that each move shows
// on the table before the next (the view fetched afterwards is the truth), and told in words.

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

export function trainLabel(view, id) {
  if (id === "mexican") return "the Mexican train";
  const owner = playerOf(view, Number(id));
  return `${owner.name || `seat ${id}`}'s train`;
}

const tileText = (tile) => `${tile[0]}-${tile[1]}`;

function eventText(view, event) {
  const who = playerOf(view, event.seat).name || `seat ${event.seat}`;
  switch (event.type) {
    case "tile_played":
      return `${who} played ${tileText(event.tile)} on ${trainLabel(view, event.train)}`;
    case "tile_drawn":
      return event.tile ? `${who} drew ${tileText(event.tile)}` : `${who} drew a tile`;
    case "marker_placed":
      return `${who} passed: their train is open to all`;
    case "double_opened":
      return `${who} opened a double on ${trainLabel(view, event.train)}`;
    case "round_over":
      return `Round ${event.round} is over${event.reason === "blocked" ? " (blocked)" : ""}`;
    case "game_over":
      return "The game is over";
    case "seat_joined":
      return `${event.name} took seat ${event.seat + 1}`;
    case "seat_changed":
      return event.open ? `Seat ${event.seat + 1} is open again` : `A ${event.bot} bot took over seat ${event.seat + 1}`;
    case "round_started":
      return `Round ${event.round} dealt: engine ${event.engine}-${event.engine}`;
    default:
      return null;
  }
}

const BY = { bot: " (bot)", clock: " (time ran out)", auto: "" };

// One line per entry for the table's log, e.g. "cpu (bot): played 5-3 on the Mexican train".
export function describe(view, entry) {
  const action = (entry.action && entry.action.action) || "";
  if (action === "create") return "Game created";
  const texts = (entry.events || []).map((event) => eventText(view, event)).filter(Boolean);
  if (action === "end_turn" && !texts.length) texts.push(`${playerOf(view, entry.seat).name} ended their turn`);
  const suffix = BY[entry.by] || "";
  return texts.length ? texts.join("; ") + suffix : null;
}
