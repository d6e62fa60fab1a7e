"""NestedWalker workloads: one guest (vmid 1, asid 1) over one host, real page tables in
memory (built with the testbenches' builder, tb/xlat_tb/pagetables.py), and the stream of walk
requests a core's TLB misses would send. Deterministic by seed.

Locality workloads (guest 4 KiB pages over host 4 KiB pages, every table at both stages
4 KiB): the request stream *is* the TLB-miss stream.

- ``seq``: consecutive pages of one region, each once (a streaming scan);
- ``stride``: every 513th page (2 MiB + 4 KiB): each walk needs a new guest leaf table;
- ``random``: pages drawn uniformly (with replacement) from a 64 GiB region.

Huge-page mixes (``mix:<guest>:<host>``): random 4 KiB accesses over a 2 GiB region, filtered
by a 1536-entry fully associative LRU TLB that holds each translation at its *effective* page
size, min(guest leaf, host leaf); the misses are the walk requests. Per 2 MiB guest region
the guest maps one 2 MiB page with probability ``g`` (else 4 KiB pages); the host backs each
2 MiB GPA region with:

- ``h4k`` / ``h2m`` / ``h1g``: always 4 KiB / 2 MiB / 1 GiB pages;
- ``thp<p>``: a 2 MiB page with probability p, independently of the guest (stock THP in
  both: the host does not know where the guest's huge pages are);
- ``gem<p>``: the same budget of host huge pages (a fraction p of the regions), placed on the
  regions where the guest has a huge page first (Gemini-like coordination).

Memory layout: guest RAM is GPA [2 MiB, 64 GiB), host RAM HPA [1 GiB, 1 TiB) (or less if
paBits is smaller), blocks placed at random; guest page-table pages come from 2 MiB GPA
pools (512 consecutive frames), guest 4 KiB data frames from 2 MiB GPA chunks handed out in
first-touch order. Leaves have A set; D is set except in host leaves that map data (dirty
logging armed: the first write to each host page sets D and emits a dirty event); host leaves
that map guest page tables have D set (hardware A/D treats table reads as writes).
Requests: 75 % reads, 25 % writes (``write_p``), user = 1, a random offset in the page.
"""
from __future__ import annotations

import random
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[2] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from models.ptformats import page_bytes  # noqa: E402
from models.walker import WalkerConfig  # noqa: E402
from xlat_tb.pagetables import FrameAllocator, PageTableBuilder, sign_extend  # noqa: E402

PAIRS = {  # name -> (guest, host)
    "x86": ("x86_64_4", "ept4"),
    "x86_5": ("x86_64_5", "ept5"),
    "rv39": ("sv39", "sv39x4"),
    "rv48": ("sv48", "sv48x4"),
}
PAIR_LABEL = {"x86": "x86-64 4-level / EPT 4", "x86_5": "x86-64 5-level / EPT 5",
              "rv39": "Sv39 / Sv39x4", "rv48": "Sv48 / Sv48x4"}
LOCALITY = ("seq", "stride", "random")
MIXES = {  # name -> (guest huge fraction, host policy)
    "g2m_h4k": (1.0, "h4k"),
    "g2m_h2m": (1.0, "h2m"),
    "g2m_h1g": (1.0, "h1g"),
    "thp_g60_h30": (0.6, "thp0.3"),
    "thp_g60_h70": (0.6, "thp0.7"),
    "gem_g60_h30": (0.6, "gem0.3"),
    "gem_g60_h70": (0.6, "gem0.7"),
}
TLB_ENTRIES = 1536
GUEST_RAM = 1 << 36          # 64 GiB of GPA space for the guest
STRIDE_PAGES = 513
RANDOM_FOOTPRINT = 64 << 30  # bytes
MIX_FOOTPRINT = 2 << 30
R2M = 21                     # log2 of 2 MiB


@dataclass
class Workload:
    name: str
    pair: str
    kind: str                       # 'locality' | 'mix'
    params: dict                    # guest, host, adUpdate, paBits (the model's config)
    words: dict                     # HPA -> 64-bit word (the memory image)
    req: dict                       # arrays gva, asid, vmid, gRoot, hRoot, cmd, user
    facts: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.req["gva"])


