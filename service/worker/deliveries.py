"""Sending webhook deliveries: signed as the Standard Webhooks specification says, in a small
pool of threads, retried with backoff until an hour after the first try.

A receiver is anyone's server, so an attempt costs the worker little whatever it answers: it
connects to an address the URL policy approved (no second resolution of the name), reads only
the status line and headers, never the body, and ends after ``ATTEMPT_SECONDS`` however slowly
the receiver, or the receiver's name server, answers.

A delivery is taken from Redis under a lease (service/store/hooks.py), sent, and then removed,
or put back due later: a worker that dies mid-send leaves it to be sent again, so a receiver
may see a delivery twice and tells by its ``webhook-id``, which every attempt shares.
"""

from __future__ import annotations

import http.client
import ipaddress
import logging
import socket
import ssl
import threading
import time
from collections import Counter
from contextlib import suppress
from dataclasses import replace
from datetime import UTC, datetime
from urllib.parse import urlsplit

import redis
from requests.utils import DEFAULT_CA_BUNDLE_PATH
from standardwebhooks.webhooks import Webhook

from service.api.webhook_urls import LookupsBusy, Target, target
from service.store.hooks import Delivery, Hook, Webhooks

log = logging.getLogger(__name__)

#: A receiver accepts the connection, and answers, within this long, or the attempt failed.
SEND_TIMEOUT_SECONDS = 5.0
#: An attempt ends after this long in all, the lookup of the receiver's name included, even if
#: every read came within SEND_TIMEOUT_SECONDS (a receiver dripping its answer a byte at a time,
#: or its name server answering late, would hold a sending thread for good).
ATTEMPT_SECONDS = 10.0
#: Deliveries in flight at once per worker process.
THREADS = 8
#: Deliveries in flight at once to one host: receivers on one host that answer slowly, or
#: whose name server does, hold no more of the THREADS, and every other host's deliveries go
#: on. Counted twice: by the URL's host name before its lookup (a slow name server), and by the
#: network of the address it resolved to (names cost nothing to make, addresses do).
DELIVERIES_PER_HOST = 2
#: The network a receiver's address is counted by: one machine, or one IPv6 subnet, which a
#: single host is commonly given whole.
RECEIVER_PREFIX = {4: 32, 6: 64}
#: A delivery whose host has DELIVERIES_PER_HOST in flight is due again this much later, or
#: BUSY_HOST_WAIT_SHARE of its age (since its first try) if longer, up to BUSY_HOST_WAIT_MAX_MS.
#: It was not attempted: its attempts, backoff and hour to give up in are left as they were.
#: Deliveries that wait long for a host kept busy are read again less and less often: each one
#: read every second, a queue of thousands would cost the worker thousands of reads a second.
BUSY_HOST_WAIT_MS = 1_000
BUSY_HOST_WAIT_SHARE = 0.1
BUSY_HOST_WAIT_MAX_MS = 60_000
#: How often the queue is looked at when nothing was due.
POLL_SECONDS = 0.25
#: Pause after Redis failed, before trying again.
ERROR_PAUSE_SECONDS = 1.0
#: The wait before each retry, in multiples of ``WEBHOOK_RETRY_MS`` (the last one repeats).
BACKOFF = (1, 6, 24, 60, 180, 360)
USER_AGENT = "mexican-train-webhooks/1"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Sender:
    def __init__(
        self, hooks: Webhooks, allow: frozenset[str], retry_ms: int, give_up_ms: int
    ) -> None:
        self.hooks, self.allow = hooks, allow
        self.retry_ms, self.give_up_ms = retry_ms, give_up_ms
        self.free = threading.BoundedSemaphore(THREADS)
        self.in_flight: Counter[str] = Counter()  # per host
        self.in_flight_lock = threading.Lock()

    def run(self, stop: threading.Event) -> None:
        """Send due deliveries until ``stop`` is set; errors pause, never end it (nothing
        else would: the worker's loop, and its liveness probe, go on without this thread)."""
        while not stop.is_set():
            try:
                taken = self.step()
            except redis.RedisError as err:
                # As long a pause as the worker's loop takes: a poll's quarter second would
                # log this four times a second for as long as Redis is away.
                log.warning("webhook sender: %s: %s", type(err).__name__, err)
                stop.wait(ERROR_PAUSE_SECONDS)
                continue
            except Exception:
                log.exception("webhook sender")
                taken = 0
            if not taken:
                stop.wait(POLL_SECONDS)

    def step(self) -> int:
        """Start sending as many due deliveries as there are free threads; how many."""
        slots = 0
        while self.free.acquire(blocking=False):
            slots += 1
        try:
            due = self.hooks.take_due(now_ms(), slots) if slots else []
        except BaseException:
            for _ in range(slots):  # a take that failed (Redis away) keeps no thread
                self.free.release()
            raise
        for _ in range(slots - len(due)):
            self.free.release()
        for delivery in due:
            threading.Thread(target=self._deliver, args=(delivery,), daemon=True).start()
        return len(due)

    def _deliver(self, delivery: Delivery) -> None:
        try:
            self.deliver(delivery)
        except redis.RedisError as err:  # the lease runs out and it is taken again
            log.warning("webhook %s left for later: %s", delivery.delivery_id, err)
        finally:
            self.free.release()

    def deliver(self, delivery: Delivery) -> None:
        hook = self.hooks.get(delivery.player_id, delivery.hook_id)
        if hook is None:  # removed meanwhile
            self.hooks.done(delivery)
            return
        host = host_of(hook.url)
        if not self._take_host(host):
            self._put_back_busy(delivery)
            return
        try:
            self.attempt(hook, delivery)
        finally:
            self._give_host(host)

    def _put_back_busy(self, delivery: Delivery) -> None:
        """Not attempted, since its host (or its player's lookups) is busy: due again later, or
        dropped past its hour as an attempt would drop it (a host kept busy must not keep its
        deliveries for ever)."""
        if now_ms() - delivery.first_ms >= self.give_up_ms:
            log.warning("webhook %s dropped: gave up (host busy)", delivery.delivery_id)
            self.hooks.done(delivery)
        else:
            self.hooks.retry(delivery, now_ms() + busy_host_wait_ms(delivery))

    def _take_host(self, host: str) -> bool:
        with self.in_flight_lock:
            if self.in_flight[host] >= DELIVERIES_PER_HOST:
                return False
            self.in_flight[host] += 1
            return True

    def _give_host(self, host: str) -> None:
        with self.in_flight_lock:
            self.in_flight[host] -= 1
            if not self.in_flight[host]:
                del self.in_flight[host]

    def attempt(self, hook: Hook, delivery: Delivery) -> None:
        """Send once; then done, dropped (refused URL, or an hour of failures), or due later;
        or put back unattempted when the address it resolved to is busy, or its player's
        lookups not ended are as many as one player may have."""
        deadline = time.monotonic() + ATTEMPT_SECONDS
        try:
            where: Target | str | None = target(hook.url, self.allow, deadline, delivery.player_id)
        except LookupsBusy:  # its player's own lookups hold their share of the lookup threads
            self._put_back_busy(delivery)
            return
        except TimeoutError as err:  # a failed attempt, tried again later
            log.info("webhook %s: %s", delivery.delivery_id, err)
            where = None
        if not isinstance(where, Target):  # refused (its reason), or not looked up in time
            self._after(delivery, sent=False, why=where)
            return
        receiver = receiver_of(where)
        if not self._take_host(receiver):
            self._put_back_busy(delivery)
            return
        try:
            sent = self.send(where, hook, delivery, deadline)
        finally:
            self._give_host(receiver)
        self._after(delivery, sent=sent, why=None)

    def _after(self, delivery: Delivery, *, sent: bool, why: str | None) -> None:
        """Done when sent; dropped when refused (``why``) or after an hour of failures; else
        due again after the backoff."""
        if sent:
            self.hooks.done(delivery)
        elif why is not None or now_ms() - delivery.first_ms >= self.give_up_ms:
            log.warning("webhook %s dropped: %s", delivery.delivery_id, why or "gave up")
            self.hooks.done(delivery)
        else:
            wait = self.retry_ms * BACKOFF[min(delivery.attempt, len(BACKOFF) - 1)]
            self.hooks.retry(replace(delivery, attempt=delivery.attempt + 1), now_ms() + wait)

    def send(self, where: Target, hook: Hook, delivery: Delivery, deadline: float) -> bool:
        """One attempt: whether the receiver took it (a 2xx answer; redirects are not
        followed, since the policy checked this URL and no other)."""
        stamp = datetime.now(UTC)
        body = delivery.body.encode()
        headers = {
            "content-type": "application/json",
            "user-agent": USER_AGENT,
            "webhook-id": delivery.delivery_id,
            "webhook-timestamp": str(int(stamp.timestamp())),
            "webhook-signature": Webhook(hook.secret).sign(delivery.delivery_id, stamp, body),
            "connection": "close",
        }
        try:
            status = post(where, body, headers, deadline)
        except (OSError, http.client.HTTPException, ValueError) as err:  # ValueError: not sendable
            log.info("webhook %s: %s", delivery.delivery_id, type(err).__name__)
            return False
        return 200 <= status < 300


