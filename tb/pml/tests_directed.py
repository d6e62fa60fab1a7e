"""Directed cocotb tests of PmlLogger, one (or more) per rule of docs/pml-logger.md.

Every test runs under the scoreboard of pml_env.py (every write against the co-simulation
model, every CSR response, exits / guest interrupts, dirty_ready, channel holds, counters at
the end); the tests add expectations stated by hand (buffer contents, when exactly the exit
comes, what a bad CSR access answers...).  Tests run unchanged on every configuration; what
depends on it (contexts, entries, queueDepth, dedupEntries, widths) is read from the manifest.
"""

from __future__ import annotations

import cocotb

from models.pml import CTRL_EPML, CTRL_PML, GUEST, PML, ST_FULL, ST_GUEST_FULL, \
    ST_WRITE_ERROR, sign_extend
from xlat_tb.backpressure import Bursty, Never, RandomGaps, random_pattern
from xlat_tb.cycle import TbError
from xlat_tb.seed import current_seed, rng as seeded_rng

from .pml_env import POISON, PmlEnv, SoftwareAgent

BOTH = CTRL_PML | CTRL_EPML


def expect(cond: bool, msg: str):
    if not cond:
        raise TbError(msg)


async def setup(dut, name: str, **kw) -> PmlEnv:
    env = PmlEnv(dut, rng=seeded_rng(name), name=name, **kw).start()
    await env.reset()
    env.log.info("%s: seed %d", name, current_seed())
    return env


def gva_data(env, gva: int) -> int:
    return sign_extend(gva << 12, env.p.vaBits)


async def wait_exit(env, n: int, timeout=2000, what="exit"):
    await env.loop.wait_until(lambda: env.exits_seen >= n, timeout, f"{what} #{n}")


async def wait_irq(env, n: int, timeout=2000):
    await env.loop.wait_until(lambda: env.irqs_seen >= n, timeout, f"guest interrupt #{n}")


def gpa_mask(env):
    return (1 << (env.p.paBits - 12)) - 1


def gva_mask(env):
    return (1 << (env.p.vaBits - 12)) - 1


# --------------------------------------------------------------------------- buffers
@cocotb.test()
async def test_fill_and_wrap(dut):
    """Both buffers of a context fill from their start index down to 0 (addresses ADDR + 8 *
    INDEX, data GPA << 12 / sign-extended GVA, low 12 bits of ADDR ignored), wrap below 0 to
    0xFFFF, and go round again after software resets the index -- three rounds, checked word
    by word in memory."""
    env = await setup(dut, "fill")
    E = env.p.entries
    ag = SoftwareAgent(env, seeded_rng("fill.agent"), auto=False)
    ctx = env.p.contexts - 1
    asid = (1 << env.p.asidBits) - 1
    await ag.configure(ctx, ctrl=BOTH, track_asid=asid, vector=1, pml_start=E - 1,
                       gpml_start=E - 1)
    # ADDR's low 12 bits are ignored (and read as 0)
    base = ag.new_page()
    await env.write(ctx, "PML_ADDR", base | 0xABC)
    expect(await env.read(ctx, "PML_ADDR") == base, "PML_ADDR low 12 bits not read as 0")
    env.poison(ctx, PML)
    n_ev = 0
    for rnd in range(3):
        gpas = [(0x1000 * (rnd + 1) + i) & gpa_mask(env) for i in range(E)]
        gvas = [(gva_mask(env) - i - rnd * E) for i in range(E)]   # top bit set: negative
        for g, v in zip(gpas, gvas):
            env.event(ctx, g, v, asid)
        n_ev += E
        await env.settle()
        expect(await env.read(ctx, "PML_INDEX") == 0xFFFF, "PML_INDEX did not wrap to 0xFFFF")
        expect(await env.read(ctx, "GPML_INDEX") == 0xFFFF, "GPML_INDEX did not wrap")
        words = env.buffer_words(ctx, PML, E - 1)
        expect(words == [g << 12 for g in gpas], f"round {rnd}: PML buffer {words[:4]}...")
        gw = env.buffer_words(ctx, GUEST, E - 1)
        expect(gw == [gva_data(env, v) for v in gvas], f"round {rnd}: guest buffer {gw[:4]}")
        expect(all(w >> 63 for w in gw) or env.p.vaBits == 64, "GVA not sign-extended")
        expect(env.exits_seen == 0 and env.irqs_seen == 0,
               "exit before any event found the index out of range")
        await ag.drain(ctx, PML, full=False, ack=False)
        await ag.drain(ctx, GUEST, full=False, ack=False)
    expect(env.model.counters["logged"] == n_ev, "logged")
    await env.finish()


@cocotb.test()
async def test_exit_exactly_when_index_leaves_range(dut):
    """Filling the buffer exactly raises nothing; the next event raises exactly one exit
    {vmid, 62} with STATUS.full; events behind it raise no further exit; the same for the
    guest buffer with guestIrq {vmid, IRQ_VECTOR} and STATUS.guestFull; a software INDEX
    >= entries (not only 0xFFFF) is out of range too."""
    env = await setup(dut, "exit")
    p = env.p
    E, Q = p.entries, p.queueDepth
    ag = SoftwareAgent(env, seeded_rng("exit.agent"), auto=False)
    c = 0
    vec = (1 << p.irqVectorBits) - 2
    await ag.configure(c, ctrl=BOTH, track_asid=1 % (1 << p.asidBits), vector=vec,
                       pml_start=E - 1, gpml_start=1)
    asid = 1 % (1 << p.asidBits)
    # guest buffer: 2 entries; PML: E entries
    for i in range(2):
        env.event(c, 0x10 + i, 0x20 + i, asid)
    await env.settle()
    expect(env.irqs_seen == 0 and await env.read(c, "STATUS") == 0, "guest: premature irq")
    env.event(c, 0x12, 0x22, asid)                # guest part finds GPML_INDEX 0xFFFF
    await wait_irq(env, 1)
    st = await env.read(c, "STATUS")
    expect(st == ST_GUEST_FULL, f"STATUS {st:#x} after the guest interrupt")
    await env.settle()
    expect(env.model.ctx[c].index[PML] == (E - 1 - 3) & 0xFFFF,
           "the PML part of the event whose guest part waits was not logged")
    expect(env.irqs_seen == 1, "more than one guest interrupt")
    # guest: drain, reset, ack -> the held guest part is logged
    await ag.drain(c, GUEST, full=True)
    await env.settle()
    expect(env.irqs_seen == 1, "irq repeated after the ack")
    # PML: fill exactly
    await env.write(c, "CTRL", CTRL_PML)
    left = env.model.ctx[c].index[PML] + 1
    for i in range(left):
        env.event(c, 0x100 + i)
    await env.settle()
    expect(env.exits_seen == 0, "exit while the buffer was exactly full (no event waiting)")
    expect(await env.read(c, "PML_INDEX") == 0xFFFF, "index did not wrap")
    expect(await env.read(c, "STATUS") == 0, "STATUS.full before any event found it full")
    for i in range(Q):
        env.event(c, 0x200 + i)
    await wait_exit(env, 1)
    await env.settle()
    expect(env.exits_seen == 1, f"{env.exits_seen} exits for one full buffer")
    expect(await env.read(c, "STATUS") == ST_FULL, "STATUS.full not set with the exit")
    # a software index >= entries (not 0xFFFF): still out of range
    await env.write(c, "PML_INDEX", E + (0x7000 if E < 0x7000 else 0))
    await env.write(c, "ACK", ST_FULL)
    await wait_exit(env, 2)
    expect(env.model.ctx[c].queue and len(env.model.ctx[c].queue) == Q, "held events lost")
    await ag.drain(c, PML, full=True)          # drains nothing new, restarts at E - 1
    await env.settle()
    expect(env.exits_seen == 2 and not env.model.ctx[c].queue, "held events not logged")
    words = env.buffer_words(c, PML, E - 1, E - Q)
    expect(words == [(0x200 + i) << 12 for i in range(Q)],
           f"held events after reset + ack: {[hex(w) for w in words]}")
    await env.finish()


