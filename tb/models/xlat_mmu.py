"""Reference model of XlatMmu, composed of the blocks' reference models (docs/xlat-mmu.md is
the contract; its "Decided in the model" section lists what this file decides).

Why composed and not new: the MMU's behaviour is the blocks' behaviour plus the glue the docs
page decides (the TLB context tag, which block a fence reaches, what a fill carries). Each
block's model is already checked against its block, so only the glue is written here:

* L1 and L2: two ``models.babelfish.BabelFishModel`` with ``vmidBits`` = the MMU's + 2, their
  VMID tag holding the context ``ctx = {modeClass, vmid}`` (``ctx_of``);
* the walker: ``models.walker.walk`` on the shared ``SparseMemory`` (cache-less: the RTL's
  walker caches change which memory accesses happen, never a translation, as long as software
  fences what it changes);
* the permission check of a hit: the walker's own two checks (``WalkRequest.guest_denies``,
  ``models.walker.host_denies``) on the entry's stored stage-1 and stage-2 permissions;
* PmlLogger: ``models.pml.PmlModel`` fed with the walks' dirty events, its writes issued at
  once by its reference arbiter into the same memory.

Transaction API (the cocotb scoreboard's):

    mmu = XlatMmuModel(mmu_rv(), mem=scenario.mem)       # policy=MmuPolicy.rtl(): the RTL's
    resp = mmu.request(Request(id=1, va=..., cmd=0, mode=MODE_BOTH, asid=..., vmid=...,
                               s1Root=..., s2Root=...))   # Response: ppn, fault, source, ...
    mmu.last                  # Outcome of that request: lookups, walk, fills, writes, events
    plan = mmu.fence(Fence("hfence_gvma_vmid", vmid=2))   # FencePlan: what each block got
    mmu.csr(addr, write, wdata)     # PmlLogger's registers (below 0x8000), the MMU's CTRL
    mmu.counters()            # mmu_*, l1_*, l2_*, pml_* counters

Order (docs "Decided in the model"): the model serves each request whole, lookups, walk and
fills, before the next one, in acceptance order, and a fence after every earlier request (the
RTL drains before a fence). The RTL of session 28 serves one request at a time, so ``source``
and the counters are exact; the translation of a response (``Response.translation``) would
not depend on the order if the RTL overlapped requests, which level answers would.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from . import privcheck
from .babelfish import PAGE_LOW_BITS, PS_1G, BabelFishModel, BabelFishParams, LookupResult
from .pml import COUNTER_MAX, PmlModel, PmlParams
from .ptformats import (CMD_RESERVED, CMD_WRITE, MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2)
from .walker import F_ADDR, SparseMemory, WalkerConfig, WalkRequest, WalkResult, host_denies, walk

SRC_L1, SRC_L2, SRC_WALK = 0, 1, 2
SOURCE_NAMES = {SRC_L1: "L1", SRC_L2: "L2", SRC_WALK: "walk"}

# ctx = {modeClass, vmid}: modeClass is the request's mode (docs "Contexts in the TLBs")
CLASS_S1, CLASS_S2, CLASS_BOTH = MODE_S1, MODE_S2, MODE_BOTH

# BabelFish invalidation kinds with a VMID tag (docs/babelfish-tlb.md "Invalidation")
INV_ALL, INV_PCID, INV_CCID, INV_PAGE_PCID, INV_PAGE_CCID, INV_VMID, INV_PAGE_VMID = \
    0, 2, 3, 4, 5, 6, 7
# NestedWalker flush kinds (docs/nested-walker.md "Caches")
FLUSH_ALL, FLUSH_VMID, FLUSH_VMID_ASID = 0, 1, 2

# Fence kinds, by code (the `fence_bits_kind` encoding of xlat.mmu.FenceKind, session 28);
# codes 13 to 15 are bad input. Operands: va, asid, vmid, ccid.
FENCE_KINDS = (
    "sfence_all", "sfence_asid", "sfence_va", "sfence_va_asid",
    "hfence_vvma_all", "hfence_vvma_asid", "hfence_vvma_va", "hfence_vvma_va_asid",
    "hfence_gvma_all", "hfence_gvma_vmid", "hfence_gvma_gpa_vmid",
    "ccid_all", "ccid_page",
)
FENCE_CODES = 16
# x86's instructions as the kinds they are sent as: (outside a VM, inside one with EPT)
X86_FENCES = {
    "invlpg": ("sfence_va", "hfence_vvma_va"),
    "invpcid_addr": ("sfence_va_asid", "hfence_vvma_va_asid"),
    "invpcid_single": ("sfence_asid", "hfence_vvma_asid"),
    "invpcid_all": ("sfence_all", "hfence_vvma_all"),
    "invept_single": ("hfence_gvma_vmid", "hfence_gvma_vmid"),
    "invept_global": ("hfence_gvma_all", "hfence_gvma_all"),
}
FENCE_CODE = {name: i for i, name in enumerate(FENCE_KINDS)}


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class XlatMmuParams:
    """The blocks' parameters and the MMU's widths (mirrors the RTL's case class).

    ``l1`` / ``l2``: BabelFish parameters whose ``vmidBits`` is ``vmidBits`` + 2 (the ctx tag)
    and whose VPN covers every mode's address; ``walker``: the walker's formats, A/D mode and
    paBits (its cache sizes change no translation: ``walkerParams`` keeps them for the record);
    ``pml``: PmlLogger's."""
    l1: BabelFishParams
    l2: BabelFishParams
    walker: WalkerConfig
    pml: PmlParams
    vmidBits: int = 14
    asidBits: int = 16
    ccidBits: int = 12
    walkerParams: tuple = ()

    def __post_init__(self):
        need_vpn = max(self.walker.G.input_bits, self.walker.gpaBits) - 12
        for name in ("l1", "l2"):
            b: BabelFishParams = getattr(self, name)
            if b.vmidBits != self.vmidBits + 2:
                raise ValueError(f"{name}.vmidBits must be vmidBits + 2 = {self.vmidBits + 2}, "
                                 f"got {b.vmidBits}")
            if b.vpnBits < need_vpn:
                raise ValueError(f"{name}.vpnBits must be >= {need_vpn} (the widest address "
                                 f"of a mode), got {b.vpnBits}")
            if b.ppnBits != self.walker.paBits - 12:
                raise ValueError(f"{name}.ppnBits must be paBits - 12 = "
                                 f"{self.walker.paBits - 12}, got {b.ppnBits}")
            if b.pcidBits < self.asidBits or b.ccidBits < self.ccidBits:
                raise ValueError(f"{name}: pcidBits / ccidBits must hold asidBits / ccidBits")
        if not 1 <= self.vmidBits <= 14:
            raise ValueError(f"vmidBits must be 1..14 (the TLBs' tag is vmidBits + 2 <= 16), "
                             f"got {self.vmidBits}")
        if not 1 <= self.pml.contexts <= 1 << self.vmidBits:
            raise ValueError(f"pmlContexts must be 1..{1 << self.vmidBits} (2^vmidBits), got "
                             f"{self.pml.contexts}")

    @property
    def paBits(self) -> int:
        return self.walker.paBits


def make_params(*, guest: str = "sv48", host: str = "sv48x4", paBits: int = 52,
                vmidBits: int = 14, asidBits: int = 16, ccidBits: int = 12, pcBits: int = 32,
                l1: dict | None = None, l2: dict | None = None, sharing: bool = True,
                replacement: str = "plru", adUpdate: str = "hardware", pmlContexts: int = 8,
                pmlEntries: int = 512, pmlDedupEntries: int = 0, pmlIdBits: int = 4,
                walkerParams: dict | None = None) -> XlatMmuParams:
    """An XlatMmuParams as xlat.mmu.XlatMmuParams derives the blocks' (defaults: mmu_rv):
    both TLBs vpnBits = max(guest VA bits, gpaBits) - 12, ppnBits = paBits - 12, vmidBits =
    vmidBits + 2, pcidBits = asidBits; PmlLogger vaBits = 64, vmidBits / asidBits the MMU's.
    ``l1`` / ``l2`` give the geometry (sets, ways, superpageEntries, storage, latency).
    ``sharing``: the TLBs' (the RTL of session 28 builds them with sharing = false, its
    decided 9; the model's default policy shares)."""
    w = WalkerConfig(guest=guest, host=host, adUpdate=adUpdate, paBits=paBits)
    vpn = max(w.G.input_bits, w.gpaBits) - 12
    common = dict(vpnBits=vpn, ppnBits=paBits - 12, pcidBits=asidBits, ccidBits=ccidBits,
                  pcBits=pcBits, vmidBits=vmidBits + 2, sharing=sharing, replacement=replacement)
    # vaBits 64: PmlLogger takes the walker's 52-bit GVA page number whole (the RTL's)
    pml = PmlParams(contexts=pmlContexts, paBits=paBits, vaBits=64,
                    entries=pmlEntries, dedupEntries=pmlDedupEntries, idBits=pmlIdBits,
                    vmidBits=vmidBits, asidBits=asidBits)
    return XlatMmuParams(
        l1=BabelFishParams(**{**common, **(l1 or L1_GEOMETRY)}),
        l2=BabelFishParams(**{**common, **(l2 or L2_GEOMETRY)}), walker=w, pml=pml,
        vmidBits=vmidBits, asidBits=asidBits, ccidBits=ccidBits,
        walkerParams=tuple(sorted((walkerParams or {}).items())))


# the L1 / L2 geometry of babelfish_l1 / babelfish_l2 (the RTL's l1* / l2* defaults)
L1_GEOMETRY = dict(sets=16, ways=4, superpageEntries=8, storage="flops", latency=4)
L2_GEOMETRY = dict(sets=128, ways=12, superpageEntries=16, storage="sram", latency=6)


def mmu_rv(**kw) -> XlatMmuParams:
    """RISC-V with the H extension: Sv48 over Sv48x4 (one format pair per walker instance),
    the RTL's defaults (xlat.mmu.XlatMmuConfigs)."""
    return make_params(**kw)


def mmu_x86(**kw) -> XlatMmuParams:
    """x86-64 4-level paging over EPT4, 12-bit PCIDs."""
    return make_params(**{**dict(guest="x86_64_4", host="ept4", asidBits=12), **kw})


def mmu_formal(**kw) -> XlatMmuParams:
    """Small: Sv39 over Sv39x4, paBits 41, 2-bit asid / vmid / ccid, 3 PC bits, L1 2 x 2 + 2,
    L2 4 x 2 + 2 in flops, 2 PML contexts of 4 entries (the RTL's mmu_formal)."""
    tiny = dict(superpageEntries=2, storage="flops", latency=4)
    a = dict(guest="sv39", host="sv39x4", paBits=41, vmidBits=2, asidBits=2, ccidBits=2,
             pcBits=3, l1=dict(sets=2, ways=2, **tiny), l2=dict(sets=4, ways=2, **tiny),
             pmlContexts=2, pmlEntries=4, pmlIdBits=2,
             walkerParams=dict(guestPwcEntries=2, hostPwcEntries=2, nestedTlbEntries=2))
    return make_params(**{**a, **kw})


CONFIGS = {"mmu_rv": mmu_rv, "mmu_x86": mmu_x86, "mmu_formal": mmu_formal}


# ----------------------------------------------------------------------------- transactions
@dataclass
class Request:
    """The `req` channel (spec port table). ``priv`` 1 = user."""
    id: int = 0
    va: int = 0
    cmd: int = 0
    priv: int = 0
    mode: int = MODE_BOTH
    asid: int = 0
    vmid: int = 0
    ccid: int = 0
    pcIdx: int = 0
    pcIdxValid: int = 0
    s1Root: int = 0
    s2Root: int = 0
    sum: int = 0
    mxr: int = 0
    vmxr: int = 0
    wp: int = 0
    smep: int = 0
    smap: int = 0
    nxe: int = 0


# the response's fault kinds (the spec's list) and the walker's codes they come from
FAULT_NONE, FAULT_PAGE, FAULT_GUEST_PAGE, FAULT_ACCESS, FAULT_RESERVED = range(5)


def mmu_fault(walker_fault: int, stage: int) -> int:
    """The response's kind of a walker fault: 1 -> page fault, 2 -> guest-page fault / EPT
    violation, 3 (bus error) -> access fault, 4 -> reserved; 5 (address out of range) -> a page
    fault of a guest address (stage 0), a guest-page fault of a GPA (stage 1)."""
    if walker_fault == F_ADDR:
        return FAULT_PAGE if stage == 0 else FAULT_GUEST_PAGE
    return walker_fault


@dataclass
class Response:
    """The `resp` channel (``ppn`` is `resp_bits_pa`, the frame of the 4 KiB page holding va).
    ``fault``: FAULT_* (``mmu_fault``); ``faultStage``, ``faultGpa`` the walker's."""
    id: int
    ppn: int = 0
    pageSize: int = 0
    fault: int = 0
    faultStage: int = 0
    faultGpa: int = 0
    source: int = SRC_WALK

    @property
    def translation(self) -> tuple:
        """Everything but id and source: what no timing may change."""
        return (self.ppn, self.pageSize, self.fault, self.faultStage, self.faultGpa)


@dataclass(frozen=True)
class Fence:
    """The `fence` channel: ``kind`` a code (0..15), a name of FENCE_KINDS, or an x86 name of
    X86_FENCES, which ``virt`` turns into a kind (0: outside a VM, 1: in VM ``vmid``); ``va``
    the byte address of the va / gpa kinds (the port `fence_bits_vpn` is ``va >> 12``)."""
    kind: object
    va: int = 0
    asid: int = 0
    vmid: int = 0
    ccid: int = 0
    virt: int = 0

    @property
    def code(self) -> int:
        k = self.kind
        if isinstance(k, str):
            k = FENCE_CODE[X86_FENCES[k][self.virt] if k in X86_FENCES else k]
        return k


@dataclass
class FencePlan:
    """What a fence sends to the blocks: TLB invalidations (each to L1 and L2: kind, ctx
    (the TLBs' vmid field), vpn, pcid, ccid) and walker flushes (kind, vmid, asid)."""
    kind: str
    bad: bool = False
    tlb: list = field(default_factory=list)      # [dict(kind, vmid, vpn, pcid, ccid)]
    walker: list = field(default_factory=list)   # [dict(kind, vmid, asid)]


@dataclass
class Outcome:
    """Everything the model did for one request (scoreboard, coverage)."""
    req: Request
    resp: Response
    ctx: int | None = None
    l1: LookupResult | None = None
    l2: LookupResult | None = None
    unusable: list = field(default_factory=list)   # [(level, reason)] hits that could not answer
    walk: WalkResult | None = None
    fills: list = field(default_factory=list)      # [(level, fill dict, FillResult)]
    dirty: list = field(default_factory=list)      # the walk's DirtyEvents
    pml: list = field(default_factory=list)        # [(kind, Event)] as PmlModel classified them
    mem_writes: list = field(default_factory=list)  # [(addr, wdata, wmask, "ad" | "pml")]
    stalled: bool = False   # a dirty event waits for PmlLogger: the RTL answers after the stall


# the MMU's own perf_* the model counts (the RTL's names; badMemResps, badCsrs and
# busyCycles are the RTL's business): a hit refused by the check or the dirty rule counts once
# per level
COUNTERS = ("requests", "bare", "l1Hits", "l2Hits", "walks", "permMisses", "dirtyMisses",
            "rangeWalks", "pageFaults", "guestPageFaults", "accessFaults", "reservedFaults",
            "fences", "badFences", "badCmds")
FAULT_COUNTERS = {FAULT_PAGE: "pageFaults", FAULT_GUEST_PAGE: "guestPageFaults",
                  FAULT_ACCESS: "accessFaults", FAULT_RESERVED: "reservedFaults"}
CSR_MMU = 0x8000            # the MMU's CSR window (PmlLogger's registers below it)
CSR_CTRL = CSR_MMU          # bit 0 L1 enable, bit 1 L2 enable (reset 3)


@dataclass(frozen=True)
class MmuPolicy:
    """The points where the docs page and the RTL differ (docs "Decided in the model"); none
    changes a translation, only which level answers and the counters.

    * ``hit_perm``: "stages" (docs "Structure": an entry keeps both stages' permissions and a
      hit is checked as the walk checks them) or "and" (RTL decided 2: one permission, the AND
      of both, checked with PrivCheck's stage 1 and stage 2 with U = 1);
    * ``fill_dirty``: "leaves" (D = both leaves' D after the walk) or "write" (RTL decided 3:
      D = the walk was a write);
    * ``sharing``: fills of a process without private copies are shared in its ccid group
      (the model's), or every fill is private (RTL decided 9; build the TLBs with
      ``sharing=False`` as well).

    (M7, a leaf above 1 GiB used as its 1 GiB parts, was a fourth point until session 30: the
    RTL takes it too, so it is no policy any more.)"""
    hit_perm: str = "stages"
    fill_dirty: str = "leaves"
    sharing: bool = True

    def __post_init__(self):
        if self.hit_perm not in ("stages", "and"):
            raise ValueError(f"hit_perm must be 'stages' or 'and', got {self.hit_perm!r}")
        if self.fill_dirty not in ("leaves", "write"):
            raise ValueError(f"fill_dirty must be 'leaves' or 'write', got {self.fill_dirty!r}")

    @classmethod
    def rtl(cls) -> "MmuPolicy":
        """The RTL's choices (its decided 2, 3 and 9 of session 28). Its G-stage hit check
        applies the HS-level MXR, as the walker's host check does since session 29
        (``host_denies`` with ``mxr``)."""
        return cls(hit_perm="and", fill_dirty="write", sharing=False)


class PmlStall(Exception):
    """A request or fence offered while a walk waits for `dirty_ready` (its dirty event found
    its PmlLogger context's queue full): the RTL serving one request at a time accepts nothing
    until the hypervisor frees the queue through the CSRs (``XlatMmuModel.stalled``)."""


# ----------------------------------------------------------------------------- the model
class XlatMmuModel:
    def __init__(self, params: XlatMmuParams, mem: SparseMemory | None = None, *,
                 policy: MmuPolicy | None = None, sharing: bool | None = None,
                 l1_enable: bool = True, l2_enable: bool = True):
        self.p = params
        self.mem = mem if mem is not None else SparseMemory()
        self.cfg = params.walker
        self.G, self.H = self.cfg.G, self.cfg.H
        self.policy = policy or MmuPolicy()
        if sharing is not None:
            self.policy = replace(self.policy, sharing=sharing)
        self.sharing = self.policy.sharing
        # MMU control (CTRL at CSR_CTRL): each level's enable
        self.l1_enable, self.l2_enable = l1_enable, l2_enable
        self.l1 = BabelFishModel(params.l1)
        self.l2 = BabelFishModel(params.l2)
        self.pml = PmlModel(params.pml)
        self.vmid_mask = (1 << params.vmidBits) - 1
        self.asid_mask = (1 << params.asidBits) - 1
        self.ccid_mask = (1 << params.ccidBits) - 1
        self.vpn_mask = (1 << params.l1.vpnBits) - 1
        self.pc_all = (1 << params.l1.pcBits) - 1
        self.c = {n: 0 for n in COUNTERS}
        self.faults = {}                       # fault code -> responses with it
        self.sources = {SRC_L1: 0, SRC_L2: 0, SRC_WALK: 0}
        self.last: Outcome | None = None
        self.fence_log: list[FencePlan] = []
        self.mem_writes: list = []             # every write of the memory port, in order
        self.stalled: list = []                # [(Outcome, DirtyEvent)] waiting for dirty_ready

    # ------------------------------------------------------------------ contexts
    def ctx(self, mode_class: int, vmid: int) -> int:
        """The TLBs' vmid field: {modeClass (2 bits), vmid (vmidBits)}."""
        return (mode_class << self.p.vmidBits) | (vmid & self.vmid_mask)

    def ctx_of(self, req: Request) -> tuple[int, int, int]:
        """(ctx, pcid, ccid) of a request: the docs' "Contexts" table."""
        if req.mode == MODE_S1:
            return self.ctx(CLASS_S1, 0), req.asid & self.asid_mask, req.ccid & self.ccid_mask
        if req.mode == MODE_S2:
            return self.ctx(CLASS_S2, req.vmid), 0, 0
        return (self.ctx(CLASS_BOTH, req.vmid), req.asid & self.asid_mask,
                req.ccid & self.ccid_mask)

    def walk_request(self, req: Request) -> WalkRequest:
        """The walker's request: stage-1-only walks carry vmid 0 (the "Fences" table)."""
        return WalkRequest(
            id=req.id, gva=req.va, asid=req.asid & self.asid_mask,
            vmid=0 if req.mode == MODE_S1 else req.vmid & self.vmid_mask, gRoot=req.s1Root,
            hRoot=req.s2Root, cmd=req.cmd, user=req.priv, mode=req.mode,
            **{f"flags_{f}": getattr(req, f) for f in privcheck.FLAGS})

    def address_ok(self, req: Request) -> bool:
        """The mode's address check (the walker's first): an address the TLBs' VPN cannot hold
        exactly never looks them up."""
        if req.mode == MODE_S2:
            return 0 <= req.va < (1 << self.cfg.gpaBits)
        return self.G.address_ok(req.va)

    # ------------------------------------------------------------------ the request path
    def request(self, req: Request) -> Response:
        return self.serve(req).resp

    def serve(self, req: Request) -> Outcome:
        self._check_stall(f"request {req.id}")
        self._count("requests")
        self.pml.now += 1
        if req.cmd == CMD_RESERVED:
            # bad input, in every mode: answered at once (fault 4, as the walker's), no lookup
            self._count("badCmds")
            out = Outcome(req, Response(req.id, fault=FAULT_RESERVED, source=SRC_L1))
        elif req.mode == MODE_BARE:
            out = Outcome(req, self._bare(req))
        else:
            out = self._translate(req)
        r = out.resp
        self.sources[r.source] += 1
        if r.fault:
            self.faults[r.fault] = self.faults.get(r.fault, 0) + 1
            self._count(FAULT_COUNTERS[r.fault])
        self.last = out
        return out

    def _bare(self, req: Request) -> Response:
        """pa = va, answered as an L1-class response (docs "Structure"); an address beyond
        paBits is an access fault (no such physical address)."""
        self._count("bare")
        r = Response(req.id, source=SRC_L1)
        if req.va >> self.p.paBits:
            r.fault = FAULT_ACCESS
        else:
            r.ppn = req.va >> 12
        return r

    def _lookup_args(self, req: Request, ctx: int, pcid: int, ccid: int) -> dict:
        return dict(vpn=(req.va >> 12) & self.vpn_mask, pcid=pcid, ccid=ccid, vmid=ctx,
                    pcIdx=req.pcIdx, pcIdxValid=req.pcIdxValid, cmd=req.cmd, user=req.priv)

    def unusable(self, req: Request, wreq: WalkRequest, lr: LookupResult) -> str | None:
        """Why a hit cannot answer (None: it answers): the permission check of the entry, by
        mode (stage 1, then stage 2), then the dirty rule (a write through an entry whose D is
        clear). ``hit_perm`` "stages": the walker's own checks on the entry's two stages'
        permissions; "and": PrivCheck's on the AND of both (the RTL's)."""
        e = lr.entry
        g, h = (e.perm_r, e.perm_w, e.perm_x, e.perm_u), e.payload
        if self.policy.hit_perm == "and":
            g = tuple(x & y for x, y in zip(g, h))
            a = privcheck.Access(cmd=req.cmd, user=bool(req.priv),
                                 **{f: bool(getattr(req, f)) for f in privcheck.FLAGS})
            stage2 = privcheck.RV_GSTAGE if self.H.family == "rv" else privcheck.EPT
            s2_denies = privcheck.denies(stage2, a, privcheck.Perm(*map(bool, g[:3]), u=True))
        else:
            s2_denies = host_denies(self.H.family, h, req.cmd, mxr=req.mxr)
        if req.mode != MODE_S2 and wreq.guest_denies(self.G.family, g):
            return "stage1"
        if req.mode != MODE_S1 and s2_denies:
            return "stage2"
        if req.cmd == CMD_WRITE and not e.dirty:
            return "clean"
        return None

    def _translate(self, req: Request) -> Outcome:
        ctx, pcid, ccid = self.ctx_of(req)
        out = Outcome(req, Response(req.id), ctx=ctx)
        wreq = self.walk_request(req)
        if not self.address_ok(req):
            self._count("rangeWalks")
        else:
            args = self._lookup_args(req, ctx, pcid, ccid)
            for level, tlb, on in ((SRC_L1, self.l1, self.l1_enable),
                                   (SRC_L2, self.l2, self.l2_enable)):
                if not on:
                    continue
                lr = tlb.lookup(**args)
                if level == SRC_L1:
                    out.l1 = lr
                else:
                    out.l2 = lr
                if not lr.resp["hit"]:
                    continue
                why = self.unusable(req, wreq, lr)
                if why is not None:
                    out.unusable.append((level, why))
                    self._count("dirtyMisses" if why == "clean" else "permMisses")
                    continue
                self._count("l1Hits" if level == SRC_L1 else "l2Hits")
                if level == SRC_L2 and self.l1_enable:
                    self._fill(out, SRC_L1, self._fill_from_l2(req, ctx, pcid, ccid, lr))
                out.resp.ppn, out.resp.pageSize = lr.resp["ppn"], lr.resp["pageSize"]
                out.resp.source = level
                return out
        self._walk(req, wreq, out, ctx, pcid, ccid)
        return out

    # ------------------------------------------------------------------ walks and fills
    def _walk(self, req, wreq, out: Outcome, ctx, pcid, ccid):
        self._count("walks")
        res = walk(self.mem, self.cfg, wreq)
        out.walk = res
        r = out.resp
        for a in res.writes:
            w = (a.addr, a.wdata, a.wmask, "ad")
            out.mem_writes.append(w)
            self.mem_writes.append(w)
        if res.fault:
            r.faultStage, r.faultGpa = res.resp["faultStage"], res.resp["faultGpa"]
            r.fault = mmu_fault(res.resp["fault"], r.faultStage)
        else:
            # a page above 1 GiB (a Sv48 / Sv48x4 root leaf) is used as its 1 GiB parts (M7:
            # BabelFishTlb holds 4K / 2M / 1G)
            r.ppn, r.pageSize = res.resp["ppn"], min(res.resp["pageSize"], PS_1G)
            fill = self._fill_from_walk(req, ctx, pcid, ccid, res, r.pageSize)
            for level, tlb, on in ((SRC_L2, self.l2, self.l2_enable),
                                   (SRC_L1, self.l1, self.l1_enable)):
                if on:
                    self._fill(out, level, fill)
        out.dirty = list(res.dirty)
        for d in res.dirty:
            self._pml_event(out, d)

    def _owner(self, req: Request, mode_class: int) -> dict:
        """The fill's class: a stage-2-only ctx's entries are global (VA = GPA, the same for
        every process of the VM); with sharing, a process without private copies (pcIdxValid
        = 0) fills shared entries whose PC mask excludes every process that has some (pc all
        ones); else private."""
        if mode_class == CLASS_S2:
            return dict(glob=1, own=1, pc=0)
        if self.sharing and not req.pcIdxValid:
            return dict(glob=0, own=0, pc=self.pc_all)
        return dict(glob=0, own=1, pc=0)

    def _fill_from_walk(self, req, ctx, pcid, ccid, res: WalkResult, page_size: int) -> dict:
        low = PAGE_LOW_BITS[page_size]
        g, h = res.gperm, res.hperm
        if self.policy.hit_perm == "and":
            g = tuple(x & y for x, y in zip(g, h))   # the RTL's one permission: the TLBs'
        return dict(vpn=(req.va >> 12) & self.vpn_mask, ppn=res.resp["ppn"] & ~((1 << low) - 1),
                    pageSize=page_size, perm_r=g[0], perm_w=g[1], perm_x=g[2], perm_u=g[3],
                    dirty=int(res.leaf_dirty if self.policy.fill_dirty == "leaves"
                              else req.cmd == CMD_WRITE), pcid=pcid, ccid=ccid, vmid=ctx,
                    payload=tuple(h), **self._owner(req, ctx >> self.p.vmidBits))

    def _fill_from_l2(self, req, ctx, pcid, ccid, lr: LookupResult) -> dict:
        """The L1 fill of an L2 hit: the L2 entry as its response shows it (frame, size, both
        stages' permissions, D, shared or not) for the requesting process."""
        rs = lr.resp
        low = PAGE_LOW_BITS[rs["pageSize"]]
        mode_class = ctx >> self.p.vmidBits
        if mode_class == CLASS_S2:
            owner = dict(glob=1, own=1, pc=0)
        elif rs["shared"]:
            owner = dict(glob=0, own=0, pc=self.pc_all)
        else:
            owner = dict(glob=0, own=1, pc=0)
        return dict(vpn=(req.va >> 12) & self.vpn_mask, ppn=rs["ppn"] & ~((1 << low) - 1),
                    pageSize=rs["pageSize"], perm_r=rs["perm_r"], perm_w=rs["perm_w"],
                    perm_x=rs["perm_x"], perm_u=rs["perm_u"], dirty=rs["dirty"], pcid=pcid,
                    ccid=ccid, vmid=ctx, payload=lr.entry.payload, **owner)

    def _fill(self, out: Outcome, level: int, fill: dict):
        tlb = self.l1 if level == SRC_L1 else self.l2
        out.fills.append((level, fill, tlb.fill(**fill)))

    # ------------------------------------------------------------------ PML
    def _pml_event(self, out: Outcome, d):
        """A walk's dirty event: accepted unless its context's queue is full (PmlLogger's
        `dirty_ready`); then it and every later one of the walk wait (``stalled``)."""
        if self.stalled or self.pml.queue_full(d.vmid):
            out.stalled = True
            self.stalled.append((out, d))
            return
        out.pml.append(self.pml.accept(d.vmid, d.gpa, d.gva, d.asid))
        self._pml_drain(out)

    def _check_stall(self, what: str):
        if self.stalled:
            out, d = self.stalled[0]
            raise PmlStall(f"{what} offered while request {out.req.id}'s walk waits for "
                           f"PmlLogger context {d.vmid}'s queue (dirty event gpa {d.gpa:#x})")

    def _unstall(self):
        """Accept the waiting dirty events the queues now take, in order."""
        while self.stalled and not self.pml.queue_full(self.stalled[0][1].vmid):
            out, d = self.stalled.pop(0)
            out.pml.append(self.pml.accept(d.vmid, d.gpa, d.gva, d.asid))
            self._pml_drain(out)

    def _pml_drain(self, out: Outcome | None = None):
        """Issue every write the logger may issue now (its round robin), into the memory."""
        while True:
            w = self.pml.issue()
            if w is None:
                return
            self.mem.write(w.addr, w.data)
            rec = (w.addr, w.data, 0xFF, "pml")
            self.mem_writes.append(rec)
            if out is not None:
                out.mem_writes.append(rec)
            self.pml.response(w.id, 0)

    def csr(self, addr: int, write: int, wdata: int = 0) -> tuple[int, int]:
        """PmlLogger's registers below CSR_MMU (a write may free held log parts), and the
        MMU's CTRL (the counters are ``counters()``: their CSR order is the RTL manifest's)."""
        if addr == CSR_CTRL:
            if write:
                self.l1_enable, self.l2_enable = bool(wdata & 1), bool(wdata & 2)
                return 0, 0
            return int(self.l1_enable) | int(self.l2_enable) << 1, 0
        if addr >= CSR_MMU:
            raise ValueError(f"CSR {addr:#x}: the MMU's counters are not modelled as CSRs")
        r = self.pml.csr(addr, write, wdata)
        self._pml_drain()
        self._unstall()
        return r

    # ------------------------------------------------------------------ fences
    def fence_plan(self, f: Fence) -> FencePlan:
        """The docs' "Fences" table: each TLB invalidation (sent to L1 and L2 alike) and each
        walker flush of a fence. A code that is no kind acts as hfence.gvma x0, x0 (every entry
        of every block) and is counted."""
        code = f.code
        bad = not 0 <= code < len(FENCE_KINDS)
        plan = FencePlan(FENCE_KINDS[8] if bad else FENCE_KINDS[code], bad=bad)
        vmid, asid = f.vmid & self.vmid_mask, f.asid & self.asid_mask
        vpn = (f.va >> 12) & self.vpn_mask
        host, guest = self.ctx(CLASS_S1, 0), self.ctx(CLASS_BOTH, vmid)

        def tlb(kind, ctx, **kw):
            plan.tlb.append(dict(kind=kind, vmid=ctx, vpn=kw.get("vpn", 0),
                                 pcid=kw.get("pcid", 0), ccid=kw.get("ccid", 0)))

        def flush(kind, v=0, a=0):
            plan.walker.append(dict(kind=kind, vmid=v, asid=a))

        n = plan.kind
        if n.startswith(("sfence_", "hfence_vvma_")):
            # stage 1: the host's own contexts (vmid 0 at the walker) or VM vmid's guests
            ctx, v = (host, 0) if n.startswith("sfence_") else (guest, vmid)
            which = n.split("_", 1)[1].removeprefix("vvma_")
            if which == "all":
                tlb(INV_VMID, ctx)
                flush(FLUSH_VMID, v)
            elif which == "asid":
                tlb(INV_PCID, ctx, pcid=asid)
                flush(FLUSH_VMID_ASID, v, asid)
            elif which == "va":
                tlb(INV_PAGE_VMID, ctx, vpn=vpn)
                flush(FLUSH_VMID, v)
            else:                                    # va + asid
                tlb(INV_PAGE_PCID, ctx, vpn=vpn, pcid=asid)
                flush(FLUSH_VMID_ASID, v, asid)
        elif n in ("hfence_gvma_vmid", "hfence_gvma_gpa_vmid"):
            # a combined entry is tagged by its GVA: the VM's entries go, both classes
            tlb(INV_VMID, guest)
            tlb(INV_VMID, self.ctx(CLASS_S2, vmid))
            flush(FLUSH_VMID, vmid)
        elif n.startswith("ccid_"):
            # a fence names no mode: both classes whose entries have a ccid
            kind = INV_CCID if n == "ccid_all" else INV_PAGE_CCID
            for ctx in (host, guest):
                tlb(kind, ctx, vpn=vpn if kind == INV_PAGE_CCID else 0,
                    ccid=f.ccid & self.ccid_mask)
        else:                                        # hfence_gvma_all (and bad codes)
            tlb(INV_ALL, 0)
            flush(FLUSH_ALL)
        return plan

    def fence(self, f: Fence) -> FencePlan:
        """Accepted after every earlier request ended (the drain); applied to both TLBs (the
        walker model has no cache: its flushes are recorded in the plan only)."""
        self._check_stall("a fence")
        plan = self.fence_plan(f)
        self._count("fences")
        if plan.bad:
            self._count("badFences")
        for inv in plan.tlb:
            self.l1.inval(**inv)
            self.l2.inval(**inv)
        self.fence_log.append(plan)
        return plan

    # ------------------------------------------------------------------ counters
    def _count(self, name: str) -> None:
        self.c[name] = min(COUNTER_MAX, self.c[name] + 1)     # 32-bit, saturating

    def counters(self) -> dict:
        out = {f"mmu_{k}": v for k, v in self.c.items()}
        for prefix, d in (("l1", self.l1.counters), ("l2", self.l2.counters),
                          ("pml", self.pml.counters)):
            out.update({f"{prefix}_{k}": v for k, v in d.items()})
        return out

