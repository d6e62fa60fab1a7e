"""Directed tests of PerforatedL2Tlb (docs/perforated-l2tlb-testplan.md, the C rows).

Every response is checked by the scoreboard (pf_env.py) against the reference model; the tests
also check each translation against the page-table builder's records
(``PerforatedMachine.expect``, never through the model) and, where the caches of the
configuration are large enough for the doc's read lists, the exact ``source`` and
``memReads`` the doc's "Translation flow" gives.
"""

from __future__ import annotations

import cocotb

from models.perforated import (F_BUS, F_PAGE, F_RSVD, INV_ALL, INV_ASID, INV_FRAME, INV_PAGE,
                               SRC_2M, SRC_4K, SRC_HOLE, SRC_PERF, SRC_WALK)
from xlat_tb.backpressure import RandomGaps
from xlat_tb.cycle import TbError
from xlat_tb.seed import rng as seeded_rng

from .pf_env import PfEnv

V2 = 0x1234          # a 2 MiB region (vpn >> 9) used by the tests


async def _env(dut, name, **kw) -> PfEnv:
    env = PfEnv(dut, rng=seeded_rng(name), name=name, **kw)
    await env.start()
    return env


def _roomy(env) -> bool:
    """Caches large enough that the doc's read lists hold for the short sequences below."""
    return env.p.pwcEntries >= 4 and env.p.bitmapEntries >= 2


def _check(env, r, asid, vpn, cmd=0, user=0, source=None, reads=None):
    e = env.machine.expect(asid, vpn, cmd, user, perforation=env.p.perforation).fields()
    got = {k: r[k] for k in e}
    if got != e:
        raise TbError(f"vpn {vpn:#x}: {got} != builder's {e}")
    if source is not None and r["source"] != source:
        raise TbError(f"vpn {vpn:#x}: source {r['source']}, doc {source}")
    if reads is not None and _roomy(env) and r["memReads"] != reads:
        raise TbError(f"vpn {vpn:#x}: memReads {r['memReads']}, doc {reads}")


async def _finish(env):
    await env.quiet()
    env.check_counters()


@cocotb.test()
async def test_hit_4k(dut):
    """Flow 1 and 5: a cold 4 KiB walk (4 reads), then a 4 KiB hit, then a neighbour from the
    PDE-pointer PWC entry (1 read); user / write / execute checks."""
    env = await _env(dut, "hit_4k")
    m = env.machine
    vpn = (V2 << 9) | 7
    m.map_4k(1, vpn)
    m.map_4k(1, vpn + 1, w=0)
    m.map_4k(1, vpn + 2, u=0, x=0)
    _check(env, await env.translate(vpn), 1, vpn, source=SRC_WALK, reads=4)
    _check(env, await env.translate(vpn), 1, vpn, source=SRC_4K, reads=0)
    _check(env, await env.translate(vpn + 1, cmd=1), 1, vpn + 1, cmd=1, source=SRC_WALK, reads=1)
    _check(env, await env.translate(vpn + 1, cmd=1), 1, vpn + 1, cmd=1, source=SRC_4K, reads=0)
    _check(env, await env.translate(vpn + 2, user=1), 1, vpn + 2, user=1, source=SRC_WALK)
    _check(env, await env.translate(vpn + 2, cmd=2), 1, vpn + 2, cmd=2, source=SRC_4K)
    _check(env, await env.translate(vpn + 3), 1, vpn + 3, source=SRC_WALK)   # not present
    await _finish(env)


@cocotb.test()
async def test_hit_2m(dut):
    """Flow 2: an ordinary 2 MiB page: walk (3 reads, pageSize 1), then 2 MiB hits (source 1);
    a second region under the same PD from the PDPTE PWC entry (1 read)."""
    env = await _env(dut, "hit_2m")
    m = env.machine
    m.map_2m(1, V2)
    m.map_2m(1, V2 + 1, w=0)
    _check(env, await env.translate((V2 << 9) | 3), 1, (V2 << 9) | 3, source=SRC_WALK, reads=3)
    _check(env, await env.translate((V2 << 9) | 300), 1, (V2 << 9) | 300, source=SRC_2M, reads=0)
    v = ((V2 + 1) << 9) | 9
    _check(env, await env.translate(v, cmd=1), 1, v, cmd=1, source=SRC_WALK, reads=1)
    _check(env, await env.translate(v + 1), 1, v + 1, source=SRC_2M, reads=0)
    await _finish(env)


