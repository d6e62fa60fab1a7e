"""Directed cocotb tests of XlatMmu (docs/xlat-mmu.md, testplan).

Translations and faults come from the walker's reference model (models.walker) run on the
page-table builder's memory (xlat_tb.pagetables), never typed in; the level that answers
(L1, L2, walk) follows from the requests before (the MMU serves one request at a time). Each
test runs on every configuration; sizes (sets, ways) come from the manifest.
"""

from __future__ import annotations

import os

import cocotb

from models.ptformats import MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2, page_bytes
from models.walker import WalkerConfig
from models.xlat_mmu import CONFIGS, MmuPolicy, XlatMmuModel
from xlat_tb.cycle import TbError
from xlat_tb.manifest import load_manifest
from xlat_tb.pagetables import Scenario
from xlat_tb.seed import rng as seeded_rng

from .mmu_env import (CSR_COUNTERS, CSR_CTRL, FAULT_ACCESS, FAULT_GUEST_PAGE, FAULT_PAGE,
                      FAULT_RESERVED, GVMA_VMID, HVVMA_ALL, PS_1G, SFENCE_ALL, SFENCE_ASID,
                      SFENCE_VA, SRC_L1, SRC_L2, SRC_WALK, MmuEnv, model_request)

LEAF = dict(r=1, w=1, x=1, u=1, a=1, d=1)


def expect(cond: bool, msg: str):
    if not cond:
        raise TbError(msg)


def params() -> dict:
    return dict(load_manifest(os.environ["XLAT_MANIFEST"]).params)


def scenario(name: str) -> Scenario:
    return Scenario(WalkerConfig.from_params(params()), seeded_rng(name).randrange(1 << 30))


async def setup(dut, name: str, s: Scenario | None) -> MmuEnv:
    env = MmuEnv(dut, rng=seeded_rng(name), name=name, mem=s.mem if s is not None else None).start()
    await env.reset()
    return env


def native(s: Scenario, vm, asid: int, va: int, level: int = 0):
    """A stage-1-only mapping of ``va`` to a fresh host frame (A/D set); the walk request."""
    nat = s.native_space(vm, asid)
    nat.map(va, s.hpa.alloc(level), level, **LEAF)
    t = s.s1_target(vm, asid, va)
    return s.request(t, cmd=0, user=0)


def two_stage(s: Scenario, vm, asid: int):
    """A 4 KiB guest page over a 4 KiB host page at a fresh VA (A/D set); the walk request."""
    if asid not in vm.spaces:
        s.add_space(vm, asid)
    t = s.add_region(vm, asid, 0, host_mode="4k", n_addrs=1, full=True)[0]
    return s.request(t, cmd=0, user=0)


def va_at(s: Scenario, k: int) -> int:
    """A canonical guest VA in the lower half, 4 KiB page number ``k``."""
    return k << 12


async def cached_native(dut, name: str, page: int):
    """A stage-1-only page of VM 1, asid 1, walked once and then hit in L1: (env, scenario, vm,
    request, the walk's response)."""
    s = scenario(name)
    vm = s.add_vm(1)
    env = await setup(dut, name, s)
    req = env.mmu_req(native(s, vm, 1, va_at(s, page)))
    first = await env.check(req, SRC_WALK, "fill")
    await env.check(req, SRC_L1, "cached")
    return env, s, vm, req, first


# --------------------------------------------------------------------------- bare, bad input
@cocotb.test()
async def test_bare(dut):
    """Mode 0: pa = va (the spec's rule), answered as L1 without a lookup or a walk; a va beyond
    paBits is an access fault; the reserved command is answered at once with fault 4 in every
    mode (counted in perf_badCmds)."""
    env = await setup(dut, "bare", None)
    pa_bits = int(env.p["paBits"])
    for va in (0x1234, 0x7654_3210, (1 << pa_bits) - 8):
        r = await env.translate(dict(va=va, mode=MODE_BARE, cmd=1))
        expect((r["pa"], r["fault"], r["source"]) == (va >> 12, 0, SRC_L1), f"bare {va:#x}: {r}")
    r = await env.translate(dict(va=1 << pa_bits, mode=MODE_BARE))
    expect((r["fault"], r["source"]) == (FAULT_ACCESS, SRC_L1), f"bare beyond paBits: {r}")
    for mode in (MODE_BARE, MODE_S1, MODE_S2, MODE_BOTH):
        r = await env.translate(dict(va=0x5000, mode=mode, cmd=3))
        expect((r["fault"], r["source"]) == (FAULT_RESERVED, SRC_L1), f"cmd 3 mode {mode}: {r}")
    await env.settle()
    expect(env.counter("bare") == 4 and env.counter("badCmds") == 4 and env.counter("walks") == 0,
           f"counters bare {env.counter('bare')} badCmds {env.counter('badCmds')} walks {env.counter('walks')}")
    expect(env.mem.log == [], "bare / cmd 3 requests touched memory")


