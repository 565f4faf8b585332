// The game's events stream (SSE), read with fetch rather than EventSource: the server's
// keep-alive is a comment line, which an EventSource never shows its page, and a connection
// that died without closing (a NAT or proxy that dropped it: no FIN) brings nothing and never
// fails. Every byte, keep-alives included, tells the watchdog the stream is alive; after
// SILENT_MS of nothing it is opened anew. Each connection starts after the last entry seen.

import { ApiError, eventsUrl, game, pausedFor, retryAfterMs, retryWait } from "./api.js";

const RETRY_MS = [1000, 2000, 4000, 8000, 15000];
// A stream held this long has worked (its first keep-alive, after the server's 10 s of quiet,
// says so): the backoff starts over. An answer alone does not say so: a proxy or a server that
// answers 200 and ends the stream at once would have it reopened every second.
const STEADY_MS = 5000;
// Over twice the longest quiet the server allows a stream (a keep-alive at least every 15 s).
const SILENT_MS = 35000;

export class Live {
  constructor(gameId, token, { onEntry, onState, onRevoked, onPresence, onRewound }) {
    this.gameId = gameId;
    this.token = token;
    this.onEntry = onEntry;
    this.onPresence = onPresence || (() => {});
    this.onState = onState;
    this.onRevoked = onRevoked || (() => {});
    this.onRewound = onRewound || (() => {});
    this.last = 0;
    this.failures = 0;
    this.control = null; // aborts the stream open now (and says which one is current)
    this.streaming = false; // its answer came, and it has not ended since
    this.watchdog = null;
    this.timer = null;
    this.stopped = false;
    this.ended = false;
  }

  get connected() {
    return this.streaming;
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
      this.close();
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

  // A fresh ticket for every connection (a ticket opens one stream only).
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
    this.close(); // one stream at a time
    const control = new AbortController();
    this.control = control;
    this.watch(control); // an answer that never comes is silence too
    let response;
    try {
      response = await fetch(eventsUrl(this.gameId, ticket, this.last), {
        headers: { Accept: "text/event-stream" },
        cache: "no-store",
        signal: control.signal,
      });
    } catch (error) {
      this.dropped(control);
      return;
    }
    if (control !== this.control) return;
    if (response.status === 204) {
      // Nothing more will ever come (the game is over and every entry was seen).
      this.finish();
      return;
    }
    if (response.status === 409) {
      // after_ahead_of_log, the only 409 of this request: Redis lost entries this table was
      // sent, and the versions past its stored one come anew. Reopened, it would be refused
      // again: the table starts over from the game as stored.
      this.stop();
      this.onRewound();
      return;
    }
    if (!response.ok || !response.body) {
      // Refused (a spent ticket, too many streams from this address): its Retry-After, if any,
      // is waited out like a refused ticket's.
      const retryAfter = retryAfterMs(response.headers.get("Retry-After"), response.headers.get("Date"));
      this.dropped(control, retryAfter === null ? null : { retryAfter });
      return;
    }
    this.streaming = true;
    this.onState("live");
    try {
      await this.read(response.body, control, Date.now());
    } catch (error) {
      // aborted here, or the connection failed: both end in dropped() below
    }
    this.dropped(control);
  }

  // The stream's messages as they come (the text/event-stream format of the HTML standard):
  // `event:` and `data:` lines, ended by an empty line; lines starting with ":" are comments
  // (the keep-alive); `id:` is the entry's version, which the entry carries too.
  // `since`: when the stream's answer came; its backoff starts over once it has been held
  // STEADY_MS or brought an entry.
  async read(body, control, since) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let type = "";
    let data = [];
    let afterCR = false; // the text so far ends with a CR
    for (;;) {
      const { value, done } = await reader.read();
      if (control !== this.control) return;
      // Held STEADY_MS, it worked, whether a read came after that or the server then ended it
      // (a rollout's drain before the first keep-alive); a silent one the watch aborts is not.
      if (Date.now() - since >= STEADY_MS) this.failures = 0;
      if (done) return;
      this.watch(control);
      const text = decoder.decode(value, { stream: true });
      // A CRLF cut between two reads: its CR ended the line, its LF is not an empty line (which
      // would end the message after its `event:` line, its data then sent as another type).
      const skip = afterCR && text.startsWith("\n") ? 1 : 0;
      if (text) afterCR = text.endsWith("\r");
      buffer += text.slice(skip);
      const lines = buffer.split(/\r\n|\r|\n/);
      buffer = lines.pop();
      for (const line of lines) {
        if (line === "") {
          if (data.length) this.dispatch(type || "message", data.join("\n"));
          if (control !== this.control) return; // the game ended: nothing after its last entry
          [type, data] = ["", []];
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") type = text;
        else if (field === "data") data.push(text);
      }
    }
  }

  dispatch(type, data) {
    let message;
    try {
      message = JSON.parse(data);
    } catch (error) {
      return; // a message this page cannot read changes nothing
    }
    if (type === "entry") {
      this.failures = 0; // the stream works: a drop after this is retried from the first step
      this.last = Math.max(this.last, message.version);
      // The server ends the stream after the game's last entry: it is not opened again.
      if ((message.events || []).some((event) => event.type === "game_over")) this.finish();
      this.onEntry(message);
    } else if (type === "presence") {
      // Who came to the table or left it: no entry (no id), so a new stream never repeats one.
      this.onPresence(message);
    }
  }

  // Anything at all from the stream, a keep-alive included, says it is alive. The server sends
  // one after 10 s of quiet (clients may count on one every 15 s): after SILENT_MS of nothing
  // the connection is taken for dead, and another opened at once, with a new ticket.
  watch(control) {
    clearTimeout(this.watchdog);
    this.watchdog = setTimeout(() => {
      if (control !== this.control || this.stopped || this.ended) return;
      this.close();
      this.onState("down");
      clearTimeout(this.timer);
      this.open();
    }, SILENT_MS);
  }

  // The stream `control` opened ended or failed: another, after the backoff.
  dropped(control, error = null) {
    if (control !== this.control || this.stopped || this.ended) return;
    this.close();
    this.onState("down");
    this.retry(error);
  }

  close() {
    clearTimeout(this.watchdog);
    if (this.control) this.control.abort();
    this.control = null;
    this.streaming = false;
  }

  // The game is over: its last entry came, or there is none left to come.
  finish() {
    this.ended = true;
    this.close();
    this.onState("");
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
    this.close();
  }
}
