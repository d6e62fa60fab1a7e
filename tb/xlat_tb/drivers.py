"""Drivers for flat Decoupled channels (``<prefix>_valid/_ready/_bits_<field>``).

DecoupledSource drives valid and bits into the DUT, keeps them stable while ready is low
(Decoupled rule: a presented transfer is never withdrawn or changed), inserts random valid
gaps between transfers, and reports every accepted transfer with its cycle.  While idle it
drives random garbage on the bits (a DUT must ignore bits when valid is low).

ReadyDriver drives the ``ready`` input of a DUT output channel with a back-pressure pattern.
Both are CycleLoop components.
"""

from __future__ import annotations

import random
from collections import deque

from .backpressure import Never


class _Out:
    """A DUT input we drive, written only when the value changes."""

    __slots__ = ("h", "width", "last", "name")

    def __init__(self, handle, width: int, name: str):
        self.h, self.width, self.last, self.name = handle, width, None, name

    def set(self, v: int):
        if v != self.last:
            if v < 0 or v >> self.width:
                raise ValueError(f"{self.name}: value {v:#x} does not fit in {self.width} bits")
            self.h.value = v
            self.last = v


def _handle(dut, name: str):
    try:
        return getattr(dut, name)
    except AttributeError:
        raise AttributeError(f"DUT has no port {name!r}") from None


class DecoupledSource:
    """Drives a Decoupled input channel.

    fields: {field: width} (e.g. ``manifest.channel_fields(prefix)``).
    gaps: a backpressure pattern deciding idle cycles between transfers.
    Transactions are dicts {field: int}; missing fields are driven 0; keys starting with "_"
    are the testbench's own annotations and are not driven.  Each transaction comes from the
    queue (``send``) or, when the queue is empty, from ``generator(cycle)`` (None = nothing).
    ``on_accept(txn, cycle)`` callbacks run in the ReadOnly phase of the accepting cycle.
    """

    def __init__(self, dut, prefix: str, fields: dict, *, gaps=None, rng=None,
                 garbage_when_idle: bool = True, name: str | None = None):
        self.name = name or prefix
        self.prefix = prefix
        self.rng = rng or random.Random(0)
        self.gaps = gaps or Never()
        self.fields = dict(fields)
        self.valid = _Out(_handle(dut, f"{prefix}_valid"), 1, f"{prefix}_valid")
        self.ready_h = _handle(dut, f"{prefix}_ready")
        self.bits = {f: _Out(_handle(dut, f"{prefix}_bits_{f}"), w, f"{prefix}_bits_{f}")
                     for f, w in self.fields.items()}
        self.garbage = garbage_when_idle
        self.queue: deque = deque()
        self.generator = None
        self.on_accept = []
        self.loop = None
        self.reset_state()

    def reset_state(self):
        self.cur = None            # transaction presented this cycle
        self.accepted = None       # transaction accepted this cycle (set in sample)
        self.valid_now = 0
        self.ready_now = 0
        self.presented_since = None
        self.count = 0

    # -- API
    def send(self, txn: dict) -> dict:
        unknown = [k for k in txn if not k.startswith("_") and k not in self.fields]
        if unknown:
            raise KeyError(f"{self.name}: no field(s) {unknown}; fields are {list(self.fields)}")
        self.queue.append(txn)
        return txn

    @property
    def idle(self) -> bool:
        return self.cur is None and not self.queue

    # -- CycleLoop component
    def _drive_idle(self):
        if self.valid.last != 0:
            self.valid.set(0)
            if self.garbage:
                for o in self.bits.values():
                    o.set(self.rng.getrandbits(o.width))

    def drive(self, cycle: int):
        if self.loop is not None and self.loop.in_reset:
            self.cur = None
            self._drive_idle()
            return
        if self.cur is not None:      # presented and not yet accepted: hold
            return
        txn = None
        if not self.gaps.idle():
            if self.queue:
                txn = self.queue.popleft()
            elif self.generator is not None:
                txn = self.generator(cycle)
        if txn is None:
            self._drive_idle()
            return
        for f, o in self.bits.items():
            o.set(txn.get(f, 0))
        self.valid.set(1)
        self.cur = txn
        self.presented_since = cycle

    def sample(self, cycle: int):
        self.accepted = None
        if self.loop is not None and self.loop.in_reset:
            self.valid_now = self.ready_now = 0
            return
        self.valid_now = 1 if self.cur is not None else 0
        self.ready_now = int(self.ready_h.value)
        if self.cur is not None and self.ready_now:
            txn, self.cur = self.cur, None
            txn["_cycle"] = cycle
            self.accepted = txn
            self.count += 1
            for cb in self.on_accept:
                cb(txn, cycle)


class ReadyDriver:
    """Drives the ``<prefix>_ready`` input of a DUT output channel with a back-pressure pattern."""

    def __init__(self, dut, prefix: str, *, pattern=None, name: str | None = None):
        self.name = name or prefix
        self.ready = _Out(_handle(dut, f"{prefix}_ready"), 1, f"{prefix}_ready")
        self.pattern = pattern or Never()
        self.loop = None
        self.ready_now = 0

    def reset_state(self):
        pass

    def drive(self, cycle: int):
        if self.loop is not None and self.loop.in_reset:
            self.ready_now = 0
        else:
            self.ready_now = 0 if self.pattern.idle() else 1
        self.ready.set(self.ready_now)
