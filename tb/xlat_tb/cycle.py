"""CycleLoop: a single coroutine that, once per clock cycle,

1. after the rising edge, calls ``drive(cycle)`` of every component (inputs for this cycle);
2. in the ReadOnly phase (all combinational paths settled), calls ``sample(cycle)`` of every
   component, then every ``post_sample`` hook.

A handshake seen in ReadOnly of cycle t is the one the DUT takes at the next rising edge, so
``sample`` sees exactly the set of transfers of cycle t, whatever combinational paths (ready
depending on other channels' valids) the DUT has.  One loop instead of one coroutine per
driver keeps the Python cost per cycle low.

Components are plain objects with optional ``drive(cycle)``, ``sample(cycle)`` and
``reset_state()`` methods and a ``loop`` attribute set by ``add``.
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge


class TbError(AssertionError):
    """A testbench check failed (mismatch, protocol violation, timeout)."""


class CycleLoop:
    def __init__(self, clock, reset=None, *, reset_active_high: bool = True, log=None):
        self.clock = clock
        self.reset_sig = reset
        self.reset_active = 1 if reset_active_high else 0
        self.cycle = 0
        self.in_reset = False
        self.components = []
        self.post_sample = []
        self.error: BaseException | None = None
        self._task = None
        self._edge = RisingEdge(clock)
        self._ro = ReadOnly()
        self.log = log or cocotb.log

    def add(self, component):
        component.loop = self
        self.components.append(component)
        return component

    def start(self):
        if self._task is None:
            self._task = cocotb.start_soon(self._run())
        return self

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _run(self):
        edge, ro = self._edge, self._ro
        drivers = [c.drive for c in self.components if hasattr(c, "drive")]
        samplers = [c.sample for c in self.components if hasattr(c, "sample")]
        try:
            while True:
                await edge
                self.cycle += 1
                for d in drivers:
                    d(self.cycle)
                await ro
                for s in samplers:
                    s(self.cycle)
                for h in self.post_sample:
                    h(self.cycle)
        except BaseException as e:  # recorded so waiting coroutines raise it too
            if self.error is None:
                self.error = e
            raise

    def check(self):
        """Raise the first error a component or hook raised inside the loop."""
        if self.error is not None:
            raise self.error

    async def cycles(self, n: int = 1):
        for _ in range(n):
            await self._edge
            self.check()

    async def wait_until(self, pred, timeout: int, what: str = "condition"):
        """Wait (in whole cycles) until ``pred()`` is true; fail after ``timeout`` cycles."""
        for _ in range(timeout):
            if pred():
                return
            await self._edge
            self.check()
        if pred():
            return
        raise TbError(f"timeout after {timeout} cycles waiting for {what} (cycle {self.cycle})")

    async def wait_held(self, pred, cycles: int, timeout: int, what: str = "condition"):
        """Wait until ``pred()`` has been true for more than ``cycles`` consecutive cycles.
        Counters and state are registers that show the last cycle's work a cycle or more
        later: a fixed wait after ``pred`` first held races anything that starts and ends
        inside the wait (a background reader's access)."""
        run = [0]

        def held() -> bool:
            run[0] = run[0] + 1 if pred() else 0
            return run[0] > cycles

        await self.wait_until(held, timeout, f"{what} for {cycles} cycles")

    async def reset(self, cycles: int = 5):
        """Hold reset for ``cycles`` cycles (components drive idle and ignore samples)."""
        self.in_reset = True
        if self.reset_sig is not None:
            self.reset_sig.value = self.reset_active
        for c in self.components:
            if hasattr(c, "reset_state"):
                c.reset_state()
        for _ in range(cycles):
            await self._edge
        if self.reset_sig is not None:
            self.reset_sig.value = 1 - self.reset_active
        self.in_reset = False
        await self._edge
        self.check()