# --------------------------------------------------------------------------- the levels
@cocotb.test()
async def test_stage1_walk_then_l1_hit(dut):
    """Stage 1 only: the first access walks (the model's translation), the second hits in L1
    with the same answer, with no memory access."""
    env, s, vm, req, _ = await cached_native(dut, "s1", 0x1234)
    n = len(env.mem.log)
    await env.check(req, SRC_L1, "third access")
    expect(len(env.mem.log) == n, "an L1 hit read memory")


@cocotb.test()
async def test_two_stage_walk(dut):
    """Both stages, then stage 2 only (the same VM's GPA): each walks once, then hits in L1;
    a stage-2-only entry (its VA is a GPA) never answers the two-stage request of the same
    number, nor the reverse."""
    s = scenario("2d")
    vm = s.add_vm(1)
    env = await setup(dut, "2d", s)
    w = two_stage(s, vm, 1)
    req = env.mmu_req(w)
    await env.check(req, SRC_WALK, "2D walk")
    await env.check(req, SRC_L1, "2D again")
    gpa = s.vms[1].spaces[1].lookup(w.gva)[0]
    s2 = dict(req, va=gpa, mode=MODE_S2)
    await env.check(s2, SRC_WALK, "stage 2 only of the GPA")
    await env.check(s2, SRC_L1, "stage 2 only again")
    # the same number in the other mode: a guest VA equal to the GPA, mapped two-stage
    sp = vm.spaces[1]
    page = gpa & ~0xFFF
    if s.G.address_ok(page) and sp.lookup(page) is None:
        g2 = vm.gpa_alloc.alloc(0)
        sp.map(page, g2, 0, **LEAF)
        s.host_map_data(vm, g2, 0, full=True)
        r = await env.check(dict(req, va=page), SRC_WALK, "2D request of the stage-2-only entry's number")
        expect(r["pa"] != (await env.translate(s2))["pa"], "the two mappings have one frame: proves nothing")


@cocotb.test()
async def test_l2_hit_after_l1_eviction(dut):
    """ways + 1 pages of one L1 set: filling them evicts one from L1 (it stays in L2); going
    over them again, every answer is the model's, from L1 or L2, at least one from L2, and a
    page that came from L2 is in L1 again (its next access hits L1)."""
    s = scenario("evict")
    vm = s.add_vm(1)
    p = params()
    sets, ways = int(p["l1Sets"]), int(p["l1Ways"])
    env = await setup(dut, "evict", s)
    reqs = [env.mmu_req(native(s, vm, 2, va_at(s, 0x40 * sets + i * sets))) for i in range(ways + 1)]
    for i, r in enumerate(reqs):
        await env.check(r, SRC_WALK, f"fill {i}")
    from_l2 = []
    for i, r in enumerate(reqs):
        exp = env.expected(r)
        got = await env.translate(r)
        expect({k: got[k] for k in exp} == exp and got["source"] in (SRC_L1, SRC_L2),
               f"page {i}: {got}, expected {exp} from L1 or L2")
        if got["source"] == SRC_L2:
            from_l2.append(i)
            await env.check(r, SRC_L1, f"page {i} after its L2 hit")
    expect(from_l2, f"no L2 hit after filling {ways + 1} pages into one {ways}-way L1 set")


