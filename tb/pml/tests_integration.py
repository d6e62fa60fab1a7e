"""NestedWalker feeding PmlLogger through its dirty channel, in one simulation
(integration_top.py).  The walker runs under tb/walker's WalkerEnv (every walk, access, A/D
write and dirty event against its model), the logger under PmlEnv (every log write, CSR, exit
against the logger model, observing the link), both memory ports served by one memory.

The test builds page tables (tb/xlat_tb/pagetables.py) whose data pages have host leaves with
D clear (guest page-table pages: D set, so only data pages produce events), walks them with
writes and reads from several VMs / address spaces, and checks, independently of both models,
that the GPAs logged in each VM's PML buffer are exactly the pages the test wrote, each once,
in the order their dirty events crossed the link, and that the guest buffer holds the GVA
pages of the tracked address space's writes.
"""

from __future__ import annotations

import os

import cocotb

from models.pml import CTRL_EPML, CTRL_PML, GUEST, PML
from models.walker import WalkerConfig
from xlat_tb.backpressure import RandomGaps, random_pattern
from xlat_tb.cycle import TbError
from xlat_tb.drivers import _Out
from xlat_tb.manifest import load_manifest
from xlat_tb.pagetables import Scenario
from xlat_tb.seed import current_seed, rng as seeded_rng

from walker.walker_env import WalkerEnv

from .pml_env import PmlEnv, SoftwareAgent


def expect(cond, msg):
    if not cond:
        raise TbError(msg)


async def _setup(dut, name, *, bp: bool):
    wman = load_manifest(os.environ["XLAT_MANIFEST"])
    pman = load_manifest(os.environ["XLAT_PML_MANIFEST"])
    cfg = WalkerConfig.from_params(wman.params)
    rng = seeded_rng(name)
    s = Scenario(cfg, rng.randrange(1 << 30))
    s.ad_clear_p = 0.6              # data leaves: 60 % with D clear (first write sets it)
    s.host_pt_ad_clear_p = 0.0      # host leaves of guest tables: D set, no events
    pa_top = 1 << pman.params["paBits"]
    vms = {}
    for vmid in (1, 2):
        vm = s.add_vm(vmid, pool_p=0.5)
        s.add_space(vm, 1)
        s.add_space(vm, 2)
        vms[vmid] = vm
    targets = []
    for vmid, vm in vms.items():
        for asid in (1, 2):
            for _ in range(18):
                targets += s.add_region(vm, asid, 0, host_mode="4k", n_addrs=1)
    targets = [t for t in targets if t.kind == "ok"]
    kw = {}
    if bp:
        kw = dict(req_gaps=RandomGaps(rng, 0.2), resp_ready=random_pattern(rng, "mixed"),
                  mem_req_ready=random_pattern(rng, "mixed"),
                  dirty_ready=random_pattern(rng, "bursty"))
    wenv = WalkerEnv(dut, rng=rng, name=name, mem=s.mem, latency=(1, 6), **kw)
    # the walker's dirty back-pressure drives the link gate, not the (output) dirty_ready
    wenv.dirty_ready.ready = _Out(dut.dirty_gate, 1, "dirty_gate")
    pkw = {}
    if bp:
        pkw = dict(exit_ready=random_pattern(rng, "heavy"), irq_ready=random_pattern(rng, "mixed"),
                   mem_req_ready=random_pattern(rng, "mixed"), csr_gaps=RandomGaps(rng, 0.3))
    penv = PmlEnv(dut, rng=seeded_rng(name + ".pml"), name=name, manifest=pman,
                  prefix="pml_", mem=s.mem, loop=wenv.loop, latency=(1, 8), **pkw)
    wenv.start()
    await wenv.reset()
    got = penv.read_counters()
    expect(not any(got.values()), f"logger counters not 0 after reset: {got}")
    ag = SoftwareAgent(penv, seeded_rng(name + ".agent"))

    def reserve(a):
        return a < pa_top and s.hpa.reserve(a, 0)
    ag.reserve = reserve
    ag.start_task()
    return wenv, penv, ag, s, targets


async def _walk_all(wenv, reqs):
    for r in reqs:
        await wenv.loop.wait_until(lambda: wenv.free_id() is not None, 100000, "a free id")
        r.id = wenv.free_id()
        wenv.send(r)
    await wenv.drain()


