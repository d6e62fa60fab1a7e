"""Gap / stall patterns, shared by DecoupledSource (valid gaps) and ReadyDriver (back-pressure).

A pattern answers ``idle()`` once per cycle: True = insert a bubble this cycle (no new valid
for a source, ready low for a sink).  All patterns draw from a caller-given random.Random so
runs are reproducible from the seed.
"""

from __future__ import annotations

import random


class Never:
    """Never idle: full throughput."""

    def idle(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Never()"


class Always:
    """Always idle (a channel switched off)."""

    def idle(self) -> bool:
        return True


class RandomGaps:
    """Idle each cycle with probability ``p``."""

    def __init__(self, rng: random.Random, p: float):
        self.rng, self.p = rng, p

    def idle(self) -> bool:
        return self.p > 0 and self.rng.random() < self.p

    def __repr__(self) -> str:
        return f"RandomGaps(p={self.p})"


class Bursty:
    """Alternates busy and idle runs with geometric lengths (means ``busy`` and ``quiet``)."""

    def __init__(self, rng: random.Random, busy: float = 8.0, quiet: float = 3.0):
        self.rng, self.busy, self.quiet = rng, busy, quiet
        self._idle = False

    def idle(self) -> bool:
        mean = self.quiet if self._idle else self.busy
        if self.rng.random() < 1.0 / max(mean, 1.0):
            self._idle = not self._idle
        return self._idle

    def __repr__(self) -> str:
        return f"Bursty(busy={self.busy}, quiet={self.quiet})"


class Mixed:
    """Switches between sub-patterns every ``period`` cycles (random choice), so a long run
    sees full-throughput phases, light random gaps and long stalls."""

    def __init__(self, rng: random.Random, patterns, period: int = 500):
        self.rng, self.patterns, self.period = rng, list(patterns), period
        self._n = 0
        self._cur = self.patterns[0]

    def idle(self) -> bool:
        self._n += 1
        if self._n >= self.period:
            self._n = 0
            self._cur = self.rng.choice(self.patterns)
        return self._cur.idle()


def random_pattern(rng: random.Random, level: str = "mixed"):
    """A ready-made pattern: "none", "light" (10 %), "heavy" (50 %), "bursty" or "mixed"."""
    if level == "none":
        return Never()
    if level == "light":
        return RandomGaps(rng, 0.1)
    if level == "heavy":
        return RandomGaps(rng, 0.5)
    if level == "bursty":
        return Bursty(rng)
    if level == "mixed":
        return Mixed(rng, [Never(), RandomGaps(rng, 0.1), RandomGaps(rng, 0.5), Bursty(rng)])
    raise ValueError(f"unknown back-pressure level {level!r}")