@cocotb.test()
async def test_l2_hit_with_l1_disabled(dut):
    """CTRL's L1 enable cleared: a translation filled before answers from L2, nothing is filled
    into L1; enabled again, the L1 entry (filled before) answers."""
    s = scenario("l1off")
    vm = s.add_vm(1)
    env = await setup(dut, "l1off", s)
    req = env.mmu_req(native(s, vm, 1, va_at(s, 0x777)))
    await env.check(req, SRC_WALK, "fill")
    r = await env.csr_access(CSR_CTRL)
    expect((r["rdata"], r["error"]) == (3, 0), f"CTRL reset value: {r}")
    await env.csr_access(CSR_CTRL, write=1, wdata=2)
    await env.check(req, SRC_L2, "L1 disabled")
    await env.check(req, SRC_L2, "L1 disabled, again")
    await env.csr_access(CSR_CTRL, write=1, wdata=3)
    await env.check(req, SRC_L1, "L1 enabled again")
    r = await env.csr_access(CSR_COUNTERS + 8 * 3)   # perf_l2Hits (MmuPerf order)
    expect(r["rdata"] == 2 and r["error"] == 0, f"PERF_l2Hits over the CSR port: {r}")
    r = await env.csr_access(CSR_COUNTERS + 8 * 3, write=1, wdata=5)
    expect(r["error"] == 1, f"a write to a counter must answer error: {r}")


# --------------------------------------------------------------------------- faults
@cocotb.test()
async def test_faults_not_filled(dut):
    """A fault of each stage (stage 1: a stage-1-only VA not mapped; stage 2: a stage-2-only GPA
    not mapped, and a two-stage walk whose data GPA is not mapped by the host) is the model's
    fault with faultStage and faultGpa, and is not filled: the next access walks again."""
    s = scenario("faults")
    vm = s.add_vm(1)
    s.add_space(vm, 1)
    env = await setup(dut, "faults", s)
    ok = two_stage(s, vm, 1)
    base = env.mmu_req(ok)
    # stage 1 only, not mapped
    nat = s.native_space(vm, 1)
    va = va_at(s, 0x3456)
    expect(nat.lookup(va) is None, "va already mapped")
    f1 = dict(base, va=va, mode=MODE_S1, s1Root=nat.root >> 12)
    # stage 2 only, a GPA not mapped
    gpa = vm.gpa_alloc.alloc(0) | 0x238
    f2 = dict(base, va=gpa, mode=MODE_S2)
    # two stages: the guest maps the page, the host does not map its GPA
    gva = s.random_va_block(vm, 1, 0)
    vm.spaces[1].map(gva, vm.gpa_alloc.alloc(0), 0, **LEAF)
    f3 = dict(base, va=gva | 0x18)
    for what, r in (("stage-1 fault", f1), ("stage-2 fault", f2), ("2D host fault", f3)):
        exp = env.expected(r)
        expect(exp["fault"] != 0, f"{what}: the model does not fault")
        await env.check(r, SRC_WALK, what)
        await env.check(r, SRC_WALK, what + ", again (not filled)")
    await env.settle()
    expect(env.counter("pageFaults") == 2 and env.counter("guestPageFaults") == 4,
           f"fault counters {env.counter('pageFaults')} / {env.counter('guestPageFaults')}")


# --------------------------------------------------------------------------- fences
async def _remap_s1(env, s, vm, asid, va):
    """Map ``va`` (stage 1 only) to a new frame."""
    nat = s.native_space(vm, asid)
    nat.poke(va, 0, s.G.encode_leaf(s.hpa.alloc(0), 0, **LEAF))


async def _fence_case(dut, name, kind, *, same_asid=True):
    env, s, vm, req, old = await cached_native(dut, name, 0x2345)
    va = req["va"]
    await _remap_s1(env, s, vm, 1, va)
    r = await env.translate(req)
    expect(r["source"] == SRC_L1 and r["pa"] == old["pa"], f"before the fence the L1 entry answers: {r}")
    await env.do_fence(kind, va=va, asid=1, vmid=0)
    new = await env.check(req, SRC_WALK, f"after fence kind {kind}")
    expect(new["pa"] != old["pa"], "the remapped page has the old frame")
    await env.check(req, SRC_L1, "refilled")
    return env, s, vm


@cocotb.test()
async def test_fence_sfence_all(dut):
    """sfence.vma x0, x0 after a page-table change: the next access walks and sees the change."""
    await _fence_case(dut, "fence_all", SFENCE_ALL)


@cocotb.test()
async def test_fence_sfence_asid(dut):
    """sfence.vma x0, asid: the asid's entries go (the next access walks and sees the change)."""
    await _fence_case(dut, "fence_asid", SFENCE_ASID)


@cocotb.test()
async def test_fence_sfence_va(dut):
    """sfence.vma va, x0: the page's entries go (the next access walks and sees the change)."""
    await _fence_case(dut, "fence_va", SFENCE_VA)


