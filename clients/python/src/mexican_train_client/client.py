"""A small typed client for the Mexican Train HTTP API (``docs/api.md``).

Retries are safe by construction: every mutating call carries an ``Idempotency-Key`` generated
once per logical call and reused on each retry, so a request whose response was lost applies at
most once; a removal (``DELETE``), which the API takes no key on, is safe to repeat by its
method, and its repeat's 404 after a lost answer is the removal done (``gone``). Connection
errors and 502/503/504 retry with capped exponential back-off and full jitter; 429 waits for
``Retry-After``; a 412 re-reads the game and raises :class:`StaleVersion` with the fresh view
so the caller can decide again (re-sending blindly would defeat ``If-Match``).
"""

from __future__ import annotations

import email.utils
import json
import random
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

import requests
from requests.adapters import HTTPAdapter

from mexican_train_client.errors import (
    ApiError,
    StaleVersion,
    TransportError,
    error_for,
)
from mexican_train_client.stream import Media, ends_game, entries_of, lines_of

JSON = dict[str, Any]

_RETRY_STATUSES = frozenset({502, 503, 504})
#: Methods whose repeat changes nothing more than their first try (RFC 9110, 9.2.2), which
#: therefore carry no Idempotency-Key: the API takes none on its one removal.
_IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "DELETE"})
_DROPPED = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)
#: Seconds a stream may stay silent: the server sends a keep-alive at least every 15 s.
STREAM_READ_TIMEOUT = 35.0
# A stream the server ended sooner than this without an entry is opened again after a back-off.
LASTED_SECONDS = 5.0
#: Doublings of a back-off's bound past which it stays put: 2.0**1023 is the last a float holds.
_MAX_DOUBLINGS = 1000


class _Ended(Exception):
    """The server answered a stream with 204: the game is over and the reader has it all."""


class _NotAStream(Exception):
    """The server answered a stream 200 with something else than the asked stream (a captive
    portal's page, a misrouted proxy's, a line that is not JSON): no entry can come of it."""


