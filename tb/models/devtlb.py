"""Reference model of DevTlb (docs/devtlb.md is the contract; ../shared/spec/devtlb.md the spec).

Sequential in acceptance order, like models/babelfish.py: the testbench calls ``inval``,
``completion`` and ``request`` in the order the DUT accepted them (at most one per cycle,
priority inval > completion > request), and tells the model what left on the output channels
(``ats_sent`` for an ``ats_req`` handshake, ``expect_response``/``pop_hit``/``drain_next`` for a
``resp`` handshake, ``inval_done`` for an ``invalDone`` pulse).  The model cannot know cycles;
it gives the testbench what it needs to check each output against the docs:

* hits (source 0/1) leave the hit queue in FIFO order: ``pop_hit()`` is the next one;
* waiters (source 2) are answerable once their slot's completion was accepted;
  ``answerable()`` lists them with their exact values, ``drain_next()`` takes the lowest
  numbered one (the drain's rule), ``expect_response(tag, source)`` takes the one a
  response on ``resp`` must be (by tag);
* ``ats_sent`` checks an ``ats_req`` against the slots waiting to be sent (FIFO per queue);
* ``inval_done_allowed(id)`` is conditions 2 and 3 of "Invalidation" plus acceptance order
  (condition 1 is a cycle count the testbench adds); ``inval_done()`` checks a pulse;
* ``request_blockers()`` says which resource a request lacks (``req_ready`` must then be low);
* ``tick(...)`` feeds the per-cycle counters from what the testbench sees each cycle.

Open questions for the RTL (docs/devtlb.md silent or ambiguous; the reading implemented here,
closest to the spec, is given; each is also in the report of the model's commit):

Q1  Slot coverage by a kind-2 invalidation: a slot's translation size is unknown until its
    completion, and a 2 MiB / 1 GiB completion is cached as a 2 MiB piece.  A slot is covered
    when the *2 MiB region* of its page overlaps the range (outstanding or completed slot);
    covering only its 4 KiB page would let a pre-invalidation 2 MiB translation be cached and
    later answer a page the invalidation covered.
Q2  "Outstanding" for a completion: a slot allocated but not yet sent on ``ats_req`` is not
    outstanding at the IOMMU; a completion naming it is a bad completion (ignored, counted),
    like a free slot or a completed one.  (Otherwise the still-queued send could go out after
    the slot was freed and re-allocated.)  For merging, unsent slots are outstanding (step 3).
    Same cycle: the model takes a completion before an ``ats_req`` handshake of that cycle.
Q3  ``perf_prefetchDropped`` counts only candidates dropped for lack of a free prefetch slot;
    candidates already in the PB or in an outstanding slot are filtered, not counted.
Q4  ``perf_prefetches`` counts ``ats_req`` handshakes with ``prefetch = 1`` (the twin of
    ``perf_atsRequests``); not allocations.
Q5  ``pageSize = 3`` and unaligned-ppn checks apply to non-fault completions only (on a fault
    the size and ppn carry nothing): a fault with pageSize 3 or low ppn bits is a plain fault,
    counted in neither ``perf_badCompletions`` nor ``perf_badAlign``.
Q6  ``perf_badInvals`` counts an invalidation once even when it has several oddities (kind 2
    with sizeLog2 < 12 and an unaligned iova); sizeLog2 and iova are checked for kind 2 only
    (the other kinds do not use them); kind 3 counts once.
Q7  Several entries covering one page (a 4 KiB entry and a 2 MiB piece of the same SID, after
    the IOMMU changed the page size without an invalidation): the lowest-numbered way of the
    row / PB entry answers, and only it is touched.
Q8  ``perf_faults`` counts responses with ``fault`` at their ``resp`` handshake (also
    permission faults on hits); ``perf_hits`` counts DevTLB hits only (source 0), ``perf_pbHits``
    PB hits; ``perf_requests = hits + pbHits + misses``.
Q9  A response whose translation is not a fault but fails the permission check has
    ``fault = 1`` and still carries ``ppn``, ``perm_r``, ``perm_w`` (docs: "given in every
    response whose translation is not a fault").  A non-fault translation with R = W = 0 is
    cached (it is not a fault completion); every request then gets ``fault``.
Q10 PB fill rule: same as the DevTLB's (an entry with the same {SID, size, page} is overwritten,
    else the first invalid entry, else the LRU victim); an overwrite starts a fresh entry
    (never hit) and is not counted in ``perf_prefetchUnused``; eviction and invalidation of an
    entry never hit are.
Q11 The history read of a trigger does not see the request's own history write (as the
    predictor read does not see its own write; "every write by requests accepted before").
Q12 A demand request merged into a *prefetch* slot is answered with source 2 and the
    completion fills the PB (a prefetch slot fills the PB), not the DevTLB.
Q13 ``random`` replacement: one LFSR for the whole DevTLB (as BabelFishTlb: one per array),
    advanced when a fill takes the victim.  A claim does not reset the row's replacement state
    (unobservable for plru/lru: the row must be refilled through its invalid ways before any
    victim is chosen).
Q14 A stale prefetch (or demand) slot not yet sent is still sent (the docs do not cancel it).
Q15 ``perf_ptbFullCycles``: "no free demand slot" as the model sees it (a slot is taken at
    the request's acceptance, free at its last waiter's response); the RTL frees a cycle
    or so later, so compare it with a tolerance or at a quiet end.  ``perf_atsStallCycles`` is
    read as ``ats_req_valid && !ats_req_ready`` (the docs do not define it).
Q16 ``perf_staleCompletions`` counts every accepted (good-tag) completion of a stale slot,
    fault or not.
Q17 Condition 3 of invalDone covers every hit response produced before the invalidation
    (covered or not), as written.
Q18 Request tags are the device's and the docs do not forbid two outstanding requests with one
    tag: the model allows it (hits leave in FIFO order; ``expect_response(tag, 2)`` takes the
    lowest-numbered answerable waiter with the tag), but a testbench can only match responses
    unambiguously when tags are unique among outstanding requests, which it should keep.
Q19 Counter timing: the model counts a request's class (hit, PB hit, merge, miss) at its
    acceptance, completions at theirs, ATS and response counters at the handshake; the RTL
    learns the class in the pipeline ("one cycle behind the event"), so counters compare
    exactly when the DUT is quiet (or within ``latency + 1`` cycles of the accepted ops).
Q20 A claim is counted (``perf_claims``) whenever a fill finds the row's PTag valid and another
    SID's, also when an invalidation had already emptied the row (nothing is evicted then).
Q21 "Answered" (waiter, slot freeing) is the ``resp`` handshake; an RTL that frees a waiter
    when its response moves into an output register frees earlier than the model, and the
    model's "request accepted without a free waiter/slot" check would then be wrong.  (With
    the drain's skid, ``devtlb_full`` since session 29, the RTL frees a cycle *after* the
    handshake: later than the model, which the readiness check allows, and the slot choice
    follows ``allocDelay`` 3, Q25.)
Q22 A demand request merged into a prefetch slot not yet sent does not promote it: the slot
    stays in the prefetch queue, behind every demand send (a performance point only).
Q23 ``perf_badCompletions`` also counts a completion for a slot that is completed and still
    draining its waiters (its completion was accepted: not outstanding), a case the docs'
    parenthesis (free slot or out-of-range value) does not list.
Q24 The drain's depth (docs "When each change becomes visible", **decided** 2026-11-28): a
    completion acting in cycle t (its respond cycle) makes its waiters answerable on ``resp``
    from cycle t + ``drain_delay``: t + 2 with one slot (the drain register loads the waiter in
    t + 1), t + 3 with several (a pick register in t + 1, the drain register in t + 2), t + 4
    with the drain's skid queue (``drainDelay`` 4, ``devtlb_full``, **decided** 2026-11-30,
    session 29: the drain register moves into a 2-entry queue in front of ``resp``).  The
    model knows cycles only when the testbench gives them (``completion(cycle=)``,
    ``expect_response(cycle=)``); without them the check is skipped.  Which ready waiter is
    drained first is not checked (the RTL picks the lowest-numbered one when its pick or drain
    register loads; a later completion of a lower-numbered waiter does not overtake it).
Q25 The free demand slot an allocation takes (docs "Slots", **decided** 2026-11-29): the
    lowest-numbered free one, except, with ``allocDelay`` 2 (the configurations whose choice is
    registered: several slots, distributed-RAM rows, latency 4), one freed by a resp handshake
    in the cycle just before the request's respond cycle; with ``allocDelay`` 3 (the drain's
    skid, ``devtlb_full``, session 29: the handshake frees a cycle later) one freed by a
    handshake in either of the two cycles before it.  The model knows it when the
    testbench gives the handshake's cycle (``expect_response(cycle=)``) and the request's
    respond cycle (``request(cycle=)``).  Which free *waiter* a miss takes is not modelled
    exactly (the RTL's choice is registered too): waiter numbers are not visible at the ports.
Q26 Demand sends go first (docs "Prefetch Unit", "When each change becomes visible"): a prefetch
    slot is not sent while a demand slot allocated before it (in an earlier respond, or as the
    demand slot of the same respond) waits to be sent.  The RTL's send queues may take the
    allocations a cycle late (``allocDelay`` 2), both queues alike, so the order holds there too.
    With the prefetch send skid (``devtlb_full``, **decided** session 31, manifest
    ``pfSendDelay`` 4) the prefetches pass a 2-entry queue between their queue and the ATS
    output: they are sent a cycle later (the model does not model the link's cycles; the
    directed test ``test_prefetch_issue_cycle`` checks the first one's cycle), in the same
    order, and still after every demand slot waiting in the demand queue, so this rule holds
    unchanged.
Q27 The prefetch issue stage (docs "Prefetch Unit", **decided** 2026-11-29, session 21): with
    ``prefetchDelay`` 1 (manifest; the ``registeredChoice`` configurations with a PB) the
    prefetches of a trigger whose respond cycle is t are issued in cycle t + 1: after the
    request that responds in t + 1 (which neither merges into them nor sees them; its miss of a
    candidate's page drops that candidate, held by the request's slot), before a completion
    that responds in t + 1, and with the resp handshakes of cycle t done (a slot freed by one is
    a candidate).  The model knows it when the testbench gives the respond cycles
    (``request(cycle=)``) and calls ``flush_prefetch(cycle)`` after each cycle's operations;
    without cycles the trigger acts at once, as with ``prefetchDelay`` 0.  With
    ``prefetchDelay`` 2 (``devtlb_full`` since 2026-11-30, session 25: the filter compares the
    candidates from fabric registers behind the history's block RAM) they are issued in t + 2:
    after the requests that respond in t + 1 and t + 2, before a completion that responds in
    either (no request responds right after a completion: the write shadow), with the resp
    handshakes of t + 1 done; several triggers may wait, and issue oldest first.  With the
    drain's skid (``drainDelay`` 4, ``devtlb_full`` since session 29) the handshakes of t are
    done, not those of t + 1: a prefetch slot freed by a handshake in c is a candidate from an
    issue in c + 2 (``release_lag``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .params import check_range
from .replacement import make_policy

SRC_DEVTLB, SRC_PB, SRC_ATS = 0, 1, 2
PS_4K, PS_2M, PS_1G, PS_BAD = 0, 1, 2, 3
PAGE_LOW_BITS = {PS_4K: 0, PS_2M: 9, PS_1G: 18}
REGION_BITS = 9                       # a 2 MiB region is 512 pages
INVAL_ALL, INVAL_SID, INVAL_RANGE, INVAL_RESERVED = 0, 1, 2, 3

COUNTERS = ("requests", "hits", "pbHits", "misses", "merged", "atsRequests", "prefetches",
            "ptbFullCycles", "invalidations", "badCompletions", "badAlign", "badInvals",
            "faults", "claims", "prefetchDropped", "prefetchUnused", "staleCompletions",
            "respStallCycles", "atsStallCycles")
COUNTER_MAX = (1 << 32) - 1


class DevTlbModelError(AssertionError):
    """The DUT did something the model says is impossible (or the testbench misused the model)."""


def clog2(n: int) -> int:
    return (n - 1).bit_length()


def log2up(n: int) -> int:
    """Chisel's log2Up: at least 1 bit."""
    return max(1, clog2(n))


