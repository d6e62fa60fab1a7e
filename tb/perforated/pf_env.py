"""PerforatedL2Tlb cocotb environment: req / inval sources, resp back-pressure and monitor, the
memory responder (xlat_tb.memory) over a ``PerforatedMachine``'s memory, and a scoreboard
against the reference model (models.perforated) -- docs/perforated-l2tlb.md is the contract.

The model is sequential in handshake order (docs "Acceptance"): every accepted ``req``,
``mem_resp`` and ``inval`` is handed to it in the cycle of its handshake, and every ``mem_req``
handshake after the operation of that cycle (a memory response in the cycle its read is sent
is dropped).  Per cycle, in the ReadOnly phase, in this order:

1. readiness: ``inval_ready`` high needs fewer than ``invalPending`` invalidations pending in
   the model; a request accepted while the model has neither a free walk slot nor a miss-queue
   place for it raises, and so does an invalidation accepted while the model's miss queue holds
   a request (``PerforatedModelError``: req_ready / inval_ready was high when it must not be);
2. an ``invalDone`` pulse: the model's oldest pending invalidation, which must be allowed
   (every request accepted before it answered on ``resp`` in an earlier cycle);
3. a ``resp`` handshake: the model's next response (``pop_response``), every field compared;
4. at most one of ``inval`` / ``mem_resp`` / ``req`` handshakes (more is an error), to the model;
5. a ``mem_req`` handshake: ``model.mem_request`` (the slot's pending read, address exact).

Also: ``resp`` and ``mem_req`` hold valid and bits while ready is low; at a quiet point every
request answered, every invalidation done, and every ``perf_*`` counter the model keeps equal
to the model's (``perf_respStallCycles`` counted from the ports).
"""

from __future__ import annotations

import os
from collections import deque

import cocotb
from cocotb.clock import Clock

from models.perforated import (COUNTERS, RESP_FIELDS, PerforatedModel, PerforatedModelError,
                               PerforatedParams, Req)
from pml.pml_env import HoldChecker
from xlat_tb.backpressure import Never
from xlat_tb.coverage import Coverage
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.manifest import load_manifest
from xlat_tb.memory import MemoryResponder
from xlat_tb.monitors import DecoupledMonitor, ValidMonitor
from xlat_tb.perforated_tables import PerforatedMachine

MEM_RESP_FIELDS = ("id", "rdata", "error")


