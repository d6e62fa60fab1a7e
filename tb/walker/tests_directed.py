"""Directed cocotb tests of NestedWalker, one (or more) per rule of docs/nested-walker.md.

Every walk runs under the scoreboard of walker_env.py (every response field against the
reference model, memory accesses, A/D writes, dirty events); the tests add expectations stated
by hand (the cold read counts, fault kinds, that a flush makes a change visible...).  Tests run
unchanged on every configuration; what depends on the configuration (caches, adUpdate,
formats) is read from the manifest.
"""

from __future__ import annotations

import os

import cocotb

from models.privcheck import FLAGS as PRIV_FLAGS
from models.ptformats import MODE_BOTH, MODE_S1, MODE_S2, page_bytes
from models.walker import WalkerConfig, WalkRequest, cold_reads
from xlat_tb.backpressure import Bursty, RandomGaps, random_pattern
from xlat_tb.cycle import TbError
from xlat_tb.manifest import load_manifest
from xlat_tb.pagetables import Scenario
from xlat_tb.seed import current_seed, rng as seeded_rng

from .walker_env import WalkerEnv


def expect(cond: bool, msg: str):
    if not cond:
        raise TbError(msg)


def config() -> WalkerConfig:
    return WalkerConfig.from_params(load_manifest(os.environ["XLAT_MANIFEST"]).params)


def scenario(name: str, **kw) -> Scenario:
    """A random machine for this test (seeded from the run's seed and the test name)."""
    seed = seeded_rng(name).randrange(1 << 30)
    return Scenario.random(config(), seed, **kw)


async def setup(dut, name: str, scen: Scenario | None = None, **env_kw) -> WalkerEnv:
    env = WalkerEnv(dut, rng=seeded_rng(name), name=name,
                    mem=scen.mem if scen is not None else None, **env_kw).start()
    await env.reset()
    env.scen = scen
    return env


def _fits(env, t) -> bool:
    return t.vmid < (1 << int(env.p["vmidBits"])) and t.asid < (1 << int(env.p["asidBits"]))


async def walk_all(env: WalkerEnv, reqs, *, parallel: bool = True):
    """Send every request (ids from the free pool) and wait until all have answered."""
    for r in reqs:
        if parallel:
            await env.loop.wait_until(lambda: env.free_id() is not None, timeout=100000,
                                      what="a free id")
        else:
            await env.drain()
        r.id = env.free_id()
        env.send(r)
    await env.drain()


async def walk_bad(env: WalkerEnv, s: Scenario, bad) -> list:
    """Walk the bad targets one at a time; each response's fault, stage, level and faultGpa must
    be the builder's expectation. Returns (walk, target) pairs."""
    await walk_all(env, [s.request(t) for t in bad], parallel=False)
    for w, t in zip(env.done, bad):
        e = t.expect
        got = (w.resp["fault"], w.resp["faultStage"], w.resp["faultLevel"], w.resp["faultGpa"])
        expect(got == (e["fault"], e["stage"], e["level"], e["faultGpa"]),
               f"{t.kind} (mode {t.mode}) at stage {e['stage']} level {e['level']}: got {got}, "
               f"builder expects {(e['fault'], e['stage'], e['level'], hex(e['faultGpa']))}")
    return list(zip(env.done, bad))