@dataclass(frozen=True)
class DevTlbParams:
    sets: int = 8
    ways: int = 8
    partitioned: bool = True
    sidBits: int = 16
    iovaBits: int = 64
    ppnBits: int = 40
    ptbEntries: int = 32
    pbEntries: int = 8
    histPages: int = 2
    histDistance: int = 32
    predictorEntries: int = 1024
    historyEntries: int = 1024
    tagBits: int = 8
    pfSlots: int | None = None          # default pbEntries
    waitEntries: int | None = None      # default 2 * ptbEntries
    respQueue: int = 4
    invalPending: int = 4
    replacement: str = "plru"
    latency: int = 4
    # cycles from a demand slot's freeing resp handshake (cycle c) to the first respond cycle
    # that may allocate it: 1 (c + 1), or 2 in the configurations whose free-slot choice is
    # registered (Q25; the RTL's derived value, manifest "allocDelay")
    allocDelay: int = 1
    # cycles from a trigger's respond cycle to the cycle its prefetches are issued: 0, or 1 in
    # the configurations with the prefetch issue stage (Q27; manifest "prefetchDelay")
    prefetchDelay: int = 0
    # cycles from a completion's respond cycle to the first cycle its waiters may be on resp
    # (Q24): 0 for the rule of the drain's registers (2 with one slot, 3 with several), or the
    # RTL's derived value (manifest "drainDelay": 4 with the drain's skid queue, devtlb_full)
    drainDelay: int = 0
    # cycles from a prefetch's issue to the first cycle it may be on ats_req with nothing ahead
    # of it (Q26): 0 when not given, or the RTL's derived value (manifest "pfSendDelay": 4 with
    # the prefetch send skid, devtlb_full since session 31)
    pfSendDelay: int = 0

    def __post_init__(self):
        if self.pfSlots is None:
            object.__setattr__(self, "pfSlots", self.pbEntries)
        if self.waitEntries is None:
            object.__setattr__(self, "waitEntries", 2 * self.ptbEntries)
        if self.pbEntries == 0:
            object.__setattr__(self, "pfSlots", 0)

        def rng(name, lo, hi, pow2=False):
            check_range(self, name, lo, hi, pow2)

        rng("sets", 1, 1024, True)
        rng("ways", 1, 16)
        rng("sidBits", 1, 16)
        rng("iovaBits", 13, 64)
        rng("ppnBits", 9, 52)
        rng("ptbEntries", 1, 64)
        rng("pbEntries", 0, 64)
        rng("histPages", 1, 4)
        rng("histDistance", 1, 256)
        rng("predictorEntries", 1, 4096, True)
        rng("historyEntries", 1, 4096, True)
        rng("tagBits", 1, 16)
        if self.pbEntries > 0:
            rng("pfSlots", 1, 64)
        rng("waitEntries", self.ptbEntries, 256)
        rng("respQueue", 2, 16)
        rng("invalPending", 1, 16)
        rng("latency", 1, 4)
        if self.replacement not in ("plru", "lru", "random"):
            raise ValueError(f"replacement must be plru, lru or random, got {self.replacement!r}")

    @classmethod
    def from_manifest(cls, params: dict, derived: dict) -> "DevTlbParams":
        """From a manifest's params and derived values (the RTL writes 0 for 'default' and
        gives the values it derived)."""
        d = dict(params)
        d["waitEntries"] = int(derived.get("waiters", d.get("waitEntries") or 0)) or None
        if d.get("pbEntries", 0) > 0:
            d["pfSlots"] = int(derived.get("prefetchSlots", d.get("pfSlots") or 0)) or None
        else:
            d["pfSlots"] = None
        d["allocDelay"] = int(derived.get("allocDelay", 1))
        d["prefetchDelay"] = int(derived.get("prefetchDelay", 0))
        d["drainDelay"] = int(derived.get("drainDelay", 0))
        d["pfSendDelay"] = int(derived.get("pfSendDelay", 0))
        return cls.from_dict(d)

    @classmethod
    def from_dict(cls, d: dict) -> "DevTlbParams":
        names = cls.__dataclass_fields__.keys()
        kw = {k: d[k] for k in names if k in d}
        if "partitioned" in kw:
            kw["partitioned"] = bool(kw["partitioned"])
        return cls(**kw)

    @property
    def slots(self) -> int:
        return self.ptbEntries + self.pfSlots

    @property
    def atsTagBits(self) -> int:
        return log2up(self.slots)

    @property
    def pageBits(self) -> int:
        return self.iovaBits - 12

    @property
    def prefetch(self) -> bool:
        return self.pbEntries > 0

    @property
    def drain_delay(self) -> int:
        """Cycles from a completion's respond cycle to the first cycle its waiters may be on
        ``resp`` (Q24): 2 with one slot, 3 with several (the drain's pick register), 4 with the
        drain's skid queue (``drainDelay``)."""
        if self.drainDelay:
            return self.drainDelay
        return 2 if self.slots == 1 else 3

    @property
    def release_lag(self) -> int:
        """Cycles from a waiter's ``resp`` handshake to its release (the waiter and its slot
        freed): 1 with the drain's skid (``drainDelay`` 4, ``devtlb_full``, session 29), else 0.
        A prefetch slot freed by a handshake in c is then free to the issue stage from c + 2
        (Q27), a demand slot to the allocation from c + ``allocDelay`` (Q25)."""
        return 1 if self.drainDelay == 4 else 0