#: Verifies receivers' certificates against certifi's CA bundle (requests' own): the same on
#: every host, whatever the system's store holds.
TLS = ssl.create_default_context(cafile=DEFAULT_CA_BUNDLE_PATH)


class _Connection(http.client.HTTPConnection):
    """A connection to the target's approved addresses, with TLS for https, that another thread
    can cut (:meth:`cut`) whatever it is waiting for."""

    def __init__(self, where: Target, deadline: float) -> None:
        super().__init__(where.host, where.port, timeout=SEND_TIMEOUT_SECONDS)
        self.where, self.deadline = where, deadline
        self.cut_off = False
        self.lock = threading.Lock()

    def connect(self) -> None:
        last: OSError = OSError(f"no address for {self.where.host}")
        for family, address in self.where.addresses:
            left = self.deadline - time.monotonic()
            if left <= 0:
                break
            raw = socket.socket(family, socket.SOCK_STREAM)
            with self.lock:
                if self.cut_off:
                    raw.close()
                    raise TimeoutError("attempt cut off")
                self.sock = raw
            try:
                raw.settimeout(min(SEND_TIMEOUT_SECONDS, left))
                raw.connect(address)
                raw.settimeout(SEND_TIMEOUT_SECONDS)
                if self.where.scheme == "https":
                    self.sock = TLS.wrap_socket(raw, server_hostname=self.where.host)
                return
            except OSError as err:
                raw.close()
                last = err
        raise last

    def cut(self) -> None:
        """End the attempt: a read or a connect in progress returns at once."""
        with self.lock:
            self.cut_off = True
            sock = self.sock
        if sock is not None:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def busy_host_wait_ms(delivery: Delivery) -> int:
    """How much later a delivery to a busy host is due again: longer the longer it waited."""
    waited = max(0, now_ms() - delivery.first_ms)
    share = int(waited * BUSY_HOST_WAIT_SHARE)
    return min(BUSY_HOST_WAIT_MAX_MS, max(BUSY_HOST_WAIT_MS, share))


def receiver_of(where: Target) -> str:
    """The network a delivery to ``where`` counts against: that of the address it connects to
    first (distinct from any host name, which never holds a slash)."""
    address = ipaddress.ip_address(where.addresses[0][1][0].split("%")[0])
    return str(ipaddress.ip_network((address, RECEIVER_PREFIX[address.version]), strict=False))


def host_of(url: str) -> str:
    """The host a delivery to ``url`` counts against (any URL: one the policy refuses is
    refused by its attempt)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def post(where: Target, body: bytes, headers: dict[str, str], deadline: float) -> int:
    """POST ``body`` to ``where``: the answer's status, once its status line and headers came
    (its body is never read), by ``deadline`` (``time.monotonic()``)."""
    conn = _Connection(where, deadline)
    timer = threading.Timer(max(0.0, deadline - time.monotonic()), conn.cut)
    timer.daemon = True
    timer.start()
    try:
        conn.request("POST", where.path, body=body, headers=headers)
        return conn.getresponse().status
    finally:
        timer.cancel()
        conn.close()
