// The table: the game view drawn, moves chosen by tile then train, and the events stream
// replayed entry by entry at a pace a person can follow. The server is the only judge: the
// page shows the legal moves its view carries, sends what the player chooses, and words a
// refusal by its code.

import { ApiError, fromServer, game, idempotencyKey, pausedFor, retryWait } from "./api.js";
import { announce, h, replace } from "./dom.js";
import { applyEntry, describe, lastPlay, roundEnd, trainLabel } from "./entries.js";
import { listOf, sentence, t, tn } from "./i18n.js";
import { Live } from "./live.js";
import { handTile, playerCard, scoreTable, trainRow } from "./parts.js";
import { clockBar, updateBar } from "./clock.js";
import { hint, whyNot, worded } from "./hints.js";
import { rulesLine } from "./rules.js";
import { forget, held, remember } from "./seats.js";
import { handsLeft, summaryOf, summaryOfScore, summaryPanel } from "./summary.js";
import { transferPanel } from "./transfer.js";
import { trophyIcon } from "./icons.js";
import { tileName } from "./tiles.js";

const STEP_MS = 700; // between two entries of the stream: a pace a person can follow
// With a clock running, entries that lead to this seat's turn are shown this fast instead, so
// the replay never eats the player's time.
const HURRY_MS = 120;
const POLL_MS = 3000; // while the stream is down, the view is fetched this long after its last answer
const CATCH_UP_MS = 2000; // entries the stream has not brought by then are fetched instead
const RESEND_MS = 2000; // a move the server did not answer is sent again this often (unless it said when)
const LOG_LINES = 40;
const ARRIVE_MS = 600; // the last tile's pop (table.css: .ttile.last-play.arriving)
const TICK_MS = 250;
// On a window this wide and tall the hand and its buttons stay in view without scrolling:
// trains that would push them below the window's edge scroll within the table instead. Not
// when that would leave the trains less than MIN_TRAINS_PX (a round's summary above them, a
// short window): then the page scrolls, as on a phone.
const FIT_WINDOW = "(min-width: 1000px) and (min-height: 600px)";
const MIN_TRAINS_PX = 150;
const FIT_MARGIN_PX = 8; // kept between the rack and the window's bottom edge
const PAGE_OVERLAP_PX = 48; // of the trains in view before a cue's click, still in view after it

function connection(state) {
  const element = document.getElementById("connection");
  element.className = `connection ${state}`;
  element.textContent = state === "live" ? t("connection.live") : state === "down" ? t("connection.down") : "";
}

// The rows of trains scrolled within the table that are out of its view past the `side` edge
// ("above" or "below"), even in part.
function hiddenRows(trains, side) {
  if (!trains.classList.contains("bounded")) return [];
  const box = trains.getBoundingClientRect();
  return Array.from(trains.querySelectorAll(".train")).filter((row) => {
    const r = row.getBoundingClientRect();
    return side === "below" ? r.bottom > box.bottom + 1 : r.top < box.top - 1;
  });
}

// The cue's button over one edge of the trains: the player's focus stays where it was when it
// is clicked (it hides once the trains are scrolled). Out of the Tab order and unread: the
// keyboard and a screen reader reach every train in the list itself.
function moreCue(side, onClick) {
  return h("button", {
    type: "button", class: ["trains-more", side], hidden: true, tabindex: "-1", "aria-hidden": "true",
    onpointerdown: (event) => event.preventDefault(), onclick: onClick,
  });
}

// A link first in the page takes the keyboard (and a screen reader) to the hand, past the top
// bar, the players and every train: shown while it has the focus. Its address is the table's
// own, so it goes nowhere even if followed; `onSkip` moves the focus.
function skipLink(onSkip) {
  let link = document.getElementById("skip-to-hand");
  if (!onSkip) {
    if (link) link.remove();
    return;
  }
  if (!link) {
    link = h("a", { id: "skip-to-hand", class: "skip-link" });
    document.body.prepend(link);
  }
  link.href = location.hash;
  link.textContent = t("skip.hand");
  link.onclick = (event) => {
    event.preventDefault();
    onSkip();
  };
}

const sameTile = (a, b) => Boolean(a && b) && ((a[0] === b[0] && a[1] === b[1]) || (a[0] === b[1] && a[1] === b[0]));

class Table {
  constructor(app, gameId) {
    this.app = app;
    this.gameId = gameId;
    const mine = held(gameId) || {};
    this.seat = Number.isInteger(mine.seat) ? mine.seat : null;
    this.token = this.seat === null ? null : mine.token;
    this.tableToken = mine.tableToken || null;
    this.invites = mine.invites || {};
    this.view = null;
    this.legal = [];
    this.selected = null;
    this.queue = [];
    this.wake = null; // ends the wait between two entries early (paceBefore)
    this.heard = new Map(); // seat -> present, as this stream last told it (onPresence)
    this.queued = 0;
    this.pumping = false;
    this.lastStep = 0;
    this.problem = null; // {text, transient}
    this.score = null;
    this.scoreFailed = null; // why the final scores could not be fetched: {text, transient}
    this.resultsShown = false; // the final table was drawn, said and brought into view once
    this.log = [];
    this.summaries = [];
    this.last = null; // the last tile played: {train, tile, seat}
    this.arrived = null; // that play once drawn, and when: it pops in once (ARRIVE_MS)
    this.arrivedAt = 0;
    this.drawn = null; // the tile this seat drew this turn
    this.confirming = null; // a host action waiting for its confirmation: {kind, seat}
    this.transfer = null; // this seat's transfer ticket, once asked for
    this.live = null;
    this.streamState = ""; // the stream's: "live", "down", or "" (none)
    this.unanswered = false; // the move in flight got no answer from the app (fromServer): none to take it
    this.stopped = false;
    this.wasMyTurn = false;
    this.handDue = false; // the turn came and its hand is still to be brought into view (showHand)
    // The move sent and not yet answered: {move, key, waiting, until}. `waiting` once an answer
    // said nothing about it (no connection, a 5xx, a 429): it is sent again with the same key.
    // `until`: when (Date.now()) that happens, if the answer's Retry-After made the wait longer
    // than RESEND_MS.
    this.sending = null;
    this.movedAt = -1; // the version the table showed when this seat last moved
    this.trainsBefore = null; // where the trains were scrolled before a chosen tile's train was shown
    this.quietUntil = 0; // no view is fetched on a timer before this (a refusal's Retry-After)
    this.polling = false; // the stream is down: the view is fetched instead (pollLater)
    this.fetching = new Map(); // the view fetches on their way, by kind (refresh)
    this.viewing = null; // the one request for the view on its way: {token, request, shown} (viewRequest)
  }