@cocotb.test()
async def test_bitmap_and_hole(dut):
    """Flows 3 to 5 on a perforated page with holes at offsets 5 and 200 (filter bits 0 and 3):
    a cold hole (6 reads), filter-0 pages (source 2, no read), a filter-1 non-hole (bitmap word
    cached: no read), the hole again (its 4 KiB entry), the second hole (bitmap + hole PTE, the
    shadow entry from the PWC), a writable hole in a read-only large page, and a lying filter
    bit (one bitmap read, the large page). With perforation = false every page faults."""
    env = await _env(dut, "bitmap_and_hole")
    m = env.machine
    m.map_perforated(1, V2, [5, 200], w=0, hole_perm=dict(w=1))
    m.map_perforated(1, V2 + 1, [64], filter=0b11)      # filter bit 0 lies (no hole there)
    b = V2 << 9
    on = env.p.perforation
    _check(env, await env.translate(b | 5, cmd=1), 1, b | 5, cmd=1, source=SRC_WALK,
           reads=6 if on else 3)
    _check(env, await env.translate(b | 70), 1, b | 70, source=SRC_PERF if on else SRC_WALK,
           reads=0 if on else 1)
    _check(env, await env.translate(b | 10), 1, b | 10, source=SRC_PERF if on else SRC_WALK,
           reads=0 if on else 1)
    _check(env, await env.translate(b | 5), 1, b | 5, source=SRC_4K if on else SRC_WALK,
           reads=0 if on else 1)
    _check(env, await env.translate(b | 200), 1, b | 200, source=SRC_HOLE if on else SRC_WALK,
           reads=2 if on else 1)
    _check(env, await env.translate(b | 201, cmd=1), 1, b | 201, cmd=1)   # read-only large page
    c = (V2 + 1) << 9
    _check(env, await env.translate(c | 3), 1, c | 3, source=SRC_WALK, reads=2 if on else 1)
    _check(env, await env.translate(c | 64), 1, c | 64, source=SRC_HOLE if on else SRC_WALK)
    if on:
        assert env.model.ctr["holes"] >= 2 and env.model.ctr["filterSkips"] >= 1
    await _finish(env)


@cocotb.test()
async def test_inval_kinds(dut):
    """Invalidation kinds 0 to 3: what each removes (the next request walks again) and what it
    keeps (kind 3 keeps 4 KiB entries; kind 1 keeps bitmap words)."""
    env = await _env(dut, "inval_kinds")
    m = env.machine
    m.map_4k(1, (V2 << 9) | 1)
    m.map_2m(1, V2 + 1)
    if env.p.perforation:
        m.map_perforated(1, V2 + 2, [3])
    else:                               # the same pages as 4 KiB pages
        m.map_4k(1, ((V2 + 2) << 9) | 3)
        m.map_4k(1, ((V2 + 2) << 9) | 4)
    m.map_4k(2, (V2 << 9) | 1)
    pages = [(1, (V2 << 9) | 1), (1, ((V2 + 1) << 9) | 2), (1, ((V2 + 2) << 9) | 3),
             (1, ((V2 + 2) << 9) | 4), (2, (V2 << 9) | 1)]

    async def all_pages():
        return [await env.translate(v, asid=a) for a, v in pages]

    for kind, kw, walks in ((INV_PAGE, dict(asid=1, vpn=(V2 << 9) | 1), [0]),
                            (INV_ASID, dict(asid=2), [4]),
                            (INV_FRAME, dict(frame=m.space(1).large[V2 + 1].ppn2m >> 9), [1]),
                            (INV_ALL, {}, [0, 1, 2, 4] if env.p.perforation else [0, 1, 2, 3, 4])):
        await all_pages()
        first = await all_pages()
        assert all(r["memReads"] == 0 for r in first) or not _roomy(env), first
        env.send_inval(kind, **kw)
        await env.quiet()
        after = await all_pages()
        for i, (a, v) in enumerate(pages):
            _check(env, after[i], a, v)
            if i in walks and _roomy(env):
                assert after[i]["source"] == SRC_WALK, (kind, i, after[i])
            if i not in walks and (i != 3 or kind == INV_ALL):
                assert after[i]["source"] != SRC_WALK or not _roomy(env), (kind, i, after[i])
    await _finish(env)


@cocotb.test()
async def test_invaldone_waits_for_walks(dut):
    """A walk in flight at an invalidation: it fills nothing, still answers, and invalDone
    comes only after its response has left (and after the hits queued before it)."""
    env = await _env(dut, "invaldone", latency=(25, 30))
    m = env.machine
    vpn = (V2 << 9) | 9
    m.map_4k(1, vpn)
    txn = env.send_req(vpn)
    await env.loop.wait_until(lambda: env.model.walks[0] is not None, 50, "the walk")
    env.send_inval(INV_PAGE, asid=2, vpn=0)
    await env.quiet()
    assert env.done_cycles and env.done_cycles[-1] > txn["_resp"]["_cycle"], \
        (env.done_cycles, txn["_resp"])
    assert env.model.ctr["staleWalks"] == 1
    r = await env.translate(vpn)
    _check(env, r, 1, vpn, source=SRC_WALK)       # the stale walk cached nothing
    await _finish(env)


