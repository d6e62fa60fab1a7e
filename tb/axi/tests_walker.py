"""Directed tests of the AXI4 master adapter on walker_rv39_axi (docs/axi-testplan.md).

NestedWalker's own directed tests that exercise a memory rule run here unchanged on the AXI top
(walker_env takes it as an option: xlat_tb/axi.py checks every AXI request and response against
the memory port they stand for): write strobes (``test_ad_bits``: one-byte A/D writes, wstrb =
wmask, memory changed in those bytes only) and bus errors (``test_bus_errors``: every access
position answered SLVERR or DECERR, ``error`` and the wrapper's counters). Below, the
adapter's own written order: an R and a B in the same cycle.
"""

from __future__ import annotations

import cocotb

from walker.tests_directed import _fits, expect, scenario, setup, test_ad_bits, test_bus_errors

__all__ = ["test_ad_bits", "test_bus_errors", "test_read_and_write_response_same_cycle"]


@cocotb.test()
async def test_read_and_write_response_same_cycle(dut):
    """An R and a B valid in the same cycle, twice: the R goes first at the first such cycle
    after reset, the B (which waited) at the second, the other held by its ready each time
    (xlat_tb.axi checks every such cycle against the rule; here they are made to happen)."""
    s = scenario("axi_rb", ad_clear_p=1.0, perm_random=False, bad=False, regions=10)
    s.host_pt_ad_clear_p = 1.0
    # long, varied latencies: a read issued before a walk's A/D write is often still due after
    # the write's B (the walk's own reads stop while it holds the A/D lock)
    env = await setup(dut, "axi_rb", s, latency=(1, 40))
    env.mem.set_pause(0.0)
    m = env.mem
    m.hold[1] = True                          # writes' B wait until an R waits with them
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    pending = [s.request(t, cmd=1) for t in ok] + [s.request(t, cmd=0) for t in ok]
    tries = 0

    async def feed():
        while pending:
            await env.loop.wait_until(lambda: env.free_id() is not None, 100000, "a free id")
            r = pending.pop(0)
            r.id = env.free_id()
            env.send(r)
    feeder = cocotb.start_soon(feed())
    while len(m.conflicts) < 2 and tries < 200:
        tries += 1
        await env.loop.wait_until(lambda: m.held[1] >= 1 or not (pending or env.inflight),
                                  100000, "a B held")
        if not m.held[1]:
            break                             # every walk done
        m.hold[0] = True
        for _ in range(60):                   # an R due beside the held B?
            if m.held[0]:
                break
            await env.loop.cycles(1)
        m.hold[0] = m.hold[1] = False         # both leave at the same clock edge
        await env.loop.cycles(2)
        m.hold[1] = True
    m.hold[1] = False
    await feeder
    expect(m.conflicts[:2] == ["R", "B"],
           f"R + B cycles' winners {m.conflicts} in {tries} tries: the rule says R, then B")
    env.log.info("R/B conflicts and their winners: %s", m.conflicts)
    await env.drain()
    await env.finish()