  async start() {
    replace(this.app, h("p", { class: "panel loading" }, t("table.loading")));
    if (!(await this.refresh())) return;
    // Left while its first view was on its way (the address moved on, or the same table was
    // routed to twice): a second table may already be running, and this one must stay stopped.
    if (this.stopped) return;
    this.queued = this.view.version;
    this.live = new Live(this.gameId, this.token || this.tableToken, {
      onEntry: (entry) => this.onEntry(entry),
      onState: (state) => this.onStream(state),
      onRevoked: () => {
        if (this.token) this.dropSeat().then(() => this.render());
      },
      onPresence: (change) => this.onPresence(change),
      onRewound: () => this.reload(),
    });
    if (this.view.status !== "game_over") this.live.start(this.view.version);
    this.recentMoves();
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.keyboard = false;
    this.onKey = (event) => {
      this.keyboard = true;
      document.documentElement.classList.add("keys");
      if (event.key === "Escape" && this.selected) this.select(this.selected);
      else this.onArrow(event);
    };
    this.onPointer = () => {
      this.keyboard = false;
      document.documentElement.classList.remove("keys");
    };
    document.addEventListener("keydown", this.onKey);
    document.addEventListener("pointerdown", this.onPointer);
    this.onResize = () => {
      this.scrollTrains();
      this.fitTrains();
    };
    window.addEventListener("resize", this.onResize);
    window.addEventListener("settings", this.onResize); // tiles zoomed: the rack grew or shrank
  }

