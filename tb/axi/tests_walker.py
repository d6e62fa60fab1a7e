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
    env = await setup(dut, "axi_rb", s)
    env.mem.set_pause(0.0)
    m = env.mem
    m.hold[1] = True                          # writes' B wait until an R waits with them
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    reqs = [s.request(t, cmd=1) for t in ok[:env.walkers]]
    for i, r in enumerate(reqs):
        r.id = i
        env.send(r)
    for rnd in range(2):
        await env.loop.wait_until(lambda: m.held[1] >= 1, 20000, "a B held")
        m.hold[0] = True
        await env.loop.wait_until(lambda: m.held[0] >= 1, 20000, "an R held beside it")
        n = len(m.conflicts)
        m.hold[0] = m.hold[1] = False         # both answers leave at the same clock edge
        await env.loop.cycles(3)
        expect(len(m.conflicts) > n, f"round {rnd}: R and B released together never met")
        if rnd == 0:
            m.hold[1] = True
    expect(m.conflicts[:2] == ["R", "B"], f"conflict winners {m.conflicts}: the rule says R, B")
    env.log.info("R/B conflicts and their winners: %s", m.conflicts)
    await env.drain()
    await env.finish()
