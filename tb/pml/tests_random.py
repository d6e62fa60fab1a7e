"""Constrained-random test of PmlLogger.

XLAT_PML_EVENTS (make test 15000, make soak 100000: xlat_tb.regression) dirty events over every
context: a random mode per context (PML, EPML, both; some disabled), events for unknown
contexts, asids that match TRACK_ASID most of the time, GPAs from a small hot pool per context
(so the dedup filter hits) mixed with random ones, GVAs with the top bit set or not; random
back-pressure on mem_req_ready, exit_ready and guestIrq_ready, random gaps on dirty and csr, a
memory with random latency, out-of-order answers and random write errors; a software agent
(pml_env.SoftwareAgent) that on every exit / guest interrupt reads INDEX and STATUS, reads the
buffer from the memory model and checks it against the events in acceptance order, poisons it,
sometimes moves it, restarts it at a random index and ACKs; a register reader that reads random
registers (indexes exact, STATUS within the model's lag window) and bad addresses while logging
goes on.

Every checkpoint (5 per run) pauses the events, lets the agent drain, compares every perf_*
counter and changes the context modes and TRACK_ASIDs.  At the end every buffer is read: no
entry lost (except those the memory failed) or duplicated, every accepted event's parts
exactly once, in order.  The scoreboard (pml_env.py) checks every write, CSR response, exit,
interrupt and ready on the way; the functional-coverage summary is printed and required bins
must be hit.

"""

from __future__ import annotations

import time

import cocotb

from models.pml import CTRL_EPML, CTRL_PML, PML
from xlat_tb.backpressure import RandomGaps, random_pattern
from xlat_tb.cycle import TbError
from xlat_tb.regression import checkpoint_limit, run_length
from xlat_tb.seed import current_seed, rng as seeded_rng

from .pml_env import PmlEnv, SoftwareAgent

BOTH = CTRL_PML | CTRL_EPML


class Stimulus:
    def __init__(self, env: PmlEnv, rng, n: int):
        self.env, self.rng, self.n = env, rng, n
        p = env.p
        self.p = p
        self.issued = 0
        self.paused = False
        pool = max(8, 3 * p.dedupEntries)
        self.pools = [[rng.getrandbits(p.paBits - 12) for _ in range(pool)]
                      for _ in range(p.contexts)]
        self.unknown = [v for v in ((1 << p.vmidBits) - 1, p.contexts) if v >= p.contexts
                        and v < (1 << p.vmidBits)]
        self.modes = [BOTH] * p.contexts
        self.tracks = [0] * p.contexts
        self.rate = 1.0

    def gen(self, cycle):
        if self.paused or self.issued >= self.n:
            return None
        r, p = self.rng, self.p
        if self.rate < 1.0 and r.random() > self.rate:
            return None
        x = r.random()
        if x < 0.03 and self.unknown:
            vm = r.choice(self.unknown)
        else:
            vm = r.randrange(p.contexts)
        pool = self.pools[vm % p.contexts]
        gpa = r.choice(pool) if r.random() < 0.5 else r.getrandbits(p.paBits - 12)
        gva = r.getrandbits(p.vaBits - 12)
        asid = self.tracks[vm] if vm < p.contexts and r.random() < 0.7 else \
            r.getrandbits(p.asidBits)
        self.issued += 1
        return dict(gpa=gpa, gva=gva, vmid=vm, asid=asid)


async def reg_reader(env: PmlEnv, rng, stop):
    """Reads random registers while logging goes on (the scoreboard compares each)."""
    names = list(env.R.by_name)
    p = env.p
    while not stop["stop"]:
        await env.loop.cycles(rng.randint(50, 400))
        if stop["stop"]:
            return
        if rng.random() < 0.1:
            a = rng.choice([rng.getrandbits(16) | 1, p.contexts * env.R.stride + 8,
                            env.R.stride - 8])
            if env.model.decode(a) is None:
                await env.csr_op(a, rng.randrange(2), rng.getrandbits(64))
                continue
        c = rng.randrange(p.contexts)
        await env.read(c, rng.choice(names))


