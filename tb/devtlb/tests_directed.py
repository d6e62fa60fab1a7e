"""Directed cocotb tests of DevTlb, one (or more) per rule of docs/devtlb.md.

Every test runs under the scoreboard of dt_env.py (every response, ATS request, invalDone and
ready against the model; channel holds; counters at the end); the tests add expectations
stated by hand from the docs (sources, counters, which slot/tag, exact cycles).  Tests run
unchanged on every configuration; what depends on it is read from the manifest.
"""

from __future__ import annotations

import cocotb

from xlat_tb.ats import PS_1G, PS_2M, PS_4K
from xlat_tb.backpressure import Always, Never
from xlat_tb.cycle import TbError
from xlat_tb.seed import current_seed, rng as seeded_rng

from .dt_env import DtEnv


def expect(cond: bool, msg: str):
    if not cond:
        raise TbError(msg)


async def setup(dut, name: str, **kw) -> DtEnv:
    kw.setdefault("latency", (4, 8))
    env = DtEnv(dut, rng=seeded_rng(name), name=name, **kw)
    await env.start()
    env.log.info("%s: seed %d", name, current_seed())
    return env


def pmask(env):
    return (1 << env.p.pageBits) - 1


def sid_of(env, k):
    """The k-th test SID (distinct rows in partitioned mode as long as k < sets)."""
    return k % (1 << env.p.sidBits)


async def one(env, sid, page, write=0, timeout=2000):
    """Send one request, wait until it is answered; return the response."""
    n = env.stats["resp"]
    env.send_req(sid, page, write)
    await env.loop.wait_until(lambda: env.stats["resp"] > n, timeout, f"response to {sid}/{page:#x}")
    return env.responses[-1][1]


@cocotb.test()
async def test_hit_after_miss(dut):
    """A miss allocates a slot and sends one ats_req (step 4); its completion answers it with
    source 2 and fills the DevTLB; the next request to the page hits (source 0, step 1)."""
    env = await setup(dut, "hit_after_miss")
    s = sid_of(env, 1)
    env.table.map(s, 0x12, 0x345, PS_4K)
    r1 = await one(env, s, 0x12)
    expect(r1["source"] == 2 and r1["ppn"] == 0x345 and not r1["fault"], f"miss answered {r1}")
    r2 = await one(env, s, 0x12, 1)
    expect(r2["source"] == 0 and r2["ppn"] == 0x345 and not r2["fault"], f"hit answered {r2}")
    await env.finish()
    c = env.model.counters
    expect(c["hits"] == 1 and c["misses"] == 1 and c["atsRequests"] == 1, f"counters {c}")


class Gate:
    """A back-pressure pattern the test opens and closes (closed = idle / not ready)."""

    def __init__(self, closed=False):
        self.closed = closed

    def idle(self) -> bool:
        return self.closed


async def wait_resps(env, n, timeout=3000):
    await env.loop.wait_until(lambda: env.stats["resp"] >= n, timeout, f"{n} responses")


async def wait_sent(env, n, timeout=3000):
    await env.loop.wait_until(lambda: len(env.ats_sent_log) >= n, timeout, f"{n} ats_req")


def two_sids_one_row(env):
    """Two SIDs that share a row (partitioned: sid mod sets)."""
    a = 1 % (1 << env.p.sidBits)
    b = (a + env.p.sets) % (1 << env.p.sidBits)
    return a, b


@cocotb.test()
async def test_merge_and_allocate(dut):
    """Back-to-back misses of one page make one slot and merges (step 3, the bypass of the
    allocations ahead in the pipeline); another page of the same 2 MiB page gets its own slot
    (merge by page number only); every waiter is answered with source 2."""
    env = await setup(dut, "merge_and_allocate", latency=(30, 30))
    s = sid_of(env, 2)
    env.table.map(s, 0x200, 0x2000, PS_2M)
    # ptbEntries 1: the one slot is taken while a request is in flight (docs "Acceptance"),
    # so nothing can merge; else the requests run back to back and merge
    k = min(4, env.p.waitEntries, env.p.ptbEntries)
    for _ in range(k):
        env.send_req(s, 0x201)
    await wait_resps(env, k)
    c = env.model.counters
    expect(c["atsRequests"] == 1 and c["merged"] == k - 1, f"one slot, {k - 1} merges: {c}")
    expect(all(r["source"] == 2 and r["ppn"] == 0x2001 for _, r in env.responses), "ppn/source")
    r = await one(env, s, 0x202)        # the DevTLB holds the 2 MiB piece: a hit
    expect(r["source"] == 0 and r["ppn"] == 0x2002, f"{r}")
    if env.p.ptbEntries > 1:
        env.table.map(s, 0x10, 0x3000, PS_4K)
        env.table.map(s, 0x11, 0x3001, PS_4K)
        env.send_req(s, 0x10)
        env.send_req(s, 0x11)          # same 2 MiB region, other page: own slot
        await wait_resps(env, k + 3)
        expect(env.model.counters["atsRequests"] == 3, f"two more slots: {env.model.counters}")
    await env.finish()