@cocotb.test()
async def test_fence_hfence_gvma_vmid(dut):
    """hfence.gvma x0, vmid after the host table of a two-stage page changed: the next access
    walks and sees the new host frame; a stage-1-only entry (another context) still hits."""
    s = scenario("gvma")
    vm = s.add_vm(1)
    env = await setup(dut, "gvma", s)
    w = two_stage(s, vm, 1)
    req = env.mmu_req(w)
    n1 = env.mmu_req(native(s, vm, 1, va_at(s, 0x999)))
    old = await env.check(req, SRC_WALK, "fill")
    await env.check(n1, SRC_WALK, "fill stage 1 only")
    gpa = vm.spaces[1].lookup(w.gva)[0]
    vm.host.poke(gpa, 0, s.H.encode_leaf(s.hpa.alloc(0), 0, **LEAF))
    r = await env.translate(req)
    expect(r["source"] == SRC_L1 and r["pa"] == old["pa"], f"before the fence the L1 entry answers: {r}")
    await env.do_fence(GVMA_VMID, vmid=1)
    new = await env.check(req, SRC_WALK, "after hfence.gvma vmid")
    expect(new["pa"] != old["pa"], "the host remap did not change the frame")
    await env.check(n1, SRC_L1, "stage-1-only entry after hfence.gvma of a VM")


@cocotb.test()
async def test_fence_same_cycle_as_request(dut):
    """A fence and a request offered in one cycle: the fence is accepted first (docs/xlat-mmu.md,
    same-cycle order), so the request sees the invalidation: it walks."""
    env, s, vm, req, _ = await cached_native(dut, "fence_cycle", 0x4321)
    n, nd = len(env.resps), env.fence_done
    env.fence.send(dict(kind=SFENCE_ALL))
    req2 = dict(req, id=7 % (1 << int(env.p["idBits"])))
    exp = env.expected(req2)
    env.req.send(req2)
    await env.loop.wait_until(lambda: len(env.resps) > n, 4000, "the response")
    r = env.resps[n]
    expect(env.fence_done == nd + 1, "fenceDone did not pulse before the response")
    expect(r["source"] == SRC_WALK and r["pa"] == exp["pa"], f"request after a same-cycle fence: {r}")


# --------------------------------------------------------------------------- isolation
@cocotb.test()
async def test_two_vms_same_va(dut):
    """Two VMs map one guest VA (same asid) to different frames: neither is ever answered with
    the other's translation, at L1 (the first VM's entry is there) or after."""
    s = scenario("vms")
    vm1, vm2 = s.add_vm(1), s.add_vm(2)
    env = await setup(dut, "vms", s)
    w1 = two_stage(s, vm1, 1)
    s.add_space(vm2, 1)
    page = w1.gva & ~0xFFF
    gpa2 = vm2.gpa_alloc.alloc(0)
    vm2.spaces[1].map(page, gpa2, 0, **LEAF)
    s.host_map_data(vm2, gpa2, 0, full=True)
    r1 = env.mmu_req(w1)
    r2 = dict(r1, vmid=2, s1Root=vm2.spaces[1].root >> 12, s2Root=vm2.hRoot)
    a = await env.check(r1, SRC_WALK, "VM 1")
    b = await env.check(r2, SRC_WALK, "VM 2, same VA (VM 1's entry is in L1)")
    expect(a["pa"] != b["pa"], "the two VMs' frames are equal: the test proves nothing")
    await env.check(r1, SRC_L1, "VM 1 again")
    await env.check(r2, SRC_L1, "VM 2 again")
    # a VM's hfence.vvma removes only its own entries
    await env.do_fence(HVVMA_ALL, vmid=2)
    await env.check(r1, SRC_L1, "VM 1 after VM 2's hfence.vvma")
    await env.check(r2, SRC_WALK, "VM 2 after its hfence.vvma")


