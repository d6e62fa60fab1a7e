"""cocotb tests run with a checker of rtl/checkers/ bound into the block (tb/checkers/
test_checkers.py builds the design with the `bind` and `--assert`).

* ``test_random_bound``: BabelFishTlb's own random test (tb/babelfish, checked against the
  reference model) with babelfish_tlb_chk bound: no rule fires on a correct block under random
  traffic (the log line "checker: ..." says how often the isolation rule's S was answered).
* ``test_block_random_bound``: the same for any block (XLAT_CHK_BLOCK names tb/<block>).
* ``test_isolation_directed``: S looked up while a private entry, a shared entry of its group
  and a PC-bit rejection answer it; the checker (XLAT_CHK_STATS) must have checked those hits.
* ``test_fill_held`` / ``test_fill_changed_while_stalled``: a fill offered in the write shadow
  (fill_ready low) and held until taken (the rule kept), and the same with its PPN changed
  while not taken: a planted violation of the channel rule on an input, which the checker (in
  its assert mode for inputs) must stop.
"""

from __future__ import annotations

import importlib
import os

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


@cocotb.test()
async def test_block_random_bound(dut):
    """The random test of tb/<XLAT_CHK_BLOCK> with that block's checker bound (every rule
    asserted): a correct block under its own random traffic fires no rule."""
    block = os.environ["XLAT_CHK_BLOCK"]
    await importlib.import_module(f"{block}.tests_random").test_random.func(dut)


async def _reset(dut):
    cocotb.start_soon(Clock(dut.clock, 10, unit="ns").start())
    for name in ("lookup_req_valid", "fill_valid", "inval_valid"):
        getattr(dut, name).value = 0
    dut.reset.value = 1
    for _ in range(4):
        await RisingEdge(dut.clock)
    dut.reset.value = 0


# every field of each channel, so that nothing is left from an earlier test of the simulation
_FIELDS = {"lookup_req": ("vpn", "pcid", "ccid", "pcIdx", "pcIdxValid", "cmd", "user"),
           "fill": ("vpn", "ppn", "pageSize", "perm_r", "perm_w", "perm_x", "perm_u", "dirty",
                    "global", "pcid", "ccid", "own", "pc"),
           "inval": ("kind", "vpn", "pcid", "ccid")}


async def _offer(dut, channel: str, **fields):
    """Offer one request on ``channel`` (lookup_req, fill, inval) until taken; fields not
    given are 0."""
    for k in _FIELDS[channel]:
        getattr(dut, f"{channel}_bits_{k}").value = fields.get(k, 0)
    for k, v in fields.items():
        getattr(dut, f"{channel}_bits_{k}").value = v
    getattr(dut, f"{channel}_valid").value = 1
    while True:
        await ReadOnly()
        taken = int(getattr(dut, f"{channel}_ready").value)
        await RisingEdge(dut.clock)
        if taken:
            break
    getattr(dut, f"{channel}_valid").value = 0


@cocotb.test()
async def test_isolation_directed(dut):
    """S (the first fill: vpn 5, pcid 1, ccid 1) answered by a private entry, then by a shared
    one of its group filled by pcid 2 (a cross hit), after an invalidation of pcid 1's private
    entries; another process of the group with its PC bit set misses. Every response to S is
    checked by the checker's isolation rule, which must have seen the hits."""
    await _reset(dut)
    resps0, hits0 = _stats(dut)     # the statistic is not reset: earlier tests of the run
    seen = []

    async def watch():
        while True:
            await RisingEdge(dut.clock)
            if int(dut.lookup_resp_valid.value):
                seen.append((int(dut.lookup_resp_bits_hit.value), hex(dut.lookup_resp_bits_ppn.value),
                             int(dut.lookup_resp_bits_shared.value),
                             int(dut.lookup_resp_bits_crossHit.value)))
    cocotb.start_soon(watch())
    s = dict(vpn=5, pcid=1, ccid=1)
    await _offer(dut, "fill", **s, ppn=0x77, perm_r=1, own=1)
    await _offer(dut, "fill", vpn=5, pcid=2, ccid=1, ppn=0x55, perm_r=1, own=0, pc=0b10)
    for idx_valid in (0, 1):
        await _offer(dut, "lookup_req", **s, pcIdx=1, pcIdxValid=idx_valid)
    await _offer(dut, "inval", kind=2, pcid=1)
    await _offer(dut, "lookup_req", **s, pcIdx=0, pcIdxValid=1)
    await _offer(dut, "lookup_req", **s, pcIdx=1, pcIdxValid=1)
    for _ in range(8):
        await RisingEdge(dut.clock)
    resps, hits = (n - n0 for n, n0 in zip(_stats(dut), (resps0, hits0)))
    dut._log.info("checker: %d responses to the tracked context and page, %d hits; %s", resps,
                  hits, seen)
    assert resps == 4 and hits == 3, f"{resps} responses to S checked, {hits} hits"


async def _fill_in_shadow(dut, change: bool):
    """Reset; one fill taken; a second offered in the write shadow (ready low); held (or, with
    ``change``, its PPN changed) until taken."""
    await _reset(dut)
    for k in _FIELDS["fill"]:
        getattr(dut, f"fill_bits_{k}").value = 0
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
