"""Page tables with perforated 2 MiB pages for PerforatedL2Tlb (docs/perforated-l2tlb.md,
"Page-table extension"), built from records that are the truth the tests check against.

Why a separate builder: ``pagetables.PageTableBuilder`` creates every table as one 4 KiB page,
while a perforated page needs its PD page followed by its shadow page (PD at P, shadow at
P + 4 KiB), a hole table behind the shadow entry, and the global hole bitmap.  And the
splintered baseline (perforation off) needs the same translations as 512 ordinary PTEs, so the
builder keeps *records* (what each page translates to) and writes them in one of two modes:

* ``mode="perforated"``: a perforated region is a PD leaf (PS = 1, bit 52, filter in 20:13),
  its holes' bits set in the bitmap at ``bitmap_base``, a shadow entry (same index in the
  shadow page) pointing at a hole table with the holes' PTEs;
* ``mode="splintered"``: the same region as a PD pointer to a PT of 512 PTEs (non-holes map
  base + i with the large page's permissions, allocated holes their own frame and
  permissions, unallocated holes not present), no bitmap: the page tables the OS would have
  built without perforated pages.

Data frames come from their own allocator seeded by the scenario only, so two machines of one
seed in the two modes give every page the same translation.  ``expect`` computes what a request
must get from the records alone (never through ``models.perforated``).

Layout (byte addresses): tables in [1 MiB, 512 MiB), data frames in [512 MiB, 2^(paBits-1)),
the bitmap at ``bitmap_base = 2^(paBits-1)`` (covers every frame below 2^paBits: 2^(paBits-15)
bytes).

Fragmentation scenarios (``FragScenario``): a fraction of 2 MiB regions fragmented with
``holes`` holes each, clustered (consecutive, from a random start: few filter bits) or
dispersed (spread over the region: up to every filter bit), allocated (the hole has its own
frame) or unallocated (hole PTE not present: the OS allocates lazily), and phase changes
(punch / patch holes) that return the invalidations the OS must send.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from models.perforated import (F_NONE, F_PAGE, F_RSVD, INV_FRAME, INV_PAGE, PERF_BIT,
                               CMD_WRITE, CMD_EXEC)
from models.ptformats import X86_A, X86_P, X86_PS, fmt, mask
from models.walker import SparseMemory

from .pagetables import FrameAllocator

X86 = fmt("x86_64_4")
TABLE_LO, TABLE_HI = 1 << 20, 1 << 29


def filter_of(offsets) -> int:
    """The exact coarse filter of a set of hole offsets (0..511)."""
    f = 0
    for i in offsets:
        f |= 1 << (i // 64)
    return f


@dataclass
class HoleRec:
    ppn: int | None            # None: unallocated (hole PTE not present)
    w: int = 1
    u: int = 1
    x: int = 1
    a: int = 1
    d: int = 1


@dataclass
class LargeRec:
    vpn2m: int
    ppn2m: int                 # 4K frame number of the base (multiple of 512)
    w: int = 1
    u: int = 1
    x: int = 1
    a: int = 1
    d: int = 1
    perforated: bool = False
    holes: dict = field(default_factory=dict)      # offset -> HoleRec
    filter: int | None = None                       # None: the exact filter
    shadow: tuple = (1, 1, 1)                       # (w, u, x) of the shadow entry
    shadow_present: bool = True

    @property
    def filt(self) -> int:
        return filter_of(self.holes) if self.filter is None else self.filter


@dataclass
class SmallRec:
    vpn: int
    ppn: int
    w: int = 1
    u: int = 1
    x: int = 1
    a: int = 1
    d: int = 1


@dataclass
class Expect:
    fault: int = F_NONE
    ppn: int = 0
    pageSize: int = 0
    perm: tuple = (0, 0, 0)    # (w, u, x); perm_r is 1 on a translation
    hole: bool = False         # the page is decided a hole (filter bit 1, bitmap bit set)
    large: bool = False        # translated through a large page (base + offset)
    reason: str = ""

    def fields(self) -> dict:
        ok = self.fault == F_NONE
        return dict(fault=self.fault, ppn=self.ppn if ok else 0,
                    pageSize=self.pageSize if ok else 0, perm_r=int(ok),
                    perm_w=self.perm[0] if ok else 0, perm_u=self.perm[1] if ok else 0,
                    perm_x=self.perm[2] if ok else 0)


class Space:
    def __init__(self, asid: int, root: int):
        self.asid, self.root = asid, root           # root: page number of the PML4
        self.small: dict[int, SmallRec] = {}
        self.large: dict[int, LargeRec] = {}
        self.pdpt: dict[int, int] = {}              # idx3 -> page
        self.pd: dict[tuple, int] = {}              # (idx3, idx2) -> page (shadow = page + 1)
        self.pt: dict[int, int] = {}                # vpn2m -> page of the PT (4K pages)
        self.holept: dict[int, int] = {}            # vpn2m -> page of the hole table
        self.upper: dict = {}                       # (level, prefix) -> (w, u, x) of pointers


class PerforatedMachine:
    """Physical memory, hole bitmap and address spaces (see the module doc)."""

    def __init__(self, seed: int = 0, *, pa_bits: int = 52, mode: str = "perforated",
                 mem: SparseMemory | None = None):
        if mode not in ("perforated", "splintered"):
            raise ValueError(mode)
        self.mode, self.pa_bits, self.seed = mode, pa_bits, seed
        self.mem = mem if mem is not None else SparseMemory()
        self.bitmap_base = 1 << (pa_bits - 1)
        self.tables = FrameAllocator(random.Random(f"tables:{seed}:{mode}"), TABLE_LO, TABLE_HI)
        self.data = FrameAllocator(random.Random(f"data:{seed}"), TABLE_HI, self.bitmap_base)
        self.spaces: dict[int, Space] = {}
        self.broken: dict[tuple, tuple] = {}        # (asid, kind, key) -> (fault, reason)

    # ------------------------------------------------------------------ tables
    def space(self, asid: int) -> Space:
        if asid not in self.spaces:
            self.spaces[asid] = Space(asid, self.tables.alloc(0) >> 12)
        return self.spaces[asid]

    def _w(self, page: int, idx: int, value: int) -> int:
        addr = page * 4096 + idx * 8
        self.mem.write(addr, value)
        return addr

    def _pd(self, sp: Space, vpn: int) -> int:
        """The PD page of ``vpn``, creating the PDPT and PD (a PD with its shadow page: two
        contiguous frames) on the way."""
        i3, i2 = (vpn >> 27) & 511, (vpn >> 18) & 511
        if i3 not in sp.pdpt:
            sp.pdpt[i3] = self.tables.alloc(0) >> 12
            self._w(sp.root, i3, X86.encode_table(sp.pdpt[i3] << 12))
        if (i3, i2) not in sp.pd:
            sp.pd[(i3, i2)] = self.tables.alloc(0, count=2) >> 12
            self._w(sp.pdpt[i3], i2, X86.encode_table(sp.pd[(i3, i2)] << 12))
        return sp.pd[(i3, i2)]

    def _pt(self, sp: Space, vpn2m: int) -> int:
        if vpn2m not in sp.pt:
            pd = self._pd(sp, vpn2m << 9)
            sp.pt[vpn2m] = self.tables.alloc(0) >> 12
            self._w(pd, vpn2m & 511, X86.encode_table(sp.pt[vpn2m] << 12))
        return sp.pt[vpn2m]

    @staticmethod
    def _leaf(ppn: int, level: int, r) -> int:
        return X86.encode_leaf(ppn << 12, level, w=r.w, u=r.u, x=r.x, a=r.a, d=r.d)

    # ------------------------------------------------------------------ mappings
    def map_4k(self, asid: int, vpn: int, ppn: int | None = None, **perm) -> SmallRec:
        sp = self.space(asid)
        if vpn in sp.small or (vpn >> 9) in sp.large:
            raise ValueError(f"vpn {vpn:#x} already mapped in asid {asid}")
        rec = SmallRec(vpn, self.data.alloc(0) >> 12 if ppn is None else ppn, **perm)
        sp.small[vpn] = rec
        self._w(self._pt(sp, vpn >> 9), vpn & 511, self._leaf(rec.ppn, 0, rec))
        return rec

    def map_2m(self, asid: int, vpn2m: int, ppn2m: int | None = None, **perm) -> LargeRec:
        return self.map_perforated(asid, vpn2m, None, ppn2m=ppn2m, **perm)

    def map_perforated(self, asid: int, vpn2m: int, holes, *, ppn2m: int | None = None,
                       allocated: bool = True, filter: int | None = None,
                       hole_perm: dict | None = None, shadow: tuple = (1, 1, 1),
                       **perm) -> LargeRec:
        """A 2 MiB page at ``vpn2m`` (holes None: an ordinary 2 MiB leaf).  ``holes``: offsets
        (each allocated or not per ``allocated``, permissions ``hole_perm``) or a dict
        offset -> HoleRec.  ``filter``: written as given (a lie) instead of the exact one."""
        sp = self.space(asid)
        if vpn2m in sp.large or vpn2m in sp.pt:
            raise ValueError(f"vpn2m {vpn2m:#x} already mapped in asid {asid}")
        base = self.data.alloc(1) >> 12 if ppn2m is None else ppn2m
        rec = LargeRec(vpn2m, base, perforated=holes is not None, filter=filter, shadow=shadow,
                       **perm)
        if holes is not None:
            if not isinstance(holes, dict):
                hp = hole_perm or {}
                holes = {i: HoleRec(self.data.alloc(0) >> 12 if allocated else None, **hp)
                         for i in holes}
            rec.holes = dict(holes)
        sp.large[vpn2m] = rec
        self._write_large(sp, rec)
        return rec

    def _write_large(self, sp: Space, rec: LargeRec) -> None:
        pd = self._pd(sp, rec.vpn2m << 9)
        idx = rec.vpn2m & 511
        if not rec.perforated:
            self._w(pd, idx, self._leaf(rec.ppn2m, 1, rec))
            return
        if self.mode == "splintered":
            pt = self._pt(sp, rec.vpn2m)
            for i in range(512):
                self._w(pt, i, self._splinter_pte(rec, i))
            return
        leaf = self._leaf(rec.ppn2m, 1, rec) | (1 << PERF_BIT) | (rec.filt << 13)
        self._w(pd, idx, leaf)
        if rec.holes and rec.vpn2m not in sp.holept:
            sp.holept[rec.vpn2m] = self.tables.alloc(0) >> 12
        if rec.vpn2m in sp.holept:
            w, u, x = rec.shadow
            sh = X86.encode_table(sp.holept[rec.vpn2m] << 12, w=w, u=u, x=x) \
                if rec.shadow_present else 0
            self._w(pd + 1, idx, sh)
            for i in range(512):
                h = rec.holes.get(i)
                pte = 0 if h is None or h.ppn is None else self._leaf(h.ppn, 0, h)
                self._w(sp.holept[rec.vpn2m], i, pte)
        for k in range(8):                   # the 8 bitmap words of the 2 MiB frame
            word = sum(1 << (i - 64 * k) for i in rec.holes if i // 64 == k)
            self.mem.write(self.bitmap_addr(rec.ppn2m + 64 * k), word)

    def _splinter_pte(self, rec: LargeRec, i: int) -> int:
        h = rec.holes.get(i)
        if h is None:
            return self._leaf(rec.ppn2m + i, 0, rec)
        if h.ppn is None:
            return 0
        w, u, x = rec.shadow           # the shadow entry's bits fold into the hole's PTE
        return self._leaf(h.ppn, 0, HoleRec(h.ppn, h.w & w, h.u & u, h.x & x, h.a, h.d))

    def bitmap_addr(self, frame: int) -> int:
        return self.bitmap_base + 8 * (frame >> 6)

    def _set_bit(self, frame: int, on: bool) -> None:
        a = self.bitmap_addr(frame)
        v = self.mem.read(a)
        v = v | (1 << (frame & 63)) if on else v & ~(1 << (frame & 63))
        self.mem.write(a, v)

    def set_bitmap_bit(self, frame: int, on: bool = True) -> None:
        """Raw bitmap edit (bad input: a bit the filter does not cover)."""
        self._set_bit(frame, on)

    # ------------------------------------------------------------------ phase changes
    def punch_hole(self, asid: int, vpn2m: int, i: int, *, allocated: bool = True,
                   **perm) -> list:
        """Make offset ``i`` of a (perforated or ordinary) large page a hole; returns the
        invalidations the OS sends after the change (dicts for ``PerforatedModel.run``)."""
        sp = self.space(asid)
        rec = sp.large[vpn2m]
        rec.perforated = True
        rec.holes[i] = HoleRec(self.data.alloc(0) >> 12 if allocated else None, **perm)
        self._write_large(sp, rec)
        return [dict(inval=INV_FRAME, frame=rec.ppn2m >> 9),
                dict(inval=INV_PAGE, asid=asid, vpn=(vpn2m << 9) | i)]

    def patch_hole(self, asid: int, vpn2m: int, i: int) -> list:
        """Offset ``i`` translates through the large page again."""
        sp = self.space(asid)
        rec = sp.large[vpn2m]
        del rec.holes[i]
        self._write_large(sp, rec)
        return [dict(inval=INV_FRAME, frame=rec.ppn2m >> 9),
                dict(inval=INV_PAGE, asid=asid, vpn=(vpn2m << 9) | i)]

    # ------------------------------------------------------------------ addresses
    def entry_addr(self, asid: int, vpn: int, kind: str) -> int:
        """Byte address of the entry of ``kind`` (pml4e, pdpte, pde, pte, shadow, hole,
        bitmap) a walk of ``vpn`` reads (bus-error injection)."""
        sp = self.space(asid)
        i3, i2, i1, i0 = (vpn >> 27) & 511, (vpn >> 18) & 511, (vpn >> 9) & 511, vpn & 511
        if kind == "pml4e":
            return sp.root * 4096 + i3 * 8
        if kind == "pdpte":
            return sp.pdpt[i3] * 4096 + i2 * 8
        if kind == "pde":
            return sp.pd[(i3, i2)] * 4096 + i1 * 8
        if kind == "pte":
            return sp.pt[vpn >> 9] * 4096 + i0 * 8
        if kind == "shadow":
            return (sp.pd[(i3, i2)] + 1) * 4096 + i1 * 8
        if kind == "hole":
            return sp.holept[vpn >> 9] * 4096 + i0 * 8
        if kind == "bitmap":
            return self.bitmap_addr(sp.large[vpn >> 9].ppn2m + i0)
        raise ValueError(kind)

    # ------------------------------------------------------------------ bad input
    def corrupt(self, asid: int, vpn: int, what: str) -> None:
        """Break the entry ``what`` names on ``vpn``'s path (the caller keeps the path
        private).  what: pml4e_ps, pdpte_ps (1 GiB leaf: no 1 GiB pages), leaf2m_rsvd (bits
        20:13 of an ordinary 2 MiB leaf), <kind>_pa (address bit at or above paBits; kind
        pml4e, pdpte, pde, pte, shadow, hole), shadow_ps, shadow_missing, leaf2m_a0, hole_a0,
        pte_a0."""
        sp = self.space(asid)
        key = {"pml4e": vpn >> 27, "pdpte": vpn >> 18, "pde": vpn >> 9, "pte": vpn,
               "shadow": vpn >> 9, "hole": vpn}
        kind = what.split("_")[0]
        if kind == "leaf2m":
            kind = "pde"
        a = self.entry_addr(asid, vpn, kind)
        v = self.mem.read(a)
        if what in ("pml4e_ps", "pdpte_ps", "shadow_ps"):
            v |= 1 << X86_PS
            code, reason = F_RSVD, what
        elif what == "leaf2m_rsvd":
            assert (v >> X86_PS) & 1 and not (v >> PERF_BIT) & 1, "needs an ordinary 2M leaf"
            v |= 1 << 13
            code, reason = F_RSVD, what
        elif what.endswith("_pa"):
            if self.pa_bits >= 52:
                raise ValueError("no address bit above paBits to set with paBits = 52")
            v |= 1 << self.pa_bits
            code, reason = F_RSVD, what
        elif what == "shadow_missing":
            v &= ~(1 << X86_P)
            code, reason = F_PAGE, what
        elif what in ("leaf2m_a0", "hole_a0", "pte_a0"):
            v &= ~(1 << X86_A)
            code, reason = F_PAGE, what
        else:
            raise ValueError(what)
        self.mem.write(a, v)
        self.broken[(asid, kind, key[kind])] = (code, reason)

    # ------------------------------------------------------------------ expectations
    def expect(self, asid: int, vpn: int, cmd: int = 0, user: int = 0, *,
               perforation: bool = True) -> Expect:
        """What a request must get, from the records (docs "Translation flow", "Faults")."""
        sp = self.space(asid)
        b = self.broken

        def brk(kind, k):
            return b.get((asid, kind, k))

        for kind, k in (("pml4e", vpn >> 27), ("pdpte", vpn >> 18)):
            if brk(kind, k):
                return Expect(fault=brk(kind, k)[0], reason=brk(kind, k)[1])
        v2 = vpn >> 9
        rec = sp.large.get(v2)
        if rec is None:
            s = sp.small.get(vpn)
            if s is None:
                return Expect(fault=F_PAGE, reason="not mapped")
            for kind, k in (("pde", v2), ("pte", vpn)):
                if brk(kind, k):
                    return Expect(fault=brk(kind, k)[0], reason=brk(kind, k)[1])
            return self._check(Expect(ppn=s.ppn, perm=(s.w, s.u, s.x)), s.d, cmd, user)
        i = vpn & 511
        if not rec.perforated:
            if brk("pde", v2):
                return Expect(fault=brk("pde", v2)[0], reason=brk("pde", v2)[1])
            return self._check(Expect(ppn=rec.ppn2m + i, pageSize=1, perm=(rec.w, rec.u, rec.x),
                                      large=True), rec.d, cmd, user)
        if self.mode == "perforated" and not perforation:
            return Expect(fault=F_PAGE, reason="perforated leaf, perforation off")
        if self.mode == "perforated" and brk("pde", v2):
            return Expect(fault=brk("pde", v2)[0], reason=brk("pde", v2)[1])
        frame = rec.ppn2m + i
        bit = (self.mem.read(self.bitmap_addr(frame)) >> (frame & 63)) & 1 \
            if self.mode == "perforated" else int(i in rec.holes)
        filt = (rec.filt >> (i // 64)) & 1 if self.mode == "perforated" else 1
        if not (filt and bit):
            return self._check(Expect(ppn=frame, perm=(rec.w, rec.u, rec.x), large=True),
                               rec.d, cmd, user)
        h = rec.holes.get(i)
        if self.mode == "perforated":
            if brk("shadow", v2):
                return Expect(fault=brk("shadow", v2)[0], reason=brk("shadow", v2)[1], hole=True)
            if not rec.shadow_present:
                return Expect(fault=F_PAGE, reason="shadow entry not present", hole=True)
            if brk("hole", vpn):
                return Expect(fault=brk("hole", vpn)[0], reason=brk("hole", vpn)[1], hole=True)
        if h is None or h.ppn is None:
            return Expect(fault=F_PAGE, reason="unallocated hole", hole=True)
        w, u, x = rec.shadow
        return self._check(Expect(ppn=h.ppn, perm=(h.w & w, h.u & u, h.x & x), hole=True),
                           h.d, cmd, user)

    @staticmethod
    def _check(e: Expect, d: int, cmd: int, user: int) -> Expect:
        w, u, x = e.perm
        if (user and not u) or (cmd == CMD_WRITE and not (w and d)) or (cmd == CMD_EXEC and not x):
            return Expect(fault=F_PAGE, hole=e.hole, reason="permission")
        return e


# ----------------------------------------------------------------------------- scenarios
def hole_offsets(rng: random.Random, n: int, layout: str) -> list:
    """``n`` hole offsets in a 2 MiB region: 'clustered' consecutive from a random start,
    'dispersed' spread evenly with a random phase (every filter bit once n >= 8)."""
    n = max(0, min(n, 512))
    if n == 0:
        return []
    if layout == "clustered":
        start = rng.randrange(0, 512 - n + 1)
        return list(range(start, start + n))
    if layout == "dispersed":
        step = 512 / n
        phase = rng.random() * step
        return sorted({int(phase + k * step) % 512 for k in range(n)})
    raise ValueError(layout)


@dataclass
class FragScenario:
    """One address space (asid) with ``regions`` 2 MiB regions, ``frac`` of them fragmented
    with ``holes`` holes each: in mode perforated a perforated page, in mode splintered 512
    PTEs; the others ordinary 2 MiB pages."""
    machine: PerforatedMachine
    asid: int
    regions: list              # vpn2m of every region
    fragmented: list           # vpn2m of the fragmented ones

    @classmethod
    def build(cls, seed: int, *, mode: str = "perforated", regions: int = 16,
              frac: float = 0.25, holes: int = 8, layout: str = "dispersed",
              allocated: bool = True, asid: int = 1, pa_bits: int = 52,
              vpn2m_base: int = 0x100) -> "FragScenario":
        m = PerforatedMachine(seed, pa_bits=pa_bits, mode=mode)
        rng = random.Random(f"frag:{seed}")
        nfrag = round(regions * frac)
        order = list(range(regions))
        rng.shuffle(order)
        frag = set(order[:nfrag])
        vs, fr = [], []
        for k in range(regions):
            v2 = vpn2m_base + k
            vs.append(v2)
            if k in frag:
                m.map_perforated(asid, v2, hole_offsets(rng, holes, layout), allocated=allocated)
                fr.append(v2)
            else:
                m.map_2m(asid, v2)
        return cls(m, asid, vs, fr)

    def change(self, rng: random.Random, n: int = 1, allocated: bool = True,
               keep: frozenset = frozenset()) -> list:
        """A phase change: ``n`` times, patch a hole of a fragmented region or punch a new
        one (half each, a punch when the region has none).  Holes whose VPN is in ``keep``
        are never patched.  Returns the invalidations the OS sends afterwards, in order."""
        m, out = self.machine, []
        for _ in range(n):
            v2 = rng.choice(self.fragmented)
            rec = m.space(self.asid).large[v2]
            patchable = [i for i in sorted(rec.holes) if (v2 << 9) | i not in keep]
            if patchable and rng.random() < 0.5:
                out += m.patch_hole(self.asid, v2, rng.choice(patchable))
            else:
                free = [i for i in range(512) if i not in rec.holes]
                out += m.punch_hole(self.asid, v2, rng.choice(free), allocated=allocated)
        return out

    def hole_vpns(self) -> list:
        sp = self.machine.space(self.asid)
        return [(v2 << 9) | i for v2 in self.fragmented for i in sorted(sp.large[v2].holes)]

    def random_vpns(self, rng: random.Random, n: int) -> list:
        return [(rng.choice(self.regions) << 9) | rng.randrange(512) for _ in range(n)]

    def sweep_vpns(self, rng: random.Random) -> list:
        """One page of every 64-page chunk of every region, in random order: each bitmap word and
        filter region of the footprint used once, as a long-running program has."""
        out = [(r << 9) | (c * 64 + rng.randrange(64)) for r in self.regions for c in range(8)]
        rng.shuffle(out)
        return out