# --------------------------------------------------------------------------- cold walks
@cocotb.test()
async def test_cold_walk(dut):
    """A cold walk through 4 KiB pages at both stages, A/D set: (g+1)(h+1)-1 reads on a
    cache-less configuration (24 for 4 over 4, 35 for 5 over 5, 15 for Sv39 over Sv39x4);
    at most that with caches, and fewer on the repeated walk."""
    s = Scenario(config(), seeded_rng("cold").randrange(1 << 30))
    vm = s.add_vm(1, pool_p=0.0)
    s.add_space(vm, 1)
    targets = []
    for _ in range(4):
        targets += s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1, full=True)
    env = await setup(dut, "cold", s)
    g, h = env.G.levels, env.H.levels
    cold = cold_reads(g, h)
    expect(cold == int(env.man.derived.get("coldReads", cold)),
           f"manifest coldReads {env.man.derived.get('coldReads')} != (g+1)(h+1)-1 = {cold}")
    w = await env.do_walk(s.request(targets[0], id=1, cmd=0))
    r = w.resp
    expect(r["fault"] == 0, f"cold walk faulted: {r}")
    if env.cached:
        expect(r["memReads"] <= cold, f"cold walk read {r['memReads']} > {cold}")
    else:
        expect(r["memReads"] == cold and r["memWrites"] == 0,
               f"cold walk on a cache-less walker: {r['memReads']} reads, "
               f"{r['memWrites']} writes (doc: exactly {cold}, 0)")
    w2 = await env.do_walk(s.request(targets[0], id=2, cmd=0))
    if env.cached:
        expect(w2.resp["memReads"] < r["memReads"],
               f"repeated walk read {w2.resp['memReads']} (first {r['memReads']}): caches unused")
        env.log.info("cold walk %d reads, repeated %d reads", r["memReads"], w2.resp["memReads"])
    else:
        expect(w2.resp["memReads"] == cold, "cache-less: the repeated walk is cold again")
    for t in targets[1:]:
        await env.do_walk(s.request(t, id=3, cmd=0))
    await env.finish()


# --------------------------------------------------------------------------- translations
@cocotb.test()
async def test_page_sizes(dut):
    """Mixed page sizes at both stages (4K/2M/1G and 512G where the format has it); guest huge
    pages over host huge pages (aligned) and over smaller host pages (splintered); every
    response field against the model; hugeGuest / hugeAligned / splintered counters."""
    s = scenario("sizes", ad_clear_p=0.0, perm_random=False, bad=False, regions=30)
    env = await setup(dut, "sizes", s)
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    await walk_all(env, [s.request(t, cmd=0) for t in ok])
    sizes = {(w.resp["guestPageSize"], w.resp["hostPageSize"]) for w in env.done}
    expect(any(g > h for g, h in sizes), f"no splintered walk: {sizes}")
    expect(any(0 < g <= h for g, h in sizes), f"no aligned huge walk: {sizes}")
    for w, t in zip(env.done, ok):
        pass
    n_ok = sum(1 for w in env.done if w.resp["fault"] == 0)
    expect(n_ok == len(ok), f"{len(ok) - n_ok} valid targets faulted")
    # builder expectations (independent of the model)
    by_gva = {(t.vmid, t.asid, t.gva): t for t in ok}
    for w in env.done:
        t = by_gva[(w.req["vmid"], w.req["asid"], w.req["gva"])]
        e = t.expect
        got = (w.resp["ppn"], w.resp["guestPageSize"], w.resp["hostPageSize"])
        expect(got == (e["ppn"], e["guestPageSize"], e["hostPageSize"]),
               f"{t.gva:#x}: ppn/sizes {got}, builder {e}")
    env.log.info("size pairs seen: %s", sorted(sizes))
    await env.finish()


@cocotb.test()
async def test_permissions(dut):
    """Every cmd x user on pages with random permissions (guest perm AND host perm; guest
    denial fault 1, host denial fault 2), each with random privilege flags (the guest leaf's
    check is xlat.common.PrivCheck's, docs/privcheck.md: SUM, MXR / vsstatus.MXR, WP, SMEP,
    SMAP, NXE; the model decides each verdict)."""
    s = scenario("perm", ad_clear_p=0.0, perm_random=True, bad=False, regions=12)
    env = await setup(dut, "perm", s)
    frng = seeded_rng("perm.flags")
    reqs = [s.request(t, cmd=c, user=u, flags={f: frng.randrange(2) for f in PRIV_FLAGS})
            for t in s.targets if _fits(env, t) for c in (0, 1, 2) for u in (0, 1)]
    await walk_all(env, reqs)
    faults = {w.resp["fault"] for w in env.done}
    expect({0, 1} <= faults, f"faults seen {faults}")
    await env.finish()


