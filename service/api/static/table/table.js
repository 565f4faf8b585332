// The table: the game view drawn, moves chosen by tile then train, and the events stream
// replayed entry by entry. The server is the only judge: the page shows /legal-moves, sends
// what the player chooses, and shows a refusal's `detail` without changing the table.

import { ApiError, game } from "./api.js";
import { h, replace, sleep } from "./dom.js";
import { applyEntry, describe } from "./entries.js";
import { Live } from "./live.js";
import { clockText, handTile, playerCard, scoreTable, trainRow } from "./parts.js";
import { held } from "./seats.js";
import { trophyIcon } from "./icons.js";
import { tileName } from "./tiles.js";

const STEP_MS = 300; // between two entries of the stream, so bots' moves show one by one
const POLL_MS = 3000; // while the stream is down, the view is fetched this often
const CATCH_UP_MS = 2000; // entries the stream has not brought by then are fetched instead
const LOG_LINES = 8;

const ACTIONS = [
  ["draw", "Draw a tile"],
  ["mark", "Pass (mark my train)"],
  ["end_turn", "End turn"],
];

function connection(state) {
  const element = document.getElementById("connection");
  element.className = `connection ${state}`;
  element.textContent = { live: "● Live", down: "⚠ Connection lost: reconnecting…", "": "" }[state] || "";
}

class Table {
  constructor(app, gameId) {
    this.app = app;
    this.gameId = gameId;
    const mine = held(gameId) || {};
    this.seat = Number.isInteger(mine.seat) ? mine.seat : null;
    this.token = this.seat === null ? null : mine.token;
    this.hostToken = mine.hostToken || null;
    this.invites = mine.invites || {};
    this.view = null;
    this.legal = [];
    this.selected = null;
    this.queue = [];
    this.queued = 0;
    this.pumping = false;
    this.lastStep = 0;
    this.problem = "";
    this.score = null;
    this.log = [];
    this.live = null;
    this.stopped = false;
  }

  async start() {
    replace(this.app, h("p", { class: "panel loading" }, "Loading the table…"));
    if (!(await this.refresh())) return;
    this.queued = this.view.version;
    this.live = new Live(this.gameId, this.token || this.hostToken, {
      onEntry: (entry) => this.onEntry(entry),
      onState: (state) => this.onStream(state),
    });
    if (this.view.status !== "game_over") this.live.start(this.view.version);
    this.recentMoves();
    this.ticker = setInterval(() => this.tick(), 1000);
    // Whether the last click came from the keyboard: then the focus follows the move.
    this.keyboard = false;
    this.onKey = (event) => {
      this.keyboard = true;
      if (event.key === "Escape" && this.selected) this.select(this.selected);
      else this.onArrow(event);
    };
    this.onPointer = () => {
      this.keyboard = false;
    };
    document.addEventListener("keydown", this.onKey);
    document.addEventListener("pointerdown", this.onPointer);
    this.onResize = () => this.scrollTrains();
    window.addEventListener("resize", this.onResize);
  }