@cocotb.test()
async def test_bus_errors(dut):
    """A bus error on each kind of read: fault 3, memReads counts it, nothing from it cached,
    what was read before it stays cached."""
    env = await _env(dut, "bus_errors")
    m = env.machine
    on = env.p.perforation
    kinds = ["pml4e", "pdpte", "pde", "pte"] + (["bitmap", "shadow", "hole"] if on else [])
    for n, kind in enumerate(kinds):
        asid = 1 + n % ((1 << env.p.asidBits) - 1)
        v2 = V2 + 4 * n
        if kind == "pte":
            m.map_4k(asid, (v2 << 9) | 2)
        else:
            m.map_perforated(asid, v2, [2]) if on else m.map_4k(asid, (v2 << 9) | 2)
        vpn = (v2 << 9) | 2
        env.send_inval(INV_ALL)
        await env.quiet()
        env.mem.error_addrs = {m.entry_addr(asid, vpn, kind)}
        r = await env.translate(vpn, asid=asid)
        assert r["fault"] == F_BUS, (kind, r)
        env.mem.error_addrs = set()
        _check(env, await env.translate(vpn, asid=asid), asid, vpn)
    await _finish(env)


@cocotb.test()
async def test_reserved_and_not_present(dut):
    """Reserved bits (fault 4) and not-present / A = 0 entries (fault 1), each on its own
    address space; nothing is cached from them (a second request faults the same way)."""
    env = await _env(dut, "reserved")
    m = env.machine
    on = env.p.perforation
    cases = ["pml4e_ps", "pdpte_ps", "leaf2m_rsvd", "leaf2m_a0", "pte_a0"]
    if on:
        cases += ["shadow_ps", "shadow_missing", "hole_a0"]
    if env.p.paBits < 52:
        cases += ["pml4e_pa", "pde_pa", "pte_pa"] + (["hole_pa", "shadow_pa"] if on else [])
    cases = cases[:1 << env.p.asidBits]        # one address space each
    for asid, what in enumerate(cases):
        v2 = V2 + 8 * asid
        vpn = (v2 << 9) | 2
        if what in ("pte_a0", "pte_pa") or what.startswith("pml4e") or what.startswith("pdpte") \
                or what == "pde_pa":
            m.map_4k(asid, vpn)
        elif what.startswith("leaf2m"):
            m.map_2m(asid, v2)
        else:
            m.map_perforated(asid, v2, [2])
        m.corrupt(asid, vpn, what)
        for _ in range(2):
            r = await env.translate(vpn, asid=asid)
            _check(env, r, asid, vpn)
            assert r["fault"] in (F_PAGE, F_RSVD), (what, r)
    await _finish(env)


@cocotb.test()
async def test_cmd3_and_bad_mem_resp(dut):
    """cmd 3: fault 4, source 4, no read; a memory response nobody waits for: dropped and
    counted (perf_badMemResps), nothing else changes."""
    env = await _env(dut, "cmd3")
    r = await env.translate((V2 << 9) | 1, cmd=3)
    assert (r["fault"], r["source"], r["memReads"]) == (F_RSVD, SRC_WALK, 0), r
    env.mem.inject_response(0, rdata=0x1234, error=0)
    env.mem.inject_response(env.p.walkers - 1, rdata=0, error=1)
    await env.loop.cycles(10)
    env.machine.map_4k(1, (V2 << 9) | 1)
    _check(env, await env.translate((V2 << 9) | 1), 1, (V2 << 9) | 1, source=SRC_WALK)
    await _finish(env)
    assert env.model.ctr["badMemResps"] == 2 and env.model.ctr["badCmds"] == 1