@cocotb.test()
async def test_drain_reset_while_events_wait(dut):
    """A full buffer holds queueDepth events, dirty_ready drops for the next one of that
    context (stall counted) and not for other contexts; software drains, writes the index and
    ACKs; the held events are logged in order after the reset; an ACK while the buffer is
    still full (index not reset) raises a new exit for the waiting event."""
    env = await setup(dut, "held")
    p = env.p
    E, Q = p.entries, p.queueDepth
    ag = SoftwareAgent(env, seeded_rng("held.agent"), auto=False)
    c = p.contexts // 2
    await ag.configure(c, ctrl=CTRL_PML, pml_start=0)
    env.event(c, 0x1)
    for i in range(Q + 1):
        env.event(c, 0x40 + i)
    await wait_exit(env, 1)
    await env.loop.cycles(30)
    expect(env.dirty.cur is not None and env.dirty.cur["gpa"] == 0x40 + Q,
           "the event beyond queueDepth was accepted")
    expect(env.stalls > 20, f"dirty stalled {env.stalls} cycles only")
    # read at the edge (one cycle behind) of a counter that shows an event one cycle after it
    # happened (doc: Counters): at most the last two stall cycles are not in it yet
    got = env.read_counters()["stallCycles"]
    expect(0 <= env.stalls - got <= 2, f"perf_stallCycles {got}, tb counted {env.stalls}")
    # ACK with the index still out of range: a new exit, nothing logged
    await env.write(c, "ACK", ST_FULL)
    await wait_exit(env, 2, what="exit after an ACK while still full")
    expect(env.model.counters["logged"] == 1, "logged while full")
    # the protocol: drain, index, ack
    await ag.drain(c, PML, full=True)
    await env.settle()
    expect(env.exits_seen == 2 + (Q + 1 > E), "unexpected exits after the reset")
    n = min(Q + 1, E)
    words = env.buffer_words(c, PML, E - 1, E - n)
    expect(words == [(0x40 + i) << 12 for i in range(n)], f"held events: {words}")
    ag.auto = True
    ag.start_task()
    await ag.final_check()
    ag.stop()
    await env.finish()


# --------------------------------------------------------------------------- contexts
@cocotb.test()
async def test_many_contexts_interleaved(dut):
    """Every context enabled (modes PML, EPML, both), events interleaved at random over them
    (and some for unknown contexts), small random start indexes so buffers fill and are
    drained by the software agent many times; every buffer's content checked."""
    env = await setup(dut, "many", dirty_gaps=RandomGaps(seeded_rng("many.g"), 0.2))
    p = env.p
    rng = seeded_rng("many.stim")
    ag = SoftwareAgent(env, seeded_rng("many.agent"), move_p=0.3, short_p=0.5).start_task()
    modes = [BOTH, CTRL_PML, CTRL_EPML]
    for c in range(p.contexts):
        await ag.configure(c, ctrl=modes[c % 3], track_asid=c % (1 << p.asidBits),
                           vector=c % (1 << p.irqVectorBits))
    n = 300 + 30 * p.contexts
    vmax = (1 << p.vmidBits) - 1
    for i in range(n):
        vm = rng.randrange(p.contexts) if rng.random() < 0.95 else rng.randint(0, vmax)
        asid = vm % (1 << p.asidBits) if rng.random() < 0.7 else rng.getrandbits(p.asidBits)
        env.event(vm, rng.getrandbits(p.paBits - 12), rng.getrandbits(p.vaBits - 12), asid)
    await ag.final_check()
    ag.stop()
    env.log.info("many: %d events, %d exits, %d irqs, %d drains", n, env.exits_seen,
                 env.irqs_seen, ag.handled)
    await env.finish()


def burst_start_stalls(p) -> int:
    """Input stall cycles allowed when a burst of one event a cycle starts on an idle context
    (docs/pml-logger.md "Pipeline timing"): the first event's scheduler candidate comes a cycle
    after it reaches the head, so with queueDepth 2 the context's own queue is full for up to
    two cycles (the env checks that each such stall is on a full queue); deeper queues absorb
    it. With the decide stage (`inputStage` or the filter) the first event reaches its queue a
    cycle later and the next one holds its place (the credit) while it waits in the decide
    stage, which makes up to four (measured on pml_formal; each stall is still checked by the
    env against the model's full queue)."""
    if p.queueDepth != 2:
        return 0
    return 4 if p.dedupEntries > 0 or p.inputStage else 2


def depth1_cycles_per_event(p) -> int:
    """Cycles per event of one context with queueDepth 1 (docs/pml-logger.md "Pipeline
    timing"): the queue takes the next event only after its head left: acceptance, the
    candidate a cycle after the event reaches the head, the load (and with the filter the
    decide stage before the queue, whose slot is reserved at acceptance: with the filter or
    `inputStage`)."""
    return 4 if p.dedupEntries > 0 or p.inputStage else 3