async def _run(dut, name, bp):
    wenv, penv, ag, s, targets = await _setup(dut, name, bp=bp)
    p = penv.p
    E = p.entries
    # vm 1: PML + EPML tracking asid 1; vm 2: PML only
    await ag.configure(1, ctrl=CTRL_PML | CTRL_EPML, track_asid=1, vector=0x21,
                       gpml_start=5)               # 6 entries: a guest interrupt early
    await ag.configure(2, ctrl=CTRL_PML)
    link = []                                         # dirty events on the link, in order
    penv.dirty.on_accept.append(lambda d, c: link.append(d))
    rng = seeded_rng(name + ".walks")
    written = {}                                      # (vmid, gpa page) -> first write order
    order = []
    reqs = []
    for rnd in range(3):
        for t in rng.sample(targets, len(targets)):
            cmd = 1 if rng.random() < 0.6 else 0
            reqs.append((t, cmd))
    H = s.H
    for t, cmd in reqs:
        hpte = s.vms[t.vmid].host.lookup(t.expect["gpa"])[2]
        if cmd == 1 and not hpte & H.d_mask:          # host D clear when the test built it
            key = (t.vmid, t.expect["gpa"] >> 12)
            if key not in written:
                written[key] = t
    await _walk_all(wenv, [s.request(t, cmd=cmd) for t, cmd in reqs])
    faults = [w for w in wenv.done if w.resp["fault"]]
    expect(not faults, f"{len(faults)} walks faulted, e.g. {faults[0].resp if faults else ''}")
    await ag.quiesce()
    # what crossed the link: one event per page written, nothing else
    link_keys = [(d["vmid"], d["gpa"]) for d in link]
    expect(len(link_keys) == len(set(link_keys)), "a page's dirty event crossed twice")
    expect(set(link_keys) == set(written),
           f"dirty events {len(link_keys)} for {len(written)} pages written; missing "
           f"{sorted(set(written) - set(link_keys))[:4]}, extra "
           f"{sorted(set(link_keys) - set(written))[:4]}")
    # what the logger wrote: read every buffer (agent drained full ones on exits)
    logged = {1: [], 2: []}
    glogged = []
    base_drained = dict(ag.drained)
    # the agent checked drained buffers against the events in order; collect the rest here
    for vmid in (1, 2):
        for part in (PML, GUEST):
            st = ag.start[(vmid, part)]
            idx = penv.model.ctx[vmid].index[part]
            n = 0 if st >= E else (st + 1 if idx >= E else st - idx)
            words = penv.buffer_words(vmid, part, st, st - n + 1) if n else []
            (logged[vmid] if part == PML else glogged).extend(words)
    await ag.final_check()
    ag.stop()
    # independent of the models: entries = link order per vm (drained rounds + the rest)
    for vmid in (1, 2):
        seq = [g << 12 for v, g in link_keys if v == vmid]
        tail = logged[vmid]
        expect(seq[len(seq) - len(tail):] == tail,
               f"vm {vmid}: PML buffer tail {[hex(x) for x in tail[:4]]} != last events "
               f"{[hex(x) for x in seq[-len(tail):][:4]]}")
        expect(ag.drained[(vmid, PML)] == len(seq),
               f"vm {vmid}: {ag.drained[(vmid, PML)]} entries drained, {len(seq)} pages "
               f"written")
    g1 = [d for d in link if d["vmid"] == 1 and d["asid"] == 1]
    expect(ag.drained[(1, GUEST)] == len(g1), f"guest buffer: {ag.drained[(1, GUEST)]} "
                                              f"entries, {len(g1)} tracked events")
    expect(ag.drained[(2, GUEST)] == 0, "vm 2 has EPML off but its guest buffer got entries")
    await wenv.check_counters()
    await penv.finish()
    dut._log.info("integration %s: seed %d, %d walks, %d pages written, %d dirty events, "
                  "%d PML entries, %d guest entries, %d exits, %d guest interrupts",
                  name, current_seed(), len(reqs), len(written), len(link),
                  penv.model.counters["logged"], penv.model.counters["guestLogged"],
                  penv.exits_seen, penv.irqs_seen)


@cocotb.test()
async def test_walker_to_logger(dut):
    """Walks with writes through NestedWalker; the logger logs each first write to a page
    whose host leaf had D clear exactly once (pages with D set: never), in link order, per
    VM; EPML logs the tracked asid's GVAs."""
    await _run(dut, "integ", bp=False)


@cocotb.test()
async def test_walker_to_logger_backpressure(dut):
    """The same with random back-pressure everywhere: walker responses and memory, the dirty
    link (gate), the logger's memory, exit and guestIrq."""
    await _run(dut, "integbp", bp=True)
