"""Seeds: fixed by default, printed, and settable with the environment variable XLAT_SEED.

`make test` is deterministic: every simulation runs with DEFAULT_SEED unless its pytest case
names another one (a regression seed, ``xlat_tb.regression``) or XLAT_SEED overrides every
case.  Fresh seeds come only from ``make soak`` (tb/soak.py), which draws them, prints them and
passes each as XLAT_SEED.  The pytest side prints the seed and passes it to the simulation as
XLAT_SEED (and COCOTB_RANDOM_SEED).  Inside cocotb, ``rng(name)`` gives every test its own
deterministic random stream derived from that seed, so running one test alone reproduces
exactly what it did inside the full run.
"""

from __future__ import annotations

import os
import random

ENV = "XLAT_SEED"
DEFAULT_SEED = 1


def override() -> int | None:
    """XLAT_SEED (decimal or 0x...) when set, else None."""
    v = os.environ.get(ENV, "").strip()
    return int(v, 0) if v else None


def choose_seed(default: int | None = None) -> int:
    """XLAT_SEED if set, else ``default`` (a regression case's seed), else DEFAULT_SEED."""
    v = override()
    if v is not None:
        return v
    return DEFAULT_SEED if default is None else default


def fresh_seed() -> int:
    """A new random 31-bit seed (make soak)."""
    return random.SystemRandom().randrange(1, 1 << 31)


def current_seed() -> int:
    """The seed of this simulation (inside cocotb)."""
    v = override()
    if v is not None:
        return v
    try:
        import cocotb

        return int(cocotb.RANDOM_SEED)
    except Exception:
        return DEFAULT_SEED


def rng(name: str, seed: int | None = None) -> random.Random:
    """A deterministic random stream for ``name`` (a test name) under the run's seed."""
    s = current_seed() if seed is None else seed
    return random.Random(f"{s}:{name}")