@cocotb.test()
async def test_partition_claim(dut):
    """partitioned: a fill for SID b into the row SID a holds claims the row (every way
    invalidated, PTag := b, perf_claims); a's page misses again.  Base: both SIDs keep their
    entries (no claim), entries keep their SID."""
    env = await setup(dut, "partition_claim")
    a, b = two_sids_one_row(env)
    env.table.map(a, 0x10, 0x111, PS_4K)
    env.table.map(b, 0x10, 0x222, PS_4K)
    r = await one(env, a, 0x10)
    expect(r["ppn"] == 0x111, f"{r}")
    r = await one(env, a, 0x10)
    expect(r["source"] == 0, f"a hits its own entry: {r}")
    r = await one(env, b, 0x10)
    expect(r["source"] == 2 and r["ppn"] == 0x222, f"b misses: {r}")
    r = await one(env, b, 0x10)
    expect(r["source"] == 0 and r["ppn"] == 0x222, f"b hits: {r}")
    r = await one(env, a, 0x10)
    if env.p.partitioned and a != b:
        expect(r["source"] == 2, f"a's row was claimed by b: {r}")
        expect(env.model.counters["claims"] >= 1, "claim counted")
    else:
        expect(r["source"] == 0 and r["ppn"] == 0x111, f"Base keeps both tenants: {r}")
    await env.finish()


@cocotb.test()
async def test_set_index_2m_region(dut):
    """Base: set = (iova >> 9) mod sets; ways + 1 pages of regions that meet in one set evict
    one of them (replacement), a page of the next region (another set) is untouched.
    Partitioned: the row is the SID's, so the same pages of one SID all meet in its row."""
    env = await setup(dut, "set_index_2m_region")
    s = sid_of(env, 3)
    p = env.p
    pages = [(i * p.sets) << 9 for i in range(p.ways + 1)]
    pages = [x & pmask(env) for x in pages]
    pages = list(dict.fromkeys(pages))
    other = (1 << 9) & pmask(env)
    for i, pg in enumerate(pages + [other]):
        env.table.map(s, pg, 0x100 + i, PS_4K)
    for pg in [other] + pages:
        await one(env, s, pg)
    r = await one(env, s, other)
    if p.partitioned:
        expect(r["source"] == (0 if len(pages) < p.ways else r["source"]), f"{r}")
    else:
        expect(r["source"] == 0, f"another set's entry survives: {r}")
    n0 = env.model.counters["misses"]
    for pg in pages:
        await one(env, s, pg)
    if len(pages) > p.ways or p.partitioned and len(pages) + 1 > p.ways:
        expect(env.model.counters["misses"] > n0, "one page of the full set was evicted")
    await env.finish()


@cocotb.test()
async def test_1g_as_2m_piece(dut):
    """A 1 GiB completion is cached as the 2 MiB piece holding the requested page (ppn + the
    piece's offset): a page of the same 2 MiB region hits, one of another region misses."""
    env = await setup(dut, "1g_as_2m_piece")
    s = sid_of(env, 1)
    p = env.p
    ppn = (1 << 18) if p.ppnBits > 18 else 0
    env.table.map(s, 0, ppn, PS_1G)
    pg = 0x203 & pmask(env)
    r = await one(env, s, pg)
    expect(r["ppn"] == ppn + pg and r["source"] == 2, f"{r}")
    r = await one(env, s, (pg & ~0x1FF) + 0x1FF)
    expect(r["source"] == 0 and r["ppn"] == ppn + (pg & ~0x1FF) + 0x1FF, f"same piece hits: {r}")
    if p.pageBits > 10:
        r = await one(env, s, 0x405)
        expect(r["source"] == 2 and r["ppn"] == ppn + 0x405, f"other piece misses: {r}")
    await env.finish()


