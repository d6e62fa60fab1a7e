"""Random multi-VM, multi-container traffic for XlatMmu (docs/xlat-mmu.md, issue 12 part 5),
shared by the composed model's pure-Python test (tb/models/test_xlat_mmu.py, against the
walker model alone) and the RTL's random cocotb test (tb/mmu/tests_random.py, against the
composed model).

The machine (``build``): per VM a guest space (asid 1), a second space sharing all its tables
(asid 2: the same mappings, one container group with asid 1), a third space with private
copies of some of asid 1's pages at the same VAs (asid 3, in the group but with pcIdxValid =
1), the stage-1-only space of the VM (the host's own address space, a host-unique asid) and
stage-2-only targets (VA = GPA); the page-table builder's bad entries of every kind. The
stream (``Traffic``): a prologue that reaches every path whatever the seed, then requests with
locality (a hot set larger than the L1, reused, drifting), writes after accesses, bare
requests, random commands, privileges and flags, and fences of every kind (x86's as sent, bad
codes). ``change_table`` is a page-table change and the fence that covers it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from models.babelfish import PS_1G
from models.ptformats import CMD_READ, CMD_WRITE, MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2
from models.walker import F_ADDR, F_BUS, F_GUEST, F_HOST, F_RSVD, WalkRequest, walk
from models.xlat_mmu import FENCE_CODES, FENCE_KINDS, X86_FENCES, Fence, Request

from .pagetables import MapConflict, Scenario, Target

FLAGS = ("sum", "mxr", "vmxr", "wp", "smep", "smap", "nxe")


# ----------------------------------------------------------------------------- the machine
@dataclass
class Proc:
    """A process as the core sends it: its request but the VA and the access, and its
    targets."""
    base: Request
    targets: list = field(default_factory=list)

    def __getattr__(self, name):
        """mode, vmid, asid, ccid, ...: the request's."""
        if name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def request(self, t: Target, *, id=0, cmd=None, user=None, flags=None) -> Request:
        return replace(self.base, id=id, va=t.gva, cmd=t.cmd if cmd is None else cmd,
                       priv=t.user if user is None else user, **(flags or {}))


def proc(mode, vmid, asid, ccid=0, pcIdxValid=0, pcIdx=0, s1Root=0, s2Root=0, targets=None):
    return Proc(Request(mode=mode, vmid=vmid, asid=asid, ccid=ccid, pcIdxValid=pcIdxValid,
                        pcIdx=pcIdx, s1Root=s1Root, s2Root=s2Root), targets or [])


# the response's fault kind of a walker fault (docs/xlat-mmu.md: the spec's list 0 none, 1
# page fault, 2 guest-page fault, 3 access fault, 4 reserved; the walker's 5, an address out of
# range, is a page fault of a guest address (stage 0) and a guest-page fault of a GPA)
PAGE, GUEST_PAGE, ACCESS, RESERVED = 1, 2, 3, 4


def spec_fault(walker_fault: int, stage: int) -> int:
    if walker_fault == F_ADDR:
        return (PAGE, GUEST_PAGE)[stage]
    return {F_GUEST: PAGE, F_HOST: GUEST_PAGE, F_BUS: ACCESS, F_RSVD: RESERVED}[walker_fault]


def walk_request(req: Request) -> WalkRequest:
    """The walker model's request of an MMU request (for the walker alone: no caches, so the
    vmid the MMU gives a stage-1-only walk does not matter)."""
    return WalkRequest(id=req.id, gva=req.va, asid=req.asid, vmid=req.vmid, gRoot=req.s1Root,
                       hRoot=req.s2Root, cmd=req.cmd, user=req.priv, mode=req.mode,
                       **{f"flags_{f}": getattr(req, f) for f in FLAGS})


def reference(mem, params, req: Request):
    """The walker model alone, on a copy-on-write view of the memory as it is now (its A/D
    writes stay in the view): the response fields an MMU response must equal."""
    r = walk(mem.view_at(mem.seq), params.walker, walk_request(req)).resp
    if r["fault"]:
        return (0, 0, spec_fault(r["fault"], r["faultStage"]), r["faultStage"], r["faultGpa"])
    # the MMU's pages are 4K / 2M / 1G: a larger leaf is used as its 1 GiB parts (M7)
    return (r["ppn"], min(r["pageSize"], PS_1G), 0, 0, 0)