@cocotb.test()
async def test_same_cycle_inval_memresp_req(dut):
    """Docs "Same-cycle inputs": a request, an invalidation and a walk's memory response
    presented in one cycle: the invalidation is accepted, then the walk step (stale: it fills
    nothing, still answers), then the request; a request for a page accepted right after the
    walk step that fills it sees the fill (no second walk)."""
    env = await _env(dut, "same_cycle", latency=(12, 12), reorder=False)
    m = env.machine
    vpn = (V2 << 9) | 5
    m.map_4k(1, vpn)
    m.map_4k(1, vpn + 1)
    plan = {}
    seen = []

    def on_mreq(a, c):
        if not plan:
            plan["at"] = c + 12

    env.mem.on_request.append(on_mreq)

    def hook(c):
        if plan.get("at") == c + 1 and "sent" not in plan:
            plan["sent"] = True
            env.send_inval(INV_PAGE, asid=3, vpn=0)
            plan["req"] = env.send_req(vpn + 1)
        v = tuple(int(getattr(dut, f"{ch}_{h}").value) for ch in ("inval", "mem_resp", "req")
                  for h in ("valid", "ready"))
        seen.append((c, v))

    env.loop.post_sample.append(hook)
    first = env.send_req(vpn)
    await env.quiet()
    together = [(c, v) for c, v in seen if v[0] and v[2] and v[4]]
    assert together, "the three channels were never presented together"
    c0, v0 = together[0]
    assert v0[1] and not v0[3] and not v0[5], f"cycle {c0}: (valid, ready) x inval/mem_resp/req {v0}"
    kinds = [k for c, k, _ in env.accepts if c >= c0][:3]
    assert kinds == ["inval", "mem_resp", "req"], kinds
    assert first["_resp"]["source"] == SRC_WALK
    # the stale walk filled nothing: the page walks again, from the PWC filled before the inval
    again = await env.translate(vpn)
    _check(env, again, 1, vpn, source=SRC_WALK)

    # a request accepted right behind the step that fills its page: it hits
    env.loop.post_sample.remove(hook)
    vpn2 = vpn + 64
    m.map_4k(1, vpn2)
    follow = {}

    def on_step(c):
        if "go" not in follow and env.accepts and env.accepts[-1][0] == c \
                and env.accepts[-1][1] == "mem_resp" and env.model.idle() \
                and env.model.out and env.model.out[-1].reads \
                and env.model.out[-1].reads[-1].kind == "pte":
            follow["go"] = env.send_req(vpn2)

    env.loop.post_sample.append(on_step)
    await env.translate(vpn2)
    await env.quiet()
    env.loop.post_sample.remove(on_step)
    if "go" in follow:
        r = follow["go"]["_resp"]
        assert r["source"] == SRC_4K and r["memReads"] == 0, r
    await _finish(env)


@cocotb.test()
async def test_backpressure(dut):
    """Back-pressure on resp and mem_req, gaps on req, several walks in flight answered out of
    order: every response against the model, nothing dropped, channels hold."""
    rng = seeded_rng("backpressure")
    env = PfEnv(dut, rng=rng, name="backpressure", resp_ready=RandomGaps(rng, 0.5),
                mem_req_ready=RandomGaps(rng, 0.3), req_gaps=RandomGaps(rng, 0.2),
                latency=(1, 15))
    await env.start()
    m = env.machine
    for k in range(6):
        m.map_4k(1, ((V2 + k) << 9) | k)
        m.map_2m(1, V2 + 8 + k)
        m.map_perforated(1, V2 + 16 + k, [k, 64 + k])
    vpns = [((V2 + k) << 9) | k for k in range(6)] + \
        [((V2 + 8 + k) << 9) | 9 for k in range(6)] + \
        [((V2 + 16 + k) << 9) | j for k in range(6) for j in (k, 64 + k, 100)]
    for _ in range(3):
        for v in rng.sample(vpns, len(vpns)):
            await env.loop.wait_until(lambda: env.free_ids, 5000, "a free id")
            env.send_req(v)
    await _finish(env)


class _Gate:
    """A back-pressure pattern switched by the test (``open``)."""

    def __init__(self):
        self.open = False

    def idle(self) -> bool:
        return not self.open


@cocotb.test()
async def test_mem_resp_in_mem_req_cycle(dut):
    """Docs "Same-cycle inputs": a memory response for a slot in the cycle its mem_req is sent
    finds no read outstanding: dropped, counted (perf_badMemResps); the real response later
    continues the walk."""
    gate = _Gate()
    env = await _env(dut, "mem_resp_same_cycle", mem_req_ready=gate, latency=(3, 3))
    vpn = (V2 << 9) | 1
    env.machine.map_4k(1, vpn)
    txn = env.send_req(vpn)
    await env.loop.wait_until(lambda: int(dut.mem_req_valid.value), 50, "mem_req_valid")
    # presented together in the next cycle: the bogus response and mem_req_ready
    env.mem.inject_response(int(dut.mem_req_bits_id.value), rdata=0, error=0)
    gate.open = True
    await env.loop.wait_until(lambda: "_resp" in txn, 500, "the response")
    await _finish(env)
    first = env.mem.log[0]
    bad = [c for c, k, a in env.accepts if k == "mem_resp"][0]
    assert bad == first.req_cycle, (bad, first)
    assert env.model.ctr["badMemResps"] == 1
    _check(env, txn["_resp"], 1, vpn, source=SRC_WALK, reads=4)


