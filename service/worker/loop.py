"""The worker's loop: take games from the queue and make their server moves, a slice at a time.

Each job gets at most :data:`SLICE_SECONDS` of CPU; a game with more to do goes to the back of
a second queue, read only when the first (new work, due turns) is empty, so neither one table
of slow bots nor many can hold the worker from the others or from a person's turn clock. A game
whose lease another worker holds is looked at again a moment later (that worker may be just
finishing), and a game whose turn clock runs is scheduled for its deadline.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis

from service.store.work import Job, WorkQueue

from .sweep import SWEEP_MS

log = logging.getLogger(__name__)

#: CPU seconds one job may spend on one game before it yields to the others.
SLICE_SECONDS = 0.5
#: A lease outlives any slice by far; it only stops a second worker computing the same game.
LEASE_MS = 15_000
#: A job taken and unacknowledged this long belongs to a worker that died: another takes it.
CLAIM_IDLE_MS = 20_000
#: How long a worker waits for new jobs before looking at due games again.
BLOCK_MS = 200
#: A game another worker holds is looked at again after this long.
BUSY_RETRY_MS = 200
#: Pause after Redis failed, before trying again.
ERROR_PAUSE_SECONDS = 1.0


@dataclass(frozen=True)
class Outcome:
    """What one slice of a game's server moves left: more to do now, or a deadline to come
    back at (a person's turn clock)."""

    more: bool
    due_ms: int | None


#: Makes a game's server moves until ``spent()``; its outcome.
Play = Callable[[str, Callable[[], bool]], Outcome]


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def cpu_budget(seconds: float) -> Callable[[], bool]:
    """A budget of this thread's CPU time, starting now."""
    end = time.thread_time() + seconds
    return lambda: time.thread_time() >= end


class Worker:
    def __init__(
        self,
        queue: WorkQueue,
        play: Play,
        name: str,
        *,
        lease_ms: int = LEASE_MS,
        claim_idle_ms: int = CLAIM_IDLE_MS,
        sweep: Callable[[int], list[str]] | None = None,
        sweep_ms: int = SWEEP_MS,
    ) -> None:
        self.queue = queue
        self.play = play
        self.name = name
        self.lease_ms = lease_ms
        self.claim_idle_ms = claim_idle_ms
        self.sweep = sweep  # see .sweep
        self.sweep_ms = sweep_ms
        self.next_sweep = 0.0  # time.monotonic() of this worker's next try

    def run(self, stop: threading.Event, beat: Callable[[], None] = lambda: None) -> None:
        """Work until ``stop`` is set, calling ``beat`` every round (a liveness signal); Redis
        errors pause the loop, never end it. The consumer group is made at the start and again
        after any Redis error (a Redis that restarted empty has none), not every round: an
        idle worker's round would otherwise send a command answered with an error each time."""
        grouped = False
        while not stop.is_set():
            beat()
            try:
                if not grouped:
                    self.queue.ensure_group()
                    grouped = True
                self.step()
            except redis.RedisError as err:
                grouped = False
                log.warning("worker %s: %s: %s", self.name, type(err).__name__, err)
                stop.wait(ERROR_PAUSE_SECONDS)

    def step(self) -> int:
        """One round: queue due games, sweep for games the queue lost (when this worker's turn
        came), take over dead workers' jobs, then new ones; how many jobs were handled."""
        self.queue.promote_due(now_ms())
        self.sweep_if_due()
        jobs = self.queue.claim_stale(self.name, self.claim_idle_ms)
        jobs += self.queue.take(self.name, 8, BLOCK_MS)
        for job in jobs:
            self.work(job)
        return len(jobs)

    def sweep_if_due(self) -> None:
        """Sweep for games the queue lost, if this worker's turn came and no other worker
        swept within the period."""
        if self.sweep is None or time.monotonic() < self.next_sweep:
            return
        self.next_sweep = time.monotonic() + self.sweep_ms / 1000
        if not self.queue.take_sweep(self.name, self.sweep_ms):
            return
        try:
            self.sweep(now_ms())
        except redis.RedisError:
            raise  # the loop pauses, as for any Redis error
        except Exception:  # a cluster's slot map in flux: the next sweep reads it again
            log.exception("worker %s: sweep failed", self.name)

    def work(self, job: Job) -> None:
        game = job.game_id
        if not self.queue.lease(game, self.name, self.lease_ms):
            self.queue.schedule(game, now_ms() + BUSY_RETRY_MS, sooner=True)
            self.queue.done([job])
            return
        try:
            outcome = self.play(game, cpu_budget(SLICE_SECONDS))
        except redis.RedisError:
            raise  # unacknowledged: taken again once idle for CLAIM_IDLE_MS
        except Exception:  # one broken game must not stop the others
            log.exception("worker %s: game %s failed", self.name, game)
            outcome = Outcome(False, None)
        finally:
            with contextlib.suppress(redis.RedisError):  # else it expires by itself
                self.queue.release(game, self.name)
        if outcome.more:
            self.queue.enqueue(game, more=True)
        if outcome.due_ms is not None:
            # Sooner only: what this slice read may be older than a time set meanwhile (a
            # worker that found the lease held asked for a look in a moment: a change made
            # after the read left a move due now). A look too early costs a read; one too
            # late leaves a move due now waiting for a clock, up to a day away.
            self.queue.schedule(game, outcome.due_ms, sooner=True)
        self.queue.done([job])