@cocotb.test()
async def test_no_head_of_line_blocking(dut):
    """Context A's buffer is full and its queue holds queueDepth events: events for other
    contexts keep being logged at full rate while A waits; the input blocks only when an event
    for A itself arrives; A's exit waiting on exit_ready blocks nothing."""
    env = await setup(dut, "hol", latency=(1, 1))
    p = env.p
    if p.contexts < 2:
        env.log.info("SKIP: one context only")
        return
    Q = p.queueDepth
    ag = SoftwareAgent(env, seeded_rng("hol.agent"), auto=False)
    A, B = 0, p.contexts - 1
    await ag.configure(A, ctrl=CTRL_PML, pml_start=0)
    await ag.configure(B, ctrl=CTRL_PML, pml_start=p.entries - 1)
    env.exit_ready.pattern = __import__("xlat_tb.backpressure", fromlist=["Always"]).Always()
    env.event(A, 1)
    for i in range(Q):
        env.event(A, 0x10 + i)
    await env.loop.wait_until(lambda: len(env.model.ctx[A].queue) == Q and env.dirty.idle,
                              2000, "A's queue to fill")
    expect(env.model.pending_exits, "no exit raised for A")
    # B: as many events as fit its buffer, back to back
    nb = min(p.entries, 64)
    env.keep_write_cycles = True
    env.write_cycles.clear()
    t0 = env.loop.cycle
    for i in range(nb):
        env.event(B, 0x100 + i)
    await env.loop.wait_until(lambda: env.model.ctx[B].index[PML] ==
                              (p.entries - 1 - nb) & 0xFFFF and
                              not env.model.ctx[B].queue, 5000, "B's events to be logged")
    span = env.write_cycles[-1] - env.write_cycles[0] + 1
    expect(len(env.write_cycles) == nb, f"{len(env.write_cycles)} writes for {nb} B events")
    # (2 ids: about 2 writes per 3 cycles; queueDepth 1: the queue takes no event before
    # its head left, see depth1_cycles_per_event)
    limit = nb + 2 if (1 << p.idBits) >= 4 else 3 * nb // (1 << p.idBits) + 2
    if p.queueDepth == 1:
        limit = max(limit, depth1_cycles_per_event(p) * nb + 2)
    expect(span <= limit, f"B's {nb} writes took {span} cycles while A was full "
                          f"(head-of-line blocking?)")
    if p.queueDepth >= 2 and (1 << p.idBits) >= 4:     # else B's own queue fills (checked
        expect(env.stalls <= burst_start_stalls(p), f"dirty stalled {env.stalls} cycles on B's events")  # by env)
    # now an event for A blocks the input (and B's event behind it)
    env.event(A, 0x99)
    env.event(B, 0x199)
    await env.loop.cycles(20)
    expect(env.stalls >= 19, f"the event for full context A was not held ({env.stalls})")
    expect(env.model.ctx[B].index[PML] == (p.entries - 1 - nb) & 0xFFFF,
           "B's event passed A's")
    env.log.info("hol: %d B writes in %d cycles (from t0 %d) while A was full", nb, span,
                 env.write_cycles[0] - t0)
    env.exit_ready.pattern = __import__("xlat_tb.backpressure", fromlist=["Never"]).Never()
    await wait_exit(env, 1)
    await ag.drain(A, PML, full=True)
    ag.auto = True
    ag.start_task()
    await ag.final_check()
    ag.stop()
    await env.finish()


# --------------------------------------------------------------------------- EPML
@cocotb.test()
async def test_epml_asid_filter(dut):
    """The guest part exists only with CTRL.epml and asid == TRACK_ASID (taken at
    acceptance); PML only / EPML only / both; GVA sign-extended from vaBits; changing
    TRACK_ASID changes which later events are tracked; an EPML-only event of another asid
    logs nothing."""
    env = await setup(dut, "epml")
    p = env.p
    E = p.entries
    ag = SoftwareAgent(env, seeded_rng("epml.agent"), auto=False)
    c = 0
    a1 = 1 % (1 << p.asidBits)
    a2 = a1 ^ 1                                  # another asid (asidBits >= 1)
    await ag.configure(c, ctrl=BOTH, track_asid=a1, vector=3, pml_start=E - 1,
                       gpml_start=E - 1)
    top = 1 << (p.vaBits - 13)          # GVA page with the top VA bit set
    evs = [(0x11, top | 5, a1), (0x12, 6, a2), (0x13, 7, a1)]
    for g, v, a in evs:
        env.event(c, g, v, a)
    await env.settle()
    n = min(3, E)
    expect(env.buffer_words(c, PML, E - 1, E - n) == [x[0] << 12 for x in evs][:n], "PML")
    ng = min(2, E)
    gw = env.buffer_words(c, GUEST, E - 1, E - ng)
    want = [gva_data(env, top | 5), gva_data(env, 7)][:ng]
    expect(gw == want, f"guest buffer {[hex(x) for x in gw]}, expected {[hex(x) for x in want]}")
    await ag.drain(c, PML, full=False)
    await ag.drain(c, GUEST, full=False)
    # TRACK_ASID changes: later events follow it
    await env.write(c, "TRACK_ASID", a2)
    env.event(c, 0x21, 0x31, a1)
    env.event(c, 0x22, 0x32, a2)
    await env.settle()
    expect(env.buffer_words(c, GUEST, E - 1) [0] == gva_data(env, 0x32), "TRACK_ASID change")
    # EPML only, other asid: nothing
    await env.write(c, "CTRL", CTRL_EPML)
    before = dict(env.model.counters)
    env.event(c, 0x23, 0x33, a1)
    await env.settle()
    expect(env.model.counters["logged"] == before["logged"] and
           env.model.counters["guestLogged"] == before["guestLogged"], "logged an untracked event")
    # PML only: the guest part never exists
    await env.write(c, "CTRL", CTRL_PML)
    env.event(c, 0x24, 0x34, a2)
    await env.settle()
    ag.auto = True
    ag.start_task()
    await ag.final_check()
    ag.stop()
    await env.finish()


# --------------------------------------------------------------------------- CSRs
@cocotb.test()
async def test_registers(dut):
    """Reset values 0; every rw register of every context keeps exactly its field bits
    (manifest register table); STATUS is read-only, ACK reads 0; contexts are separate."""
    env = await setup(dut, "regs", csr_gaps=RandomGaps(seeded_rng("regs.g"), 0.3))
    rng = seeded_rng("regs.stim")
    p = env.p
    R = env.R
    names = [n for n, r in R.by_name.items()]
    for c in range(p.contexts):
        for n in names:
            expect(await env.read(c, n) == 0, f"ctx{c}.{n} not 0 after reset")
    for _ in range(3):
        for c in rng.sample(range(p.contexts), min(p.contexts, 6)):
            for n in names:
                if R.by_name[n].access != "rw" or n == "CTRL":
                    continue
                v = rng.getrandbits(64)
                await env.write(c, n, v)
                got = await env.read(c, n)
                expect(got == v & R.mask(n), f"ctx{c}.{n}: wrote {v:#x}, read {got:#x}, "
                                             f"mask {R.mask(n):#x}")
    # CTRL with random bits (stays disabled: events none)
    await env.write(0, "CTRL", 0xFFFF_FFFF_FFFF_FFFC)
    expect(await env.read(0, "CTRL") == 0, "CTRL keeps bits above 1")
    await env.finish()