# --------------------------------------------------------------------------- records
@dataclass
class Entry:
    """A DevTLB or PB entry: {SID, page, size (0 4 KiB / 1 2 MiB), ppn, perms}; page and ppn
    aligned to the size."""
    sid: int
    page: int
    size: int
    ppn: int
    perm_r: int
    perm_w: int
    used: bool = False              # PB: hit at least once (perf_prefetchUnused)

    @property
    def npages(self) -> int:
        return 1 << PAGE_LOW_BITS[self.size]

    def covers(self, sid: int, page: int) -> bool:
        return sid == self.sid and self.page <= page < self.page + self.npages

    def key(self) -> tuple:
        return (self.sid, self.size, self.page)

    def answer(self, page: int) -> int:
        return self.ppn + (page - self.page)


@dataclass
class Translation:
    """A completion's translation for its slot's page (computed once at the completion)."""
    fault: int
    ppn: int = 0
    perm_r: int = 0
    perm_w: int = 0
    pageSize: int = 0


@dataclass(frozen=True)
class Response:
    tag: int
    ppn: int
    perm_r: int
    perm_w: int
    fault: int
    source: int

    def as_dict(self) -> dict:
        return dict(tag=self.tag, ppn=self.ppn, perm_r=self.perm_r, perm_w=self.perm_w,
                    fault=self.fault, source=self.source)


