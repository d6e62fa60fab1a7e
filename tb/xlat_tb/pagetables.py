"""Page-table builder for the NestedWalker tests (and later blocks that walk tables).

Why: every walker test needs real page tables in the memory the DUT reads -- host tables at
HPAs, guest tables at GPAs (each guest table page mapped by the host tables), pages of every
size at both stages, shared tables, and deliberately broken entries -- built quickly and
reproducibly from a seed.  Expectations for well-formed mappings are computed here from the
builder's own records (where it put each page), independently of ``models.walker``, so the
model's unit tests can cross-check the two.

* ``FrameAllocator``  random, non-overlapping, naturally aligned blocks of 4K/2M/1G/512G...
  in an address range, deterministic by its ``random.Random``;
* ``PageTableBuilder`` one address space of one format: ``map`` pages of any size the format
  allows with chosen permissions and A/D, ``poke`` raw entries (bad things), ``lookup``;
  tables are created on demand through ``new_table`` and written through ``write_word``
  (for a guest builder: through the host mapping, gpa -> hpa);
* ``Scenario.random(cfg, seed)`` a random machine: VMs (vmid, host tables, hRoot), guest
  address spaces (asid, gRoot) whose tables may be shared, mixed page sizes at both stages
  (guest huge pages over host huge pages = aligned, over smaller ones = splintered), a list of
  valid targets (with the expected translation) and invalid ones (with the expected fault).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from models.ptformats import MODE_BARE, MODE_BOTH, MODE_S1, MODE_S2, EPT_MT_LO, RV_R, RV_W, RV_X, PtFormat, mask, page_bytes, X86_PS
from models.walker import F_ADDR, F_GUEST, F_HOST, F_RSVD, SparseMemory, WalkRequest, WalkerConfig


class MapConflict(Exception):
    """The requested mapping collides with an existing one of another size."""


def sign_extend(v: int, nbits: int) -> int:
    """A 64-bit value whose bits 63..nbits-1 copy bit nbits-1 of ``v`` (canonical form)."""
    v &= (1 << nbits) - 1
    if v >> (nbits - 1):
        v |= ((1 << 64) - 1) ^ ((1 << nbits) - 1)
    return v


# ----------------------------------------------------------------------------- allocator
class FrameAllocator:
    """Non-overlapping, naturally aligned blocks in [lo, hi) (byte addresses).

    ``alloc(k)`` returns the base of a free block of ``page_bytes(k)`` bytes (k = 0 4K, 1 2M,
    2 1G, 3 512G, ...); ``alloc(0, count=4, align=4)`` a 16 KiB-aligned run of 4 frames (an x4
    root).  Bookkeeping is per granularity: ``used[k]`` blocks taken whole, ``part[k]`` blocks
    with something inside, so a 1 GiB block never overlaps 4 KiB frames taken earlier."""

    MAXK = 6

    def __init__(self, rng: random.Random, lo: int, hi: int):
        self.rng, self.lo, self.hi = rng, lo, hi
        self.used = [set() for _ in range(self.MAXK)]
        self.part = [set() for _ in range(self.MAXK)]

    def _free(self, k: int, i: int) -> bool:
        if i in self.used[k] or i in self.part[k]:
            return False
        for j in range(k + 1, self.MAXK):
            if (i >> (9 * (j - k))) in self.used[j]:
                return False
        return True

    def _take(self, k: int, i: int):
        self.used[k].add(i)
        for j in range(k + 1, self.MAXK):
            self.part[j].add(i >> (9 * (j - k)))

    def alloc(self, k: int = 0, count: int = 1, align: int = 1, tries: int = 2000) -> int:
        size = page_bytes(k)
        first = -(-self.lo // size)
        last = self.hi // size - count          # inclusive start index
        if last < first:
            raise MemoryError(f"no room for {count} block(s) of {size:#x} in "
                              f"[{self.lo:#x}, {self.hi:#x})")
        for _ in range(tries):
            i = self.rng.randint(first, last)
            i -= i % align
            if i < first:
                continue
            if all(self._free(k, i + n) for n in range(count)):
                for n in range(count):
                    self._take(k, i + n)
                return i * size
        raise MemoryError(f"allocator full: {count} x {size:#x} in [{self.lo:#x}, {self.hi:#x})")

    def reserve(self, base: int, k: int) -> bool:
        """Take the block of size ``k`` at ``base`` if free."""
        i = base // page_bytes(k)
        if not self._free(k, i):
            return False
        self._take(k, i)
        return True


# ----------------------------------------------------------------------------- builder
class PageTableBuilder:
    """One address space of format ``F``.

    new_table(x4_root=False) -> byte address (in this space) of a zeroed table page.
    write_word(addr, value)   writes a word of this space into memory (guest: via gpa->hpa).
    Entries written are also kept in ``self.tables[table_addr][index]``."""

    def __init__(self, F: PtFormat, *, new_table, write_word, root: int | None = None,
                 pa_bits: int = 52):
        self.F, self.new_table, self.write_word, self.pa_bits = F, new_table, write_word, pa_bits
        self.tables: dict[int, dict[int, int]] = {}
        self.root = root if root is not None else new_table(F.x4)
        self.tables.setdefault(self.root, {})

    # -- table access
    def _set(self, table: int, idx: int, pte: int):
        self.tables.setdefault(table, {})[idx] = pte
        self.write_word(table + idx * 8, pte)

    def entry_location(self, va: int, level: int):
        """(table address, index) of the level-``level`` entry of ``va`` if that table exists."""
        F = self.F
        t = self.root
        for lvl in range(F.root_level, level, -1):
            pte = self.tables.get(t, {}).get(F.index(va, lvl))
            if pte is None or not F.valid(pte) or F.is_leaf(pte, lvl):
                return None
            t = F.addr_of(pte)
        return t, F.index(va, level)

    def entry(self, va: int, level: int):
        loc = self.entry_location(va, level)
        if loc is None:
            return None
        return self.tables.get(loc[0], {}).get(loc[1])

    def table_path(self, va: int, level: int, nonleaf: dict | None = None) -> int:
        """Address of the table holding ``va``'s level-``level`` entry, creating pointer
        entries above it; ``nonleaf`` {level: encode_table kwargs} applies to newly created
        pointers only."""
        F = self.F
        t = self.root
        for lvl in range(F.root_level, level, -1):
            idx = F.index(va, lvl)
            pte = self.tables.get(t, {}).get(idx)
            if pte is None or not F.valid(pte):
                nt = self.new_table(False)
                self.tables.setdefault(nt, {})
                self._set(t, idx, F.encode_table(nt, **((nonleaf or {}).get(lvl, {}))))
                t = nt
            elif F.is_leaf(pte, lvl):
                raise MapConflict(f"{F.name}: va {va:#x} already covered by a level-{lvl} leaf")
            else:
                t = F.addr_of(pte)
        return t

    def map(self, va: int, base: int, level: int, *, nonleaf=None, **leaf) -> int:
        """Map the page of size ``level`` holding ``va`` to ``base``; returns the entry's
        address in this space.  Mapping the same page again to the same leaf is a no-op;
        any other overlap raises MapConflict."""
        F = self.F
        t = self.table_path(va, level, nonleaf)
        idx = F.index(va, level)
        pte = F.encode_leaf(base, level, **leaf)
        old = self.tables.get(t, {}).get(idx)
        if old is not None and F.valid(old):
            if old == pte:
                return t + idx * 8
            raise MapConflict(f"{F.name}: va {va:#x} level {level} already mapped ({old:#x})")
        self._set(t, idx, pte)
        return t + idx * 8

    def poke(self, va: int, level: int, pte: int) -> int:
        """Write a raw entry at ``va``'s level-``level`` slot (creating tables above)."""
        t = self.table_path(va, level)
        self._set(t, self.F.index(va, level), pte)
        return t + self.F.index(va, level) * 8

    def lookup(self, va: int):
        """From the builder's records: (pa, leaf level, leaf pte, accumulated perm) for a
        well-formed path, else None.  Independent of models.walker's control flow."""
        F = self.F
        t = self.root
        perm = (1, 1, 1, 1)
        for lvl in range(F.root_level, -1, -1):
            pte = self.tables.get(t, {}).get(F.index(va, lvl))
            if pte is None or not F.valid(pte):
                return None
            leaf = F.is_leaf(pte, lvl)
            perm = F.perm_step(perm, pte, leaf)
            if leaf:
                off = va & (page_bytes(lvl) - 1)
                return F.leaf_base(pte, lvl) + off, lvl, pte, perm
            t = F.addr_of(pte)
        return None

    def covering_leaf_level(self, va: int):
        """Level of an existing leaf covering ``va`` (None if not mapped)."""
        r = self.lookup(va)
        return None if r is None else r[1]


