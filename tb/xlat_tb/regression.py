"""Run lengths of the random tests and the regression seed lists, for `make test` and
`make soak` (tb/README.md, "Seeds").

Each block's random test reads its length with ``run_length(block)``: the environment
variable of LENGTHS when set (make soak sets the issue floors), else the shorter `make test`
length.  ``tb/<block>/seeds.txt`` lists every seed that ever failed, one line each:

    <config glob> <cocotb test> <seed> <length or -> [# what it found]

A length may end in ``@<k>``: the run draws the stimulus of that length but stops after its
k-th checkpoint (``checkpoint_limit()``, for a random test that has checkpoints), when the
failure the line records happened before it: the same cycles up to there, at a fraction of
the cost.

``cases(block, configs, tests)`` turns (config, suite, test) into pytest parameters: one case
per pair with the default seed, plus one per matching seed line (its length in the
simulation's environment), so `make test` replays every listed seed.  With XLAT_SEED set the
seed lines are left out: every case runs with that seed.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from .paths import TB_DIR
from .seed import override

# block -> (environment variable, `make test` length, issue floor run by `make soak`)
LENGTHS = {
    "babelfish": ("XLAT_RANDOM_OPS", 8000, 20000),
    "walker": ("XLAT_WALKER_WALKS", 1500, 10000),
    "pml": ("XLAT_PML_EVENTS", 15000, 100000),
    "devtlb": ("XLAT_DEVTLB_REQS", 3000, 100000),
    "perforated": ("XLAT_PERFORATED_REQS", 1500, 50000),
    # the QEMU cross-check's cases through the walker RTL, per mode (tb/qemu: the first 270
    # of each mode in make test; all of them, 2,100 to 3,100 per mode and configuration, under
    # make soak)
    "qemu": ("XLAT_QEMU_RTL_CASES", 270, 100000),
    # the composed XlatMmu model's random traffic against the walker model alone
    # (tb/models/test_xlat_mmu.py, pure Python: no simulator)
    "models": ("XLAT_MMU_MODEL_REQS", 1500, 50000),
    # XlatMmu's RTL against the composed model (tb/mmu/tests_random.py)
    "mmu": ("XLAT_MMU_REQS", 400, 50000),
}


CHECKPOINTS_ENV = "XLAT_CHECKPOINTS"
# a recorded seed replayed at more than this many times make test's length runs in make soak's
# extended tier only (tb/README.md "Tiers")
LONG_REPLAY = 4


def run_length(block: str) -> int:
    var, short, _ = LENGTHS[block]
    return int(os.environ.get(var, "").strip() or short)


def checkpoint_limit() -> int | None:
    """The checkpoint after which a random test stops early (a seed line's ``@<k>``), or None."""
    v = os.environ.get(CHECKPOINTS_ENV, "").strip()
    return int(v) if v else None


@dataclass(frozen=True)
class SeedLine:
    config: str                 # glob over configuration names
    test: str                   # cocotb test name
    seed: int
    length: int | None          # None: the test's default length
    why: str = ""
    checkpoints: int | None = None  # stop after this many checkpoints (``<length>@<k>``)


@dataclass(frozen=True)
class Regression:
    """The seed (and length) of one pytest case; seed None = the default seed."""
    seed: int | None = None
    env: dict = field(default_factory=dict)

    @property
    def tag(self) -> str:
        """Suffix of the case's run directory (cases of one test must not share it)."""
        return "" if self.seed is None else f"_seed{self.seed}"


def seeds_file(block: str) -> Path:
    return TB_DIR / block / "seeds.txt"


def load_seeds(block: str) -> list[SeedLine]:
    path = seeds_file(block)
    if not path.is_file():
        return []
    out = []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        text, _, why = raw.partition("#")
        parts = text.split()
        if not parts:
            continue
        if len(parts) != 4:
            raise ValueError(f"{path}:{n}: want '<config> <test> <seed> <length|->', got {raw!r}")
        cfg, test, seed, length = parts
        length, _, k = length.partition("@")
        out.append(SeedLine(cfg, test, int(seed, 0), None if length == "-" else int(length),
                            why.strip(), int(k) if k else None))
    return out


def cases(block: str, configs, tests, extended=()) -> list:
    """pytest parameters (config, suite, test, Regression) with ids ``<config>-<test>`` and
    ``<config>-<test>-seed<N>``.  The cases of the configurations in ``extended`` carry the
    ``extended`` mark: `make soak` runs them, `make test` leaves them out (conftest.py,
    tb/README.md "Tiers"); so does a recorded seed whose replay is longer than
    ``LONG_REPLAY`` times `make test`'s length (a soak-length run)."""
    import pytest

    lines = [] if override() is not None else load_seeds(block)
    var = LENGTHS[block][0]
    out = []
    for cfg in configs:
        marks = [pytest.mark.extended] if cfg in extended else []
        for suite, test in tests:
            out.append(pytest.param(cfg, suite, test, Regression(), id=f"{cfg}-{test}",
                                    marks=marks))
            for s in lines:
                if s.test == test and fnmatch.fnmatchcase(cfg, s.config):
                    env = {} if s.length is None else {var: str(s.length)}
                    long_ = (s.length is not None and s.checkpoints is None
                             and s.length > LONG_REPLAY * LENGTHS[block][1])
                    if s.checkpoints is not None:
                        env[CHECKPOINTS_ENV] = str(s.checkpoints)
                    out.append(pytest.param(cfg, suite, test, Regression(s.seed, env),
                                            id=f"{cfg}-{test}-seed{s.seed}",
                                            marks=marks or ([pytest.mark.extended] if long_ else [])))
    return out