@cocotb.test()
async def test_bitmap_base(dut):
    """bitmapBase moves (with the kind 0 invalidation the doc asks for): the next bitmap read
    is at the new base (the scoreboard checks every mem_req address)."""
    env = await _env(dut, "bitmap_base")
    m = env.machine
    rec = m.map_perforated(1, V2, [1, 2])
    b = V2 << 9
    _check(env, await env.translate(b | 9), 1, b | 9)
    new = m.bitmap_base + (1 << (env.p.paBits - 3))
    m.bitmap_base = new
    m._write_large(m.space(1), rec)        # the bitmap words at the new base
    dut.bitmapBase.value = new
    env.model.bitmap_base = new
    env.send_inval(INV_ALL)
    await env.quiet()
    r = await env.translate(b | 10)
    _check(env, r, 1, b | 10)
    if env.p.perforation:
        assert any(a.addr == m.bitmap_addr(rec.ppn2m + 10) for a in env.mem.log), "no read at the new base"
    await _finish(env)


# ----------------------------------------------------------------------------- the miss queue
# docs "Acceptance" (decided 2026-11-28): a request takes a walk slot only in its respond, when
# it turns out to need memory; with every slot busy it waits in the miss queue (missQueue places,
# one per request the pipeline holds), whose head takes the slot of the next walk that ends.
# Acceptance reserves a slot or a place for every request in flight, so hits run one a cycle.

def _track_missq(env) -> dict:
    """The model's miss queue over the run: its longest length, and the cycles it was not empty."""
    st = {"max": 0, "busy": []}

    def hook(c):
        n = len(env.model.missq)
        st["max"] = max(st["max"], n)
        if n:
            st["busy"].append(c)

    env.loop.post_sample.append(hook)
    return st


def _req_cycles(env, after=-1) -> list:
    return [c for c, k, _ in env.accepts if k == "req" and c > after]


@cocotb.test()
async def test_hits_one_per_cycle(dut):
    """Docs "Acceptance": back-to-back requests that hit, with resp_ready high and no walk in
    flight, are accepted one per cycle: N requests presented back to back are accepted in N
    consecutive cycles (a functional rule of the doc, not a timing measurement). Ids repeat
    (the hits answer in order)."""
    env = await _env(dut, "hits_one_per_cycle")
    m = env.machine
    pages = [((V2 + k) << 9) | (3 * k + 1) for k in range(3)]
    for v in pages:
        m.map_4k(1, v)
    m.map_2m(1, V2 + 8)
    pages.append(((V2 + 8) << 9) | 77)
    for v in pages:                      # cold: walks that fill the arrays
        await env.translate(v)
    await env.quiet()
    start = env.loop.cycle
    n = 40
    ids = 1 << env.p.idBits
    for i in range(n):
        env.send_req(pages[i % len(pages)], id=i % ids)
    await env.quiet()
    acc = _req_cycles(env, start)[-n:]
    assert len(acc) == n, acc
    assert acc[-1] - acc[0] == n - 1, f"{n} hits accepted over {acc[-1] - acc[0] + 1} cycles: {acc}"
    assert all(r["memReads"] == 0 for _, r, _ in env.responses[-n:])
    await _finish(env)


@cocotb.test()
async def test_miss_queue_in_order(dut):
    """Misses beyond the free walk slots: walkers + missQueue cold misses presented back to back
    are all accepted in consecutive cycles (a slot or a queue place each), the queue fills, and
    the queued walks take the slots in acceptance order (the scoreboard checks every mem_req's
    slot and address against the model, whose queue head takes the slot of the walk that ends).
    One request more waits until a walk ends."""
    env = await _env(dut, "miss_queue_order", latency=(30, 30), reorder=False)
    st = _track_missq(env)
    m = env.machine
    k = env.p.walkers + env.p.missQueue
    vpns = [((V2 + 16 * i) << 9) | i for i in range(k + 1)]
    for v in vpns:
        m.map_4k(1, v)
    ids = 1 << env.p.idBits
    for i, v in enumerate(vpns):
        env.send_req(v, id=i % ids)
    await env.quiet()
    acc = _req_cycles(env)
    assert len(acc) == k + 1, acc
    assert acc[k - 1] - acc[0] == k - 1, f"{k} misses accepted at {acc[:k]}"
    assert acc[k] > acc[k - 1] + 1, f"request {k + 1} accepted with no room: {acc}"
    assert st["max"] == env.p.missQueue, st["max"]
    assert env.model.ctr["walks"] == k + 1
    await _finish(env)