# ----------------------------------------------------------------------------- scenario
@dataclass
class Target:
    """One address to walk.  ``expect``: for kind 'ok' the translation (ppn, guestPageSize,
    hostPageSize, guest perm, host perm, gpa); for a bad kind (fault, stage, level) and, when
    known, faultGpa.  ``cmd``/``user``: an access the construction guarantees is allowed (ok)
    or that triggers exactly the intended fault (bad)."""
    vmid: int
    asid: int
    gva: int
    kind: str
    expect: dict
    cmd: int = 0
    user: int = 0
    mode: int = MODE_BOTH    # models.ptformats MODE_*: 1 walks vm.native[asid], 2 gva is a GPA


@dataclass
class Vm:
    vmid: int
    hRoot: int                      # host page number of the host root
    host: PageTableBuilder
    gpa_alloc: FrameAllocator
    spaces: dict = field(default_factory=dict)   # asid -> PageTableBuilder
    pool: list = field(default_factory=list)     # free guest-table GPA pages (2M-mapped pool)
    native: dict = field(default_factory=dict)   # asid -> stage-1-only space (tables at HPAs)


def _rv_ok_perm(rng):
    """A random legal RISC-V leaf permission (R or X, no W without R)."""
    return rng.choice([dict(r=1, w=0, x=0), dict(r=1, w=1, x=0), dict(r=1, w=1, x=1),
                       dict(r=1, w=0, x=1), dict(r=0, w=0, x=1)])


