"""Tests of models/xlat_mmu.py, the composed XlatMmu model (docs/xlat-mmu.md, "Testplan of the
model"). Each compares the model with an independent computation: the walker model alone on
the same tables (the TLBs only cache: a hit and a walk answer alike), the page-table builder's
own records (``PageTableBuilder.lookup``, which does not use the walker), the fences'
architectural meaning written here, or a standalone PmlLogger model fed by the walker alone.

The machines come from ``xlat_tb.pagetables.Scenario``: per VM a guest space (asid 1), a
second space sharing all its tables (asid 2: the same mappings, one container group with
asid 1), a third space with private copies of some of asid 1's pages at the same VAs (asid
3, in the group but with pcIdxValid = 1), the stage-1-only space of the VM (the host's own
address space, a host-unique asid) and stage-2-only targets (VA = GPA).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import pytest

from models.pml import CTRL_EPML, CTRL_PML, PmlModel
from models.ptformats import CMD_READ, CMD_WRITE, MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2
from models.walker import WalkRequest, walk
from models.xlat_mmu import (CONFIGS, CSR_CTRL, FENCE_CODE, FENCE_KINDS, SRC_L1,
                             SRC_L2, SRC_WALK, X86_FENCES, Fence, MmuPolicy, PmlStall, Request,
                             XlatMmuModel)
from xlat_tb.mmu_traffic import (ACCESS, GUEST_PAGE, PAGE, RESERVED, Traffic, build, prologue,
                                 proc, reference, spec_fault)
from xlat_tb.pagetables import Scenario, Target
from xlat_tb.regression import run_length
from xlat_tb.seed import choose_seed

ARCH_CONFIGS = ("mmu_rv", "mmu_x86")


# ----------------------------------------------------------------------------- random traffic
def run_traffic(name: str, seed: int, n: int, *, policy: MmuPolicy = MmuPolicy()):
    """The prologue, then ``n`` random requests and fences; every response checked."""
    params = CONFIGS[name](sharing=policy.sharing)
    s, procs = build(params, seed, regions=12)
    s.mem.journal = True
    mmu = XlatMmuModel(params, mem=s.mem, policy=policy)
    rng = random.Random(f"traffic:{seed}:{name}")
    family = s.G.family
    unusable = set()

    def check(i, req):
        if req.mode == MODE_BARE:                           # pa = va (docs)
            va = req.va
            exp = (0, 0, ACCESS, 0, 0) if va >> params.paBits else (va >> 12, 0, 0, 0, 0)
            r = mmu.request(req)
            assert (r.translation, r.source) == (exp, SRC_L1), (va, r)
            return
        exp = reference(s.mem, params, req)
        out = mmu.serve(req)
        assert out.resp.translation == exp, (
            f"{name} seed {seed} request {i}: {req}\nmodel {out.resp} (source "
            f"{out.resp.source}, unusable {out.unusable})\nwalker alone: {exp}")
        assert out.resp.id == req.id
        unusable.update(why for _, why in out.unusable)

    for i, item in enumerate(prologue(s, procs)):
        if isinstance(item, tuple):
            mmu.csr(CSR_CTRL, 1, item[1])
        else:
            check(i, replace(item, id=i & 15))
    traffic = Traffic(params, s, procs, rng)
    for i in range(n):
        item = traffic.item(i)
        if isinstance(item, Fence):
            mmu.fence(item)
        else:
            check(i, item)
    return mmu, unusable


@pytest.mark.parametrize("name", list(CONFIGS))
def test_random_traffic_answers_as_the_walker_alone(name):
    """Every response's translation (ppn, pageSize, fault, faultStage, faultGpa) equals the
    walker model's alone on the same tables at that moment (its fault as the spec's kind; bare:
    pa = va), for random multi-VM, multi-container traffic of every mode, random commands (the
    reserved one too), privileges and flags, with fences of every kind (x86's, bad codes) in
    between; and the run reaches every path."""
    seed = choose_seed()
    n = run_length("models")
    mmu, unusable = run_traffic(name, seed, n)
    c = mmu.counters()
    assert all(mmu.sources[src] for src in (SRC_L1, SRC_L2, SRC_WALK)), mmu.sources
    assert c["l1_sharedHits"] and c["l1_crossHits"], c
    assert {"clean", "stage1", "stage2"} <= unusable, unusable
    assert {PAGE, GUEST_PAGE, RESERVED} <= set(mmu.faults), mmu.faults
    assert c["mmu_rangeWalks"] and c["mmu_badCmds"] and c["mmu_bare"], c
    assert c["mmu_badFences"] and c["mmu_fences"] > c["mmu_badFences"], c
    if name == "mmu_formal":
        assert c["l1_evictions"] and c["l2_evictions"], c


@pytest.mark.parametrize("name", ARCH_CONFIGS)
def test_random_traffic_rtl_policy(name):
    """The RTL's choices (MmuPolicy.rtl: one AND permission checked with PrivCheck, D = the
    walk was a write, every fill private, TLBs without sharing; a 512 GiB leaf used as its
    1 GiB parts, M7, as the model's own): the same answers, no shared hit, no bad fill."""
    mmu, unusable = run_traffic(name, choose_seed(), 800, policy=MmuPolicy.rtl())
    c = mmu.counters()
    assert c["l1_sharedHits"] == 0 and c["l2_sharedHits"] == 0, c
    assert c["l1_badFills"] == 0 and c["l2_badFills"] == 0, c
    assert mmu.sources[SRC_L1] and mmu.sources[SRC_L2], mmu.sources
    assert {"clean"} <= unusable and unusable & {"stage1", "stage2"}, unusable


# ----------------------------------------------------------------------------- isolation
def _expected_ppn(vm, space, va, mode):
    """From the builder's records only: the frame of ``va`` in ``space`` (stage 1) through the
    VM's host tables (stage 2)."""
    if mode == MODE_S2:
        return vm.host.lookup(va)[0] >> 12
    pa = space.lookup(va)[0]
    return (pa if mode == MODE_S1 else vm.host.lookup(pa)[0]) >> 12


@pytest.mark.parametrize("name", ARCH_CONFIGS)
@pytest.mark.parametrize("level", [0, 1])
@pytest.mark.parametrize("l1_enable", [True, False])
def test_isolation_equal_vas_other_tables(name, level, l1_enable):
    """Two VMs, the same asid, ccid and VA (sharing on, pcIdxValid 0, asid = ccid = 0 as a
    stage-2-only context's entries carry: the loosest match), other tables; in one VM the
    stage-1-only space and the two-stage space at that VA, and a stage-2-only request whose
    GPA equals the VA: each always gets its own translation (the builder's), from the TLB
    after its first walk (L1, or L2 with the L1 off)."""
    params = CONFIGS[name]()
    s = Scenario(params.walker, 7 + level)
    G, size = s.G, 1 << (12 + 9 * level)
    va = s.rng.randrange(1 << 20, 1 << (G.input_bits - 2)) & ~(size - 1)
    procs, expect = [], []
    for vmid in (1, 2):
        vm = s.add_vm(vmid)
        space = s.add_space(vm, 1)
        gpa = vm.gpa_alloc.alloc(level)
        space.map(va, gpa, level)
        s.host_map_data(vm, gpa, level, full=True)
        root = space.root >> 12
        procs.append(proc(MODE_BOTH, vmid, 0, 0, 0, 0, root, vm.hRoot))
        expect.append(_expected_ppn(vm, space, va, MODE_BOTH))
        if vmid == 1:
            nat = s.native_space(vm, 1)
            nat.map(va, s.hpa.alloc(level), level)
            procs.append(proc(MODE_S1, vmid, 0, 0, 0, 0, nat.root >> 12, vm.hRoot))
            expect.append(_expected_ppn(vm, nat, va, MODE_S1))
            if vm.host.lookup(va) is None:
                vm.host.map(va, s.hpa.alloc(level), level)
            procs.append(proc(MODE_S2, vmid, 0, 0, 0, 0, 0, vm.hRoot))
            expect.append(_expected_ppn(vm, None, va, MODE_S2))
    assert len(set(expect)) == len(expect), "the test needs distinct frames"
    mmu = XlatMmuModel(params, mem=s.mem, l1_enable=l1_enable)
    t = Target(0, 1, va + 0x123 * 8, "ok", {}, cmd=CMD_READ, user=0)
    for rnd in range(3):
        for p, e in zip(procs, expect):
            for sub in range(1 << (9 * level) if level else 1)[:2]:
                tt = replace(t, gva=t.gva + sub * 4096)
                r = mmu.request(p.request(tt, flags={"sum": 1}))
                assert (r.fault, r.ppn) == (0, e + sub), (p, r, e)
                if rnd:
                    assert r.source == (SRC_L1 if l1_enable else SRC_L2), (p, r)


@pytest.mark.parametrize("name", ARCH_CONFIGS)
def test_l1_fill_from_an_l2_hit(name):
    """The L1 loses an entry (as an eviction would), the L2 answers with the walker alone's
    translation and fills the L1 (the next access is an L1 hit); the L1 copy of a group's
    shared entry still refuses the group's process with private copies (pcIdxValid 1: it
    gets its own page, as the walker alone); stage-1-only and stage-2-only entries alike."""
    params = CONFIGS[name]()
    s, procs = build(params, 14, regions=4, bad=False, copies=8)
    s.mem.journal = True
    by = {(p.mode, p.asid): p for p in procs if p.vmid == 1}
    p1, p2, p3 = by[(MODE_BOTH, 1)], by[(MODE_BOTH, 2)], by[(MODE_BOTH, 3)]
    cases = [(p1, p2, p3, t) for t in p3.targets[:-2]]
    cases += [(p, p, None, t) for p in procs if p.mode in (MODE_S1, MODE_S2)
              for t in p.targets if t.kind == "ok"]
    n = 0
    for first, second, private, t in cases:
        mmu = XlatMmuModel(params, mem=s.mem)
        req1, req2 = first.request(t, flags={"sum": 1}), second.request(t, flags={"sum": 1})
        if mmu.request(req1).fault:
            continue
        mmu.l1.inval(kind=0)
        r = mmu.request(req2)
        assert r.translation == reference(s.mem, params, req2) and r.source == SRC_L2, r
        assert mmu.request(req2).source == SRC_L1
        if private is not None:
            req3 = private.request(t, flags={"sum": 1})
            r3 = mmu.request(req3)
            assert r3.translation == reference(s.mem, params, req3), (r3, r)
            assert r3.ppn != r.ppn and r3.source == SRC_WALK
        n += 1
    assert n > 4, n


# ----------------------------------------------------------------------------- fences
@dataclass
class FenceCase:
    fence: Fence
    who: str          # the access: "s1" (host space), "both" (guest), "s2" (VA = GPA)
    change: str       # what the page tables change: "native" / "guest" / "host" leaf


# Which access each fence must make see a changed table (its architectural meaning: RISC-V
# priv. spec "SFENCE.VMA" / "HFENCE.VVMA and HFENCE.GVMA", Intel SDM INVLPG / INVPCID /
# INVEPT; the ccid kinds: docs/babelfish-tlb.md kinds 3 and 5). Operands filled in by the
# test: VA, ASID, VMID, CCID of the access.
FENCE_CASES = {
    "sfence_all": [("s1", "native")],
    "sfence_asid": [("s1", "native")],
    "sfence_va": [("s1", "native")],
    "sfence_va_asid": [("s1", "native")],
    "hfence_vvma_all": [("both", "guest")],
    "hfence_vvma_asid": [("both", "guest")],
    "hfence_vvma_va": [("both", "guest")],
    "hfence_vvma_va_asid": [("both", "guest")],
    "hfence_gvma_all": [("both", "host"), ("s2", "host")],
    "hfence_gvma_vmid": [("both", "host"), ("s2", "host")],
    "hfence_gvma_gpa_vmid": [("both", "host"), ("s2", "host")],
    "invlpg": [("s1", "native"), ("both", "guest")],
    "invpcid_addr": [("s1", "native"), ("both", "guest")],
    "invpcid_single": [("s1", "native"), ("both", "guest")],
    "invpcid_all": [("s1", "native"), ("both", "guest")],
    "invept_single": [("both", "host"), ("s2", "host")],
    "invept_global": [("both", "host"), ("s2", "host")],
    "ccid_page": [("s1", "native"), ("both", "guest")],
    "ccid_all": [("s1", "native"), ("both", "guest")],
}
FENCE_NAMES = FENCE_KINDS + tuple(X86_FENCES)


def test_fence_cases_cover_every_kind():
    assert set(FENCE_CASES) == set(FENCE_KINDS) | set(X86_FENCES)


@pytest.mark.parametrize("name", ARCH_CONFIGS)
@pytest.mark.parametrize("kind", FENCE_NAMES)
def test_fence_makes_the_changed_table_seen(name, kind):
    """Translate, change the page table, translate again (the TLB may still answer the old
    frame: it does here, from L1), fence, translate: the fence covers the access, so the
    answer is the new table's (the builder's record and the walker alone agree). The ccid
    kinds run with shared entries (pcIdxValid 0), the others with private ones."""
    params = CONFIGS[name]()
    for i, (who, change) in enumerate(FENCE_CASES[kind]):
        s = Scenario(params.walker, 100 + i)
        vm = s.add_vm(1)
        space = s.add_space(vm, 1)
        nat = s.native_space(vm, 1)
        va = s.random_va_block(vm, 1, 0) | 0x40
        gpa = vm.gpa_alloc.alloc(0)
        space.map(va, gpa, 0)
        vm.host.map(gpa, s.hpa.alloc(0), 0)
        nat.map(va, s.hpa.alloc(0), 0)
        shared = kind.startswith("ccid")
        mode = {"s1": MODE_S1, "both": MODE_BOTH, "s2": MODE_S2}[who]
        p = proc(mode, 1, 1, 1, 0 if shared else 1, 0,
                 (nat if who == "s1" else space).root >> 12, vm.hRoot)
        addr = gpa | 0x40 if who == "s2" else va
        t = Target(1, 1, addr, "ok", {}, cmd=CMD_READ)
        req = p.request(t, flags={"sum": 1})
        mmu = XlatMmuModel(params, mem=s.mem)
        old = mmu.request(req)
        assert old.fault == 0 and mmu.request(req).source == SRC_L1
        if change == "native":
            nat.poke(va, 0, s.G.encode_leaf(s.hpa.alloc(0), 0))
        elif change == "guest":
            g2 = vm.gpa_alloc.alloc(0)
            vm.host.map(g2, s.hpa.alloc(0), 0)
            space.poke(va, 0, s.G.encode_leaf(g2, 0))
        else:
            vm.host.poke(gpa, 0, s.H.encode_leaf(s.hpa.alloc(0), 0))
        new_ppn = _expected_ppn(vm, nat if who == "s1" else space, addr, mode)
        assert new_ppn != old.ppn
        stale = mmu.request(req)
        assert (stale.source, stale.ppn) == (SRC_L1, old.ppn)
        virt = int(who != "s1")
        f = Fence(FENCE_CODE[kind] if i % 2 and kind in FENCE_CODE else kind, va=addr, asid=1,
                  vmid=1, ccid=1, virt=virt)
        plan = mmu.fence(f)
        assert not plan.bad
        r = mmu.request(req)
        assert (r.fault, r.ppn) == (0, new_ppn), (kind, who, change, plan, r)
        assert r.translation == reference(s.mem, params, req)


def test_bad_fence_kind_removes_everything():
    """A fence code that is no kind (13 to 15): the defined response is the broadest fence
    (every TLB entry of every context goes), counted in mmu_badFences."""
    params = CONFIGS["mmu_formal"]()
    s, procs = build(params, 3, regions=3, bad=False)
    mmu = XlatMmuModel(params, mem=s.mem)
    for p in procs:
        for t in p.targets:
            mmu.request(p.request(t))
    assert mmu.l1.occupancy() and mmu.l2.occupancy()
    plan = mmu.fence(Fence(len(FENCE_KINDS), vmid=1))
    assert plan.bad and mmu.counters()["mmu_badFences"] == 1
    assert mmu.l1.occupancy() == 0 and mmu.l2.occupancy() == 0


# ----------------------------------------------------------------------------- faults, bare
@pytest.mark.parametrize("name", list(CONFIGS))
def test_faults_are_not_cached(name):
    """Every bad target of every stage and mode (the scenario's, whose faults the builder
    states), twice: the walker alone's fault both times, both from a walk, nothing filled."""
    params = CONFIGS[name]()
    s, procs = build(params, 11, regions=2)
    s.mem.journal = True
    mmu = XlatMmuModel(params, mem=s.mem)
    seen = set()
    for p in procs:
        for t in p.targets:
            if t.kind in ("ok", "host_u0") or t.mode == MODE_BARE:
                continue
            req = p.request(t, flags={"sum": 1})
            exp = reference(s.mem, params, req)
            fills = (mmu.l1.counters["fills"], mmu.l2.counters["fills"])
            for _ in range(2):
                r = mmu.request(req)
                assert r.translation == exp and r.fault and r.source == SRC_WALK, (t, r)
            assert (mmu.l1.counters["fills"], mmu.l2.counters["fills"]) == fills
            if "fault" in t.expect and t.kind != "noperm":
                stage = t.expect["stage"]
                assert (r.fault, r.faultStage) == (spec_fault(t.expect["fault"], stage), stage), t
            seen.add((r.fault, r.faultStage))
    assert {(PAGE, 0), (GUEST_PAGE, 1), (RESERVED, 0), (RESERVED, 1)} <= seen, seen
    assert mmu.counters()["mmu_rangeWalks"]


@pytest.mark.parametrize("name", list(CONFIGS))
def test_address_alias_of_a_cached_page_faults(name):
    """A cached translation, then addresses whose low bits equal its VA (GPA) but which fail
    the mode's address check (a non-canonical VA; a GPA beyond gpaBits): fault 5 as the walker
    alone answers, never the cached frame."""
    params = CONFIGS[name]()
    s, procs = build(params, 13, regions=3, bad=False)
    s.mem.journal = True
    mmu = XlatMmuModel(params, mem=s.mem)
    G, n = s.G, 0
    for p in procs:
        for t in p.targets:
            if t.kind != "ok":
                continue
            req = p.request(t, flags={"sum": 1})
            if mmu.request(req).fault:
                continue
            top = params.walker.gpaBits if p.mode == MODE_S2 else G.canon_top
            for bit in {top, 63, params.l1.vpnBits + 12}:
                alias = replace(req, va=req.va ^ (1 << bit))
                if p.mode != MODE_S2 and G.address_ok(alias.va):
                    continue
                r = mmu.request(alias)
                assert r.translation == reference(s.mem, params, alias), (alias, r)
                assert r.source == SRC_WALK and r.fault == (GUEST_PAGE if p.mode == MODE_S2
                                                           else PAGE), (alias, r)
                n += 1
    assert n


@pytest.mark.parametrize("name", ARCH_CONFIGS)
def test_permission_fault_on_a_hit_and_bus_error(name):
    """A translation filled by an allowed access, then every command and privilege on it: the
    walker alone's answer (a denied access is answered by a walk, its fault not cached, the
    entry stays for allowed accesses); a bus error on the leaf: fault 3, not cached, and once
    the memory answers again the translation is filled."""
    params = CONFIGS[name]()
    s, procs = build(params, 12, regions=4, bad=False, ad_clear_p=0.0)
    s.mem.journal = True
    mmu = XlatMmuModel(params, mem=s.mem)
    stages = set()
    for p in procs:
        for t in p.targets:
            if t.kind != "ok" or t.mode == MODE_BARE:
                continue
            base = p.request(t, flags={"sum": 1})
            if reference(s.mem, params, base)[2]:
                continue                       # a VA asid 3 has no copy of
            assert mmu.request(base).fault == 0
            for cmd in (0, 1, 2):
                for user in (0, 1):
                    req = replace(base, cmd=cmd, priv=user)
                    exp = reference(s.mem, params, req)
                    r = mmu.request(req)
                    assert r.translation == exp, (t, req, r)
                    if r.fault:
                        stages.add(r.faultStage)
                        assert r.source == SRC_WALK
                        assert mmu.request(base).source == SRC_L1   # the entry stays
    assert stages == {0, 1}, stages
    p = next(p for p in procs if p.mode == MODE_BOTH)
    t = next(t for t in p.targets if t.kind == "ok")
    req = p.request(t, flags={"sum": 1})
    mmu = XlatMmuModel(params, mem=s.mem)
    leaf = walk(s.mem.view_at(s.mem.seq), params.walker, mmu.walk_request(req)).leaf_addrs()
    s.mem.errors |= leaf
    for _ in range(2):
        r = mmu.request(req)
        assert (r.fault, r.source) == (ACCESS, SRC_WALK), r
    s.mem.errors.clear()
    assert mmu.request(req).fault == 0 and mmu.request(req).source == SRC_L1


@pytest.mark.parametrize("name", list(CONFIGS))
def test_bare_is_identity(name):
    """Bare: pa = va for every command and privilege, an L1-class response, no TLB lookup, no
    memory access; an address beyond paBits is an access fault; the reserved command is
    fault 4 at once in every mode (no lookup, no walk)."""
    params = CONFIGS[name]()
    mmu = XlatMmuModel(params)
    rng = random.Random(5)
    pa = params.paBits
    for i in range(200):
        va = rng.randrange(1 << pa)
        r = mmu.request(Request(id=i & 3, va=va, cmd=rng.randrange(3), priv=rng.randrange(2),
                                mode=MODE_BARE, vmid=rng.randrange(4), asid=rng.randrange(4)))
        assert (r.ppn, r.fault, r.source, r.id) == (va >> 12, 0, SRC_L1, i & 3)
    for mode in (MODE_BARE, MODE_S1, MODE_S2, MODE_BOTH):
        r = mmu.request(Request(va=0x1000, cmd=3, mode=mode))
        assert (r.fault, r.faultStage, r.faultGpa, r.source) == (RESERVED, 0, 0, SRC_L1)
    far = (1 << pa) | 0x5000
    r = mmu.request(Request(va=far, mode=MODE_BARE))
    assert (r.fault, r.faultGpa, r.ppn) == (ACCESS, 0, 0)
    assert mmu.l1.counters["lookups"] == mmu.l2.counters["lookups"] == 0
    assert mmu.counters()["mmu_badCmds"] == 4
    assert mmu.mem_writes == [] and len(mmu.mem) == 0


# ----------------------------------------------------------------------------- PML
def _pml_setup(pml_csr, regs, vmid, asid, base):
    for reg, v in (("PML_ADDR", base), ("PML_INDEX", 511), ("GPML_ADDR", base + 0x1000),
                   ("GPML_INDEX", 511), ("TRACK_ASID", asid),
                   ("CTRL", CTRL_PML | CTRL_EPML)):
        rd, err = pml_csr(regs.addr(vmid, reg), 1, v)
        assert not err


@pytest.mark.parametrize("name", ARCH_CONFIGS)
def test_pml_logs_what_the_walker_alone_reports(name):
    """Reads then writes (twice) of two-stage, stage-2-only and stage-1-only pages whose host
    leaves have D clear, through the MMU: its PML log writes (address, data, in order) equal a
    standalone PmlLogger model's fed with the dirty events of the walker alone running every
    request on its own copy of the memory; every written data GPA is logged once; stage-1-only
    writes log nothing; the log words are in the memory."""
    params = CONFIGS[name]()
    s, procs = build(params, 21, regions=4, bad=False, ad_clear_p=1.0, perm_random=False)
    vmid = 1
    base = s.hpa.alloc(1)
    ref_mem = s.mem.copy()
    mmu = XlatMmuModel(params, mem=s.mem)
    ref = PmlModel(params.pml)
    _pml_setup(mmu.csr, mmu.pml.regs, vmid, 1, base)
    _pml_setup(ref.csr, ref.regs, vmid, 1, base)
    written = []                               # (GPA page, host leaf level)
    for p in procs:
        if p.vmid != vmid:
            continue
        for t in p.targets:
            if t.kind != "ok" or any(reference(ref_mem, params, p.request(
                    t, cmd=c, user=0, flags={"sum": 1}))[2] for c in (CMD_READ, CMD_WRITE)):
                continue                       # not a page this process may write
            if any(t is x for x in s.special.values()):
                continue                       # the prologue's pages: not all with D clear
            for cmd in (CMD_READ, CMD_WRITE, CMD_WRITE):
                req = p.request(t, cmd=cmd, user=0, flags={"sum": 1})
                wreq = WalkRequest(id=0, gva=req.va, asid=req.asid, vmid=req.vmid,
                                   gRoot=req.s1Root, hRoot=req.s2Root, cmd=cmd,
                                   mode=req.mode, flags_sum=1)
                for d in walk(ref_mem, params.walker, wreq).dirty:
                    ref.accept(d.vmid, d.gpa, d.gva, d.asid)
                    while (w := ref.issue()) is not None:
                        ref.response(w.id, 0)
                r = mmu.request(req)
                assert r.fault == 0, (t, r)
                if p.mode == MODE_S1:
                    assert mmu.last.dirty == []          # no host leaf: nothing to log
            if p.mode != MODE_S1:
                g = t.expect["gpa"]
                written.append((g >> 12, s.vms[vmid].host.lookup(g)[1]))
    got = [(w.addr, w.data) for w in mmu.pml.writes]
    assert got == [(w.addr, w.data) for w in ref.writes]
    logged = [w.data >> 12 for w in mmu.pml.writes if w.part == 0]
    assert len(logged) == len(set(logged))              # one event per D transition
    for page, hl in written:                            # the host leaf's page is logged
        assert any(g >> (9 * hl) == page >> (9 * hl) for g in logged), (page, hl)
    assert all(s.mem.read(a) == d for a, d in got)
    assert any(w.part == 1 for w in mmu.pml.writes)      # the guest (EPML) part too


# ----------------------------------------------------------------------------- parameters
def test_parameters_follow_the_rtl_and_refuse_what_it_refuses():
    """The named configurations derive the blocks' widths as xlat.mmu.XlatMmuParams does
    (docs/xlat-mmu.md "Parameters": vpnBits = max(guest VA bits, gpaBits) - 12, ppnBits =
    paBits - 12, the TLB tag 2 bits wider than vmidBits); an illegal value is refused with the
    parameter's name."""
    for name, va_bits, gpa_bits, pa_bits in (("mmu_rv", 48, 50, 52), ("mmu_x86", 48, 48, 52),
                                             ("mmu_formal", 39, 41, 41)):
        p = CONFIGS[name]()
        for tlb in (p.l1, p.l2):
            assert tlb.vpnBits == max(va_bits, gpa_bits) - 12 and tlb.ppnBits == pa_bits - 12
            assert tlb.vmidBits == p.vmidBits + 2 and tlb.pcidBits == p.asidBits
        assert p.pml.vaBits == 64
    for kw, word in ((dict(vmidBits=15), "vmidBits"), (dict(vmidBits=2), "pmlContexts")):
        with pytest.raises(ValueError, match=word):
            CONFIGS["mmu_rv"](**kw)
    p = CONFIGS["mmu_rv"]()
    with pytest.raises(ValueError, match="l1.vmidBits"):
        replace(p, l1=replace(p.l1, vmidBits=3))
    with pytest.raises(ValueError, match="hit_perm"):
        MmuPolicy(hit_perm="or")


@pytest.mark.parametrize("name", ARCH_CONFIGS)
def test_pml_full_buffer_stalls_until_the_hypervisor_frees_it(name):
    """A one-entry PML buffer: the first written page is logged, the next ones wait in the
    context's queue (an exit is raised), the one after a full queue stalls the walk (the
    response is marked stalled, and no request or fence is taken meanwhile: PmlStall); the
    hypervisor takes the exit, gives a new buffer and acknowledges: the waiting events are
    logged, in the order the pages were written (the builder's GPAs), and requests go on."""
    params = CONFIGS[name]()
    s = Scenario(params.walker, 31)
    s.ad_clear_p, s.host_pt_ad_clear_p = 1.0, 0.0       # data leaves only: one event a page
    vm = s.add_vm(1)
    s.add_space(vm, 1)
    for _ in range(params.pml.queueDepth + 3):
        s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1)
    p = proc(MODE_BOTH, 1, 1, 1, 1, 0, vm.spaces[1].root >> 12, vm.hRoot)
    mmu = XlatMmuModel(params, mem=s.mem)
    regs = mmu.pml.regs
    base = s.hpa.alloc(1)
    _pml_setup(mmu.csr, regs, 1, 1, base)
    mmu.csr(regs.addr(1, "PML_INDEX"), 1, 0)                 # one entry left
    mmu.csr(regs.addr(1, "CTRL"), 1, CTRL_PML)
    pages = []
    for i, t in enumerate(s.targets):
        out = mmu.serve(p.request(t, id=i, cmd=CMD_WRITE, user=0, flags={"sum": 1}))
        assert out.resp.fault == 0
        pages.append(t.expect["gpa"] >> 12)
        # 1 logged, queueDepth waiting: the next one stalls
        assert out.stalled == (i > params.pml.queueDepth), (i, out.stalled)
        if out.stalled:
            break
    with pytest.raises(PmlStall):
        mmu.request(p.request(s.targets[0]))
    with pytest.raises(PmlStall):
        mmu.fence(Fence("sfence_all"))
    assert [x.vmid for x in mmu.pml.pending_exits] == [1]
    mmu.pml.take_exit(1, 62)
    mmu.csr(regs.addr(1, "PML_ADDR"), 1, base + 0x2000)
    mmu.csr(regs.addr(1, "PML_INDEX"), 1, 511)
    mmu.csr(regs.addr(1, "ACK"), 1, 1)
    assert not mmu.stalled
    assert [w.data >> 12 for w in mmu.pml.writes] == pages
    t = s.targets[len(pages)]
    assert mmu.request(p.request(t, cmd=CMD_WRITE, flags={"sum": 1})).fault == 0
    assert mmu.pml.writes[-1].data >> 12 == t.expect["gpa"] >> 12