@cocotb.test()
async def test_bad_csr(dut):
    """Unaligned address, unknown offset, context >= contexts, write to STATUS: error = 1,
    rdata 0, nothing changes (every register of every context read back), counted in
    perf_badCsrs; reads of ACK return 0 without error."""
    env = await setup(dut, "badcsr")
    p = env.p
    R = env.R
    rng = seeded_rng("badcsr.stim")
    for c in range(p.contexts):
        for n, r in R.by_name.items():
            if r.access == "rw":
                await env.write(c, n, rng.getrandbits(64) if n != "CTRL" else 0)

    async def snapshot():
        return {(c, n): await env.read(c, n) for c in range(p.contexts) for n in R.by_name}

    before = await snapshot()
    stride = R.stride
    known = set(R.by_offset)
    unknown = [o for o in range(0, stride, 8) if o not in known]
    bad = []
    for c in sorted({0, p.contexts - 1}):
        for o in list(R.by_offset)[:4]:
            bad += [c * stride + o + k for k in (1, 4, 7)]                  # unaligned
        bad += [c * stride + o for o in unknown]                            # unknown offset
    bad += [p.contexts * stride + o for o in R.by_offset if p.contexts * stride + o < 1 << 16]
    bad += [0xFFF8, 0xFFFF] if p.contexts * stride <= 0xFFF8 else []
    n_bad = 0
    for a in bad:
        for w in (0, 1):
            rd, e = await env.csr_op(a, w, 0xFFFF_FFFF_FFFF_FFFF)
            expect(e == 1 and rd == 0, f"{'write' if w else 'read'} of {a:#x}: rdata {rd:#x} "
                                       f"error {e} (doc: error 1, rdata 0)")
            n_bad += 1
    for c in range(p.contexts):
        rd, e = await env.csr_op(env.addr(c, "STATUS"), 1, 0x7)
        expect(e == 1, f"write to ctx{c}.STATUS answered error {e}")
        n_bad += 1
        rd, e = await env.csr_op(env.addr(c, "ACK"), 0)
        expect((rd, e) == (0, 0), f"read of ctx{c}.ACK: {rd:#x} error {e}")
    after = await snapshot()
    diff = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    expect(not diff, f"bad CSR accesses changed registers: {diff}")
    got = env.read_counters()["badCsrs"]
    expect(got == n_bad, f"perf_badCsrs {got}, expected {n_bad}")
    # back-to-back requests (csr_req is always ready, one response each next cycle)
    for i in range(20):
        env.csr_send(rng.choice(bad + [env.addr(0, "PML_INDEX")]), rng.randrange(2), i)
    await env.settle()
    await env.finish()


# --------------------------------------------------------------------------- memory errors
@cocotb.test()
async def test_write_errors(dut):
    """A write answered with error: STATUS.writeError of that context (not others),
    perf_writeErrors, the index stays consumed, the entry is not retried (one write to that
    slot only), later entries go on; ACK bit 2 clears it."""
    env = await setup(dut, "werr", latency=(1, 8))
    p = env.p
    E = p.entries
    ag = SoftwareAgent(env, seeded_rng("werr.agent"), auto=False)
    c0, c1 = 0, p.contexts - 1
    await ag.configure(c0, ctrl=CTRL_PML, pml_start=E - 1)
    if c1 != c0:
        await ag.configure(c1, ctrl=CTRL_PML, pml_start=E - 1)
    base = env.model.buffer_base(c0, PML)
    bad_idx = [E - 2] + ([E - 4] if E >= 4 else [])
    env.mem.error_addrs = {base + 8 * i for i in bad_idx}
    n = min(E, 6)
    for i in range(n):
        env.event(c0, 0x500 + i)
        if c1 != c0:
            env.event(c1, 0x600 + i)
    await env.settle()
    st = await env.read(c0, "STATUS")
    expect(st == ST_WRITE_ERROR, f"STATUS {st:#x} after write errors")
    if c1 != c0:
        expect(await env.read(c1, "STATUS") == 0, "writeError leaked into another context")
    nerr = sum(1 for i in bad_idx if i > E - 1 - n)
    expect(await env.read(c0, "PML_INDEX") == (E - 1 - n) & 0xFFFF, "index not consumed once")
    to_slot = [a for a in env.mem.log if a.addr in env.mem.error_addrs]
    expect(len(to_slot) == nerr, f"{len(to_slot)} writes to the failing slots: retried?")
    words = env.buffer_words(c0, PML, E - 1, E - n)
    for k, w in enumerate(words):
        i = E - 1 - k
        want = POISON if i in bad_idx else (0x500 + k) << 12
        expect(w == want, f"slot {i}: {w:#x}, expected {want:#x}")
    got = env.read_counters()
    expect(got["writeErrors"] == nerr and got["logged"] == (n * (2 if c1 != c0 else 1)) - nerr,
           f"counters {got}")
    await env.write(c0, "ACK", ST_WRITE_ERROR)
    expect(await env.read(c0, "STATUS") == 0, "ACK bit 2 did not clear writeError")
    env.mem.error_addrs = set()
    ag.auto = True
    ag.start_task()
    await ag.final_check()
    ag.stop()
    expect(ag.lost == nerr, f"agent saw {ag.lost} lost entries, {nerr} errors")
    await env.finish()


@cocotb.test()
async def test_bad_mem_resp(dut):
    """A mem_resp whose id has no write outstanding is dropped and counted
    (perf_badMemResps); it completes nothing."""
    env = await setup(dut, "badresp", latency=(10, 20))
    p = env.p
    ag = SoftwareAgent(env, seeded_rng("badresp.agent"), auto=False)
    await ag.configure(0, ctrl=CTRL_PML, pml_start=p.entries - 1)
    tags = 1 << p.idBits
    for i in range(3):
        # writes outstanding and nothing else to write: the free ids stay free
        k = max(1, min(tags - 1, 2))
        for j in range(k):
            env.event(0, 0x700 + 8 * i + j)
        await env.loop.wait_until(lambda: env.dirty.idle and not env.model.eligible(), 200,
                                  "the events to be written")
        free = [t for t in range(tags) if t not in env.model.outstanding]
        env.mem.inject_response(free[-1], error=i & 1)
        await env.settle()
        if p.entries - 1 - (i + 1) * k < 2 * k:
            await ag.drain(0, PML, full=False, ack=False)
    await env.settle()
    got = env.read_counters()["badMemResps"]
    expect(got == 3, f"perf_badMemResps {got}")
    await env.finish()


