"""Reference model of PmlLogger at transaction level (docs/pml-logger.md is the contract).

Why: the order in which the logger's contexts reach the single memory port depends on its
arbitration, which the doc leaves free (round robin, "one write a cycle").  So the model does
not predict *when* each write happens; it is a co-simulation model that knows, at any moment,
which writes the logger *may* issue next (the head event of every context, part by part,
at that buffer's current index) and checks each write the DUT issues against that set:

* ``accept(vmid, gpa, gva, asid)``   an event accepted on ``dirty`` (classified: ignored,
                                      deduped or queued with its PML / guest parts);
* ``csr(addr, write, wdata)``         a register access -> (rdata, error), with the doc's
                                      error rules; writes to CTRL / indexes / ACK re-evaluate
                                      the held parts;
* ``eligible()``                      the writes the DUT may issue now;
* ``write(addr, data, id)``           a write the DUT issued (first presented on mem_req:
                                      a presented request is committed, Decoupled rule): one of ``eligible()``
                                      (so per buffer: acceptance order, address = ADDR + 8 *
                                      INDEX at that moment, data = GPA / sign-extended GVA);
                                      decrements that index;
* ``response(id, error)``             the memory's answer: writeError / logged counters;
* exits and guest interrupts are raised by the model as soon as a head part finds its index
  out of range with STATUS.full (guestFull) clear: ``pending_exits`` / ``pending_irqs`` hold
  the ones the DUT still has to deliver (``take_exit`` / ``take_irq`` consume them).

The model is *eager*: everything that does not need the memory port (raising exits, dropping
parts of disabled buffers, leaving the queue) happens at once, so its queue occupancy is a lower
bound of the DUT's and its STATUS bits lead the DUT's by the DUT's pipeline delay.  Indexes
change only with a write the DUT issues or a CSR write, so they are exact.

Same-cycle inputs (docs/pml-logger.md, "Same-cycle inputs"): the testbench calls, within one
cycle, ``write``, CSR reads, ``take_exit`` / ``take_irq``, ``response``, ``accept``, CSR writes.
A CSR access is called in the cycle it *applies*: the cycle after its ``csr_req`` was accepted
(the DUT's CSR input stage), which is also the cycle of its ``csr_resp``; ``csr()``'s answer is
that response (a read returns the registers at the start of that cycle).
The decided orders that do not follow from that call order are kept here: the dedup entry
filled in the cycle of a PML_INDEX write survives its forget; a writeError set in the cycle of
an ACK survives it (either call order); a raise while an exit of its context is still
offered merges into it, and if that exit is taken within ``merge_slack`` cycles the DUT may
still deliver the re-raise once (``maybe_exits``: the DUT raises up to a few cycles after the
eager model, e.g. never in a CSR-write cycle).

For the unit tests (and as a reference arbiter) ``issue()`` performs one eligible write with a
round robin over contexts, like the RTL's.

Decisions the doc leaves open are model options (``PmlOptions``), reported by the testbench:
* ``noparts``: an event for an enabled context with no part to log (EPML only, ``asid`` !=
  TRACK_ASID): "queue" (enters and leaves the queue, counted nowhere) or "ignored" (counted
  in perf_ignored);
* ``dedup_touch_on_hit``: whether a filter hit makes that entry most recently used.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from .replacement import TreePlru

M64 = (1 << 64) - 1
EXIT_REASON = 62
CONTEXT_STRIDE = 0x80
PML, GUEST = 0, 1
PART_NAMES = ("pml", "guest")
COUNTERS = ("logged", "guestLogged", "exits", "guestIrqs", "stallCycles", "writeErrors",
            "ignored", "deduped", "badCsrs", "badMemResps")
COUNTER_MAX = (1 << 32) - 1

# STATUS / ACK bits
ST_FULL, ST_GUEST_FULL, ST_WRITE_ERROR = 1, 2, 4
# CTRL bits
CTRL_PML, CTRL_EPML = 1, 2


class ModelError(AssertionError):
    """The DUT did something the model does not allow (a scoreboard mismatch)."""


def sign_extend(v: int, nbits: int) -> int:
    """64-bit value whose bits 63..nbits-1 copy bit nbits-1 of ``v``."""
    v &= (1 << nbits) - 1
    if v >> (nbits - 1):
        v |= M64 ^ ((1 << nbits) - 1)
    return v


@dataclass(frozen=True)
class PmlParams:
    contexts: int = 8
    paBits: int = 52
    vaBits: int = 57
    entries: int = 512
    dedupEntries: int = 0
    irqVectorBits: int = 8
    queueDepth: int = 4
    idBits: int = 4
    vmidBits: int = 16
    asidBits: int = 16
    inputStage: bool = True
    formalPorts: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> "PmlParams":
        out = {}
        for k, f in cls.__dataclass_fields__.items():
            if k in d:
                v = d[k]
                if f.type in ("bool", bool):
                    v = v if isinstance(v, bool) else str(v).lower() in ("1", "true", "yes")
                else:
                    v = int(v)
                out[k] = v
        return cls(**out)


@dataclass(frozen=True)
class PmlOptions:
    noparts: str = "ignored"            # "ignored" or "queue"
    dedup_touch_on_hit: bool = True


# ----------------------------------------------------------------------------- registers
def default_registers(p: PmlParams) -> list[dict]:
    """The register table of docs/pml-logger.md (used until the manifest carries its own)."""
    def f(name, lsb, width):
        return {"name": name, "lsb": lsb, "width": width}
    st = [f("full", 0, 1), f("guestFull", 1, 1), f("writeError", 2, 1)]
    return [
        {"name": "CTRL", "offset": 0x00, "access": "rw", "fields": [f("pml", 0, 1), f("epml", 1, 1)]},
        {"name": "PML_ADDR", "offset": 0x08, "access": "rw", "fields": [f("addr", 12, p.paBits - 12)]},
        {"name": "PML_INDEX", "offset": 0x10, "access": "rw", "fields": [f("index", 0, 16)]},
        {"name": "GPML_ADDR", "offset": 0x18, "access": "rw", "fields": [f("addr", 12, p.paBits - 12)]},
        {"name": "GPML_INDEX", "offset": 0x20, "access": "rw", "fields": [f("index", 0, 16)]},
        {"name": "TRACK_ASID", "offset": 0x28, "access": "rw", "fields": [f("asid", 0, p.asidBits)]},
        {"name": "IRQ_VECTOR", "offset": 0x30, "access": "rw",
         "fields": [f("vector", 0, p.irqVectorBits)]},
        {"name": "STATUS", "offset": 0x38, "access": "ro", "fields": st},
        {"name": "ACK", "offset": 0x40, "access": "wo", "fields": st},
    ]


@dataclass(frozen=True)
class Reg:
    name: str
    offset: int
    access: str          # rw / ro / wo
    mask: int


class RegMap:
    """name <-> offset, access and the mask of the implemented bits."""

    EXPECTED = ("CTRL", "PML_ADDR", "PML_INDEX", "GPML_ADDR", "GPML_INDEX", "TRACK_ASID",
                "IRQ_VECTOR", "STATUS", "ACK")

    def __init__(self, regs: list[dict], stride: int = CONTEXT_STRIDE):
        self.stride = stride
        self.by_name: dict[str, Reg] = {}
        self.by_offset: dict[int, Reg] = {}
        for r in regs:
            mask = 0
            for fl in r.get("fields", []):
                mask |= ((1 << int(fl["width"])) - 1) << int(fl["lsb"])
            acc = str(r.get("access", "rw")).lower()
            reg = Reg(r["name"], int(r["offset"]), acc, mask & M64)
            self.by_name[reg.name] = reg
            self.by_offset[reg.offset] = reg
        missing = [n for n in self.EXPECTED if n not in self.by_name]
        if missing:
            raise ValueError(f"register map lacks {missing}")

    def addr(self, ctx: int, name: str) -> int:
        return ctx * self.stride + self.by_name[name].offset

    def off(self, name: str) -> int:
        return self.by_name[name].offset

    def mask(self, name: str) -> int:
        return self.by_name[name].mask


# ----------------------------------------------------------------------------- state
@dataclass
class Event:
    seq: int                      # acceptance number (all events)
    vmid: int
    gpa: int                      # page number
    gva: int                      # page number
    asid: int
    cycle: int = 0
    # part state: None (no such part), "pending", "done" (written), "dropped" (disabled)
    parts: list = field(default_factory=lambda: [None, None])
    elig: list = field(default_factory=lambda: [None, None])   # cycle a part became eligible
    wait_start: int = 0

    def pending(self, part: int) -> bool:
        return self.parts[part] == "pending"

    def __repr__(self):
        return (f"<ev#{self.seq} vmid={self.vmid} gpa={self.gpa:#x} gva={self.gva:#x} "
                f"asid={self.asid} parts={self.parts} @{self.cycle}>")


@dataclass
class Write:
    """A write the DUT issued (and the model matched)."""
    ctx: int
    part: int
    event: Event
    index: int
    addr: int
    data: int
    id: int
    cycle: int
    error: int | None = None      # set at the response
    resp_cycle: int | None = None

    @property
    def buffer(self):
        return (self.ctx, self.part)

    def __repr__(self):
        e = "" if self.error is None else (" ERR" if self.error else " ok")
        return (f"<W ctx{self.ctx}.{PART_NAMES[self.part]} idx={self.index:#x} "
                f"{self.addr:#x} <- {self.data:#x} id={self.id} @{self.cycle}{e}>")


@dataclass
class Exit:
    vmid: int
    kind: int                     # PML (exit) or GUEST (guest interrupt)
    vector: int
    cycle: int
    event: Event | None = None
    merged: int | None = None     # last cycle a re-raise merged into this one


class Context:
    def __init__(self, idx: int, p: PmlParams):
        self.idx = idx
        self.ctrl = 0
        self.addr = [0, 0]            # PML_ADDR, GPML_ADDR (register values)
        self.index = [0, 0]           # PML_INDEX, GPML_INDEX
        self.track_asid = 0
        self.irq_vector = 0
        self.status = 0
        self.queue: deque[Event] = deque()
        self.status_hist: deque = deque([(0, 0)], maxlen=64)   # (cycle, STATUS from then on)
        self.last_full = -(10 ** 9)   # last cycle the queue was full
        self.last_nearly_full = -(10 ** 9)   # last cycle it held queueDepth - 1 or more
        self.last_dedup = -(10 ** 9)  # last cycle an event of this context was deduped
        self.error_cycle = None       # cycle a write error last set STATUS.writeError

    def enabled(self, part: int) -> bool:
        return bool(self.ctrl & (CTRL_PML if part == PML else CTRL_EPML))


class DedupFilter:
    """(vmid, gpa) filter over ``n`` entries, tree-PLRU, fill = first invalid else victim."""

    def __init__(self, n: int, touch_on_hit: bool = True):
        self.n = n
        self.keys: list = [None] * n
        self.plru = TreePlru(n) if n else None
        self.touch_on_hit = touch_on_hit

    def lookup(self, key) -> int | None:
        for i, k in enumerate(self.keys):
            if k == key:
                return i
        return None

    def hit(self, key) -> bool:
        i = self.lookup(key)
        if i is None:
            return False
        if self.touch_on_hit:
            self.plru.touch(i)
        return True

    def insert(self, key) -> int:
        free = [i for i, k in enumerate(self.keys) if k is None]
        way = free[0] if free else self.plru.victim()
        self.keys[way] = key
        self.plru.touch(way)
        return way

    def forget(self, vmid: int, keep: int | None = None):
        """Forget every page of ``vmid`` except the entry ``keep`` (filled in this cycle: a
        fill beats a same-cycle forget, doc "Same-cycle inputs")."""
        self.keys = [None if (k is not None and k[0] == vmid and i != keep) else k
                     for i, k in enumerate(self.keys)]


# ----------------------------------------------------------------------------- model
class PmlModel:
    def __init__(self, params: PmlParams | dict, regs: list[dict] | None = None,
                 options: PmlOptions | None = None, stride: int = CONTEXT_STRIDE):
        self.p = params if isinstance(params, PmlParams) else PmlParams.from_dict(params)
        self.opt = options or PmlOptions()
        self.regs = RegMap(regs if regs is not None else default_registers(self.p), stride)
        self.ctx = [Context(i, self.p) for i in range(self.p.contexts)]
        self.filter = DedupFilter(self.p.dedupEntries, self.opt.dedup_touch_on_hit) \
            if self.p.dedupEntries else None
        self.counters = {c: 0 for c in COUNTERS}
        self.now = 0                         # the testbench sets the cycle
        self.seq = 0
        self.outstanding: dict[int, Write] = {}
        self.writes: list[Write] = []        # every write issued (kept if keep_log)
        self.keep_log = True
        self.exit_log: list[Exit] = []
        self.pending_exits: deque[Exit] = deque()
        self.pending_irqs: deque[Exit] = deque()
        # re-raises merged into an exit taken within merge_slack cycles: the DUT raises up to
        # merge_slack cycles after the eager model, so it may deliver them once more
        self.maybe_exits: list[Exit] = []
        self.merge_slack = 4
        self.on_write = []                   # callbacks(Write) at issue
        self.on_response = []                # callbacks(Write) at response
        self.on_event = []                   # callbacks(Event, kind) at acceptance
        self.on_raise = []                   # callbacks(Exit)
        self.on_settle = []                  # callbacks(ctx) after a context changed
        self.on_drop = []                    # callbacks(Event, part) part dropped (disabled)
        self._rr = 0
        self.accepted = 0
        self._filled = (None, None)          # (cycle, way) of the last dedup-filter fill
        # cycles the DUT may take to see that a PML part became eligible (see write())
        self.pml_first_slack = 2

    # ------------------------------------------------------------------ helpers
    def count(self, name: str, n: int = 1):
        self.counters[name] = min(COUNTER_MAX, self.counters[name] + n)

    def _status(self, c: Context, v: int):
        if v != c.status:
            # (same-cycle changes are all kept: the DUT may show the transient value, e.g.
            # full cleared by an ACK and set again by the waiting part a cycle later)
            c.status = v
            c.status_hist.append((self.now, v))

    def status_values(self, ci: int, t0: int, t1: int) -> set:
        """The STATUS values context ``ci`` had at some cycle in [t0, t1]."""
        out = set()
        prev = None
        for cyc, v in self.ctx[ci].status_hist:
            if cyc <= t0:
                prev = v
            elif cyc <= t1:
                out.add(v)
        if prev is not None:
            out.add(prev)
        return out

    def recently_full(self, ci: int, slack: int) -> bool:
        """The queue of ``ci`` is full or was within the last ``slack`` cycles (with the filter:
        or counts as full for a deduped event of the previous cycle)."""
        if not 0 <= ci < self.p.contexts:
            return False
        c = self.ctx[ci]
        if self.queue_full(ci) or self.now - c.last_full <= slack:
            return True
        # With the filter, an event accepted for a context holds a place of its queue in its
        # decide cycle (the next one) whatever the filter decides (doc "Pipeline timing",
        # `dirty_ready` with the filter, eighth round): an event deduped in the previous cycle
        # makes a queue of queueDepth - 1 events full for one cycle.
        return (self.filter is not None and c.last_dedup == self.now - 1
                and (len(c.queue) >= self.p.queueDepth - 1
                     or self.now - c.last_nearly_full <= slack))

    def buffer_base(self, ctx: int, part: int) -> int:
        return self.ctx[ctx].addr[part] & ~0xFFF & ((1 << self.p.paBits) - 1)

    def entry_addr(self, ctx: int, part: int, index: int) -> int:
        return self.buffer_base(ctx, part) + 8 * index

    def entry_data(self, ev: Event, part: int) -> int:
        if part == PML:
            return (ev.gpa << 12) & M64
        return sign_extend(ev.gva << 12, self.p.vaBits)

    def in_range(self, ctx: int, part: int) -> bool:
        return self.ctx[ctx].index[part] < self.p.entries

    def occupancy(self, ctx: int) -> int:
        return len(self.ctx[ctx].queue) if 0 <= ctx < self.p.contexts else 0

    def queue_full(self, ctx: int) -> bool:
        return self.occupancy(ctx) >= self.p.queueDepth

    def outstanding_for(self, ctx: int, part: int | None = None) -> int:
        return sum(1 for w in self.outstanding.values()
                   if w.ctx == ctx and (part is None or w.part == part))

    def pending_parts(self, ctx: int, part: int) -> int:
        return sum(1 for e in self.ctx[ctx].queue if e.pending(part))

    @property
    def quiet(self) -> bool:
        """No event queued, no write outstanding, nothing to deliver."""
        return (not any(c.queue for c in self.ctx) and not self.outstanding
                and not self.pending_exits and not self.pending_irqs)

    # ------------------------------------------------------------------ events
    def accept(self, vmid: int, gpa: int, gva: int, asid: int) -> tuple[str, Event]:
        """An event accepted on ``dirty``.  Returns (kind, event) with kind in "ignored",
        "deduped", "queued" ("noparts" when it had nothing to log)."""
        ev = Event(self.seq, vmid, gpa, gva, asid, cycle=self.now, wait_start=self.now)
        self.seq += 1
        self.accepted += 1
        kind = self._classify(ev)
        for cb in self.on_event:
            cb(ev, kind)
        return kind, ev

    def _classify(self, ev: Event) -> str:
        p = self.p
        if ev.vmid >= p.contexts or not (self.ctx[ev.vmid].ctrl & (CTRL_PML | CTRL_EPML)):
            self.count("ignored")
            return "ignored"
        c = self.ctx[ev.vmid]
        pml = c.enabled(PML)
        guest = c.enabled(GUEST) and ev.asid == c.track_asid
        if not pml and not guest and self.opt.noparts == "ignored":
            self.count("ignored")          # nothing to log: discarded like a disabled context
            return "ignored"
        if self.filter is not None:
            key = (ev.vmid, ev.gpa)
            if self.filter.hit(key):
                self.count("deduped")
                c.last_dedup = self.now
                return "deduped"
            self._filled = (self.now, self.filter.insert(key))
        if len(c.queue) >= p.queueDepth:
            raise ModelError(f"event {ev} accepted for context {ev.vmid} whose queue holds "
                             f"{len(c.queue)} events (queueDepth {p.queueDepth}): doc: "
                             f"dirty_ready is low when the event's own context queue is full")
        ev.parts[PML] = "pending" if pml else None
        ev.parts[GUEST] = "pending" if guest else None
        if not pml and not guest:           # noparts == "queue": passes through the queue
            c.queue.append(ev)
            self.settle(ev.vmid)
            return "noparts"
        c.queue.append(ev)
        if len(c.queue) >= p.queueDepth:
            c.last_full = self.now
        if len(c.queue) >= p.queueDepth - 1:
            c.last_nearly_full = self.now
        self.settle(ev.vmid)
        return "queued"

    def settle(self, ci: int):
        """Do everything that needs no memory write: drop parts of disabled buffers, raise
        exits / guest interrupts for head parts out of range, pop finished heads."""
        c = self.ctx[ci]
        p = self.p
        while c.queue:
            h = c.queue[0]
            for part in (PML, GUEST):
                if h.pending(part) and not c.enabled(part):
                    h.parts[part] = "dropped"
                    self.count("ignored")
                    for cb in self.on_drop:
                        cb(h, part)
            for part, bit in ((PML, ST_FULL), (GUEST, ST_GUEST_FULL)):
                if not h.pending(part):
                    continue
                if c.index[part] >= p.entries:
                    h.elig[part] = None
                    if not c.status & bit:
                        self._status(c, c.status | bit)
                        self._raise(ci, part, h)
                elif h.elig[part] is None:
                    h.elig[part] = self.now
            if not h.pending(PML) and not h.pending(GUEST):
                if len(c.queue) >= p.queueDepth:
                    c.last_full = self.now
                if len(c.queue) >= p.queueDepth - 1:
                    c.last_nearly_full = self.now
                c.queue.popleft()
                continue
            break
        for cb in self.on_settle:
            cb(ci)

    def _raise(self, ci: int, part: int, h: Event):
        """One pending flag per context and kind: a raise while an exit (guest interrupt) of
        the context is still offered merges into it (delivered once, with the vector of the
        first raise)."""
        pend = self.pending_exits if part == PML else self.pending_irqs
        old = next((x for x in pend if x.vmid == ci), None)
        if old is not None:
            old.merged = self.now
            return
        c = self.ctx[ci]
        x = Exit(ci, part, c.irq_vector if part == GUEST else EXIT_REASON, self.now, h)
        self.exit_log.append(x)
        pend.append(x)
        self.count("exits" if part == PML else "guestIrqs")
        for cb in self.on_raise:
            cb(x)

    # ------------------------------------------------------------------ writes
    def eligible(self) -> list[tuple[int, int, Event, int, int]]:
        """Writes the DUT may issue now: (ctx, part, event, addr, data)."""
        out = []
        for ci, c in enumerate(self.ctx):
            if not c.queue:
                continue
            h = c.queue[0]
            for part in (PML, GUEST):
                if h.pending(part) and c.index[part] < self.p.entries:
                    out.append((ci, part, h, self.entry_addr(ci, part, c.index[part]),
                                self.entry_data(h, part)))
        return out

    def describe_eligible(self) -> str:
        el = self.eligible()
        if not el:
            return "none"
        return "; ".join(f"ctx{c}.{PART_NAMES[p]} ev#{e.seq} {a:#x} <- {d:#x}"
                         for c, p, e, a, d in el)

    def write(self, addr: int, data: int, id: int = 0, wmask: int = 0xFF,
              presented: int | None = None) -> Write:
        """A write the DUT issued at ``self.now``.  ``presented``: the cycle the DUT began
        presenting it (for the "PML part first" rule)."""
        if wmask != 0xFF:
            raise ModelError(f"write {addr:#x} <- {data:#x} with wmask {wmask:#x} "
                             f"(an entry is one full 8-byte word)")
        if len(self.outstanding) >= (1 << self.p.idBits):
            raise ModelError(f"write {addr:#x} issued with {len(self.outstanding)} writes "
                             f"outstanding (2^idBits = {1 << self.p.idBits})")
        if id in self.outstanding:
            raise ModelError(f"write {addr:#x} uses id {id}, which is still outstanding "
                             f"({self.outstanding[id]})")
        el = [e for e in self.eligible() if e[3] == addr]
        if not el:
            raise ModelError(f"write {addr:#x} <- {data:#x} (id {id}) is no write the logger "
                             f"may issue now; eligible: {self.describe_eligible()}")
        if len(el) > 1:          # two buffers at the same address: prefer the matching data
            el = [e for e in el if e[4] == data] or el
        ci, part, ev, _, exp = el[0]
        if data != exp:
            raise ModelError(f"write {addr:#x} (ctx{ci}.{PART_NAMES[part]}, event {ev}): data "
                             f"{data:#x}, expected {exp:#x}")
        c = self.ctx[ci]
        if part == GUEST and ev.pending(PML) and c.index[PML] < self.p.entries:
            since = ev.elig[PML]
            if presented is None or (since is not None and
                                     since + self.pml_first_slack < presented):
                raise ModelError(f"ctx{ci}: guest part of {ev} written while its PML part "
                                 f"could go (eligible since cycle {since}, guest write "
                                 f"presented at {presented}): doc: the PML part first")
        w = Write(ci, part, ev, c.index[part], addr, data, id, self.now)
        ev.parts[part] = "done"
        c.index[part] = (c.index[part] - 1) & 0xFFFF
        self.outstanding[id] = w
        if self.keep_log:
            self.writes.append(w)
        for cb in self.on_write:
            cb(w)
        self.settle(ci)
        return w

    def response(self, id: int, error: int) -> Write | None:
        w = self.outstanding.pop(id, None)
        if w is None:
            self.count("badMemResps")
            return None
        w.error, w.resp_cycle = int(bool(error)), self.now
        if error:
            c = self.ctx[w.ctx]
            c.error_cycle = self.now
            self._status(c, c.status | ST_WRITE_ERROR)
            self.count("writeErrors")
        else:
            self.count("logged" if w.part == PML else "guestLogged")
        for cb in self.on_response:
            cb(w)
        return w

    def issue(self, ctx: int | None = None, id: int | None = None) -> Write | None:
        """Reference arbiter: one eligible write, round robin over contexts (PML part first),
        or of context ``ctx``.  Returns None when nothing may be written."""
        el = self.eligible()
        if ctx is not None:
            el = [e for e in el if e[0] == ctx]
        if not el:
            return None
        n = self.p.contexts
        el.sort(key=lambda e: ((e[0] - self._rr) % n, e[1]))
        ci, part, ev, addr, data = el[0]
        self._rr = (ci + 1) % n
        if id is None:
            id = next(i for i in range(1 << self.p.idBits) if i not in self.outstanding)
        return self.write(addr, data, id, presented=self.now)

    # ------------------------------------------------------------------ exits
    def take_exit(self, vmid: int, reason: int) -> Exit:
        if reason != EXIT_REASON:
            raise ModelError(f"exit for vmid {vmid} with reason {reason} (doc: 62)")
        x = self._take(PML, vmid, None)
        if x is None:
            raise ModelError(f"exit {{vmid {vmid}, reason {reason}}}: the model raised no exit "
                             f"for that context that is not yet delivered (pending: "
                             f"{[x.vmid for x in self.pending_exits]}; STATUS.full of ctx "
                             f"{vmid}: {self._st(vmid, ST_FULL)})")
        return x

    def take_irq(self, vmid: int, vector: int) -> Exit:
        x = self._take(GUEST, vmid, vector)
        if x is None:
            raise ModelError(f"guestIrq {{vmid {vmid}, vector {vector:#x}}}: the model raised "
                             f"no guest interrupt for that context that is not yet delivered "
                             f"(pending: {[x.vmid for x in self.pending_irqs]})")
        return x

    def _take(self, kind: int, vmid: int, vector) -> Exit | None:
        """The DUT delivered an exit (guest interrupt) of ``vmid``: the pending one, else a
        re-raise the model merged into an exit taken just before (see _raise)."""
        def check(x):
            if vector is not None and vector != x.vector:
                raise ModelError(f"guestIrq for vmid {vmid} with vector {vector:#x}, "
                                 f"IRQ_VECTOR was {x.vector:#x} when it was raised")
        pend = self.pending_exits if kind == PML else self.pending_irqs
        for x in pend:
            if x.vmid == vmid:
                check(x)
                pend.remove(x)
                if x.merged is not None and self.now - x.merged <= self.merge_slack:
                    # the DUT raises the merged re-raise up to merge_slack cycles after the
                    # eager model: if that is after this delivery, it is one more exit
                    vec = self.ctx[vmid].irq_vector if kind == GUEST else EXIT_REASON
                    self.maybe_exits.append(Exit(vmid, kind, vec, self.now))
                return x
        for m in self.maybe_exits:
            if m.vmid == vmid and m.kind == kind:
                check(m)
                self.maybe_exits.remove(m)
                self.count("exits" if kind == PML else "guestIrqs")
                return m
        return None

    def _st(self, vmid, bit):
        return int(bool(self.ctx[vmid].status & bit)) if vmid < self.p.contexts else None

    # ------------------------------------------------------------------ CSRs
    def decode(self, addr: int):
        """(ctx, Reg) or None for an address that is no register."""
        if addr % 8:
            return None
        ci, off = divmod(addr, self.regs.stride)
        if ci >= self.p.contexts:
            return None
        reg = self.regs.by_offset.get(off)
        if reg is None:
            return None
        return ci, reg

    def read_reg(self, ci: int, name: str) -> int:
        c = self.ctx[ci]
        v = {"CTRL": c.ctrl, "PML_ADDR": c.addr[PML], "PML_INDEX": c.index[PML],
             "GPML_ADDR": c.addr[GUEST], "GPML_INDEX": c.index[GUEST],
             "TRACK_ASID": c.track_asid, "IRQ_VECTOR": c.irq_vector, "STATUS": c.status,
             "ACK": 0}.get(name, 0)
        reg = self.regs.by_name.get(name)
        return v & reg.mask if reg is not None and name != "ACK" else v

    def csr(self, addr: int, write: int, wdata: int = 0) -> tuple[int, int]:
        """A register access accepted at ``self.now``: (rdata, error).  A read returns the
        value before anything of this cycle changed it (reads are processed first)."""
        d = self.decode(addr)
        if d is None:
            self.count("badCsrs")
            return 0, 1
        ci, reg = d
        if not write:
            if reg.access == "wo":
                return 0, 0
            return self.read_reg(ci, reg.name), 0
        if reg.access == "ro":
            self.count("badCsrs")
            return 0, 1
        c = self.ctx[ci]
        v = wdata & reg.mask
        n = reg.name
        if n == "CTRL":
            c.ctrl = v
        elif n == "PML_ADDR":
            c.addr[PML] = v
        elif n == "GPML_ADDR":
            c.addr[GUEST] = v
        elif n == "PML_INDEX":
            c.index[PML] = v
            if self.filter is not None:
                # the event accepted in this cycle (accept() comes first) looked the filter
                # up before the forget, and its new entry survives it
                cyc, way = self._filled
                self.filter.forget(ci, keep=way if cyc == self.now else None)
        elif n == "GPML_INDEX":
            c.index[GUEST] = v
        elif n == "TRACK_ASID":
            c.track_asid = v
        elif n == "IRQ_VECTOR":
            c.irq_vector = v
        elif n == "ACK":
            clear = wdata & (ST_FULL | ST_GUEST_FULL | ST_WRITE_ERROR)
            if c.error_cycle == self.now:
                clear &= ~ST_WRITE_ERROR     # an error of this very cycle is not lost
            self._status(c, c.status & ~clear)
        self.settle(ci)               # the held parts may change state
        return 0, 0

    # ------------------------------------------------------------------ convenience
    def configure(self, ci: int, *, ctrl: int | None = None, pml_addr: int | None = None,
                  pml_index: int | None = None, gpml_addr: int | None = None,
                  gpml_index: int | None = None, track_asid: int | None = None,
                  irq_vector: int | None = None):
        """CSR writes for a context (unit tests)."""
        for name, v in (("PML_ADDR", pml_addr), ("PML_INDEX", pml_index),
                        ("GPML_ADDR", gpml_addr), ("GPML_INDEX", gpml_index),
                        ("TRACK_ASID", track_asid), ("IRQ_VECTOR", irq_vector),
                        ("CTRL", ctrl)):
            if v is not None:
                rd, err = self.csr(self.regs.addr(ci, name), 1, v)
                assert not err

    def buffer_log(self, ci: int, part: int) -> list[Write]:
        return [w for w in self.writes if w.ctx == ci and w.part == part]
