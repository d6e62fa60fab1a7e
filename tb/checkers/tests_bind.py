"""cocotb tests run with a checker of rtl/checkers/ bound into the block (tb/checkers/
test_checkers.py builds the design with the `bind` and `--assert`).

* ``test_random_bound``: BabelFishTlb's own random test (tb/babelfish, checked against the
  reference model) with babelfish_tlb_chk bound: every rule holds, and the isolation rule was
  exercised (the checker's statistic, XLAT_CHK_STATS, counts the hits it checked for its
  tracked context and page).
* ``test_fill_held`` / ``test_fill_changed_while_stalled``: a fill offered in the write shadow
  (fill_ready low) and held until taken (the rule kept), and the same with its PPN changed
  while not taken: a planted violation of the channel rule on an input, which the checker (in
  its assert mode for inputs) must stop.
"""

from __future__ import annotations

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ReadOnly, RisingEdge

from babelfish.tests_random import test_random


def _stats(dut) -> tuple[int, int]:
    chk = dut.xlat_chk
    return int(chk.stat_sym_resps.value), int(chk.stat_sym_hits.value)


@cocotb.test()
async def test_random_bound(dut):
    await test_random.func(dut)
    resps, hits = _stats(dut)
    dut._log.info("checker: %d responses to the tracked context and page, %d hits", resps, hits)
    assert hits > 0, f"the isolation rule never checked a hit ({resps} responses to S)"


async def _fill_in_shadow(dut, change: bool):
    """Reset; one fill taken; a second offered in the write shadow (ready low); held (or, with
    ``change``, its PPN changed) until taken."""
    cocotb.start_soon(Clock(dut.clock, 10, unit="ns").start())
    for name in ("lookup_req_valid", "fill_valid", "inval_valid"):
        getattr(dut, name).value = 0
    dut.reset.value = 1
    for _ in range(4):
        await RisingEdge(dut.clock)
    dut.reset.value = 0
    dut.fill_bits_vpn.value = 1
    dut.fill_bits_ppn.value = 5
    dut.fill_bits_own.value = 1
    dut.fill_valid.value = 1
    while True:                                  # the first fill
        await ReadOnly()
        taken = int(dut.fill_ready.value)
        await RisingEdge(dut.clock)
        if taken:
            break
    dut.fill_bits_vpn.value = 2                  # the second, offered in the write shadow
    await ReadOnly()
    assert not int(dut.fill_ready.value), "expected fill_ready low in the write shadow"
    await RisingEdge(dut.clock)
    if change:
        dut.fill_bits_ppn.value = 6              # planted: payload changed while not taken
    for _ in range(16):
        await ReadOnly()
        taken = int(dut.fill_ready.value)
        await RisingEdge(dut.clock)
        if taken:
            break
    dut.fill_valid.value = 0
    for _ in range(8):
        await RisingEdge(dut.clock)


@cocotb.test()
async def test_fill_held(dut):
    await _fill_in_shadow(dut, change=False)


@cocotb.test()
async def test_fill_changed_while_stalled(dut):
    await _fill_in_shadow(dut, change=True)