@cocotb.test()
async def test_fault_not_cached_and_write_perm(dut):
    """A fault completion answers its waiters with fault and is cached nowhere (the next request
    sends again); a write to a read-only page faults (with ppn and perms), a read of it is
    fine; a no-access translation is cached and every request to it faults."""
    env = await setup(dut, "fault_and_perm")
    s = sid_of(env, 1)
    env.table.set_fault(s, 0x20)
    env.table.map(s, 0x21, 0x77, PS_4K, perm_r=1, perm_w=0)
    env.table.map(s, 0x22, 0x78, PS_4K, perm_r=0, perm_w=0)
    for _ in range(2):
        r = await one(env, s, 0x20)
        expect(r["fault"] == 1 and r["source"] == 2, f"{r}")
    expect(env.model.counters["atsRequests"] == 2, "a fault is not cached")
    r = await one(env, s, 0x21, write=1)
    expect(r["fault"] == 1 and r["ppn"] == 0x77 and r["perm_r"] == 1 and r["perm_w"] == 0, f"{r}")
    r = await one(env, s, 0x21, write=0)
    expect(r["fault"] == 0 and r["source"] == 0, f"{r}")
    r = await one(env, s, 0x21, write=1)
    expect(r["fault"] == 1 and r["source"] == 0, f"{r}")
    for w in (0, 1, 0):
        r = await one(env, s, 0x22, write=w)
        expect(r["fault"] == 1 and r["ppn"] == 0x78, f"no access: {r}")
    await env.finish()
    expect(env.model.counters["faults"] == 7, f"faults {env.model.counters}")


@cocotb.test()
async def test_stale_completion(dut):
    """An invalidation that covers a slot in flight makes it stale: its completion is delivered
    but cached nowhere (perf_staleCompletions); invalDone waits until the slot is freed; the
    next request misses."""
    env = await setup(dut, "stale_completion", latency=(60, 60))
    s = sid_of(env, 1)
    env.table.map(s, 0x30, 0x99, PS_4K)
    env.send_req(s, 0x30)
    await wait_sent(env, 1)
    env.send_inval(2, s, 0x30, 12)
    await env.loop.wait_until(lambda: env.inval_outcomes, 200, "inval acted")
    expect(not env.done_cycles, "invalDone before the stale slot is freed")
    await wait_resps(env, 1)
    await env.loop.wait_until(lambda: env.done_cycles, 200, "invalDone")
    expect(env.done_cycles[0][0] > env.resp_cycles[0], "done after the waiter's response")
    r = await one(env, s, 0x30)
    expect(r["source"] == 2, f"stale completion not cached: {r}")
    await env.finish()
    expect(env.model.counters["staleCompletions"] == 1, f"{env.model.counters}")


@cocotb.test()
async def test_bad_completions(dut):
    """Completions whose tag is not outstanding are consumed and counted (perf_badCompletions):
    a free slot, an out-of-range tag (when there is one), a slot whose ats_req has not been
    sent, a duplicate of a completion already accepted."""
    gate = Gate(closed=False)
    env = await setup(dut, "bad_completions", ats_req_ready=gate, latency=(20, 20))
    s = sid_of(env, 1)
    p = env.p
    env.table.map(s, 0x40, 0x55, PS_4K)
    env.core.inject_bogus(tag=0, ppn=0x1234)                   # slot 0 free
    bad = 1
    if p.slots < (1 << p.atsTagBits):
        env.core.inject_bogus(tag=p.slots, ppn=0x1)           # out of range
        bad += 1
    await env.loop.wait_until(lambda: env.core.idle, 5000, "bogus taken")
    gate.closed = True
    env.send_req(s, 0x40)
    await env.loop.wait_until(lambda: env.model.slots[0] is not None, 5000, "slot allocated")
    await env.loop.cycles(5)
    env.core.inject_bogus(tag=0, ppn=0x4321)                   # unsent
    bad += 1
    await env.loop.wait_until(lambda: env.core.idle, 5000, "bogus taken")
    await env.loop.cycles(3)
    gate.closed = False
    await wait_resps(env, 1)
    r = env.responses[-1][1]
    expect(r["ppn"] == 0x55, f"the real completion answers: {r}")
    env.core.inject_bogus(tag=0, ppn=0x999)                    # duplicate (slot freed)
    bad += 1
    await env.finish()
    expect(env.model.counters["badCompletions"] == bad, f"{bad}: {env.model.counters}")


