"""Sending webhook deliveries: signed as the Standard Webhooks specification says, in a small
pool of threads, retried with backoff until an hour after the first try.

A delivery is taken from Redis under a lease (service/store/hooks.py), sent, and then removed,
or put back due later: a worker that dies mid-send leaves it to be sent again, so a receiver
may see a delivery twice and tells by its ``webhook-id``, which every attempt shares.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime

import redis
import requests
from standardwebhooks.webhooks import Webhook

from service.api.webhook_urls import refusal
from service.store.hooks import Delivery, Hook, Webhooks

log = logging.getLogger(__name__)

#: A receiver answers within this long, or the attempt failed.
SEND_TIMEOUT_SECONDS = 5.0
#: Deliveries in flight at once per worker process.
THREADS = 8
#: How often the queue is looked at when nothing was due.
POLL_SECONDS = 0.25
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
        self.local = threading.local()

    def run(self, stop: threading.Event) -> None:
        """Send due deliveries until ``stop`` is set; errors pause, never end it (nothing
        else would: the worker's loop, and its liveness probe, go on without this thread)."""
        while not stop.is_set():
            try:
                taken = self.step()
            except redis.RedisError as err:
                log.warning("webhook sender: %s: %s", type(err).__name__, err)
                taken = 0
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
        why = refusal(hook.url, self.allow)
        if why is None and self.send(hook, delivery):
            self.hooks.done(delivery)
        elif why is not None or now_ms() - delivery.first_ms >= self.give_up_ms:
            log.warning("webhook %s dropped: %s", delivery.delivery_id, why or "gave up")
            self.hooks.done(delivery)
        else:
            wait = self.retry_ms * BACKOFF[min(delivery.attempt, len(BACKOFF) - 1)]
            self.hooks.retry(replace(delivery, attempt=delivery.attempt + 1), now_ms() + wait)

    def send(self, hook: Hook, delivery: Delivery) -> bool:
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
        }
        try:
            answer = self._session().post(
                hook.url,
                data=body,
                headers=headers,
                timeout=SEND_TIMEOUT_SECONDS,
                allow_redirects=False,
            )
        except requests.RequestException as err:
            log.info("webhook %s: %s", delivery.delivery_id, type(err).__name__)
            return False
        return 200 <= answer.status_code < 300

    def _session(self) -> requests.Session:
        """One session per thread (a Session is not made for sharing between threads)."""
        found = getattr(self.local, "session", None)
        if found is None:
            found = self.local.session = requests.Session()
            found.trust_env = False  # no proxy from the environment: the policy checked this URL
        assert isinstance(found, requests.Session)
        return found