  // The last few entries before this page opened, for its log (the stream brings the rest).
  async recentMoves() {
    try {
      const page = await game.events(this.gameId, this.token || this.hostToken, Math.max(0, this.view.version - LOG_LINES));
      const lines = page.entries.map((entry) => ({ version: entry.version, text: describe(this.view, entry) }));
      const older = lines.filter((line) => line.text && !this.log.some((l) => l.version === line.version));
      this.log = [...older, ...this.log].sort((a, b) => a.version - b.version).slice(-LOG_LINES);
      this.render();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }

  stop() {
    this.stopped = true;
    if (this.live) this.live.stop();
    clearInterval(this.ticker);
    clearInterval(this.poller);
    clearTimeout(this.catchUp);
    document.removeEventListener("keydown", this.onKey);
    document.removeEventListener("pointerdown", this.onPointer);
    window.removeEventListener("resize", this.onResize);
    delete this.app.dataset.version;
    delete this.app.dataset.status;
    delete this.app.dataset.settled;
    connection("");
  }

  // Fetch the view (and this seat's legal moves, and the scores once a round is over).
  // `ahead: false` keeps the table where the stream has brought it when the server is already
  // further: those entries are on their way (or queued) and are shown one by one; if they do
  // not come, the view is fetched again in a while.
  async refresh({ ahead = true } = {}) {
    try {
      const view = await game.view(this.gameId, this.token);
      if (!ahead && this.view && view.version > this.view.version && this.live && this.live.following) {
        this.catchUpLater();
        return true;
      }
      const legal = this.token && view.status === "in_round" ? await game.legal(this.gameId, this.token) : { moves: [] };
      const scored = ["round_over", "game_over"].includes(view.status) || view.round > 1;
      this.score = scored ? await game.score(this.gameId) : null;
      if (this.view && view.version < this.view.version) {
        this.catchUpLater(); // an answer older than the table: ask again
        return true;
      }
      this.view = view;
      this.queued = Math.max(this.queued, view.version);
      this.legal = legal.version === undefined || legal.version === view.version ? legal.moves : [];
      this.settled = !this.queue.length;
      if (this.selected && !(view.hand || []).some((t) => tileName(t) === tileName(this.selected))) this.selected = null;
      this.render();
      return true;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (!this.view) this.fail(error);
      else this.problem = error.message;
      return false;
    }
  }

  catchUpLater() {
    clearTimeout(this.catchUp);
    this.catchUp = setTimeout(() => this.pumping || this.refresh(), CATCH_UP_MS);
  }

  fail(error) {
    const gone = error.status === 404;
    replace(this.app, h("section", { class: "panel gone", role: "alert" },
      h("h1", {}, gone ? "Game not found" : "The table cannot be shown"),
      h("p", {}, gone ? "This game does not exist or has expired: games are kept for a while after their last move." : error.message),
      h("p", {}, h("a", { href: "#/", class: "button primary" }, "Create a new game"))));
  }

  onStream(state) {
    connection(state);
    clearInterval(this.poller);
    if (state === "down") this.poller = setInterval(() => this.pumping || this.refresh(), POLL_MS);
    else if (state === "live") this.refresh({ ahead: false });
  }

  onEntry(entry) {
    if (entry.version <= this.queued) return;
    this.queued = entry.version;
    this.queue.push(entry);
    this.pump();
  }

  // Show the queued entries one after another, at least STEP_MS apart, then fetch the view
  // (and legal moves) they lead to.
  async pump() {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length && !this.stopped) {
        while (this.queue.length && !this.stopped) await this.step(this.queue.shift());
        await this.refresh({ ahead: false });
      }
    } finally {
      this.pumping = false;
    }
  }

  async step(entry) {
    if (entry.version <= this.view.version) {
      this.note(entry); // the table shows it already (a view fetched ahead): the log still tells it
      return;
    }
    const wait = this.lastStep + STEP_MS - Date.now();
    if (wait > 0) await sleep(wait);
    this.note(entry);
    if (applyEntry(this.view, entry, this.seat)) {
      this.legal = [];
      this.settled = false;
      this.render();
    } else {
      await this.refresh();
    }
    this.lastStep = Date.now();
  }

  note(entry) {
    const line = describe(this.view, entry);
    if (!line || this.log.some((l) => l.version === entry.version)) return;
    this.log = [...this.log, { version: entry.version, text: line }].sort((a, b) => a.version - b.version).slice(-LOG_LINES);
  }

  tick() {
    for (const clock of this.app.querySelectorAll(".clock")) {
      clock.querySelector(".clock-left").textContent = clockText(clock.dataset.deadline);
    }
  }

  legalFor(tile) {
    return this.legal.filter((m) => m.action === "play" && tileName(m.tile) === tileName(tile));
  }

  // A tile chosen from the keyboard (a click without a pointer) sends the focus on to the
  // trains it can go to, so the next Enter plays it.
  select(tile, byKeyboard = this.keyboard) {
    const same = this.selected && tileName(this.selected) === tileName(tile);
    this.selected = same ? null : tile;
    this.problem = "";
    this.render();
    if (byKeyboard && this.selected) {
      const target = this.app.querySelector(".train-target.legal") || this.app.querySelector(".train-target");
      if (target) target.focus();
    }
  }

  // Arrow keys walk along the hand and down the trains.
  onArrow(event) {
    const group = event.target.closest(".hand, .trains");
    if (!group || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(event.key)) return;
    const items = Array.from(group.querySelectorAll(".htile, .train-target"));
    const index = items.indexOf(event.target);
    if (index < 0) return;
    const step = ["ArrowLeft", "ArrowUp"].includes(event.key) ? -1 : 1;
    const next = items[(index + step + items.length) % items.length];
    event.preventDefault();
    next.focus();
  }

  choose(trainId, byKeyboard = this.keyboard) {
    if (!this.selected) {
      this.problem = "Choose a tile from your hand first, then the train to play it on.";
      this.render();
      return;
    }
    this.act({ action: "play", tile: this.selected, train: trainId }, byKeyboard);
  }

  async act(move, byKeyboard = this.keyboard) {
    this.byKeyboard = byKeyboard;
    this.problem = "";
    try {
      const view = await game.move(this.gameId, this.token, move);
      this.selected = null;
      if (this.byKeyboard) {
        // Back to the hand for the next move (the tile just played leaves it).
        const next = this.app.querySelector(".htile:not(.selected)") || this.app.querySelector(".htile");
        if (next) next.focus();
      }
      // The stream brings the entries this move made (bots' replies included) to show one by
      // one; without a stream, show where they led.
      if (!this.live || !this.live.following) {
        this.view = view;
        this.queued = Math.max(this.queued, view.version);
        await this.refresh();
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.problem = error.message;
      this.render();
    }
  }

  // The host hands an absent player's seat to a bot, which plays it from its next move on.
  takeOver(seat) {
    return this.host(() => game.seat(this.gameId, this.hostToken, seat, { bot: "planner" }));
  }

  async host(call) {
    this.problem = "";
    try {
      await call();
      await this.refresh();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.problem = error.message;
      this.render();
    }
  }

  render() {
    if (this.stopped || !this.view) return;
    const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const v = this.view;
    this.app.dataset.version = v.version;
    this.app.dataset.status = v.status;
    // Whether the legal moves shown are the server's for this version (none while replaying).
    this.app.dataset.settled = String(Boolean(this.settled));
    document.title = `Mexican Train — ${v.status === "in_round" && v.turn === this.seat ? "your turn" : `round ${v.round}`}`;
    replace(this.app,
      this.header(),
      v.status === "waiting_deal" ? this.lobby() : null,
      this.results(),
      h("ol", { class: "players", "aria-label": "Players" }, v.players.map((p) => playerCard(v, p, this.seat, this.hostToken ? (seat) => this.takeOver(seat) : null))),
      v.status === "waiting_deal" ? null : this.felt(),
      v.status === "waiting_deal" ? null
        : this.token ? this.rack() : h("p", { class: "spectating" }, "You are watching this game: hands stay hidden."),
      this.logPanel());
    this.scrollTrains();
    // A round's end brings its scores into view (and to a screen reader), once.
    const results = this.app.querySelector("#results");
    const ended = results ? `${v.round}-${v.status}` : null;
    if (results && ended !== this.announced) {
      this.announced = ended;
      results.scrollIntoView({ block: "start" });
      results.focus({ preventScroll: true });
      return;
    }
    const again = focused && this.app.querySelector(`[data-key="${CSS.escape(focused)}"]`);
    if (again) again.focus();
    else if (focused && this.byKeyboard) {
      const first = this.app.querySelector(".htile, button.action:enabled");
      if (first) first.focus();
    }
  }

  // Each train shows its open end: the newest tiles, where play goes on.
  scrollTrains() {
    for (const line of this.app.querySelectorAll(".train .line")) line.scrollLeft = line.scrollWidth;
  }

  header() {
    const v = this.view;
    const turn = v.players.find((p) => p.seat === v.turn);
    let status = "";
    if (v.status === "in_round") status = v.turn === this.seat ? "Your turn" : `${turn ? turn.name : "…"} to play`;
    else status = { waiting_deal: "Waiting to start", round_over: "Round over", game_over: "Game over" }[v.status] || v.status;
    return h("section", { class: "summary", "aria-label": "Game" },
      h("h1", { class: ["turn-banner", v.status === "in_round" && v.turn === this.seat && "mine"] }, status),
      h("p", { class: "facts" },
        h("span", {}, `Round ${v.round} of ${v.rounds}`),
        h("span", {}, `Boneyard ${v.boneyard_size}`),
        h("span", {}, this.seat === null ? "Watching" : `You are seat ${this.seat + 1}`),
        this.hostToken ? h("span", {}, "Host") : null));
  }

  copyRow(label, url) {
    const input = h("input", { type: "text", readonly: true, value: url, "aria-label": label });
    const status = h("span", { class: "copied", role: "status" });
    const copy = async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(url);
        status.textContent = "Copied";
      } catch (error) {
        status.textContent = "Selected: press Ctrl+C to copy";
      }
    };
    return h("div", { class: "copy-row" }, h("span", { class: "copy-label" }, label), input,
      h("button", { type: "button", class: "copy", onclick: copy, "aria-label": `Copy ${label}` }, "Copy"), status);
  }

  lobby() {
    const v = this.view;
    const openSeats = v.players.filter((p) => p.open);
    const rows = [];
    for (const p of openSeats) {
      const url = this.invites[p.seat];
      rows.push(url ? this.copyRow(`Invite for seat ${p.seat + 1}`, url) : h("p", {}, `Seat ${p.seat + 1} is open, waiting for its player.`));
      if (this.hostToken) {
        rows.push(h("button", {
          type: "button", class: "button fill-bot", dataset: { seat: p.seat },
          onclick: () => this.host(() => game.seat(this.gameId, this.hostToken, p.seat, { bot: "greedy" })),
        }, `Give seat ${p.seat + 1} to a bot instead`));
      }
    }
    rows.push(this.copyRow("Link for spectators", `${location.origin}/#/game/${encodeURIComponent(this.gameId)}`));
    const start = this.hostToken
      ? h("button", { type: "button", class: "primary", id: "start", disabled: openSeats.length > 0, onclick: () => this.host(() => game.deal(this.gameId, this.hostToken)) },
        openSeats.length ? `Waiting for ${openSeats.length} player${openSeats.length === 1 ? "" : "s"}` : "Start the game")
      : h("p", {}, "The host starts the game once every seat is taken.");
    return h("section", { class: "panel lobby", "aria-label": "Invitations" },
      h("h2", {}, openSeats.length ? "Invite your friends" : "Everyone is seated"),
      h("p", {}, openSeats.length ? "Send each friend their own link: it seats one person." : "All seats are taken."),
      rows, start, h("p", { class: "problem", role: "alert" }, this.problem));
  }

  results() {
    const v = this.view;
    if (!this.score || !["round_over", "game_over"].includes(v.status)) return null;
    const winners = (v.winners || this.score.winners || []).map((s) => v.players[s].name);
    const deal = this.hostToken && v.status === "round_over" && !v.auto_deal
      ? h("button", { type: "button", class: "primary", id: "deal", onclick: () => this.host(() => game.deal(this.gameId, this.hostToken)) }, `Deal round ${v.round + 1}`)
      : null;
    return h("section", { class: ["panel results", v.status === "game_over" && "final"], "aria-label": "Scores", id: "results", tabindex: "-1" },
      v.status === "game_over"
        ? h("h2", { class: "winners" }, trophyIcon(), ` ${winners.join(" and ")} win${winners.length === 1 ? "s" : ""}!`)
        : h("h2", {}, `Round ${v.round} is over`),
      scoreTable(this.score, v),
      deal,
      v.status === "game_over" ? h("p", {}, h("a", { href: "#/", class: "button" }, "Play again")) : null);
  }

  felt() {
    const v = this.view;
    const legalTrains = this.selected ? new Set(this.legalFor(this.selected).map((m) => m.train)) : null;
    const rows = v.trains.map((train) => trainRow(v, train, {
      target: legalTrains ? legalTrains.has(train.id) : null,
      selected: this.selected,
      onChoose: (id) => this.choose(id),
    }));
    return h("section", { class: "felt", "aria-label": "Table" },
      v.engine === null ? h("p", { class: "empty-table" }, "The tiles are not dealt yet.")
        : h("div", { class: "engine" }, h("span", { class: "engine-label" }, "Engine"), h("span", { class: "engine-value" }, `${v.engine}-${v.engine}`)),
      h("ul", { class: "trains", "aria-label": "Trains" }, rows));
  }

  rack() {
    const v = this.view;
    const hand = v.hand || [];
    const plays = new Set(this.legal.filter((m) => m.action === "play").map((m) => tileName(m.tile)));
    const tiles = hand.map((tile) => handTile(tile, {
      playable: plays.has(tileName(tile)),
      selected: this.selected && tileName(this.selected) === tileName(tile),
      onSelect: (t) => this.select(t),
    }));
    const allowed = new Set(this.legal.map((m) => m.action));
    const buttons = ACTIONS.map(([action, label]) => h("button", {
      type: "button", class: "action", id: `action-${action}`, disabled: !allowed.has(action),
      dataset: { key: `action-${action}` }, onclick: () => this.act({ action }),
    }, label));
    const hint = this.selected
      ? `Now choose a train for ${tileName(this.selected)} (marked ✓), or the tile again to put it back.`
      : plays.size ? "Choose a tile (✓ can be played), then a train." : "";
    return h("section", { class: "rack", "aria-label": "Your hand" },
      h("div", { class: "rack-head" }, h("h2", {}, `Your hand · ${hand.length} tile${hand.length === 1 ? "" : "s"}`), h("p", { class: "hint" }, hint)),
      h("div", { class: "hand", role: "group", "aria-label": "Tiles in your hand" }, tiles),
      v.status === "in_round" ? h("div", { class: "actions" }, buttons) : null,
      h("p", { class: "problem", role: "alert", id: "problem" }, this.problem));
  }

  logPanel() {
    return h("section", { class: "log", "aria-label": "What happened" },
      h("h2", {}, "Last moves"),
      h("ol", { "aria-live": "polite" }, this.log.map((line) => h("li", { dataset: { version: line.version } }, line.text))));
  }
}

export function showTable(app, gameId) {
  const table = new Table(app, gameId);
  table.start();
  return table;
}