@cocotb.test()
async def test_host_mxr(dut):
    """The host leaf's check is PrivCheck.stage2 with the request's HS-level MXR on the data
    access (docs/nested-walker.md "The walk", docs/privcheck.md rule 7): a read through an
    execute-only host leaf, modes both and stage 2, with every (mxr, vmxr). The ISA's rule
    decides the fault by hand: RISC-V G-stage "Setting MXR at VS-level does not override
    guest-physical page protections. Setting MXR at HS-level, however, overrides both VS-stage
    and G-stage execute-only permissions" (success iff mxr); EPT has no MXR (fault 2 always)."""
    s = scenario("hmxr", ad_clear_p=0.0, perm_random=False, bad=False, regions=1)
    env = await setup(dut, "hmxr", s)
    t = next(t for t in s.targets if t.kind == "ok" and _fits(env, t))
    vm, rv = s.vms[t.vmid], s.H.family == "rv"
    space = vm.spaces[t.asid]
    va, gpa = s.random_va_block(vm, t.asid, 0), vm.gpa_alloc.alloc(0)
    space.map(va, gpa, 0, **s.guest_leaf_kwargs(full=True))
    vm.host.map(gpa, s.hpa.alloc(0), 0, r=0, w=0, x=1, u=1, a=1, d=1)
    reqs, want = [], []
    for mode, gva in ((MODE_BOTH, va | 0x18), (MODE_S2, gpa | 0x18)):
        for mxr in (0, 1):
            for vmxr in (0, 1):
                reqs.append(WalkRequest(gva=gva, asid=t.asid, vmid=t.vmid, gRoot=space.root >> 12,
                                        hRoot=vm.hRoot, cmd=0, user=0, mode=mode,
                                        flags_sum=int(rv), flags_mxr=mxr, flags_vmxr=vmxr))
                want.append(0 if rv and mxr else 2)
    await walk_all(env, reqs, parallel=False)
    got = [w.resp["fault"] for w in env.done]
    expect(got == want, f"faults {got}, the ISA's rule {want}")
    await env.finish()


# --------------------------------------------------------------------------- faults
@cocotb.test()
async def test_faults(dut):
    """Every fault the formats can express, at every level and both stages: not valid,
    reserved bits / misconfiguration (fault 4), RISC-V misaligned superpage and non-leaf at
    level 0, W without R, EPT memory type, PS at level >= 3, host PPN >= paBits, host U = 0,
    GPA out of range (fault 5, stage 1), non-canonical gva (fault 5, stage 0), cmd 3."""
    s = scenario("faults", ad_clear_p=0.0, perm_random=False, regions=4)
    env = await setup(dut, "faults", s)
    bad = [t for t in s.bad if _fits(env, t)] + \
          [t for t in s.targets if t.kind == "host_u0" and _fits(env, t)]
    seen = {(t.kind, t.expect["stage"], t.expect["level"]) for _, t in await walk_bad(env, s, bad)}
    # cmd 3: fault 4, stage 0, level 0, no memory access
    t = next(t for t in s.targets if t.kind == "ok" and _fits(env, t))
    w = await env.do_walk(s.request(t, id=0, cmd=3))
    expect((w.resp["fault"], w.resp["faultStage"], w.resp["faultLevel"], w.resp["memReads"]) ==
           (4, 0, 0, 0), f"cmd 3: {w.resp}")
    env.log.info("bad kinds walked: %d (%s)", len(seen), sorted(seen))
    await env.finish()