class PfEnv:
    def __init__(self, dut, *, rng, name="test", machine: PerforatedMachine | None = None,
                 mode: str = "perforated", req_gaps=None, inval_gaps=None, resp_ready=None,
                 mem_req_ready=None, latency=(1, 8), reorder=True):
        self.dut, self.rng, self.name = dut, rng, name
        self.man = load_manifest(os.environ["XLAT_MANIFEST"])
        self.axi = self.man.raw.get("axi")      # an AXI top (xlat_tb.axi): the block inside
        if self.axi:
            from xlat_tb.axi import AxiMemPort, inner, inner_view
            self.man = inner_view(self.man)
        self.config = self.man.config
        self.p = PerforatedParams.from_dict(dict(self.man.params))
        if self.man.derived.get("missQueue", self.p.missQueue) != self.p.missQueue:
            raise TbError(f"manifest missQueue {self.man.derived['missQueue']} != the model's "
                          f"{self.p.missQueue}")
        self.machine = machine if machine is not None else \
            PerforatedMachine(rng.getrandbits(32), pa_bits=self.p.paBits, mode=mode)
        self.model = PerforatedModel(self.p, bitmap_base=self.machine.bitmap_base)
        self.log = dut._log
        self.loop = CycleLoop(dut.clock, dut.reset)
        f = self.man.channel_fields
        self.req = self.loop.add(DecoupledSource(dut, "req", f("req"), rng=rng,
                                                 gaps=req_gaps or Never()))
        self.inval = self.loop.add(DecoupledSource(dut, "inval", f("inval"), rng=rng,
                                                   gaps=inval_gaps or Never()))
        self.resp_ready = self.loop.add(ReadyDriver(dut, "resp", pattern=resp_ready or Never()))
        self.respmon = self.loop.add(DecoupledMonitor(dut, "resp", RESP_FIELDS))
        blk = inner(dut, self.man) if self.axi else dut     # the block's memory port
        if self.axi:
            self.mem = self.loop.add(AxiMemPort(
                dut, blk, mem=self.machine.mem, rng=rng, fields_req=f("mem_req"),
                latency=latency, max_per_id=1))
        else:
            self.mem = self.loop.add(MemoryResponder(
                dut, mem=self.machine.mem, rng=rng, fields_req=f("mem_req"),
                fields_resp=f("mem_resp"), latency=latency, max_outstanding=16,
                req_ready=mem_req_ready or Never(), reorder=reorder, max_per_id=1))
        self.memrespmon = self.loop.add(DecoupledMonitor(blk, "mem_resp", MEM_RESP_FIELDS))
        self.donemon = self.loop.add(ValidMonitor(dut, "invalDone", ()))
        self.holds = [self.loop.add(HoldChecker(dut, "resp", RESP_FIELDS)),
                      self.loop.add(HoldChecker(blk, "mem_req", tuple(f("mem_req"))))]
        self.h = {n: getattr(dut, n) for n in ("inval_ready", "resp_valid", "resp_ready")}
        self.perf = {c: getattr(dut, f"perf_{c}") for c in COUNTERS + ("respStallCycles",)}
        self._mreq = []
        self.mem.on_request.append(lambda a, c: self._mreq.append(a))
        self.loop.post_sample.append(self._on_cycle)
        dut.bitmapBase.value = self.machine.bitmap_base

        self.free_ids = deque(range(1 << self.p.idBits))
        # id -> request txns not yet answered, oldest first (an id shared by several requests
        # in flight only in tests that send hits in order: ``send_req(..., id=)``)
        self.outstanding: dict[int, deque] = {}
        self.answers: dict[int, tuple] = {}         # request serial -> (resp dict, model Response)
        self.last: dict | None = None               # the last response (dict + "_model")
        self.responses = []                         # (cycle, resp dict, model Response)
        self.keep_responses = True
        self.accepts = []                           # (cycle, kind, txn) of every handshake
        self.done_cycles = []                       # cycles of invalDone pulses
        self.resp_cycles = []
        self.resp_stall = 0
        self.stats = {k: 0 for k in ("req", "resp", "inval", "step", "done", "bad")}
        self.sources = {s: 0 for s in range(5)}
        self.faults = {}
        # functional coverage (what the random test must reach; reported by every test)
        self.cov = Coverage(f"{self.config}/{name}")
        on = self.p.perforation
        self.cov.declare("source.0", "source.1", "source.4", "fault.1", "fault.4",
                         "read.pml4e", "read.pdpte", "read.pde", "read.pte", "inval.2",
                         "inval.3", "hit_under_miss")
        self.cov.declare("source.2", "source.3", "read.bitmap", "read.shadow", "read.hole",
                         "hole.translated", required=on, why="perforation = false")
        self.cov.declare("fault.3", "inval.0", "inval.1", "stale_walk", "bad_mem_resp",
                         required=False, why="per test / seed")

    # ------------------------------------------------------------------ setup
    async def start(self, reset_cycles=5):
        cocotb.start_soon(Clock(self.dut.clock, 10, unit="ns").start())
        self.loop.start()
        await self.loop.reset(reset_cycles)

    # --------------------------------------------------------------- stimulus
    def make_req(self, vpn, asid=None, cmd=0, user=0, root=None, id=None) -> dict | None:
        """A request txn with a free id (None when every id is in flight), or with ``id``
        (which may be in flight: the caller's requests must answer in order, e.g. hits)."""
        if id is None:
            if not self.free_ids:
                return None
            id = self.free_ids.popleft()
        if asid is None:
            asid = 1
        sp = self.machine.space(asid)
        txn = dict(id=id, vpn=vpn, asid=asid,
                   root=sp.root if root is None else root, cmd=cmd, user=user)
        self.outstanding.setdefault(id, deque()).append(txn)
        return txn

    def send_req(self, vpn, asid=1, cmd=0, user=0, root=None, id=None) -> dict:
        txn = self.make_req(vpn, asid, cmd, user, root, id)
        if txn is None:
            raise TbError("no free request id")
        return self.req.send(txn)

    def send_inval(self, kind, asid=0, vpn=0, frame=0) -> dict:
        return self.inval.send(dict(kind=kind, asid=asid, vpn=vpn, frame=frame))

    def send_os_invals(self, invals) -> None:
        """The invalidations a page-table change returns (``punch_hole`` / ``patch_hole``)."""
        for d in invals:
            d = dict(d)
            self.send_inval(d.pop("inval"), **d)

    async def translate(self, vpn, asid=1, cmd=0, user=0, timeout=2000) -> dict:
        """One request, waited for: its response dict with the model's Response as "_model"."""
        txn = self.send_req(vpn, asid, cmd, user)
        await self.loop.wait_until(lambda: "_resp" in txn, timeout, f"response to {txn}")
        return txn["_resp"]

    async def quiet(self, timeout=20000):
        """Wait until every request is answered, every invalidation done and memory idle."""
        m = self.model

        def idle():
            return (self.req.idle and self.inval.idle and not self.outstanding and m.idle()
                    and not m.out and not m.pending_invals and self.mem.idle)
        await self.loop.wait_until(idle, timeout, "a quiet testbench")
        await self.loop.cycles(4)

    # ------------------------------------------------------------- scoreboard
    def _err(self, cycle, msg):
        raise TbError(f"[{self.config}] cycle {cycle}: {msg}")

    def _on_cycle(self, c):
        if self.loop.in_reset:
            self._mreq.clear()
            return
        m = self.model
        for hc in self.holds:
            if hc.violations:
                self._err(c, hc.violations[0])
        # 1. readiness of inval (state before this cycle's events)
        if int(self.h["inval_ready"].value) and len(m.pending_invals) >= self.p.invalPending:
            self._err(c, f"inval_ready high with {len(m.pending_invals)} invalidations pending "
                         f"(invalPending {self.p.invalPending})")
        if int(self.h["resp_valid"].value) and not int(self.h["resp_ready"].value):
            self.resp_stall += 1
        # 2. invalDone
        if self.donemon.item is not None:
            try:
                m.inval_done()
            except PerforatedModelError as e:
                self._err(c, f"invalDone: {e}")
            self.done_cycles.append(c)
            self.stats["done"] += 1
        # 3. a response
        item = self.respmon.item
        if item is not None:
            try:
                want = m.pop_response()
            except PerforatedModelError as e:
                self._err(c, f"resp {item}: {e}")
            got = {k: item[k] for k in RESP_FIELDS}
            exp = want.fields()
            if got != exp:
                diff = {k: (got[k], exp[k]) for k in RESP_FIELDS if got[k] != exp[k]}
                self._err(c, f"response differs (rtl, model): {diff}\n  rtl {got}\n  model {exp}"
                             f" ({want.reason}; reads {[(r.kind, hex(r.addr)) for r in want.reads]})")
            q = self.outstanding.get(item["id"])
            if not q:
                self._err(c, f"response with id {item['id']} no request in flight has")
            txn = q.popleft()
            if not q:
                del self.outstanding[item["id"]]
                if item["id"] not in self.free_ids:
                    self.free_ids.append(item["id"])
            got["_model"] = want
            got["_cycle"] = c
            txn["_resp"] = got
            self.last = got
            self.stats["resp"] += 1
            self.sources[got["source"]] += 1
            if got["fault"]:
                self.faults[got["fault"]] = self.faults.get(got["fault"], 0) + 1
            self.resp_cycles.append(c)
            cv = self.cov
            cv.hit(f"source.{got['source']}")
            if got["fault"]:
                cv.hit(f"fault.{got['fault']}")
            elif want.hole:
                cv.hit("hole.translated")
            for rd in want.reads:
                cv.hit(f"read.{rd.kind}")
            if not want.reads and not m.idle():
                cv.hit("hit_under_miss")
            if self.keep_responses:
                self.responses.append((c, got, want))
        # 4. the operation of this cycle
        acc_i, acc_m, acc_r = self.inval.accepted, self.memrespmon.item, self.req.accepted
        n = sum(x is not None for x in (acc_i, acc_m, acc_r))
        if n > 1:
            self._err(c, f"{n} handshakes among inval / mem_resp / req in one cycle (doc: one)")
        try:
            if acc_i is not None:
                if any(w is not None and not w.stale for w in m.walks):
                    self.cov.hit("stale_walk")
                m.inval(acc_i["kind"], acc_i["asid"], acc_i["vpn"], acc_i["frame"])
                self.cov.hit(f"inval.{acc_i['kind']}")
                self.accepts.append((c, "inval", acc_i))
                self.stats["inval"] += 1
            elif acc_m is not None:
                r = m.mem_response(acc_m["id"], acc_m["rdata"], bool(acc_m["error"]))
                self.accepts.append((c, "mem_resp", acc_m))
                self.stats["step" if r is not None else "bad"] += 1
                if r is None:
                    self.cov.hit("bad_mem_resp")
            elif acc_r is not None:
                m.request(Req(**{k: acc_r[k] for k in ("id", "vpn", "asid", "root", "cmd",
                                                        "user")}))
                self.accepts.append((c, "req", acc_r))
                self.stats["req"] += 1
            # 5. memory requests
            for a in self._mreq:
                m.mem_request(a.id, a.addr)
        except PerforatedModelError as e:
            self._err(c, str(e))
        self._mreq.clear()

    # ------------------------------------------------------------- counters
    def read_counters(self) -> dict:
        return {c: int(h.value) for c, h in self.perf.items()}

    def check_counters(self):
        """At a quiet point: every counter the model keeps equals it; respStallCycles equals
        the cycles the ports showed resp_valid and not resp_ready."""
        got = self.read_counters()
        want = dict(self.model.ctr)
        want["respStallCycles"] = self.resp_stall
        bad = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
        if bad:
            raise TbError(f"[{self.config}] counters differ (rtl, model): {bad}")
        # identities (docs "Counters")
        if got["requests"] != got["hits4k"] + got["hits2m"] + got["walks"] + got["badCmds"]:
            raise TbError(f"[{self.config}] requests != hits4k + hits2m + walks + badCmds: {got}")
        if self.axi:
            self.mem.check_counters(self.dut)
        return got