# --------------------------------------------------------------------------- bad input
@cocotb.test()
async def test_bad_inputs(dut):
    """Bad input, each with its defined response and counter (docs/xlat-mmu.md): a fence kind
    above 12 acts as hfence.gvma all (the next access walks), `fenceDone` pulses,
    perf_badFences; a memory response whose id names no source's id range is dropped,
    perf_badMemResps; a CSR access to an unmapped MMU offset or a write of a counter answers
    error, perf_badCsrs."""
    env, s, vm, req, _ = await cached_native(dut, "bad", 0x1111)
    await env.do_fence(15)
    await env.check(req, SRC_WALK, "after a bad fence kind (acts as all)")
    # id = {source 0 (walker), low bits 2}: the walker's id is 1 bit wide
    env.mem.inject_response(2)
    await env.settle(6)
    r = await env.csr_access(CSR_CTRL + 8)
    expect(r["error"] == 1 and r["rdata"] == 0, f"unmapped MMU CSR offset: {r}")
    r = await env.csr_access(CSR_COUNTERS, write=1, wdata=1)
    expect(r["error"] == 1, f"a counter write: {r}")
    await env.settle()
    got = {c: env.counter(c) for c in ("badFences", "badMemResps", "badCsrs", "fences")}
    expect(got == dict(badFences=1, badMemResps=1, badCsrs=2, fences=1), f"counters {got}")
    await env.check(req, SRC_L1, "the MMU still works")


# --------------------------------------------------------------------------- hits the check refuses
async def native_rw(dut, name: str, page: int, user: int, **leaf):
    """A stage-1-only page of VM 1, asid 1 with the leaf bits ``leaf`` changed from LEAF: (env,
    scenario, vm, the read request, the write request)."""
    s = scenario(name)
    vm = s.add_vm(1)
    env = await setup(dut, name, s)
    va = va_at(s, page)
    s.native_space(vm, 1).map(va, s.hpa.alloc(0), 0, **dict(LEAF, **leaf))
    rd = env.mmu_req(s.request(s.s1_target(vm, 1, va), cmd=0, user=user))
    return env, s, vm, rd, dict(rd, cmd=1)


def csr_offset(env, name: str) -> int:
    """A register's offset from the manifest's CSR map (docs/xlat-mmu.md, decided 8)."""
    return {r["name"]: r["offset"] for r in env.man.raw["registers"]}[name]


@cocotb.test()
async def test_write_to_clean_page_walks(dut):
    """A page read first (filled with D = 0), then written: the write hit finds D clear, so it
    walks (perf_dirtyMisses; the walk sets D in memory as the model says), is refilled with
    D = 1, and the next write hits L1. Two stages with the host leaf's D clear: the walk's dirty
    event reaches PmlLogger (the walker's dirtyEvents counter over the CSR port)."""
    env, s, vm, rd, wr = await native_rw(dut, "clean", 0x5555, 0, d=0)
    await env.check(rd, SRC_WALK, "read of a clean page")
    await env.check(wr, SRC_WALK, "write hit on a clean entry: walks")
    await env.check(wr, SRC_L1, "write after the refill")
    await env.settle()
    # counted per level: the clean entry is in L1 and in L2
    expect(env.counter("dirtyMisses") == 2, f"perf_dirtyMisses {env.counter('dirtyMisses')}")
    # two stages, the host leaf of the data page with D clear
    s.add_space(vm, 2)
    t = s.add_region(vm, 2, 0, host_mode="4k", n_addrs=1, full=True)[0]
    gpa = vm.spaces[2].lookup(t.gva)[0]
    hpa = vm.host.lookup(gpa)[0]
    vm.host.poke(gpa, 0, s.H.encode_leaf(hpa & ~0xFFF, 0, **dict(LEAF, d=0)))
    w2 = dict(env.mmu_req(s.request(t, cmd=0, user=0)), cmd=1)
    await env.check(w2, SRC_WALK, "2D write to a page whose host D is clear")
    await env.settle()
    r = await env.csr_access(csr_offset(env, "PERF_walker_dirtyEvents"))
    expect(r["rdata"] == 1 and r["error"] == 0, f"walker dirty events through the MMU: {r}")


@cocotb.test()
async def test_denied_hit_walks(dut):
    """A read-only page: the read fills, a write hits but PrivCheck refuses it, so it walks and
    answers the walk's fault (perf_permMisses, per level), not filled; the read still hits L1."""
    # a user access (an x86 supervisor may write a read-only page with CR0.WP = 0)
    env, s, vm, rd, wr = await native_rw(dut, "denied", 0x6666, 1, w=0)
    await env.check(rd, SRC_WALK, "read")
    expect(env.expected(wr)["fault"] != 0, "the model allows a write to a read-only page")
    await env.check(wr, SRC_WALK, "write refused on the hit: walks, faults")
    await env.check(wr, SRC_WALK, "again: the fault was not filled")
    await env.check(rd, SRC_L1, "the read still hits")
    await env.settle()
    # counted per level: each refused write is refused by L1 and by L2
    expect(env.counter("permMisses") == 4, f"perf_permMisses {env.counter('permMisses')}")


