// The game's events stream (SSE). The browser's EventSource reconnects by itself after a
// dropped connection and sends Last-Event-ID, so the server resumes after the last entry seen.
// When the browser gives up (an error answer), a new stream starts after the last entry seen.

import { eventsUrl } from "./api.js";

const RETRY_MS = [1000, 2000, 4000, 8000, 15000];

export class Live {
  constructor(gameId, token, { onEntry, onState }) {
    this.gameId = gameId;
    this.token = token;
    this.onEntry = onEntry;
    this.onState = onState;
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
    this.open();
  }

  open() {
    if (this.stopped) return;
    const source = new EventSource(eventsUrl(this.gameId, this.token, this.last));
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
    source.addEventListener("error", () => {
      if (this.stopped || this.ended) return;
      this.onState("down");
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)];
        this.failures += 1;
        this.timer = setTimeout(() => this.open(), delay);
      }
    });
  }

  // The game has ended: the server closes the stream, which must not be reopened.
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.source) this.source.close();
    this.source = null;
  }
}
