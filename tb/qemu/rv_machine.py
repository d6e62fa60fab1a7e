"""Page tables and cases for the QEMU cross-check of RISC-V translation
(docs/qemu-crosscheck.md), laid out with the project's page-table builder.

Why a subclass of ``xlat_tb.pagetables.Scenario``: its VMs, guest spaces, guest-table pools
and entry corruptions are what the cross-check needs; what differs is where things may be.
QEMU's virt machine has RAM at 0x80000000 only, so every table and every data word must be in
RAM, outside the program and the blob (below ``WIN_LO``) and the device tree QEMU puts at the
end of RAM.  Data addresses are therefore chosen first (a fresh 4 KiB frame of the window, a
random word in it) and the mappings built backwards from them: the host leaf covering the PA,
a fresh GPA block at the same offset, the guest leaf covering that GPA, a fresh VA at the same
offset.  Each data word holds its own PA, so a load's value names the translation.

Modes (satp / vsatp / hgatp per case):

* ``stage1``: satp = Sv39/Sv48 over physical tables; S-mode (SUM = 1) or U-mode ld / sd;
* ``stage2``: vsatp = Bare, hgatp = Sv39x4/Sv48x4; VS / VU ld / sd, HLV.D / HSV.D from HS or
  from U with hstatus.HU (SPVP 0 or 1);
* ``both``:   vsatp and hgatp; the same accesses.

Every address space maps the program's two stub pages at their own address (supervisor page
U = 0, user page U = 1; G-stage U = 1), inside a 1 GiB VA / GPA block nothing else uses.
Faults: every entry corruption ``Scenario._corrupt`` knows for RISC-V, at every level, on a
private path; pointers with A / D / U; leaves and tables outside RAM (access faults); host
faults on the guest's own page-table pages (implicit accesses: htval = GPA of the PTE);
non-canonical VAs and GPAs beyond the G-stage width; permissions from the builder's random
leaf permissions and A / D states (hardware A/D on both sides).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.ptformats import CMD_READ, CMD_WRITE, RV_A, RV_R, RV_W, mask, page_bytes
from models.walker import WalkRequest, WalkerConfig
from xlat_tb.pagetables import FrameAllocator, PageTableBuilder, Scenario, sign_extend
from xlat_tb.qemu import (BLOB_LIMIT, F_HU, F_MXR, F_PRIV_S, F_SPVP, F_SUM, F_USTUB, F_V,
                          F_VSMXR, F_VSSUM, OPS, QemuCase)

from .rv_modes import MODE_CODES

RAM_BASE = 0x8000_0000
RAM_MIB = 256
RAM_END = RAM_BASE + (RAM_MIB << 20)
WIN_LO = BLOB_LIMIT                       # tables and data words from here ...
WIN_HI = RAM_END - (16 << 20)             # ... to below the device tree (end of RAM)
WIN_2M = WIN_HI - (48 << 20)              # 4 KiB frames below, 2 MiB blocks above
NORAM = 1 << 51                           # no RAM or device there (below paBits = 52)
SATP_MODE = {"sv39": 8, "sv48": 9, "sv39x4": 8, "sv48x4": 9}


def in_ram(pa: int) -> bool:
    return RAM_BASE <= pa < RAM_END


class SplitAllocator:
    """Two FrameAllocators: blocks of size >= ``k_big`` from [mid, hi), smaller ones from
    [lo, mid).  Random small blocks spread over one range leave no free large block (the
    HPA window: 2 MiB guest-table pools; the GPA space: 1 GiB and 512 GiB blocks)."""

    def __init__(self, rng, lo: int, mid: int, hi: int, k_big: int):
        self.small = FrameAllocator(rng, lo, mid)
        self.big = FrameAllocator(rng, mid, hi)
        self.mid, self.k_big = mid, k_big

    def alloc(self, k: int = 0, count: int = 1, align: int = 1) -> int:
        return (self.big if k >= self.k_big else self.small).alloc(k, count=count, align=align)

    def reserve(self, base: int, k: int) -> bool:
        return (self.big if base >= self.mid else self.small).reserve(base, k)


@dataclass
class Case:
    """One access: ``mode``, the access (``op`` ld / sd / hlv / hsv, privilege), the address
    space (``vmid``, ``asid``; 0 where the mode has none) and what the generator built
    (``kind``: 'ok' for a mapped address, else the fault it planted)."""
    mode: str
    op: str
    va: int
    flags: int
    user: int
    vmid: int
    asid: int
    kind: str
    satp: int = 0
    vsatp: int = 0
    hgatp: int = 0

    @property
    def cmd(self) -> int:
        return CMD_WRITE if self.op in ("sd", "hsv") else CMD_READ

    def store_value(self, index: int) -> int:
        return 0x5A5A_0000_0000_0000 | index


# the accesses of each mode: (op, flags, user = the VS-stage / satp privilege is U)
ACCESSES = {
    "stage1": [("ld", F_PRIV_S | F_SUM, 0), ("sd", F_PRIV_S | F_SUM, 0),
               ("ld", F_USTUB, 1), ("sd", F_USTUB, 1)],
    "virt": [("ld", F_V | F_PRIV_S | F_VSSUM, 0), ("sd", F_V | F_PRIV_S | F_VSSUM, 0),
             ("ld", F_V | F_USTUB | F_VSSUM, 1), ("sd", F_V | F_USTUB | F_VSSUM, 1),
             ("hlv", F_PRIV_S | F_SPVP | F_VSSUM, 0), ("hsv", F_PRIV_S | F_SPVP | F_VSSUM, 0),
             ("hlv", F_PRIV_S | F_VSSUM, 1), ("hsv", F_PRIV_S | F_VSSUM, 1),
             ("hlv", F_USTUB | F_HU | F_SPVP | F_VSSUM, 0),
             ("hsv", F_USTUB | F_HU | F_VSSUM, 1)],
}


class RvMachine(Scenario):
    """Address spaces of every mode in QEMU's RAM, and the cases run on them."""

    def __init__(self, cfg: WalkerConfig, seed: int, *, code: tuple):
        super().__init__(cfg, seed)
        self.hpa = SplitAllocator(self.rng, WIN_LO, WIN_2M, WIN_HI, 1)
        self.code_s, self.code_u = code
        self.ad_clear_p = 0.2
        self.host_pt_ad_clear_p = 0.0       # docs/qemu-crosscheck.md, "Deviations", M1
        self.perm_random = True
        self.satps: dict[int, PageTableBuilder] = {}
        self.cases: list[Case] = []
        # the MXR bits of each case from their own stream (the layout is the seed's as before)
        self.mxr_rng = random.Random(f"qemu.mxr:{seed}")
        self.mxr_p = 0.25

    # ------------------------------------------------------------------ address spaces
    def _reserve_code_block(self, alloc: FrameAllocator):
        if not alloc.reserve(RAM_BASE, 2):
            raise AssertionError("the stub pages' 1 GiB block is taken")

    def _map_code(self, b: PageTableBuilder, host: bool):
        for page, u in ((self.code_s, 0), (self.code_u, 1)):
            b.map(page, page, 0, r=1, w=0, x=1, u=1 if host else u, a=1, d=1)

    def new_vm(self, vmid: int):
        vm = self.add_vm(vmid, pool_p=0.5)
        # GPAs below 2^(gpaBits-1): QEMU 7.2 faults on the top GPA bit (docs/qemu-crosscheck.md,
        # "Deviations", D1); ``gpa_top`` checks that deviation on its own cases
        gb = self.cfg.gpaBits
        vm.gpa_alloc = SplitAllocator(self.rng, 1 << 21, 1 << (gb - 3), 1 << (gb - 1), 2)
        self._reserve_code_block(vm.gpa_alloc)
        self._map_code(vm.host, True)
        return vm

    def new_space(self, vm, asid: int) -> PageTableBuilder:
        sp = self.add_space(vm, asid)
        sp.va_alloc = FrameAllocator(self.rng, 0, 1 << self.G.input_bits)
        self._reserve_code_block(sp.va_alloc)
        self._map_code(sp, False)
        return sp

    def new_satp(self, asid: int) -> PageTableBuilder:
        sp = PageTableBuilder(self.G, new_table=lambda x4=False: self.hpa.alloc(0),
                              write_word=self.mem.write, pa_bits=self.cfg.paBits)
        sp.va_alloc = FrameAllocator(self.rng, 0, 1 << self.G.input_bits)
        self._reserve_code_block(sp.va_alloc)
        self._map_code(sp, False)
        self.satps[asid] = sp
        return sp

    def satp(self, asid: int) -> int:
        return (SATP_MODE[self.G.name] << 60) | (asid << 44) | (self.satps[asid].root >> 12)

    def vsatp(self, vmid: int, asid: int) -> int:
        return (SATP_MODE[self.G.name] << 60) | (asid << 44) | self.gRoot(vmid, asid)

    def hgatp(self, vmid: int) -> int:
        return (SATP_MODE[self.H.name] << 60) | (vmid << 44) | self.vms[vmid].hRoot

    # ------------------------------------------------------------------ data words
    def data_word(self, frame: int | None = None) -> int:
        """A word of a fresh frame of the window (or of ``frame``) holding its own PA."""
        if frame is None:
            frame = self.hpa.alloc(0)
        pa = frame + self.rng.randrange(512) * 8
        self.mem.write(pa, pa)
        return pa

    def frame_in(self, base: int, size: int) -> int | None:
        """A fresh 4 KiB frame inside [base, base + size) and the frames' part of the window."""
        lo, hi = max(base, WIN_LO), min(base + size, WIN_2M)
        for _ in range(20):
            if hi - lo < 4096:
                return None
            f = self.rng.randrange(lo // 4096, hi // 4096) * 4096
            if self.hpa.reserve(f, 0):
                return f
        return None

    def _levels(self, F, weights=(45, 30, 15, 10)):
        lv = F.leaf_levels()
        return self.rng.choices(lv, weights[:len(lv)])[0]

    def _va_block(self, sp: PageTableBuilder, level: int) -> int:
        return sign_extend(sp.va_alloc.alloc(level), self.G.input_bits)

    # ------------------------------------------------------------------ mapped addresses
    def map_stage1(self, sp, *, gl=None, vblk=None, n=1, full=False) -> list:
        """VAs of ``n`` data words behind one satp leaf of size ``gl``."""
        gl = self._levels(self.G) if gl is None else gl
        size = page_bytes(gl)
        pa = self.data_word()
        base = pa & ~(size - 1)
        vblk = self._va_block(sp, gl) if vblk is None else vblk
        sp.map(vblk, base, gl, **self.guest_leaf_kwargs(full=full))
        out = [vblk + (pa - base)]
        for _ in range(n - 1):
            f = self.frame_in(base, size)
            if f is not None:
                out.append(vblk + (self.data_word(f) - base))
        return out

    def map_host(self, vm, *, hl=None, gblk=None, glevel=0, n=1, full=False) -> list:
        """GPAs of ``n`` data words behind host leaves of size ``hl`` inside a fresh GPA block
        of size max(hl, glevel) (or ``gblk``): one leaf when hl >= glevel, else one leaf per
        word (a splintered guest page).  Returns [(gpa, pa)]."""
        hl = self._levels(self.H) if hl is None else hl
        hsize = page_bytes(hl)
        bsize = page_bytes(max(hl, glevel))
        gblk = vm.gpa_alloc.alloc(max(hl, glevel)) if gblk is None else gblk
        out, used = [], set()
        for k in range(n):
            if k == 0 or hl < glevel:
                pa = self.data_word()
                sub = self.rng.randrange(bsize // hsize) if hl < glevel else 0
                if sub in used:
                    continue
                used.add(sub)
                hbase = pa & ~(hsize - 1)
                gbase = gblk + sub * hsize
                vm.host.map(gbase, hbase, hl, **self.host_leaf_kwargs(pagetable=False,
                                                                     full=full))
                if k == 0:
                    first = (gbase, hbase)
            else:
                gbase, hbase = first
                f = self.frame_in(hbase, hsize)
                if f is None:
                    continue
                pa = self.data_word(f)
            out.append((gbase + (pa - hbase), pa))
        return out

    def map_both(self, vm, sp, *, gl=None, hl=None, vblk=None, n=1, full=False) -> list:
        """VAs of ``n`` data words behind one guest leaf of size ``gl`` over host leaves of
        size ``hl`` (aligned when hl >= gl, splintered when smaller)."""
        gl = self._levels(self.G) if gl is None else gl
        gsize = page_bytes(gl)
        words = self.map_host(vm, hl=hl, glevel=gl, n=n, full=full)
        gpage = words[0][0] & ~(gsize - 1)
        vblk = self._va_block(sp, gl) if vblk is None else vblk
        sp.map(vblk, gpage, gl, **self.guest_leaf_kwargs(full=full))
        return [vblk + (g - gpage) for g, _ in words if g & ~(gsize - 1) == gpage]

    # ------------------------------------------------------------------ cases
    def add_cases(self, mode: str, vas, kind: str, *, vmid=0, asid=0, accesses=None,
                  ops=None, mxr=None):
        """One case per VA with a random access of the mode (or one of ``accesses``: (op,
        user) pairs; or of ``ops``) and random MXR bits (mstatus.MXR = ``mxr`` when given)."""
        pool = ACCESSES["stage1" if mode == "stage1" else "virt"]
        if accesses is not None:
            pool = [a for a in pool if (a[0], a[2]) in accesses] or pool
        if ops is not None:
            pool = [a for a in pool if a[0] in ops]
        for va in vas:
            op, flags, user = self.rng.choice(pool)
            r = self.mxr_rng
            if (r.random() < self.mxr_p) if mxr is None else mxr:
                flags |= F_MXR
            if r.random() < self.mxr_p:
                flags |= F_VSMXR
            c = Case(mode, op, va, flags | OPS[op], user, vmid, asid, kind)
            if mode == "stage1":
                c.satp = self.satp(asid)
            else:
                c.hgatp = self.hgatp(vmid)
                c.vsatp = self.vsatp(vmid, asid) if mode == "both" else 0
                # HLV / HSV from an HS-mode with paging on, half of them (QEMU 7.2 reports
                # VS-stage faults as access faults when the HS satp is Bare: deviation D4)
                if op in ("hlv", "hsv") and self.satps and self.rng.random() < 0.5:
                    c.satp = self.satp(min(self.satps))
            self.cases.append(c)

    def request(self, c: Case) -> WalkRequest:
        """The model's request of a case (gRoot: the satp root's page in stage 1)."""
        g = 0
        if c.mode == "stage1":
            g = self.satps[c.asid].root >> 12
        elif c.mode == "both":
            g = self.gRoot(c.vmid, c.asid)
        h = self.vms[c.vmid].hRoot if c.vmid else 0
        # the program runs supervisor accesses with SUM = 1 (mstatus.SUM, vsstatus.SUM;
        # docs/qemu-crosscheck.md, decided) and the case's MXR bits: the request carries the same
        return WalkRequest(id=0, gva=c.va, asid=c.asid, vmid=c.vmid, gRoot=g, hRoot=h,
                           cmd=c.cmd, user=c.user, mode=MODE_CODES[c.mode], flags_sum=1,
                           flags_mxr=int(bool(c.flags & F_MXR)),
                           flags_vmxr=int(bool(c.flags & F_VSMXR)))

    def qemu_cases(self, probes: list) -> list:
        """The program's cases; ``probes[i]``: the PA the model expects store i at (or 0)."""
        out = []
        for i, c in enumerate(self.cases):
            out.append(QemuCase(c.flags, c.va & ((1 << 64) - 1), c.satp, c.vsatp, c.hgatp,
                                probes[i], c.store_value(i) if c.cmd == CMD_WRITE else 0))
        return out

    def image(self) -> list:
        """The memory image as (pa, value) words, in address order."""
        return sorted(self.mem.words.items())


# ---------------------------------------------------------------------- corruption
def corrupt_rv(m: RvMachine, F, pte: int, level: int, what: str, addr: int):
    """``Scenario._corrupt`` for the RISC-V kinds, plus the ones only a real machine has:
    a pointer with A set ('nonleaf_a', reserved), an entry pointing outside RAM ('noram'),
    a host leaf without R ('x_only') or without W ('read_only') and a reserved bit drawn from
    63:54."""
    leaf = F.is_leaf(pte, level)
    if what == "nonleaf_a":
        return None if leaf else pte | (1 << RV_A)
    if what == "noram":
        ppn = NORAM >> 12
        return (pte & ~mask(53, 10)) | (ppn << 10)
    if what == "x_only":
        return (pte & ~((1 << RV_R) | (1 << RV_W))) | (1 << 3) if leaf else None
    if what == "reserved":
        return pte | (1 << m.rng.randrange(54, 64))
    if what == "read_only":
        return pte & ~(1 << RV_W) if leaf else None
    return m._corrupt(F, pte, level, what, addr)


STAGE1_KINDS = ("invalid", "reserved", "w_no_r", "nonleaf_a", "misaligned", "nonleaf0",
                "noram", "gpa_range")
STAGE2_KINDS = ("invalid", "reserved", "w_no_r", "nonleaf_a", "misaligned", "nonleaf0",
                "noram", "host_u0", "x_only")
PT_HOST_KINDS = ("invalid", "reserved", "host_u0", "x_only", "noram", "read_only")
# kinds where the model (and the RTL) deviate from the ISA: docs/qemu-crosscheck.md, M1
MODEL_DEVIATIONS = {"pt_read_only": "M1"}


def bad_stage1(m: RvMachine, mode: str, what: str, level: int, *, vm=None, sp=None) -> list:
    """VAs whose walk meets ``what`` at the stage-1 entry of ``level`` (private path)."""
    F = m.G
    if what in ("misaligned",) and level == 0:
        return []
    gl = level if what in ("misaligned", "x_only_leaf") else 0
    what = "x_only" if what == "x_only_leaf" else what
    vblk = m._va_block(sp, level)
    off = m.rng.randrange(page_bytes(level) // page_bytes(gl)) * page_bytes(gl)
    if mode == "stage1":
        vas = m.map_stage1(sp, gl=gl, vblk=vblk + off, full=True)
    else:
        vas = m.map_both(vm, sp, gl=gl, hl=None if gl == 0 else gl, vblk=vblk + off, full=True)
    tab, idx = sp.entry_location(vas[0], level)
    new = corrupt_rv(m, F, sp.tables[tab][idx], level, what, vas[0])
    if new is None:
        return []
    sp._set(tab, idx, new)
    return vas


def bad_stage2(m: RvMachine, mode: str, what: str, level: int, *, vm, sp=None) -> list:
    """VAs whose data GPA's host walk meets ``what`` at the host entry of ``level``."""
    H = m.H
    leafy = what in ("misaligned", "host_u0", "x_only_leaf")
    what = "x_only" if what == "x_only_leaf" else what
    if what == "misaligned" and level == 0:
        return []
    hl = level if leafy else 0
    gblk = vm.gpa_alloc.alloc(level)
    sub = m.rng.randrange(page_bytes(level) // page_bytes(hl)) * page_bytes(hl)
    words = m.map_host(vm, hl=hl, gblk=gblk + sub, full=True)
    gpa = words[0][0]
    loc = vm.host.entry_location(gpa, level)
    if loc is None:
        return []
    tab, idx = loc
    new = corrupt_rv(m, H, vm.host.tables[tab][idx], level, what, gpa)
    if new is None:
        return []
    vm.host._set(tab, idx, new)
    if mode == "stage2":
        return [gpa]
    va = m._va_block(sp, 0) + (gpa & 0xFFF)
    sp.map(va & ~0xFFF, gpa & ~0xFFF, 0, **m.guest_leaf_kwargs(full=True))
    return [va]


def bad_pt_host(m: RvMachine, what: str, level: int, *, vm, sp) -> list:
    """mode both: a VA whose guest table of ``level`` (below the root) sits on a GPA page whose
    host leaf is broken as ``what``: the fault happens on an implicit access."""
    saved = vm.pool, vm.pool_p
    vm.pool, vm.pool_p = [], 0.0           # the table gets a GPA page and host leaf alone
    try:
        vblk = m._va_block(sp, level + 1)
        vas = m.map_both(vm, sp, gl=0, hl=0, vblk=vblk, full=True)
    finally:
        vm.pool, vm.pool_p = saved
    tab, _ = sp.entry_location(vas[0], level)
    loc = vm.host.entry_location(tab, 0)
    htab, hidx = loc
    new = corrupt_rv(m, m.H, vm.host.tables[htab][hidx], 0, what, tab)
    if new is None:
        return []
    vm.host._set(htab, hidx, new)
    return vas


def noncanonical(m: RvMachine, n: int) -> list:
    G, r = m.G, m.rng
    out = []
    while len(out) < n:
        va = r.choice([(1 << G.input_bits) | r.randrange(1 << 12) << 3,
                       (1 << G.canon_top) | r.randrange(1 << 20) << 3,
                       (1 << 63) | r.randrange(1 << G.canon_top) & ~7,
                       (r.getrandbits(64) & ~7)])
        if not G.address_ok(va):
            out.append(va)
    return out


def gpa_beyond(m: RvMachine, n: int) -> list:
    """stage 2: VAs (= GPAs) at or above 2^gpaBits."""
    r, gb = m.rng, m.cfg.gpaBits
    return [(1 << r.randrange(gb, 64)) | (r.randrange(1 << 20) << 3) for _ in range(n)]


def gpa_top(m: RvMachine, vm, n: int) -> list:
    """stage 2: mapped GPAs with bit gpaBits-1 set (valid by the ISA; deviation D1), from a
    GPA allocator of their own (the VM's allocator stays below that bit)."""
    top = 1 << (m.cfg.gpaBits - 1)
    if not hasattr(vm, "top_alloc"):
        vm.top_alloc = FrameAllocator(m.rng, top, 2 * top)
    out = []
    for _ in range(n):
        out += [g for g, _ in m.map_host(vm, hl=m.rng.randint(0, 1),
                                          gblk=vm.top_alloc.alloc(1))]
    return out


def build(cfg: WalkerConfig, seed: int, *, code: tuple, per_mode: int = 2000,
          fault_rounds: int = 3) -> RvMachine:
    """A machine with at least ``per_mode`` mapped addresses per mode plus fault cases:
    2 VMs x 2 guest spaces (mode both; their host tables serve mode stage2 too) and 2 satp
    spaces (mode stage1)."""
    m = RvMachine(cfg, seed, code=code)
    r = m.rng
    satps = {a: m.new_satp(a) for a in (1, 2)}
    vms = [m.new_vm(v) for v in (1, 2)]
    spaces = [(vm, a, m.new_space(vm, a)) for vm in vms for a in (1, 2)]

    # mapped addresses (random leaf permissions and A/D: many accesses fault on permission)
    n0 = len(m.cases)
    while len(m.cases) - n0 < per_mode:
        a = r.choice((1, 2))
        m.add_cases("stage1", m.map_stage1(satps[a], n=r.randint(1, 3)), "ok", asid=a)
    n0 = len(m.cases)
    while len(m.cases) - n0 < per_mode:
        vm = r.choice(vms)
        m.add_cases("stage2", [g for g, _ in m.map_host(vm, n=r.randint(1, 3))], "ok",
                    vmid=vm.vmid)
    n0 = len(m.cases)
    while len(m.cases) - n0 < per_mode:
        vm, a, sp = r.choice(spaces)
        m.add_cases("both", m.map_both(vm, sp, n=r.randint(1, 3)), "ok", vmid=vm.vmid, asid=a)

    # planted faults: every kind at every level, ``fault_rounds`` times
    for _ in range(fault_rounds):
        for a, sp in satps.items():
            for what in STAGE1_KINDS:
                for lvl in range(m.G.levels):
                    m.add_cases("stage1", bad_stage1(m, "stage1", what, lvl, sp=sp), what,
                                asid=a)
            m.add_cases("stage1", noncanonical(m, 4), "noncanonical", asid=a)
        for vm in vms:
            for what in STAGE2_KINDS:
                for lvl in range(m.H.levels):
                    m.add_cases("stage2", bad_stage2(m, "stage2", what, lvl, vm=vm), what,
                                vmid=vm.vmid)
            m.add_cases("stage2", gpa_beyond(m, 4), "gpa_range", vmid=vm.vmid)
            m.add_cases("stage2", gpa_top(m, vm, 4), "gpa_top", vmid=vm.vmid)
        for vm, a, sp in spaces:
            for what in STAGE1_KINDS:
                for lvl in range(m.G.levels):
                    m.add_cases("both", bad_stage1(m, "both", what, lvl, vm=vm, sp=sp),
                                "g_" + what, vmid=vm.vmid, asid=a)
            for what in STAGE2_KINDS:
                for lvl in range(m.H.levels):
                    m.add_cases("both", bad_stage2(m, "both", what, lvl, vm=vm, sp=sp),
                                "h_" + what, vmid=vm.vmid, asid=a)
            for what in PT_HOST_KINDS:
                for lvl in range(m.G.levels - 1):
                    m.add_cases("both", bad_pt_host(m, what, lvl, vm=vm, sp=sp),
                                "pt_" + what, vmid=vm.vmid, asid=a)
            m.add_cases("both", noncanonical(m, 4), "noncanonical", vmid=vm.vmid, asid=a)
    # MXR = 1 loads of execute-only leaves at every level (x_only_leaf: the leaf itself, not
    # a pointer, is made execute-only): satp's (stage1), the G-stage's (stage2, both: h_),
    # the VS-stage's (g_; vsstatus.MXR may be the one that makes it readable) and a guest
    # table's host leaf (pt_: an implicit access, which MXR does not reach); the random MXR
    # bits of the other cases mix MXR = 0 and vsstatus.MXR = 1 with these same kinds
    loads = ("ld", "hlv")
    for _ in range(fault_rounds):
        for a, sp in satps.items():
            for lvl in range(m.G.levels):
                m.add_cases("stage1", bad_stage1(m, "stage1", "x_only_leaf", lvl, sp=sp),
                            "mxr_x_only", asid=a, ops=loads, mxr=True)
        for vm in vms:
            for lvl in range(m.H.levels):
                m.add_cases("stage2", bad_stage2(m, "stage2", "x_only_leaf", lvl, vm=vm),
                            "mxr_x_only", vmid=vm.vmid, ops=loads, mxr=True)
        for vm, a, sp in spaces:
            for lvl in range(m.G.levels):
                m.add_cases("both", bad_stage1(m, "both", "x_only_leaf", lvl, vm=vm, sp=sp),
                            "g_mxr_x_only", vmid=vm.vmid, asid=a, ops=loads)
            for lvl in range(m.H.levels):
                m.add_cases("both", bad_stage2(m, "both", "x_only_leaf", lvl, vm=vm, sp=sp),
                            "h_mxr_x_only", vmid=vm.vmid, asid=a, ops=loads, mxr=True)
            for lvl in range(m.G.levels - 1):
                m.add_cases("both", bad_pt_host(m, "x_only", lvl, vm=vm, sp=sp),
                            "pt_mxr_x_only", vmid=vm.vmid, asid=a, ops=loads, mxr=True)
    # QEMU and the model run them in this order: shuffled, so A/D updates interleave
    r.shuffle(m.cases)
    return m