@cocotb.test()
async def test_miss_queue_inval_waits(dut):
    """Docs "Same-cycle inputs": an invalidation presented while misses wait in the miss queue is
    accepted only once the queue is empty (the model raises otherwise); requests presented
    behind it wait for it; every walk answers, invalDone follows."""
    env = await _env(dut, "miss_queue_inval", latency=(20, 20), reorder=False)
    st = _track_missq(env)
    m = env.machine
    n = env.p.walkers + 2
    vpns = [((V2 + 16 * i) << 9) | i for i in range(n)]
    for v in vpns:
        m.map_4k(1, v)
    ids = 1 << env.p.idBits
    for i, v in enumerate(vpns):
        env.send_req(v, id=i % ids)
    await env.loop.wait_until(lambda: len(_req_cycles(env)) == n, 200, "the misses accepted")
    assert env.model.missq, "no miss waits in the queue"
    sent = env.loop.cycle
    env.send_inval(INV_PAGE, asid=1, vpn=vpns[0])
    late = env.send_req(vpns[0] + 1, id=n % ids)
    await env.quiet()
    inv = [c for c, kd, _ in env.accepts if kd == "inval"]
    assert len(inv) == 1, inv
    pre = [c for c in st["busy"] if c < inv[0]]
    assert pre and pre[-1] >= sent, (sent, inv, pre[-3:])      # it waited for the queue
    assert [c for c, kd, t in env.accepts if t is late][0] > inv[0]
    assert env.done_cycles and env.model.ctr["staleWalks"] >= 1
    await _finish(env)


@cocotb.test()
async def test_miss_queue_backpressure(dut):
    """Back-pressure on resp while misses wait in the miss queue and hits pass them: cold misses
    and hits mixed, resp_ready low half the time, slow memory: nothing dropped, nothing
    replayed, every response and mem_req against the model; the queue was used."""
    rng = seeded_rng("miss_queue_backpressure")
    env = PfEnv(dut, rng=rng, name="miss_queue_backpressure", resp_ready=RandomGaps(rng, 0.6),
                latency=(15, 40))
    await env.start()
    st = _track_missq(env)
    m = env.machine
    hot = [((V2 + k) << 9) | k for k in range(4)]
    for v in hot:
        m.map_4k(1, v)
    for v in hot:
        await env.translate(v)
    cold = [((V2 + 16 + 4 * k) << 9) | k for k in range(24)]
    for v in cold:
        m.map_4k(1, v)
    for i, v in enumerate(cold):
        for h in (v, hot[i % 4], hot[(i + 1) % 4]):
            await env.loop.wait_until(lambda: env.free_ids, 5000, "a free id")
            env.send_req(h)
    await _finish(env)
    assert st["max"] >= 1, "no miss waited in the queue"


@cocotb.test()
async def test_plru_same_set_back_to_back(dut):
    """Docs "Arrays and replacement" (tree-PLRU per set, a hit touches, a fill takes the victim
    of a full set) with the operations ahead in flight: bursts of hits to the ways of one full
    set, back to back and with other sets' hits between them (so that the same set is 1, 2 and 3
    operations ahead), each followed by a miss in that set that evicts the PLRU victim. The
    victim each fill chose shows in the next burst, which hits only what the model holds: the
    scoreboard compares every response's `source` and `memReads` with the model's, whose PLRU
    sees the operations in order (an RTL that reads the replacement word stages ahead must
    bypass the touches its read missed: docs "FPGA round (2026-11-29, session 21)"). 4 KiB and
    2 MiB arrays."""
    env = await _env(dut, "plru_same_set", latency=(2, 6))
    m = env.machine
    p = env.p
    r = env.rng
    ids = 1 << p.idBits
    # one set of each array, and pages of other sets (none where the array has one set)
    s4 = 5 % p.sets4k
    base = V2 << 9
    four = [base + s4 + j * p.sets4k for j in range(p.ways4k + 12)]
    other4 = [((V2 + 1) << 9) + (s4 + d) % p.sets4k + 3 * p.sets4k for d in (1, 2) if p.sets4k > d]
    for v in four + other4:
        m.map_4k(1, v)
    s2 = 3 % p.sets2m
    r0 = (V2 + 0x400) // p.sets2m * p.sets2m
    two = [((r0 + s2 + j * p.sets2m) << 9) | 17 for j in range(p.ways2m + 12)]
    other2 = [((r0 + (s2 + 1) % p.sets2m + (p.ways2m + 20) * p.sets2m) << 9) | 3] if p.sets2m > 1 else []
    for v in two + other2:
        m.map_2m(1, v >> 9)

    def held4(): return [key[1] for key in (e.key for e in env.model.a4k.rows[s4] if e is not None)]
    def held2(): return [next(v for v in two if v >> 9 == key[1])
                         for key in (e.key for e in env.model.a2m.rows[s2] if e is not None)]

    for pages, ways, other, held in ((four, p.ways4k, other4, held4), (two, p.ways2m, other2, held2)):
        for v in pages[:ways] + other:   # cold: fill the set, and the others
            await env.translate(v)
        await env.quiet()
        for k in range(ways, len(pages)):
            live = held()
            assert len(live) == ways, live
            for _ in range(6):           # a burst: the same set 1, 2 and 3 operations ahead
                for v in r.sample(live, min(3, ways)):
                    env.send_req(v, id=r.randrange(ids))
                    for _ in range(r.choice((0, 0, 1, 2)) if other else 0):
                        env.send_req(r.choice(other), id=r.randrange(ids))
            env.send_req(pages[k], id=r.randrange(ids))     # a miss: the fill evicts the victim
            await env.quiet()
    await _finish(env)


