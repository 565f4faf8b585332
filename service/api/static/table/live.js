// The game's events stream (SSE). The browser's EventSource reconnects by itself after a
// dropped connection and sends Last-Event-ID, so the server resumes after the last entry seen.
// When the browser gives up (an error answer), a new stream starts after the last entry seen.

import { ApiError, eventsUrl, game, pausedFor, retryWait } from "./api.js";

const RETRY_MS = [1000, 2000, 4000, 8000, 15000];

export class Live {
  constructor(gameId, token, { onEntry, onState, onRevoked, onPresence }) {
    this.gameId = gameId;
    this.token = token;
    this.onEntry = onEntry;
    this.onPresence = onPresence || (() => {});
    this.onState = onState;
    this.onRevoked = onRevoked || (() => {});
    this.last = 0;
    this.failures = 0;
    this.source = null;
    this.timer = null;
    this.stopped = false;
    this.ended = false;
  }

  get connected() {
    return this.source !== null && this.source.readyState === EventSource.OPEN;
  }

  // Whether entries still come from this stream (the last ones may be on their way to the table
  // after the server ended it with the game).
  get following() {
    return this.connected || this.ended;
  }

  start(after) {
    this.last = Math.max(this.last, after);
    // The browser knows when the device loses its network: an open stream may not fail for a
    // long while then (a connection nobody closed brings nothing), so the table says it is
    // down at once; and once the network is back it reconnects then, not at the next step of
    // its backoff (up to 15 s after a long loss).
    this.onOffline = () => {
      if (this.stopped || this.ended) return;
      clearTimeout(this.timer);
      if (this.source) this.source.close();
      this.onState("down");
    };
    this.onOnline = () => {
      if (this.stopped || this.ended || this.connected || this.opening) return;
      clearTimeout(this.timer);
      this.failures = 0;
      this.open();
    };
    window.addEventListener("offline", this.onOffline);
    window.addEventListener("online", this.onOnline);
    this.open();
  }

  // A fresh ticket for every connection: the browser's own reconnection reuses the URL, whose
  // ticket is spent, so it fails and the error handler below opens anew.
  async open() {
    if (this.stopped) return;
    // A ticket counts against the limit of the token's other requests: after a 429 on any of
    // them (a view polled, a move) it is asked for once that pause is over.
    const held = this.token ? pausedFor(this.gameId, this.token) : 0;
    if (held > 0) {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.open(), held);
      return;
    }
    let ticket = null;
    if (this.token) {
      this.opening = true; // a ticket on its way: the network's return need not ask another
      try {
        ticket = (await game.ticket(this.gameId, this.token)).ticket;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) {
          // The seat was taken from this token (a bot took over, or it was reopened): go on
          // watching as the public does.
          this.token = null;
          this.onRevoked();
        } else {
          // No stream until a ticket is issued: the table says so and fetches the view
          // meanwhile, as when an open stream drops (the first ticket too may be refused).
          this.onState("down");
          this.retry(error);
          return;
        }
      } finally {
        this.opening = false;
      }
    }
    if (this.stopped) return;
    if (this.source) this.source.close(); // one stream at a time
    const source = new EventSource(eventsUrl(this.gameId, ticket, this.last));
    this.source = source;
    source.addEventListener("open", () => {
      this.failures = 0;
      this.onState("live");
    });
    source.addEventListener("entry", (message) => {
      let entry;
      try {
        entry = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      this.last = Math.max(this.last, entry.version);
      if ((entry.events || []).some((event) => event.type === "game_over")) {
        // The server ends the stream after the game's last entry: do not reconnect.
        this.ended = true;
        source.close();
        this.onState("");
      }
      this.onEntry(entry);
    });
    // Who came to the table or left it: no entry (no id), so a resumed stream never repeats one.
    source.addEventListener("presence", (message) => {
      try {
        this.onPresence(JSON.parse(message.data));
      } catch (error) {
        // a message this page cannot read changes nothing
      }
    });
    source.addEventListener("error", () => {
      if (this.stopped || this.ended) return;
      this.onState("down");
      // A ticket opens one connection: let the browser's own reconnection (with the spent
      // ticket) go, and reconnect with a new one.
      if (source.readyState === EventSource.CLOSED || this.token) {
        source.close();
        this.retry();
      }
    });
  }

  // `error`: the refused ticket request, if that was the failure. Its Retry-After (up to
  // RETRY_MAX_MS) is waited out when longer than the backoff: a ticket asked for sooner would be
  // refused again, and count against the seat's limit.
  retry(error = null) {
    const backoff = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)];
    this.failures += 1;
    this.timer = setTimeout(() => this.open(), error ? retryWait(error, backoff) : backoff);
  }

  // The game has ended: the server closes the stream, which must not be reopened.
  stop() {
    this.stopped = true;
    window.removeEventListener("offline", this.onOffline);
    window.removeEventListener("online", this.onOnline);
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
  }
}
