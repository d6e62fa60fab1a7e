"""Reference model of PerforatedL2Tlb (docs/perforated-l2tlb.md is the contract;
../shared/spec/perforated-l2tlb.md the spec).  Written from the doc, before the RTL, so that
the RTL and this model implement one decided behaviour.

Transaction level, sequential in pipeline order.  Every change of state and every cache lookup
happens in one of three pipeline operations, one per cycle, in the order of their handshakes
(docs "Same-cycle inputs": at most one of ``inval``, ``mem_resp``, ``req`` is accepted in a
cycle, priority inval > mem_resp > req):

* ``request(req)``         a ``req`` handshake: the lookup (4 KiB array, 2 MiB array, filter,
                           bitmap word cache, page-walk cache).  A hit answers at once; a request
                           that needs memory takes the lowest free walk slot and names its first
                           read, or (every slot busy) waits with its first read in the miss queue,
                           whose head takes the slot of the next walk that ends (in that walk's
                           ``mem_response``);
* ``mem_request(slot, addr)`` a ``mem_req`` handshake (checked against the slot's next read);
* ``mem_response(slot, rdata, error)``  a ``mem_resp`` handshake: one step of that slot's walk
                           (checks the word, fills, looks the caches up again where the flow
                           needs it, names the next read or answers);
* ``inval(kind, ...)``     an ``inval`` handshake.

Responses are appended to ``out`` in the order the operations that finish them happen; that is
the order they leave on ``resp`` (``pop_response``).  ``inval_done_allowed`` says when the
oldest pending invalidation may pulse ``invalDone``.

For pure-Python use (tests, eval cross-checks) ``translate(req)`` runs one request to its end
against ``self.mem`` (a ``models.walker.SparseMemory``: words plus injectable bus errors) with
no other operation in between, and ``run(ops)`` does that for a stream of requests and
invalidations: with one request at a time the result of every request, its ``source``, its
``memReads`` and its exact reads (``Response.reads``) follow from the cache contents, which
this model keeps with the decided replacement (tree-PLRU everywhere, ``models.replacement``).

Every decision is in the doc; the short names used below:
  4K entry  {asid, vpn, ppn, w, u, x, d}                    set = vpn mod sets4k
  2M entry  {asid, vpn2m, ppn (4K frame of the base), w, u, x, d, perforated, filter,
             pdPpn (PD page: shadow page = pdPpn + 1), up (w, u, x of PML4E & PDPTE)}
                                                              set = vpn2m mod sets2m
  bitmap    {word index = frame >> 6, word}                   fully associative (bitmapSets
             1), or set = (vpn >> 6) mod bitmapSets: virtually indexed, physically tagged
  PWC       {asid, kind L3 | L2 | L1 | S, prefix, next table ppn, w, u, x accumulated}
             L3 = PML4E (prefix vpn >> 27), L2 = PDPTE (vpn >> 18), L1 = PDE pointer
             (vpn >> 9), S = shadow entry (vpn >> 9)          fully associative
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .ptformats import X86_A, X86_D, X86_NX, X86_P, X86_PS, X86_RW, X86_US, M64, mask
from .params import check_range
from .replacement import TreePlru

# fault codes (spec)
F_NONE, F_PAGE, F_BUS, F_RSVD = 0, 1, 3, 4
# source codes (spec)
SRC_4K, SRC_2M, SRC_PERF, SRC_HOLE, SRC_WALK = 0, 1, 2, 3, 4
SOURCE_NAMES = {0: "4K entry", 1: "2M entry", 2: "perforated non-hole", 3: "hole", 4: "walk"}
# inval kinds (spec)
INV_ALL, INV_ASID, INV_PAGE, INV_FRAME = 0, 1, 2, 3
# request cmd
CMD_READ, CMD_WRITE, CMD_EXEC, CMD_RESERVED = 0, 1, 2, 3

PERF_BIT = 52                 # the perforated bit of a PD-level leaf
FILTER_LO, FILTER_HI = 13, 20  # the coarse hole filter of a perforated PD leaf
VPN_BITS = 36                 # x86-64 4-level: VA 47:12
REGION_PAGES = 64             # pages per filter bit (one bitmap word)

# what each read of a walk is (Read.kind); the doc's names
READ_KINDS = ("pml4e", "pdpte", "pde", "pte", "bitmap", "shadow", "hole")

COUNTERS = ("requests", "hits4k", "hits2m", "filterSkips", "bitmapHits", "bitmapReads",
            "holes", "walks", "memReads",
            # decided additions
            "pwcHits", "faults", "busErrors", "badCmds", "badMemResps", "invals", "staleWalks",
            "fills4k", "fills2m", "perforatedFills", "evictions4k", "evictions2m",
            "bitmapEvictions", "bitmapLookups")
COUNTER_MAX = (1 << 32) - 1

RESP_FIELDS = ("id", "fault", "ppn", "pageSize", "perm_r", "perm_w", "perm_x", "perm_u",
               "source", "memReads")


class PerforatedModelError(AssertionError):
    """The testbench (or the DUT through it) did something the doc forbids."""


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class PerforatedParams:
    sets4k: int = 128
    ways4k: int = 8
    sets2m: int = 32
    ways2m: int = 4
    bitmapEntries: int = 32
    pwcEntries: int = 16
    walkers: int = 2
    perforation: bool = True
    storage: str = "sram"
    asidBits: int = 12
    # decided additions (docs "Parameters")
    idBits: int = 4
    paBits: int = 52
    latency: int = 4
    respQueue: int = 8
    invalPending: int = 2
    formalPorts: bool = False
    # decided 2026-11-30 (issue 11's eval targets): sets of the bitmap word cache; 1 is the
    # fully associative flop array, more is a set-associative, virtually indexed, physically
    # tagged cache (docs "Where the bitmap words live")
    bitmapSets: int = 1

    def __post_init__(self):
        def rng(name, lo, hi, pow2=False):
            check_range(self, name, lo, hi, pow2)
        rng("sets4k", 1, 1024, True)
        rng("ways4k", 1, 16)
        rng("sets2m", 1, 256, True)
        rng("ways2m", 1, 16)
        rng("bitmapSets", 1, 1024, True)
        if self.bitmapSets == 1:
            rng("bitmapEntries", 1, 64)
        else:
            rng("bitmapEntries", 2, 8192, True)
            if not 1 <= self.bitmapEntries // self.bitmapSets <= 16 or \
                    self.bitmapEntries % self.bitmapSets:
                raise ValueError(f"bitmapEntries / bitmapSets (the bitmap cache's ways) must be "
                                 f"1..16, got {self.bitmapEntries} / {self.bitmapSets}")
            if self.latency != 4 or not (self.storage == "sram" or self.formalPorts):
                raise ValueError("bitmapSets > 1 needs latency = 4 and storage = sram (or formalPorts)")
        rng("pwcEntries", 0, 64)
        rng("walkers", 1, 8)
        rng("asidBits", 1, 16)
        rng("idBits", 1, 8)
        rng("paBits", 32, 52)
        rng("respQueue", 2, 16)
        rng("invalPending", 1, 8)
        if self.storage not in ("sram", "flops"):
            raise ValueError(f"storage must be sram or flops, got {self.storage}")
        legal = (2, 3, 4) if self.storage == "sram" else (1, 2, 3, 4)
        if self.latency not in legal:
            raise ValueError(f"latency must be one of {', '.join(map(str, legal))} with "
                             f"storage = {self.storage}, got {self.latency}")

    @classmethod
    def from_dict(cls, d: dict) -> "PerforatedParams":
        names = cls.__dataclass_fields__
        kw = {}
        for k, v in d.items():
            if k not in names:
                continue
            t = names[k].type
            if t in ("bool", bool):
                kw[k] = v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes")
            elif t in ("str", str):
                kw[k] = str(v)
            else:
                kw[k] = int(v)
        return cls(**kw)

    @property
    def bitmapWays(self) -> int:
        return self.bitmapEntries // self.bitmapSets

    @property
    def ppnBits(self) -> int:
        return self.paBits - 12

    @property
    def missQueue(self) -> int:
        """The miss queue's places (docs "Acceptance", decided 2026-11-28): one per request the
        pipeline can hold, i.e. its stage registers from acceptance to respond (the generator's
        derived ``missQueue``): the operation and read registers, match, pick (latency 4) and
        respond."""
        lat = self.latency
        if self.storage == "sram":
            regs = (True, lat >= 3, lat >= 4, lat == 4, lat == 4)    # read, hit, sel, row, op
        else:
            # read, hit, sel, row (latency 4 but the formal configurations: session 22)
            regs = (lat >= 3, lat >= 2, lat == 4, lat == 4 and not self.formalPorts)
        return 1 + sum(regs)


# The named configurations of docs/perforated-l2tlb.md ("Named configurations"): what each
# changes from the defaults (the generator's xlat.perforated configurations must match).
NAMED_CONFIGS = {
    "perforated_default": {"bitmapEntries": 2048, "bitmapSets": 512},
    "perforated_off": {"perforation": False, "bitmapEntries": 2048, "bitmapSets": 512},
    "perforated_flops": {"storage": "flops", "sets4k": 16, "ways4k": 4, "sets2m": 4,
                         "ways2m": 2, "bitmapEntries": 8, "pwcEntries": 8},
    "perforated_formal": {"storage": "flops", "sets4k": 2, "ways4k": 2, "sets2m": 2,
                          "ways2m": 2, "bitmapEntries": 2, "pwcEntries": 2, "walkers": 2,
                          "asidBits": 2, "idBits": 2, "paBits": 32, "respQueue": 6,
                          "formalPorts": True},
}


# ----------------------------------------------------------------------------- records
@dataclass
class Req:
    id: int = 0
    vpn: int = 0
    asid: int = 0
    root: int = 0          # CR3 page number (the PML4 page)
    cmd: int = CMD_READ
    user: int = 0


@dataclass
class Read:
    kind: str              # one of READ_KINDS
    addr: int
    rdata: int = 0
    error: bool = False


@dataclass
class Response:
    id: int
    fault: int = F_NONE
    ppn: int = 0
    pageSize: int = 0
    perm_r: int = 0
    perm_w: int = 0
    perm_x: int = 0
    perm_u: int = 0
    source: int = SRC_WALK
    memReads: int = 0
    # not on the port: for the scoreboard and the tests
    reads: list = field(default_factory=list)
    serial: int = 0
    reason: str = ""
    hole: bool = False         # the page was decided a hole (filter 1 and bitmap bit set)

    def fields(self) -> dict:
        return {k: getattr(self, k) for k in RESP_FIELDS}


@dataclass
class E4k:
    asid: int
    vpn: int
    ppn: int
    w: int
    u: int
    x: int
    d: int

    @property
    def key(self):
        return (self.asid, self.vpn)


@dataclass
class E2m:
    asid: int
    vpn2m: int
    ppn: int               # 4K frame number of the large page's base (low 9 bits 0)
    w: int
    u: int
    x: int
    d: int
    perforated: bool = False
    filter: int = 0
    pdPpn: int = 0
    up: tuple = (1, 1, 1)  # (w, u, x) of PML4E & PDPTE

    @property
    def key(self):
        return (self.asid, self.vpn2m)


@dataclass
class EBitmap:
    index: int             # frame >> 6
    word: int

    @property
    def key(self):
        return self.index


@dataclass
class EPwc:
    asid: int
    kind: str              # 'L3' | 'L2' | 'L1' | 'S'
    prefix: int
    ppn: int               # the next table's page
    perm: tuple            # (w, u, x) accumulated through this entry

    @property
    def key(self):
        return (self.asid, self.kind, self.prefix)


PWC_SHIFT = {"L3": 27, "L2": 18, "L1": 9, "S": 9}


# ----------------------------------------------------------------------------- storage
class SetAssoc:
    """``sets`` x ``ways`` entries with one tree-PLRU per set (docs "Arrays and replacement").

    lookup: the lowest-numbered valid way whose key matches (keys are unique: fills
    de-duplicate).  fill: the way holding the same key, else the lowest invalid way, else the
    PLRU victim; the written way is touched.  Invalidations leave the PLRU state alone."""

    def __init__(self, sets: int, ways: int):
        self.nsets, self.nways = sets, ways
        self.rows = [[None] * ways for _ in range(sets)]
        self.repl = [TreePlru(ways) for _ in range(sets)] if ways else []

    def lookup(self, s: int, key):
        for w, e in enumerate(self.rows[s]):
            if e is not None and e.key == key:
                return w, e
        return None, None

    def touch(self, s: int, w: int) -> None:
        self.repl[s].touch(w)

    def fill(self, s: int, e):
        """Returns the evicted entry (a valid entry of another key) or None."""
        row = self.rows[s]
        way = next((w for w, x in enumerate(row) if x is not None and x.key == e.key), None)
        evicted = None
        if way is None:
            way = next((w for w, x in enumerate(row) if x is None), None)
        if way is None:
            way = self.repl[s].victim()
            evicted = row[way]
        row[way] = e
        self.repl[s].touch(way)
        return evicted

    def remove(self, pred) -> int:
        n = 0
        for row in self.rows:
            for w, e in enumerate(row):
                if e is not None and pred(e):
                    row[w] = None
                    n += 1
        return n

    def entries(self):
        return [e for row in self.rows for e in row if e is not None]


# ----------------------------------------------------------------------------- the walk
@dataclass
class Walk:
    """A walk slot in use: the request, where the walk stands and what it read.  ``slot`` is
    None while the walk waits in the miss queue (its first read decided, not sendable)."""
    slot: int | None
    req: Req
    serial: int
    source: int
    kind: str = ""         # kind of the read outstanding (READ_KINDS)
    addr: int = 0
    reads: list = field(default_factory=list)
    perm: tuple = (1, 1, 1)    # (w, u, x) accumulated over the entries read so far
    pdPpn: int = 0
    up: tuple = (1, 1, 1)
    large: E2m | None = None   # the perforated / large leaf the request's page lies in
    stale: bool = False
    hole: bool = False
    sent: bool = False         # the mem_req of the read outstanding has been handshaken

    @property
    def pending(self) -> Read:
        return Read(self.kind, self.addr)


class _Done(Exception):
    """A walk (or a lookup) ends with this response."""

    def __init__(self, resp: Response):
        super().__init__(resp.reason)
        self.resp = resp


@dataclass
class PendingInval:
    serial: int
    before: set            # serials of requests accepted before it, not yet answered on resp


def _perm_of(pte: int) -> tuple:
    return ((pte >> X86_RW) & 1, (pte >> X86_US) & 1, 1 - ((pte >> X86_NX) & 1))


def _and(a: tuple, b: tuple) -> tuple:
    return tuple(x & y for x, y in zip(a, b))


# ----------------------------------------------------------------------------- the model
class PerforatedModel:
    def __init__(self, params: PerforatedParams | dict | None = None, mem=None,
                 bitmap_base: int = 0):
        if params is None:
            params = PerforatedParams()
        elif isinstance(params, dict):
            params = PerforatedParams.from_dict(params)
        self.p = params
        self.mem = mem
        self.bitmap_base = bitmap_base
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        p = self.p
        self.a4k = SetAssoc(p.sets4k, p.ways4k)
        self.a2m = SetAssoc(p.sets2m, p.ways2m)
        self.bitmap = SetAssoc(p.bitmapSets, p.bitmapWays)
        self.pwc = SetAssoc(1, p.pwcEntries) if p.pwcEntries else None
        self.walks: list[Walk | None] = [None] * p.walkers
        # requests that need memory and found every slot busy, in order (docs "Acceptance")
        self.missq: deque[Walk] = deque()
        self.out: deque[Response] = deque()
        self.unanswered: set[int] = set()      # request serials whose response has not left
        self.pending_invals: deque[PendingInval] = deque()
        self.serial = 0
        self.ctr = {c: 0 for c in COUNTERS}

    def _count(self, name: str, inc: int = 1) -> None:
        self.ctr[name] = min(COUNTER_MAX, self.ctr[name] + inc)

    @property
    def vpn_mask(self) -> int:
        return (1 << VPN_BITS) - 1

    def free_slots(self) -> int:
        return sum(1 for w in self.walks if w is None)

    def walk(self, slot: int) -> Walk | None:
        return self.walks[slot]

    def pending_reads(self) -> dict:
        """slot -> Read the walk in that slot waits for (its mem_req, sent or not)."""
        return {w.slot: w.pending for w in self.walks if w is not None}

    def idle(self) -> bool:
        return all(w is None for w in self.walks) and not self.missq

    # ------------------------------------------------------------------ entry checks
    def _rsvd_ppn(self, pte: int) -> bool:
        return self.p.paBits < 52 and bool(pte & mask(51, self.p.paBits))

    @staticmethod
    def _addr(pte: int) -> int:
        return pte & mask(51, 12)

    def _bitmap_index(self, frame: int) -> int:
        return frame >> 6

    def _bitmap_addr(self, index: int) -> int:
        # bitmapBase is a byte address; its low 3 bits are ignored (decided)
        base = self.bitmap_base & ~7 & ((1 << self.p.paBits) - 1)
        return (base + 8 * index) & ((1 << self.p.paBits) - 1)

    # ------------------------------------------------------------------ responses
    def _translation(self, req: Req, serial: int, source: int, ppn: int, page_size: int,
                     perm: tuple, d: int, reads: list, reason: str, hole=False) -> Response:
        """The response of a translation: the permission check (docs "Permissions and A/D")
        decides between the translation and fault 1 (a fault carries no translation)."""
        w, u, x = perm
        deny = ""
        if req.user and not u:
            deny = "user access to a supervisor page"
        elif req.cmd == CMD_WRITE and not w:
            deny = "write to a read-only page"
        elif req.cmd == CMD_WRITE and not d:
            deny = "write to a clean page (D = 0)"
        elif req.cmd == CMD_EXEC and not x:
            deny = "execute of a no-execute page"
        if deny:
            return self._fault(req, serial, F_PAGE, source, reads, deny, hole)
        return Response(id=req.id, fault=F_NONE, ppn=ppn & ((1 << self.p.ppnBits) - 1),
                        pageSize=page_size, perm_r=1, perm_w=w, perm_x=x, perm_u=u,
                        source=source, memReads=len(reads), reads=list(reads), serial=serial,
                        reason=reason, hole=hole)

    @staticmethod
    def _fault(req: Req, serial: int, code: int, source: int, reads: list, reason: str,
               hole=False) -> Response:
        return Response(id=req.id, fault=code, source=source, memReads=len(reads),
                        reads=list(reads), serial=serial, reason=reason, hole=hole)

    def _finish(self, resp: Response) -> Response:
        if resp.fault:
            self._count("faults")
        self.out.append(resp)
        return resp

    def pop_response(self) -> Response:
        """The response that leaves next on ``resp`` (the testbench calls this at each
        ``resp`` handshake and compares)."""
        if not self.out:
            raise PerforatedModelError("a response left resp but the model has none waiting")
        r = self.out.popleft()
        self.unanswered.discard(r.serial)
        for pi in self.pending_invals:
            pi.before.discard(r.serial)
        return r

    # ------------------------------------------------------------------ fills
    def _fill4k(self, walk: Walk, e: E4k) -> None:
        if walk.stale:
            return
        self._count("fills4k")
        if self.a4k.fill(e.vpn % self.p.sets4k, e) is not None:
            self._count("evictions4k")

    def _fill2m(self, walk: Walk, e: E2m) -> None:
        if walk.stale:
            return
        self._count("fills2m")
        if e.perforated:
            self._count("perforatedFills")
        if self.a2m.fill(e.vpn2m % self.p.sets2m, e) is not None:
            self._count("evictions2m")

    def _bitmap_set(self, vpn: int) -> int:
        """The bitmap cache's set: from the request's VA (its 64-page chunk), not from the
        frame, so that the RTL reads the set in parallel with the arrays (docs "Where the
        bitmap words live").  Two VAs over one frame may cache its word twice (harmless: the
        words are read-only, and kind 3 clears the whole cache when it has sets)."""
        return (vpn >> 6) % self.p.bitmapSets

    def _fill_bitmap(self, walk: Walk, index: int, word: int) -> None:
        if walk.stale:
            return
        if self.bitmap.fill(self._bitmap_set(walk.req.vpn), EBitmap(index, word)) is not None:
            self._count("bitmapEvictions")

    def _fill_pwc(self, walk: Walk, kind: str, ppn: int, perm: tuple) -> None:
        if walk.stale or self.pwc is None:
            return
        vpn = walk.req.vpn
        self.pwc.fill(0, EPwc(walk.req.asid, kind, vpn >> PWC_SHIFT[kind], ppn, perm))

    # ------------------------------------------------------------------ lookups
    def _lookup_pwc(self, asid: int, vpn: int, kinds) -> EPwc | None:
        """The first kind of ``kinds`` (deepest first) with an entry; it alone is touched."""
        if self.pwc is None:
            return None
        for k in kinds:
            w, e = self.pwc.lookup(0, (asid, k, vpn >> PWC_SHIFT[k]))
            if e is not None:
                self.pwc.touch(0, w)
                self._count("pwcHits")
                return e
        return None

    def _lookup_bitmap(self, vpn: int, index: int):
        self._count("bitmapLookups")
        s = self._bitmap_set(vpn)
        w, e = self.bitmap.lookup(s, index)
        if e is None:
            return None
        self.bitmap.touch(s, w)
        self._count("bitmapHits")
        return e.word

    # ------------------------------------------------------------------ slots
    def _take_slot(self, req: Req, serial: int, source: int) -> Walk:
        """The lowest free walk slot; with every slot busy a place at the tail of the miss
        queue (docs "Acceptance": while the queue holds a walk every slot is busy)."""
        slot = next((i for i, w in enumerate(self.walks) if w is None), None)
        if slot is None:
            if len(self.missq) >= self.p.missQueue:
                raise PerforatedModelError(
                    f"request {req} accepted with every walk slot busy and the miss queue full "
                    f"({self.p.missQueue} places; req_ready must be low)")
            w = Walk(None, req, serial, source)
            self.missq.append(w)
            return w
        assert not self.missq
        w = Walk(slot, req, serial, source)
        self.walks[slot] = w
        return w

    @staticmethod
    def _issue(walk: Walk, kind: str, addr: int) -> Walk:
        walk.kind, walk.addr, walk.sent = kind, addr, False
        return walk

    # ------------------------------------------------------------------ the perforated step
    def _perforated(self, walk: Walk | None, req: Req, serial: int, source: int, e: E2m,
                    reads: list):
        """Steps 3-4 of the flow for a page of the perforated large page ``e``: returns a
        Response (non-hole, or a hole decided with a walk needed: then a Walk) or a Walk.
        ``walk`` is None on the lookup path (a slot is taken only if memory is needed)."""
        off = req.vpn & 511
        region = off // REGION_PAGES
        if not (e.filter >> region) & 1:
            self._count("filterSkips")
            return self._translation(req, serial, SRC_PERF if source != SRC_WALK else source,
                                     e.ppn + off, 0, (e.w, e.u, e.x), e.d, reads,
                                     "perforated, filter bit 0")
        frame = e.ppn + off
        index = self._bitmap_index(frame)
        word = self._lookup_bitmap(req.vpn, index)
        if word is None:
            if walk is None:
                walk = self._take_slot(req, serial, source)
            walk.large = e
            self._count("bitmapReads")
            return self._issue(walk, "bitmap", self._bitmap_addr(index))
        return self._decide(walk, req, serial, source, e, word, reads)

    def _decide(self, walk, req, serial, source, e: E2m, word: int, reads: list):
        frame = e.ppn + (req.vpn & 511)
        if not (word >> (frame & 63)) & 1:
            return self._translation(req, serial, SRC_PERF if source != SRC_WALK else source,
                                     frame, 0, (e.w, e.u, e.x), e.d, reads,
                                     "perforated, bitmap bit clear")
        # a hole: its own walk (shadow entry, hole PTE), never the large page
        self._count("holes")
        src = SRC_HOLE if source != SRC_WALK else source
        if walk is None:
            walk = self._take_slot(req, serial, src)
        walk.source = src
        walk.hole = True
        walk.large = e
        walk.up = e.up
        walk.pdPpn = e.pdPpn
        s = self._lookup_pwc(req.asid, req.vpn, ("S",))
        if s is not None:
            walk.perm = s.perm
            return self._issue(walk, "hole", s.ppn * 4096 + (req.vpn & 511) * 8)
        walk.perm = e.up
        return self._issue(walk, "shadow",
                           (e.pdPpn + 1) * 4096 + ((req.vpn >> 9) & 511) * 8)

    # ------------------------------------------------------------------ operations
    def request(self, req: Req):
        """A ``req`` handshake.  Returns the Response (appended to ``out``) when the lookup
        answers, else the Walk (its slot and first read)."""
        req.vpn &= self.vpn_mask
        self.serial += 1
        serial = self.serial
        self._count("requests")
        self.unanswered.add(serial)
        if req.cmd == CMD_RESERVED:
            self._count("badCmds")
            return self._finish(self._fault(req, serial, F_RSVD, SRC_WALK, [], "cmd 3"))
        # 1. 4 KiB entry
        s4 = req.vpn % self.p.sets4k
        w, e = self.a4k.lookup(s4, (req.asid, req.vpn))
        if e is not None:
            self.a4k.touch(s4, w)
            self._count("hits4k")
            return self._finish(self._translation(req, serial, SRC_4K, e.ppn, 0,
                                                  (e.w, e.u, e.x), e.d, [], "4K hit"))
        # 2. 2 MiB entry
        v2 = req.vpn >> 9
        s2 = v2 % self.p.sets2m
        w, e = self.a2m.lookup(s2, (req.asid, v2))
        if e is not None:
            self.a2m.touch(s2, w)
            self._count("hits2m")
            if not e.perforated:
                return self._finish(self._translation(
                    req, serial, SRC_2M, e.ppn + (req.vpn & 511), 1, (e.w, e.u, e.x), e.d, [],
                    "2M hit"))
            r = self._perforated(None, req, serial, SRC_PERF, e, [])
            return self._finish(r) if isinstance(r, Response) else r
        # 5. miss everywhere: a walk from the deepest PWC hit
        self._count("walks")
        walk = self._take_slot(req, serial, SRC_WALK)
        hit = self._lookup_pwc(req.asid, req.vpn, ("L1", "L2", "L3"))
        if hit is None:
            walk.perm = (1, 1, 1)
            return self._issue(walk, "pml4e", req.root * 4096 + ((req.vpn >> 27) & 511) * 8)
        walk.perm = hit.perm
        if hit.kind == "L3":
            return self._issue(walk, "pdpte", hit.ppn * 4096 + ((req.vpn >> 18) & 511) * 8)
        if hit.kind == "L2":
            walk.pdPpn = hit.ppn
            walk.up = hit.perm
            return self._issue(walk, "pde", hit.ppn * 4096 + ((req.vpn >> 9) & 511) * 8)
        return self._issue(walk, "pte", hit.ppn * 4096 + (req.vpn & 511) * 8)

    def mem_request(self, slot: int, addr: int) -> Read:
        """A ``mem_req`` handshake with id ``slot``: it must be the read that slot's walk
        waits for, sent once.  From the next cycle the read is outstanding."""
        walk = self.walks[slot] if 0 <= slot < len(self.walks) else None
        if walk is None or not walk.kind or walk.sent:
            raise PerforatedModelError(f"mem_req id {slot} addr {addr:#x}: no read to send "
                                       f"for that slot")
        if addr != walk.addr:
            raise PerforatedModelError(f"mem_req id {slot}: address {addr:#x}, the model's "
                                       f"{walk.kind} read is at {walk.addr:#x}")
        walk.sent = True
        return walk.pending

    def mem_response(self, slot: int, rdata: int, error: bool = False):
        """A ``mem_resp`` handshake for walk slot ``slot`` (the mem_resp id).  Returns the
        Response when the walk ends, else the Walk with its next read; None for a response
        no sent read of the slot waits for (dropped, counted)."""
        walk = self.walks[slot] if 0 <= slot < len(self.walks) else None
        if walk is None or not walk.kind or not walk.sent:
            self._count("badMemResps")
            return None
        rd = Read(walk.kind, walk.addr, rdata & M64, bool(error))
        walk.reads.append(rd)
        walk.kind = ""
        self._count("memReads")
        try:
            nxt = self._step(walk, rd)
        except _Done as d:
            nxt = d.resp
        if isinstance(nxt, Response):
            self.walks[slot] = None
            if self.missq:
                # the miss queue's head takes the slot (its read sendable from then on)
                head = self.missq.popleft()
                head.slot = slot
                self.walks[slot] = head
            return self._finish(nxt)
        return nxt

    def _end(self, walk: Walk, code: int, reason: str):
        raise _Done(self._fault(walk.req, walk.serial, code, walk.source, walk.reads, reason,
                                walk.hole))

    def _step(self, walk: Walk, rd: Read):
        req, pte = walk.req, rd.rdata
        vpn = req.vpn
        if rd.error:
            self._count("busErrors")
            self._end(walk, F_BUS, f"bus error on {rd.kind} read {rd.addr:#x}")
        if rd.kind == "bitmap":
            e = walk.large
            index = self._bitmap_index(e.ppn + (vpn & 511))
            self._fill_bitmap(walk, index, pte)
            return self._decide(walk, req, walk.serial, walk.source, e, pte, walk.reads)
        present = pte & (1 << X86_P)
        level = {"pml4e": 3, "pdpte": 2, "pde": 1, "pte": 0, "shadow": 1, "hole": 0}[rd.kind]
        if rd.kind == "pde" and present and (pte >> X86_PS) & 1 and (pte >> PERF_BIT) & 1 \
                and not self.p.perforation:
            self._end(walk, F_PAGE, "perforated PD leaf with perforation off (not present)")
        if not present:
            what = {"shadow": "shadow entry not present (unallocated hole)",
                    "hole": "hole PTE not present (unallocated hole)"}.get(
                rd.kind, f"{rd.kind} not present")
            self._end(walk, F_PAGE, what)
        if self._rsvd_ppn(pte):
            self._end(walk, F_RSVD, f"{rd.kind}: address bits at or above paBits")
        ps = (pte >> X86_PS) & 1
        if level >= 2 and ps:
            self._end(walk, F_RSVD, f"{rd.kind}: PS set (no 1 GiB pages at the PDPT, "
                                    f"reserved at the PML4)")
        if rd.kind == "shadow" and ps:
            self._end(walk, F_RSVD, "shadow entry with PS set (a shadow entry is a pointer)")
        table = self._addr(pte) >> 12
        if rd.kind == "pml4e":
            walk.perm = _and(walk.perm, _perm_of(pte))
            self._fill_pwc(walk, "L3", table, walk.perm)
            return self._issue(walk, "pdpte", table * 4096 + ((vpn >> 18) & 511) * 8)
        if rd.kind == "pdpte":
            walk.perm = _and(walk.perm, _perm_of(pte))
            self._fill_pwc(walk, "L2", table, walk.perm)
            walk.pdPpn, walk.up = table, walk.perm
            return self._issue(walk, "pde", table * 4096 + ((vpn >> 9) & 511) * 8)
        if rd.kind == "shadow":
            walk.perm = _and(walk.up, _perm_of(pte))
            self._fill_pwc(walk, "S", table, walk.perm)
            return self._issue(walk, "hole", table * 4096 + (vpn & 511) * 8)
        if rd.kind == "pde" and not ps:
            walk.perm = _and(walk.perm, _perm_of(pte))
            self._fill_pwc(walk, "L1", table, walk.perm)
            return self._issue(walk, "pte", table * 4096 + (vpn & 511) * 8)
        if rd.kind == "pde":
            perforated = bool((pte >> PERF_BIT) & 1)
            if not perforated and pte & mask(FILTER_HI, FILTER_LO):
                self._end(walk, F_RSVD, "2M leaf: bits 20:13 set (reserved)")
            if not (pte >> X86_A) & 1:
                self._end(walk, F_PAGE, "2M leaf with A = 0")
            perm = _and(walk.perm, _perm_of(pte))
            e = E2m(req.asid, vpn >> 9, (self._addr(pte) >> 12) & ~511, *perm,
                    d=(pte >> X86_D) & 1, perforated=perforated,
                    filter=(pte >> FILTER_LO) & 0xFF if perforated else 0,
                    pdPpn=walk.pdPpn, up=walk.up)
            self._fill2m(walk, e)
            if not perforated:
                raise _Done(self._translation(req, walk.serial, SRC_WALK, e.ppn + (vpn & 511),
                                              1, perm, e.d, walk.reads, "walk: 2M leaf"))
            return self._perforated(walk, req, walk.serial, SRC_WALK, e, walk.reads)
        # a 4 KiB leaf: an ordinary PTE or a hole's PTE
        if not (pte >> X86_A) & 1:
            self._end(walk, F_PAGE, f"{rd.kind} with A = 0")
        perm = _and(walk.perm, _perm_of(pte))
        e = E4k(req.asid, vpn, self._addr(pte) >> 12, *perm, d=(pte >> X86_D) & 1)
        self._fill4k(walk, e)
        raise _Done(self._translation(req, walk.serial, walk.source, e.ppn, 0, perm, e.d,
                                      walk.reads, f"walk: {rd.kind}", hole=walk.hole))

    def inval(self, kind: int, asid: int = 0, vpn: int = 0, frame: int = 0) -> PendingInval:
        """An ``inval`` handshake: removes what the kind covers (docs "Invalidation") and
        marks every walk in flight stale (it fills nothing from now on)."""
        if self.missq:
            raise PerforatedModelError(
                f"inval accepted while {len(self.missq)} requests wait in the miss queue "
                f"(inval_ready must be low)")
        self._count("invals")
        vpn &= self.vpn_mask
        kind &= 3
        if kind == INV_ALL:
            self.a4k.remove(lambda e: True)
            self.a2m.remove(lambda e: True)
            self.bitmap.remove(lambda e: True)
            if self.pwc:
                self.pwc.remove(lambda e: True)
        elif kind == INV_ASID:
            self.a4k.remove(lambda e: e.asid == asid)
            self.a2m.remove(lambda e: e.asid == asid)
            if self.pwc:
                self.pwc.remove(lambda e: e.asid == asid)
        elif kind == INV_PAGE:
            self.a4k.remove(lambda e: e.asid == asid and e.vpn == vpn)
            self.a2m.remove(lambda e: e.asid == asid and e.vpn2m == vpn >> 9)
            if self.pwc:
                self.pwc.remove(lambda e: e.asid == asid)
        else:
            if self.p.bitmapSets > 1:
                # a set-associative cache is indexed by VA: a frame's words cannot be found
                # by PA, so every word goes (the safe side of "drops its bitmap words")
                self.bitmap.remove(lambda e: True)
            else:
                self.bitmap.remove(lambda e: e.index >> 3 == frame)
            self.a2m.remove(lambda e: e.ppn >> 9 == frame)
        for w in self.walks:
            if w is not None and not w.stale:
                w.stale = True
                self._count("staleWalks")
        self.serial += 1
        pi = PendingInval(self.serial, set(self.unanswered))
        self.pending_invals.append(pi)
        return pi

    def inval_done_allowed(self) -> bool:
        """The oldest pending invalidation may pulse: every request accepted before it has
        had its response leave on ``resp`` (the removal landing is a cycle count the
        testbench adds)."""
        return bool(self.pending_invals) and not self.pending_invals[0].before

    def inval_done(self) -> PendingInval:
        if not self.inval_done_allowed():
            raise PerforatedModelError("invalDone before every earlier request was answered")
        return self.pending_invals.popleft()

    # ------------------------------------------------------------------ serial use
    def translate(self, req: Req, fail=None) -> Response:
        """One request run to its end against ``self.mem`` with nothing in between (serial
        transaction level).  ``fail(read) -> bool`` may turn a read into a bus error."""
        r = self.request(req)
        while isinstance(r, Walk):
            addr = r.addr
            err = self.mem.error(addr, "read") or bool(fail and fail(r.pending))
            data = 0 if err else self.mem.read(addr)
            self.mem_request(r.slot, addr)
            r = self.mem_response(r.slot, data, err)
        assert isinstance(r, Response)
        got = self.out.pop()
        assert got is r
        self.unanswered.discard(r.serial)
        for pi in self.pending_invals:
            pi.before.discard(r.serial)
        return r

    def run(self, ops, fail=None) -> list:
        """``ops``: Req (a request) or a dict {'inval': kind, 'asid', 'vpn', 'frame'}.
        Returns the Response of every request, in order."""
        out = []
        for op in ops:
            if isinstance(op, Req):
                out.append(self.translate(op, fail))
            else:
                d = dict(op)
                kind = d.pop("inval")
                self.inval(kind, **d)
                self.pending_invals.clear()
        return out

    # ------------------------------------------------------------------ views
    def entries4k(self):
        return self.a4k.entries()

    def entries2m(self):
        return self.a2m.entries()

    def bitmap_words(self):
        return self.bitmap.entries()

    def pwc_entries(self):
        return self.pwc.entries() if self.pwc else []