@cocotb.test()
async def test_pagesize3_and_unaligned(dut):
    """pageSize 3 without fault: a fault for the waiters, not cached, perf_badCompletions; a
    2 MiB answer with low ppn bits: aligned, cached, perf_badAlign; a fault with pageSize 3 or
    low bits is a plain fault (Q5)."""
    env = await setup(dut, "pagesize3", latency=(6, 6))
    s = sid_of(env, 1)
    env.table.map(s, 0x200, 0x400, PS_2M)
    env.table.map(s, 0x50, 0x60, PS_4K)
    todo = {}
    env.ats.on_request.append(lambda rec, c: env.core.override(rec.tag, **todo.pop("o")) if "o" in todo else None)
    todo["o"] = dict(pageSize=3)
    r = await one(env, s, 0x50)
    expect(r["fault"] == 1, f"pageSize 3 faults: {r}")
    todo["o"] = dict(ppn=0x400 | 0x7)
    r = await one(env, s, 0x201)
    expect(r["fault"] == 0 and r["ppn"] == 0x401, f"aligned: {r}")
    r = await one(env, s, 0x202)
    expect(r["source"] == 0 and r["ppn"] == 0x402, f"cached aligned: {r}")
    todo["o"] = dict(pageSize=3, fault=1, ppn=0x3)
    r = await one(env, s, 0x50)
    expect(r["fault"] == 1, f"{r}")
    await env.finish()
    c = env.model.counters
    expect(c["badCompletions"] == 1 and c["badAlign"] == 1, f"{c}")


@cocotb.test()
async def test_inval_kinds(dut):
    """Invalidation kinds: 2 removes only the range (a slot by its 2 MiB region), 1 the SID,
    0 everything, 3 (reserved) as 0 with perf_badInvals, sizeLog2 < 12 and an unaligned iova
    over-invalidate and count once each."""
    env = await setup(dut, "inval_kinds")
    a, b = 1, 2 % (1 << env.p.sidBits)
    for sd in (a, b):
        env.table.map(sd, 0x0, 0x800, PS_2M)
        env.table.map(sd, 0x200, 0x1000, PS_4K)

    async def fill():
        for sd in (a, b):
            for pg in (0x3, 0x200):
                await one(env, sd, pg & pmask(env))

    async def hits(sd, pg):
        r = await one(env, sd, pg & pmask(env))
        return r["source"] == 0

    await fill()
    for kind, sid, iova, size in ((2, a, 0x200, 12), (2, a, 0x5, 21), (1, b, 0, 12), (0, 0, 0, 0),
                                  (3, a, 0, 12), (2, a, 0x201, 13), (2, b, 0x0, 5)):
        env.send_inval(kind, sid, iova & pmask(env), size)
        await env.loop.wait_until(lambda: not env.model.invals and not env.pipe and env.inval.idle,
                                  500, "inval done")
        await fill()                    # the scoreboard checks which of them hit
    await env.finish()
    expect(env.model.counters["badInvals"] == 4, f"{env.model.counters}")


@cocotb.test()
async def test_inval_sweep(dut):
    """Invalidation passes (docs "Invalidation", decided): entries of two SIDs in every set;
    not partitioned, kind 1 and a range beyond one 2 MiB region visit every set, one operation
    a cycle (inval_ready, ats_resp_ready and req_ready low for sets - 1 more cycles), and a
    range inside one 2 MiB region one set; partitioned, kinds 1 and 2 visit the SID's row; kind
    0 clears every valid bit at once. The scoreboard checks which refills hit afterwards."""
    env = await setup(dut, "inval_sweep")
    p = env.p
    a, b = 1, 2 % (1 << p.sidBits)
    regions = [(k << 9) & pmask(env) for k in range(min(p.sets, 1 << max(0, p.pageBits - 9)))]
    for sd in (a, b):
        for r in regions:
            env.table.map(sd, r, (0x1000 + r) & ((1 << p.ppnBits) - 1), PS_2M)

    async def fill():
        for sd in (a, b):
            for r in regions:
                await one(env, sd, (r + 1) & pmask(env))

    for kind, sid, iova, size in ((1, a, 0, 12), (2, b, 0, min(63, p.pageBits + 12)),
                                  (2, a, regions[-1], 21), (0, 0, 0, 12)):
        await fill()
        n0 = len(env.done_cycles)
        acc = env.loop.cycle
        env.send_inval(kind, sid, iova, size)
        await env.loop.wait_until(lambda: len(env.done_cycles) > n0, 500, "invalDone")
        sweeps = not p.partitioned and p.sets > 1 and (kind == 1 or (kind == 2 and size > 21))
        took = env.done_cycles[-1][0] - acc
        env.log.info(f"inval kind {kind} size {size}: invalDone {took} cycles after it was sent")
        if sweeps:
            expect(took >= p.sets + p.latency - 1, f"a sweep over {p.sets} sets done after {took} cycles")
    await fill()
    await env.finish()


