"""Constrained-random test of PerforatedL2Tlb: fragmented 2 MiB regions under churn.

XLAT_PERFORATED_REQS requests (xlat_tb.regression: short in make test, 50,000 in make soak)
over a ``FragScenario`` per address space (2 MiB regions, a fraction perforated with clustered
or dispersed holes, allocated or not, in the mode the configuration needs) plus 4 KiB pages
and unmapped pages; accesses mix reads, writes, executes, user accesses and a few cmd 3.  In
phases the "OS" punches and patches holes and sends the invalidations the builder returns
(kind 3 + kind 2), plus random kinds 0 / 1 / 2, racing the walks in flight; the memory answers
with random latency, out of order, with bus errors on a small fraction of reads; back-pressure
on resp and mem_req and gaps on every input; memory responses nobody waits for (at quiet
checkpoints: in flight they would meet a read of their id).  The
scoreboard (pf_env.py) checks every response, memory request, invalDone and ready against the
model; counters at quiet checkpoints and at the end; functional coverage (pf_env.py bins: sources,
faults, read kinds, invalidation kinds, holes translated, hit under miss) must reach every
required bin.
"""

from __future__ import annotations

import os

import cocotb

from models.perforated import INV_ALL, INV_ASID, INV_PAGE, PerforatedParams
from xlat_tb.backpressure import RandomGaps, random_pattern
from xlat_tb.cycle import TbError
from xlat_tb.manifest import load_manifest
from xlat_tb.perforated_tables import FragScenario
from xlat_tb.regression import run_length
from xlat_tb.seed import current_seed, rng as seeded_rng

from .pf_env import PfEnv


@cocotb.test()
async def test_random(dut):
    seed = current_seed()
    rng = seeded_rng("random", seed)
    n = run_length("perforated")
    # the scenario first: its machine is the environment's memory
    p = PerforatedParams.from_dict(dict(load_manifest(os.environ["XLAT_MANIFEST"]).params))
    layout = rng.choice(("clustered", "dispersed"))
    scen = FragScenario.build(seed & 0xFFFF, regions=rng.choice((4, 8, 16, 64)),
                              frac=rng.choice((0.25, 0.5, 1.0)), holes=rng.choice((1, 2, 8, 16)),
                              layout=layout, allocated=rng.random() < 0.8, asid=1,
                              pa_bits=p.paBits,
                              # the baseline runs on the tables the OS builds without
                              # perforated pages (docs "perforation = false")
                              mode="perforated" if p.perforation else "splintered")
    m = scen.machine
    # two ordinary 2 MiB pages besides the scenario's (with frac = 1 it has none)
    for k in range(2):
        v2 = scen.regions[-1] + 1
        m.map_2m(1, v2, w=k)
        scen.regions.append(v2)
    # a second address space with 4 KiB pages in and around the same regions
    asids = [1, 2] if p.asidBits > 1 else [1, 0]
    smalls = []
    for k in range(rng.choice((8, 32, 64))):
        v = ((scen.regions[0] + 64 + k // 4) << 9) | rng.randrange(512)
        if v not in m.space(asids[1]).small:
            m.map_4k(asids[1], v, w=rng.random() < 0.8, u=rng.random() < 0.8,
                     d=rng.random() < 0.9)
            smalls.append(v)
    env = PfEnv(dut, rng=rng, name="random", machine=m,
                   resp_ready=random_pattern(rng), mem_req_ready=random_pattern(rng),
                   req_gaps=RandomGaps(rng, rng.choice((0.0, 0.2, 0.5))),
                   latency=rng.choice(((1, 4), (1, 12), (5, 30))))
    env.keep_responses = False
    await env.start()
    env.mem.error_p = rng.choice((0.0, 0.002, 0.01))
    env.log.info(f"random: seed {seed}, {n} requests, {len(scen.regions)} regions "
                 f"({len(scen.fragmented)} fragmented, {layout}), {len(smalls)} 4K pages, "
                 f"bus errors p={env.mem.error_p}")

    def pick():
        r = rng.random()
        if r < 0.6:
            return asids[0], scen.random_vpns(rng, 1)[0]
        if r < 0.75 and scen.hole_vpns():
            return asids[0], rng.choice(scen.hole_vpns())
        if r < 0.95 and smalls:
            return asids[1], rng.choice(smalls)
        return rng.choice(asids), rng.getrandbits(36)

    sent = 0
    phase_len = max(50, n // 10)
    while sent < n:
        await env.loop.wait_until(lambda: env.free_ids, 20000, "a free request id")
        asid, vpn = pick()
        r = rng.random()
        cmd = 3 if r < 0.01 else (1 if r < 0.25 else (2 if r < 0.3 else 0))
        env.send_req(vpn, asid=asid, cmd=cmd, user=int(rng.random() < 0.3))
        sent += 1
        if rng.random() < 0.005:
            k = rng.choice((INV_ALL, INV_ASID, INV_PAGE))
            env.send_inval(k, asid=rng.choice(asids), vpn=vpn)
        if sent % phase_len == 0:
            # a quiet checkpoint, then a phase change with the OS's invalidations
            await env.quiet()
            env.check_counters()
            # memory responses nobody waits for, only while no read is outstanding (one that
            # met a read of its id in flight would be that read's response)
            for _ in range(rng.randrange(3)):
                env.mem.inject_response(rng.randrange(p.walkers), rng.getrandbits(64),
                                        int(rng.random() < 0.3))
            await env.loop.cycles(6)
            if scen.fragmented:
                env.send_os_invals(scen.change(rng, rng.choice((1, 2, 4)),
                                               allocated=rng.random() < 0.8))
        if rng.random() < 0.3:
            await env.loop.cycles(rng.randrange(1, 4))
    await env.quiet(200000)
    got = env.check_counters()
    env.log.info(f"random: {env.stats}; sources {env.sources}; faults {env.faults}; "
                 f"counters {got}")
    env.log.info(env.cov.report())
    env.cov.assert_required()
    if env.stats["resp"] != n:
        raise TbError(f"{env.stats['resp']} responses for {n} requests")
