"""Seeds: printed, and settable with the environment variable XLAT_SEED.

The pytest side chooses the seed (XLAT_SEED if set, else a fresh random one), prints it and
passes it to the simulation as XLAT_SEED (and COCOTB_RANDOM_SEED).  Inside cocotb, ``rng(name)``
gives every test its own deterministic random stream derived from that seed, so running one
test alone reproduces exactly what it did inside the full run.
"""

from __future__ import annotations

import os
import random

ENV = "XLAT_SEED"


def choose_seed() -> int:
    """XLAT_SEED if set (decimal or 0x...), else a new random 31-bit seed."""
    v = os.environ.get(ENV, "").strip()
    if v:
        return int(v, 0)
    return random.SystemRandom().randrange(1, 1 << 31)


def current_seed() -> int:
    """The seed of this simulation (inside cocotb)."""
    v = os.environ.get(ENV, "").strip()
    if v:
        return int(v, 0)
    try:
        import cocotb

        return int(cocotb.RANDOM_SEED)
    except Exception:
        return 1


def rng(name: str, seed: int | None = None) -> random.Random:
    """A deterministic random stream for ``name`` (a test name) under the run's seed."""
    s = current_seed() if seed is None else seed
    return random.Random(f"{s}:{name}")