@dataclass
class Slot:
    idx: int                        # slot number = ATS tag
    serial: int                     # instance (a slot number is reused)
    sid: int
    page: int
    prefetch: bool                  # a prefetch slot (idx >= ptbEntries)
    sent: bool = False
    completed: bool = False
    stale: bool = False
    waiters: list = field(default_factory=list)   # waiter numbers, in join order
    result: Translation | None = None
    answer_from: int | None = None  # first cycle its waiters may be on resp (Q24), when known

    @property
    def outstanding(self) -> bool:
        return not self.completed


@dataclass
class Waiter:
    idx: int
    tag: int
    write: int
    slot: Slot
    seq: int                        # request sequence number (debug)


@dataclass(frozen=True)
class AtsReq:
    tag: int
    sid: int
    iova: int
    prefetch: int


@dataclass
class HitItem:
    serial: int
    resp: Response


@dataclass
class RequestOutcome:
    kind: str                       # "hit", "pbhit", "merge", "alloc"
    response: Response | None = None   # hits: the response (queued in the hit queue)
    slot: int | None = None         # merge / alloc: the slot number
    waiter: int | None = None       # merge / alloc: the waiter number
    way: int | None = None          # hit: way (DevTLB) or entry (PB)
    ats: list = field(default_factory=list)        # AtsReq of slots allocated, in order
    prefetch_drops: list = field(default_factory=list)   # (sid, page, reason)
    successor: int | None = None    # predictor read (Prefetch Unit)
    candidates: list = field(default_factory=list)  # (sid, page) considered, in order


@dataclass
class CompletionOutcome:
    kind: str                       # "bad_tag" or "completed"
    reason: str | None = None       # bad_tag: "range", "free", "completed", "unsent"
    slot: int | None = None
    stale: bool = False
    bad_size: bool = False
    bad_align: bool = False
    translation: Translation | None = None
    cached: str | None = None       # "devtlb", "pb" or None
    claim: bool = False
    evicted: Entry | None = None
    freed: bool = False
    answerable: list = field(default_factory=list)  # (waiter number, Response)


@dataclass
class PendingInval:
    id: int
    kind: int
    stale_slots: set                # serials of slots it marked stale, not yet freed
    hits: set                       # serials of hit responses queued before it, not yet sent


@dataclass
class InvalOutcome:
    id: int
    kind: int                       # the kind applied (3 -> 0)
    bad: bool
    iova: int
    sizeLog2: int
    removed_devtlb: int = 0
    removed_pb: int = 0
    stale_slots: list = field(default_factory=list)   # slot numbers marked stale