@cocotb.test()
async def test_invaldone_waits_for_hits(dut):
    """invalDone condition 3: every hit response produced before the invalidation has left on
    resp (resp_ready held low: the pulse comes only after they leave); condition 2 with a stale
    slot; pulses in acceptance order, one per accepted invalidation."""
    gate = Gate(closed=False)
    env = await setup(dut, "invaldone_hits", resp_ready=gate)
    s = sid_of(env, 1)
    env.table.map(s, 0x0, 0x800, PS_2M)
    await one(env, s, 0x1)
    gate.closed = True
    k = min(2, env.p.respQueue)
    for i in range(k):
        env.send_req(s, 0x2 + i)
    await env.loop.wait_until(lambda: len(env.model.hitq) == k, 200, "hits queued")
    env.send_inval(1, s)
    env.send_inval(0)
    await env.loop.cycles(30)
    expect(not env.done_cycles, "invalDone while earlier hits wait on resp")
    gate.closed = False
    await env.loop.wait_until(lambda: len(env.done_cycles) == 2, 200, "two pulses")
    expect(env.done_cycles[0][0] > env.resp_cycles[-1], "pulse after the hits left")
    await env.finish()


@cocotb.test()
async def test_ptb_full_backpressure(dut):
    """A full PTB holds req_ready low (also for hits: no replay), counted in
    perf_ptbFullCycles; nothing is lost when the ATS side opens again."""
    gate = Gate(closed=True)
    env = await setup(dut, "ptb_full", ats_req_ready=gate)
    s = sid_of(env, 1)
    n = env.p.ptbEntries
    for i in range(n + 2):
        env.table.map(s, 0x100 + 2 * i, 0x500 + i, PS_4K)
        env.send_req(s, (0x100 + 2 * i) & pmask(env))
    await env.loop.wait_until(lambda: env.stats["req"] >= n, 5000, f"{n} requests accepted")
    await env.loop.cycles(40)
    expect(env.stats["req"] <= n, f"{env.stats['req']} accepted with {n} demand slots")
    expect(int(dut.req_valid.value) == 1 and int(dut.req_ready.value) == 0, "req held")
    gate.closed = False
    await env.finish()
    expect(int(dut.perf_ptbFullCycles.value) > 0, "ptbFullCycles counted")


@cocotb.test()
async def test_hit_drain_round_robin(dut):
    """A hit response and a drain response both ready: round robin, the hit queue first after
    reset; then they alternate."""
    gate = Gate(closed=True)
    env = await setup(dut, "hit_drain_rr", resp_ready=gate, latency=(3, 3))
    s = sid_of(env, 1)
    env.table.map(s, 0x0, 0x800, PS_2M)
    env.table.map(s, 0x300, 0x900, PS_4K)
    env.table.map(s, 0x301, 0x901, PS_4K)
    gate.closed = False
    await one(env, s, 0x1)
    gate.closed = True
    # hits first: with ptbEntries 1 a waiting miss holds req_ready low (head-of-line); a full
    # hit queue holds every request, so leave one place
    k = min(2, env.p.respQueue - 1)
    for i in range(k):
        env.send_req(s, 0x2 + i)
    await env.loop.wait_until(lambda: len(env.model.hitq) == k, 5000, "hits queued")
    m = 1 if env.p.ptbEntries == 1 else 2
    for i in range(m):
        env.send_req(s, 0x300 + i)
    await env.loop.wait_until(lambda: len(env.model.answerable()) == m, 400, "drains ready")
    # answerable from the completion's respond cycle, on resp from drain_delay later (Q24)
    await env.loop.cycles(max(3, env.p.drain_delay))
    gate.closed = False
    await wait_resps(env, 1 + k + m)
    srcs = [r["source"] for _, r in env.responses[1:]]
    want = []
    h, d = k, m
    turn = 0                            # after the first (drain) response the hit queue is next
    while h or d:
        if turn == 0 and h or not d:
            want.append(0)
            h -= 1
        else:
            want.append(2)
            d -= 1
        turn ^= 1
    expect(srcs == want, f"sources {srcs}, want {want}")
    await env.finish()