def build(params, seed: int, *, vms: int = 2, regions: int = 6, copies: int = 4,
          ad_clear_p: float = 0.2, perm_random: bool = True, bad: bool = True):
    """(scenario, processes) as the module doc describes."""
    s = Scenario(params.walker, seed)
    s.ad_clear_p, s.host_pt_ad_clear_p, s.perm_random = ad_clear_p, ad_clear_p / 4, perm_random
    r = s.rng
    G = s.G
    procs = []
    for v in range(vms):
        vmid = v + 1
        vm = s.add_vm(vmid)
        s.add_space(vm, 1)
        for _ in range(regions):
            gl = r.choices(G.leaf_levels(), [50, 30, 15, 5][:len(G.leaf_levels())])[0]
            try:
                s.add_region(vm, 1, gl)
            except (MapConflict, MemoryError):
                pass
        if vmid == 1:
            s.special = special_targets(s, vm)
        if bad:
            s.add_bad_set(vm, 1)
        s.add_modes(vm, 1, 4)
        own = [t for t in s.targets if t.vmid == vmid and t.asid == 1]
        # asid 2: every table of asid 1 shared (one group, identical mappings)
        s.add_space(vm, 2, share_with=1)
        # asid 3: private copies of some of asid 1's pages (the same VA, another frame)
        s.add_space(vm, 3)
        for t in r.sample(own, min(copies, len(own))):
            va = t.gva & ~0xFFF
            if vm.spaces[3].lookup(va) is not None:
                continue                       # two targets in one page: copied once
            gpa = vm.gpa_alloc.alloc(0)
            vm.spaces[3].map(va, gpa, 0, **s.guest_leaf_kwargs())
            s.host_map_data(vm, gpa, 0)
            s._ok_target(vm, 3, t.gva)
        pc_bits = params.l1.pcBits
        roots = {a: vm.spaces[a].root >> 12 for a in (1, 2, 3)}
        bad1 = [t for t in s.bad if t.vmid == vmid and t.asid == 1]
        mine = [t for t in s.targets if t.vmid == vmid and t.asid == 3]
        modes = [t for t in s.mode_targets if t.vmid == vmid]
        procs += [
            proc(MODE_BOTH, vmid, 1, 1, 0, 0, roots[1], vm.hRoot, own + bad1),
            proc(MODE_BOTH, vmid, 2, 1, 0, 0, roots[2], vm.hRoot, own + bad1),
            proc(MODE_BOTH, vmid, 3, 1, 1, r.randrange(pc_bits + 1), roots[3], vm.hRoot,
                 mine + own[:2]),
            # the host's own address space: a host-unique asid and ccid
            proc(MODE_S1, vmid, vmid, vmid, 0, 0, vm.native[1].root >> 12, vm.hRoot,
                 [t for t in modes if t.mode == MODE_S1]),
            proc(MODE_S2, vmid, r.randrange(4), 0, 0, 0, 0, vm.hRoot,
                 [t for t in modes if t.mode == MODE_S2]),
        ]
    return s, [p for p in procs if p.targets]


def special_targets(s: Scenario, vm) -> dict:
    """Pages the traffic's prologue needs whatever the seed: "dclean", both leaves' D clear (a
    write after a read meets a clean entry); "rohost", a read-only host leaf under a writable
    guest page (a hit stage 2 refuses); "huge", a 512 GiB page where both formats have one."""
    keep = s.ad_clear_p, s.perm_random
    s.perm_random, out = False, {}
    s.ad_clear_p = 1.0
    out["dclean"] = s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1)[0]
    s.ad_clear_p = 0.0
    t = out["rohost"] = s.add_region(vm, 1, 0, host_mode="4k", n_addrs=1)[0]
    hpa, lvl, _, _ = vm.host.lookup(t.expect["gpa"])
    vm.host.poke(t.expect["gpa"], lvl, s.H.encode_leaf(hpa & ~0xFFF, lvl, w=0))
    if min(s.G.max_leaf_level(), s.H.max_leaf_level()) >= 3:
        try:
            out["huge"] = s.add_region(vm, 1, 3, host_mode="aligned", n_addrs=1)[0]
        except (MapConflict, MemoryError):
            pass
    s.ad_clear_p, s.perm_random = keep
    return out