# --------------------------------------------------------------------------- ignored
@cocotb.test()
async def test_ignored_events(dut):
    """Unknown context (vmid >= contexts), context with PML and EPML disabled: accepted at
    once (no stall even when that vmid's queue would be full) and counted in perf_ignored;
    a part whose buffer is disabled while its event waits is dropped and counted."""
    env = await setup(dut, "ignored")
    p = env.p
    ag = SoftwareAgent(env, seeded_rng("ignored.agent"), auto=False)
    vmax = (1 << p.vmidBits) - 1
    unknown = sorted({v for v in (p.contexts, vmax, (p.contexts + vmax) // 2) if v >= p.contexts})
    for v in unknown:
        for i in range(p.queueDepth + 3):
            env.event(v, 0x10 + i)
    disabled = p.contexts - 1
    for i in range(p.queueDepth + 3):
        env.event(disabled, 0x20 + i)
    await env.settle()
    expect(env.stalls == 0, f"ignored events stalled dirty {env.stalls} cycles")
    n_ign = (len(unknown) + 1) * (p.queueDepth + 3)
    expect(env.model.counters["ignored"] == n_ign, "model count")
    # a held event whose buffer gets disabled
    c = 0
    await ag.configure(c, ctrl=BOTH, track_asid=0, pml_start=0, gpml_start=p.entries - 1)
    env.event(c, 0x30, 0x40, 0)
    for i in range(p.queueDepth):
        env.event(c, 0x31 + i, 0x41 + i, 0)
    await wait_exit(env, 1)
    await env.settle()
    q = len(env.model.ctx[c].queue)
    expect(q == p.queueDepth, f"{q} events held")
    await env.write(c, "CTRL", CTRL_EPML)        # PML parts of the held events are dropped
    await env.settle()
    expect(not env.model.ctx[c].queue, "held events still queued after PML was disabled")
    await env.write(c, "CTRL", 0)
    env.event(c, 0x50)
    await env.settle()
    ag.auto = True
    ag.start_task()                              # drains ctx 0 for the exit, ACKs
    await ag.final_check()
    ag.stop()
    await env.finish()


# --------------------------------------------------------------------------- dedup
@cocotb.test()
async def test_dedup(dut):
    """dedupEntries > 0: a (vmid, gpa) logged since the last PML_INDEX write of its context is
    dropped and counted (perf_deduped); the same page of another context is not; the filter
    forgets a context's pages at a PML_INDEX write; tree-PLRU over dedupEntries decides what
    an overflowing filter forgets; ignored events do not touch it; events with only a guest
    part are remembered too (doc: each event it lets through)."""
    env = await setup(dut, "dedup")
    p = env.p
    D = p.dedupEntries
    if not D:
        env.log.info("SKIP: dedupEntries = 0 in this configuration (no filter)")
        return
    ag = SoftwareAgent(env, seeded_rng("dedup.agent"))
    ag.start_task()
    E = p.entries
    c0, c1 = 0, min(1, p.contexts - 1)
    await ag.configure(c0, ctrl=BOTH, track_asid=0, pml_start=E - 1, gpml_start=E - 1)
    if c1 != c0:
        await ag.configure(c1, ctrl=CTRL_PML, pml_start=E - 1)

    def ev(c, g):
        t = env.event(c, g, g, 0)
        return t

    ts = [ev(c0, 0x100 + i) for i in range(D)]           # fill the filter
    ts += [ev(c0, 0x100 + i) for i in range(D)]          # all deduped
    if c1 != c0:
        ts += [ev(c1, 0x100)]                            # other context: logged
    await ag.quiesce()
    kinds = [t["_kind"] for t in ts]
    expect(kinds[:D] == ["queued"] * D and kinds[D:2 * D] == ["deduped"] * D,
           f"dedup kinds {kinds}")
    if c1 != c0:
        expect(kinds[-1] == "queued", "another context's page deduped")
    # overflow: the PLRU victim is forgotten (the model predicts which)
    for i in range(3 * D):
        ev(c0, 0x200 + (i * 7) % (2 * D))
    await ag.quiesce()
    # PML_INDEX write forgets c0's pages (c1 keeps its own)
    if c1 != c0:
        ev(c1, 0x100)                             # (again: the overflow may have evicted it)
        await ag.quiesce()
    await env.write(c0, "PML_INDEX", env.model.ctx[c0].index[PML])
    t1 = ev(c0, 0x200)
    t2 = ev(c1, 0x100) if c1 != c0 else None
    await ag.quiesce()
    expect(t1["_kind"] == "queued", "the filter did not forget at the PML_INDEX write")
    if t2 is not None:
        expect(t2["_kind"] == "deduped", "a PML_INDEX write forgot another context's pages")
    # ignored events (disabled context) with a page in the filter do not touch the PLRU
    if c1 != c0:
        await env.write(c1, "CTRL", 0)
        for i in range(4):
            ev(c1, 0x100)
        await env.write(c1, "CTRL", CTRL_PML)
        for i in range(2 * D):
            ev(c0, 0x300 + i % (D + 1))
            ev(c1, 0x100 + i % 3)
        await ag.quiesce()
    await ag.final_check()
    ag.stop()
    await env.finish()


async def dedup_setup(dut, name):
    env = await setup(dut, name)
    if not env.p.dedupEntries:
        env.log.info("SKIP: dedupEntries = 0 in this configuration (no filter)")
        return None, None
    ag = SoftwareAgent(env, seeded_rng(name + ".agent"))
    ag.start_task()
    return env, ag


async def deduped_after(env, n_expected: int, what: str):
    """Wait a little and compare perf_deduped with a hand-derived count (before the
    scoreboard would time out on a write the model expects)."""
    await env.loop.cycles(30)
    got = env.read_counters()["deduped"]
    if got != n_expected:
        raise TbError(f"{what}: perf_deduped {got}, doc (by hand): {n_expected}; model "
                      f"{env.model.counters['deduped']}")


@cocotb.test()
async def test_dedup_ignored_events_leave_filter(dut):
    """Doc order: an event of a disabled context is ignored before the filter is consulted,
    so it changes nothing in the filter (not even the PLRU order).  Filter: X of context 1 in
    way 0, pages of context 0 in the other ways, in that order (PLRU victim: way 0).  X again
    while context 1 is disabled (ignored), then a new page of context 0 evicts X (way 0), so
    X re-enabled is logged again, not deduped."""
    env, ag = await dedup_setup(dut, "dedupign")
    if env is None:
        return
    p = env.p
    D = p.dedupEntries
    if p.contexts < 2:
        env.log.info("SKIP: one context")
        return
    E = p.entries
    await ag.configure(0, ctrl=CTRL_PML, pml_start=E - 1)
    await ag.configure(1, ctrl=CTRL_PML, pml_start=E - 1)
    X = 0x5A5
    env.event(1, X)
    for i in range(1, D):
        env.event(0, 0x100 + i)
    await ag.quiesce()
    expect(env.model.filter.plru.victim() == 0, "model: victim is not way 0")
    await env.write(1, "CTRL", 0)
    env.event(1, X)                                # ignored
    await env.loop.cycles(5)
    await env.write(1, "CTRL", CTRL_PML)
    env.event(0, 0x200)                            # evicts way 0 = X
    await ag.quiesce()
    env.event(1, X)                                # a miss: logged again
    await deduped_after(env, 0, "X after an ignored X and an eviction of way 0")
    await ag.final_check()
    ag.stop()
    await env.finish()


@cocotb.test()
async def test_dedup_guest_only_events(dut):
    """Doc: the filter remembers the (vmid, gpa) of each event it lets through -- an event of
    an EPML-only context (guest part only) too: the same page again is deduped."""
    env, ag = await dedup_setup(dut, "dedupguest")
    if env is None:
        return
    E = env.p.entries
    await ag.configure(0, ctrl=CTRL_EPML, track_asid=0, gpml_start=E - 1, pml_start=E - 1)
    env.event(0, 0x400, 0x400, 0)
    await ag.quiesce()
    env.event(0, 0x400, 0x401, 0)
    await deduped_after(env, 1, "a repeated page of an EPML-only context")
    await ag.final_check()
    ag.stop()
    await env.finish()


# --------------------------------------------------------------------------- back-pressure
@cocotb.test()
async def test_backpressure(dut):
    """Random back-pressure on mem_req_ready, exit_ready and guestIrq_ready, random valid gaps
    on dirty and csr, out-of-order memory answers with long latencies, every context busy:
    nothing lost, duplicated or reordered; every channel holds."""
    rng = seeded_rng("bp")
    env = await setup(dut, "bp", latency=(1, 30), dirty_gaps=random_pattern(rng, "mixed"),
                      csr_gaps=RandomGaps(rng, 0.4), exit_ready=random_pattern(rng, "heavy"),
                      irq_ready=Bursty(rng, busy=2, quiet=20),
                      mem_req_ready=random_pattern(rng, "mixed"))
    p = env.p
    ag = SoftwareAgent(env, seeded_rng("bp.agent"), move_p=0.2, short_p=0.6).start_task()
    for c in range(p.contexts):
        await ag.configure(c, ctrl=BOTH, track_asid=0, vector=c % (1 << p.irqVectorBits))
    st = seeded_rng("bp.stim")
    n = 1500
    for i in range(n):
        env.event(st.randrange(p.contexts), st.getrandbits(p.paBits - 12),
                  st.getrandbits(p.vaBits - 12), 0 if st.random() < 0.7 else st.getrandbits(p.asidBits))
    await ag.final_check()
    ag.stop()
    env.log.info("bp: %d events, %d writes, %d exits, %d irqs, %d stall cycles, max %d "
                 "outstanding", n, env.writes_presented, env.exits_seen, env.irqs_seen,
                 env.stalls, env.max_outstanding_seen)
    expect(env.cov.counts["mem_req.held"] > 0, "mem_req never held")
    await env.finish()


# --------------------------------------------------------------------------- throughput
@cocotb.test()
async def test_throughput(dut):
    """Memory always ready (latency 1), an event every cycle for enabled contexts with room:
    one write per cycle sustained (doc: one entry per cycle when memory accepts one write per
    cycle).  Phase 1: PML only (one write per event); phase 2: both parts (two writes per
    event: the writes stay at one per cycle while dirty is throttled by the queues).  Reports
    the measured entries per cycle."""
    env = await setup(dut, "tput", latency=(1, 1))
    p = env.p
    E = p.entries
    ag = SoftwareAgent(env, seeded_rng("tput.agent"), auto=False)
    results = []
    for phase, ctrl in (("pml", CTRL_PML), ("both", BOTH)):
        for c in range(p.contexts):
            await ag.configure(c, ctrl=ctrl, track_asid=0, pml_start=E - 1, gpml_start=E - 1)
        room = E * p.contexts                    # events that fit without an exit
        n = min(room, 4000)
        rng = seeded_rng(f"tput.{phase}")
        env.keep_write_cycles = True
        env.write_cycles.clear()
        per = [0] * p.contexts
        for i in range(n):
            c = i % p.contexts
            if per[c] >= E:
                continue
            per[c] += 1
            env.event(c, rng.getrandbits(p.paBits - 12), rng.getrandbits(p.vaBits - 12), 0)
        await env.settle()
        wc = env.write_cycles
        span = wc[-1] - wc[0] + 1
        rate = len(wc) / span
        gaps = [b - a for a, b in zip(wc, wc[1:]) if b - a > 1]
        results.append((phase, len(wc), span, rate))
        env.log.info("throughput %s: %d writes in %d cycles = %.3f entries/cycle (gaps: %s)",
                     phase, len(wc), span, rate, gaps[:10])
        expect(len(wc) >= 2, "too few writes to measure")
        tags = 1 << p.idBits
        if tags >= 4:
            expect(span <= len(wc) + 2,
                   f"{phase}: {len(wc)} writes took {span} cycles ({rate:.3f}/cycle; doc: one "
                   f"entry per cycle); gaps {gaps[:10]}")
        else:
            # doc: "as long as fewer than 2^idBits writes are outstanding": with 2 ids and
            # a 1-cycle memory a write holds its id for 3 cycles (issue, response, free)
            bound = tags / 3
            env.log.info("idBits %d: %d ids bound the rate to about %.3f/cycle", p.idBits,
                         tags, bound)
            expect(rate >= bound - 0.05, f"{phase}: {rate:.3f}/cycle < {bound:.3f} with "
                                         f"{tags} ids; gaps {gaps[:10]}")
        for c in range(p.contexts):
            await ag.drain(c, PML, full=False, restart=False)
            await ag.drain(c, GUEST, full=False, restart=False)
            await env.write(c, "CTRL", 0)
    env.keep_write_cycles = False
    print("[xlat] %s throughput: %s" % (env.config, ", ".join(
        f"{ph} {n} writes / {s} cycles = {r:.3f} entries/cycle" for ph, n, s, r in results)))
    await env.finish()


# --------------------------------------------------------------------------- same cycle
# docs/pml-logger.md, "Same-cycle inputs": each test puts one pair of inputs into one cycle
# (checked from the acceptance cycles the drivers record) and compares the outcome with the
# written rule, by hand, on top of the scoreboard's model.

class OneShot:
    """Ready pattern: low, except high in exactly the ``at``-th cycle from now (0 = the next
    driven cycle); ``at`` None keeps it low."""

    def __init__(self, at=None):
        self.at, self.n = at, 0

    def idle(self) -> bool:
        k, self.n = self.n, self.n + 1
        return k != self.at


def applies_with(w: dict, t: dict, what: str):
    """The CSR access ``w`` applies in the cycle ``t`` is accepted: ``w`` was accepted in the
    cycle before (the CSR input stage, docs/pml-logger.md "Pipeline timing")."""
    expect(w.get("_cycle") is not None and t.get("_cycle") is not None
           and w["_cycle"] + 1 == t["_cycle"],
           f"{what}: CSR accepted in cycle {w.get('_cycle')}, other in {t.get('_cycle')}, "
           f"not the cycle after")


async def csr_then(env, addr: int, value: int, send):
    """A CSR write and, one cycle later, ``send()``: both land in one cycle (the write applies
    a cycle after its request)."""
    w = env.csr_send(addr, 1, value)
    await env.loop.cycles(1)
    return w, send()


def same_cycle(a: dict, b: dict, what: str):
    expect(a.get("_cycle") is not None and a.get("_cycle") == b.get("_cycle"),
           f"{what}: accepted in cycles {a.get('_cycle')} and {b.get('_cycle')}, not in one")


@cocotb.test()
async def test_same_cycle_event_and_index_write(dut):
    """An event accepted in the cycle of a PML_INDEX write: it looks the dedup filter up as it
    was before the write (a page in the filter is deduped), and the entry it fills survives
    the write's forget (a fill beats a same-cycle forget), also when the event is another
    context's.  pml_dedup seed 1618621111 found the model forgetting it.  Without a filter
    every event is logged."""
    env = await setup(dut, "sc_index")
    p = env.p
    D, E = p.dedupEntries, p.entries
    ag = SoftwareAgent(env, seeded_rng("sc_index.agent"))
    ag.start_task()
    c, o = p.contexts - 1, 0
    await ag.configure(c, ctrl=CTRL_PML, pml_start=E - 1)
    if o != c:
        await ag.configure(o, ctrl=CTRL_PML, pml_start=E - 1)
    A, B, C = 0x1A1, 0x2B2, 0x3C3

    async def with_index_write(ctx, page):
        """event (ctx, page) and a PML_INDEX write of c (same value) in one cycle"""
        await ag.quiesce()
        w, t = await csr_then(env, env.addr(c, "PML_INDEX"), env.model.ctx[c].index[PML],
                              lambda: env.event(ctx, page))
        await ag.quiesce()
        applies_with(w, t, f"event ({ctx}, {page:#x}) and the PML_INDEX write")
        return t["_kind"]

    env.event(c, A)
    k1 = await with_index_write(c, A)          # in the filter: deduped, then forgotten
    k2 = await with_index_write(c, B)          # new: queued, its entry survives
    t3, t4 = env.event(c, A), env.event(c, B)
    await ag.quiesce()
    kinds = [k1, k2, t3["_kind"], t4["_kind"]]
    want = ["deduped", "queued", "queued", "deduped"] if D else ["queued"] * 4
    expect(kinds == want, f"kinds {kinds}, doc: {want}")
    if D and o != c:
        # a full filter of c's pages, then o's event with c's PML_INDEX write: the way is
        # chosen before the forget (the PLRU victim), the entry survives
        for i in range(D):
            env.event(c, 0x400 + i)
        k5 = await with_index_write(o, C)
        t6 = env.event(o, C)
        t7 = [env.event(c, 0x400 + i) for i in range(D)]
        await ag.quiesce()
        kinds = [k5, t6["_kind"]] + [t["_kind"] for t in t7]
        want = ["queued", "deduped"] + ["queued"] * D
        expect(kinds == want, f"kinds {kinds}, doc: {want}")
    await ag.final_check()
    ag.stop()
    await env.finish()


@cocotb.test()
async def test_same_cycle_write_error_and_ack(dut):
    """A write's error response in the cycle software ACKs writeError: writeError stays set
    (an error is never lost; pml_tbx_odd seed 18592578 found the model clearing it).  The ACK
    is swept over the cycles around the response; after both, writeError is set exactly when
    the response came in the ACK's cycle or later."""
    env = await setup(dut, "sc_werr", latency=(4, 4), reorder=False)
    p = env.p
    E = p.entries
    c = p.contexts - 1
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=E - 1, ctrl=CTRL_PML)
    base = env.model.buffer_base(c, PML)
    env.mem.error_addrs = {base + 8 * i for i in range(E)}
    resp = []
    env.mem.on_response.append(lambda a, cyc: resp.append(cyc))
    offsets = set()
    for n in range(8):
        await env.write(c, "PML_INDEX", E - 1)
        await env.settle()
        resp.clear()
        pres = env.writes_presented
        env.event(c, 0x700 + n)
        await env.loop.wait_until(lambda: env.writes_presented > pres, 100, "the write")
        await env.loop.cycles(n)
        ack = env.csr_send(env.addr(c, "ACK"), 1, ST_WRITE_ERROR)
        await env.settle()
        r, a = resp[0], ack["_cycle"] + 1          # the ACK applies a cycle after its request
        offsets.add(r - a)
        st = await env.read(c, "STATUS")
        want = ST_WRITE_ERROR if r >= a else 0
        expect(st & ST_WRITE_ERROR == want, f"response in cycle {r}, ACK in cycle {a}: "
                                            f"STATUS {st:#x}, doc: writeError {want >> 2}")
    expect(0 in offsets, f"the ACK never met the response in one cycle (offsets {offsets})")
    env.mem.error_addrs = set()
    await env.finish()


@cocotb.test()
async def test_same_cycle_event_and_ctrl_write(dut):
    """An event accepted in the cycle of a CTRL or TRACK_ASID write of its context is
    classified with the registers before the write: PML disabled in that cycle -> queued, its
    part dropped at the head (perf_ignored); PML enabled in that cycle -> ignored; TRACK_ASID
    changed to the event's asid in that cycle -> no guest part (ignored)."""
    env = await setup(dut, "sc_ctrl")
    p = env.p
    E = p.entries
    c = p.contexts - 1
    ta, tb_ = 0, (1 << p.asidBits) - 1
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=E - 1, gpml_addr=0x50000,
                        gpml_index=E - 1, track_asid=ta, ctrl=CTRL_PML)

    async def pair(page, asid, reg, value):
        w, t = await csr_then(env, env.addr(c, reg), value, lambda: env.event(c, page, page, asid))
        await env.settle()
        applies_with(w, t, f"event and {reg} write")
        return t["_kind"]

    kinds = [await pair(0x11, ta, "CTRL", 0),               # was PML: queued, dropped
             await pair(0x12, ta, "CTRL", CTRL_EPML),       # was off: ignored
             await pair(0x13, tb_, "TRACK_ASID", tb_)]      # EPML of ta: no part, ignored
    expect(kinds == ["queued", "ignored", "ignored"], f"kinds {kinds}")
    got = env.read_counters()
    expect((got["ignored"], got["logged"], got["guestLogged"]) == (3, 0, 0),
           f"ignored / logged / guestLogged {got['ignored']} / {got['logged']} / "
           f"{got['guestLogged']}, doc: 3 / 0 / 0")
    expect(env.writes_presented == 0, "a write for an event the doc drops")
    await env.finish()


@cocotb.test()
async def test_same_cycle_exit_taken_and_ack(dut):
    """An exit taken in the cycle software ACKs STATUS.full while the part still waits: the
    ACK's re-raise comes in the next cycle (none in a CSR-write cycle) and is a new exit; an
    exit taken in the cycle of the re-raise or later absorbs it (one pending flag per
    context).  exit_ready is pulsed once, swept around the ACK: 2 exits when the take is no
    later than the ACK's cycle, else 1."""
    env = await setup(dut, "sc_exit", exit_ready=OneShot())
    p = env.p
    E = p.entries
    c = p.contexts - 1
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=0xFFFF, ctrl=CTRL_PML)
    offsets = set()
    for n in range(6):
        env.exit_ready.pattern = OneShot()
        taken = []
        hook = (lambda v, cyc: taken.append(cyc))
        env.on_exit.append(hook)
        seen = env.exits_seen
        env.event(c, 0x800 + n)                    # waits: index out of range, exit raised
        await env.loop.wait_until(lambda: int(dut.exit_valid.value), 100, "the exit")
        env.exit_ready.pattern = OneShot(at=n)
        await env.loop.cycles(2)
        ack = env.csr_send(env.addr(c, "ACK"), 1, ST_FULL)
        await env.loop.cycles(n + 8)
        env.exit_ready.pattern = Never()
        await env.loop.cycles(20)
        x, a = taken[0], ack["_cycle"] + 1          # the ACK applies a cycle after its request
        offsets.add(x - a)
        want = 2 if x <= a else 1
        expect(env.exits_seen - seen == want, f"exit taken in cycle {x}, ACK in cycle {a}: "
                                              f"{env.exits_seen - seen} exits, doc: {want}")
        env.on_exit.remove(hook)
        await env.write(c, "PML_INDEX", E - 1)    # drain: the held event is written
        await env.write(c, "ACK", ST_FULL)
        await env.settle()
        await env.write(c, "PML_INDEX", 0xFFFF)
    expect({-1, 0, 1} <= offsets, f"the take never met the ACK's cycle, the one before or "
                                  f"the next (offsets {offsets})")
    await env.finish()