def _bm_sa(env) -> bool:
    """The set-associative bitmap word cache (bitmapSets > 1, docs "The bitmap word cache's
    size"): VA-indexed, physically tagged, cleared whole by kind 3."""
    return getattr(env.p, "bitmapSets", 1) > 1


def _dispersed(n=8):
    """Holes spread one per filter region: every filter bit set."""
    return [64 * i + 7 for i in range(n)]


@cocotb.test()
async def test_bitmap_sets_from_va(dut):
    """Docs "The bitmap word cache's size" (2026-11-30): the set of a bitmap word is the
    request's 64-page VA chunk, (vpn >> 6) mod bitmapSets. Regions whose chunks share a set
    (region numbers `bitmapSets / 8` apart) fill its ways; one more evicts the set's PLRU
    victim, after bursts of hits (the same set 1, 2 and 3 operations ahead: the victim read
    in pick / decide must bypass the touches it missed) and walks whose bitmap lookup happens
    in their PD-leaf step (the 2 MiB set, the same VA bits, thrashes too). Regions of other
    sets keep their words. The scoreboard compares every `source` and `memReads` with the
    model's, whose cache is the RTL's shape; the flop configurations run the same sequence on
    their fully associative array."""
    env = await _env(dut, "bitmap_sets", latency=(2, 6))
    m = env.machine
    p = env.p
    if not p.perforation:
        await _finish(env)
        return
    r = env.rng
    ids = 1 << p.idBits
    step = max(1, getattr(p, "bitmapSets", 1) // 8)
    ways = p.bitmapEntries // getattr(p, "bitmapSets", 1)
    r0 = (V2 + 0x800) // 512 * 512
    same = [r0 + j * step for j in range(min(ways, 8) + 6)]
    other = [r0 + 1 + j * step for j in range(2)] if step > 1 else []
    for v2 in same + other:
        m.map_perforated(1, v2, _dispersed())
    off = 64 * 2 + 9                                    # chunk 2: a non-hole page
    pages = [(v2 << 9) | off for v2 in same]
    oth = [(v2 << 9) | off for v2 in other]
    n = min(ways, 8)
    for v in pages[:n] + oth:
        await env.translate(v)
    await env.quiet()
    if _bm_sa(env):
        s = (pages[0] >> 6) % p.bitmapSets
        assert len([e for e in env.model.bitmap.rows[s] if e]) == min(n, ways)
    for k in range(n, len(pages)):
        live = [v for v in pages[:k] if any(
            e and e.index == (m.space(1).large[v >> 9].ppn2m + off) >> 6
            for row in env.model.bitmap.rows for e in row)]
        for _ in range(4):
            for v in r.sample(live, min(3, len(live))):
                env.send_req(v + r.randrange(2), id=r.randrange(ids))
                for _ in range(r.choice((0, 1, 2)) if oth else 0):
                    env.send_req(r.choice(oth), id=r.randrange(ids))
        env.send_req(pages[k], id=r.randrange(ids))     # a miss: the fill evicts the victim
        await env.quiet()
    if _bm_sa(env) and oth:
        # the other set's words stayed: a 2 MiB hit (if still held) reads nothing
        for v in oth:
            x = await env.translate(v)
            assert x["source"] in (SRC_PERF, SRC_WALK) and (x["source"] == SRC_WALK or x["memReads"] == 0), x
    await _finish(env)


@cocotb.test()
async def test_bitmap_alias_and_kind3_clears(dut):
    """Two VAs over one physical 2 MiB frame (asid 1 and asid 2, chunks in different sets):
    with bitmapSets > 1 each caches the frame's word in its own set (its first access reads
    it, although the other's copy is cached: an alias, harmless for read-only words); a kind 3
    for *another* frame clears every word (a VA-indexed cache cannot find a frame's words), so
    the next access of each reads its word again, while kind 1 and kind 2 keep them. The flop
    array (bitmapSets 1) shares the word and drops only the frame's words."""
    env = await _env(dut, "bitmap_alias")
    m = env.machine
    if not env.p.perforation:
        await _finish(env)
        return
    rec = m.map_perforated(1, V2, _dispersed())
    m.map_perforated(2, V2 + 3, _dispersed(), ppn2m=rec.ppn2m)
    far = m.map_perforated(1, V2 + 9, [3])
    a, b = (V2 << 9) | 90, ((V2 + 3) << 9) | 90       # chunk 1, not holes (71, 135)
    sa = _bm_sa(env)
    await env.translate(a)                                # walk: PD leaf + its word
    x = await env.translate(b, asid=2)
    assert x["source"] == SRC_WALK
    assert [q.kind for q in x["_model"].reads][-1] == ("bitmap" if sa else "pde"), x["_model"].reads
    for v, s in ((a, 1), (b, 2)):
        x = await env.translate(v + 1, asid=s)            # both hit their copy
        assert (x["source"], x["memReads"]) == (SRC_PERF, 0), x
    env.send_inval(INV_ASID, asid=3)
    env.send_inval(INV_PAGE, asid=1, vpn=a)
    await env.quiet()
    x = await env.translate(b + 2, asid=2)
    assert (x["source"], x["memReads"]) == (SRC_PERF, 0), x
    env.send_inval(INV_FRAME, frame=far.ppn2m >> 9)
    await env.quiet()
    x = await env.translate(b + 3, asid=2)
    assert x["source"] == SRC_PERF and x["memReads"] == (1 if sa else 0), x
    await _finish(env)


@cocotb.test()
async def test_same_cycle_kind3_bitmap_read_in_flight(dut):
    """Docs "Same-cycle inputs" (2026-11-30): a kind 3 and a request presented in one cycle
    while a walk's bitmap read is in flight. The invalidation is accepted first (the request
    waits behind it); the walk is stale: its word answers it but is not cached; with
    bitmapSets > 1 every word cached before is gone, so the waiting request (a 2 MiB hit of
    another frame whose word was cached) reads its word again; the flop array keeps that
    other frame's word. The stale walk's page reads its word again too."""
    env = await _env(dut, "kind3_in_flight", latency=(12, 12), reorder=False)
    m = env.machine
    if not env.p.perforation:
        await _finish(env)
        return
    ra = m.map_perforated(1, V2, _dispersed())
    m.map_perforated(1, V2 + 1, _dispersed())
    a, b = V2 << 9, (V2 + 1) << 9
    await env.translate(a | 1)                  # PD leaf and chunk 0's word of frame A
    await env.translate(b | 1)                  # frame B: its 2 MiB entry and chunk 0's word
    await env.quiet()
    plan = {}
    seen = []

    def on_mreq(acc, c):
        if not plan and acc.addr == m.bitmap_addr(ra.ppn2m + 128):
            plan["at"] = c

    env.mem.on_request.append(on_mreq)

    def hook(c):
        if "at" in plan and c >= plan["at"] + 2 and "sent" not in plan:
            plan["sent"] = c
            env.send_inval(INV_FRAME, frame=ra.ppn2m >> 9)
            plan["req"] = env.send_req(b | 2)
        v = tuple(int(getattr(dut, f"{ch}_{h}").value) for ch in ("inval", "req") for h in ("valid", "ready"))
        seen.append((c, v))

    env.loop.post_sample.append(hook)
    first = env.send_req(a | 130)               # a 2 MiB hit, chunk 2's word not cached: a read
    await env.quiet()
    env.loop.post_sample.remove(hook)
    assert "sent" in plan, "the bitmap read was never seen"
    together = [(c, v) for c, v in seen if v[0] and v[2]]
    assert together, "the inval and the request were never presented together"
    c0, v0 = together[0]
    assert v0[1] and not v0[3], f"cycle {c0}: (valid, ready) x inval/req {v0}"
    kinds = [k for c, k, _ in env.accepts if c >= c0][:2]
    assert kinds[0] == "inval", kinds
    assert first["_resp"]["source"] == SRC_PERF and first["_resp"]["memReads"] == 1
    r = plan["req"]["_resp"]
    # frame A's 2 MiB entry went with the kind 3; frame B's stayed
    assert r["source"] == SRC_PERF and r["memReads"] == (1 if _bm_sa(env) else 0), r
    x = await env.translate(a | 131)            # the stale walk cached nothing: a walk again
    assert x["source"] == SRC_WALK, x
    await _finish(env)
