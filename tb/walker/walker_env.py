"""NestedWalker cocotb environment: request / flush sources, response and dirty monitors with
back-pressure, the memory responder (xlat_tb.memory), and a scoreboard against the one-walk
reference model (models.walker) -- docs/nested-walker.md is the contract.

Per walk (request accepted -> response), the scoreboard checks:

* exactly one response per accepted request, with the id of a walk in flight; an id is never
  accepted while a walk with that id is in flight (doc: req_ready held);
* every memory access carries the id of a walk in flight, at most one outstanding per walk,
  8-byte aligned, reads with wmask 0; ``memReads`` / ``memWrites`` equal the accesses the
  memory log attributes to the walk;
* every response field against the model run on the memory as it was when the walk was
  accepted (a snapshot: ``SparseMemory.view_at``):
  - ``exact`` configurations (no caches, one walker: the baseline) -- the access list must equal
    the model's access for access (addresses, write data, masks), and the counts too;
  - cached configurations -- every read address is one the cache-less walk reads, counts are at
    most the model's, the translation / fault fields are equal;
  - a walk the memory answered with a bus error ends with fault 3, at the stage / level / GPA
    of that access (exact: the model rerun with that access failing; cached: one of the
    roles that address has in the cache-less walk), and it was the walk's last access;
* every write: never clears an A/D bit the memory holds (no lost update between two walks);
  preceded in the walk by a read of the same address whose data lacked a bit the
  walk needs, ``wdata`` = that data with the A/D bits the model would set, ``wmask`` = the byte
  holding A/D; after a walk ends (not by a bus error) in hardware mode, every leaf on its path
  has the bits it needed in memory;
* dirty events: every write that takes a host leaf's D from 0 to 1 (seen in the memory log)
  has exactly one dirty event with the walk's gva/vmid/asid, the GPA page the leaf translated
  and pageTable, sent before the walk's next access or response; no other dirty events.

Walks accepted while the tables were being changed (``tables_changed``) up to the next flush
are "stale": only the protocol and the counts are checked for them (a walk accepted in the
flush's cycle is after the flush: checked in full).  A request is never accepted in the cycle
its id's previous walk answers; ``perf_idStalls`` is counted the same way.
At the end ``finish()`` drains and compares the perf_* counters with what was counted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import cocotb
from cocotb.clock import Clock

from models.privcheck import FLAGS as PRIV_FLAGS
from models.ptformats import fmt
from models.walker import RESP_FIELDS, WalkRequest, WalkerConfig, walk
from xlat_tb.backpressure import Never
from xlat_tb.coverage import Coverage
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.manifest import load_manifest
from xlat_tb.memory import MemoryResponder
from xlat_tb.monitors import DecoupledMonitor

REQ_FIELDS = ("id", "gva", "asid", "vmid", "gRoot", "hRoot", "cmd", "user", "mode") + \
    tuple(f"flags_{f}" for f in PRIV_FLAGS)
DIRTY_FIELDS = ("gpa", "gva", "vmid", "asid", "pageTable")
FLUSH_FIELDS = ("kind", "vmid", "asid")
COUNTERS = ("walks", "memReads", "memWrites", "guestPwcHits", "hostPwcHits", "nestedTlbHits",
            "faults", "busErrors", "dirtyEvents", "hugeGuest", "hugeAligned", "splintered",
            "flushes", "badFlushes", "badMemResps", "idStalls", "badModes")
TRANSLATION = ("fault", "faultLevel", "faultStage", "faultGpa", "ppn", "pageSize",
               "guestPageSize", "hostPageSize", "perm_r", "perm_w", "perm_x", "perm_u")


def _fmt(d: dict) -> str:
    return "{" + ", ".join(f"{k}={v:#x}" if isinstance(v, int) and v > 9 else f"{k}={v}"
                           for k, v in d.items() if not k.startswith("_")) + "}"


@dataclass
class Walk:
    req: dict
    cycle: int
    seq: int                          # memory journal position at acceptance
    stale: bool = False
    acc: list = field(default_factory=list)       # MemAccess of this walk, request order
    res0: object = None                            # model result at acceptance (no errors)
    first_seq: int | None = None
    pending_dirty: list = field(default_factory=list)
    resp: dict | None = None
    resp_cycle: int | None = None
    expected: object = None                        # final model result used for the check

    @property
    def id(self):
        return self.req["id"]


class WalkerEnv:
    def __init__(self, dut, *, rng, name="test", mem=None, latency=(1, 6),
                 max_outstanding=16, req_gaps=None, resp_ready=None, dirty_ready=None,
                 mem_req_ready=None, flush_gaps=None, reorder=True):
        self.dut, self.rng, self.name = dut, rng, name
        self.man = load_manifest(os.environ["XLAT_MANIFEST"])
        self.axi = self.man.raw.get("axi")      # an AXI top (xlat_tb.axi): the block inside
        if self.axi:
            from xlat_tb.axi import inner_view
            self.man = inner_view(self.man)
        self.config = self.man.config
        self.p = dict(self.man.params)
        self.cfg = WalkerConfig.from_params(self.p)
        self.G, self.H = fmt(self.cfg.guest), fmt(self.cfg.host)
        self.hw = self.cfg.adUpdate == "hardware"
        self.cached = any(int(self.p.get(k, 0)) for k in ("guestPwcEntries", "hostPwcEntries",
                                                            "nestedTlbEntries"))
        self.walkers = int(self.p.get("walkers", 1))
        self.exact = not self.cached and self.walkers == 1
        self.w = {n: p.width for n, p in self.man.ports.items()}
        self.id_count = 1 << self.w["req_bits_id"]
        self._check_ports()
        self.log = dut._log

        self.loop = CycleLoop(dut.clock, dut.reset)
        self.req = self.loop.add(DecoupledSource(dut, "req", self.man.channel_fields("req"),
                                                 rng=rng, gaps=req_gaps or Never()))
        self.flush = self.loop.add(DecoupledSource(dut, "flush",
                                                   self.man.channel_fields("flush"), rng=rng,
                                                   gaps=flush_gaps or Never()))
        self.resp_ready = self.loop.add(ReadyDriver(dut, "resp", pattern=resp_ready or Never()))
        self.dirty_ready = self.loop.add(ReadyDriver(dut, "dirty",
                                                     pattern=dirty_ready or Never()))
        from models.walker import SparseMemory
        self.memory = mem if mem is not None else SparseMemory()
        if self.axi:        # the memory behind m_axi, the counters behind s_axil
            from xlat_tb.axi import AxiMemPort, counter_regs, inner
            self.mem = self.loop.add(AxiMemPort(
                dut, inner(dut, self.man), mem=self.memory, rng=rng,
                fields_req=self.man.channel_fields("mem_req"), latency=latency, max_per_id=1))
            self.counter_regs = counter_regs(dut, self.man, rng)
        else:
            self.mem = self.loop.add(MemoryResponder(
                dut, mem=self.memory, rng=rng, fields_req=self.man.channel_fields("mem_req"),
                fields_resp=self.man.channel_fields("mem_resp"), latency=latency,
                max_outstanding=max_outstanding, req_ready=mem_req_ready or Never(),
                reorder=reorder, max_per_id=1))
        self.resp_mon = self.loop.add(DecoupledMonitor(dut, "resp",
                                                       self.man.channel_fields("resp")))
        self.dirty_mon = self.loop.add(DecoupledMonitor(dut, "dirty", DIRTY_FIELDS))
        self._mreq, self._mresp = [], []
        self.mem.on_request.append(lambda a, c: self._mreq.append(a))
        self.mem.on_response.append(lambda a, c: self._mresp.append(a))
        self.loop.post_sample.append(self._on_cycle)

        self.inflight: dict[int, Walk] = {}
        self.max_inflight = 0               # most walks in flight at once (accepted, unanswered)
        self.done: list[Walk] = []
        self.stale_mode = False
        self.pending_dirty: list = []       # (walk, MemAccess, candidates) awaiting an event
        self.counts = {c: 0 for c in COUNTERS}
        self.on_response = []               # hooks(walk) after a checked response
        self.keep_done = True
        self.errors_seen = 0
        self.cov = Coverage(f"{self.config}/{name}")
        self.cov.declare("walk.ok", "fault.guest", "fault.host", "fault.reserved",
                         "fault.address", "size.guest.4K", required=False, why="per test")

    # ------------------------------------------------------------------ set-up
    def _check_ports(self):
        need = [f"req_bits_{f}" for f in REQ_FIELDS] + \
               [f"resp_bits_{f}" for f in ("id",) + RESP_FIELDS] + \
               [f"dirty_bits_{f}" for f in DIRTY_FIELDS] + \
               [f"flush_bits_{f}" for f in FLUSH_FIELDS] + \
               [f"mem_req_bits_{f}" for f in ("id", "addr", "write", "wdata", "wmask")] + \
               [f"mem_resp_bits_{f}" for f in ("id", "rdata", "error")] + \
               [f"perf_{c}" for c in COUNTERS]
        missing = [n for n in need if not self.man.has(n)]
        if missing:
            raise TbError(f"{self.config}: manifest lacks ports {missing}")
        g, pa, idb = self.cfg.gpaBits, self.cfg.paBits, int(self.p["idBits"])
        # the guest root: a GPA, or an HPA in stage-1-only mode as far as the guest's PPN field
        # names one (x86 51:12, RISC-V 55:12)
        root = max(g, min(pa, 52 if self.G.family == "x86" else 56))
        exp = {"req_bits_gRoot": root - 12, "req_bits_mode": 2, "req_bits_hRoot": pa - 12, "resp_bits_ppn": pa - 12,
               "mem_req_bits_addr": pa, "dirty_bits_gpa": g - 12, "dirty_bits_gva": 52,
               "req_bits_id": idb, "resp_bits_id": idb, "mem_req_bits_id": idb,
               "mem_resp_bits_id": idb, "req_bits_gva": 64, "resp_bits_faultGpa": 64,
               "resp_bits_fault": 3, "resp_bits_faultLevel": 3, "resp_bits_memReads": 8,
               "req_bits_asid": int(self.p["asidBits"]), "req_bits_vmid": int(self.p["vmidBits"]),
               "flush_bits_kind": 2, "resp_bits_pageSize": 2}
        bad = {k: (self.w[k], v) for k, v in exp.items() if self.w[k] != v}
        if bad:
            raise TbError(f"{self.config}: port widths differ from the doc (have, doc): {bad}")

    def start(self):
        Clock(self.dut.clock, 10, unit="ns").start()
        self.loop.start()
        return self

    async def reset(self, cycles: int = 4):
        self.inflight.clear()
        await self.loop.reset(cycles)
        got = self.read_counters()
        nz = {k: v for k, v in got.items() if v}
        if nz:
            raise TbError(f"counters not 0 after reset: {nz}")

    # ------------------------------------------------------------------ errors
    def _err(self, msg: str, walk: Walk | None = None):
        extra = ""
        if walk is not None:
            extra = "\n  request: " + _fmt(walk.req)
            extra += f" accepted in cycle {walk.cycle}"
            extra += "\n  memory accesses of the walk:\n    " + "\n    ".join(
                repr(a) for a in walk.acc[-40:])
            if walk.expected is not None:
                extra += "\n  model accesses:\n    " + "\n    ".join(
                    f"{a.kind} {a.addr:#x} st{a.stage} l{a.level} gpa={a.gpa:#x}"
                    + (f" w={a.wdata:#x}/{a.wmask:#x}" if a.kind == "write" else "")
                    for a in walk.expected.accesses[-40:])
                extra += f"\n  model: {_fmt(walk.expected.resp)} ({walk.expected.fault_reason})"
        raise TbError(f"[{self.config} cycle {self.loop.cycle}] {msg}{extra}")

    # ------------------------------------------------------------------ model
    def model(self, w: Walk, fail=None, seq=None):
        view = self.memory.view_at(w.seq if seq is None else seq)
        r = dict(w.req)
        return walk(view, self.cfg, WalkRequest(**{k: r[k] for k in REQ_FIELDS}), fail=fail)

    def res0(self, w: Walk):
        if w.res0 is None:
            w.res0 = self.model(w)
        return w.res0

    def _needs(self, w: Walk) -> dict:
        """addr -> set of A/D masks some leaf read at addr needs in this walk."""
        res = self.res0(w)
        out = {}
        cmd = w.req["cmd"]
        for a in res.accesses:
            if a.kind != "read" or not a.leaf:
                continue
            F = self.G if a.stage == 0 else self.H
            write = (a.role == "host_pt" and self.hw) or (a.role != "host_pt" and cmd == 1)
            out.setdefault(a.addr, set()).add(F.a_mask | (F.d_mask if write else 0))
        return out

    # ------------------------------------------------------------------ per cycle
    def _on_cycle(self, cycle: int):
        if self.loop.in_reset:
            self._mreq.clear()
            self._mresp.clear()
            return
        if self.mem.cur is not None and self.mem.resp_valid.last and \
                not int(self.dut.mem_resp_ready.value):
            self._err("mem_resp_ready low (doc: mem_resp_ready is always 1)")
        if not int(self.dut.flush_ready.value):
            self._err("flush_ready low (doc: flush is always ready)")
        busy = set(self.inflight)       # ids in flight at the start of the cycle
        # 1. responses end walks
        item = self.resp_mon.item
        if item is not None:
            self._on_resp(item, cycle)
        # 2. memory responses (writes applied now: D 0 -> 1 obligations)
        for a in self._mresp:
            self._on_mem_resp(a, cycle)
        self._mresp.clear()
        # 3. dirty events
        d = self.dirty_mon.item
        if d is not None:
            self._on_dirty(d, cycle)
        # 4. memory requests
        for a in self._mreq:
            self._on_mem_req(a, cycle)
        self._mreq.clear()
        # 5. flushes, then new walks (doc, same-cycle inputs: a walk accepted in the cycle of
        # a flush is after it; an id is in flight up to the cycle of its response)
        f = self.flush.accepted
        if f is not None:
            self._on_flush(f, cycle)
        t = self.req.accepted
        if t is not None:
            if t["id"] in busy:
                self._err(f"request with id {t['id']} accepted in the cycle its previous walk "
                          f"answered (doc: the id is free from the next cycle)")
            self._on_req(t, cycle)
        elif self.req.valid_now and self.req.cur is not None and self.req.cur["id"] in busy:
            self.counts["idStalls"] += 1

    def _on_req(self, t: dict, cycle: int):
        i = t["id"]
        if i in self.inflight:
            self._err(f"request with id {i} accepted while walk {i} is in flight "
                      f"(doc: req_ready held until that walk answers)", self.inflight[i])
        w = Walk(req={k: t.get(k, 0) for k in REQ_FIELDS}, cycle=cycle, seq=self.memory.seq,
                 stale=self.stale_mode or bool(t.get("_stale")))
        w.txn = t
        if w.req["mode"] == 0:
            self.counts["badModes"] += 1       # bare: bad input, fault 4 (checked by the model)
        self.inflight[i] = w
        self.max_inflight = max(self.max_inflight, len(self.inflight))

    def _on_mem_req(self, a, cycle: int):
        w = self.inflight.get(a.id)
        if w is None:
            self._err(f"memory access {a} with id {a.id}: no walk with that id in flight")
        if w.pending_dirty:
            self._err(f"walk {a.id} issued {a} before its dirty event (doc: the walk waits for "
                      f"dirty_ready)", w)
        if w.acc and w.acc[-1].error:
            self._err(f"walk {a.id} went on after a bus error ({w.acc[-1]})", w)
        if w.first_seq is None:
            w.first_seq = self.memory.seq
        w.acc.append(a)

    def _on_mem_resp(self, a, cycle: int):
        if not a.write or a.error:
            return
        w = self.inflight.get(a.id)
        if w is None:
            return
        H = self.H
        new = (a.old & ~self._bytes(a.wmask)) | (a.wdata & self._bytes(a.wmask))
        # host leaf D 0 -> 1?  (only host leaves are written with the host A/D byte)
        res = self.res0(w)
        if not w.stale:
            # no lost update (doc: one A/D update of an entry at a time): the write never clears an
            # A/D bit the memory holds, as it would if another walk set it after this one's re-read
            F = self.G if any(x.addr == a.addr and x.stage == 0 for x in res.accesses) else H
            lost = a.old & ~new & (F.a_mask | F.d_mask)
            if lost:
                self._err(f"walk {w.id}: write {a} clears A/D bits {lost:#x} of {a.old:#x} (another walk "
                          f"set them after this walk's locked re-read: an update was lost)", w)
        host_roles = [x for x in res.accesses if x.addr == a.addr and x.stage == 1 and x.leaf]
        if w.stale and not host_roles:
            return
        if host_roles and not (a.old & H.d_mask) and (new & H.d_mask):
            cands = {(x.gpa >> 12, int(x.role == "host_pt")) for x in host_roles}
            ob = (w, a, cands)
            w.pending_dirty.append(ob)
            self.pending_dirty.append(ob)

    @staticmethod
    def _bytes(wmask: int) -> int:
        m = 0
        for i in range(8):
            if (wmask >> i) & 1:
                m |= 0xFF << (8 * i)
        return m

    def _on_dirty(self, d: dict, cycle: int):
        self.counts["dirtyEvents"] += 1
        for ob in self.pending_dirty:
            w, a, cands = ob
            if (d["gpa"], d["pageTable"]) in cands and d["vmid"] == w.req["vmid"] and \
                    d["asid"] == w.req["asid"] and d["gva"] == (w.req["gva"] >> 12) & ((1 << 52) - 1):
                self.pending_dirty.remove(ob)
                w.pending_dirty.remove(ob)
                self.cov.hit("dirty.pageTable" if d["pageTable"] else "dirty.data")
                return
        pend = "\n    ".join(f"walk {w.id} {a} candidates {sorted(c)}"
                             for w, a, c in self.pending_dirty) or "none"
        self._err(f"dirty event {_fmt(d)} matches no host-leaf D 0->1 write awaiting its "
                  f"event; awaiting:\n    {pend}")

    def _on_flush(self, f: dict, cycle: int):
        self.counts["flushes"] += 1
        if f["kind"] == 3:
            self.counts["badFlushes"] += 1
        self.cov.hit(f"flush.kind{f['kind']}")
        if self.stale_mode and f.get("_ends_stale", True):
            self.stale_mode = False

    def tables_changed(self):
        """The test changed page tables: every walk in flight, and every walk accepted until
        the next flush, is stale (its result is not checked)."""
        self.stale_mode = True
        for w in self.inflight.values():
            w.stale = True

    # ------------------------------------------------------------------ response check
    def _on_resp(self, item: dict, cycle: int):
        i = item["id"]
        w = self.inflight.pop(i, None)
        if w is None:
            self._err(f"response {_fmt(item)} for id {i}: no walk with that id in flight")
        w.resp = item
        w.resp_cycle = cycle
        if w.pending_dirty:
            self._err(f"walk {i} answered before its dirty event", w)
        self.counts["walks"] += 1
        if item["fault"]:
            self.counts["faults"] += 1
        reads = sum(1 for a in w.acc if not a.write)
        writes = len(w.acc) - reads
        if (item["memReads"], item["memWrites"]) != (reads, writes):
            self._err(f"walk {i}: memReads/memWrites {item['memReads']}/{item['memWrites']} but "
                      f"the memory saw {reads} reads / {writes} writes with id {i}", w)
        if w.acc and any(a.resp_cycle is None for a in w.acc):
            self._err(f"walk {i} answered with an access still outstanding", w)
        bus = bool(w.acc) and w.acc[-1].error
        if bus:
            self.counts["busErrors"] += 1
        if item["fault"] == 0 and item["guestPageSize"]:
            # counted from the response (checked against the model below, unless stale)
            self.counts["hugeGuest"] += 1
            if item["hostPageSize"] >= item["guestPageSize"]:
                self.counts["hugeAligned"] += 1
            else:
                self.counts["splintered"] += 1
        if w.stale:
            self.cov.hit("walk.stale")
            self._done(w)
            return
        res0 = self.res0(w)
        if bus:
            self._check_bus_error(w, item, res0)
        else:
            w.expected = res0
            if self.exact:
                exp = self.model(w, seq=w.first_seq)
                w.expected = exp
                self._compare_accesses(w, exp)
            self._compare(w, item, w.expected)
            self._check_counts_bound(w, item, res0)
        self._check_writes(w)
        if self.hw and not bus:
            self._check_ad_visible(w, w.expected)
        self._coverage(w, item)
        self._done(w)

    def _done(self, w: Walk):
        if self.keep_done:
            self.done.append(w)
        for h in self.on_response:
            h(w)

    def _compare(self, w: Walk, got: dict, exp):
        e = exp.resp
        diff = {f: (got[f], e[f]) for f in TRANSLATION if got[f] != e[f]}
        if diff:
            desc = ", ".join(f"{f}: dut={a:#x} model={b:#x}" for f, (a, b) in diff.items())
            self._err(f"walk {w.id} response mismatch: {desc}\n  dut {_fmt(got)}", w)

    def _compare_accesses(self, w: Walk, exp):
        dut = [(a.addr, a.write, a.wdata if a.write else 0, a.wmask) for a in w.acc]
        mod = [(a.addr, int(a.kind == "write"), a.wdata if a.kind == "write" else 0, a.wmask)
               for a in exp.accesses]
        if dut != mod:
            k = next((n for n, (x, y) in enumerate(zip(dut, mod)) if x != y),
                     min(len(dut), len(mod)))
            self._err(f"walk {w.id}: access sequence differs from the cache-less model at "
                      f"access #{k} (dut {len(dut)} accesses, model {len(mod)})", w)
        e = exp.resp
        if (e["memReads"], e["memWrites"]) != (w.resp["memReads"], w.resp["memWrites"]):
            self._err(f"walk {w.id}: memReads/memWrites {w.resp['memReads']}/"
                      f"{w.resp['memWrites']}, model {e['memReads']}/{e['memWrites']}", w)

    def _check_counts_bound(self, w: Walk, got: dict, res0):
        allowed = res0.read_addrs()
        for a in w.acc:
            if not a.write and a.addr not in allowed:
                self._err(f"walk {w.id} read {a.addr:#x}, which the cache-less walk never "
                          f"reads", w)
        e = res0.resp
        if got["memReads"] > e["memReads"] or got["memWrites"] > e["memWrites"]:
            self._err(f"walk {w.id}: memReads/memWrites {got['memReads']}/{got['memWrites']} "
                      f"exceed the cache-less walk's {e['memReads']}/{e['memWrites']}", w)

    def _check_bus_error(self, w: Walk, got: dict, res0):
        last = w.acc[-1]
        if got["fault"] != 3:
            self._err(f"walk {w.id}: the memory answered {last} with error but the response "
                      f"has fault {got['fault']} (doc: fault 3)", w)
        if self.exact:
            n = len(w.acc) - 1
            exp = self.model(w, fail=lambda i, a: i == n, seq=w.first_seq)
            w.expected = exp
            self._compare_accesses(w, exp)
            self._compare(w, got, exp)
        else:
            kind_ok = [(s, l, g) for s, l, g in res0.candidates(last.addr)]
            have = (got["faultStage"], got["faultLevel"], got["faultGpa"])
            if have not in kind_ok:
                self._err(f"walk {w.id}: bus error on {last.addr:#x}: response stage/level/gpa "
                          f"{have} is none of the roles of that address in the walk "
                          f"{kind_ok}", w)
            zero = {f: got[f] for f in ("ppn", "pageSize", "guestPageSize", "hostPageSize",
                                         "perm_r", "perm_w", "perm_x", "perm_u") if got[f]}
            if zero:
                self._err(f"walk {w.id}: fault response carries a translation {zero}", w)
        self.cov.hit(f"bus.stage{got['faultStage']}")
        self.cov.hit("bus.write" if last.write else "bus.read")

    def _check_writes(self, w: Walk):
        if w.stale:
            return
        needs = self._needs(w)
        for k, a in enumerate(w.acc):
            if not a.write:
                continue
            F = self.G if any(x.addr == a.addr and x.stage == 0 for x in self.res0(w).accesses) \
                else self.H
            prev = [p for p in w.acc[:k] if not p.write and p.addr == a.addr]
            if not prev:
                self._err(f"walk {w.id}: write {a} without a read of that word before it", w)
            rd = prev[-1].rdata
            if a.addr not in needs:
                self._err(f"walk {w.id}: write {a} to a word that is no leaf of the walk", w)
            if a.wmask != F.ad_wmask:
                self._err(f"walk {w.id}: write {a} wmask {a.wmask:#x}, doc: only the A/D byte "
                          f"({F.ad_wmask:#x})", w)
            okdata = {rd | n for n in needs[a.addr]}
            if a.wdata not in okdata or a.wdata == rd:
                self._err(f"walk {w.id}: write {a}: wdata should be the re-read value {rd:#x} "
                          f"with the A/D bits set ({', '.join(hex(x) for x in okdata)})", w)
            self.cov.hit("ad.write.guest" if F is self.G else "ad.write.host")

    def _check_ad_visible(self, w: Walk, exp):
        """Hardware mode: every leaf the walk passed (not the one it faulted at) now has in
        memory the A/D bits that access needed (set by this walk or an earlier one)."""
        if w.stale or exp is None:
            return
        cmd = w.req["cmd"]
        last = exp.accesses[-1] if exp.accesses else None
        for a in exp.accesses:
            if a.kind != "read" or not a.leaf:
                continue
            if exp.resp["fault"] and a is last:
                continue                      # faulted at this leaf: before A/D (doc order)
            F = self.G if a.stage == 0 else self.H
            write = (a.role == "host_pt" and self.hw) or (a.role != "host_pt" and cmd == 1)
            need = F.a_mask | (F.d_mask if write else 0)
            cur = self.memory.read(a.addr)
            if cur & need != need:
                self._err(f"walk {w.id}: the leaf at {a.addr:#x} (stage {a.stage}, level "
                          f"{a.level}) lacks A/D bits {need:#x} in memory after the walk "
                          f"({cur:#x})", w)

    def _coverage(self, w: Walk, got: dict):
        c = self.cov
        f = got["fault"]
        names = {0: "walk.ok", 1: "fault.guest", 2: "fault.host", 3: "fault.bus",
                 4: "fault.reserved", 5: "fault.address"}
        c.hit(names[f])
        if f:
            c.hit(f"fault{f}.stage{got['faultStage']}.level{got['faultLevel']}")
        else:
            c.hit(f"size.guest.{got['guestPageSize']}.host.{got['hostPageSize']}")
        c.hit(f"cmd{w.req['cmd']}")
        c.hit(f"mode{w.req['mode']}")
        if got["memWrites"]:
            c.hit("walk.with_writes")

    # ------------------------------------------------------------------ API
    def send(self, req: WalkRequest | dict, **over) -> dict:
        d = req.fields() if isinstance(req, WalkRequest) else dict(req)
        d.update(over)
        return self.req.send(d)

    def send_flush(self, kind: int, vmid: int = 0, asid: int = 0) -> dict:
        return self.flush.send(dict(kind=kind, vmid=vmid, asid=asid))

    def free_id(self, avoid=()) -> int | None:
        busy = set(self.inflight) | {t["id"] for t in self.req.queue} | set(avoid)
        if self.req.cur is not None:
            busy.add(self.req.cur["id"])
        free = [i for i in range(self.id_count) if i not in busy]
        return self.rng.choice(free) if free else None

    async def do_walk(self, req: WalkRequest, timeout: int = 20000) -> Walk:
        """Send one request and wait for its (checked) response."""
        holder = {}

        def hook(w):
            if w.txn is txn:
                holder["w"] = w
        self.on_response.append(hook)
        txn = self.send(req)
        try:
            await self.loop.wait_until(lambda: "w" in holder, timeout=timeout,
                                       what=f"response to {_fmt(req.fields())}")
        finally:
            self.on_response.remove(hook)
        return holder["w"]

    @property
    def quiet(self) -> bool:
        return (self.req.idle and not self.inflight and self.mem.idle and self.flush.idle
                and not self.pending_dirty)

    async def drain(self, timeout: int = 200000):
        await self.loop.wait_held(lambda: self.quiet, 3, timeout, "drain")

    def read_counters(self) -> dict:
        return {c: int(getattr(self.dut, f"perf_{c}").value) for c in COUNTERS}

    async def check_counters(self, *, drain: bool = True, exact_stalls: bool = False):
        if drain:
            await self.drain()
        got = self.read_counters()
        exp = dict(self.counts)
        exp["memReads"] = len(self.mem.reads())
        exp["memWrites"] = len(self.mem.writes())
        exp["badMemResps"] = self.mem.bogus_sent
        skip = {"guestPwcHits", "hostPwcHits", "nestedTlbHits"}
        if not exact_stalls:
            skip.add("idStalls")
        diff = {k: (got[k], exp[k]) for k in COUNTERS if k not in skip and got[k] != exp[k]}
        if not self.cached:
            diff.update({k: (got[k], 0) for k in ("guestPwcHits", "hostPwcHits",
                                                   "nestedTlbHits") if got[k]})
        if diff:
            self._err("perf counters differ (dut, testbench): " +
                      ", ".join(f"{k}: {a} != {b}" for k, (a, b) in diff.items()))
        if self.axi:
            self.mem.check_counters(self.dut)
            await self.counter_regs.check()
        return got

    async def finish(self, *, counters: bool = True):
        if counters:
            await self.check_counters()
        self.loop.check()
        if self.pending_dirty:
            self._err(f"{len(self.pending_dirty)} D 0->1 write(s) never got a dirty event")
