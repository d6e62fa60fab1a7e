"""One simulation for the directed tests of one configuration, one pytest case per cocotb test.

Every cocotb test resets the design and builds its own environment, so the directed tests of a
configuration can share one simulator process: starting one (Python, cocotb, the testbench
imports) costs ~0.7 s, about as much as most directed tests run. The pytest cases stay one per
cocotb test; the first case of a configuration to run starts the simulation of every selected
directed test of that configuration (``plan``, from the session's collection, so ``-k`` still
selects), and each case then reports its own test's verdict from that run.

* A test that fails in the shared simulation is rerun alone with the same seed: its failure
  message, log and waveform come from that run. A test that fails shared and passes alone is a
  failure too (the tests are not independent), with both logs named.
* A test without a verdict (the simulator stopped early) is rerun alone.
* Regression seeds and the random suites run alone as before (their own seed and length).
* Sharing needs all cases of a configuration on one pytest-xdist worker: the root conftest.py
  puts them in one ``xdist_group`` (applied to the node id there, for pytest 9) and the
  Makefile runs ``--dist loadgroup``. Under another distribution a configuration's cases can
  land on both workers. The first worker to ask runs
  the shared simulation under a lock and leaves its result under build/sim/<config>/; a case
  of the other worker that asks while the lock is held runs alone (waiting would idle that
  worker's core for the whole shared run), and asks again for the next case.
* ``XLAT_BATCH=0`` runs every case alone.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import uuid
from dataclasses import dataclass
from pathlib import Path

# (block, config, suite) -> cocotb tests selected in this session, in collection order
_PLAN: dict[tuple[str, str, str], list[str]] = {}
# (block, config, suite) -> RunResult of the shared simulation (this process)
_DONE: dict = {}

SHARED_SUITES = ("directed",)
_UID = uuid.uuid4().hex        # this test run's id outside pytest-xdist


def enabled() -> bool:
    return os.environ.get("XLAT_BATCH", "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass(frozen=True)
class Key:
    block: str
    config: str
    suite: str

    def tuple(self):
        return (self.block, self.config, self.suite)


def key_of(item) -> Key | None:
    """The shared-simulation key of a pytest item of tb/<block>/test_<block>.py, or None when
    the item runs alone (not a cocotb case, a regression seed, a suite that is not shared)."""
    spec = getattr(item, "callspec", None)
    if spec is None:
        return None
    p = spec.params
    if not {"config", "suite", "case", "reg"} <= p.keys():
        return None
    if p["suite"] not in SHARED_SUITES or p["reg"].seed is not None or p["reg"].env:
        return None
    return Key(item.path.parent.name, p["config"], p["suite"])


def group_of(item) -> str | None:
    """xdist group of a cocotb case: its block and configuration (all suites and seeds, so that
    one worker builds the model and runs the shared simulation)."""
    spec = getattr(item, "callspec", None)
    if spec is None or "config" not in spec.params or "case" not in spec.params:
        return None
    return f"{item.path.parent.name}:{spec.params['config']}"


def plan(items) -> None:
    """Record the selected cases of every shared simulation (call after collection)."""
    _PLAN.clear()
    _DONE.clear()
    if not enabled():
        return
    for item in items:
        k = key_of(item)
        if k is not None:
            _PLAN.setdefault(k.tuple(), []).append(item.callspec.params["case"])


def peers(block: str, config: str, suite: str) -> list[str]:
    """The cocotb tests that share this case's simulation (empty: run alone)."""
    tests = _PLAN.get((block, config, suite), [])
    return tests if len(tests) > 1 else []


def shared_result(key: tuple, run, state: Path):
    """The shared simulation's RunResult, running it (``run()``) the first time this test run
    asks for it, in any worker; None while another worker is running it (the caller then runs
    its case alone). ``state`` (a path prefix outside the run directory, which each run
    empties) holds the lock and the pickled result stamped with the test run's id, so the
    other worker reads the result instead of simulating again."""
    if key in _DONE:
        return _DONE[key]
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID") or _UID
    state.parent.mkdir(parents=True, exist_ok=True)
    saved = state.with_name(state.name + ".pickle")
    with open(state.with_name(state.name + ".lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None
        try:
            res = None
            if saved.is_file():
                with open(saved, "rb") as fh:
                    run_id, old = pickle.load(fh)
                if run_id == uid:
                    res = old
            if res is None:
                res = run()
                with open(saved, "wb") as fh:
                    pickle.dump((uid, res), fh)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    _DONE[key] = res
    return res