@cocotb.test()
async def test_same_cycle_event_and_head_leaving(dut):
    """dirty_ready follows the queue occupancy at the start of the cycle: a full context
    queue whose head leaves in a cycle takes the waiting event from the next cycle (the head
    leaves when its write is loaded; the write is on mem_req from the next cycle)."""
    env = await setup(dut, "sc_head")
    p = env.p
    E = p.entries
    c = p.contexts - 1
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=0xFFFF, ctrl=CTRL_PML)
    env.keep_write_cycles = True
    for i in range(p.queueDepth):
        env.event(c, 0x900 + i)
    last = env.event(c, 0x9FF)                     # stalls: the queue is full
    await env.loop.cycles(10)
    expect("_cycle" not in last, "an event accepted into a full context queue")
    await env.write(c, "PML_INDEX", E - 1)
    await env.loop.wait_until(lambda: "_cycle" in last, 100, "the waiting event")
    first = env.write_cycles[0]
    expect(last["_cycle"] >= first, f"event accepted in cycle {last['_cycle']}, before the "
                                    f"cycle after its head left ({first})")
    await env.write(c, "ACK", ST_FULL)
    await env.settle()
    await env.finish()


@cocotb.test()
async def test_dedup_credit(dut):
    """With the filter, an accepted event holds a place of its context's queue in its decide
    cycle (the next one) whatever the filter decides (**decided**, doc "Pipeline timing",
    `dirty_ready` with the filter, eighth round): with queueDepth - 1 events of a context
    queued and held (its buffer full), a deduped event of that context followed at once by a
    new one: the new one waits exactly one cycle, then fills the queue."""
    env = await setup(dut, "dedup_credit")
    p = env.p
    if not p.dedupEntries or p.queueDepth < 2 or p.dedupEntries < p.queueDepth - 1:
        env.log.info("SKIP: needs the filter, queueDepth >= 2 and dedupEntries >= queueDepth - 1")
        return
    E = p.entries
    c = p.contexts - 1
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=0xFFFF, ctrl=CTRL_PML)
    held = [env.event(c, 0x900 + i) for i in range(p.queueDepth - 1)]
    await env.loop.wait_until(lambda: all("_cycle" in t for t in held), 100, "the held events")
    await env.loop.cycles(4)
    dup = env.event(c, 0x900)                      # in the filter: deduped
    nxt = env.event(c, 0xA00)                      # presented right after it
    await env.loop.wait_until(lambda: "_cycle" in nxt, 100, "the event after the deduped one")
    expect(dup["_kind"] == "deduped" and nxt["_kind"] == "queued",
           f"kinds {dup['_kind']}, {nxt['_kind']}")
    expect(nxt["_cycle"] == dup["_cycle"] + 2,
           f"event after a deduped one accepted in cycle {nxt['_cycle']}, the deduped one in "
           f"{dup['_cycle']}: doc: it waits exactly the deduped event's decide cycle")
    expect(env.stalls == 1, f"{env.stalls} stall cycles, doc: 1")
    await env.write(c, "PML_INDEX", E - 1)
    await env.write(c, "ACK", ST_FULL)
    await env.settle()
    await env.finish()