class Scenario:
    """A random machine built from a seed (see ``random``)."""

    def __init__(self, cfg: WalkerConfig, seed: int, *, hpa_lo: int | None = None):
        self.cfg, self.seed = cfg, seed
        self.rng = random.Random(f"scenario:{seed}:{cfg.guest}:{cfg.host}:{cfg.paBits}")
        self.G, self.H = cfg.G, cfg.H
        self.mem = SparseMemory()
        top = 1 << cfg.paBits
        self.hpa = FrameAllocator(self.rng, hpa_lo if hpa_lo is not None else 1 << 20, top)
        self.vms: dict[int, Vm] = {}
        self.targets: list[Target] = []
        self.bad: list[Target] = []
        self.mode_targets: list[Target] = []  # stage-1-only / stage-2-only / bare (add_modes)
        self.pt_gpas: set = set()             # GPA pages holding guest tables (all VMs)
        self.ad_clear_p = 0.0                 # probability a leaf has A or D clear
        self.host_pt_ad_clear_p = 0.0
        self.perm_random = False

    # ------------------------------------------------------------------ VMs and spaces
    def add_vm(self, vmid: int, *, pool_p: float = 0.5) -> Vm:
        H = self.H
        if H.x4:
            root = self.hpa.alloc(0, count=4, align=4)
        else:
            root = self.hpa.alloc(0)
        host = PageTableBuilder(H, new_table=lambda x4=False: self.hpa.alloc(0),
                                write_word=self.mem.write, root=root, pa_bits=self.cfg.paBits)
        # GPAs the guest's PPN field can hold (x86 51:12, RISC-V 55:12) and the host accepts
        top = min(self.cfg.gpaBits, 52 if self.G.family == "x86" else 56)
        gpa_alloc = FrameAllocator(self.rng, 1 << 21, 1 << top)
        vm = Vm(vmid, root >> 12, host, gpa_alloc)
        vm.pool_p = pool_p
        self.vms[vmid] = vm
        return vm

    def host_leaf_kwargs(self, *, pagetable: bool, full: bool = False) -> dict:
        r = self.rng
        kw = dict(r=1, w=1, x=1, u=1, a=1, d=1)
        p = self.host_pt_ad_clear_p if pagetable else self.ad_clear_p
        if not full and p and r.random() < p:
            if r.random() < 0.5:
                kw["a"], kw["d"] = 0, 0
            else:
                kw["d"] = 0
        if not full and not pagetable and self.perm_random and r.random() < 0.4:
            if self.H.family == "ept":
                kw.update(r.choice([dict(r=1, w=1, x=1), dict(r=1, w=0, x=1), dict(r=1, w=1, x=0),
                                    dict(r=1, w=0, x=0), dict(r=0, w=0, x=1)]))
            else:
                kw.update(_rv_ok_perm(r))
                if r.random() < 0.05:
                    kw["u"] = 0
        return kw

    def _new_guest_table(self, vm: Vm) -> int:
        """A zeroed guest table page: a GPA page mapped in the host tables, either from a pool
        (a 2 MiB GPA block mapped by one 2 MiB host leaf: many guest tables behind one host
        leaf) or alone (a 4 KiB host leaf to a random frame)."""
        r = self.rng
        if vm.pool or r.random() < vm.pool_p:
            if not vm.pool:
                g2 = vm.gpa_alloc.alloc(1)
                h2 = self.hpa.alloc(1)
                vm.host.map(g2, h2, 1, **self.host_leaf_kwargs(pagetable=True))
                pages = [g2 + i * 4096 for i in range(512)]
                r.shuffle(pages)
                vm.pool = pages
            g = vm.pool.pop()
        else:
            g = vm.gpa_alloc.alloc(0)
            vm.host.map(g, self.hpa.alloc(0), 0, **self.host_leaf_kwargs(pagetable=True))
        self.pt_gpas.add(g)
        return g

    def guest_write(self, vm: Vm):
        def w(gpa, value):
            t = vm.host.lookup(gpa)
            if t is None:
                raise AssertionError(f"guest table word {gpa:#x} not mapped by the host")
            self.mem.write(t[0], value)
        return w

    def add_space(self, vm: Vm, asid: int, share_with: int | None = None) -> PageTableBuilder:
        """A guest address space; with ``share_with`` its root is new but its root entries
        point at the other space's tables (shared lower levels, as processes sharing memory)."""
        G = self.G
        gb = PageTableBuilder(G, new_table=lambda x4=False: self._new_guest_table(vm),
                              write_word=self.guest_write(vm), pa_bits=self.cfg.paBits)
        if share_with is not None:
            # one table dictionary and one VA allocator for both spaces: the new root's
            # entries point at the other space's lower tables, so mappings made later under
            # a shared root entry show in both spaces (as for processes sharing memory)
            other = vm.spaces[share_with]
            mine = gb.tables.pop(gb.root)
            gb.tables = other.tables
            gb.tables[gb.root] = mine
            for idx, pte in list(other.tables[other.root].items()):
                gb._set(gb.root, idx, pte)
            if getattr(other, "va_alloc", None) is None:
                other.va_alloc = FrameAllocator(self.rng, 0, 1 << G.input_bits)
            gb.va_alloc = other.va_alloc
            gb.shared_with = other
        vm.spaces[asid] = gb
        return gb

    def gRoot(self, vmid: int, asid: int) -> int:
        return self.vms[vmid].spaces[asid].root >> 12

    def request(self, t: Target, *, id: int = 0, cmd: int | None = None,
                user: int | None = None, flags: dict | None = None) -> WalkRequest:
        """``flags``: the privilege flags by name (models/privcheck.FLAGS); default: SUM = 1 on
        a RISC-V guest (a kernel reaching user memory, so a supervisor load or store of a U page
        is allowed: the targets' construction relies on it), every other flag 0."""
        vm = self.vms[t.vmid]
        space = vm.native[t.asid] if t.mode == MODE_S1 else vm.spaces[t.asid]
        if flags is None:
            flags = {"sum": int(self.G.family == "rv")}
        return WalkRequest(id=id, gva=t.gva, asid=t.asid, vmid=t.vmid,
                           gRoot=space.root >> 12, hRoot=vm.hRoot,
                           cmd=t.cmd if cmd is None else cmd,
                           user=t.user if user is None else user, mode=t.mode,
                           **{f"flags_{k}": int(v) for k, v in flags.items()})

    # ------------------------------------------------------------------ modes
    def native_space(self, vm: Vm, asid: int) -> PageTableBuilder:
        """The stage-1-only space of (vmid, asid): the guest format with its tables and frames
        at HPAs (docs/nested-walker.md, "Modes"); the same vmid / asid as a 2D space, so the
        guest PWC's stage-1-only tag bit is what keeps their entries apart."""
        if asid not in vm.native:
            vm.native[asid] = PageTableBuilder(self.G, new_table=lambda x4=False: self.hpa.alloc(0),
                                               write_word=self.mem.write, pa_bits=self.cfg.paBits)
        return vm.native[asid]

    @staticmethod
    def _allowed(perm) -> list:
        return [c for c, bit in ((0, 0), (1, 1), (2, 2)) if perm[bit]]

    def s1_target(self, vm: Vm, asid: int, gva: int) -> Target:
        pa, lvl, _, perm = self.native_space(vm, asid).lookup(gva)
        cmds = self._allowed(perm)
        cmd = self.rng.choice(cmds) if cmds else 0
        # RISC-V: the supervisor never fetches from a U page, SUM or not: that fetch is a user's
        user = int(self.G.family == "rv" and cmd == 2 and bool(perm[3]))
        t = Target(vm.vmid, asid, gva, "ok" if cmds else "noperm",
                   dict(ppn=pa >> 12, guestPageSize=lvl, hostPageSize=lvl, pageSize=lvl,
                        perm=perm, gpa=pa), cmd=cmd, user=user, mode=MODE_S1)
        self.mode_targets.append(t)
        return t

    def s2_target(self, vm: Vm, asid: int, gpa: int) -> Target:
        hpa, hl, _, hperm = vm.host.lookup(gpa)
        u0 = self.H.family == "rv" and not hperm[3]
        if self.H.family == "rv":
            hperm = hperm[:3] + (1,)
        cmds = self._allowed(hperm)
        kind = "host_u0" if u0 and cmds else ("ok" if cmds else "noperm")
        t = Target(vm.vmid, asid, gpa, kind,
                   dict(ppn=hpa >> 12, guestPageSize=hl, hostPageSize=hl, pageSize=hl,
                        perm=hperm, gpa=gpa), cmd=self.rng.choice(cmds) if cmds else 0,
                   mode=MODE_S2)
        if u0:
            t.expect.update(fault=F_HOST, stage=1, level=hl, faultGpa=gpa)
        self.mode_targets.append(t)
        return t

    def _missing_level(self, b: PageTableBuilder, a: int) -> tuple:
        """(level, entry address) of the entry a walk of ``a`` finds not valid in ``b``."""
        F = b.F
        for lvl in range(F.root_level, -1, -1):
            t, idx = b.entry_location(a, lvl)
            pte = b.tables.get(t, {}).get(idx)
            if pte is None or not F.valid(pte):
                return lvl, t + idx * 8
        raise AssertionError(f"{a:#x} is mapped")

    def add_modes(self, vm: Vm, asid: int, n: int = 6, *, full: bool = False) -> list[Target]:
        """Single-stage targets beside the 2D ones of (vm, asid): for ``n`` of its 2D targets a
        stage-1-only mapping of the same VA (the native space; a fresh HPA frame) and the
        stage-2-only walk of the 2D walk's GPA; then one bad target of each mode kind the
        formats allow: a stage-1-only VA not mapped (fault 1), a stage-1-only leaf beyond paBits
        (fault 5, stage 0), a stage-2-only GPA not mapped (fault 2) and beyond the GPA range
        (fault 5, stage 1, the whole address), a bare request (fault 4). Returns the new
        targets (also in ``mode_targets``)."""
        G, H, r = self.G, self.H, self.rng
        nat = self.native_space(vm, asid)
        first = len(self.mode_targets)
        ok2d = [t for t in self.targets if t.vmid == vm.vmid and t.asid == asid
                and t.mode == MODE_BOTH and t.kind in ("ok", "host_u0")]
        for t in r.sample(ok2d, min(n, len(ok2d))):
            gl = t.expect["guestPageSize"]
            if nat.lookup(t.gva) is None:
                try:
                    nat.map(t.gva, self.hpa.alloc(gl), gl, **self.guest_leaf_kwargs(full=full))
                except (MapConflict, MemoryError):
                    pass
            if nat.lookup(t.gva) is not None:
                self.s1_target(vm, asid, t.gva)
            self.s2_target(vm, asid, t.expect["gpa"])

        def bad(gva, mode, fault, stage, level, fgpa, kind):
            b = Target(vm.vmid, asid, gva, kind, dict(fault=fault, stage=stage, level=level,
                                                      faultGpa=fgpa), cmd=0, mode=mode)
            self.mode_targets.append(b)
        # stage 1 only, a VA not mapped: the first entry found not valid
        va = self.random_va_block(vm, asid, 0) | 0x238
        if nat.lookup(va) is None:
            lvl, ea = self._missing_level(nat, va)
            bad(va, MODE_S1, F_GUEST, 0, lvl, ea, "s1_invalid")
        # stage 1 only, a leaf beyond paBits (where the guest's PPN field reaches it)
        if self.cfg.paBits < (52 if G.family == "x86" else 56):
            va = self.random_va_block(vm, asid, 0) | 0x5a8
            try:
                nat.map(va, self.hpa.alloc(0), 0)
                far = 1 << self.cfg.paBits
                nat.poke(va, 0, G.encode_leaf(far, 0))
                bad(va, MODE_S1, F_ADDR, 0, 0, far | (va & 0xFFF), "s1_pa_range")
            except (MapConflict, MemoryError):
                pass
        # stage 2 only: a GPA the host does not map, and one beyond the GPA range
        gpa = vm.gpa_alloc.alloc(0) | 0x4c0
        lvl, _ = self._missing_level(vm.host, gpa)
        bad(gpa, MODE_S2, F_HOST, 1, lvl, gpa, "s2_invalid")
        far = r.randrange(1 << self.cfg.gpaBits, 1 << 64) & ~7
        bad(far, MODE_S2, F_ADDR, 1, H.root_level, far, "s2_gpa_range")
        # bare: bad input whatever the address
        if ok2d:
            bad(r.choice(ok2d).gva, MODE_BARE, F_RSVD, 0, 0, 0, "bare")
        return self.mode_targets[first:]

    # ------------------------------------------------------------------ helpers
    def guest_leaf_kwargs(self, full=False) -> dict:
        r = self.rng
        kw = dict(r=1, w=1, x=1, u=1, a=1, d=1)
        if not full and self.perm_random and r.random() < 0.6:
            if self.G.family == "rv":
                kw.update(_rv_ok_perm(r))
            else:
                kw.update(w=r.choice([0, 1, 1]), x=r.choice([0, 1, 1]))
            kw["u"] = r.choice([0, 1, 1])
        if not full and self.ad_clear_p and r.random() < self.ad_clear_p:
            if r.random() < 0.5:
                kw["a"], kw["d"] = 0, 0
            else:
                kw["d"] = 0
        return kw

    def random_va_block(self, vm: Vm, asid: int, level: int) -> int:
        """A fresh guest VA block of page_bytes(level) (canonical, either half)."""
        space = vm.spaces[asid]
        va_alloc = getattr(space, "va_alloc", None)
        if va_alloc is None:
            va_alloc = space.va_alloc = FrameAllocator(self.rng, 0, 1 << self.G.input_bits)
        return sign_extend(va_alloc.alloc(level), self.G.input_bits)

    def host_map_data(self, vm: Vm, gpa: int, level: int, full=False) -> int:
        """Map the host page of size <= ``level`` holding ``gpa`` (larger pages first, smaller
        if a smaller mapping is already inside); returns the host leaf level used."""
        H = self.H
        have = vm.host.covering_leaf_level(gpa)
        if have is not None:
            return have
        for lvl in range(min(level, H.max_leaf_level()), -1, -1):
            size = page_bytes(lvl)
            hi = 1 << self.cfg.paBits
            base = self.rng.randrange(0, max(1, hi // size)) * size
            try:
                vm.host.map(gpa & ~(size - 1), base, lvl, **self.host_leaf_kwargs(
                    pagetable=False, full=full))
                return lvl
            except MapConflict:
                continue
        raise AssertionError(f"cannot host-map gpa {gpa:#x}")

    # ------------------------------------------------------------------ regions
    def add_region(self, vm: Vm, asid: int, glevel: int, *, host_mode: str = "random",
                   n_addrs: int = 3, nonleaf=None, full=False) -> list[Target]:
        """A guest page of size ``glevel`` at a fresh VA, its GPA block, the host mappings of
        ``n_addrs`` random 4 KiB pages inside it, and their targets.

        host_mode: 'aligned' (one host leaf of size >= glevel covers the guest page),
        'splintered' (every host leaf smaller than the guest page), 'random', '4k' (a 4 KiB
        guest page over a 4 KiB host page)."""
        r, G, H = self.rng, self.G, self.H
        hmax = H.max_leaf_level()
        if host_mode == "random":
            host_mode = "splintered" if glevel > 0 and r.random() < 0.5 else "aligned"
        if host_mode in ("aligned", "4k"):
            if host_mode == "4k":
                assert glevel == 0
                host_mode, hl = "aligned", 0
            else:
                hl = r.randint(min(glevel, hmax), hmax) if glevel <= hmax else hmax
                hl = max(hl, glevel) if glevel <= hmax else hl
            block = vm.gpa_alloc.alloc(max(hl, glevel))
            gpa_base = block + r.randrange(page_bytes(max(hl, glevel)) // page_bytes(glevel)) \
                * page_bytes(glevel)
        else:
            hl = None
            gpa_base = vm.gpa_alloc.alloc(glevel)
        va = self.random_va_block(vm, asid, glevel)
        space = vm.spaces[asid]
        gkw = self.guest_leaf_kwargs(full=full)
        space.map(va, gpa_base, glevel, nonleaf=nonleaf, **gkw)
        out = []
        npages = page_bytes(glevel) // 4096
        for _ in range(n_addrs):
            off = r.randrange(npages) * 4096 + r.randrange(512) * 8
            gva = va + off
            gpa = gpa_base + off
            if host_mode == "aligned":
                used = self.host_map_data(vm, gpa, hl, full=full)
            else:
                used = self.host_map_data(vm, gpa, r.randint(0, glevel - 1), full=full)
            out.append(self._ok_target(vm, asid, gva))
        return out

    def _ok_target(self, vm: Vm, asid: int, gva: int) -> Target:
        space = vm.spaces[asid]
        g = space.lookup(gva)
        gpa, glevel, gpte, gperm = g
        h = vm.host.lookup(gpa)
        hpa, hlevel, hpte, hperm = h
        host_u0 = self.H.family == "rv" and not hperm[3]
        if self.H.family == "rv":
            hperm = hperm[:3] + (1,)
        perm = tuple(a & b for a, b in zip(gperm, hperm))
        # an access both stages allow (prefer read; x86 R is always 1)
        cmds = [c for c, bit in ((0, 0), (1, 1), (2, 2)) if (gperm if host_u0 else perm)[bit]]
        cmd = self.rng.choice(cmds) if cmds else 0
        # RISC-V: the supervisor never fetches from a U page, SUM or not: that fetch is a user's
        user = int(self.G.family == "rv" and cmd == 2 and bool(gperm[3]))
        kind = "host_u0" if host_u0 and cmds else ("ok" if cmds else "noperm")
        t = Target(vm.vmid, asid, gva, kind,
                   dict(ppn=hpa >> 12, guestPageSize=glevel, hostPageSize=hlevel,
                        pageSize=min(glevel, hlevel), perm=perm, gpa=gpa, gperm=gperm,
                        hperm=hperm), cmd=cmd, user=user)
        if kind == "host_u0":   # G-stage: every access is a user access (doc): fault 2
            t.expect.update(fault=F_HOST, stage=1, level=hlevel, faultGpa=gpa)
        self.targets.append(t)
        return t

    # ------------------------------------------------------------------ bad things
    def add_bad(self, vm: Vm, asid: int, what: str, stage: int, level: int) -> Target | None:
        """A target whose walk must fault because of ``what`` at ``stage``/``level``, on a
        private path (fresh VA block / GPA block, nothing else shares the broken entry).

        what: 'invalid', 'reserved', 'misaligned' (RISC-V superpage; x86/EPT large-leaf low
        bits, a reserved-bit fault), 'nonleaf0' (RISC-V pointer at level 0), 'w_no_r',
        'memtype' (EPT), 'ps_high' (PS at level >= 3), 'ppn_pa' (host PPN >= paBits),
        'gpa_range' (guest leaf beyond gpaBits), 'noncanonical'.  Returns None when the format
        cannot express it."""
        G, H, r = self.G, self.H, self.rng
        F = G if stage == 0 else H
        space = vm.spaces[asid]
        exp_fault = None
        if what == "noncanonical":
            if G.input_bits >= 64:
                return None
            gva = r.choice([(1 << G.input_bits) | r.randrange(1 << 12),
                            (1 << G.canon_top) | r.randrange(1 << 12),
                            (1 << 63) | r.randrange(1 << G.canon_top),
                            (1 << 63) | (1 << G.input_bits)])
            if G.address_ok(gva):
                return None
            t = Target(vm.vmid, asid, gva, what, dict(fault=F_ADDR, stage=0, level=G.root_level,
                                                      faultGpa=0))
            self.bad.append(t)
            return t
        # a fresh, fully permissive 4K (or larger for leaf-level tricks) mapping to corrupt
        if stage == 0:
            gl = level if what == "misaligned" else 0
            if what == "gpa_range":
                gl = level
            if gl > G.max_leaf_level():
                return None
            # the VA block the broken entry covers: nothing else maps through it
            va_blk = self.random_va_block(vm, asid, level)
            gva = va_blk + r.randrange(page_bytes(gl) // 4096) * 4096
            gpa_base = vm.gpa_alloc.alloc(gl)
            space.map(gva & ~(page_bytes(gl) - 1), gpa_base, gl, **self.guest_leaf_kwargs(True))
            self.host_map_data(vm, gpa_base + (gva & (page_bytes(gl) - 1)), 0, full=True)
            loc = space.entry_location(gva, level)
            tab, idx = loc
            old = space.tables[tab][idx]
            g_entry = tab + idx * 8
            new = self._corrupt(G, old, level, what, gva)
            if new is None:
                return None
            space._set(tab, idx, new)
            exp_fault = self._expected_fault(G, what, 0)
            t = Target(vm.vmid, asid, gva, what, dict(fault=exp_fault, stage=0, level=level,
                                                      faultGpa=g_entry))
            if what == "gpa_range":
                bad_gpa = G.leaf_base(new, gl) + (gva & (page_bytes(gl) - 1))
                t.expect.update(fault=F_ADDR, stage=1, level=H.root_level, faultGpa=bad_gpa)
            self.bad.append(t)
            return t
        # host stage: the data GPA's host path is private from ``level`` down
        hl = level if what in ("misaligned", "host_u0") else 0
        if hl and hl > H.max_leaf_level():
            return None
        if what == "misaligned" and level == 0:
            return None
        # the GPA block the broken host entry covers: nothing else maps through it
        try:
            gblk = vm.gpa_alloc.alloc(level)
        except MemoryError:
            return None
        gpa = gblk + r.randrange(page_bytes(level) // 4096) * 4096
        va = self.random_va_block(vm, asid, 0)
        space.map(va, gpa, 0, **self.guest_leaf_kwargs(True))
        vm.host.map(gpa & ~(page_bytes(hl) - 1), self.hpa.alloc(0) if hl == 0 else
                    (r.randrange(1, 4) * page_bytes(hl)) % (1 << self.cfg.paBits), hl,
                    **self.host_leaf_kwargs(pagetable=False, full=True))
        loc = vm.host.entry_location(gpa, level)
        if loc is None:
            return None
        tab, idx = loc
        old = vm.host.tables[tab][idx]
        new = self._corrupt(H, old, level, what, gpa)
        if new is None:
            return None
        vm.host._set(tab, idx, new)
        t = Target(vm.vmid, asid, va, what, dict(fault=self._expected_fault(H, what, 1), stage=1,
                                                 level=level, faultGpa=gpa))
        self.bad.append(t)
        return t

    @staticmethod
    def _expected_fault(F: PtFormat, what: str, stage: int) -> int:
        page = F_GUEST if stage == 0 else F_HOST
        if what in ("invalid", "nonleaf0", "host_u0"):
            return page
        if what == "misaligned":
            return page if F.family == "rv" else F_RSVD
        return F_RSVD

    def _corrupt(self, F: PtFormat, pte: int, level: int, what: str, addr: int):
        """The entry ``pte`` at ``level`` broken as ``what`` (None if not expressible)."""
        fam = F.family
        if what == "invalid":
            return pte & ~0b111 if fam == "ept" else pte & ~1
        if what == "reserved":
            if fam == "rv":
                return pte | (1 << 60)
            if fam == "ept":
                if F.is_leaf(pte, level):
                    return (pte & ~mask(5, 3)) | (2 << EPT_MT_LO)
                return pte | (1 << 4)
            if level >= 3:
                return pte | (1 << X86_PS)
            if level in (1, 2) and F.is_leaf(pte, level):
                return pte | (1 << 13)
            return None
        if what == "w_no_r":
            if fam == "ept":
                return (pte & ~1) | 2
            if fam == "rv":
                if not F.is_leaf(pte, level):
                    return pte | (1 << RV_W)          # pointer with W only: reserved
                return (pte & ~(1 << RV_R)) | (1 << RV_W) | (1 << RV_X)
            return None
        if what == "memtype":
            if fam != "ept" or not F.is_leaf(pte, level):
                return None
            return (pte & ~mask(5, 3)) | (self.rng.choice([2, 3, 7]) << EPT_MT_LO)
        if what == "ps_high":
            if fam not in ("x86", "ept") or level < 3:
                return None
            return pte | (1 << 7)
        if what == "misaligned":
            if level == 0 or not F.is_leaf(pte, level):
                return None
            return pte | ((1 << 10) if fam == "rv" else (1 << 13))
        if what == "nonleaf0":
            if fam != "rv" or level != 0:
                return None
            return pte & ~((1 << RV_R) | (1 << RV_W) | (1 << RV_X) | (1 << 4) | (3 << 6))
        if what == "host_u0":
            if fam != "rv" or F.stage != "host" or not F.is_leaf(pte, level):
                return None
            return pte & ~(1 << 4)
        if what == "ppn_pa":
            lim = self.cfg.paBits
            top = 52 if fam in ("x86", "ept") else 56
            if F.stage != "host" or lim >= top:
                return None
            if fam == "rv":
                return pte | (1 << (10 + lim - 12))
            return pte | (1 << lim)
        if what == "gpa_range":
            if F.stage != "guest" or not F.is_leaf(pte, level):
                return None
            gb = self.cfg.gpaBits
            top = 52 if fam == "x86" else 56
            if gb >= top:
                return None
            if fam == "rv":
                return pte | (1 << (10 + gb - 12))
            return pte | (1 << gb)
        raise ValueError(what)

    # ------------------------------------------------------------------ the random machine
    @classmethod
    def random(cls, cfg: WalkerConfig, seed: int, *, vms: int = 2, asids: int = 2,
               regions: int = 40, addrs_per_region: int = 3, bad: bool = True,
               ad_clear_p: float = 0.2, perm_random: bool = True, pool_p: float = 0.5,
               share_p: float = 0.5, vmid_base: int = 1, asid_base: int = 1,
               pt_ad_clear_p: float | None = None, modes: int = 0) -> "Scenario":
        """VMs 1..vms, each with ``asids`` guest spaces (the second may share lower tables with
        the first), ``regions`` guest pages per space with mixed guest sizes (4K 50 %,
        larger the rest) over aligned / splintered host pages, bad targets of every kind the
        formats allow on private paths; with ``modes`` > 0, ``add_modes(vm, asid, modes)`` for
        every space (stage-1-only, stage-2-only and bare targets in ``mode_targets``)."""
        s = cls(cfg, seed)
        r = s.rng
        s.ad_clear_p = ad_clear_p
        # fault mode: guest-table pages behind a host leaf with A clear would fail whole
        # subtrees; the directed tests cover that case
        s.host_pt_ad_clear_p = (ad_clear_p / 4 if pt_ad_clear_p is None else pt_ad_clear_p) \
            if cfg.adUpdate == "hardware" else 0.0
        s.perm_random = perm_random
        G, H = s.G, s.H
        glevels = G.leaf_levels()
        weights = [50, 30, 15, 5][:len(glevels)]
        for v in range(vms):
            vm = s.add_vm(vmid_base + v, pool_p=pool_p)
            for a in range(asids):
                asid = asid_base + a
                share = a > 0 and r.random() < share_p
                s.add_space(vm, asid, share_with=asid_base if share else None)
                for _ in range(regions):
                    gl = r.choices(glevels, weights)[0]
                    # keep the GPA space from running out (x4 / small gpaBits)
                    if page_bytes(max(gl, H.max_leaf_level())) * 64 > (1 << cfg.gpaBits):
                        gl = min(gl, 1)
                    try:
                        s.add_region(vm, asid, gl, n_addrs=addrs_per_region)
                    except (MapConflict, MemoryError):
                        continue
                if bad:
                    s.add_bad_set(vm, asid)
                if modes:
                    s.add_modes(vm, asid, modes)
        return s

    def add_bad_set(self, vm: Vm, asid: int):
        """One bad target per (kind, stage, level) the formats can express."""
        G, H = self.G, self.H
        for stage, F in ((0, G), (1, H)):
            for level in range(F.levels):
                for what in ("invalid", "reserved", "w_no_r", "memtype", "ps_high",
                             "misaligned", "nonleaf0", "ppn_pa", "host_u0"):
                    if what == "host_u0" and stage == 0:
                        continue
                    try:
                        self.add_bad(vm, asid, what, stage, level)
                    except (MapConflict, MemoryError):
                        pass
        try:
            self.add_bad(vm, asid, "gpa_range", 0, 0)
        except (MapConflict, MemoryError):
            pass
        self.add_bad(vm, asid, "noncanonical", 0, G.root_level)
