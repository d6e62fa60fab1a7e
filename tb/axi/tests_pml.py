"""Directed tests of the AXI4-Lite slave (and the write master) on pml_default_axi
(docs/axi-testplan.md).

PmlLogger's own directed tests of CSR and memory-error rules run here unchanged on the AXI top
(pml_env takes it as an option: xlat_tb/axi.py checks every AXI-Lite answer against the block's
``csr_resp`` and every AXI write against ``mem_req``): ``test_bad_csr`` (unaligned, unmapped,
out-of-range context, write to read-only STATUS: SLVERR, the block's counter) and
``test_write_errors`` (writes answered SLVERR or DECERR: ``error``, STATUS.writeError, the
wrapper's counters). Below, the AXI-Lite slave's own rules.
"""

from __future__ import annotations

import cocotb

from pml.tests_directed import expect, setup, test_bad_csr, test_write_errors
from xlat_tb.axi import SLVERR

__all__ = ["test_bad_csr", "test_write_errors", "test_partial_write_refused",
           "test_write_and_read_same_cycle"]


@cocotb.test()
async def test_partial_write_refused(dut):
    """A write to an aligned register with wstrb not all ones (4 bytes, 1 byte): SLVERR from
    the slave itself, nothing reaches csr_req (xlat_tb.axi fails on any csr_req it was not
    told of), the register unchanged, counted in perf_axilErrors."""
    env = await setup(dut, "axil_partial")
    addr = env.addr(0, "PML_ADDR")
    await env.write(0, "PML_ADDR", 0x1234_5000)
    m = env.csr.master
    for data in (b"\xff" * 4, b"\xff"):
        r = await m.write(addr, data)
        expect(int(r.resp) == SLVERR, f"partial write ({len(data)} bytes) answered {int(r.resp)}")
        env.csr.slverr += 1
    expect(await env.read(0, "PML_ADDR") == 0x1234_5000, "a refused write changed PML_ADDR")
    await env.finish()


@cocotb.test()
async def test_write_and_read_same_cycle(dut):
    """AW + W and AR valid in the same idle cycle, twice, on the same register: the read goes
    first after reset (it returns the old value), the write at the second (the read returns the
    new one); the block's model checks each access in csr_req's order."""
    env = await setup(dut, "axil_same")
    env.csr.set_pause(0.0)
    m = env.csr.master
    addr = env.addr(0, "PML_ADDR")
    reads = []
    for val in (0x1000, 0x2000):
        w = dict(addr=addr, write=1, wdata=val)
        r = dict(addr=addr, write=0, wdata=0)
        env.csr.foreign += [w, r]
        tw = cocotb.start_soon(m.write(addr, val.to_bytes(8, "little")))
        tr = cocotb.start_soon(m.read(addr, 8))
        reads.append(int.from_bytes((await tr).data, "little"))
        await tw
        await env.settle()
    order = ["W" if x["write"] else "R" for x in env.csr.foreign_order]
    expect(env.csr.conflicts == ["R", "W"], f"same-cycle winners {env.csr.conflicts}")
    expect(order == ["R", "W", "W", "R"], f"csr_req order {order}")
    expect(reads == [0, 0x2000], f"reads returned {[hex(x) for x in reads]}")
    await env.finish()