@cocotb.test()
async def test_drain_cycle(dut):
    """The drain's depth (docs "When each change becomes visible", decided): with `resp` always
    ready and no hits, a completion acting in its respond cycle t has its first waiter on `resp`
    in t + 2 with one slot, t + 3 with several (the pick register), and its next waiters in the
    cycles after, one a cycle (the pick register reloads while the response register is
    answered). With one demand slot `req_ready` waits for the slot, so there one waiter."""
    env = await setup(dut, "drain_cycle", latency=(6, 6))
    s = sid_of(env, 1)
    d = env.p.drain_delay
    for k, n in enumerate((1, 3) if env.p.ptbEntries >= 3 else (1,)):
        pg = (0x20 + k) & pmask(env)
        env.table.map(s, pg, 0x700 + k, PS_4K)
        nr, nc = env.stats["resp"], len(env.completions)
        for _ in range(n):
            env.send_req(s, pg)
        await wait_resps(env, nr + n)
        t = env.completions[nc][0]
        got = [c - t for c, _ in env.responses[nr:nr + n]]
        expect(got == [d + i for i in range(n)], f"{n} waiter(s): on resp {got} cycles after the "
                                                   f"completion acted, want {[d + i for i in range(n)]}")
    await env.finish()


@cocotb.test()
async def test_drain_vs_match_same_cycle(dut):
    """Same-cycle pair: the drain answers a slot's last waiter while a request for the slot's
    page is matched: the request does not join the draining slot (it hits the filled entry).
    Swept over the request's offset so that one offset lands at that exact cycle; the
    scoreboard decides each (merge / hit / new slot) from the model."""
    env = await setup(dut, "drain_vs_match", latency=(5, 5))
    s = sid_of(env, 1)
    for off in range(0, 12):
        pg = (0x10 + off) & pmask(env)
        env.table.map(s, pg, 0x300 + off, PS_4K)
        n = env.stats["resp"]
        env.send_req(s, pg)
        await wait_sent(env, len(env.ats_sent_log) + 1)
        await env.loop.cycles(off)
        env.send_req(s, pg)
        await wait_resps(env, n + 2)
    kinds = [env.outcomes and o.kind for o in env.outcomes.values()]
    await env.finish()
    env.log.info(f"outcomes {kinds}")