# --------------------------------------------------------------------------- A/D
@cocotb.test()
async def test_ad_bits(dut):
    """Every leaf clean (A = D = 0): hardware mode writes A (and D on a write, and on the host
    leaves of guest page-table pages) back with a locked read + a one-byte write, and sends
    one dirty event per host D 0 -> 1; fault mode faults instead (1 guest, 2 host)."""
    s = scenario("ad", ad_clear_p=1.0, perm_random=False, bad=False, regions=10)
    s.host_pt_ad_clear_p = 1.0
    env = await setup(dut, "ad", s)
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    await walk_all(env, [s.request(t, cmd=0) for t in ok[: len(ok) // 2]] +
                   [s.request(t, cmd=1) for t in ok])
    # The repeat round starts after the first has answered: two write walks of one page in
    # flight together may set D in either order (the A/D lock decides), so only a later
    # round is known to find every bit set.
    await walk_all(env, [s.request(t, cmd=1) for t in ok])
    if env.hw:
        expect(env.counts["dirtyEvents"] > 0 and len(env.mem.writes()) > 0,
               "hardware A/D: no write / no dirty event")
        # exactly once: the second round of writes set nothing new
        second = env.done[-len(ok):]
        expect(all(w.resp["memWrites"] == 0 for w in second),
               "a repeated write walk wrote A/D again")
    else:
        expect(not env.mem.writes(), "adUpdate=fault: the walker wrote memory")
        expect(any(w.resp["fault"] in (1, 2) for w in env.done), "no A/D fault")
    await env.finish()


@cocotb.test()
async def test_dirty_backpressure(dut):
    """Many walks in flight setting D bits while dirty_ready is mostly low: no event is lost
    or duplicated, and a walk never goes on before its event is taken."""
    s = scenario("dirtybp", ad_clear_p=1.0, perm_random=False, bad=False, regions=12)
    s.host_pt_ad_clear_p = 1.0
    rng = seeded_rng("dirtybp.bp")
    env = await setup(dut, "dirtybp", s, dirty_ready=Bursty(rng, busy=2, quiet=25),
                      latency=(1, 12))
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    await walk_all(env, [s.request(t, cmd=1) for t in ok])
    await env.finish()


# --------------------------------------------------------------------------- bus errors
@cocotb.test()
async def test_bus_errors(dut):
    """A bus error on every access position of a walk (reads, locked reads, writes): fault 3
    at the stage and level of that access; the walk ends there; later walks are right."""
    s = scenario("bus", ad_clear_p=0.5 if config().adUpdate == "hardware" else 0.0,
                 perm_random=False, bad=False, regions=10)
    env = await setup(dut, "bus", s)
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    state = {"n": 0, "k": 0, "id": None}

    def fail(a):
        if a.id != state["id"]:
            return False
        state["n"] += 1
        return state["n"] - 1 == state["k"]
    env.mem.error_fn = fail
    # one target, the error on access #k for k = 0, 1, ... until the walk is shorter than k:
    # a failed walk caches nothing, so every try starts from the same (cold) state
    t = ok[0]
    k = 0
    while True:
        state.update(n=0, k=k, id=1)
        w = await env.do_walk(s.request(t, id=1, cmd=1))
        if w.resp["fault"] != 3:
            expect(state["n"] <= k, "the walk did not end at the bus error")
            break
        expect(len(w.acc) == k + 1, f"bus error on access #{k} but the walk made "
                                    f"{len(w.acc)} accesses")
        k += 1
    env.mem.error_fn = None
    expect(k >= 2 and env.counts["busErrors"] == k, f"only {k} error positions")
    env.log.info("bus error injected at each of %d access positions", k)
    await walk_all(env, [s.request(t, cmd=0) for t in ok])
    await env.finish()


@cocotb.test()
async def test_bus_error_caches_nothing(dut):
    """A walk ended by a bus error on its last access leaves nothing in the caches: the same
    walk again (no error) reads exactly the same words (caches were empty both times)."""
    s = Scenario(config(), seeded_rng("buscache").randrange(1 << 30))
    vm = s.add_vm(1, pool_p=0.0)
    s.add_space(vm, 1)
    t = s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1, full=True)[0]
    env = await setup(dut, "buscache", s)
    w0 = await env.do_walk(s.request(t, id=1))           # learn the access count
    await env.reset()                                    # empty caches, counters 0
    env.counts = {c: 0 for c in env.counts}
    env.mem.log.clear()
    env.mem.bogus_sent = 0
    n = len(w0.acc)
    env.mem.error_fn = lambda a: a.id == 2 and sum(1 for x in env.mem.log if x.id == 2) == n - 1
    w1 = await env.do_walk(s.request(t, id=2))
    env.mem.error_fn = None
    expect(w1.resp["fault"] == 3, f"expected a bus error on access #{n - 1}: {w1.resp}")
    w2 = await env.do_walk(s.request(t, id=3))
    expect([a.addr for a in w2.acc] == [a.addr for a in w0.acc],
           f"after the bus error the walk read {[hex(a.addr) for a in w2.acc]}, a cold walk "
           f"reads {[hex(a.addr) for a in w0.acc]}: something from the failed walk was cached")
    await env.finish()


# --------------------------------------------------------------------------- concurrency
@cocotb.test()
async def test_many_in_flight(dut):
    """Every id busy, long random memory latency with out-of-order answers, random
    back-pressure on resp / mem_req / dirty and gaps on req."""
    s = scenario("inflight", ad_clear_p=0.3, regions=20)
    rng = seeded_rng("inflight.bp")
    env = await setup(dut, "inflight", s, latency=(1, 40), max_outstanding=32,
                      resp_ready=random_pattern(rng, "mixed"),
                      mem_req_ready=random_pattern(rng, "mixed"),
                      dirty_ready=random_pattern(rng, "mixed"),
                      req_gaps=RandomGaps(rng, 0.1))
    pool = [t for t in s.targets + s.bad if _fits(env, t)]
    # 250 walks (600 until 2026-11-28: the budget of `make test`; test_random runs 1 500 and
    # make soak 10 000 of this mix); every walker busy at once is checked, not assumed
    reqs = [s.request(rng.choice(pool), cmd=rng.choice([0, 0, 1, 2]), user=rng.randrange(2))
            for _ in range(250)]
    await walk_all(env, reqs)
    expect(env.max_inflight >= env.walkers,
           f"at most {env.max_inflight} walks in flight at once, {env.walkers} walkers")
    await env.finish()


@cocotb.test()
async def test_same_id_held(dut):
    """A request whose id is in flight is held (req_ready low) until that walk answers, the
    response's cycle included, and taken in the next cycle; perf_idStalls counts the cycles
    (exactly: the testbench counts the same cycles)."""
    s = scenario("idheld", ad_clear_p=0.0, bad=False, regions=4)
    env = await setup(dut, "idheld", s, latency=(10, 20))
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    walks = []
    env.on_response.append(walks.append)
    for t in ok[:8]:
        env.send(s.request(t, id=1))
    await env.drain()
    got = env.read_counters()
    expect(got["idStalls"] > 0, "perf_idStalls is 0 after 8 requests with one id")
    env.log.info("idStalls %d (testbench counted %d waiting cycles)", got["idStalls"],
                 env.counts["idStalls"])
    # same cycle: the next request with the id waits through its predecessor's response
    # cycle and is taken in the cycle after (the env rejects an acceptance in that cycle)
    gaps = [b.cycle - a.resp_cycle for a, b in zip(walks, walks[1:])]
    expect(gaps and all(g == 1 for g in gaps), f"cycles from a response to the next "
                                               f"acceptance of its id: {gaps}, doc: 1")
    await env.check_counters(exact_stalls=True)
    await env.finish()


# --------------------------------------------------------------------------- flush
def _remap(s: Scenario, t, *, host: bool):
    """Point the 4K-region target ``t`` at a new frame (guest leaf or host leaf)."""
    vm = s.vms[t.vmid]
    if host:
        gpa = t.expect["gpa"]
        loc = vm.host.entry_location(gpa, t.expect["hostPageSize"])
        tab, idx = loc
        pte = vm.host.tables[tab][idx]
        F = vm.host.F
        new_base = F.leaf_base(pte, t.expect["hostPageSize"]) ^ \
            (page_bytes(t.expect["hostPageSize"]) * 2)
        new = F.encode_leaf(new_base, t.expect["hostPageSize"])
        vm.host._set(tab, idx, new)
    else:
        sp = vm.spaces[t.asid]
        gl = t.expect["guestPageSize"]
        tab, idx = sp.entry_location(t.gva, gl)
        F = sp.F
        # the new guest page: the GPA page of another target of this VM (mapped by the host)
        other = [x for x in s.targets if x.vmid == t.vmid and x.kind == "ok" and x is not t]
        gpa = other[0].expect["gpa"] & ~(page_bytes(gl) - 1)
        sp._set(tab, idx, F.encode_leaf(gpa, gl))


def _repoint_level1(s: Scenario, t):
    """Guest non-leaf change: t's level-1 pointer now points at a new level-0 table whose
    every entry maps the GPA page of another target (so a walk that used a stale cached
    pointer would answer the old frame)."""
    sp = s.vms[t.vmid].spaces[t.asid]
    if t.expect["guestPageSize"] != 0:
        return
    F = sp.F
    tab, idx = sp.entry_location(t.gva, 1)
    pte = sp.tables[tab][idx]
    child = F.addr_of(pte)
    other = next(x for x in s.targets if x.vmid == t.vmid and x.kind == "ok"
                 and x.expect["guestPageSize"] == 0 and x is not t
                 and x.expect["ppn"] != t.expect["ppn"])
    target = other.expect["gpa"] & ~0xFFF
    nt = sp.new_table(False)
    for j in sp.tables[child]:
        sp._set(nt, j, F.encode_leaf(target, 0))
    sp._set(tab, idx, F.encode_table(nt))


@cocotb.test()
async def test_flush_in_flight(dut):
    """Walks in flight while host and guest entries change, then a flush (kinds 0, 1, 2 and
    reserved 3 = 0): every walk accepted after the flush sees the new tables (checked against
    the model on the new memory, and against the old translation)."""
    s = scenario("flush", ad_clear_p=0.0, perm_random=False, bad=False, regions=16,
                 share_p=0.0)
    rng = seeded_rng("flush.t")
    env = await setup(dut, "flush", s, latency=(2, 20))
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    # warm the caches
    await walk_all(env, [s.request(t) for t in ok])
    for rnd, (kind, host) in enumerate([(0, True), (1, True), (2, False), (3, True),
                                        (0, False), (1, False)]):
        # the change stays inside what the flush covers (kind 1: one vmid, kind 2: one space)
        anchor = rng.choice(ok)
        vmid, asid = anchor.vmid, anchor.asid
        scope = [t for t in ok if t.vmid == vmid and (kind != 2 or t.asid == asid)]
        victims = rng.sample(scope, min(4, len(scope)))
        old = {}
        for t in victims:
            w = await env.do_walk(s.request(t, id=0))
            old[id(t)] = w.resp["ppn"]
        # walks in flight ...
        for _ in range(6):
            i = env.free_id()
            if i is not None:
                env.send(s.request(rng.choice(ok), id=i))
        await env.loop.cycles(rng.randrange(1, 30))
        # ... while the tables change, then the flush
        for t in victims:
            _remap(s, t, host=host)
        if kind == 2:
            _repoint_level1(s, victims[0])
        env.tables_changed()
        env.send_flush(kind, vmid, asid)
        await env.loop.wait_until(lambda: env.flush.idle, timeout=1000, what="flush accepted")
        await env.drain()
        changed = 0
        for t in victims:
            w = await env.do_walk(s.request(t, id=0))
            changed += int(w.resp["ppn"] != old[id(t)])
        expect(changed > 0, f"flush kind {kind}: no victim changed its translation (test "
                            f"without teeth)")
        env.log.info("flush kind %d: %d of the victims now translate differently", kind, changed)
    await env.finish()


@cocotb.test()
async def test_bad_mem_resp(dut):
    """A memory response whose id has no access outstanding is dropped and counted
    (perf_badMemResps); the walks around it are unaffected."""
    s = scenario("badresp", ad_clear_p=0.0, bad=False, regions=4)
    env = await setup(dut, "badresp", s)
    ok = [t for t in s.targets if t.kind == "ok" and _fits(env, t)]
    env.mem.inject_response(id=1, rdata=0xDEAD)
    await env.loop.cycles(5)
    await walk_all(env, [s.request(t) for t in ok[:6]])
    env.mem.inject_response(id=env.id_count - 1, rdata=0xBEEF, error=1)
    await walk_all(env, [s.request(t) for t in ok[6:12]])
    expect(env.mem.bogus_sent == 2, "bogus responses not sent")
    await env.finish()


# --------------------------------------------------------------------------- same cycle
@cocotb.test()
async def test_same_cycle_flush(dut):
    """docs/nested-walker.md, same-cycle inputs: a flush in the cycle a walk is accepted is
    before the walk (the walk fills the caches); a flush in any later cycle of the walk -- the
    cycle of one of its fills, of its response included -- leaves nothing of the walk cached
    (the fill of that cycle is suppressed, later ones too).  The flush (kind 0) is swept over
    every cycle from before the acceptance to after the response; a second, identical walk
    then reads less than a cold walk exactly when the flush was no later than the first walk's
    acceptance, and otherwise is the cold walk again, same reads and same cache hits (a walk
    also hits what it filled itself, e.g. host pointers shared by its guest levels)."""
    s = scenario("scflush", ad_clear_p=0.0, bad=False, regions=4, share_p=0.0)
    env = await setup(dut, "scflush", s, latency=(2, 2), reorder=False)
    t = next(t for t in s.targets if t.kind == "ok" and _fits(env, t))
    HITS = ("guestPwcHits", "hostPwcHits", "nestedTlbHits")

    async def measured_walk():
        before = env.read_counters()
        w = await env.do_walk(s.request(t, id=0))
        after = env.read_counters()
        return w, sum(after[h] - before[h] for h in HITS)

    async def round_(k: int):
        """flush k cycles after the request (k < 0: before), then the same walk again"""
        env.send_flush(0)
        await env.drain()
        if k < 0:
            f = env.send_flush(0)
            await env.loop.cycles(-k)
            env.send(s.request(t, id=0))
        else:
            env.send(s.request(t, id=0))
            await env.loop.cycles(k)
            f = env.send_flush(0)
        await env.drain()
        w1 = env.done[-1]
        w2, hits = await measured_walk()
        return w1, f["_cycle"], w2, hits

    env.send_flush(0)
    await env.drain()
    cold, cold_hits = await measured_walk()
    cold_reads = cold.resp["memReads"]
    span = cold.resp_cycle - cold.cycle
    seen = set()
    for k in range(-2, span + 3):
        w1, fc, w2, hits = await round_(k)
        rel = fc - w1.cycle
        seen.add("accept" if rel == 0 else "response" if fc == w1.resp_cycle else
                 "inside" if 0 < rel < w1.resp_cycle - w1.cycle else "outside")
        kept = fc <= w1.cycle
        got = (w2.resp["memReads"], hits)
        if env.cached and kept:
            ok = got[0] < cold_reads
        else:
            ok = got == (cold_reads, cold_hits)
        expect(ok, f"flush in cycle {fc}, first walk accepted in {w1.cycle} and answered in "
                   f"{w1.resp_cycle}: the next walk read {got[0]} entries with {got[1]} cache "
                   f"hits, a cold walk {cold_reads} with {cold_hits}; doc: the first walk's "
                   f"fills {'kept' if kept else 'gone'}")
    expect({"accept", "inside", "response"} <= seen, f"flush cycles covered: {seen}")
    await env.finish()


# --------------------------------------------------------------------------- modes
def _mode_scenario(name: str) -> Scenario:
    """One VM, one space, 4 KiB pages with A/D set and full permissions at both stages, and the
    single-stage targets beside them (Scenario.add_modes: the same VAs stage-1-only, the GPAs
    stage-2-only, one bad target of each mode kind)."""
    s = Scenario(config(), seeded_rng(name).randrange(1 << 30))
    vm = s.add_vm(1, pool_p=0.0)
    s.add_space(vm, 1)
    for _ in range(4):
        s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1, full=True)
    s.add_modes(vm, 1, 4, full=True)
    return s