# --------------------------------------------------------------------------- decided points, beside the composed model
class Twin:
    """The composed model with the RTL's policy (``MmuPolicy.rtl()``) beside the RTL, on its own
    copy of the memory (taken once the tables are built): every request of ``check`` is served
    by it too and its whole response (translation and source) must be the RTL's; ``end``
    compares every counter the model has (the MMU's perf_* ports, the TLBs' and PmlLogger's
    through the CSR port)."""

    def __init__(self, env: MmuEnv, s: Scenario):
        policy = MmuPolicy.rtl()
        self.env = env
        self.mmu = XlatMmuModel(CONFIGS[env.config](sharing=policy.sharing), mem=s.mem.copy(),
                                policy=policy)

    async def check(self, req: dict, source: int, what: str) -> dict:
        r = await self.env.check(req, source, what)
        m = self.mmu.request(model_request(dict(req, id=r["id"])))
        exp = dict(id=m.id, pa=m.ppn, pageSize=m.pageSize, fault=m.fault, faultStage=m.faultStage,
                   faultGpa=m.faultGpa, source=m.source)
        expect(r == exp, f"{what}: RTL {r}, the composed model {exp}")
        return r

    async def end(self):
        await self.env.settle()
        bad, n = await self.env.counters_differ(self.mmu)
        expect(not bad, f"counters differ (name, RTL, model): {bad}")
        expect(n > 0, "no counter read through the CSR port")


@cocotb.test()
async def test_largest_page_walked_once(dut):
    """The largest leaf of each mode (stage 1 only, stage 2 only, both: 512 GiB on Sv48 /
    Sv48x4, 1 GiB elsewhere) is answered with the walker's frame and pageSize min(its size, 2):
    a 512 GiB leaf is used as its 1 GiB parts (docs/xlat-mmu.md M7, decided), so the first
    access walks and the second is an L1 hit with no memory access; another 1 GiB part of a
    512 GiB page is its own entry (a walk, then a hit), another 4 KiB page of a 1 GiB page hits
    at once. Every answer and counter as the composed model's (no bad fill at either TLB)."""
    s = scenario("huge")
    vm = s.add_vm(1)
    s.add_space(vm, 1)
    G, H = s.G, s.H
    gl, hl = G.max_leaf_level(), H.max_leaf_level()
    cases = []
    va = 3 * page_bytes(gl)
    cases.append(("stage 1 only", s.request(_native_leaf(s, vm, va, gl), cmd=0, user=0), gl, va))
    gpa = vm.gpa_alloc.alloc(hl)
    vm.host.map(gpa, s.hpa.alloc(hl), hl, **LEAF)
    cases.append(("stage 2 only", s.request(s.s2_target(vm, 1, gpa + 0x5008), cmd=0, user=0), hl, gpa))
    both = min(gl, hl)
    t = s.add_region(vm, 1, both, host_mode="aligned", n_addrs=1, full=True)[0]
    cases.append(("both stages", s.request(t, cmd=0, user=0), both, t.gva & ~(page_bytes(both) - 1)))
    env = await setup(dut, "huge", s)
    twin = Twin(env, s)
    for what, w, level, base in cases:
        req = env.mmu_req(w)
        first = await twin.check(req, SRC_WALK, f"{what}: the first access")
        expect(first["pageSize"] == min(level, PS_1G), f"{what}: a level-{level} leaf answered {first}")
        n = len(env.mem.log)
        await twin.check(req, SRC_L1, f"{what}: the second access")
        expect(len(env.mem.log) == n, f"{what}: the L1 hit read memory")
        if level > PS_1G:
            other = dict(req, va=base + 5 * page_bytes(PS_1G) + 0x7010)
            await twin.check(other, SRC_WALK, f"{what}: another 1 GiB part")
            await twin.check(other, SRC_L1, f"{what}: another 1 GiB part again")
        else:
            other = dict(req, va=base + page_bytes(level) - 0x1000 + 0x10)
            await twin.check(other, SRC_L1, f"{what}: another 4 KiB page of the page")
    await twin.end()