# --------------------------------------------------------------------------- model
class DevTlbModel:
    def __init__(self, params: DevTlbParams | dict):
        if isinstance(params, dict):
            params = DevTlbParams.from_dict(params)
        self.p = params
        self.sid_mask = (1 << params.sidBits) - 1
        self.page_mask = (1 << params.pageBits) - 1
        self.ppn_mask = (1 << params.ppnBits) - 1
        self.tag_mask = (1 << params.tagBits) - 1
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        p = self.p
        self.rows: list[list[Entry | None]] = [[None] * p.ways for _ in range(p.sets)]
        self.ptag: list[int | None] = [None] * p.sets
        if p.replacement == "random":
            shared = make_policy("random", p.ways)      # Q13: one LFSR for the array
            self.repl = [shared] * p.sets
        else:
            self.repl = [make_policy(p.replacement, p.ways) for _ in range(p.sets)]
        self.pb: list[Entry | None] = [None] * p.pbEntries
        self.pb_lru = make_policy("lru", p.pbEntries) if p.pbEntries else None
        self.slots: list[Slot | None] = [None] * p.slots
        self.waiters: list[Waiter | None] = [None] * p.waitEntries
        self.demand_q: deque[Slot] = deque()      # allocated demand slots not yet sent
        self.prefetch_q: deque[Slot] = deque()    # allocated prefetch slots not yet sent
        self.hitq: deque[HitItem] = deque()
        self.delay: deque[int] = deque()          # SIDs of the last histDistance requests
        self.pred: list[int | None] = [None] * p.predictorEntries
        self.hist_pages = [[None] * p.histPages for _ in range(p.historyEntries)]
        self.hist_ptr = [0] * p.historyEntries
        self.invals: deque[PendingInval] = deque()
        self.counters = {c: 0 for c in COUNTERS}
        self._serial = 0
        self._inval_id = 0
        self._seq = 0
        self._freed_at: dict[int, int] = {}   # slot -> cycle of the resp handshake that freed it
        # Q27: the trigger waiting for the issue stage: (successor, history pages, outcome, cycle)
        self._pending_pf: list = []

    def _count(self, name: str, inc: int = 1) -> None:
        self.counters[name] = min(COUNTER_MAX, self.counters[name] + inc)

    def _next_serial(self) -> int:
        self._serial += 1
        return self._serial

    # ------------------------------------------------------------- accounting
    def free_demand_slots(self) -> int:
        return sum(1 for s in self.slots[:self.p.ptbEntries] if s is None)

    def free_prefetch_slots(self) -> int:
        return sum(1 for s in self.slots[self.p.ptbEntries:] if s is None)

    def free_waiters(self) -> int:
        return sum(1 for w in self.waiters if w is None)

    def request_blockers(self) -> list[str]:
        """The resources a request lacks ("slot", "waiter", "hitq"); empty = acceptable.
        docs "Acceptance": req_ready needs all three, whatever the request turns out to be.
        The model takes a resource at acceptance and frees it when the testbench reports
        the response, so a non-empty list means req_ready must be low."""
        b = []
        if self.free_demand_slots() == 0:
            b.append("slot")
        if self.free_waiters() == 0:
            b.append("waiter")
        if len(self.hitq) >= self.p.respQueue:
            b.append("hitq")
        return b

    def can_accept_request(self) -> bool:
        return not self.request_blockers()

    def can_accept_inval(self) -> bool:
        return len(self.invals) < self.p.invalPending

    def outstanding_tags(self) -> list[int]:
        """Slots sent and not completed: the ATS tags a completion may name."""
        return [s.idx for s in self.slots if s is not None and s.sent and not s.completed]

    def slot(self, idx: int) -> Slot | None:
        return self.slots[idx]

    def entries(self):
        """Valid DevTLB entries as (row, way, entry)."""
        for r, ways in enumerate(self.rows):
            for w, e in enumerate(ways):
                if e is not None:
                    yield r, w, e

    def pb_entries(self):
        for i, e in enumerate(self.pb):
            if e is not None:
                yield i, e

    @property
    def idle(self) -> bool:
        """Nothing in flight: no slot, no hit waiting, no invalidation pending."""
        return (all(s is None for s in self.slots) and not self.hitq and not self.invals
                and not self._pending_pf)

    # ------------------------------------------------------------- DevTLB/PB
    def row_of(self, sid: int, page: int) -> int:
        if self.p.partitioned:
            return sid % self.p.sets
        return (page >> REGION_BITS) % self.p.sets

    def _devtlb_lookup(self, sid: int, page: int):
        r = self.row_of(sid, page)
        if self.p.partitioned and self.ptag[r] != sid:
            return r, None
        for w, e in enumerate(self.rows[r]):
            if e is not None and e.covers(sid, page):      # Q7: lowest way
                return r, w
        return r, None

    def _pb_lookup(self, sid: int, page: int):
        for i, e in enumerate(self.pb):
            if e is not None and e.covers(sid, page):      # Q7: lowest entry
                return i
        return None

    def _devtlb_fill(self, e: Entry, out: CompletionOutcome) -> None:
        p = self.p
        r = self.row_of(e.sid, e.page)
        row = self.rows[r]
        if p.partitioned:
            if self.ptag[r] is None:
                self.ptag[r] = e.sid
            elif self.ptag[r] != e.sid:
                for w in range(p.ways):                     # the claim
                    row[w] = None
                self.ptag[r] = e.sid
                self._count("claims")
                out.claim = True
        way = next((w for w, o in enumerate(row) if o is not None and o.key() == e.key()), None)
        if way is None:
            way = next((w for w, o in enumerate(row) if o is None), None)
        if way is None:
            way = self.repl[r].victim()
            out.evicted = row[way]
            self.repl[r].on_evict()
        row[way] = e
        self.repl[r].touch(way)

    def _pb_fill(self, e: Entry, out: CompletionOutcome) -> None:
        i = next((k for k, o in enumerate(self.pb) if o is not None and o.key() == e.key()), None)
        if i is None:
            i = next((k for k, o in enumerate(self.pb) if o is None), None)
        if i is None:
            i = self.pb_lru.victim()
            old = self.pb[i]
            out.evicted = old
            if not old.used:
                self._count("prefetchUnused")
        self.pb[i] = e
        self.pb_lru.touch(i)

    # --------------------------------------------------------------- slots
    def _outstanding_slot(self, sid: int, page: int) -> Slot | None:
        for s in self.slots:
            if s is not None and not s.completed and s.sid == sid and s.page == page:
                return s
        return None

    def _alloc_slot(self, sid: int, page: int, prefetch: bool, cycle: int | None = None) -> Slot | None:
        lo, hi = (self.p.ptbEntries, self.p.slots) if prefetch else (0, self.p.ptbEntries)
        for i in range(lo, hi):
            cooling = (not prefetch and cycle is not None and
                       self._freed_at.get(i, -(1 << 62)) > cycle - self.p.allocDelay)   # Q25
            # Q27 with the drain's skid: the issue in cycle `cycle` sees the handshakes up to
            # cycle - 2 (the release registered), not up to cycle - 1
            cooling = cooling or (prefetch and cycle is not None and self.p.release_lag > 0 and
                                  self._freed_at.get(i, -(1 << 62)) > cycle - 1 - self.p.release_lag)
            if self.slots[i] is None and not cooling:
                s = Slot(idx=i, serial=self._next_serial(), sid=sid, page=page, prefetch=prefetch)
                self.slots[i] = s
                (self.prefetch_q if prefetch else self.demand_q).append(s)
                return s
        return None

    def _add_waiter(self, tag: int, write: int, s: Slot) -> int:
        i = self.waiters.index(None)
        self.waiters[i] = Waiter(idx=i, tag=tag, write=write, slot=s, seq=self._seq)
        s.waiters.append(i)
        return i

    def _free_slot(self, s: Slot) -> None:
        self.slots[s.idx] = None
        for inv in self.invals:
            inv.stale_slots.discard(s.serial)

    # ------------------------------------------------------------- responses
    @staticmethod
    def _respond(tag: int, write: int, t: Translation | Entry, page: int | None, source: int) -> Response:
        """docs "Permission": fault when the translation is a fault, or the access is not
        permitted; ppn/perms given whenever the translation is not a fault (Q9)."""
        if isinstance(t, Entry):
            ppn, r, w, tfault = t.answer(page), t.perm_r, t.perm_w, 0
        else:
            ppn, r, w, tfault = t.ppn, t.perm_r, t.perm_w, t.fault
        if tfault:
            return Response(tag, 0, 0, 0, 1, source)
        fault = int((write and not w) or (not write and not r))
        return Response(tag, ppn, r, w, fault, source)

    def _waiter_response(self, wi: int) -> Response:
        wt = self.waiters[wi]
        return self._respond(wt.tag, wt.write, wt.slot.result, None, SRC_ATS)

    # -------------------------------------------------------------- request
    def request(self, tag: int, sid: int, page: int, write: int = 0, strict: bool = True,
                cycle: int | None = None) -> RequestOutcome:
        """An accepted request (docs "Lookup of a request", steps 1-4, then the Prefetch Unit);
        ``cycle``: its respond cycle, when the caller knows it (the free demand slot it may take,
        Q25)."""
        p = self.p
        blockers = self.request_blockers()
        if blockers and strict:
            raise DevTlbModelError(f"request accepted without a free {'/'.join(blockers)} "
                                   f"(req_ready must be low)")
        tag &= self.tag_mask
        sid &= self.sid_mask
        page &= self.page_mask
        write = 1 if write else 0
        self._seq += 1
        self._count("requests")
        pending = None

        succ = self.pred[sid % p.predictorEntries] if p.prefetch else None
        out = RequestOutcome(kind="", successor=succ)
        r, w = self._devtlb_lookup(sid, page)
        pbi = None if w is not None or not p.prefetch else self._pb_lookup(sid, page)
        if w is not None:
            e = self.rows[r][w]
            self.repl[r].touch(w)
            self._count("hits")
            out.kind, out.way = "hit", w
            out.response = self._respond(tag, write, e, page, SRC_DEVTLB)
        elif pbi is not None:
            e = self.pb[pbi]
            e.used = True
            self.pb_lru.touch(pbi)
            self._count("pbHits")
            out.kind, out.way = "pbhit", pbi
            out.response = self._respond(tag, write, e, page, SRC_PB)
        if out.response is not None:
            self.hitq.append(HitItem(self._next_serial(), out.response))
        else:
            self._count("misses")
            s = self._outstanding_slot(sid, page)
            hist_snapshot = None
            if p.prefetch and succ is not None:        # Q11: read before this request's write
                hist_snapshot = list(self.hist_pages[succ % p.historyEntries])
            if s is not None:
                self._count("merged")
                out.kind = "merge"
            else:
                s = self._alloc_slot(sid, page, prefetch=False, cycle=cycle)
                assert s is not None                   # request_blockers guarantees a slot
                out.kind = "alloc"
                out.ats.append(AtsReq(s.idx, sid, page, 0))
                if p.prefetch:
                    h = sid % p.historyEntries
                    self.hist_pages[h][self.hist_ptr[h]] = page
                    self.hist_ptr[h] = (self.hist_ptr[h] + 1) % p.histPages
            out.slot = s.idx
            out.waiter = self._add_waiter(tag, write, s)
            if hist_snapshot is not None:
                if p.prefetchDelay and cycle is not None:         # Q27: the issue stage
                    pending = (succ, hist_snapshot, out, cycle)
                else:
                    self._trigger(succ, hist_snapshot, out)

        if p.prefetch:                                  # predictor write, delay line
            if len(self.delay) == p.histDistance:
                old = self.delay.popleft()
                self.pred[old % p.predictorEntries] = sid
            self.delay.append(sid)
        # Q27: the prefetches of the requests that responded prefetchDelay cycles before (or
        # earlier) act after this one; without a cycle every waiting trigger acts
        self.flush_prefetch(cycle)
        if pending is not None:
            self._pending_pf.append(pending)
        return out

    @property
    def pending_trigger(self) -> RequestOutcome | None:
        """Q27: the outcome of the oldest request whose prefetches wait for the issue stage."""
        return self._pending_pf[0][2] if self._pending_pf else None

    def flush_prefetch(self, cycle: int | None = None) -> None:
        """Q27: issue the waiting triggers' prefetches, oldest first (with ``cycle``, only those
        issued by the end of ``cycle``: respond cycle + ``prefetchDelay`` <= ``cycle``).  Called by
        ``completion`` and ``inval`` before they act (every waiting trigger), by ``request`` after
        it acts, and by the testbench after each cycle's operations."""
        while self._pending_pf and (cycle is None or
                                    self._pending_pf[0][3] + self.p.prefetchDelay <= cycle):
            pf = self._pending_pf.pop(0)
            self._trigger(pf[0], pf[1], pf[2], None if pf[3] is None else pf[3] + self.p.prefetchDelay)

    def _trigger(self, t: int, pages: list, out: RequestOutcome, issue: int | None = None) -> None:
        for q in pages:
            if q is None:
                continue
            out.candidates.append((t, q))
            if self._pb_lookup(t, q) is not None:
                out.prefetch_drops.append((t, q, "pb"))
            elif self._outstanding_slot(t, q) is not None:
                out.prefetch_drops.append((t, q, "slot"))
            else:
                s = self._alloc_slot(t, q, prefetch=True, cycle=issue)
                if s is None:
                    out.prefetch_drops.append((t, q, "full"))
                    self._count("prefetchDropped")           # Q3
                else:
                    out.ats.append(AtsReq(s.idx, t, q, 1))

    # ------------------------------------------------------------ ats_req
    def pending_ats(self) -> list[AtsReq]:
        """Slots waiting to be sent: the demand queue, then the prefetch queue."""
        return [AtsReq(s.idx, s.sid, s.page, int(s.prefetch))
                for s in list(self.demand_q) + list(self.prefetch_q)]

    def ats_sent(self, tag: int, sid: int, iova: int, prefetch: int) -> AtsReq:
        """An ats_req handshake: must be the head of the demand queue (prefetch = 0) or of the
        prefetch queue (prefetch = 1), with that slot's SID and page."""
        q = self.prefetch_q if prefetch else self.demand_q
        name = "prefetch" if prefetch else "demand"
        if not q:
            raise DevTlbModelError(f"ats_req tag {tag} prefetch={prefetch}: no {name} slot waits "
                                   f"to be sent")
        s = q[0]
        if prefetch and self.demand_q and self.demand_q[0].serial < s.serial:          # Q26
            d = self.demand_q[0]
            raise DevTlbModelError(f"ats_req prefetch slot {s.idx} sent before demand slot {d.idx}, "
                                   f"allocated before it (demand sends go first)")
        exp = AtsReq(s.idx, s.sid, s.page, int(s.prefetch))
        got = AtsReq(tag, sid & self.sid_mask, iova & self.page_mask, int(bool(prefetch)))
        if exp != got:
            raise DevTlbModelError(f"ats_req {got} but the {name} queue's head is {exp}")
        q.popleft()
        s.sent = True
        self._count("prefetches" if prefetch else "atsRequests")       # Q4
        return exp

    # ---------------------------------------------------------- completion
    def completion(self, tag: int, ppn: int, perm_r: int = 1, perm_w: int = 1,
                   pageSize: int = 0, fault: int = 0, cycle: int | None = None) -> CompletionOutcome:
        """An accepted ats_resp (docs "Completions"); ``cycle``: its respond cycle, when the
        caller knows it (the drain's earliest cycle, Q24)."""
        p = self.p
        self.flush_prefetch()                          # Q27: the issue stage acts first
        s = self.slots[tag] if 0 <= tag < p.slots else None
        reason = ("range" if not 0 <= tag < p.slots else "free" if s is None else
                  "completed" if s.completed else "unsent" if not s.sent else None)   # Q2
        if reason is not None:
            self._count("badCompletions")
            return CompletionOutcome(kind="bad_tag", reason=reason, slot=tag)
        out = CompletionOutcome(kind="completed", slot=tag, stale=s.stale)
        if s.stale:
            self._count("staleCompletions")                                 # Q16
        ppn &= self.ppn_mask
        fault = 1 if fault else 0
        if not fault and pageSize == PS_BAD:                               # Q5
            out.bad_size = True
            self._count("badCompletions")
            fault = 1
        if fault:
            t = Translation(fault=1, pageSize=pageSize)
        else:
            low = PAGE_LOW_BITS[pageSize]
            lowmask = (1 << low) - 1
            if ppn & lowmask:
                out.bad_align = True
                self._count("badAlign")
                ppn &= ~lowmask
            t = Translation(fault=0, ppn=ppn + (s.page & lowmask), perm_r=1 if perm_r else 0,
                            perm_w=1 if perm_w else 0, pageSize=pageSize)
        out.translation = t
        s.completed, s.result = True, t
        if cycle is not None:
            s.answer_from = cycle + p.drain_delay
        if not t.fault and not s.stale:
            if t.pageSize == PS_4K:
                e = Entry(s.sid, s.page, 0, t.ppn, t.perm_r, t.perm_w)
            else:                     # 2 MiB, or the 2 MiB piece of a 1 GiB page
                off = s.page & ((1 << REGION_BITS) - 1)
                e = Entry(s.sid, s.page - off, 1, t.ppn - off, t.perm_r, t.perm_w)
            if s.prefetch:
                self._pb_fill(e, out)
                out.cached = "pb"
            else:
                self._devtlb_fill(e, out)
                out.cached = "devtlb"
        out.answerable = [(wi, self._waiter_response(wi)) for wi in s.waiters]
        if not s.waiters:
            self._free_slot(s)
            out.freed = True
        return out

    # --------------------------------------------------------- resp channel
    def answerable(self) -> list[tuple[int, Response]]:
        """Waiters whose slot is completed, lowest number first, with their responses."""
        return [(i, self._waiter_response(i)) for i, wt in enumerate(self.waiters)
                if wt is not None and wt.slot.completed]

    def _take_waiter(self, wi: int, cycle: int | None = None) -> Response:
        r = self._waiter_response(wi)
        wt = self.waiters[wi]
        self.waiters[wi] = None
        wt.slot.waiters.remove(wi)
        if not wt.slot.waiters:
            self._free_slot(wt.slot)
            if cycle is not None:
                self._freed_at[wt.slot.idx] = cycle
        if r.fault:
            self._count("faults")
        return r

    def drain_next(self) -> Response | None:
        """The drain's choice: the lowest-numbered waiter whose slot is completed (taken)."""
        a = self.answerable()
        return self._take_waiter(a[0][0]) if a else None

    def peek_hit(self) -> Response | None:
        return self.hitq[0].resp if self.hitq else None

    def pop_hit(self) -> Response | None:
        """The hit queue's head (source 0/1), taken."""
        if not self.hitq:
            return None
        it = self.hitq.popleft()
        for inv in self.invals:
            inv.hits.discard(it.serial)
        if it.resp.fault:
            self._count("faults")
        return it.resp

    def expect_response(self, tag: int, source: int, cycle: int | None = None) -> Response:
        """The response a resp handshake with this tag and source must carry (taken from the
        model).  Source 0/1: the hit queue's head (FIFO); source 2: the lowest-numbered
        answerable waiter with this tag.  Raises DevTlbModelError when no such response
        exists (a response for a tag not outstanding, an early drain, a hit out of order).
        ``cycle``: the handshake's cycle; a waiter is then answerable only from its slot's
        ``answer_from`` (Q24)."""
        if source in (SRC_DEVTLB, SRC_PB):
            h = self.peek_hit()
            if h is None or h.tag != tag or h.source != source:
                raise DevTlbModelError(f"resp tag {tag} source {source}: the hit queue's head is {h}")
            return self.pop_hit()
        if source == SRC_ATS:
            for wi, r in self.answerable():
                if r.tag == tag:
                    af = self.waiters[wi].slot.answer_from
                    if cycle is not None and af is not None and cycle < af:
                        raise DevTlbModelError(f"resp tag {tag} source 2 in cycle {cycle}: its slot's "
                                               f"waiters are answerable from cycle {af} (Q24)")
                    return self._take_waiter(wi, cycle)
            raise DevTlbModelError(f"resp tag {tag} source 2: no answerable waiter has this tag "
                                   f"(answerable: {[r.tag for _, r in self.answerable()]})")
        raise DevTlbModelError(f"resp tag {tag}: source {source} is not 0, 1 or 2")

    # ----------------------------------------------------------- inval
    def inval(self, kind: int, sid: int = 0, iova: int = 0, sizeLog2: int = 12) -> InvalOutcome:
        """An accepted invalidation (docs "Invalidation"); returns its id for inval_done."""
        if len(self.invals) >= self.p.invalPending:
            raise DevTlbModelError(f"inval accepted with {len(self.invals)} pending "
                                   f"(invalPending {self.p.invalPending}: inval_ready must be low)")
        self.flush_prefetch()                          # Q27 (never pending: the empty pipeline)
        self._count("invalidations")
        sid &= self.sid_mask
        iova &= self.page_mask
        bad = False
        kind &= 3
        if kind == INVAL_RESERVED:
            kind, bad = INVAL_ALL, True
        npages = 0
        if kind == INVAL_RANGE:
            if sizeLog2 < 12:
                sizeLog2, bad = 12, True
            npages = 1 << (sizeLog2 - 12)
            if iova & (npages - 1):
                iova, bad = iova & ~(npages - 1), True
        if bad:
            self._count("badInvals")                                     # Q6
        self._inval_id += 1
        out = InvalOutcome(id=self._inval_id, kind=kind, bad=bad, iova=iova, sizeLog2=sizeLog2)

        def covers(s: int, lo: int, n: int) -> bool:
            if kind == INVAL_ALL:
                return True
            if s != sid:
                return False
            return kind == INVAL_SID or (lo < iova + npages and iova < lo + n)

        for r, ways in enumerate(self.rows):
            for w, e in enumerate(ways):
                if e is not None and covers(e.sid, e.page, e.npages):
                    ways[w] = None
                    out.removed_devtlb += 1
        for i, e in enumerate(self.pb):
            if e is not None and covers(e.sid, e.page, e.npages):
                if not e.used:
                    self._count("prefetchUnused")
                self.pb[i] = None
                out.removed_pb += 1
        stale = set()
        for s in self.slots:
            region = 1 << REGION_BITS                                      # Q1
            if s is not None and covers(s.sid, s.page & ~(region - 1), region):
                s.stale = True
                stale.add(s.serial)
                out.stale_slots.append(s.idx)
        self.invals.append(PendingInval(out.id, kind, stale, {h.serial for h in self.hitq}))
        return out

    def inval_conditions(self, id: int) -> list[str]:
        """What invalidation ``id`` still waits for (empty: conditions 2 and 3 hold, and every
        earlier one is done)."""
        why = []
        for inv in self.invals:
            if inv.id == id:
                if inv.stale_slots:
                    why.append(f"{len(inv.stale_slots)} stale slot(s) not freed")
                if inv.hits:
                    why.append(f"{len(inv.hits)} earlier hit response(s) not sent")
                return why
            why.append(f"earlier invalidation {inv.id} not done")
        raise DevTlbModelError(f"no pending invalidation {id}")

    def inval_done_allowed(self, id: int | None = None) -> bool:
        """Conditions 2-3 of the docs plus order (condition 1 is timing: the testbench adds the
        pipeline delay).  ``id`` None: the oldest pending invalidation."""
        if not self.invals:
            return False
        return not self.inval_conditions(self.invals[0].id if id is None else id)

    def inval_done(self) -> int:
        """An invalDone pulse: the oldest pending invalidation, which must be allowed."""
        if not self.invals:
            raise DevTlbModelError("invalDone pulse with no invalidation pending")
        inv = self.invals[0]
        why = self.inval_conditions(inv.id)
        if why:
            raise DevTlbModelError(f"invalDone for invalidation {inv.id} too early: {'; '.join(why)}")
        self.invals.popleft()
        return inv.id

    # ----------------------------------------------------------- per cycle
    def tick(self, req_valid: bool = False, resp_stall: bool = False, ats_stall: bool = False) -> None:
        """Per-cycle counters from what the testbench sees this cycle: ``req_valid``;
        ``resp_stall`` = resp_valid && !resp_ready; ``ats_stall`` = ats_req_valid &&
        !ats_req_ready (Q15)."""
        if req_valid and self.free_demand_slots() == 0:
            self._count("ptbFullCycles")
        if resp_stall:
            self._count("respStallCycles")
        if ats_stall:
            self._count("atsStallCycles")