class Machine:
    """One VM with one guest address space; mappings are created on first touch."""

    def __init__(self, guest: str, host: str, pa_bits: int, seed: int, *, guest_huge_p=0.0,
                 host_policy="h4k", dirty_log=True):
        self.cfg = WalkerConfig(guest, host, "hardware", pa_bits)
        self.G, self.H = self.cfg.G, self.cfg.H
        self.rng = random.Random(f"walker-workload:{seed}:{guest}:{host}:{pa_bits}:{guest_huge_p}:{host_policy}")
        self.words: dict[int, int] = {}
        self.hpa = FrameAllocator(self.rng, 1 << 30, 1 << min(pa_bits, 40))
        self.gpa = FrameAllocator(self.rng, 1 << R2M, min(GUEST_RAM, 1 << self.cfg.gpaBits))
        self.guest_huge_p, self.host_policy, self.dirty_log = guest_huge_p, host_policy, dirty_log
        kind = host_policy[:3]
        self.host_p = float(host_policy[3:]) if kind in ("thp", "gem") else None
        self.host_region: dict[int, int] = {}     # 2 MiB GPA region -> host leaf level
        self.guest_region: dict[int, int] = {}    # 2 MiB VA region -> guest leaf level
        self.huge_gpa_regions: set = set()        # GPA regions of guest huge pages
        self.page_gpa: dict[int, int] = {}        # VA page -> GPA page (4 KiB guest pages)
        self.region_gpa: dict[int, int] = {}      # VA region -> GPA base (2 MiB guest pages)
        self.pool: list = []
        self.chunk: list = []
        self.host = PageTableBuilder(self.H, new_table=self._host_table, write_word=self._w,
                                     pa_bits=pa_bits)
        self.guest = PageTableBuilder(self.G, new_table=self._guest_table, write_word=self._gw,
                                      pa_bits=pa_bits)
        self.hRoot, self.gRoot = self.host.root >> 12, self.guest.root >> 12
        rv = self.G.family == "rv"
        self.leaf_kw = dict(r=1, w=1, x=0 if rv else 1, u=1, a=1, d=1)

    # ---- memory
    def _w(self, addr: int, value: int):
        self.words[addr] = value

    def _host_table(self, x4=False) -> int:
        return self.hpa.alloc(0, count=4, align=4) if x4 else self.hpa.alloc(0)

    def _gw(self, gpa: int, value: int):
        self.words[self.hpa_of(gpa, pagetable=True)] = value

    def _guest_table(self, x4=False) -> int:
        if not self.pool:
            base = self.gpa.alloc(1)
            self.pool = [base + i * 4096 for i in range(511, -1, -1)]
        g = self.pool.pop()
        self.host_map(g, pagetable=True)
        return g

    # ---- host side
    def host_level_for(self, gpa: int) -> int:
        r = gpa >> R2M
        lvl = self.host_region.get(r)
        if lvl is None:
            kind = self.host_policy[:3]
            if kind == "h4k":
                lvl = 0
            elif kind == "h2m":
                lvl = 1
            elif kind == "h1g":
                lvl = 2
            elif kind == "thp":
                lvl = 1 if self.rng.random() < self.host_p else 0
            elif kind == "gem":
                # the host's huge pages go to the guest's huge regions first
                q = min(1.0, self.host_p / self.guest_huge_p) if self.guest_huge_p else 0.0
                lvl = 1 if r in self.huge_gpa_regions and self.rng.random() < q else 0
            else:
                raise ValueError(self.host_policy)
            lvl = min(lvl, self.H.max_leaf_level())
            self.host_region[r] = lvl
        return lvl

    def host_map(self, gpa: int, *, pagetable: bool) -> int:
        have = self.host.covering_leaf_level(gpa)
        if have is not None:
            return have
        lvl = self.host_level_for(gpa)
        d = 1 if pagetable or not self.dirty_log else 0
        size = page_bytes(lvl)
        self.host.map(gpa & ~(size - 1), self.hpa.alloc(lvl), lvl,
                      **dict(r=1, w=1, x=1, u=1, a=1, d=d))
        return lvl

    def hpa_of(self, gpa: int, *, pagetable: bool) -> int:
        self.host_map(gpa, pagetable=pagetable)
        return self.host.lookup(gpa)[0]

    # ---- guest side
    def touch(self, va: int) -> int:
        """Map the page holding ``va`` (guest and host) if needed; returns the effective
        page-size code of its translation."""
        reg = va >> R2M
        g = self.guest_region.get(reg)
        if g is None:
            g = 1 if self.guest_huge_p and self.rng.random() < self.guest_huge_p else 0
            self.guest_region[reg] = g
            if g:
                base = self.gpa.alloc(1)
                self.huge_gpa_regions.add(base >> R2M)
                self.region_gpa[reg] = base
                self.guest.map(reg << R2M, base, 1, **self.leaf_kw)
        if g:
            gpa = self.region_gpa[reg] + (va & ((1 << R2M) - 1))
        else:
            vp = va >> 12
            gp = self.page_gpa.get(vp)
            if gp is None:
                if not self.chunk:
                    base = self.gpa.alloc(1)
                    self.chunk = [base + i * 4096 for i in range(511, -1, -1)]
                gp = self.chunk.pop()
                self.page_gpa[vp] = gp
                self.guest.map(vp << 12, gp, 0, **self.leaf_kw)
            gpa = gp + (va & 0xFFF)
        h = self.host_map(gpa, pagetable=False)
        return min(g, h)

    def gva(self, va: int) -> int:
        return sign_extend(va, self.G.input_bits)