def test_hs_mxr_read_of_an_execute_only_gstage_page():
    """RISC-V: a page execute-only at the G-stage, filled by a fetch, then read with the
    HS-level MXR (docs "Decided in the model" M3): the ISA's G-stage rule (models.privcheck,
    "Setting MXR at HS-level ... overrides ... G-stage execute-only") allows the read, and so do
    the walker's host check (``host_denies``, the data access's MXR) and both hit checks (the
    model's, which is the walker's, and the RTL's, PrivCheck.stage2): the same answer cached or
    not (the walk alone's)."""
    from models import privcheck as pc
    for policy in (MmuPolicy(), MmuPolicy.rtl()):
        params = CONFIGS["mmu_rv"](sharing=policy.sharing)
        s = Scenario(params.walker, 41)
        vm = s.add_vm(1)
        space = s.add_space(vm, 1)
        va, gpa = s.random_va_block(vm, 1, 0), vm.gpa_alloc.alloc(0)
        space.map(va, gpa, 0, r=1, w=0, x=1, u=0)
        vm.host.map(gpa, s.hpa.alloc(0), 0, r=0, w=0, x=1, u=1)
        s.mem.journal = True
        mmu = XlatMmuModel(params, mem=s.mem, policy=policy)
        p = proc(MODE_BOTH, 1, 1, 1, 1, 0, space.root >> 12, vm.hRoot)
        t = Target(1, 1, va | 0x80, "ok", {})
        assert mmu.request(p.request(t, cmd=2, user=0)).fault == 0          # the fetch fills
        read = p.request(t, cmd=CMD_READ, user=0, flags={"mxr": 1})
        r = mmu.request(read)
        isa = not pc.denies(pc.RV_GSTAGE, pc.Access(cmd=0, user=True, mxr=True),
                            pc.Perm(r=False, w=False, x=True, u=True))
        assert isa and (r.fault, r.source) == (0, SRC_L1), (policy, r)
        assert r.translation == reference(s.mem, params, read), policy