def _native_leaf(s: Scenario, vm, va: int, level: int):
    """A stage-1-only leaf of ``level`` at ``va`` (asid 1) to a fresh host frame; its target."""
    s.native_space(vm, 1).map(va, s.hpa.alloc(level), level, **LEAF)
    return s.s1_target(vm, 1, va + 0x4008)


@cocotb.test()
async def test_mxr_read_of_an_execute_only_page(dut):
    """A supervisor's reads of a two-stage page a fetch filled (docs/privcheck.md; the hit check
    of decided 2). RISC-V, the G-stage leaf execute-only: with the HS-level MXR the read is an
    L1 hit, allowed (the G-stage rule, PrivCheck.stage2 with mxr, as the walker's host check);
    with MXR = 0, or vsstatus.MXR alone (it does not reach the G-stage), the hit is refused
    and the walk answers the guest-page fault. RISC-V, the VS-stage leaf execute-only under a
    full host leaf: with the HS-level MXR an L1 hit, allowed; with vsstatus.MXR alone the walk
    allows it but the RTL's one AND permission lost the host's R, so every such read walks
    (M3 (a)); with neither a page fault. x86 (EPT execute-only, no MXR): every read walks and
    answers the EPT violation; the fetch still hits. Every answer and counter as the composed
    model's."""
    s = scenario("mxr")
    vm = s.add_vm(1)
    space = s.add_space(vm, 1)
    rv = s.G.family == "rv"
    host_x = dict(LEAF, r=0, w=0, x=1)

    def page(guest: dict, host: dict) -> dict:
        va, gpa = s.random_va_block(vm, 1, 0), vm.gpa_alloc.alloc(0)
        space.map(va, gpa, 0, **guest)
        vm.host.map(gpa, s.hpa.alloc(0), 0, **host)
        return dict(va=va | 0x88, cmd=2, priv=0, mode=MODE_BOTH, asid=1, vmid=1,
                    s1Root=space.root >> 12, s2Root=vm.hRoot)

    sup = dict(LEAF, u=0)              # a supervisor page (a supervisor fetches from it)
    gx = page(sup, host_x)
    vsx = page(dict(sup, r=0, w=0), LEAF) if rv else None
    env = await setup(dut, "mxr", s)
    twin = Twin(env, s)

    def read(f: dict, **flags) -> dict:
        return dict(f, cmd=0, **{f"flags_{k}": v for k, v in flags.items()})

    async def refused(r: dict, fault: int, what: str):
        got = await twin.check(r, SRC_WALK, what)
        expect(got["fault"] == fault, f"{what}: fault {got['fault']}, not {fault}")

    await twin.check(gx, SRC_WALK, "the fetch of a G-stage execute-only page fills")
    if rv:
        r = await twin.check(read(gx, mxr=1), SRC_L1, "HS-level MXR: the read hits")
        expect(r["fault"] == 0, f"HS-level MXR read refused: {r}")
        await refused(read(gx), FAULT_GUEST_PAGE, "MXR = 0: the hit refused, the walk faults")
        await refused(read(gx, vmxr=1), FAULT_GUEST_PAGE, "vsstatus.MXR alone: a guest-page fault")
        await twin.check(read(gx, mxr=1), SRC_L1, "HS-level MXR again: the entry stayed")
        await twin.check(vsx, SRC_WALK, "the fetch of a VS-stage execute-only page fills")
        await twin.check(read(vsx, mxr=1), SRC_L1, "HS-level MXR: the read hits")
        for k in range(2):
            r = await twin.check(read(vsx, vmxr=1), SRC_WALK, f"vsstatus.MXR: the read walks ({k})")
            expect(r["fault"] == 0, f"vsstatus.MXR read refused: {r}")
        await refused(read(vsx), FAULT_PAGE, "MXR = 0: a page fault")
    else:
        await refused(read(gx), FAULT_GUEST_PAGE, "EPT execute-only: an EPT violation")
        await refused(read(gx), FAULT_GUEST_PAGE, "again: the fault was not filled")
    await twin.check(gx, SRC_L1, "the fetch hits")
    await twin.end()


# --------------------------------------------------------------------------- CSR timing
def csr_rule(env) -> tuple[int, int]:
    """The CSR port's timing as the manifest states it (``derived``: docs/xlat-mmu.md "CSR
    timing", decided in session 34): an access accepted in cycle r applies in r + csrApply (a
    read returns the registers as they are in that cycle, a write takes effect at its end) and
    is answered in r + csrLatency."""
    d = env.man.derived
    return int(d["csrApply"]), int(d["csrLatency"])