def _requests(m: Machine, vas, rng: np.random.Generator, write_p: float) -> dict:
    n = len(vas)
    off = rng.integers(0, 4096, n, dtype=np.uint64)
    gva = np.fromiter((m.gva((int(v) & ~0xFFF) | int(o)) for v, o in zip(vas, off)), dtype=np.uint64, count=n)
    return dict(gva=gva, asid=np.ones(n, np.uint32), vmid=np.ones(n, np.uint32),
                gRoot=np.full(n, m.gRoot, np.uint64), hRoot=np.full(n, m.hRoot, np.uint64),
                cmd=(rng.random(n) < write_p).astype(np.uint8), user=np.ones(n, np.uint8))


def _base_va(m: Machine, rng: np.random.Generator, span: int) -> int:
    """A random 1 GiB-aligned base in the lower half of the guest VA space with room for span."""
    top = 1 << (m.G.input_bits - 1)
    slots = max(1, (top - span) >> 30)
    return int(rng.integers(1, slots)) << 30


def locality(pair: str, kind: str, n: int, seed: int = 1, pa_bits: int = 52,
             write_p: float = 0.25) -> Workload:
    """``kind`` in seq / stride / random, guest 4 KiB over host 4 KiB, ``n`` walks."""
    t0 = time.monotonic()
    guest, host = PAIRS[pair]
    m = Machine(guest, host, pa_bits, seed)
    rng = np.random.default_rng([seed, 7, LOCALITY.index(kind)])
    if kind == "seq":
        base = _base_va(m, rng, n << 12)
        pages = base // 4096 + np.arange(n, dtype=np.int64)
    elif kind == "stride":
        base = _base_va(m, rng, n * STRIDE_PAGES << 12)
        pages = base // 4096 + STRIDE_PAGES * np.arange(n, dtype=np.int64)
    elif kind == "random":
        base = _base_va(m, rng, RANDOM_FOOTPRINT)
        pages = base // 4096 + rng.integers(0, RANDOM_FOOTPRINT >> 12, n)
    else:
        raise ValueError(kind)
    vas = pages.astype(np.int64) << 12
    for v in vas:
        m.touch(int(v))
    req = _requests(m, vas, rng, write_p)
    facts = dict(walks=n, distinct_pages=int(len(np.unique(pages))), words=len(m.words),
                 gen_seconds=round(time.monotonic() - t0, 2))
    return Workload(f"{kind}", pair, "locality", m.cfg.__dict__.copy(), m.words, req, facts)


def mix(pair: str, name: str, accesses: int, seed: int = 1, pa_bits: int = 52,
        write_p: float = 0.25, tlb_entries: int = TLB_ENTRIES) -> Workload:
    """Huge-page mix ``name`` (MIXES): ``accesses`` random accesses, TLB-filtered to walks."""
    t0 = time.monotonic()
    g, hp = MIXES[name]
    guest, host = PAIRS[pair]
    m = Machine(guest, host, pa_bits, seed, guest_huge_p=g, host_policy=hp)
    rng = np.random.default_rng([seed, 11, list(MIXES).index(name)])
    base = _base_va(m, rng, MIX_FOOTPRINT)
    pages = base // 4096 + rng.integers(0, MIX_FOOTPRINT >> 12, accesses)
    tlb: OrderedDict = OrderedDict()
    walks = []
    eff_of = {}
    for p in pages:
        va = int(p) << 12
        eff = m.touch(va)
        key = (eff, va >> (12 + 9 * eff))
        eff_of[key] = eff
        if key in tlb:
            tlb.move_to_end(key)
            continue
        walks.append(va)
        tlb[key] = True
        if len(tlb) > tlb_entries:
            tlb.popitem(last=False)
    vas = np.array(walks, dtype=np.int64)
    req = _requests(m, vas, rng, write_p)
    # static alignment: distinct guest huge pages touched, and how the host backs them
    huge = [r for r, lv in m.guest_region.items() if lv]
    aligned = sum(1 for r in huge if (m.host.covering_leaf_level(m.region_gpa[r]) or 0) >= 1)
    sizes = [eff_of[k] for k in eff_of]
    facts = dict(accesses=accesses, walks=len(walks), words=len(m.words),
                 guest_huge_fraction=g, host_policy=hp,
                 guest_regions=len(m.guest_region), guest_huge_pages=len(huge),
                 aligned_pages=aligned, aligned_fraction_pages=(aligned / len(huge)) if huge else None,
                 distinct_translations=len(sizes),
                 mean_eff_bytes_distinct=float(np.mean([page_bytes(s) for s in sizes])) if sizes else 0.0,
                 tlb_entries=tlb_entries, gen_seconds=round(time.monotonic() - t0, 2))
    return Workload(name, pair, "mix", m.cfg.__dict__.copy(), m.words, req, facts)
