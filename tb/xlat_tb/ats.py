"""An ATS / IOMMU responder for cocotb (the DevTlb's ``ats_req`` / ``ats_resp`` channels,
../shared/spec/devtlb.md "Ports"):

    ats_req  (DUT -> tb, Decoupled): tag, sid, iova (4 KiB page), prefetch
    ats_resp (tb -> DUT, Decoupled): tag, ppn, perm_r, perm_w, pageSize, fault

Why: the DevTlb's misses wait for the IOMMU; the testbench needs an IOMMU that is both correct
(a translation table per SID with 4 KiB / 2 MiB / 1 GiB pages, R/W permissions and faults)
and adversarial (random latency, completions out of order, back-pressure on ``ats_req_ready``,
gaps in ``ats_resp_valid``, injected faults, completions for a tag that is not outstanding,
``pageSize = 3`` and unaligned ``ppn``), with a log of every request and completion for the
scoreboard.  The same pattern as ``xlat_tb.memory.MemoryResponder``, split in two:

* ``AtsTable`` and ``AtsCore``: pure Python (no simulator): the table, the scheduling and
  every random choice, from a caller-given ``random.Random`` (``xlat_tb.seed.rng(name)``), so a
  run is reproducible from its seed and the core is unit-tested without a simulator
  (``tb/xlat_tb/selftest/test_ats_core.py``);
* ``AtsResponder``: the CycleLoop component; it sees the DUT only through an adapter
  (``AtsPorts``, built by the environment from the port names and widths of the manifest),
  so nothing here names a DUT signal.

Protocol rules kept: a presented completion is held unchanged while ``ats_resp_ready`` is low
(never lost, never duplicated); ``ats_req_ready`` is low while ``max_outstanding`` requests are
outstanding or the back-pressure pattern says so; a request whose tag is already outstanding
at the responder is a DUT error (TbError).  Completions of one tag cannot be reordered (a tag
is outstanding once); different tags complete in random order once due (``reorder``).

Translation time: ``translate_at="request"`` (default) reads the table when the request is
accepted, as an IOMMU that walks at once and whose completion is then in flight: a table change
(and its invalidation) after that races the completion, which then carries the old
translation; ``"response"`` reads it when the completion is first presented.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .backpressure import Never
from .cycle import TbError

PS_4K, PS_2M, PS_1G, PS_BAD = 0, 1, 2, 3
PAGE_LOW_BITS = {PS_4K: 0, PS_2M: 9, PS_1G: 18}


class AtsError(TbError):
    """The DUT broke the ATS protocol as the responder sees it."""


# --------------------------------------------------------------------------- table
@dataclass(frozen=True)
class Mapping:
    sid: int
    iova: int           # first 4 KiB page, aligned to the size
    size: int           # PS_4K, PS_2M, PS_1G
    ppn: int            # aligned to the size
    perm_r: int = 1
    perm_w: int = 1

    @property
    def npages(self) -> int:
        return 1 << PAGE_LOW_BITS[self.size]


@dataclass(frozen=True)
class AtsAnswer:
    """What the IOMMU answers for (sid, page): the translated range's start (aligned ppn),
    its size, permissions, or a fault."""
    fault: int
    ppn: int = 0
    pageSize: int = 0
    perm_r: int = 0
    perm_w: int = 0

    def ppn_for(self, page: int) -> int:
        """The 4 KiB frame of ``page`` (the DUT's response ppn for it)."""
        return self.ppn + (page & ((1 << PAGE_LOW_BITS[self.pageSize]) - 1))


class AtsTable:
    """Per-SID translation tables.  A page is translated by the most specific mapping that
    covers it (4 KiB, then 2 MiB, then 1 GiB); an explicit fault (``set_fault``) wins over
    every mapping of its page; an unmapped page is a fault.  ``version`` counts changes (a
    scoreboard can tell which completions were computed before a change).

    The answer's size is the largest one over which the answer is uniform, as an IOMMU
    reports it (docs/devtlb.md "PCIe ATS mapping": a smaller pageSize that lies inside the
    translation): a 2 MiB / 1 GiB mapping with a more specific mapping or a fault somewhere
    inside is answered, for the pages around it, as the largest aligned piece (2 MiB or
    4 KiB) holding the page and nothing more specific."""

    def __init__(self):
        self._maps: dict[tuple, Mapping] = {}     # (sid, size, aligned iova) -> Mapping
        self._faults: set[tuple] = set()          # (sid, page)
        self._sid_items: dict[int, set] = {}      # sid -> {(size, iova)} incl. faults as 4 KiB
        self.version = 0

    def _items(self, sid: int) -> set:
        return self._sid_items.setdefault(sid, set())

    def map(self, sid: int, iova: int, ppn: int, size: int = PS_4K, perm_r: int = 1,
            perm_w: int = 1) -> Mapping:
        if size not in PAGE_LOW_BITS:
            raise ValueError(f"size must be 0 (4 KiB), 1 (2 MiB) or 2 (1 GiB), got {size}")
        low = (1 << PAGE_LOW_BITS[size]) - 1
        if iova & low or ppn & low:
            raise ValueError(f"mapping of size {size} needs iova {iova:#x} and ppn {ppn:#x} "
                             f"aligned to {low + 1} pages")
        m = Mapping(sid, iova, size, ppn, int(bool(perm_r)), int(bool(perm_w)))
        self._maps[(sid, size, iova)] = m
        self._items(sid).add((size, iova))
        self.version += 1
        return m

    def unmap(self, sid: int, iova: int, size: int | None = None) -> list[Mapping]:
        """Remove the mappings of ``sid`` covering page ``iova`` (of one size, or all)."""
        gone = []
        for sz in (PAGE_LOW_BITS if size is None else (size,)):
            base = iova & ~((1 << PAGE_LOW_BITS[sz]) - 1)
            if (sid, sz, base) in self._maps:
                gone.append(self._maps.pop((sid, sz, base)))
                if not (sz == PS_4K and (sid, base) in self._faults):
                    self._items(sid).discard((sz, base))
        self.version += 1
        return gone

    def set_fault(self, sid: int, page: int, on: bool = True) -> None:
        if on:
            self._faults.add((sid, page))
            self._items(sid).add((PS_4K, page))
        else:
            self._faults.discard((sid, page))
            if (sid, PS_4K, page) not in self._maps:
                self._items(sid).discard((PS_4K, page))
        self.version += 1

    def mappings(self, sid: int | None = None) -> list[Mapping]:
        return [m for m in self._maps.values() if sid is None or m.sid == sid]

    def find(self, sid: int, page: int) -> Mapping | None:
        for sz in (PS_4K, PS_2M, PS_1G):
            m = self._maps.get((sid, sz, page & ~((1 << PAGE_LOW_BITS[sz]) - 1)))
            if m is not None:
                return m
        return None

    def translate(self, sid: int, page: int) -> AtsAnswer:
        if (sid, page) in self._faults:
            return AtsAnswer(fault=1)
        m = self.find(sid, page)
        if m is None:
            return AtsAnswer(fault=1)
        size = m.size
        while size > PS_4K:
            low = PAGE_LOW_BITS[size]
            block = page >> low
            # anything more specific than m inside this block makes it non-uniform
            if not any(sz < m.size and (iv >> low) == block for sz, iv in self._items(sid)):
                break
            size -= 1
        low = PAGE_LOW_BITS[size]
        start = page & ~((1 << low) - 1)
        return AtsAnswer(fault=0, ppn=m.ppn + (start - m.iova), pageSize=size, perm_r=m.perm_r,
                         perm_w=m.perm_w)

    def map_random(self, rng: random.Random, sid: int, iova: int, size: int, ppn_bits: int,
                   p_readonly: float = 0.1, p_noaccess: float = 0.0) -> Mapping:
        """Map the ``size`` page holding ``iova`` to a random aligned frame."""
        low = PAGE_LOW_BITS[size]
        base = iova & ~((1 << low) - 1)
        ppn = (rng.getrandbits(max(ppn_bits - low, 0)) << low) & ((1 << ppn_bits) - 1)
        u = rng.random()
        r, w = (0, 0) if u < p_noaccess else (1, 0) if u < p_noaccess + p_readonly else (1, 1)
        return self.map(sid, base, ppn, size, r, w)


# --------------------------------------------------------------------------- core
@dataclass
class AtsRecord:
    """One ATS request and its completion (or one injected completion: ``seq < 0``)."""
    seq: int
    tag: int
    sid: int = 0
    iova: int = 0
    prefetch: int = 0
    req_cycle: int | None = None
    due: int = 0
    answer: AtsAnswer | None = None       # the table's answer (before injection)
    table_version: int | None = None      # table version the answer was read at
    resp: dict | None = None              # the fields presented on ats_resp
    injected: tuple = ()                  # "fault", "pagesize3", "unaligned", "bogus", "override"
    present_cycle: int | None = None
    resp_cycle: int | None = None

    def __repr__(self):
        k = "bogus" if self.seq < 0 else f"sid={self.sid} iova={self.iova:#x} pf={self.prefetch}"
        return (f"<ats #{self.seq} tag={self.tag} {k} req@{self.req_cycle} resp@{self.resp_cycle}"
                f" {self.resp} {'+'.join(self.injected)}>")


class AtsCore:
    """Scheduling and every random choice of the responder, without a simulator.

    latency: (min, max) cycles from request acceptance to the earliest completion cycle.
    max_outstanding: requests accepted and not yet answered (ats_req_ready low when reached).
    req_ready / resp_gaps: back-pressure patterns (xlat_tb.backpressure) for ``ats_req_ready``
    and for gaps between completions on ``ats_resp_valid``.
    reorder: due completions leave in random order (else in request order).
    Injection, each a probability per completion of a request: ``fault_p`` (fault = 1),
    ``pagesize3_p`` (pageSize = 3, fault = 0), ``unaligned_p`` (2 MiB / 1 GiB answers only:
    random low ppn bits set); ``bogus_p`` per cycle without a due completion: a completion for
    a tag that is not outstanding.  ``override(tag, **fields)`` sets fields of the next
    completion of ``tag``; ``inject_bogus(tag=None, ...)`` queues a completion nobody asked for
    (tag None: a random tag not outstanding).  ``bogus_tag_fn(rng, outstanding) -> tag`` lets
    the environment choose bogus tags (e.g. only tags of slots the model knows are free).
    widths: ``tag``/``ppn`` field widths of ats_resp (injected values fit them).
    """

    def __init__(self, table: AtsTable, rng: random.Random, *, tag_bits: int, ppn_bits: int,
                 latency=(1, 20), max_outstanding: int = 64, req_ready=None, resp_gaps=None,
                 reorder: bool = True, fault_p: float = 0.0, pagesize3_p: float = 0.0,
                 unaligned_p: float = 0.0, bogus_p: float = 0.0, bogus_tag_fn=None,
                 translate_at: str = "request"):
        if translate_at not in ("request", "response"):
            raise ValueError(f"translate_at must be 'request' or 'response', got {translate_at!r}")
        lo, hi = latency
        if not 0 <= lo <= hi:
            raise ValueError(f"latency must be (min, max) with 0 <= min <= max, got {latency}")
        self.table, self.rng = table, rng
        self.tag_bits, self.ppn_bits = tag_bits, ppn_bits
        self.latency = (lo, hi)
        self.max_outstanding = max_outstanding
        self.req_pattern = req_ready or Never()
        self.resp_gaps = resp_gaps or Never()
        self.reorder = reorder
        self.fault_p, self.pagesize3_p = fault_p, pagesize3_p
        self.unaligned_p, self.bogus_p = unaligned_p, bogus_p
        self.bogus_tag_fn = bogus_tag_fn
        self.translate_at = translate_at
        self.injections_enabled = True
        self.log: list[AtsRecord] = []
        self._seq = 0
        self.stats = {k: 0 for k in ("requests", "prefetches", "completions", "fault", "pagesize3",
                                     "unaligned", "bogus", "override", "table_faults")}
        self.reset_state()

    def reset_state(self) -> None:
        self.pending: list[AtsRecord] = []     # accepted, not yet presented (request order)
        self.cur: AtsRecord | None = None      # presented, not yet accepted
        self.bogus: list[AtsRecord] = []
        self.overrides: dict[int, dict] = {}

    # -- views
    def outstanding_tags(self) -> set[int]:
        s = {a.tag for a in self.pending}
        if self.cur is not None and self.cur.seq >= 0:
            s.add(self.cur.tag)
        return s

    @property
    def outstanding(self) -> int:
        return len(self.pending) + (1 if self.cur is not None and self.cur.seq >= 0 else 0)

    @property
    def idle(self) -> bool:
        return self.cur is None and not self.pending and not self.bogus

    # -- directed injection
    def override(self, tag: int, **fields) -> None:
        unknown = set(fields) - {"ppn", "perm_r", "perm_w", "pageSize", "fault"}
        if unknown:
            raise KeyError(f"override: no ats_resp field(s) {sorted(unknown)}")
        self.overrides[tag] = dict(fields)

    def inject_bogus(self, tag: int | None = None, ppn: int | None = None, perm_r: int = 1,
                     perm_w: int = 1, pageSize: int = 0, fault: int = 0) -> AtsRecord:
        if tag is None:
            tag = self._bogus_tag()
            if tag is None:
                raise ValueError("inject_bogus: every tag is outstanding")
        if tag in self.outstanding_tags():
            raise ValueError(f"inject_bogus: tag {tag} is outstanding")
        if ppn is None:
            ppn = self.rng.getrandbits(self.ppn_bits)
        r = AtsRecord(seq=-1, tag=tag, injected=("bogus",),
                      resp=dict(tag=tag, ppn=ppn, perm_r=perm_r, perm_w=perm_w, pageSize=pageSize,
                                fault=fault))
        self.bogus.append(r)
        return r

    def _bogus_tag(self) -> int | None:
        out = self.outstanding_tags()
        if self.bogus_tag_fn is not None:
            return self.bogus_tag_fn(self.rng, out)
        free = [t for t in range(1 << self.tag_bits) if t not in out]
        return self.rng.choice(free) if free else None

    # -- request side
    def req_ready(self, cycle: int) -> int:
        """``ats_req_ready`` for this cycle (one pattern draw per call: call once a cycle)."""
        if self.outstanding >= self.max_outstanding:
            return 0
        return 0 if self.req_pattern.idle() else 1

    def accept(self, req: dict, cycle: int) -> AtsRecord:
        tag = req["tag"]
        if tag in self.outstanding_tags():
            raise AtsError(f"ats_req tag {tag} is already outstanding (cycle {cycle}): {req}")
        lo, hi = self.latency
        self._seq += 1
        r = AtsRecord(seq=self._seq - 1, tag=tag, sid=req.get("sid", 0),
                      iova=req.get("iova", 0), prefetch=req.get("prefetch", 0), req_cycle=cycle,
                      due=cycle + self.rng.randint(lo, hi))
        if self.translate_at == "request":
            self._translate(r)
        self.log.append(r)
        self.pending.append(r)
        self.stats["prefetches" if r.prefetch else "requests"] += 1
        return r

    def _translate(self, r: AtsRecord) -> None:
        r.answer = self.table.translate(r.sid, r.iova)
        r.table_version = self.table.version

    # -- response side
    def next_response(self, cycle: int) -> AtsRecord | None:
        """The completion to present this cycle, or None (call only when nothing is presented;
        the returned record is presented until ``responded``)."""
        if self.cur is not None:
            raise RuntimeError("next_response while a completion is presented")
        if self.resp_gaps.idle():
            return None
        if self.bogus:
            r = self.bogus.pop(0)
        else:
            due = [a for a in self.pending if a.due <= cycle]
            if not due:
                if self.injections_enabled and self.bogus_p and self.rng.random() < self.bogus_p:
                    tag = self._bogus_tag()
                    if tag is None:
                        return None
                    self.inject_bogus(tag)
                    r = self.bogus.pop(0)
                else:
                    return None
            else:
                r = self.rng.choice(due) if self.reorder else due[0]
                self.pending.remove(r)
                self._complete(r)
        if "bogus" in r.injected:
            self.stats["bogus"] += 1
        r.present_cycle = cycle
        self.cur = r
        return r

    def _complete(self, r: AtsRecord) -> None:
        if r.answer is None or self.translate_at == "response":
            self._translate(r)
        a = r.answer
        if a.fault:
            self.stats["table_faults"] += 1
        resp = dict(tag=r.tag, ppn=a.ppn, perm_r=a.perm_r, perm_w=a.perm_w, pageSize=a.pageSize,
                    fault=a.fault)
        inj = []
        rng = self.rng
        if self.injections_enabled:
            if self.fault_p and rng.random() < self.fault_p:
                resp["fault"] = 1
                inj.append("fault")
            elif self.pagesize3_p and rng.random() < self.pagesize3_p:
                resp.update(pageSize=PS_BAD, fault=0)
                inj.append("pagesize3")
            elif (self.unaligned_p and not a.fault and a.pageSize in (PS_2M, PS_1G)
                  and rng.random() < self.unaligned_p):
                low = PAGE_LOW_BITS[a.pageSize]
                resp["ppn"] = a.ppn | rng.randrange(1, 1 << min(low, self.ppn_bits))
                inj.append("unaligned")
        if r.tag in self.overrides:
            resp.update(self.overrides.pop(r.tag))
            inj.append("override")
        resp["ppn"] &= (1 << self.ppn_bits) - 1
        for k in inj:
            self.stats[k] += 1
        r.resp, r.injected = resp, tuple(inj)

    def responded(self, cycle: int) -> AtsRecord:
        """The presented completion was accepted (ats_resp handshake)."""
        if self.cur is None:
            raise RuntimeError("responded without a completion presented")
        r, self.cur = self.cur, None
        r.resp_cycle = cycle
        if r.seq < 0:
            self.log.append(r)
        else:
            self.stats["completions"] += 1
        return r


# --------------------------------------------------------------------------- cocotb side
class AtsPorts:
    """The adapter between the responder and a DUT: the only place that knows signal names.

    Any object with these five methods works (the environment may pass its own):
    ``req_valid() -> int``, ``req_fields() -> dict`` (read in ReadOnly during a transfer),
    ``set_req_ready(v)``, ``present(fields_or_None)`` (drive ats_resp valid + bits),
    ``resp_ready() -> int``.
    """

    def __init__(self, dut, *, req: str = "ats_req", resp: str = "ats_resp",
                 req_fields: dict, resp_fields: dict, rng: random.Random | None = None):
        from .drivers import _handle, _Out
        self._valid = _handle(dut, f"{req}_valid")
        self._ready = _Out(_handle(dut, f"{req}_ready"), 1, f"{req}_ready")
        self._req_bits = {f: _handle(dut, f"{req}_bits_{f}") for f in req_fields}
        self._resp_valid = _Out(_handle(dut, f"{resp}_valid"), 1, f"{resp}_valid")
        self._resp_ready = _handle(dut, f"{resp}_ready")
        self._resp_bits = {f: _Out(_handle(dut, f"{resp}_bits_{f}"), w, f"{resp}_bits_{f}")
                           for f, w in resp_fields.items()}
        self._rng = rng or random.Random(0)
        self.names = (req, resp)

    @classmethod
    def from_manifest(cls, dut, manifest, **kw) -> "AtsPorts":
        req, resp = kw.pop("req", "ats_req"), kw.pop("resp", "ats_resp")
        return cls(dut, req=req, resp=resp, req_fields=manifest.channel_fields(req),
                   resp_fields=manifest.channel_fields(resp), **kw)

    def req_valid(self) -> int:
        return int(self._valid.value)

    def req_fields(self) -> dict:
        out = {}
        for f, h in self._req_bits.items():
            try:
                out[f] = int(h.value)
            except ValueError:
                raise AtsError(f"{self.names[0]}_bits_{f} is {h.value} during a request") from None
        return out

    def set_req_ready(self, v: int) -> None:
        self._ready.set(v)

    def present(self, fields: dict | None) -> None:
        if fields is None:
            if self._resp_valid.last != 0:          # garbage on the bits while not valid
                self._resp_valid.set(0)
                for o in self._resp_bits.values():
                    o.set(self._rng.getrandbits(o.width))
            return
        for f, o in self._resp_bits.items():
            o.set(fields.get(f, 0) & ((1 << o.width) - 1))
        self._resp_valid.set(1)

    def resp_ready(self) -> int:
        return int(self._resp_ready.value)


class AtsResponder:
    """CycleLoop component: an ``AtsCore`` on a DUT's ATS channels through ``ports``.

    ``on_request(record, cycle)`` callbacks run at an ats_req handshake, ``on_response(record,
    cycle)`` at an ats_resp handshake (the DUT accepted the completion): the scoreboard feeds
    its model from them (``models.devtlb``: ``ats_sent``, then ``completion``).  In one cycle
    the completion is sampled first, then the request (a request may reuse the tag just
    answered).  ``resp_stall_cycles`` counts cycles with a completion presented and not taken.
    """

    def __init__(self, ports, core: AtsCore, *, name: str = "ats"):
        self.ports, self.core, self.name = ports, core, name
        self.loop = None
        self.on_request = []
        self.on_response = []
        self.ready_now = 0
        self.resp_stall_cycles = 0

    @property
    def log(self) -> list[AtsRecord]:
        return self.core.log

    def reset_state(self) -> None:
        self.core.reset_state()
        self.ready_now = 0

    def _in_reset(self) -> bool:
        return self.loop is not None and self.loop.in_reset

    def drive(self, cycle: int) -> None:
        if self._in_reset():
            self.ready_now = 0
            self.ports.set_req_ready(0)
            self.ports.present(None)
            return
        self.ready_now = self.core.req_ready(cycle)
        self.ports.set_req_ready(self.ready_now)
        if self.core.cur is None:
            r = self.core.next_response(cycle)
            self.ports.present(None if r is None else r.resp)

    def sample(self, cycle: int) -> None:
        if self._in_reset():
            return
        if self.core.cur is not None:
            if self.ports.resp_ready():
                r = self.core.responded(cycle)
                for cb in self.on_response:
                    cb(r, cycle)
            else:
                self.resp_stall_cycles += 1
        if self.ready_now and self.ports.req_valid():
            r = self.core.accept(self.ports.req_fields(), cycle)
            for cb in self.on_request:
                cb(r, cycle)