def prologue(s: Scenario, procs) -> list:
    """Requests (and CTRL writes, ("ctrl", value)) that reach every path whatever the seed:
    a clean entry written, a group's entry used by the other process (a cross hit), a hit
    refused by stage 1 and one by stage 2, an L2 hit (the L1 disabled for the fill), the
    reserved command, bare, every bad target of a process, a 512 GiB page twice."""
    sp = s.special
    p1, p2 = (next(p for p in procs if (p.mode, p.vmid, p.asid) == (MODE_BOTH, 1, a))
              for a in (1, 2))

    def rd(p, t, **flags):
        return p.request(t, cmd=CMD_READ, user=0, flags={"sum": 1, **flags})

    def wr(p, t):
        return replace(rd(p, t), cmd=CMD_WRITE)

    out = [rd(p1, sp["dclean"]), wr(p1, sp["dclean"]), rd(p2, sp["dclean"]),
           rd(p1, sp["dclean"], sum=0, smap=1),            # a supervisor read of a user page
           ("ctrl", 2), rd(p1, sp["rohost"]), ("ctrl", 3), rd(p1, sp["rohost"]),
           wr(p1, sp["rohost"]), replace(rd(p1, sp["dclean"]), cmd=3),
           Request(va=0x5000, mode=MODE_BARE)]
    out += [p1.request(t, flags={"sum": 1}) for t in p1.targets if t.kind != "ok"]
    if "huge" in sp:
        out += [rd(p1, sp["huge"])] * 2
    return out


def random_flags(rng, family: str) -> dict:
    if family == "rv":
        return dict(sum=int(rng.random() < 0.8), mxr=int(rng.random() < 0.2),
                    vmxr=int(rng.random() < 0.2))
    return {f: int(rng.random() < 0.3) for f in ("wp", "smep", "smap", "nxe")}


def random_fence(rng, procs, bad: bool) -> Fence:
    p = rng.choice(procs)
    t = rng.choice(p.targets)
    if bad:
        kind = rng.randrange(len(FENCE_KINDS), FENCE_CODES)
    else:
        kind = rng.choice(FENCE_KINDS + tuple(X86_FENCES) + tuple(range(len(FENCE_KINDS))))
    return Fence(kind, va=t.gva, asid=p.asid, vmid=p.vmid, ccid=p.ccid, virt=rng.randrange(2))


# ----------------------------------------------------------------------------- the stream
class Traffic:
    """The random requests and fences after the prologue: a working set larger than the L1
    (L2 hits), reused (L1 hits), drifting (walks); every 97th item a fence (every 485th a bad
    code); 4 % bare requests (some beyond paBits); 20 % a write after the previous access;
    every privilege flag random (RISC-V's mxr too, since session 29's walker host check applies
    the HS-level MXR as the MMU's hit check does: docs/xlat-mmu.md M3)."""

    def __init__(self, params, scenario: Scenario, procs, rng):
        self.p, self.s, self.procs, self.rng = params, scenario, procs, rng
        self.hot: list = []
        self.prev = None

    def item(self, i: int, id_bits: int = 4):
        """The ``i``-th item: a Request (id ``i`` mod 2^id_bits) or a Fence."""
        rng, mask = self.rng, (1 << id_bits) - 1
        if i % 97 == 96:
            return random_fence(rng, self.procs, bad=i % 485 == 96)
        if rng.random() < 0.04:
            return Request(id=i & mask, va=rng.randrange(1 << (self.p.paBits + (i % 7 == 0))),
                           cmd=rng.randrange(3), mode=MODE_BARE, vmid=rng.randrange(4),
                           asid=rng.randrange(4))
        if self.prev is not None and rng.random() < 0.2:
            req = replace(self.prev, id=i & mask, cmd=CMD_WRITE)   # a write after an access
        else:
            if self.hot and rng.random() < 0.7:
                p, t = rng.choice(self.hot)
            else:
                p = rng.choice(self.procs)
                ok = [t for t in p.targets if t.kind == "ok"]
                t = rng.choice(ok if ok and rng.random() < 0.75 else p.targets)
                self.hot = (self.hot + [(p, t)])[-160:]
            cmd = t.cmd if rng.random() < 0.6 else rng.choice(
                (0, 0, 1, 1, 2, 3) if i % 50 == 0 else (0, 1, 2))
            user = t.user if rng.random() < 0.8 else rng.randrange(2)
            flags = random_flags(rng, self.s.G.family)
            req = p.request(t, id=i & mask, cmd=cmd, user=user, flags=flags)
        self.prev = req
        return req


# the covering fences of a changed leaf (docs/xlat-mmu.md "Fences"): the page kinds cover a
# 4 KiB leaf only (a superpage's entries are found by the broad kinds)
COVERING = {"native": (("sfence_all", "invpcid_all", "sfence_va"), 0),
            "guest": (("hfence_vvma_all", "invpcid_all", "hfence_vvma_va", "invlpg"), 1),
            "host": (("hfence_gvma_vmid", "hfence_gvma_all", "invept_single",
                      "hfence_gvma_gpa_vmid"), 1)}


