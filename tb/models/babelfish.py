"""Reference model of BabelFishTlb (docs/babelfish-tlb.md is the contract).

The model is sequential in acceptance order: the testbench calls ``inval``, ``fill`` and
``lookup`` in the order the DUT accepted them (at most one per cycle, priority
inval > fill > lookup), and compares every response and, at the end, every ``perf_*`` counter.

Entry classes and their priority (lower rank wins): private (own = 1, non-global) > global >
shared (own = 0, non-global).  Within one class the 4 KiB array wins over the superpage array,
and within the superpage array the lowest index wins.

VM isolation (``vmidBits`` > 0, doc "VM isolation"): every entry holds the VMID of its fill;
no entry answers a lookup of another VMID (global and shared ones included), keys are per VMID,
invalidation kinds 1 to 5 act inside ``inval.vmid``, kind 6 removes every entry of that VMID and
kind 7 every entry of that VMID covering ``inval.vpn``; kind 0 stays global. With ``vmidBits``
= 0 the VMID is ignored everywhere and kinds 6 and 7 are reserved (act as 0).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .replacement import make_policy

PRIVATE, GLOBAL, SHARED = 0, 1, 2  # also the priority rank
CLASS_NAMES = {PRIVATE: "private", GLOBAL: "global", SHARED: "shared"}

PS_4K, PS_2M, PS_1G, PS_BAD = 0, 1, 2, 3
PAGE_LOW_BITS = {PS_4K: 0, PS_2M: 9, PS_1G: 18}
PAGE_NAMES = {PS_4K: "4K", PS_2M: "2M", PS_1G: "1G"}

CMD_READ, CMD_WRITE, CMD_EXEC, CMD_RESERVED = 0, 1, 2, 3

(INVAL_ALL, INVAL_NONGLOBAL, INVAL_PCID, INVAL_CCID, INVAL_PAGE_PCID, INVAL_PAGE_CCID,
 INVAL_VMID, INVAL_PAGE_VMID) = range(8)
INVAL_NAMES = {0: "all", 1: "nonglobal", 2: "pcid", 3: "ccid", 4: "page_pcid", 5: "page_ccid",
               6: "reserved6", 7: "reserved7"}
# with a VMID tag kinds 6 and 7 are defined
INVAL_NAMES_VMID = {**INVAL_NAMES, 6: "vmid", 7: "page_vmid"}

COUNTERS = ("lookups", "hits", "sharedHits", "crossHits", "permFaults", "fills", "evictions",
            "invals", "badFills", "badPcIdx", "badCmds", "badInvals")
COUNTER_MAX = (1 << 32) - 1

# Response fields that the doc defines on every response, and those that only mean something
# on a hit (the doc does not say what ppn/pageSize/perm/dirty carry on a miss).
RESP_ALWAYS = ("hit", "shared", "crossHit", "permFault")
RESP_ON_HIT = ("ppn", "pageSize", "perm_r", "perm_w", "perm_x", "perm_u", "dirty")
RESP_FIELDS = RESP_ALWAYS + RESP_ON_HIT


def clog2(n: int) -> int:
    return (n - 1).bit_length()


@dataclass(frozen=True)
class BabelFishParams:
    sets: int = 16
    ways: int = 4
    superpageEntries: int = 8
    vpnBits: int = 36
    ppnBits: int = 40
    pcidBits: int = 12
    ccidBits: int = 12
    pcBits: int = 32
    vmidBits: int = 0
    sharing: bool = True
    replacement: str = "plru"
    storage: str = "flops"
    latency: int = 4

    def __post_init__(self):
        legal = (2, 3, 4, 5, 6) if self.storage == "sram" else (1, 2, 3, 4)
        if self.latency not in legal:
            raise ValueError(f"latency must be one of {legal} with storage {self.storage}")
        if not 0 <= self.vmidBits <= 16:
            raise ValueError(f"vmidBits must be in 0..16, got {self.vmidBits}")

    @classmethod
    def from_dict(cls, d: dict) -> "BabelFishParams":
        names = cls.__dataclass_fields__.keys()
        return cls(**{k: d[k] for k in names if k in d})

    @property
    def setBits(self) -> int:
        return clog2(self.sets)

    @property
    def pcIdxBits(self) -> int:
        return max(1, clog2(self.pcBits))

    @property
    def vmid(self) -> bool:
        """Entries carry a VMID tag; kinds 6 and 7 are defined."""
        return self.vmidBits > 0

    @property
    def inval_names(self) -> dict:
        return INVAL_NAMES_VMID if self.vmid else INVAL_NAMES

    def sweep_kinds(self) -> tuple:
        """Invalidation kinds that sweep the sets with SRAM (doc "SRAM sweeps"): those that compare
        every entry's owner -- PCID (2), CCID (3), and with a VMID tag also every entry's VMID:
        non-global (1) and the VM (6)."""
        return (INVAL_NONGLOBAL, INVAL_PCID, INVAL_CCID, INVAL_VMID) if self.vmid else (INVAL_PCID, INVAL_CCID)

    # Timing (doc "Timing"): after a write (fill or invalidation) nothing is accepted until it
    # has landed: the write shadow, latency - 1 cycles, plus the commit cycle at latency 4 and
    # above, minus one at sram latency 6 (the operation is registered before the read, so a later
    # operation too reads one cycle after its acceptance): flops 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 4;
    # sram 2 -> 1, 3 -> 2, 4 -> 4, 5 -> 5, 6 -> 5.
    # With SRAM and more than one set, invalidations by PCID / CCID sweep every set, one a cycle.
    @property
    def write_shadow(self) -> int:
        commit = 1 if self.latency >= 4 else 0
        op_reg = 1 if self.storage == "sram" and self.latency == 6 else 0
        return self.latency - 1 + commit - op_reg

    def busy_after_fill(self) -> int:
        """Cycles after an accepted fill in which nothing is accepted."""
        return self.write_shadow

    def busy_after_inval(self, kind: int) -> int:
        """Cycles after an accepted invalidation of `kind` in which nothing is accepted."""
        if self.storage == "sram" and self.sets > 1 and kind in self.sweep_kinds():
            return self.sets - 1 + self.write_shadow
        return self.write_shadow


@dataclass
class Entry:
    vpn: int          # aligned to the page size (low bits cleared)
    ppn: int          # aligned to the page size (low bits cleared)
    pageSize: int
    perm_r: int
    perm_w: int
    perm_x: int
    perm_u: int
    dirty: int
    glob: int
    pcid: int
    ccid: int
    own: int          # as stored (forced to 1 for non-global fills when sharing is off)
    pc: int
    vmid: int = 0     # 0 when the configuration has no VMID tag
    # what a composing model keeps with the entry beside the block's fields (models.xlat_mmu:
    # the stage-2 permissions); opaque here: no rule reads it
    payload: object = field(default=None, compare=False, repr=False)

    @property
    def cls(self) -> int:
        if self.glob:
            return GLOBAL
        return PRIVATE if self.own else SHARED

    def key(self) -> tuple:
        c = self.cls
        tag = self.pcid if c == PRIVATE else self.ccid if c == SHARED else None
        return (self.vmid, c, self.vpn, self.pageSize, tag)

    def covers(self, vpn: int) -> bool:
        low = PAGE_LOW_BITS[self.pageSize]
        return (vpn >> low) == (self.vpn >> low)


@dataclass
class LookupResult:
    """Expected response plus the facts the coverage collector wants."""

    resp: dict
    array: str | None = None       # "4k" / "sp" for a hit
    way: int | None = None
    cls: int | None = None
    matched_classes: frozenset = frozenset()
    pc_reject: bool = False        # a shared entry of this ccid covered the VPN but the PC bit rejected it
    bad_pcidx: bool = False
    fault_reasons: tuple = ()
    same_class_multi: bool = False  # two entries of the serving class matched (4K vs superpage, ...)
    vm_blocked: bool = False       # an entry of another VMID covered the VPN and would have matched in its VM
    entry: Entry | None = None     # the entry that served a hit


@dataclass
class FillResult:
    installed: bool
    array: str | None = None
    way: int | None = None
    rule: str | None = None        # "overwrite", "invalid", "evict"
    bad: bool = False
    bad_reason: str | None = None
    vpn_low_ignored: bool = False
    evicted: Entry | None = None
    other_vm_same_key: bool = False  # an entry of another VMID had the fill's key but for the VMID


@dataclass
class InvalResult:
    kind: int                      # the kind as given (6 and 7 included)
    removed: int = 0
    spared_other_vm: int = 0       # entries of other VMIDs the same kind would remove in inval.vmid


class BabelFishModel:
    def __init__(self, params: BabelFishParams | dict):
        if isinstance(params, dict):
            params = BabelFishParams.from_dict(params)
        self.p = params
        self.vpn_mask = (1 << params.vpnBits) - 1
        self.ppn_mask = (1 << params.ppnBits) - 1
        self.pcid_mask = (1 << params.pcidBits) - 1
        self.ccid_mask = (1 << params.ccidBits) - 1
        self.pc_mask = (1 << params.pcBits) - 1
        self.vmid_mask = (1 << params.vmidBits) - 1   # 0 without a VMID tag: every vmid is 0
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        p = self.p
        self.sets: list[list[Entry | None]] = [[None] * p.ways for _ in range(p.sets)]
        self.sp: list[Entry | None] = [None] * p.superpageEntries
        if p.replacement == "random":
            # doc: "one 16-bit Galois LFSR per array" -- one LFSR shared by every set of the
            # 4 KiB array (the general "state is per set" sentence is read as the plru/lru case)
            shared = make_policy(p.replacement, p.ways)
            self.set_repl = [shared] * p.sets
        else:
            self.set_repl = [make_policy(p.replacement, p.ways) for _ in range(p.sets)]
        self.sp_repl = make_policy(p.replacement, p.superpageEntries)
        self.counters = {c: 0 for c in COUNTERS}

    def _count(self, name: str, inc: int = 1) -> None:
        self.counters[name] = min(COUNTER_MAX, self.counters[name] + inc)

    def set_index(self, vpn: int) -> int:
        return vpn & (self.p.sets - 1)

    def entries(self):
        """All valid entries as (array, set, way, entry)."""
        for s, ways in enumerate(self.sets):
            for w, e in enumerate(ways):
                if e is not None:
                    yield "4k", s, w, e
        for w, e in enumerate(self.sp):
            if e is not None:
                yield "sp", 0, w, e

    def occupancy(self) -> int:
        return sum(1 for _ in self.entries())

    # ----------------------------------------------------------------- lookup
    def _match(self, e: Entry, pcid: int, ccid: int, pcIdx: int, pcIdxValid: int, vmid: int = 0):
        """(matches, pc_rejected) for an entry that covers the VPN."""
        if e.vmid != vmid:
            return False, False   # another VM's entry: never, whatever its class
        if e.glob:
            return True, False
        if not self.p.sharing:
            return e.pcid == pcid, False
        if e.own:
            return (e.pcid == pcid and e.ccid == ccid), False
        if e.ccid != ccid:
            return False, False
        rejected = bool(pcIdxValid) and (pcIdx >= self.p.pcBits or (e.pc >> pcIdx) & 1 == 1)
        return (not rejected), rejected

    def lookup(self, vpn: int, pcid: int, ccid: int, pcIdx: int = 0, pcIdxValid: int = 0,
               cmd: int = 0, user: int = 0, vmid: int = 0, **_ignored) -> LookupResult:
        p = self.p
        vpn &= self.vpn_mask
        vmid &= self.vmid_mask
        bad_pcidx = bool(pcIdxValid) and pcIdx >= p.pcBits
        self._count("lookups")
        if bad_pcidx:
            self._count("badPcIdx")
        if cmd == CMD_RESERVED:
            self._count("badCmds")

        cands = []  # (rank, arrayorder, way, array, entry)
        pc_reject = vm_blocked = False
        s = self.set_index(vpn)
        for order, arr in ((0, self.sets[s]), (1, self.sp)):
            for w, e in enumerate(arr):
                if e is not None and e.covers(vpn):
                    m, rej = self._match(e, pcid, ccid, pcIdx, pcIdxValid, vmid)
                    pc_reject |= rej
                    if m:
                        cands.append((e.cls, order, w, "4k" if order == 0 else "sp", e))
                    elif e.vmid != vmid:
                        vm_blocked |= self._match(e, pcid, ccid, pcIdx, pcIdxValid, e.vmid)[0]

        if not cands:
            resp = {f: 0 for f in RESP_FIELDS}
            return LookupResult(resp=resp, pc_reject=pc_reject, bad_pcidx=bad_pcidx,
                                matched_classes=frozenset(), vm_blocked=vm_blocked)

        cands.sort(key=lambda c: (c[0], c[1], c[2]))
        cls, _, way, array, e = cands[0]
        low = PAGE_LOW_BITS[e.pageSize]
        ppn = (e.ppn | (vpn & ((1 << low) - 1))) & self.ppn_mask
        reasons = []
        if cmd == CMD_READ and not e.perm_r:
            reasons.append("read")
        if cmd == CMD_WRITE and not e.perm_w:
            reasons.append("write")
        if cmd == CMD_WRITE and not e.dirty:
            reasons.append("clean")
        if cmd == CMD_EXEC and not e.perm_x:
            reasons.append("exec")
        if user and not e.perm_u:
            reasons.append("user")
        if cmd == CMD_RESERVED:
            reasons.append("cmd3")
        shared = int(cls == SHARED)
        cross = int(shared and e.pcid != pcid)
        resp = {
            "hit": 1, "ppn": ppn, "pageSize": e.pageSize,
            "perm_r": e.perm_r, "perm_w": e.perm_w, "perm_x": e.perm_x, "perm_u": e.perm_u,
            "dirty": e.dirty, "shared": shared, "crossHit": cross,
            "permFault": int(bool(reasons)),
        }
        self._count("hits")
        if shared:
            self._count("sharedHits")
        if cross:
            self._count("crossHits")
        if reasons:
            self._count("permFaults")
        # A hit touches the serving way in its own array.
        if array == "4k":
            self.set_repl[s].touch(way)
        else:
            self.sp_repl.touch(way)
        return LookupResult(
            resp=resp, array=array, way=way, cls=cls,
            matched_classes=frozenset(c[0] for c in cands), pc_reject=pc_reject,
            bad_pcidx=bad_pcidx, fault_reasons=tuple(reasons),
            same_class_multi=sum(1 for c in cands if c[0] == cls) > 1, vm_blocked=vm_blocked,
            entry=e)

    # ------------------------------------------------------------------- fill
    def fill(self, vpn: int, ppn: int, pageSize: int, perm_r: int = 1, perm_w: int = 1,
             perm_x: int = 1, perm_u: int = 1, dirty: int = 1, glob: int = 0, pcid: int = 0,
             ccid: int = 0, own: int = 1, pc: int = 0, vmid: int = 0, payload=None,
             **kw) -> FillResult:
        if "global" in kw:
            glob = kw.pop("global")
        p = self.p
        self._count("fills")
        if pageSize == PS_BAD:
            self._count("badFills")
            return FillResult(installed=False, bad=True, bad_reason="pageSize3")
        vpn &= self.vpn_mask
        ppn &= self.ppn_mask
        low = PAGE_LOW_BITS[pageSize]
        lowmask = (1 << low) - 1
        bad = bool(ppn & lowmask)
        if bad:
            self._count("badFills")
        vpn_low = bool(vpn & lowmask)
        if not p.sharing and not glob:
            own = 1
        e = Entry(vpn=vpn & ~lowmask, ppn=ppn & ~lowmask, pageSize=pageSize,
                  perm_r=perm_r & 1, perm_w=perm_w & 1, perm_x=perm_x & 1, perm_u=perm_u & 1,
                  dirty=dirty & 1, glob=glob & 1, pcid=pcid & self.pcid_mask,
                  ccid=ccid & self.ccid_mask, own=own & 1, pc=pc & self.pc_mask,
                  vmid=vmid & self.vmid_mask, payload=payload)
        if pageSize == PS_4K:
            array, arr, repl = "4k", self.sets[self.set_index(vpn)], self.set_repl[self.set_index(vpn)]
        else:
            array, arr, repl = "sp", self.sp, self.sp_repl
        key = e.key()
        other_vm = any(old is not None and old.vmid != e.vmid and old.key()[1:] == key[1:]
                       for old in arr)
        way, rule, evicted = None, None, None
        for w, old in enumerate(arr):
            if old is not None and old.key() == key:
                way, rule = w, "overwrite"
                break
        if way is None:
            for w, old in enumerate(arr):
                if old is None:
                    way, rule = w, "invalid"
                    break
        if way is None:
            way, rule = repl.victim(), "evict"
            evicted = arr[way]
            repl.on_evict()
            self._count("evictions")
        arr[way] = e
        repl.touch(way)
        return FillResult(installed=True, array=array, way=way, rule=rule, bad=bad,
                          bad_reason="unalignedPpn" if bad else None,
                          vpn_low_ignored=vpn_low, evicted=evicted, other_vm_same_key=other_vm)

    # ------------------------------------------------------------------ inval
    def inval(self, kind: int, vpn: int = 0, pcid: int = 0, ccid: int = 0, vmid: int = 0,
              **_ignored) -> InvalResult:
        self._count("invals")
        res = InvalResult(kind=kind)
        if kind in (INVAL_VMID, INVAL_PAGE_VMID) and not self.p.vmid:
            self._count("badInvals")
            kind = INVAL_ALL
        vpn &= self.vpn_mask
        pcid &= self.pcid_mask
        ccid &= self.ccid_mask
        vmid &= self.vmid_mask

        def doomed(e: Entry, vmid: int = vmid) -> bool:
            if kind == INVAL_ALL:
                return True              # the one kind that ignores the VMID
            if e.vmid != vmid:
                return False             # every other kind acts inside inval.vmid
            if kind == INVAL_VMID:
                return True
            if kind == INVAL_PAGE_VMID:
                return e.covers(vpn)     # whatever the owner, global included
            if e.glob:
                return False
            if kind == INVAL_NONGLOBAL:
                return True
            if kind == INVAL_PCID:
                return bool(e.own) and e.pcid == pcid
            if kind == INVAL_CCID:
                return e.ccid == ccid
            if kind == INVAL_PAGE_PCID:
                return bool(e.own) and e.pcid == pcid and e.covers(vpn)
            if kind == INVAL_PAGE_CCID:
                return e.ccid == ccid and e.covers(vpn)
            raise ValueError(f"inval kind {kind}")

        for arr in self.sets + [self.sp]:
            for w, e in enumerate(arr):
                if e is None:
                    continue
                if doomed(e):
                    arr[w] = None
                    res.removed += 1
                elif e.vmid != vmid and doomed(e, e.vmid):
                    res.spared_other_vm += 1
        return res