@cocotb.test()
async def test_csr_write_blocks_two_loads(dut):
    """No write is loaded in the cycle a CSR write applies, nor in the next one (**decided**,
    doc "Pipeline timing", thirteenth round; the scoreboard checks the two write-free cycles
    after every CSR write): (1) a context waiting on a full buffer, released by a PML_INDEX
    write that applies in cycle a: its first write is presented in cycle a + 3 exactly
    (loaded in a + 2; was a + 2, loaded in a + 1); (2) a stream of writes of one context and an
    IRQ_VECTOR write applying in its middle: no write in a + 1 and a + 2, the stream resumes in
    a + 3."""
    env = await setup(dut, "csr_block", latency=(1, 1))
    p = env.p
    E = p.entries
    c = p.contexts - 1
    env.keep_write_cycles = True
    # (1)
    await env.setup_ctx(c, pml_addr=0x40000, pml_index=0xFFFF, ctrl=CTRL_PML)
    env.event(c, 0x900)
    await env.loop.cycles(10)
    expect(env.writes_presented == 0, "a write with the buffer full")
    env.write_cycles.clear()
    w = env.csr_send(env.addr(c, "PML_INDEX"), 1, E - 1)
    await env.loop.wait_until(lambda: env.write_cycles, 100, "the released write")
    a = w["_cycle"] + 1                            # the write applies a cycle after its request
    expect(env.write_cycles[0] == a + 3, f"PML_INDEX write applied in cycle {a}, first write "
                                         f"presented in {env.write_cycles[0]}, doc: {a + 3}")
    await env.write(c, "ACK", ST_FULL)
    await env.settle()
    # (2)
    await env.write(c, "PML_INDEX", E - 1)
    env.write_cycles.clear()
    n = min(E, 8)
    for i in range(n):
        env.event(c, 0xA00 + i)
    await env.loop.wait_until(lambda: env.write_cycles, 100, "the stream")
    w = env.csr_send(env.addr(c, "IRQ_VECTOR"), 1, 1)
    await env.settle()
    a = w["_cycle"] + 1
    wc = list(env.write_cycles)
    expect(len(wc) == n, f"{len(wc)} writes for {n} events")
    expect(not ({a + 1, a + 2} & set(wc)), f"IRQ_VECTOR write applied in cycle {a}, writes "
                                           f"presented in {wc}: doc: none in {a + 1}, {a + 2}")
    after = [x for x in wc if x > a]
    if after:
        expect(after[0] >= a + 3, f"write in {after[0]}, CSR write applied in {a}")
        if p.queueDepth >= 2 and (1 << p.idBits) >= 4 and (a in wc or a - 1 in wc):
            expect(after[0] == a + 3, f"stream {wc}, CSR write applied in {a}: doc: it "
                                      f"resumes in {a + 3}")
    env.keep_write_cycles = False
    await env.finish()
