"""One line a second for a message that repeats: a Redis outage fails every request with the
same error, and thousands of requests a second would each write it.

:func:`throttled` writes a line at most once per :data:`PERIOD_SECONDS` per process for each
distinct text; the lines it held back are told by the next one it writes, or, when none comes
within the period (the outage is over), by a line of their own at the period's end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

#: The shortest time between two identical lines of one process.
PERIOD_SECONDS = 1.0
#: Distinct texts remembered: past this the memory starts over (texts that carry an address or
#: a key could otherwise grow it without end), at worst one extra line each.
MAX_TEXTS = 256


class Throttle:
    """The last time each text was written, and the lines held back since."""

    def __init__(self, period: float = PERIOD_SECONDS) -> None:
        self.period = period
        self.lock = threading.Lock()
        self.texts: dict[str, tuple[float, int]] = {}

    def admit(self, text: str, late: Callable[[int], None] = lambda _: None) -> int | None:
        """None when ``text`` went out within the period (counted as held back), else how many
        identical lines were held back since it last went out. ``late(n)`` is called at the
        period's end with the ``n`` held back when no identical line came to tell them."""
        now = time.monotonic()
        with self.lock:
            last, held = self.texts.get(text, (float("-inf"), 0))
            if now - last < self.period:
                self.texts[text] = (last, held + 1)
                if not held:  # the first held back of this period: tell them at its end
                    timer = threading.Timer(
                        last + self.period - now, self._flush, (text, last, late)
                    )
                    timer.daemon = True
                    timer.start()
                return None
            if len(self.texts) >= MAX_TEXTS and text not in self.texts:
                self.texts.clear()
            self.texts[text] = (now, 0)
            return held

    def _flush(self, text: str, last: float, late: Callable[[int], None]) -> None:
        """The period that began at ``last`` is over: its held-back lines, unless a line went
        out since and told them."""
        with self.lock:
            seen = self.texts.get(text)
            if seen is None or seen[0] != last or not seen[1]:
                return
            self.texts[text] = (time.monotonic(), 0)
        late(seen[1])


_THROTTLE = Throttle()


def throttled(logger: logging.Logger, level: int, message: str, *args: object) -> None:
    """Log ``message % args`` unless the same text went out within the last second; a line
    that goes out after some were held back says how many."""
    if not logger.isEnabledFor(level):
        return
    text = message % args if args else message

    def told(held: int) -> None:
        # A line of its own: it stands for the held-back lines only, not for one more.
        logger.log(level, "%s (%d identical lines were suppressed)", text, held)

    held = _THROTTLE.admit(f"{logger.name}:{level}:{text}", told)
    if held is None:
        return
    if held:
        logger.log(level, "%s (%d identical lines suppressed)", text, held)
    else:
        logger.log(level, "%s", text)
