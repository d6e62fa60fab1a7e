"""Passive monitors for flat Valid and Decoupled channels (CycleLoop components).

Both read the bits only in cycles with a transfer, and call ``callbacks(item, cycle)`` with
``item = {field: int}`` in the ReadOnly phase.  A bit that is X/Z during a transfer is an error.
"""

from __future__ import annotations

from .cycle import TbError


def _read(h, name: str) -> int:
    v = h.value
    try:
        return int(v)
    except ValueError:
        raise TbError(f"{name} is {v} (not 0/1) during a transfer") from None


class ValidMonitor:
    """Monitors ``<prefix>_valid`` + ``<prefix>_bits_<field>`` (no ready)."""

    def __init__(self, dut, prefix: str, fields, *, name: str | None = None):
        self.name = name or prefix
        self.valid_h = getattr(dut, f"{prefix}_valid")
        self.bits = {f: getattr(dut, f"{prefix}_bits_{f}") for f in fields}
        self.prefix = prefix
        self.callbacks = []
        self.loop = None
        self.item = None
        self.count = 0

    def reset_state(self):
        self.item = None

    def sample(self, cycle: int):
        self.item = None
        if self.loop is not None and self.loop.in_reset:
            return
        if _read(self.valid_h, f"{self.prefix}_valid"):
            item = {f: _read(h, f"{self.prefix}_bits_{f}") for f, h in self.bits.items()}
            self.item = item
            self.count += 1
            for cb in self.callbacks:
                cb(item, cycle)


class DecoupledMonitor(ValidMonitor):
    """Monitors a Decoupled channel: a transfer is a cycle with valid and ready both high."""

    def __init__(self, dut, prefix: str, fields, *, name: str | None = None):
        super().__init__(dut, prefix, fields, name=name)
        self.ready_h = getattr(dut, f"{prefix}_ready")

    def sample(self, cycle: int):
        self.item = None
        if self.loop is not None and self.loop.in_reset:
            return
        if _read(self.valid_h, f"{self.prefix}_valid") and _read(self.ready_h, f"{self.prefix}_ready"):
            item = {f: _read(h, f"{self.prefix}_bits_{f}") for f, h in self.bits.items()}
            self.item = item
            self.count += 1
            for cb in self.callbacks:
                cb(item, cycle)