  // The last entries before this page opened, for its log (the stream brings the rest).
  async recentMoves() {
    try {
      const page = await game.events(this.gameId, this.token || this.tableToken, Math.max(0, this.view.version - LOG_LINES));
      for (const entry of page.entries) {
        this.note(entry, { quiet: true });
        this.last = lastPlay(entry) || this.last;
      }
      this.render();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }

  stop() {
    this.stopped = true;
    if (this.live) this.live.stop();
    clearInterval(this.ticker);
    clearTimeout(this.poller);
    clearTimeout(this.catchUp);
    clearTimeout(this.retryTimer);
    clearTimeout(this.resendTimer);
    document.removeEventListener("keydown", this.onKey);
    document.removeEventListener("pointerdown", this.onPointer);
    document.documentElement.classList.remove("keys");
    window.removeEventListener("resize", this.onResize);
    window.removeEventListener("settings", this.onResize);
    for (const name of ["version", "status", "settled"]) delete this.app.dataset[name];
    connection("");
    skipLink(null);
  }

  // Fetch the view (with this seat's legal moves on its turn, and the scores once a round is over).
  // `ahead: false` keeps the table where the stream has brought it when the server is already
  // further: those entries are on their way (or queued) and are shown one by one.
  // Fetches of one kind already on their way are shared, not done again; the request itself is
  // shared by every kind (viewRequest). A fetch begun before the table showed the version it
  // shows now is not of the same kind: its answer may be older than the table.
  refresh({ ahead = true } = {}) {
    const kind = `${ahead} ${this.token} ${this.view ? this.view.version : 0}`;
    if (!this.fetching.has(kind)) {
      this.fetching.set(kind, this.fetchView(ahead).finally(() => this.fetching.delete(kind)));
    }
    return this.fetching.get(kind);
  }

  async fetchView(ahead) {
    // The server asked for a pause (a 429's Retry-After, on this request or any other of the
    // seat's): asked now, the view would only be refused again. It is fetched once the pause is
    // over; a table without a view yet has nothing else to show, and waits for it.
    const held = this.viewing ? 0 : this.heldFor();
    if (held > 0 && this.view) {
      this.later("catchUp", held, () => this.pumping || this.refresh());
      return false;
    }
    if (held > 0) await new Promise((resolve) => setTimeout(resolve, held));
    try {
      const request = this.viewRequest();
      const view = await request;
      this.quietUntil = 0;
      // An answer older than the table with a newer request behind it (viewRequest): that one
      // answers for the table, as this fetch's own. Asking the log for a rewind, or the view
      // again CATCH_UP_MS later, would only spend the seat's requests.
      const newer = this.viewing && this.viewing.request !== request && this.viewing.token === this.token;
      if (newer && this.view && view.version < this.view.version) return this.refresh({ ahead });
      if (!ahead && this.view && view.version > this.view.version && this.live && this.live.following) {
        this.catchUpLater();
        return true;
      }
      // The seat's view carries its legal moves on its turn: no second request.
      const legal = { version: view.version, moves: view.legal_moves || [] };
      const scored = ["round_over", "game_over"].includes(view.status) || view.round > 1;
      const score = scored ? await this.fetchScore(view) : null;
      // Checked once the scores are in: the table may have moved on while they came. An answer
      // the table does not take brings no scores either: they may be older than the table's,
      // and would take the final table away.
      if (this.view && view.version < this.view.version) {
        if (await this.rewound()) return this.reload();
        this.catchUpLater(); // an answer older than the table: ask again
        return true;
      }
      this.score = score;
      this.accept(view, legal);
      return true;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.quietUntil = Date.now() + retryWait(error, 0);
      if (error.status === 401 && this.token) return this.dropSeat();
      // The game's end shown by its entries, whose scores come with this fetch: none other
      // follows it, so its failure is the final table's (resultsFailed).
      if (this.view && this.view.status === "game_over" && !(this.score && this.score.status === "game_over")) this.scoreFailed = worded(error);
      if (this.scoreFailed && this.scoreFailed.transient) this.later("retryTimer", POLL_MS, () => this.refresh());
      if (!this.view) this.fail(error);
      // A refusal the player has to read is not replaced by connection trouble.
      else if (!this.problem || this.problem.transient) this.showProblem(error);
      return false;
    }
  }

  // One request for the view at a time, whichever path asks (a poll, the stream's return, the
  // entries shown, a move's answer): a second caller joins the one on its way. Two sent
  // together both count against the seat's limit, the second before the first's 429 could
  // hold it back. One made with another token (the seat was just lost) is not joined. Nor is
  // one sent before the table showed the version it shows now: its answer may be older than
  // the table, which would wait CATCH_UP_MS to ask again, showing the turn without its moves
  // meanwhile (on a clock, time taken from the player). A new request is sent once that one
  // is answered (one at a time still); if that one fails, so does this, without a request.
  viewRequest() {
    const token = this.token;
    const shown = this.view ? this.view.version : 0;
    const mine = this.viewing && this.viewing.token === token;
    if (!mine || this.viewing.shown < shown) {
      const ask = () => game.view(this.gameId, token);
      const request = (mine ? this.viewing.request.then(ask) : ask()).finally(() => {
        if (this.viewing && this.viewing.request === request) this.viewing = null;
      });
      this.viewing = { token, request, shown };
    }
    return this.viewing.request;
  }

  // How long (ms) the view's requests should still wait: the pause the view's last refusal
  // asked for, or a 429 on any request of the seat's token (they share its limit).
  heldFor() {
    return Math.max(this.quietUntil - Date.now(), this.token ? pausedFor(this.gameId, this.token) : 0);
  }

  // A view older than the table was sent before the table's last entry, or Redis lost entries
  // the table shows (its log went back; the game writes those versions anew). The events after
  // the table's version tell which, from the server's own read: refused (409
  // after_ahead_of_log) in the second case. The stream is refused so too (Live's onRewound),
  // but a table polling without one learns it here.
  async rewound() {
    try {
      await game.events(this.gameId, this.token || this.tableToken, this.view.version);
      return false;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return error.code === "after_ahead_of_log";
    }
  }

  // The table shows entries that are lost: start it over from the game as stored, as opening
  // the page anew would (its log, summaries and stream from there).
  reload() {
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    return false;
  }

  // The scores. Once the game is over nothing else will fetch them again (its stream has
  // ended): a failure then is shown where the final table goes, with a control to try again
  // (scoreFailed), rather than leaving the table without its end.
  async fetchScore(view) {
    try {
      const score = await game.score(this.gameId);
      if (this.scoreFailed) clearTimeout(this.retryTimer);
      this.scoreFailed = null;
      return score;
    } catch (error) {
      if (!(error instanceof ApiError) || view.status !== "game_over") throw error;
      this.scoreFailed = worded(error);
      // Worded as passing by itself ("the page keeps trying"), so it does, beside the control.
      if (this.scoreFailed.transient) this.later("retryTimer", POLL_MS, () => this.refresh());
      return null;
    }
  }

  // Who is at the table changed: the card shows it at once when the table is idle, else with
  // the next entry shown (a redraw in the middle of the bots' paced moves would disturb them).
  onPresence({ seat, present }) {
    this.heard.set(seat, present);
    const player = this.view && this.view.players[seat];
    if (!player || player.present === present) return;
    player.present = present;
    if (!this.pumping && !this.queue.length) this.render();
  }

  // Play again: the rematch's seat for this seat (the first call makes the next game), and the
  // new table token for the one who runs the table; then the new game.
  async rematch(button) {
    button.disabled = true;
    try {
      const seat = await game.rematch(this.gameId, this.token);
      const mine = { seat: seat.seat, name: this.view.players[seat.seat].name, token: seat.token };
      if (this.tableToken) mine.tableToken = (await game.rematch(this.gameId, this.tableToken)).table_token;
      remember(seat.game_id, mine);
      location.hash = `#/game/${seat.game_id}`;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      button.disabled = false;
      this.showProblem(error);
    }
  }

  // The seat's token stopped working here (the seat moved to another device, a bot took it,
  // or it was reopened): this browser forgets the seat, says so, and watches as the public.
  async dropSeat() {
    forget(this.gameId);
    this.token = null;
    this.seat = null;
    this.legal = [];
    this.selected = null;
    this.transfer = null;
    const shown = await this.refresh();
    this.problem = { text: t("refuse.seat_lost"), transient: false };
    return shown;
  }

  accept(view, legal) {
    this.view = view;
    // A view's presence may be a second old (the server reads it at most once a second): what
    // the open stream told since is newer, and no message will come to correct a stale view.
    for (const [seat, present] of this.heard) if (view.players[seat]) view.players[seat].present = present;
    this.queued = Math.max(this.queued, view.version);
    this.legal = legal.version === undefined || legal.version === view.version ? legal.moves : [];
    this.settled = !this.queue.length;
    if (this.problem && this.problem.transient) this.problem = null; // the server answers again
    if (this.selected && !(view.hand || []).some((tile) => sameTile(tile, this.selected))) this.selected = null;
    if (view.turn !== this.seat) this.drawn = null;
    // A round's end the stream did not bring (the page opened after it, or polled past it).
    const ended = ["round_over", "game_over"].includes(view.status);
    if (ended && this.score && !this.summaries.some((s) => s.round === view.round)) {
      this.summaries.push(summaryOfScore(view, this.score, this.seat));
    }
    if (view.status === "game_over" && !this.history) this.revealHands();
    this.render();
  }

  // Once the game is over its history is open to all: every summary shows every hand left.
  async revealHands() {
    this.history = "asked";
    try {
      const rounds = handsLeft(await game.history(this.gameId));
      for (const summary of this.summaries) summary.revealed = rounds[summary.round] || null;
      this.render();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }

  catchUpLater() {
    this.later("catchUp", CATCH_UP_MS, () => this.pumping || this.refresh());
  }

  // While the stream is down the view is fetched instead, each poll after the last answered.
  pollLater() {
    this.later("poller", POLL_MS, async () => {
      try {
        if (!this.pumping) await this.refresh();
      } finally {
        if (this.polling && !this.stopped) this.pollLater();
      }
    });
  }

  // Run `fetch` (a view fetched on a timer) in `pace` ms, or once the pause the server's last
  // refusal asked for is over if that is later (Retry-After, up to RETRY_MAX_MS): that of the
  // view's own refusal, or a 429 on any request of the seat's token (they share its limit).
  // Sooner would be refused again, and count against the seat's limit. `timer`: the field
  // stop() clears.
  later(timer, pace, fetch) {
    clearTimeout(this[timer]);
    this[timer] = setTimeout(() => {
      const left = this.heldFor();
      if (left > 0) this.later(timer, left, fetch);
      else fetch();
    }, pace);
  }

  // The first view could not be fetched: a missing game says so; a server that cannot be
  // reached is asked again until it answers. A table left meanwhile leaves the page shown now
  // alone.
  fail(error) {
    if (this.stopped) return;
    const gone = error.status === 404;
    const problem = worded(error);
    replace(this.app, h("section", { class: "panel gone", role: "alert" },
      h("h1", {}, gone ? t("table.not_found_title") : t("table.cannot_show")),
      h("p", {}, gone ? t("table.not_found_text") : problem.text),
      problem.transient ? h("p", {}, t("table.retrying")) : null,
      h("p", {}, h("a", { href: "#/", class: "button primary" }, t("table.new_game")))));
    if (problem.transient) this.later("retryTimer", POLL_MS, () => this.start());
  }

  showProblem(error) {
    this.problem = worded(error);
    this.render();
  }

  // The top bar: the stream's state, but "down" while the move in flight gets no answer. The
  // streams pool may be up while the API pool is not, and "Live" would contradict the hint
  // under the hand that the move has not reached the server. A stopped table's move may still
  // be answered: the bar is the page's, and whatever page followed says its own state there.
  showConnection() {
    if (this.stopped) return;
    connection(this.unanswered && this.streamState ? "down" : this.streamState);
  }

  onStream(state) {
    this.streamState = state;
    this.showConnection();
    this.heard.clear(); // a new stream (or none) starts from the view fetched now
    const was = this.polling;
    this.polling = state === "down";
    // Each failed attempt at a stream says "down" again: a poll already on its way keeps its
    // pace rather than being put off by every attempt.
    if (!this.polling) clearTimeout(this.poller);
    else if (!was) this.pollLater();
    if (state === "live") this.refresh({ ahead: false });
  }

  onEntry(entry) {
    if (entry.version <= this.queued) return;
    this.queued = entry.version;
    this.queue.push(entry);
    if (this.wake) this.wake();
    this.pump();
  }

  // Show the queued entries one after another, then fetch the view (and legal moves) they
  // lead to.
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

  // Whether the entries still queued hand the turn to this seat while a clock runs: then they
  // are shown quickly, so that the player's time is theirs.
  hurried(entry) {
    const clocked = this.view.clock && this.view.clock.turn_seconds > 0;
    if (!clocked || this.seat === null) return false;
    return [entry, ...this.queue].some((e) => (e.events || []).some((ev) => ev.type === "turn_passed" && ev.seat === this.seat));
  }

  // Wait out the pace since the last entry shown. An entry that comes meanwhile and hands this
  // seat its clocked turn cuts the wait short: the replay must not eat that turn's time.
  async paceBefore(entry) {
    for (;;) {
      const wait = this.lastStep + (this.hurried(entry) ? HURRY_MS : STEP_MS) - Date.now();
      if (wait <= 0) return;
      await new Promise((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, wait);
      });
      this.wake = null;
    }
  }

  async step(entry) {
    if (entry.version <= this.view.version) {
      // The table shows it already (a view fetched ahead): the log and summary still tell it.
      this.note(entry);
      this.noteRoundEnd(entry, false);
      return;
    }
    await this.paceBefore(entry);
    this.note(entry);
    this.last = lastPlay(entry) || this.last;
    const drew = (entry.events || []).find((ev) => ev.type === "tile_drawn" && ev.seat === this.seat && ev.tile);
    if (drew) this.drawn = drew.tile;
    if (applyEntry(this.view, entry, this.seat)) {
      this.legal = [];
      this.settled = false;
      this.noteRoundEnd(entry, true);
      this.render();
    } else {
      this.noteRoundEnd(entry, false);
      await this.refresh();
    }
    this.lastStep = Date.now();
  }

  noteRoundEnd(entry, exact) {
    const ended = roundEnd(entry);
    if (!ended || this.summaries.some((s) => s.round === ended.round)) return;
    this.summaries.push(summaryOf(this.view, ended, this.seat, { exact }));
    this.focusSummary = ended.round;
  }

  note(entry, { quiet = false } = {}) {
    const line = describe(this.view, entry, this.seat);
    if (!line || this.log.some((l) => l.version === entry.version)) return;
    this.log = [...this.log, { version: entry.version, text: line }].sort((a, b) => a.version - b.version).slice(-LOG_LINES);
    if (!quiet) announce(line);
  }

  tick() {
    for (const bar of this.app.querySelectorAll(".clock-bar")) updateBar(bar);
    if (!this.sending || this.sending.until === null) return;
    for (const left of this.app.querySelectorAll(".resend-left")) left.textContent = this.resendText();
  }

  legalFor(tile) {
    return this.legal.filter((m) => m.action === "play" && sameTile(m.tile, tile));
  }

  // A tile chosen from the keyboard sends the focus on to the trains it can go to, so the next
  // Enter plays it. A tile without a move is not chosen: the hint says why.
  select(tile, byKeyboard = this.keyboard) {
    if (this.sending) return; // one move at a time: the hint says the last one is on its way
    const same = this.selected && sameTile(this.selected, tile);
    if (!same && !this.legalFor(tile).length) {
      this.problem = { text: this.view.turn === this.seat ? whyNot(this.view, tile, { legal: this.legal }) : t("refuse.not_your_turn"), transient: false };
      this.render();
      return;
    }
    this.selected = same ? null : tile;
    this.problem = null;
    this.render();
    if (byKeyboard && this.selected) {
      const target = this.app.querySelector(".train-target.legal");
      if (target) target.focus();
    }
  }

  // Arrow keys walk along the hand and down the trains.
  onArrow(event) {
    const group = event.target.closest && event.target.closest(".hand, .trains");
    if (!group || !["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(event.key)) return;
    const items = Array.from(group.querySelectorAll(".htile, .train-target"));
    const index = items.indexOf(event.target);
    if (index < 0) return;
    const step = ["ArrowLeft", "ArrowUp"].includes(event.key) ? -1 : 1;
    event.preventDefault();
    items[(index + step + items.length) % items.length].focus();
  }

  choose(trainId, byKeyboard = this.keyboard) {
    if (this.sending) return; // no train is offered meanwhile
    if (!this.selected) {
      this.problem = { text: t("refuse.choose_tile_first"), transient: false };
      this.render();
      return;
    }
    if (!this.legalFor(this.selected).some((m) => m.train === trainId)) {
      const train = this.view.trains.find((tr) => tr.id === trainId);
      this.problem = { text: t("refuse.not_this_train", { tile: tileName(this.selected), end: train ? train.open_end : "?" }), transient: false };
      this.render();
      return;
    }
    this.act({ action: "play", tile: this.selected, train: trainId }, byKeyboard);
  }

  async act(move, byKeyboard = this.keyboard) {
    if (this.sending) return; // one move at a time: the one in flight may still be applied
    this.byKeyboard = byKeyboard;
    this.problem = null;
    // Set before the answer: the stream may draw the move's entry before the answer comes.
    this.pendingFocus = byKeyboard;
    this.movedAt = this.view.version;
    this.sending = { move, key: idempotencyKey(), waiting: false, until: null };
    this.render(); // the tile reads as on its way, and no train is offered for it meanwhile
    await this.send();
  }

  // Send the move in flight. An answer that says nothing of it (the server cannot be reached,
  // a 5xx, a 429) may hide a move that was applied: it is sent again with the same
  // Idempotency-Key until the server answers, which then replays its first answer if it was.
  // After an answer with Retry-After it is sent again no sooner than that asks (up to
  // RETRY_MAX_MS): sooner would only be refused again, and count against the seat's limit.
  async send() {
    const sending = this.sending;
    if (!sending || this.stopped) return;
    const { move, key } = sending;
    // The seat's limit is spent (a 429 on any of its requests): sent now, the move would only
    // be refused again.
    const held = pausedFor(this.gameId, this.token);
    if (held > 0) {
      this.resendIn(sending, held);
      return;
    }
    try {
      const view = await game.move(this.gameId, this.token, move, key);
      this.heardFromServer(true);
      this.sending = null;
      if (this.problem && this.problem.transient) this.problem = null;
      this.selected = null;
      if (move.action !== "draw") this.drawn = null;
      // Drawn while the move was in flight, the table shows its actions disabled: draw it
      // again if the stream has already brought the move, since nothing else will.
      if (this.byKeyboard || sending.waiting || this.view.version > this.movedAt) this.render();
      // The stream brings the entries this move made (bots' replies included) to show one by
      // one; without a stream, show where they led.
      if (!this.live || !this.live.following) {
        this.view = view;
        this.queued = Math.max(this.queued, view.version);
        await this.refresh();
      }
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const problem = worded(error);
      if (problem.transient && this.token) {
        this.heardFromServer(fromServer(error));
        this.resendIn(sending, Math.max(retryWait(error, RESEND_MS), pausedFor(this.gameId, this.token)));
        return;
      }
      this.sending = null;
      this.heardFromServer(true); // nothing in flight any more
      this.pendingFocus = false;
      if (sending.waiting) {
        // Refused after the page had said it would send it again: the player must know that
        // this move never happened, and may choose again.
        this.selected = null;
        this.problem = { text: t("move.not_played", { move: this.moveName(move), reason: problem.text }), transient: false };
        this.render();
        this.refresh();
      } else {
        this.showProblem(error);
      }
    }
  }

  // Whether the move's last send was answered (a 429, a refusal, or the app's own 5xx problem
  // is an answer: fromServer), or nothing is in flight any more.
  heardFromServer(answered) {
    if (this.unanswered === !answered) return;
    this.unanswered = !answered;
    this.showConnection();
  }

  // The move in flight is sent again in `wait` ms, and the player told so.
  resendIn(sending, wait) {
    sending.waiting = true;
    sending.until = wait > RESEND_MS ? Date.now() + wait : null; // the usual pace is not worth a number
    this.render();
    clearTimeout(this.resendTimer);
    this.resendTimer = setTimeout(() => this.send(), wait);
  }

  moveName(move) {
    if (move.action === "play") return `${tileName(move.tile)}, ${trainLabel(this.view, move.train)}`;
    return { draw: t("action.draw"), mark: t("action.mark"), end_turn: t("action.end_turn") }[move.action] || move.action;
  }

  // Host actions ask first: a second click on "yes" carries them out.
  ask(kind, seat) {
    this.confirming = { kind, seat };
    this.render();
    const yes = this.app.querySelector(".confirm .yes");
    if (yes) yes.focus();
  }

  confirmed() {
    const { kind, seat } = this.confirming;
    this.confirming = null;
    const level = kind === "take-over" ? "planner" : "greedy";
    return this.host(() => game.seat(this.gameId, this.tableToken, seat, { bot: level }));
  }

  async host(call) {
    this.problem = null;
    try {
      await call();
      await this.refresh();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.showProblem(error);
    }
  }

  confirmBox(question, yesLabel) {
    return h("div", { class: "confirm", role: "group", "aria-label": question },
      h("span", { class: "question" }, question),
      h("button", { type: "button", class: "button yes", onclick: () => this.confirmed() }, yesLabel),
      h("button", { type: "button", class: "button no", onclick: () => { this.confirming = null; this.render(); } }, t("host.cancel")));
  }

  hostAction(player, name) {
    if (this.confirming && this.confirming.kind === "take-over" && this.confirming.seat === player.seat) {
      return this.confirmBox(t("host.take_over_question", { name }), t("host.take_over_yes"));
    }
    return h("button", { type: "button", class: "take-over", onclick: () => this.ask("take-over", player.seat), "aria-label": t("host.take_over_label", { name }) }, t("host.take_over"));
  }

  render() {
    if (this.stopped || !this.view) return;
    const active = document.activeElement;
    const focused = active && active.dataset ? active.dataset.key : null;
    const inHand = Boolean(active && active.closest && active.closest(".rack"));
    const handIndex = inHand ? Array.from(this.app.querySelectorAll(".htile")).indexOf(active) : -1;
    const log = this.logPlace();
    const trains = this.app.querySelector(".felt .trains");
    const trainsTop = trains ? trains.scrollTop : 0;
    const v = this.view;
    this.app.dataset.version = v.version;
    this.app.dataset.status = v.status;
    this.app.dataset.settled = String(Boolean(this.settled));
    const myTurn = v.status === "in_round" && v.turn === this.seat;
    document.title = `${t("app.title")} — ${myTurn ? t("status.your_turn") : t("status.round", { round: v.round })}`;
    replace(this.app,
      this.header(),
      this.transfer ? transferPanel(this.transfer, () => { this.transfer = null; this.render(); }) : null,
      clockBar(v, { mine: myTurn }),
      // Who won is what a player looks for at the end: above the rounds' summaries.
      this.results(),
      this.summaryPanels(),
      v.status === "waiting_deal" ? this.lobby() : null,
      h("ol", { class: "players", "aria-label": t("table.players") }, v.players.map((p) => playerCard(v, p, this.seat, {
        hostAction: this.tableToken ? (player, name) => this.hostAction(player, name) : null,
        lastMover: this.last ? this.last.seat : null,
      }))),
      h("div", { class: "play-area" },
        h("div", { class: "play-main" },
          v.status === "waiting_deal" ? null : this.felt(),
          v.status === "waiting_deal" ? null : this.token ? this.rack() : this.watching()),
        this.logPanel()));
    skipLink(this.token && v.status !== "waiting_deal" ? () => this.focusHand() : null);
    this.scrollTrains();
    this.fitTrains(trainsTop);
    this.scrollLog(log);
    this.placeFocus({ focused, inHand, handIndex, myTurn });
    this.showResults();
    if (myTurn && !this.wasMyTurn) announce(t("announce.your_turn"));
    // Once the turn's legal moves came (until then the rack may still grow: its hint, the tiles
    // marked), and once only: a render before that or after it leaves the page where the
    // player scrolled it.
    this.handDue = myTurn && (this.handDue || !this.wasMyTurn) && !(this.settled && this.showHand());
    this.wasMyTurn = myTurn;
  }

  // Where the trains push the rack below the window's edge (a phone: it is under every train),
  // the turn's coming scrolls the hand and its buttons into view: else a player sees nothing of
  // their tiles without scrolling. The focus is not moved, and a keyboard's focus elsewhere on
  // the page is not scrolled away from: the hand comes once the focus is back in the rack or let
  // go. Returns whether that is done (false: try again at the next render).
  showHand() {
    const rack = this.app.querySelector(".rack");
    const hand = rack && rack.querySelector(".hand");
    if (!hand) return true;
    const active = document.activeElement;
    const busy = active && active !== document.body && !rack.contains(active);
    if (this.keyboard && busy) return false;
    const box = hand.getBoundingClientRect();
    const top = parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0;
    if (box.top >= top && box.bottom <= window.innerHeight) return true;
    const smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    const behavior = smooth ? "smooth" : "auto";
    // The whole rack when it fits under the clock bar (html's scroll-padding-top); else the hand
    // and the buttons below it (draw, pass), the hint above cut; else the hand from its top.
    const room = window.innerHeight - top;
    const actions = rack.querySelector(".actions") || hand;
    if (rack.getBoundingClientRect().height <= room) rack.scrollIntoView({ block: "end", behavior });
    else if (actions.getBoundingClientRect().bottom - box.top <= room) actions.scrollIntoView({ block: "end", behavior });
    else hand.scrollIntoView({ block: "start", behavior });
    return true;
  }

  // Who won is what everyone waits for: said as the final table comes (the live region had
  // only the last move's line, which ends with the game's end), and brought into view. On a phone it comes above the round's
  // summary, out of sight of a player who tapped the last tile at the foot of the page, and
  // the keyboard's focus goes to it without scrolling (placeFocus).
  showResults() {
    const results = this.app.querySelector("#results");
    if (!results || this.resultsShown) return;
    this.resultsShown = true;
    announce(results.querySelector(".winners").textContent.trim());
    results.scrollIntoView({ block: "nearest" });
  }

  // Focus stays where play goes on: on the element it was on; else, after a move made from the
  // keyboard, on the hand (its first playable tile once it is this seat's turn again).
  placeFocus({ focused, inHand, handIndex, myTurn }) {
    if (this.focusSummary !== undefined && this.focusSummary !== null) {
      // The game's last round: its final table, above the summary, says the most. It comes
      // with the scores, fetched after the last entry: until then the summary holds the focus.
      const results = this.app.querySelector("#results");
      const panel = results || this.app.querySelector("#score-retry") || this.app.querySelector(`#summary-${this.focusSummary}`);
      if (results || this.view.status !== "game_over") this.focusSummary = null;
      if (panel && (this.keyboard || this.pendingFocus)) {
        panel.focus({ preventScroll: true });
        if (results) this.pendingFocus = false; // the game is over: no play to go back to
        return;
      }
    }
    const tiles = Array.from(this.app.querySelectorAll(".htile"));
    // After a move from the keyboard: once the table shows that move and this seat's turn with
    // its legal moves, the first playable tile (or action). Until then a render may still draw
    // the hand before the move, whose tiles say nothing of what is playable next.
    if (this.pendingFocus && myTurn && this.settled && this.view.version > this.movedAt) {
      const next = this.app.querySelector(".htile.playable") || this.app.querySelector("button.action:enabled")
        || tiles[Math.min(Math.max(handIndex, 0), tiles.length - 1)] || this.app.querySelector(".hand");
      if (next) next.focus({ preventScroll: true });
      this.pendingFocus = false;
      return;
    }
    const again = focused && this.app.querySelector(`[data-key="${CSS.escape(focused)}"]`);
    // After a move from the keyboard, play goes on in the hand, not on the train just used.
    if (again && !(this.pendingFocus && !inHand)) {
      again.focus({ preventScroll: true });
      return;
    }
    if (!inHand && !this.pendingFocus) return;
    const next = tiles[Math.min(Math.max(handIndex, 0), tiles.length - 1)] || this.app.querySelector(".hand");
    if (next) next.focus({ preventScroll: true });
  }

  // The skip link's end: the first tile a move can be made with, else the hand's first tile.
  focusHand() {
    const target = this.app.querySelector(".htile.playable") || this.app.querySelector(".htile") || this.app.querySelector(".hand");
    if (target) target.focus();
  }

  // Where the reader has the move log: at its newest line (as it starts), or scrolled up to
  // read, which a redraw must not undo.
  logPlace() {
    const lines = this.app.querySelector(".log-lines");
    if (!lines) return { newest: true, top: 0 };
    return { newest: lines.scrollTop + lines.clientHeight >= lines.scrollHeight - 4, top: lines.scrollTop };
  }

  scrollLog({ newest, top }) {
    const lines = this.app.querySelector(".log-lines");
    if (lines) lines.scrollTop = newest ? lines.scrollHeight : top;
  }

  // Each train shows its open end: the newest tiles, where play goes on.
  scrollTrains() {
    for (const line of this.app.querySelectorAll(".train .line")) line.scrollLeft = line.scrollWidth;
  }

  // Keep the rack within the window on a wide screen (FIT_WINDOW): the trains get the height
  // left above it and scroll within the table, from `top` (where the player had them). A tile
  // chosen brings a train it may go to into view, and the trains go back where they were once
  // it is played or put back.
  fitTrains(top = null) {
    const trains = this.app.querySelector(".felt .trains");
    if (!trains) return;
    let was = top === null ? trains.scrollTop : top;
    if (!this.selected && this.trainsBefore !== null) {
      was = this.trainsBefore;
      this.trainsBefore = null;
    }
    trains.classList.remove("bounded", "more-above", "more-below");
    this.boundTrains(trains, was);
    this.trainEdges(trains);
  }

  // The trains bounded to the height left above the rack, from `was`, where it does not fit
  // below them; a train a chosen tile may go to brought into view.
  boundTrains(trains, was) {
    const rack = this.app.querySelector(".rack");
    if (!rack || !window.matchMedia(FIT_WINDOW).matches) return;
    const over = rack.getBoundingClientRect().bottom + window.scrollY + FIT_MARGIN_PX - window.innerHeight;
    const height = Math.floor(trains.getBoundingClientRect().height - over);
    if (over <= 0 || height < MIN_TRAINS_PX) return;
    // CSSOM, not a style attribute: the page's CSP allows the one and forbids the other.
    trains.style.setProperty("--trains-height", `${height}px`);
    trains.classList.add("bounded");
    trains.scrollTop = was;
    const legal = Array.from(trains.querySelectorAll(".train.legal"));
    const box = trains.getBoundingClientRect();
    const shown = (row) => {
      const r = row.getBoundingClientRect();
      return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
    };
    if (legal.length && !legal.some(shown)) {
      if (this.trainsBefore === null) this.trainsBefore = trains.scrollTop;
      const row = legal[0].getBoundingClientRect(); // to the middle: clear of the faded edges
      trains.scrollTop += (row.top + row.bottom) / 2 - (box.top + box.bottom) / 2;
    }
  }

  // Trains scrolled within the table fade out at an edge with more beyond it, and a cue over
  // that edge says how many are past it, naming those a player looks for (the Mexican train,
  // their own, one the chosen tile may go to, marked ✓): a fade is easily missed, and a scroll
  // bar is not always drawn (overlay scroll bars show only while scrolling).
  trainEdges(trains) {
    for (const side of ["above", "below"]) {
      const rows = hiddenRows(trains, side);
      trains.classList.toggle(`more-${side}`, rows.length > 0);
      const cue = trains.parentElement.querySelector(`.trains-more.${side}`);
      if (!cue) continue;
      cue.hidden = rows.length === 0;
      cue.classList.toggle("playable", rows.some((row) => row.classList.contains("legal")));
      const named = rows.map((row) => this.cueName(row)).filter(Boolean);
      const more = side === "above" ? tn("trains.more_above", rows.length) : tn("trains.more_below", rows.length);
      cue.textContent = named.length ? `${more}: ${listOf(named)}` : more;
    }
  }

  // A hidden train as the cue names it: none for another player's train the tile cannot go to.
  cueName(row) {
    const id = row.dataset.train;
    const legal = row.classList.contains("legal");
    if (!legal && id !== "mexican" && Number(id) !== this.seat) return null;
    const name = trainLabel(this.view, id, this.seat);
    return legal ? `✓ ${name}` : name;
  }

  // A cue clicked: the trains scroll a view's height (less a row's overlap) towards `direction`.
  pageTrains(direction) {
    const trains = this.app.querySelector(".felt .trains");
    if (trains) trains.scrollTop += direction * Math.max(trains.clientHeight - PAGE_OVERLAP_PX, PAGE_OVERLAP_PX);
  }

  statusText() {
    const v = this.view;
    if (v.status === "in_round") {
      const turn = v.players.find((p) => p.seat === v.turn);
      return v.turn === this.seat ? t("status.your_turn") : t("status.to_play", { name: turn ? turn.name : "…" });
    }
    if (v.status === "waiting_deal") return t("status.waiting_deal");
    if (v.status === "round_over") return t("status.round_over");
    return t("status.game_over");
  }

  header() {
    const v = this.view;
    const mine = v.status === "in_round" && v.turn === this.seat;
    return h("section", { class: "summary", "aria-label": t("table.game") },
      h("h1", { class: ["turn-banner", mine && "mine"] }, this.statusText()),
      h("p", { class: "facts" },
        h("span", {}, t("facts.round", { round: v.round, rounds: v.rounds })),
        h("span", {}, t("facts.boneyard", { n: v.boneyard_size })),
        h("span", {}, this.seat === null ? t("facts.watching") : t("facts.seat", { seat: this.seat + 1 })),
        this.tableToken ? h("span", {}, t("facts.host")) : null,
        this.token && v.status !== "game_over"
          ? h("button", { type: "button", class: "link-button", id: "move-seat", onclick: () => this.askTransfer() }, t("transfer.open"))
          : null),
      rulesLine(v));
  }

  async askTransfer() {
    try {
      const ticket = await game.transfer(this.gameId, this.token);
      this.transfer = { ...ticket, gameId: this.gameId };
      this.render();
      const panel = this.app.querySelector("#transfer");
      if (panel) panel.focus();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.showProblem(error);
    }
  }

  copyRow(label, url, key) {
    const input = h("input", { type: "text", readonly: true, value: url, "aria-label": label });
    const status = h("span", { class: "copied", role: "status" });
    const copy = async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(url);
        status.textContent = t("copy.copied");
      } catch (error) {
        status.textContent = t("copy.selected");
      }
    };
    return h("div", { class: "copy-row" }, h("span", { class: "copy-label" }, label), input,
      h("button", { type: "button", class: "copy", onclick: copy, dataset: { key }, "aria-label": t("copy.label", { label }) }, t("copy.button")), status);
  }

  seatInvite(p) {
    const url = this.invites[p.seat];
    const rows = [url ? this.copyRow(t("lobby.invite_for", { seat: p.seat + 1 }), url, `invite-${p.seat}`) : h("p", {}, t("lobby.seat_open", { seat: p.seat + 1 }))];
    if (!this.tableToken) return rows;
    if (this.confirming && this.confirming.kind === "fill" && this.confirming.seat === p.seat) {
      rows.push(this.confirmBox(t("host.fill_question", { seat: p.seat + 1 }), t("host.fill_yes")));
    } else {
      rows.push(h("button", { type: "button", class: "button fill-bot", dataset: { seat: p.seat }, onclick: () => this.ask("fill", p.seat) }, t("lobby.fill_bot", { seat: p.seat + 1 })));
    }
    return rows;
  }

  lobby() {
    const v = this.view;
    const openSeats = v.players.filter((p) => p.open);
    const rows = openSeats.map((p) => this.seatInvite(p));
    rows.push(this.copyRow(t("lobby.spectators"), `${location.origin}/#/game/${encodeURIComponent(this.gameId)}`, "spectators"));
    const start = this.tableToken
      ? h("button", { type: "button", class: "primary", id: "start", disabled: openSeats.length > 0, onclick: () => this.host(() => game.deal(this.gameId, this.tableToken)) },
        openSeats.length ? tn("lobby.waiting_for", openSeats.length) : t("lobby.start"))
      : h("p", {}, t("lobby.host_starts"));
    return h("section", { class: "panel lobby", "aria-label": t("lobby.label") },
      h("h2", {}, openSeats.length ? t("lobby.invite_title") : t("lobby.all_seated")),
      h("p", {}, openSeats.length ? t("lobby.invite_text") : t("lobby.all_seated_text")),
      rows, start, this.problemLine("lobby-problem"));
  }

  // A spectator's place of the rack: what watching means, and why, if the seat left.
  watching() {
    return h("div", { class: "watching" },
      h("p", { class: "spectating" }, t("table.watching_text")),
      this.problem ? this.problemLine("problem") : null);
  }

  // A move waiting for the server is said first: the connection's trouble is said above.
  problemLine(id) {
    const waiting = this.sending && this.sending.waiting;
    const text = waiting ? this.resending() : this.problem ? this.problem.text : "";
    return h("p", { class: ["problem", (waiting || (this.problem && this.problem.transient)) && "transient"], role: "alert", id }, text);
  }

  // The move waiting to be sent again, and how long the page still waits if the server asked,
  // counted down by tick(). A screen reader hears the sentence once, from a copy that does not
  // count: a number changing in an alert would be read out again every second.
  resending() {
    if (this.sending.until === null) return t("move.resending", { move: this.moveName(this.sending.move) });
    const text = this.resendText();
    return [h("span", { class: "resend-left", "aria-hidden": "true" }, text), h("span", { class: "visually-hidden" }, text)];
  }

  resendText() {
    const { move, until } = this.sending;
    const left = Math.ceil((until - Date.now()) / 1000);
    if (left <= 0) return t("move.resending", { move: this.moveName(move) }); // on its way again
    return tn("move.resending_after", left, { move: this.moveName(move) });
  }

  summaryPanels() {
    const v = this.view;
    const open = this.summaries.filter((s) => !s.dismissed);
    if (!open.length) return null;
    const latest = open[open.length - 1];
    return h("div", { class: "summaries" }, open.slice().reverse().map((s) => summaryPanel(s, {
      onDismiss: () => this.dismiss(s),
      extra: s === latest && this.tableToken && v.status === "round_over" && v.round === s.round
        ? h("button", { type: "button", class: "primary", id: "deal", onclick: () => this.host(() => game.deal(this.gameId, this.tableToken)) }, t("summary.deal_next", { round: v.round + 1 }))
        : null,
    })));
  }

  dismiss(summary) {
    summary.dismissed = true;
    this.pendingFocus = true;
    this.render();
  }

  results() {
    const v = this.view;
    if (v.status !== "game_over") return null;
    // Scores fetched before the last round ended are not the final ones: until those come, the
    // last round's summary stands alone (or the failure to fetch them, and a retry).
    if (!this.score || this.score.status !== "game_over") return this.scoreFailed ? this.resultsFailed() : null;
    const seats = v.winners || this.score.winners || [];
    // The caption says the lowest total wins: alone, that reads as a mistake when another
    // player has the winner's total and the tie-break decided (docs/rules.md section 8: most
    // rounds scored 0, then the lowest non-zero single round).
    const best = this.score.players.find((p) => seats.includes(p.seat));
    const tied = best && this.score.players.some((p) => !seats.includes(p.seat) && p.total === best.total);
    // Its keys keep the focus on it, or on a button of it, through the renders that follow (the
    // hands revealed, a seat's presence).
    return h("section", { class: "panel results final", "aria-label": t("score.label"), id: "results", tabindex: "-1", dataset: { key: "results" } },
      h("h2", { class: "winners" }, trophyIcon(), " ", this.winnersLine(seats)),
      scoreTable(this.score, v, this.seat),
      tied ? h("p", { class: "tie-break" }, t("score.tie_break", { total: best.total })) : null,
      h("p", { class: "after-game" },
        this.token ? h("button", { type: "button", class: "primary", id: "rematch", dataset: { key: "rematch" }, onclick: (event) => this.rematch(event.currentTarget) }, t("rematch.button")) : null,
        " ",
        h("a", { href: "#/", class: "button", dataset: { key: "new-game" } }, t("score.new_game"))),
      this.token ? this.problemLine("rematch-problem") : null);
  }

  // Told to the reader as the round's summary tells it: a winner is "you" (first among several
  // winners); a watcher reads names.
  winnersLine(seats) {
    const others = seats.filter((seat) => seat !== this.seat).map((seat) => this.view.players[seat].name);
    if (others.length === seats.length) return tn("score.winners", others.length, { names: listOf(others) });
    if (!others.length) return t("score.you_win");
    return sentence(t("score.you_and_win", { names: listOf([t("player.you"), ...others]) }));
  }

  // In the final table's place when the scores could not be fetched: why, and a control to
  // fetch them again, which takes the focus the final table would have had (placeFocus).
  resultsFailed() {
    return h("section", { class: "panel results final failed", "aria-label": t("score.label"), id: "results-failed" },
      h("p", { class: "problem", id: "results-failed-text" }, t("score.failed"), " ", this.scoreFailed.text),
      h("p", { class: "after-game" },
        h("button", { type: "button", class: "primary", id: "score-retry", "aria-describedby": "results-failed-text", dataset: { key: "score-retry" }, onclick: () => this.refresh() }, t("score.retry")),
        " ",
        h("a", { href: "#/", class: "button" }, t("score.new_game"))));
  }

  // The play on its way to the server, if any: until it is answered no train is offered for
  // its tile (a click there could do nothing: one move at a time).
  inFlight() {
    return this.sending && this.sending.move.action === "play" ? this.sending.move : null;
  }

  felt() {
    const v = this.view;
    const flying = this.inFlight();
    const choosing = this.sending ? null : this.selected;
    const legalTrains = choosing ? new Set(this.legalFor(choosing).map((m) => m.train)) : null;
    // Each entry's play is a new object: its pop starts when it is first drawn.
    const now = performance.now();
    if (this.last !== this.arrived) [this.arrived, this.arrivedAt] = [this.last, now];
    const arriving = now - this.arrivedAt < ARRIVE_MS ? now - this.arrivedAt : null;
    const rows = v.trains.map((train) => trainRow(v, train, {
      target: legalTrains ? legalTrains.has(train.id) : null,
      selected: choosing,
      sending: Boolean(flying && flying.train === train.id),
      last: this.last && this.last.train === train.id ? this.last : null,
      arriving,
      onChoose: (id) => this.choose(id),
    }));
    return h("section", { class: "felt", "aria-label": t("table.table") },
      v.engine === null ? h("p", { class: "empty-table" }, t("table.not_dealt"))
        : h("div", { class: "engine" }, h("span", { class: "engine-label" }, t("table.engine")), h("span", { class: "engine-value" }, `${v.engine}-${v.engine}`)),
      h("div", { class: "trains-box" },
        h("ul", { class: "trains", "aria-label": t("table.trains"), onscroll: (event) => this.trainEdges(event.currentTarget) }, rows),
        moreCue("above", () => this.pageTrains(-1)),
        moreCue("below", () => this.pageTrains(1))));
  }

  actionButtons() {
    const allowed = new Set(this.legal.map((m) => m.action));
    const labels = { draw: t("action.draw"), mark: t("action.mark"), end_turn: t("action.end_turn") };
    return Object.entries(labels).map(([action, label]) => h("button", {
      type: "button", class: "action", id: `action-${action}`, disabled: !allowed.has(action) || Boolean(this.sending),
      dataset: { key: `action-${action}` }, onclick: () => this.act({ action }),
    }, label));
  }

  rack() {
    const v = this.view;
    const hand = v.hand || [];
    const flying = this.inFlight();
    const tiles = hand.map((tile) => handTile(tile, {
      playable: this.legalFor(tile).length > 0,
      selected: this.selected && sameTile(this.selected, tile),
      busy: Boolean(this.sending),
      sending: Boolean(flying && sameTile(flying.tile, tile)),
      drawn: this.drawn && sameTile(this.drawn, tile),
      onSelect: (chosen) => this.select(chosen),
    }));
    const words = hint(v, { legal: this.legal, seat: this.seat, selected: this.selected, settled: this.settled, sending: Boolean(this.sending) });
    return h("section", { class: "rack", "aria-label": t("rack.label") },
      h("div", { class: "rack-head" }, h("h2", {}, tn("rack.title", hand.length)), h("p", { class: "hint", id: "hint" }, words)),
      h("div", { class: "hand", role: "group", tabindex: "-1", "aria-label": t("rack.tiles"), "aria-describedby": "hint" }, tiles),
      v.status === "in_round" ? h("div", { class: "actions" }, this.actionButtons()) : null,
      this.problemLine("problem"));
  }

  logPanel() {
    return h("aside", { class: "log", "aria-label": t("log.title") },
      h("h2", {}, t("log.title")),
      h("ol", { class: "log-lines", tabindex: "0", "aria-label": t("log.title") }, this.log.map((line) => h("li", { dataset: { version: line.version } }, line.text))));
  }
}

export function showTable(app, gameId) {
  const table = new Table(app, gameId);
  table.start();
  return table;
}