def _of(s: Scenario, mode: int, kind: str = "ok") -> list:
    return [t for t in s.mode_targets if t.mode == mode and t.kind == kind]


@cocotb.test()
async def test_mode_cold_walks(dut):
    """Single-stage cold walks (doc, "Modes"): a stage-2-only walk reads the host format's
    levels (EPT4 4, Sv39x4 3), a stage-1-only walk the guest format's (Sv39 3, Sv48 / x86 4),
    on any configuration (nothing cached for them yet); the manifest's coldReadsStage1/2 agree;
    a repeated walk reads fewer where the caches serve it (the nested TLB answers a
    stage-2-only walk whole: 0 reads)."""
    s = _mode_scenario("modecold")
    env = await setup(dut, "modecold", s)
    g, h = env.G.levels, env.H.levels
    d = env.man.derived
    for mode, lv, key in ((MODE_S2, h, "coldReadsStage2"), (MODE_S1, g, "coldReadsStage1")):
        cold = cold_reads(g, h, mode)
        expect(cold == lv == int(d.get(key, lv)), f"mode {mode}: cold reads {cold}, levels {lv}, "
               f"manifest {key} {d.get(key)}")
        t = _of(s, mode)[0]
        w = await env.do_walk(s.request(t, id=1))
        r = w.resp
        expect((r["fault"], r["memReads"], r["memWrites"]) == (0, cold, 0),
               f"mode {mode} cold walk: fault {r['fault']}, {r['memReads']} reads, "
               f"{r['memWrites']} writes (doc: 0, {cold}, 0)")
        e = t.expect
        expect((r["ppn"], r["guestPageSize"], r["hostPageSize"], r["pageSize"]) ==
               (e["ppn"], e["guestPageSize"], e["hostPageSize"], e["pageSize"]),
               f"mode {mode}: ppn/sizes {r}, builder {e}")
        w2 = await env.do_walk(s.request(t, id=2))
        caches = ("nestedTlbEntries", "hostPwcEntries") if mode == MODE_S2 else ("guestPwcEntries",)
        cached = sum(int(env.p[c]) for c in caches)
        if cached:
            expect(w2.resp["memReads"] < cold, f"mode {mode}: repeated walk read "
                   f"{w2.resp['memReads']} (cold {cold}): caches unused")
        else:
            expect(w2.resp["memReads"] == cold, f"mode {mode}: no cache, the repeat is cold")
    await env.finish()