class _Refused(Exception):
    """The server refused a stream for now (429, 502-504): ``err`` says why and how long."""

    def __init__(self, err: ApiError) -> None:
        super().__init__(str(err))
        self.err = err


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded retries: back-off ``base * 2**n`` capped at ``cap``, full jitter, until
    ``attempts`` tries were made or ``give_up_after`` seconds passed since the first,
    whichever comes first. The default rides out a server restarting for about 15 s
    (connections refused, then 502/503 from its proxy) in about 20 tries."""

    attempts: int = 100
    base: float = 0.1
    cap: float = 2.0
    give_up_after: float = 15.0
    max_retry_after: float = 30.0

    def backoff(self, attempt: int, rng: random.Random) -> float:
        # Full jitter spreads retries of many clients so they do not hit the server in lockstep.
        # The doublings stop where a float ends (2**1024 is past it): a reader's run of streams
        # ended at once has no bound on its length, and the cap is reached long before.
        return rng.uniform(0.0, min(self.cap, self.base * 2.0 ** min(attempt, _MAX_DOUBLINGS)))

    def more(self, attempt: int, started: float) -> bool:
        """Whether another try may follow try ``attempt`` (from 0) of a call whose first try
        was at ``started`` (``time.monotonic()``)."""
        return attempt + 1 < self.attempts and time.monotonic() - started < self.give_up_after

    def waits_out(self, wait: float | None, started: float) -> bool:
        """Whether a ``Retry-After`` of ``wait`` seconds is to be waited out by a call whose
        first try was at ``started``: not past ``max_retry_after``, nor past ``give_up_after``
        (asked again only after the call gave up, the server's answer is the call's)."""
        if wait is None:
            return True
        left = self.give_up_after - (time.monotonic() - started)
        return wait <= self.max_retry_after and wait <= left


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds, or an HTTP date read against the
    answer's own ``Date`` when it has one (RFC 9110, 10.2.3), so that a local clock that is off
    does not stretch or cancel the wait; against the local clock otherwise."""
    value = (headers.get("Retry-After") or "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        when = _http_date(value)
        if when is None:
            return None
        sent = _http_date(headers.get("Date") or "")
        seconds = when - (time.time() if sent is None else sent)
    return max(0.0, seconds)


def _http_date(value: str) -> float | None:
    """The POSIX time of an HTTP date, or None when ``value`` is none."""
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


class RequestOptions(TypedDict, total=False):
    """What a request may carry besides its method and path (``timeout``: seconds to wait for
    the answer instead of the client's; ``gone``: the ``404`` code that a retry of a removal
    meets when an earlier try removed the thing unheard, which then answers the call as
    done)."""

    token: str | None
    body: Any
    if_match: int | None
    idempotency_key: str | None
    params: Mapping[str, str] | None
    timeout: float | None
    gone: str | None


class Client:
    """One HTTP session against one server. Thread-safe enough to share; cheap to create per thread.

    Tokens are passed per call because one process often acts for several seats (tournaments).
    """

    def __init__(
        self,
        base_url: str,
        *,
        session: requests.Session | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 10.0,
        pool_size: int = 32,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        if session is None:
            session = requests.Session()
            adapter = HTTPAdapter(pool_connections=pool_size, pool_maxsize=pool_size)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
        self.session = session
        self._rng = random.Random()
        self._lock = threading.Lock()
        #: HTTP requests sent so far (each retry and each stream connection counts).
        self.requests = 0

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport ---------------------------------------------------------------------------

    def _counted(self) -> None:
        with self._lock:
            self.requests += 1

    def _sleep(self, attempt: int) -> None:
        with self._lock:
            delay = self.retry.backoff(attempt, self._rng)
        time.sleep(delay)

    def request(self, method: str, path: str, **options: Unpack[RequestOptions]) -> JSON:
        """Send one logical request (retrying as the policy allows) and return the JSON body.

        Changes get an ``Idempotency-Key`` (RFC 8941 string: quoted) if none is given; the same
        key is sent on every retry. A ``DELETE`` gets none: the API keeps no answer of a
        removal, so a key there would promise a replay that never comes.
        """
        resp = self._send(method, path, **options)
        return {} if resp.status_code >= 400 else _json(resp)  # a removal done (``gone``)

    def _send(
        self,
        method: str,
        path: str,
        *,
        token: str | None = None,
        body: Any = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
        params: Mapping[str, str] | None = None,
        timeout: float | None = None,
        gone: str | None = None,
    ) -> requests.Response:
        """:meth:`request`'s work: the successful response itself, headers included."""
        method = method.upper()
        headers = _headers(method, token, if_match, idempotency_key)
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body, separators=(",", ":")).encode()
            headers["Content-Type"] = "application/json"
        url = self.base_url + path
        last: Exception | None = None
        started, attempt = time.monotonic(), 0
        # Whether a try may have been applied without the client hearing of it: unanswered, or
        # answered 502-504 (a proxy's or the service's, after the request may have reached it).
        # A 429 applied nothing, so a ``gone`` 404 after it is this call's own answer.
        unsure = False
        for attempt in range(self.retry.attempts):
            self._counted()
            try:
                resp = self.session.request(
                    method,
                    url,
                    headers=headers,
                    data=data,
                    params=params,
                    timeout=timeout or self.timeout,
                )
            # A response cut mid-body (the server died after sending its headers; a proxy
            # cannot retry that) is as retryable as a refused connection: the key makes it safe.
            except _DROPPED as exc:
                last, unsure = exc, True
                if not self.retry.more(attempt, started):
                    break
                self._sleep(attempt)
                continue
            if resp.status_code < 400 or (unsure and _is_gone(resp, gone)):
                return resp
            unsure = unsure or resp.status_code in _RETRY_STATUSES
            last = self._refusal(resp, attempt, started)
        if isinstance(last, ApiError):
            raise last  # 429/5xx that outlasted the retries
        raise TransportError(f"{method} {url} failed after {attempt + 1} attempts: {last}")

    def _refusal(self, resp: requests.Response, attempt: int, started: float) -> ApiError:
        """The error of a 4xx/5xx answer. Raises it unless another attempt may succeed (429,
        502-504 and the policy allows one more): then waits as the answer or the policy says,
        and returns it."""
        status = resp.status_code
        err = error_for(status, _problem(resp))
        err.retry_after = _retry_after(resp.headers)
        if not self.retry.more(attempt, started):
            raise err
        if status == 429 or (status in _RETRY_STATUSES and err.retry_after is not None):
            if not self.retry.waits_out(err.retry_after, started):
                raise err  # asking sooner would only be refused again
            wait = err.retry_after
            time.sleep(wait if wait is not None else self.retry.backoff(attempt, self._rng))
            return err
        if status in _RETRY_STATUSES:
            self._sleep(attempt)
            return err
        raise err

    def _mutate(
        self,
        game_id: str,
        action_path: str,
        token: str | None,
        body: Any = None,
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        path = f"/api/v1/games/{game_id}/{action_path}"
        try:
            return self.request(
                "POST",
                path,
                token=token,
                body=body,
                if_match=if_match,
                idempotency_key=idempotency_key,
            )
        except StaleVersion as err:
            # The caller's decision was based on an old state: hand it the new one to decide again.
            err.view = self._view_or_none(game_id, token)
            raise

    def _view_or_none(self, game_id: str, token: str | None) -> JSON | None:
        try:
            return self.view(game_id, token=token)
        except ApiError:
            return None

    # -- endpoints ---------------------------------------------------------------------------

    def healthz(self) -> JSON:
        return self.request("GET", "/healthz")

    def create_game(
        self,
        players: Sequence[str | Mapping[str, Any]],
        *,
        preset: str | None = None,
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        auto_deal: bool | None = None,
        turn_seconds: int | None = None,
        rated: bool | None = None,
        public: bool | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Create a game; the body has ``game_id``, ``seats`` (tokens, bots, invites),
        ``table_token`` and ``host_token``. A player is a name, ``{"name", "bot"}`` (a server
        bot seat), ``{"name", "player_token"}`` (a durable player's seat) or ``{"open": True}``
        (claimed later with its invite). A ``rated`` game rates every seat when it ends, so each
        must be a player or a bot (``422 unrated_seat`` at the deal otherwise); it takes no
        ``seed``, and its host token sees no hidden tile until it is over. A ``public`` one is
        listed in the :meth:`lobby` while it has open seats."""
        body: JSON = {"players": [p if isinstance(p, str) else dict(p) for p in players]}
        extra = {"preset": preset, "options": options, "seed": seed}
        extra |= {"auto_deal": auto_deal, "turn_seconds": turn_seconds, "rated": rated}
        extra |= {"public": public}
        body |= {key: value for key, value in extra.items() if value is not None}
        if "options" in body:
            body["options"] = dict(body["options"])
        return self.request("POST", "/api/v1/games", body=body, idempotency_key=idempotency_key)

    def bots(self) -> list[JSON]:
        """The bot levels a seat may be given: ``[{"name", "description", "player_id", ...}]``
        (``player_id``: the level's own player, whose rating :meth:`player` reads)."""
        return list(self.request("GET", "/api/v1/bots")["data"])

    def join(
        self,
        game_id: str,
        invite: str,
        name: str,
        *,
        player_token: str | None = None,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Take an open seat: ``{"game_id", "seat", "name", "token"}``; with ``player_token``
        the seat is that player's (a rated game's seat must be)."""
        body = {"invite": invite, "name": name}
        if player_token is not None:
            body["player_token"] = player_token
        return self._mutate(
            game_id, "join", None, body, if_match=if_match, idempotency_key=idempotency_key
        )

    def set_seat(
        self,
        game_id: str,
        seat: int,
        *,
        token: str,
        bot: str | None = None,
        reopen: bool = False,
        if_match: int | None = None,
    ) -> JSON:
        """Host: hand ``seat`` to the ``bot`` level, or ``reopen`` it (a new invite is in
        ``changed``). Either way the seat's old token stops working."""
        if (bot is None) == (not reopen):
            raise ValueError("give a bot level or reopen=True")
        body: JSON = {"bot": bot} if bot is not None else {"open": True}
        path = f"/api/v1/games/{game_id}/seats/{seat}"
        try:
            return self.request("PUT", path, token=token, body=body, if_match=if_match)
        except StaleVersion as err:
            err.view = self._view_or_none(game_id, token)
            raise

    def create_player(self, name: str, *, idempotency_key: str | None = None) -> JSON:
        """A durable anonymous player: ``{"player_id", "player_token", "name"}``. Keep the
        token: it is shown once, and seats a player's games (``player_token`` in
        :meth:`create_game`, :meth:`join` and :meth:`seek`). The answer holds a token that no
        caller's token scopes, so its key needs at least 22 characters (a UUID; else ``400
        short_idempotency_key``); a retry with the same key gets the same player."""
        return self.request(
            "POST", "/api/v1/players", body={"name": name}, idempotency_key=idempotency_key
        )

    def player(self, player_id: str) -> JSON:
        """``{"player_id", "name", "kind", "rating": {"mu", "sigma", "display"}, "games",
        "wins"}``: ``games`` and ``wins`` count rated games; ``display`` is ``mu - 3*sigma``."""
        return self.request("GET", f"/api/v1/players/{player_id}")

    def leaderboard(self, *, kind: str = "people", limit: int = 50) -> JSON:
        """``{"kind", "players": [{"player_id", "name", "rating", "games", "wins"}, ...]}``:
        the players of ``kind`` (``people`` or ``bots``) with at least 5 rated games, best
        ``display`` first, at most ``limit`` (1 to 100)."""
        params = {"kind": kind, "limit": str(limit)}
        return self.request("GET", "/api/v1/leaderboard", params=params)

    def lobby(
        self,
        *,
        preset: str | None = None,
        players: int | None = None,
        turn_seconds: int | None = None,
    ) -> JSON:
        """``{"tables": [{"game_id", "players", "open_seats", "rules", "turn_seconds", "rated",
        "created_at"}, ...]}``: public games with open seats (``players`` names the filled
        ones), newest first, at most 100; each filter given narrows the list."""
        wanted = {"preset": preset, "players": players, "turn_seconds": turn_seconds}
        params = {key: str(value) for key, value in wanted.items() if value is not None}
        return self.request("GET", "/api/v1/lobby", params=params)

    def seek(
        self,
        name: str,
        players: int,
        *,
        preset: str | None = None,
        turn_seconds: int | None = None,
        rated: bool | None = None,
        fill_with_bots_after: int | None = None,
        player_token: str | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Quick play: a seat at the oldest seek table of this kind (preset, ``players`` 2 to
        14, ``turn_seconds``, ``rated``) with one free, or at a new one: ``{"game_id",
        "version", "seat", "token"}``, and ``table_token`` to the seek that made the table. Seek
        tables deal by themselves once full; with ``fill_with_bots_after`` (seconds) the seats
        still open then go to ``planner`` bots. A player already seated at the table it would
        give is ``409 already_seated`` (the problem's ``game_id`` names the table). The answer
        holds a token no caller's token scopes, so the key needs at least 22 characters, as for
        :meth:`create_player`; a retry with the same key gets the same seat."""
        body: JSON = {"name": name, "players": players}
        extra = {"preset": preset, "turn_seconds": turn_seconds, "rated": rated}
        extra |= {"fill_with_bots_after": fill_with_bots_after, "player_token": player_token}
        body |= {key: value for key, value in extra.items() if value is not None}
        return self.request(
            "POST", "/api/v1/lobby/seek", body=body, idempotency_key=idempotency_key
        )

    def create_webhook(
        self,
        player_id: str,
        url: str,
        *,
        token: str,
        events: Sequence[str] | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """``{"webhook_id", "secret"}``: the player (``token``: its player token) is told by a
        signed POST to ``url`` (Standard Webhooks; verify it with ``secret``, shown only here)
        of ``events``, some of ``your_turn``, ``game_over`` and ``rematch`` (default: all).
        Only ``https`` URLs to public hosts, or hosts the operator allows (else ``422
        webhook_url_not_allowed``); at most 10 a player (then ``409 too_many_webhooks``)."""
        body: JSON = {"url": url}
        if events is not None:
            body["events"] = list(events)
        path = f"/api/v1/players/{player_id}/webhooks"
        return self.request("POST", path, token=token, body=body, idempotency_key=idempotency_key)

    def webhooks(self, player_id: str, *, token: str) -> JSON:
        """``{"webhooks": [{"webhook_id", "url", "events"}, ...]}``: the player's webhooks,
        without their secrets."""
        return self.request("GET", f"/api/v1/players/{player_id}/webhooks", token=token)

    def delete_webhook(self, player_id: str, webhook_id: str, *, token: str) -> None:
        """Remove a webhook; deliveries still queued for it are dropped. An unknown one is
        ``404 webhook_not_found``, unless an earlier try of the call went unanswered or was
        answered 502-504: the retry meets that 404 when that try removed it, so the call is
        done either way (after a 429, which removed nothing, the 404 is raised)."""
        path = f"/api/v1/players/{player_id}/webhooks/{webhook_id}"
        self.request("DELETE", path, token=token, gone="webhook_not_found")

    def events_page(
        self,
        game_id: str,
        *,
        token: str | None = None,
        after: int = 0,
        wait: float = 0,
        limit: int = 500,
    ) -> JSON:
        """``{"game_id", "version", "entries", "more"}``: up to ``limit`` (at most 500)
        entries after ``after`` (``more``: later ones wait for the next page); with ``wait``
        (up to 60 s) and nothing newer yet, held until an entry comes or the wait ends.
        :class:`LogRewound` when ``after`` is past the game's stored log."""
        params = {"after": str(after), "wait": str(wait), "limit": str(limit)}
        path = f"/api/v1/games/{game_id}/events"
        return self.request("GET", path, token=token, params=params, timeout=self.timeout + wait)

    def events(
        self,
        game_id: str,
        *,
        token: str | None = None,
        after: int = 0,
        media: Media = Media.SSE,
    ) -> Iterator[JSON]:
        """The game's log entries after ``after`` as the token may see them, then each new one
        as it is applied; ends after the entry that ends the game.

        A dropped connection is reopened where it left off (SSE with ``Last-Event-ID``, NDJSON
        with ``after``), so no entry is missed or repeated, and so is a stream the server ended
        (its lifetime, however short: an operator may set it to 1 s, so a run of streams
        ended at once never counts towards giving up); connections in a row that fail
        (dropped, refused, or answered with something else than the asked stream: a portal's
        page, a line that is not JSON), past what the retry policy allows (``attempts``,
        ``give_up_after``), raise :class:`TransportError`. :class:`LogRewound` (its
        ``version`` the game's stored one) when Redis lost entries this reader holds (or
        ``after`` is past the log): they will not come again, and versions past ``version``
        come anew with other entries, so the caller reloads and calls again."""
        last, failures, failing_since, quick_ends = after, 0, time.monotonic(), 0
        why: Exception | None = None
        while True:
            progressed, opened, ended = False, time.monotonic(), False
            try:
                for entry in self._stream(game_id, token, last, media):
                    if int(entry["version"]) <= last:
                        continue  # already seen (a resumed stream never repeats; be sure)
                    last, progressed = int(entry["version"]), True
                    yield entry
                    if ends_game(entry):
                        return
                ended = True
            except (*_DROPPED, _NotAStream) as exc:
                why = exc
            except _Ended:
                return
            except _Refused as refused:  # 429 or 502-504: wait as told, or give up with it
                failures, failing_since = self._failed(failures, failing_since)
                self._wait_out(refused.err, failures, failing_since)
                continue
            if progressed or ended:
                # The server answered and ended the stream (its lifetime, STREAM_MAX_SECONDS,
                # may be shorter than a quiet game's pause): not a failure. One that ended at
                # once is opened again after a back-off, so such a server is not hammered.
                quick = ended and not progressed and time.monotonic() - opened < LASTED_SECONDS
                quick_ends = quick_ends + 1 if quick else 0
                if quick:
                    self._sleep(quick_ends - 1)
                failures = 0
                continue
            failures, failing_since = self._failed(failures, failing_since)
            if not self.retry.more(failures - 1, failing_since):
                stopped = f"the events of {game_id} stopped after version {last}"
                raise TransportError(f"{stopped}: {why}") from why
            self._sleep(failures - 1)

    @staticmethod
    def _failed(failures: int, since: float) -> tuple[int, float]:
        """One more connection in a row that brought nothing, and since when they fail."""
        return failures + 1, time.monotonic() if failures == 0 else since

    def _wait_out(self, err: ApiError, failures: int, since: float) -> None:
        """Wait as a stream's refusal says before the next connection; raise it when the
        retries are spent or the wait is too long (``RetryPolicy.waits_out``)."""
        wait = err.retry_after
        if not self.retry.more(failures - 1, since) or not self.retry.waits_out(wait, since):
            raise err
        time.sleep(wait if wait is not None else self.retry.backoff(failures - 1, self._rng))

    def _stream(self, game_id: str, token: str | None, after: int, media: Media) -> Iterator[JSON]:
        """One connection's entries; returns when the server ends it (or a retryable refusal)."""
        headers = _headers("GET", token, None, None) | {"Accept": media.value}
        if media is Media.SSE and after:
            headers["Last-Event-ID"] = str(after)
        url = f"{self.base_url}/api/v1/games/{game_id}/events"
        self._counted()
        with self.session.get(
            url,
            params={"after": str(after)},
            headers=headers,
            stream=True,
            timeout=(self.timeout, STREAM_READ_TIMEOUT),
        ) as resp:
            if resp.status_code == 204:
                raise _Ended  # the game is over and every entry was read: nothing more, ever
            if resp.status_code >= 400:
                err = error_for(resp.status_code, _problem(resp))
                if resp.status_code == 429 or resp.status_code in _RETRY_STATUSES:
                    err.retry_after = _retry_after(resp.headers)
                    raise _Refused(err)  # the caller waits and reconnects
                raise err
            kind = resp.headers.get("Content-Type") or "no Content-Type"
            if kind.partition(";")[0].strip().lower() != media.value:
                raise _NotAStream(f"answered {resp.status_code} with {kind}, not {media.value}")
            try:
                yield from entries_of(lines_of(resp), media)
            except ValueError as exc:  # not JSON, or not UTF-8
                raise _NotAStream(f"a message that is not an entry: {exc}") from exc

    def stream_ticket(self, game_id: str, *, token: str) -> JSON:
        """``{"ticket", "expires_at"}``: a single-use credential for one stream of the game
        opened within 60 s, passed as ``access_token`` by a reader that cannot send headers (a
        browser's ``EventSource``), so the token itself never sits in a URL. It sees what
        ``token`` (any token of the game) sees; used or expired, it is ``401 invalid_token``."""
        return self._mutate(game_id, "stream-tickets", token)

    def create_transfer(self, game_id: str, *, token: str) -> JSON:
        """``{"ticket", "url", "expires_at"}``: a one-time ticket, valid ten minutes, that moves
        the seat of ``token`` (a seat token) to another device (:meth:`claim_transfer`)."""
        return self._mutate(game_id, "transfers", token)

    def claim_transfer(
        self,
        game_id: str,
        ticket: str,
        *,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Take a seat moved with :meth:`create_transfer`: ``{"game_id", "seat", "name",
        "token", "version"}`` with a new seat token; the old one stops working, on its open
        streams too. Once only (then ``409 transfer_used``), but a retry with the same
        ``idempotency_key`` gets the same answer, so a lost answer does not lose the seat."""
        return self._mutate(
            game_id,
            "transfers/claim",
            None,
            {"ticket": ticket},
            if_match=if_match,
            idempotency_key=idempotency_key,
        )

    def create_from_position(
        self, position: Mapping[str, Any], *, idempotency_key: str | None = None
    ) -> JSON:
        body = {"position": dict(position)}
        return self.request("POST", "/api/v1/games", body=body, idempotency_key=idempotency_key)

    def deal(
        self,
        game_id: str,
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Host deals the next round."""
        return self._mutate(
            game_id, "deal", token, if_match=if_match, idempotency_key=idempotency_key
        )

    def view(self, game_id: str, *, token: str | None = None) -> JSON:
        """The game view; with a seat token it includes that seat's ``hand``."""
        return self.request("GET", f"/api/v1/games/{game_id}", token=token)

    def legal_moves(self, game_id: str, *, token: str) -> JSON:
        """``{"version", "seat", "turn", "moves": [...]}`` for the token's seat."""
        return self.request("GET", f"/api/v1/games/{game_id}/legal-moves", token=token)

    def play(
        self,
        game_id: str,
        tile: Sequence[int],
        train: str,
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        body = {"tile": [int(tile[0]), int(tile[1])], "train": str(train)}
        return self._mutate(
            game_id, "play", token, body, if_match=if_match, idempotency_key=idempotency_key
        )

    def draw(
        self,
        game_id: str,
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        return self._mutate(
            game_id, "draw", token, if_match=if_match, idempotency_key=idempotency_key
        )

    def mark(
        self,
        game_id: str,
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        return self._mutate(
            game_id, "mark", token, if_match=if_match, idempotency_key=idempotency_key
        )

    def end_turn(
        self,
        game_id: str,
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        return self._mutate(
            game_id, "end-turn", token, if_match=if_match, idempotency_key=idempotency_key
        )

    def move(
        self,
        game_id: str,
        move: Mapping[str, Any],
        *,
        token: str,
        if_match: int | None = None,
        idempotency_key: str | None = None,
    ) -> JSON:
        """Apply any move object exactly as ``legal-moves`` listed it."""
        return self._mutate(
            game_id, "moves", token, dict(move), if_match=if_match, idempotency_key=idempotency_key
        )

    def rematch(self, game_id: str, *, token: str, if_match: int | None = None) -> JSON:
        """After ``game_over`` (before: ``409 game_not_over``), the caller's place in the next
        game of the table (same rules, table options, seat order and bot seats), made by the
        first call: ``{"game_id", "seat", "token"}`` for a seat token, ``{"game_id",
        "table_token"}`` for the table token; asking again answers the same. A person seat
        not claimed within a minute of the first call opens to others (then ``409
        rematch_closed``). The finished game's log gets an entry ``{"action": "rematch",
        "game_id"}``, which a long-poll (:meth:`events_page` with ``wait``) sees. A call
        made again after an answer that never arrived carries the same Idempotency-Key and
        gets the first answer, ``if_match`` or not."""
        return self._mutate(game_id, "rematch", token, if_match=if_match)

    def samples(self, game_id: str, *, token: str, n: int = 1, seed: int | None = None) -> JSON:
        """``{"game_id", "version", "seat", "samples": [position, ...]}``: ``n`` (1 to 100)
        positions that agree with everything the token's seat sees, the unseen tiles dealt
        uniformly at random; the same ``seed`` gives the same samples."""
        params = {"n": str(n)} if seed is None else {"n": str(n), "seed": str(seed)}
        return self.request("GET", f"/api/v1/games/{game_id}/samples", token=token, params=params)

    def score(self, game_id: str) -> JSON:
        return self.request("GET", f"/api/v1/games/{game_id}/score")

    def position(self, game_id: str, *, token: str) -> JSON:
        """The full position (host token)."""
        return self.request("GET", f"/api/v1/games/{game_id}/position", token=token)

    def position_at(self, game_id: str, *, token: str) -> tuple[int, JSON]:
        """The full position (host token) and the version it is at (its ``ETag``): where a
        reader of the log that keeps its own copy of the game starts."""
        resp = self._send("GET", f"/api/v1/games/{game_id}/position", token=token)
        return int(resp.headers["ETag"].strip('W/"')), _json(resp)


def _headers(
    method: str, token: str | None, if_match: int | None, idempotency_key: str | None
) -> dict[str, str]:
    headers = {"Accept": "application/json, application/problem+json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if if_match is not None:
        headers["If-Match"] = f'"{if_match}"'
    if method not in _IDEMPOTENT_METHODS:
        key = idempotency_key or new_idempotency_key()
        headers["Idempotency-Key"] = f'"{key}"'
    return headers


def _is_gone(resp: requests.Response, gone: str | None) -> bool:
    """Whether ``resp`` is the ``404`` of code ``gone``: a removal's retry meets it when the try
    whose answer was lost removed the thing (the service keeps no answer of a removal)."""
    return gone is not None and resp.status_code == 404 and _problem(resp).get("code") == gone


def _json(resp: requests.Response) -> JSON:
    """The body of a successful answer. One that is not JSON came from something between the
    client and the service (a captive portal's or a proxy's page): a :class:`TransportError`,
    as an answer cut short is, not the decoder's ``ValueError``."""
    if not resp.content:
        return {}
    try:
        data = json.loads(resp.content)
    except ValueError as exc:  # not JSON (json.JSONDecodeError), or not UTF-8
        kind = resp.headers.get("Content-Type") or "no Content-Type"
        raise TransportError(
            f"{resp.request.method} {resp.url} answered {resp.status_code} with a body that is "
            f"not JSON ({kind}): {resp.text[:200]!r}"
        ) from exc
    return data if isinstance(data, dict) else {"data": data}


def _problem(resp: requests.Response) -> JSON:
    """The problem body, or a synthetic one when a proxy answered with something else."""
    try:
        data = json.loads(resp.content) if resp.content else None
    except ValueError:  # not JSON (json.JSONDecodeError), or not UTF-8
        data = None
    if isinstance(data, dict):
        return data
    return {"status": resp.status_code, "title": resp.reason or "", "detail": resp.text[:200]}
