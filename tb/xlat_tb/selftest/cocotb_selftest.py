"""cocotb side of the infrastructure self-test."""

import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from xlat_tb.backpressure import random_pattern
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.monitors import DecoupledMonitor, ValidMonitor
from xlat_tb.seed import rng as seeded_rng


@cocotb.test()
async def test_fifo_random_backpressure(dut):
    rng = seeded_rng("fifo")
    Clock(dut.clock, 10, unit="ns").start()
    loop = CycleLoop(dut.clock, dut.reset)
    fields = {"data": 8, "tag": 3}
    src = loop.add(DecoupledSource(dut, "in", fields, gaps=random_pattern(rng, "mixed"), rng=rng))
    sink = loop.add(ReadyDriver(dut, "out", pattern=random_pattern(rng, "mixed")))
    out = loop.add(DecoupledMonitor(dut, "out", fields))
    echo = loop.add(ValidMonitor(dut, "echo", {"data": 8}))
    expected, echoes, got = [], [], []
    src.on_accept.append(lambda t, c: (expected.append((t["data"], t["tag"])), echoes.append((t["data"], c + 1))))

    def on_out(item, cycle):
        got.append((item["data"], item["tag"]))
        if got[-1] != expected[len(got) - 1]:
            raise TbError(f"out #{len(got)}: {got[-1]} != {expected[len(got) - 1]}")

    def on_echo(item, cycle):
        data, due = echoes.pop(0)
        if (item["data"], cycle) != (data, due):
            raise TbError(f"echo {item['data']}@{cycle} != {data}@{due}")

    out.callbacks.append(on_out)
    echo.callbacks.append(on_echo)
    loop.start()
    await loop.reset(3)
    n = int(os.environ.get("XLAT_SELFTEST_N", "2000"))
    for i in range(n):
        src.send({"data": rng.getrandbits(8), "tag": rng.getrandbits(3)})
    await loop.wait_until(lambda: len(got) == n, timeout=40 * n, what="all items out")
    assert not echoes and got == expected
    if os.environ.get("XLAT_SELFTEST_FAIL"):
        raise TbError("deliberate failure (XLAT_SELFTEST_FAIL) to exercise the waveform rerun")
    dut._log.info("selftest: %d items through the FIFO, %d cycles", n, loop.cycle)


@cocotb.test(skip=os.environ.get("XLAT_SELFTEST_FAIL") != "1")
async def test_deliberate_failure(dut):
    """Fails on purpose (only when XLAT_SELFTEST_FAIL=1) so that the runner's failure path, the
    rerun with the same seed that writes an FST waveform, is itself tested."""
    Clock(dut.clock, 10, unit="ns").start()
    for _ in range(5):
        await RisingEdge(dut.clock)
    assert False, "deliberate failure"