@cocotb.test()
async def test_mode_faults(dut):
    """Faults per mode: stage 1 only: a not-valid entry is a guest fault (1, stage 0) at the
    entry's HPA, a leaf beyond paBits fault 5 at stage 0; stage 2 only: an unmapped GPA is a
    host fault (2, stage 1) of the GPA, a GPA beyond the range fault 5 at stage 1 with the
    whole address; bare: fault 4, stage 0, level 0, no read, counted in perf_badModes."""
    s = _mode_scenario("modefault")
    env = await setup(dut, "modefault", s)
    bad = [t for t in s.mode_targets if "fault" in t.expect and _fits(env, t)]
    for w, t in await walk_bad(env, s, bad):
        if t.kind in ("bare", "s2_gpa_range"):
            expect(w.resp["memReads"] == 0, f"{t.kind}: {w.resp['memReads']} reads (doc: none)")
    kinds = {t.kind for t in bad}
    expect({"s1_invalid", "s2_invalid", "s2_gpa_range", "bare"} <= kinds, f"kinds {kinds}")
    got = env.read_counters()["badModes"]
    expect(got == 1, f"perf_badModes {got} after one bare request")
    await env.finish()


@cocotb.test()
async def test_mode_isolation(dut):
    """A stage-1-only and a 2D walk of the same vmid, asid and VA never use each other's guest
    PWC entries (a stage-1-only entry's table is host-physical): after the 2D walk the
    stage-1-only one reads every guest level, after two stage-1-only walks the 2D walk reads
    only what the scoreboard's model allows; a flush of (vmid, asid) removes the stage-1-only
    entries too (the next stage-1-only walk is cold again)."""
    s = _mode_scenario("modeiso")
    env = await setup(dut, "modeiso", s)
    g = env.G.levels
    t1 = _of(s, MODE_S1)[0]
    t2 = next(t for t in s.targets if t.gva == t1.gva and t.mode == MODE_BOTH)
    w = await env.do_walk(s.request(t2, id=1))
    expect(w.resp["fault"] == 0, f"2D walk: {w.resp}")
    w = await env.do_walk(s.request(t1, id=2))
    expect(w.resp["memReads"] == g, f"stage-1-only walk after a 2D walk of the same VA read "
           f"{w.resp['memReads']} (doc: {g}, no guest PWC entry of the 2D walk answers it)")
    w = await env.do_walk(s.request(t1, id=3))
    if int(env.p["guestPwcEntries"]):
        expect(w.resp["memReads"] < g, f"repeated stage-1-only walk read {w.resp['memReads']}")
    w = await env.do_walk(s.request(t2, id=0))
    expect(w.resp["fault"] == 0, f"2D walk after stage-1-only walks: {w.resp}")
    env.send_flush(2, t1.vmid, t1.asid)
    await env.drain()
    w = await env.do_walk(s.request(t1, id=1))
    expect(w.resp["memReads"] == g, f"stage-1-only walk after a flush of its (vmid, asid) read "
           f"{w.resp['memReads']} (doc: {g})")
    await env.finish()