@cocotb.test()
async def test_csr_timing(dut):
    """Back-to-back CSR accesses, one a cycle, while a walk keeps the MMU busy, against the
    manifest's rule (``csr_rule``): each accepted in the cycle after the one before (csr_req
    always ready) and answered exactly csrLatency cycles after its acceptance, once, in order;
    a read returns CTRL and a PmlLogger register (context 0's PML_INDEX) with every write
    accepted before it applied and none accepted after it (a write then a read of the same
    register in the next cycle; a read then a write), and a counter (busyCycles, counting while
    the walk runs; requests) exactly as its perf_* port shows it in the read's apply cycle; an
    unmapped MMU offset answers error with rdata 0, a write rdata 0."""
    s = scenario("csrtime")
    vm = s.add_vm(1)
    env = await setup(dut, "csrtime", s)
    apply, latency = csr_rule(env)
    pml = {r["name"]: r for r in env.man.raw["pmlRegisters"]}
    index = pml["PML_INDEX"]["offset"]          # context 0
    mmu_ctrl = next(r for r in env.man.raw["registers"] if r["offset"] == CSR_CTRL)
    regs = {CSR_CTRL: int(mmu_ctrl["reset"]), index: int(pml["PML_INDEX"]["reset"])}
    busy, requests = csr_offset(env, "PERF_busyCycles"), csr_offset(env, "PERF_requests")
    perf: dict[int, dict] = {}
    env.loop.post_sample.append(lambda c: perf.__setitem__(c, {
        busy: env.counter("busyCycles"), requests: env.counter("requests")}))
    accepted: list[int] = []
    answered: list[tuple[int, dict]] = []
    env.csr.on_accept.append(lambda txn, c: accepted.append(c))
    env.csr_mon.callbacks.append(lambda item, c: answered.append((c, item)))
    burst = [(CSR_CTRL, 0, 0), (CSR_CTRL, 1, 1), (CSR_CTRL, 0, 0), (busy, 0, 0),
             (CSR_CTRL, 1, 2), (CSR_CTRL, 0, 0), (CSR_CTRL, 1, 3), (index, 0, 0), (index, 1, 5),
             (index, 0, 0), (CSR_CTRL, 0, 0), (busy, 0, 0), (CSR_CTRL + 8, 0, 0), (requests, 0, 0),
             (busy, 0, 0), (index, 1, 0), (index, 0, 0), (busy, 0, 0)]
    walk = env.mmu_req(native(s, vm, 1, va_at(s, 0x4321)))
    env.req.send(dict(walk, id=0))
    await env.loop.wait_until(lambda: env.counter("busyCycles") > 0, 20, "the walk under way")
    for a, w, d in burst:
        env.csr.send(dict(addr=a, write=w, wdata=d))
    await env.loop.wait_until(lambda: len(answered) >= len(burst), 4 * len(burst), "the burst's answers")
    await env.loop.wait_until(lambda: len(env.resps) > 0, 4000, "the walk's response")
    await env.settle(latency + 2)
    expect(len(answered) == len(burst) and len(accepted) == len(burst),
           f"{len(burst)} accesses: {len(accepted)} accepted, {len(answered)} answers")
    expect(accepted == list(range(accepted[0], accepted[0] + len(burst))),
           f"not one a cycle (csr_req not always ready?): accepted in {accepted}")
    changing = 0
    for (a, w, d), r, (c, got) in zip(burst, accepted, answered):
        what = f"{'write' if w else 'read'} {a:#x} accepted in {r}"
        expect(c == r + latency, f"{what}: answered in {c}, the rule says {r + latency}")
        at = r + apply
        if a in (busy, requests):
            exp, err = perf[at][a], 0
            changing += perf[at - 1][a] != exp != perf[at + 1][a]
        elif a in regs:
            exp, err = (0 if w else regs[a]), 0
        else:
            exp, err = 0, 1
        expect(got == dict(rdata=exp, error=err), f"{what}: {got}, the rule says rdata {exp:#x} error {err}")
        if w and a in regs:
            regs[a] = d          # applied at the end of r + apply: seen by every later access
    expect(changing > 0, "no counter read while it changed every cycle (the walk was over)")
