"""Reference model of ONE NestedWalker walk in isolation, without caches
(docs/nested-walker.md, "The walk", "A/D", "Faults").

Why: the cocotb scoreboard needs, for every accepted request, every response field, the exact
ordered list of memory accesses a cache-less walker performs (the baseline configuration must
match it access for access; cached configurations read a subsequence of it), the A/D write-backs
with their byte masks and the dirty events.  The model is written from the doc only, on top of
the independent format transcription in ``models.ptformats``.

    mem = SparseMemory()             # 64-bit words, byte-masked writes, injectable bus errors
    cfg = WalkerConfig("x86_64_4", "ept4", adUpdate="hardware", paBits=52)
    res = walk(mem, cfg, WalkRequest(id=0, gva=..., asid=1, vmid=1, gRoot=..., hRoot=...))
    res.resp        # every response field of the doc (fault, faultLevel, ..., memWrites)
    res.accesses    # [Access(kind, addr, wdata, wmask, stage, level, gpa, ...)] in order
    res.dirty       # [DirtyEvent(gpa, gva, vmid, asid, pageTable)]

``WalkRequest.mode`` (docs/nested-walker.md, "Modes"; ``models.ptformats.MODE_*``): 3 the 2D
walk, 1 stage 1 only (the guest walk with identity host translations: the guest's addresses are
HPAs, beyond paBits fault 5 at stage 0), 2 stage 2 only (``gva`` is a GPA: the host walk of a
2D walk's final GPA), 0 bare (bad input: fault 4, no access).

In hardware mode the walk's A/D writes are applied to ``mem`` as the hardware would (one
8-byte write whose wmask selects the byte holding A and D).  A bus error is reported by the
memory (``SparseMemory.errors`` / ``error_fn``) or by ``walk(..., fail=pred)``, where
``pred(index, access)`` decides per access of this walk; the erroring access is counted and
ends the walk with fault 3 at its stage and level, and an erroring write changes nothing.

Bounds (checked by tests/test_walker_model.py on every format pair): for ``g`` guest levels
and ``h`` host levels a walk performs at most
    (g+1)(h+1)-1 plain reads   (g guest entries, each after an h-read host walk, and the final
                                h-read host walk of the data GPA),
    + (g+1) host-leaf locked reads (one per host translation) + 1 guest-leaf locked read,
and at most g+2 writes (one per locked read).  See ``max_reads`` / ``max_writes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import privcheck
from .ptformats import (CMD_EXEC, CMD_READ, CMD_RESERVED, CMD_WRITE, M64, MODE_BARE, MODE_BOTH,
                        MODE_S1, MODE_S2, PtFormat, fmt, page_bytes)

# fault codes
F_NONE, F_GUEST, F_HOST, F_BUS, F_RSVD, F_ADDR = 0, 1, 2, 3, 4, 5
FAULT_NAMES = {0: "none", 1: "guest", 2: "host", 3: "bus", 4: "reserved", 5: "address"}
STAGE_GUEST, STAGE_HOST = 0, 1

RESP_FIELDS = ("fault", "faultLevel", "faultStage", "faultGpa", "ppn", "pageSize",
               "guestPageSize", "hostPageSize", "perm_r", "perm_w", "perm_x", "perm_u",
               "memReads", "memWrites")


# ----------------------------------------------------------------------------- memory
def expand_wmask(wmask: int) -> int:
    """8-bit byte mask -> 64-bit bit mask."""
    m = 0
    for i in range(8):
        if (wmask >> i) & 1:
            m |= 0xFF << (8 * i)
    return m


class SparseMemory:
    """Sparse memory of 64-bit words (byte address, 8-byte aligned; unwritten words read 0).

    Bus errors: ``errors`` is a set of word addresses (any access) or of (addr, kind) pairs with
    kind in 'read' / 'locked_read' / 'write' ('read' also matches locked reads as seen on a bus,
    which cannot tell them apart); ``error_fn(addr, kind) -> bool`` decides dynamically.

    Every write is journalled (sequence number, address, old value) so that ``view_at(seq)``
    gives a read-only view of the memory as it was at ``seq`` (the testbench takes one at each
    request's acceptance and runs the model on it later)."""

    def __init__(self, words: dict | None = None):
        self.words: dict[int, int] = dict(words or {})
        self.errors: set = set()
        self.error_fn = None
        self.seq = 0
        self._hist: dict[int, list] = {}       # addr -> [(seq, old value), ...]
        self.journal = False

    # -- plain access
    def read(self, addr: int) -> int:
        return self.words.get(addr, 0)

    def write(self, addr: int, data: int, wmask: int = 0xFF):
        if addr % 8:
            raise ValueError(f"unaligned word address {addr:#x}")
        old = self.words.get(addr, 0)
        m = expand_wmask(wmask)
        new = (old & ~m) | (data & m)
        if self.journal:
            self.seq += 1
            self._hist.setdefault(addr, []).append((self.seq, old))
        self.words[addr] = new & M64
        return old

    def error(self, addr: int, kind: str) -> bool:
        if addr in self.errors or (addr, kind) in self.errors:
            return True
        if kind == "locked_read" and (addr, "read") in self.errors:
            return True
        return bool(self.error_fn and self.error_fn(addr, kind))

    def copy(self) -> "SparseMemory":
        m = SparseMemory(self.words)
        m.errors = set(self.errors)
        m.error_fn = self.error_fn
        return m

    # -- snapshots
    def view_at(self, seq: int) -> "MemoryView":
        return MemoryView(self, seq)

    def __len__(self):
        return len(self.words)


class MemoryView:
    """Copy-on-write view of a journalled SparseMemory as it was at sequence number ``seq``:
    reads see the old values, writes stay local to the view."""

    def __init__(self, base: SparseMemory, seq: int):
        self.base, self.seq_at = base, seq
        self.local: dict[int, int] = {}
        self.errors: set = set()
        self.error_fn = None

    def read(self, addr: int) -> int:
        if addr in self.local:
            return self.local[addr]
        for s, old in self.base._hist.get(addr, ()):
            if s > self.seq_at:
                return old
        return self.base.words.get(addr, 0)

    def write(self, addr: int, data: int, wmask: int = 0xFF):
        old = self.read(addr)
        m = expand_wmask(wmask)
        self.local[addr] = ((old & ~m) | (data & m)) & M64
        return old

    error = SparseMemory.error


# ----------------------------------------------------------------------------- config / req
@dataclass(frozen=True)
class WalkerConfig:
    guest: str = "x86_64_4"
    host: str = "ept4"
    adUpdate: str = "hardware"       # 'hardware' | 'fault'
    paBits: int = 52

    def __post_init__(self):
        if fmt(self.guest).stage != "guest":
            raise ValueError(f"{self.guest} is not a guest format")
        if fmt(self.host).stage != "host":
            raise ValueError(f"{self.host} is not a host format")
        if self.adUpdate not in ("hardware", "fault"):
            raise ValueError(f"adUpdate {self.adUpdate!r}")

    @property
    def G(self) -> PtFormat:
        return fmt(self.guest)

    @property
    def H(self) -> PtFormat:
        return fmt(self.host)

    @property
    def gpaBits(self) -> int:
        return self.H.input_bits

    @classmethod
    def from_params(cls, p: dict) -> "WalkerConfig":
        return cls(guest=str(p.get("guest", "x86_64_4")), host=str(p.get("host", "ept4")),
                   adUpdate=str(p.get("adUpdate", "hardware")), paBits=int(p.get("paBits", 52)))


@dataclass
class WalkRequest:
    id: int = 0
    gva: int = 0
    asid: int = 0
    vmid: int = 0
    gRoot: int = 0        # guest-physical page number of the guest root table
    hRoot: int = 0        # host-physical page number of the host root table
    cmd: int = CMD_READ
    user: int = 0
    mode: int = MODE_BOTH  # MODE_S1: gRoot and guest entries host-physical; MODE_S2: gva is a GPA
    # the core's privilege flags (the ports req_bits_flags_*; docs/privcheck.md)
    flags_sum: int = 0
    flags_mxr: int = 0
    flags_vmxr: int = 0
    flags_wp: int = 0
    flags_smep: int = 0
    flags_smap: int = 0
    flags_nxe: int = 0

    def fields(self) -> dict:
        return dict(id=self.id, gva=self.gva, asid=self.asid, vmid=self.vmid, gRoot=self.gRoot,
                    hRoot=self.hRoot, cmd=self.cmd, user=self.user, mode=self.mode,
                    **{f"flags_{f}": getattr(self, f"flags_{f}") for f in privcheck.FLAGS})

    def guest_denies(self, family: str, perm: tuple) -> bool:
        """The guest leaf's check (docs/privcheck.md): RISC-V stage 1 (the VS-stage of a 2D
        walk; satp's, V = 0, of a stage-1-only walk: vsstatus.MXR does not apply), or x86
        paging; ``perm`` = accumulated (r, w, x, u)."""
        stage = privcheck.RV_STAGE1 if family == "rv" else privcheck.X86
        a = privcheck.Access(cmd=self.cmd, user=bool(self.user), vs_stage=self.mode != MODE_S1,
                             **{f: bool(getattr(self, f"flags_{f}")) for f in privcheck.FLAGS})
        return privcheck.denies(stage, a, privcheck.Perm(*map(bool, perm)))


@dataclass
class Access:
    kind: str             # 'read' | 'locked_read' | 'write'
    addr: int
    wdata: int = 0
    wmask: int = 0
    stage: int = 0        # stage of the entry accessed (0 guest, 1 host)
    level: int = 0        # its level
    gpa: int = 0          # faultGpa this access would report (stage 1: the GPA translated;
    #                       stage 0: the GPA of the guest entry)
    role: str = ""        # 'host_pt' (host walk for a guest entry), 'host_data', 'guest'
    leaf: bool = False    # the entry read turned out to be a leaf (reads only)
    set_bits: int = 0     # writes: the A/D bits the write sets
    rdata: int = 0        # reads: value returned
    error: bool = False


@dataclass
class DirtyEvent:
    gpa: int              # page number of the GPA the host leaf translated
    gva: int              # page number of the request's gva (52 bits)
    vmid: int
    asid: int
    pageTable: int

    def fields(self) -> dict:
        return dict(gpa=self.gpa, gva=self.gva, vmid=self.vmid, asid=self.asid,
                    pageTable=self.pageTable)


@dataclass
class WalkResult:
    resp: dict
    accesses: list = field(default_factory=list)
    dirty: list = field(default_factory=list)
    guest_leaf_level: int | None = None       # success (or guest leaf reached)
    host_leaf_level: int | None = None        # of the data translation
    fault_reason: str = ""                    # a short tag for coverage / messages
    gpa: int | None = None                    # final GPA (when reached)
    # success only, for a model that caches the translation (models.xlat_mmu): each stage's
    # accumulated permission (r, w, x, u) apart (the absent stage's: all), and whether the
    # leaves' D bits are set after the walk (both present leaves; a write walk sets them)
    gperm: tuple = (1, 1, 1, 1)
    hperm: tuple = (1, 1, 1, 1)
    leaf_dirty: bool = False

    @property
    def fault(self) -> int:
        return self.resp["fault"]

    @property
    def reads(self) -> list:
        return [a for a in self.accesses if a.kind != "write"]

    @property
    def writes(self) -> list:
        return [a for a in self.accesses if a.kind == "write"]

    def read_addrs(self) -> set:
        """Every address this walk may read (plain and locked): a cached walker reads a
        subsequence of ``accesses``, so each of its reads is in this set."""
        return {a.addr for a in self.accesses if a.kind != "write"}

    def write_addrs(self) -> set:
        return {a.addr for a in self.accesses if a.kind == "write"}

    def leaf_addrs(self) -> set:
        """Addresses of the leaves this walk read (every place a locked read / write may go,
        whatever the A/D state another walk left behind)."""
        return {a.addr for a in self.accesses if a.kind == "read" and a.leaf}

    def candidates(self, addr: int) -> list:
        """(stage, level, faultGpa) of every access of this walk to ``addr``: what a bus error
        on that address may report in a cached configuration, which may have skipped earlier
        accesses to the same word."""
        out = []
        for a in self.accesses:
            if a.addr == addr and (a.stage, a.level, a.gpa) not in out:
                out.append((a.stage, a.level, a.gpa))
        return out

    @property
    def huge_guest(self) -> bool:
        return self.fault == 0 and self.guest_leaf_level > 0

    @property
    def huge_aligned(self) -> bool:
        return self.huge_guest and self.host_leaf_level >= self.guest_leaf_level

    @property
    def splintered(self) -> bool:
        return self.huge_guest and self.host_leaf_level < self.guest_leaf_level


def max_reads(guest_levels: int, host_levels: int) -> int:
    """(g+1)(h+1)-1 plain reads + (g+1) host-leaf locked reads + 1 guest-leaf locked read."""
    g, h = guest_levels, host_levels
    return (g + 1) * (h + 1) - 1 + (g + 1) + 1


def max_writes(guest_levels: int, host_levels: int) -> int:
    """One write per locked read at most: g+1 host leaves + 1 guest leaf."""
    return guest_levels + 2


def host_denies(family: str, perm: tuple, cmd: int, mxr: int = 0) -> bool:
    """The host leaf's check of an access ``cmd`` on the host's accumulated ``perm`` (RISC-V:
    before U is forced to 1), docs/privcheck.md: the RISC-V G-stage's rules (U needed, every
    access being a user's; a read needs R, or X with the HS-level MXR) or EPT's.  ``mxr``: the
    request's HS-level MXR, for the data access only -- MXR "makes execute-only pages readable
    by explicit loads" and "Setting MXR at HS-level, however, overrides both VS-stage and
    G-stage execute-only permissions" (H extension, "Two-Stage Address Translation"); the
    implicit read of a guest table passes 0 (docs/nested-walker.md "The walk", decided).  A
    model answering from a cached translation calls this, so a hit and a walk decide alike."""
    stage = privcheck.RV_GSTAGE if family == "rv" else privcheck.EPT
    return privcheck.denies(stage, privcheck.Access(cmd=cmd, user=True, mxr=bool(mxr)),
                            privcheck.Perm(*map(bool, perm)))


def cold_reads(guest_levels: int, host_levels: int, mode: int = MODE_BOTH) -> int:
    """Plain reads of a successful walk through 4 KiB pages at both stages, A/D already set:
    a stage-1-only walk reads the guest levels, a stage-2-only walk the host levels."""
    if mode == MODE_S1:
        return guest_levels
    if mode == MODE_S2:
        return host_levels
    return (guest_levels + 1) * (host_levels + 1) - 1


# ----------------------------------------------------------------------------- the walk
class _Fault(Exception):
    def __init__(self, code, stage, level, gpa, reason):
        super().__init__(reason)
        self.code, self.stage, self.level, self.gpa, self.reason = code, stage, level, gpa, reason


class _Walk:
    def __init__(self, mem, cfg: WalkerConfig, req: WalkRequest, fail):
        self.mem, self.cfg, self.req, self.fail = mem, cfg, req, fail
        self.G, self.H = cfg.G, cfg.H
        self.acc: list[Access] = []
        self.dirty: list[DirtyEvent] = []
        self.hw = cfg.adUpdate == "hardware"
        # D of the last host leaf after the walk (the data page's, host() runs it last); with
        # no host leaf (stage 1 only) the absent stage's D counts as set
        self.host_leaf_dirty = True

    # -- memory
    def _bus(self, a: Access) -> None:
        idx = len(self.acc)
        self.acc.append(a)
        err = self.mem.error(a.addr, a.kind)
        if not err and self.fail is not None:
            err = bool(self.fail(idx, a))
        if err:
            a.error = True
            raise _Fault(F_BUS, a.stage, a.level, a.gpa, f"bus error on {a.kind} {a.addr:#x}")

    def read(self, addr, *, stage, level, gpa, role, locked=False) -> int:
        a = Access("locked_read" if locked else "read", addr, stage=stage, level=level, gpa=gpa,
                   role=role)
        self._bus(a)
        a.rdata = self.mem.read(addr)
        return a.rdata

    def write(self, addr, wdata, wmask, *, stage, level, gpa, role, set_bits):
        a = Access("write", addr, wdata=wdata, wmask=wmask, stage=stage, level=level, gpa=gpa,
                   role=role, set_bits=set_bits)
        self._bus(a)
        self.mem.write(addr, wdata, wmask)

    # -- A/D of a leaf
    def ad(self, F: PtFormat, pte, addr, level, *, write, stage, gpa, role, pagetable):
        need = F.a_mask | (F.d_mask if write else 0)
        if pte & need == need:
            return
        if not self.hw:
            code = F_GUEST if stage == STAGE_GUEST else F_HOST
            raise _Fault(code, stage, level, gpa, "A clear" if not pte & F.a_mask else "D clear")
        re = self.read(addr, stage=stage, level=level, gpa=gpa, role=role, locked=True)
        if re & need == need:
            return
        self.write(addr, re | need, F.ad_wmask, stage=stage, level=level, gpa=gpa, role=role,
                   set_bits=need)
        if stage == STAGE_HOST and write and not re & F.d_mask:
            r = self.req
            self.dirty.append(DirtyEvent(gpa=gpa >> 12, gva=(r.gva >> 12) & ((1 << 52) - 1),
                                         vmid=r.vmid, asid=r.asid, pageTable=int(pagetable)))

    # -- the leaves' permission checks (one place each, so a variant walk names its own)
    def host_check(self, perm: tuple, cmd: int, pagetable: bool) -> bool:
        """The host leaf denies ``cmd``: the HS-level MXR for the data access only."""
        return host_denies(self.H.family, perm, cmd, mxr=self.req.flags_mxr and not pagetable)

    def guest_check(self, perm: tuple) -> bool:
        return self.req.guest_denies(self.G.family, perm)

    # -- host translation (step 4)
    def host(self, g: int, cmd: int, *, pagetable: bool):
        H, cfg = self.H, self.cfg
        role = "host_pt" if pagetable else "host_data"
        if g >> cfg.gpaBits:
            raise _Fault(F_ADDR, STAGE_HOST, H.root_level, g, "gpa out of range")
        table = self.req.hRoot & ~3 if H.x4 else self.req.hRoot
        perm = H.perm_init()
        for lvl in range(H.root_level, -1, -1):
            addr = H.entry_addr(table, g, lvl)
            pte = self.read(addr, stage=STAGE_HOST, level=lvl, gpa=g, role=role)
            if not H.valid(pte):
                raise _Fault(F_HOST, STAGE_HOST, lvl, g, "host not valid")
            rsv = H.reserved(pte, lvl, cfg.paBits)
            if rsv:
                raise _Fault(F_RSVD, STAGE_HOST, lvl, g, f"host reserved {rsv}")
            if not H.is_leaf(pte, lvl):
                if H.nonleaf_at_level0(pte, lvl):
                    raise _Fault(F_HOST, STAGE_HOST, 0, g, "host non-leaf at level 0")
                perm = H.perm_step(perm, pte, False)
                table = H.addr_of(pte) >> 12
                continue
            self.acc[-1].leaf = True
            if H.misaligned(pte, lvl):
                raise _Fault(F_HOST, STAGE_HOST, lvl, g, "host misaligned superpage")
            perm = H.perm_step(perm, pte, True)
            if self.host_check(perm, cmd, pagetable):
                why = "host U=0" if H.family == "rv" and not perm[3] else f"host denies cmd {cmd}"
                raise _Fault(F_HOST, STAGE_HOST, lvl, g, why)
            if H.family == "rv":
                perm = perm[:3] + (1,)
            self.ad(H, pte, addr, lvl, write=cmd == CMD_WRITE, stage=STAGE_HOST, gpa=g,
                    role=role, pagetable=pagetable)
            # D after the walk: set before, or set now (hardware) / required (fault) by a write
            self.host_leaf_dirty = bool(pte & H.d_mask) or cmd == CMD_WRITE
            hpa = H.leaf_base(pte, lvl) + (g & (page_bytes(lvl) - 1))
            return hpa, lvl, perm
        raise AssertionError("unreachable: level 0 is a leaf or a fault")

    # -- stage 1 only: the guest's addresses are host-physical (identity "host translation")
    def identity(self, a: int, level: int) -> int:
        """``a`` (the address of the guest entry at ``level``, or the final address from the
        leaf at ``level``) as an HPA: beyond paBits is fault 5 at that guest access."""
        if a >> self.cfg.paBits:
            raise _Fault(F_ADDR, STAGE_GUEST, level, a, "stage-1-only address beyond paBits")
        return a

    # -- stage 2 only: the host walk of gva, a GPA (as a 2D walk's final GPA)
    def run_s2(self) -> WalkResult:
        req = self.req
        self.gpa = req.gva
        hpa, hl, hperm = self.host(req.gva, req.cmd, pagetable=False)
        res = self._resp(0, 0, 0, 0)
        res.update(ppn=hpa >> 12, pageSize=hl, guestPageSize=hl, hostPageSize=hl,
                   perm_r=hperm[0], perm_w=hperm[1], perm_x=hperm[2], perm_u=hperm[3])
        return WalkResult(res, self.acc, self.dirty, None, hl, "", req.gva, hperm=hperm,
                          leaf_dirty=self.host_leaf_dirty)

    # -- the whole walk (steps 1..5)
    def run(self) -> WalkResult:
        G, req = self.G, self.req
        if req.mode == MODE_BARE:
            raise _Fault(F_RSVD, STAGE_GUEST, 0, 0, "bare mode")
        if req.cmd == CMD_RESERVED:
            raise _Fault(F_RSVD, STAGE_GUEST, 0, 0, "cmd 3")
        if req.mode == MODE_S2:
            return self.run_s2()
        s1 = req.mode == MODE_S1
        if not G.address_ok(req.gva):
            raise _Fault(F_ADDR, STAGE_GUEST, G.root_level, 0, "gva non-canonical")
        pt_cmd = CMD_WRITE if self.hw else CMD_READ
        table = req.gRoot
        perm = G.perm_init()
        for lvl in range(G.root_level, -1, -1):
            g = G.entry_addr(table, req.gva, lvl)
            h = self.identity(g, lvl) if s1 else self.host(g, pt_cmd, pagetable=True)[0]
            pte = self.read(h, stage=STAGE_GUEST, level=lvl, gpa=g, role="guest")
            if not G.valid(pte):
                raise _Fault(F_GUEST, STAGE_GUEST, lvl, g, "guest not valid")
            rsv = G.reserved(pte, lvl, self.cfg.paBits)
            if rsv:
                raise _Fault(F_RSVD, STAGE_GUEST, lvl, g, f"guest reserved {rsv}")
            if not G.is_leaf(pte, lvl):
                if G.nonleaf_at_level0(pte, lvl):
                    raise _Fault(F_GUEST, STAGE_GUEST, 0, g, "guest non-leaf at level 0")
                perm = G.perm_step(perm, pte, False)
                table = G.addr_of(pte) >> 12
                continue
            self.acc[-1].leaf = True
            if G.misaligned(pte, lvl):
                raise _Fault(F_GUEST, STAGE_GUEST, lvl, g, "guest misaligned superpage")
            perm = G.perm_step(perm, pte, True)
            if self.guest_check(perm):
                raise _Fault(F_GUEST, STAGE_GUEST, lvl, g, "guest denies access")
            self.ad(G, pte, h, lvl, write=req.cmd == CMD_WRITE, stage=STAGE_GUEST, gpa=g,
                    role="guest", pagetable=False)
            self.guest_leaf_level = lvl
            gdirty = bool(pte & G.d_mask) or req.cmd == CMD_WRITE
            gpa = G.leaf_base(pte, lvl) + (req.gva & (page_bytes(lvl) - 1))
            self.gpa = gpa
            if s1:   # the page whole: host size = guest size, host permission all
                hpa, hl, hperm = self.identity(gpa, lvl), lvl, (1, 1, 1, 1)
            else:
                hpa, hl, hperm = self.host(gpa, req.cmd, pagetable=False)
            res = self._resp(0, 0, 0, 0)
            res.update(ppn=hpa >> 12, pageSize=min(lvl, hl), guestPageSize=lvl,
                       hostPageSize=hl, perm_r=perm[0] & hperm[0], perm_w=perm[1] & hperm[1],
                       perm_x=perm[2] & hperm[2], perm_u=perm[3] & hperm[3])
            out = WalkResult(res, self.acc, self.dirty, lvl, hl, "", gpa, gperm=tuple(perm),
                             hperm=tuple(hperm), leaf_dirty=gdirty and self.host_leaf_dirty)
            return out
        raise AssertionError("unreachable")

    def _resp(self, fault, stage, level, gpa) -> dict:
        return dict(id=self.req.id, fault=fault, faultLevel=level, faultStage=stage,
                    faultGpa=gpa & M64, ppn=0, pageSize=0, guestPageSize=0, hostPageSize=0,
                    perm_r=0, perm_w=0, perm_x=0, perm_u=0,
                    memReads=sum(1 for a in self.acc if a.kind != "write"),
                    memWrites=sum(1 for a in self.acc if a.kind == "write"))


def walk(mem, cfg: WalkerConfig, req: WalkRequest, fail=None) -> WalkResult:
    """One walk of ``req`` on ``mem`` (see the module doc).  ``fail(index, access)`` may turn
    an access of this walk into a bus error."""
    w = _Walk(mem, cfg, req, fail)
    w.guest_leaf_level = None
    w.gpa = None
    try:
        return w.run()
    except _Fault as f:
        res = w._resp(f.code, f.stage, f.level, f.gpa)
        return WalkResult(res, w.acc, w.dirty, w.guest_leaf_level, None, f.reason, w.gpa)


def walk_fields(mem, cfg, **req) -> WalkResult:
    """Convenience: ``walk(mem, cfg, WalkRequest(**req))``."""
    return walk(mem, cfg, WalkRequest(**req))