@cocotb.test()
async def test_random(dut):
    n = run_length("pml")
    rng = seeded_rng("random")
    env = PmlEnv(dut, rng=rng, name="random", latency=(1, 12),
                 dirty_gaps=random_pattern(rng, "mixed"), csr_gaps=RandomGaps(rng, 0.2),
                 exit_ready=random_pattern(rng, "mixed"), irq_ready=random_pattern(rng, "mixed"),
                 mem_req_ready=random_pattern(rng, "mixed")).start()
    await env.reset()
    p = env.p
    env.model.keep_log = False
    env.mem.error_p = 0.002
    ag = SoftwareAgent(env, seeded_rng("random.agent"), move_p=0.1, short_p=0.3).start_task()
    st = Stimulus(env, seeded_rng("random.stim"), n)
    mr = seeded_rng("random.modes")

    async def set_modes():
        for c in range(p.contexts):
            x = mr.random()
            mode = BOTH if x < 0.5 else CTRL_PML if x < 0.75 else CTRL_EPML if x < 0.92 else 0
            if c == 0 and mode == 0:
                mode = BOTH
            st.modes[c] = mode
            st.tracks[c] = mr.getrandbits(p.asidBits)
            if ag.start[(c, PML)] is None:
                await ag.configure(c, ctrl=mode, track_asid=st.tracks[c],
                                   vector=mr.getrandbits(p.irqVectorBits))
            else:
                await env.write(c, "TRACK_ASID", st.tracks[c])
                await env.write(c, "CTRL", mode)

    await set_modes()
    cov = env.cov
    cov.declare("event.queued", "event.ignored", "exit", "guestIrq", "mem.writeError",
                "dirty.stall", "write.pml", "write.guest", "write.pml.index0",
                "write.guest.index0", "agent.move_buffer", "agent.poison_after_error",
                "csr.bad", "mem_req.held", "csr.r.STATUS", "csr.r.PML_INDEX")
    cov.declare("event.deduped", required=bool(p.dedupEntries), why="dedupEntries = 0")
    stop = {"stop": False}
    cocotb.start_soon(reg_reader(env, seeded_rng("random.reader"), stop))
    env.dirty.generator = st.gen
    t0 = time.monotonic()
    c0 = env.loop.cycle
    n_cp = 5
    last = min(n_cp, checkpoint_limit() or n_cp)    # a seed line's `@k` stops after checkpoint k
    for k in range(1, last + 1):
        target = n * k // n_cp
        st.rate = mr.choice([1.0, 1.0, 0.6, 0.3])
        while st.issued < target:
            await env.loop.cycles(100)
            if st.issued >= target:
                st.paused = True
        st.paused = True
        await env.loop.wait_until(lambda: env.dirty.idle, 100000, "the last events")
        await ag.quiesce(timeout=200000)
        await env.check_counters()
        dut._log.info("checkpoint %d: %d events, cycle %d, %d exits, %d irqs, %d drains, "
                      "counters match", k, st.issued, env.loop.cycle, env.exits_seen,
                      env.irqs_seen, ag.handled)
        if k < last:
            await set_modes()
            st.paused = False
    stop["stop"] = True
    await ag.final_check()
    ag.stop()
    await env.check_counters()
    wall = time.monotonic() - t0
    cyc = env.loop.cycle - c0
    got = env.read_counters()
    dut._log.info(
        "random: seed %d, %d events in %d cycles, %.1f s (%.0f cycles/s); logged %d, "
        "guestLogged %d, exits %d, guestIrqs %d, ignored %d, deduped %d, writeErrors %d "
        "(entries lost to them %d), stall cycles %d, bad CSRs %d, buffers drained %d, max "
        "outstanding %d", current_seed(), st.issued, cyc, wall, cyc / max(wall, 1e-9),
        got["logged"], got["guestLogged"], got["exits"], got["guestIrqs"], got["ignored"],
        got["deduped"], got["writeErrors"], ag.lost, got["stallCycles"], got["badCsrs"],
        ag.handled, env.max_outstanding_seen)
    dut._log.info("%s", cov.report())
    if env.model.accepted != st.issued or (last == n_cp and st.issued != n):
        raise TbError(f"{env.model.accepted} events accepted, {st.issued} generated, "
                      f"{n} to generate ({last} of {n_cp} checkpoints)")
    await env.finish(counters=False)
    cov.assert_required()