def change_table(s: Scenario, procs, rng):
    """Remap one ok target's leaf (the stage-1-only leaf, the guest leaf or the host leaf) to a
    fresh frame of its size in the memory, as an OS or hypervisor does; returns (what, the
    Fence that covers it) or None when the drawn target cannot be changed."""
    p = rng.choice(procs)
    oks = [t for t in p.targets if t.kind == "ok"]
    if not oks:
        return None
    t = rng.choice(oks)
    vm = s.vms[p.vmid]
    if p.mode == MODE_S1:
        what, b, va, F = "native", vm.native[1], t.gva, s.G
    elif p.mode == MODE_S2 or rng.random() < 0.5:
        if p.mode == MODE_S2:
            gpa = t.gva
        else:
            g = vm.spaces[p.asid].lookup(t.gva)
            if g is None:
                return None
            gpa = g[0]
        what, b, va, F = "host", vm.host, gpa, s.H
    else:
        what, b, va, F = "guest", vm.spaces[p.asid], t.gva, s.G
    leaf = b.lookup(va)
    if leaf is None:
        return None
    lvl = leaf[1]
    try:
        if what == "guest":
            frame = vm.gpa_alloc.alloc(lvl)
            s.host_map_data(vm, frame, lvl, full=True)
        else:
            frame = s.hpa.alloc(lvl)
    except (MapConflict, MemoryError):
        return None
    b.poke(va, lvl, F.encode_leaf(frame, lvl))
    kinds, virt = COVERING[what]
    kind = rng.choice(kinds if lvl == 0 else kinds[:2])
    return what, Fence(kind, va=va, asid=p.asid, vmid=p.vmid, ccid=p.ccid, virt=virt)


def dirty_pool(procs, vmid: int) -> list:
    """(process, target) of every ok target of VM ``vmid`` that has a G-stage (the pages a
    hypervisor's dirty tracking sees)."""
    return [(p, t) for p in procs if p.vmid == vmid and p.mode in (MODE_BOTH, MODE_S2)
            for t in p.targets if t.kind == "ok"]


def clean_leaves(s: Scenario, procs, rng, k: int = 6, vmid: int | None = None):
    """A hypervisor's dirty-tracking pass (as with PML): D cleared in the host leaves (and the
    guest leaves) of ``k`` random ok targets of one VM (``vmid``, or a drawn one), then the
    fence that covers them (hfence.gvma vmid: every entry and walker cache entry of the VM).
    Returns the Fence, or None when the VM has nothing to clean."""
    if vmid is None:
        vmid = rng.choice(sorted(s.vms))
    vm = s.vms[vmid]
    pool = dirty_pool(procs, vmid)
    if not pool:
        return None
    for p, t in rng.sample(pool, min(k, len(pool))):
        gpa = t.gva
        if p.mode == MODE_BOTH:
            space = vm.spaces[p.asid]
            g = space.lookup(t.gva)
            if g is None:
                continue
            gpa = g[0]
            loc = space.entry_location(t.gva, g[1])
            h = vm.host.lookup(loc[0]) if loc is not None else None
            if h is not None:
                _clear_d(s.mem, h[0] + loc[1] * 8, s.G)
        h = vm.host.lookup(gpa)
        loc = vm.host.entry_location(gpa, h[1]) if h is not None else None
        if loc is not None:
            _clear_d(s.mem, loc[0] + loc[1] * 8, s.H)
    return Fence("hfence_gvma_vmid", vmid=vmid)


def _clear_d(mem, addr: int, F) -> None:
    mem.write(addr, mem.read(addr) & ~F.d_mask)


def dirty_burst(s: Scenario, procs, params, rng, vmid: int, events: int, limit: int = 24) -> list:
    """A burst of writes to pages of VM ``vmid`` whose walks set a D bit (after a D-clearing
    pass, ``clean_leaves``), each walk a dirty event for PmlLogger or more, until ``events``
    events (at most ``limit`` requests): decided by the walker model alone on a copy of the
    memory, the writes in order (a page written twice gives one event). With a short PML
    buffer and a slow hypervisor this is what fills a context's queue and stalls a walk."""
    mem = s.mem.copy()
    out, n = [], 0
    pool = dirty_pool(procs, vmid)
    for p, t in rng.sample(pool, len(pool)):
        if n >= events or len(out) >= limit:
            break
        req = p.request(t, cmd=CMD_WRITE, flags={"sum": 1})
        res = walk(mem, params.walker, walk_request(req))
        if not res.fault and res.dirty:
            out.append(req)
            n += len(res.dirty)
    return out