@cocotb.test()
async def test_slot_free_vs_alloc(dut):
    """Same-cycle pair (docs "Slots", decided 2026-11-29): a demand slot freed by its last
    waiter's `resp` handshake in cycle c and a miss whose respond cycle is c + d: for d <
    `allocDelay` (2 with the registered choice, 3 with the drain's skid, whose release is a
    cycle after the handshake) the miss takes another free slot, with `allocDelay` 1 the freed
    one (the lowest free); from c + `allocDelay` on the freed slot is the lowest again. A's
    response is held on `resp` (ready low) while B is sent, then `resp_ready` rises at offsets
    from B's send, so that the handshake lands at c = B's respond cycle - 4 .. + 1; the
    scoreboard checks every ATS tag against the model (Q25), the test the tag at c + 1 ..
    c + max(allocDelay, 2)."""
    gate = Gate(closed=False)
    env = await setup(dut, "slot_free_vs_alloc", resp_ready=gate, latency=(4, 4))
    s = sid_of(env, 1)
    L = env.p.latency
    landed = {}
    # the Prefetch Unit clears its tables after reset (req_ready low meanwhile)
    await env.loop.wait_until(lambda: int(env.h["req_ready"].value) == 1, 5000, "req_ready after reset")
    if env.p.ptbEntries == 1:
        env.log.info("one demand slot: req_ready waits for it, the pair cannot occur")
    for off in (range(0, 8) if env.p.ptbEntries > 1 else ()):
        pa, pb = (0x300 + 2 * (off + 1)) & pmask(env), (0x301 + 2 * (off + 1)) & pmask(env)
        env.table.map(s, pa, 0x800 + off + 1, PS_4K)
        env.table.map(s, pb, 0x900 + off + 1, PS_4K)
        n, na = env.stats["resp"], len(env.accept_cycles["req"])
        gate.closed = True
        ta = env.send_req(s, pa)["tag"]
        await env.loop.cycles(2)      # the previous iteration's handshakes have settled
        await env.loop.wait_until(lambda: int(env.h["resp_valid"].value) == 1, 500, "A on resp")
        tb = env.send_req(s, pb)["tag"]
        s0 = env.loop.cycle
        await env.loop.wait_until(lambda: env.loop.cycle >= s0 + off, 100, "offset")
        gate.closed = False
        await env.loop.wait_until(lambda: len(env.accept_cycles["req"]) > na + 1, 200, "B accepted")
        a = env.accept_cycles["req"][na + 1]
        await wait_resps(env, n + 2)
        oa, ob = env.outcomes[ta], env.outcomes[tb]
        # A's handshake (its slot's last waiter) frees the slot
        c_free = next(c for c, r in env.responses[n:] if r["ppn"] == 0x800 + off + 1)
        env.log.info(f"off {off}: B accepted {a}, A freed {c_free}, A {oa.kind} slot {oa.slot}, "
                     f"B {ob.kind} slot {ob.slot}")
        if oa.kind == "alloc" and ob.kind == "alloc":   # (not a prefetch's hit or merge)
            landed[a + L - 1 - c_free] = (oa.slot, ob.slot)
    if env.p.ptbEntries > 1:
        D = env.p.allocDelay
        need = range(1, max(D, 2) + 1)
        expect(all(d in landed for d in need), f"no iteration responded at each of c + {list(need)} "
                                               f"(B's respond cycle - c: {sorted(landed)})")
        for d in need:
            ta, tb = landed[d]
            expect((tb != ta) == (d < D), f"miss responding at c + {d} took slot {tb}, freed slot {ta} "
                                          f"(allocDelay {D}: the freed one from c + {D})")
    await env.finish()


@cocotb.test()
async def test_inval_vs_completion_same_cycle(dut):
    """Same-cycle pair: an invalidation and a completion of a covered slot presented together:
    the invalidation is accepted first, the slot is stale, the completion is delivered and not
    cached; swept over the completion's offset around the invalidation."""
    env = await setup(dut, "inval_vs_completion", latency=(12, 12))
    s = sid_of(env, 1)
    for off in range(-3, 9):
        pg = (0x40 + off + 3) & pmask(env)
        env.table.map(s, pg, 0x600 + off + 3, PS_4K)
        nsent = len(env.ats_sent_log)
        env.send_req(s, pg)
        await wait_sent(env, nsent + 1)
        sent_at = env.ats_sent_log[-1][0]
        await env.loop.wait_until(lambda: env.loop.cycle >= sent_at + 12 + off - 1, 100, "offset")
        env.send_inval(2, s, pg, 12)
        await env.drain(2000)
    await env.finish()
    expect(env.model.counters["staleCompletions"] >= 1, f"{env.model.counters}")


@cocotb.test()
async def test_prefetch_pb_hit(dut):
    """Prefetch Unit (pbEntries > 0): SID a then SID b alternate with histDistance; b's misses
    fill its history; a miss of a then triggers prefetches of b's history pages (prefetch = 1
    on ats_req, after every demand), which fill the PB; b's next request for such a page is a
    PB hit (source 1)."""
    env = await setup(dut, "prefetch_pb_hit", latency=(4, 4))
    p = env.p
    if not p.prefetch:
        env.log.info("no Prefetch Unit in this configuration")
        await env.finish()
        return
    # round robin over histDistance + 1 SIDs: pred[s] becomes the SID after s; each SID
    # alternates two pages, and the SIDs share the rows (claims), so its pages miss again
    nsid = min(p.histDistance + 1, 1 << p.sidBits)
    sids = list(range(nsid))
    for sd in sids:
        for pg in (0x20, 0x21):
            env.table.map(sd, pg, (0x100 * sd + pg) & ((1 << p.ppnBits) - 1), PS_4K)
    for rnd in range(8):
        for sd in sids:
            await one(env, sd, 0x20 + (rnd % 2), timeout=5000)
    await env.finish()
    c = env.model.counters
    env.log.info(f"prefetch counters {c}")
    expect(c["prefetches"] > 0, f"prefetches sent: {c}")
    if nsid <= p.pbEntries + 1:       # the PB holds the prefetches until they are used
        expect(c["pbHits"] > 0, f"PB hits: {c}")


@cocotb.test()
async def test_prefetch_issue_cycle(dut):
    """The prefetch issue stage (docs "Prefetch Unit", **decided** 2026-11-29, model Q27): a
    trigger R1 (SID a, pred[a] = b, hist[b] = [q]) responding in cycle t, and a request R2 for
    (b, q) that misses, responding in t + d. With `prefetchDelay` D (1, or 2 in `devtlb_full`
    since 2026-11-30) the prefetches of R1 are issued in t + D after the requests responding
    until then: for d <= D, R2 allocates a demand slot and R1's candidate (b, q) is dropped as
    held; for d = D + 1, R2 merges into the prefetch slot, which is on ats_req at t + D +
    `pfSendDelay` where the manifest gives it (4: the prefetch send skid, session 31). With
    `prefetchDelay` 0 R2 merges into it for every d."""
    env = await setup(dut, "prefetch_issue_cycle", latency=(4, 4))
    p = env.p
    if not p.prefetch or p.histDistance > 64 or (1 << p.sidBits) < 3:
        env.log.info("no Prefetch Unit (or not one this test can train) in this configuration")
        await env.finish()
        return
    a, b, f = 1, 2, 0
    q, fp = 0x51 & pmask(env), 0x70 & pmask(env)
    L = p.latency
    env.table.map(b, q, 0x777, PS_4K)
    env.table.map(f, fp, 0x700, PS_4K)
    await env.loop.wait_until(lambda: int(env.h["req_ready"].value) == 1, 5000, "req_ready after reset")
    # request 0 of SID a, histDistance - 1 of a filler SID, then b's miss of q: pred[a] := b and
    # hist[b] gets q
    env.table.map(a, 0x40, 0x640, PS_4K)
    await one(env, a, 0x40)
    for _ in range(p.histDistance - 1):
        await one(env, f, fp)
    await one(env, b, q, timeout=5000)
    for d in range(1, max(p.prefetchDelay, 1) + 2):
        # (b, q) out of the DevTLB (the history and the predictor keep it)
        env.send_inval(1, b)
        await env.drain(3000)
        pa = (0x41 + d) & pmask(env)
        env.table.map(a, pa, 0x640 + d, PS_4K)
        na = len(env.accept_cycles["req"])
        t1 = env.send_req(a, pa)["tag"]
        if d > 1:
            await env.loop.wait_until(lambda: len(env.accept_cycles["req"]) > na, 200, "R1 accepted")
            await env.loop.cycles(d - 1)
        t2 = env.send_req(b, q)["tag"]
        await env.loop.wait_until(lambda: len(env.accept_cycles["req"]) > na + 1, 200, "R2 accepted")
        await env.drain(5000)
        c1, c2 = env.accept_cycles["req"][na], env.accept_cycles["req"][na + 1]
        o1, o2 = env.outcomes[t1], env.outcomes[t2]
        env.log.info(f"d {d}: R1 {o1.kind} at {c1 + L - 1}, successor {o1.successor}, candidates "
                     f"{o1.candidates}, drops {o1.prefetch_drops}; R2 {o2.kind} slot {o2.slot} at "
                     f"{c2 + L - 1}")
        expect(c2 - c1 == d, f"R2 accepted {c2 - c1} cycles after R1, wanted {d}")
        expect(o1.kind == "alloc" and o1.successor == b and (b, q) in o1.candidates,
               f"R1 {o1.kind}, successor {o1.successor}, candidates {o1.candidates}")
        if d <= p.prefetchDelay:
            expect(o2.kind == "alloc" and (b, q, "slot") in o1.prefetch_drops,
                   f"R2 {o2.kind} (slot {o2.slot}), R1's drops {o1.prefetch_drops}")
        else:
            expect(o2.kind == "merge" and o2.slot >= p.ptbEntries, f"R2 {o2.kind} slot {o2.slot}")
            if p.pfSendDelay:
                # the link is always ready here and R1's demand went before (t + 3): the
                # prefetch is on ats_req at its issue + pfSendDelay (the send skid, model Q26)
                issue = c1 + L - 1 + p.prefetchDelay
                sent = env.sent_cycle.get(o2.slot)
                expect(sent == issue + p.pfSendDelay,
                       f"prefetch slot {o2.slot} sent in {sent}, wanted {issue + p.pfSendDelay} "
                       f"(issue {issue} + pfSendDelay {p.pfSendDelay})")
    await env.finish()
