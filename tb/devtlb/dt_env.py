"""DevTlb cocotb environment: req / inval sources, resp back-pressure and monitor, the ATS/IOMMU
responder (xlat_tb.ats) on ats_req / ats_resp, and a scoreboard against the reference model
(models.devtlb) -- docs/devtlb.md is the contract.

The model is sequential in acceptance order and each operation acts in its respond cycle
(accept + latency - 1, docs "When each change becomes visible"), so the scoreboard queues every
accepted operation and hands it to the model in its respond cycle.  Per cycle, in the ReadOnly
phase, in this order:

1. readiness: ``req_ready`` high needs a hit-queue place in the model, counting every request
   accepted and not yet acted as taking one (docs "Acceptance"); a free demand slot and a free
   waiter are checked when the request acts (model strict mode: the RTL may count a request
   whose hit is already known as taking no slot, so the check at the ready cycle would be
   stricter than the guarantee "no replay"); ``inval_ready`` high needs fewer than ``invalPending`` invalidations pending
   (model + not yet acted);
2. an ``invalDone`` pulse: the oldest pending invalidation, whose conditions 1-3 must hold in
   the state of the previous cycle (model.inval_done raises when early);
3. the operations whose respond cycle is this one, in acceptance order (completions: a slot
   whose ``ats_req`` handshake is not before the completion's acceptance is unsent, Q2);
4. a ``resp`` handshake: ``model.expect_response(tag, source, cycle)`` (hits FIFO, waiters by
   tag, not before the drain's earliest cycle, model Q24), every field compared; an ``ats_req`` handshake: ``model.ats_sent`` (demand queue head first,
   prefetch head only as the model says);
5. acceptances of this cycle: at most one of inval / completion / request, priority
   inval > completion > request (queued for step 3);
6. per-cycle counters (``model.tick``).

Also: ``resp`` and ``ats_req`` hold valid and bits while ready is low; at a quiet end every
request answered, every invalidation done, every ``perf_*`` counter equal to the model's
(``perf_ptbFullCycles`` within a tolerance, model docstring Q15/Q19).
"""

from __future__ import annotations

import os
from collections import deque

import cocotb
from cocotb.clock import Clock

from models.devtlb import (COUNTERS, SRC_ATS, DevTlbModel, DevTlbModelError, DevTlbParams)
from pml.pml_env import HoldChecker
from xlat_tb.ats import AtsCore, AtsPorts, AtsResponder, AtsTable
from xlat_tb.backpressure import Never
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.manifest import load_manifest
from xlat_tb.monitors import DecoupledMonitor

RESP_FIELDS = ("tag", "ppn", "perm_r", "perm_w", "fault", "source")


def model_params(man) -> DevTlbParams:
    """The model's parameters from the manifest (the RTL writes 0 for 'default' and gives the
    values it derived)."""
    return DevTlbParams.from_manifest(man.params, man.derived)


class DtEnv:
    def __init__(self, dut, *, rng, name="test", req_gaps=None, inval_gaps=None,
                 resp_ready=None, ats_req_ready=None, ats_resp_gaps=None, latency=(1, 20),
                 reorder=True, fault_p=0.0, pagesize3_p=0.0, unaligned_p=0.0, bogus_p=0.0,
                 table: AtsTable | None = None, ptb_full_slack: int | None = None):
        self.dut, self.rng, self.name = dut, rng, name
        self.man = load_manifest(os.environ["XLAT_MANIFEST"])
        self.config = self.man.config
        self.p = model_params(self.man)
        self.model = DevTlbModel(self.p)
        self.L = self.p.latency
        self.log = dut._log
        self.loop = CycleLoop(dut.clock, dut.reset)
        f = self.man.channel_fields
        self.req = self.loop.add(DecoupledSource(dut, "req", f("req"), rng=rng,
                                                 gaps=req_gaps or Never()))
        self.inval = self.loop.add(DecoupledSource(dut, "inval", f("inval"), rng=rng,
                                                   gaps=inval_gaps or Never()))
        self.resp_ready = self.loop.add(ReadyDriver(dut, "resp", pattern=resp_ready or Never()))
        self.respmon = self.loop.add(DecoupledMonitor(dut, "resp", RESP_FIELDS))
        self.table = table if table is not None else AtsTable()
        self.core = AtsCore(self.table, rng, tag_bits=self.p.atsTagBits, ppn_bits=self.p.ppnBits,
                            latency=latency, max_outstanding=max(1, self.p.slots),
                            req_ready=ats_req_ready or Never(), resp_gaps=ats_resp_gaps or Never(),
                            reorder=reorder, fault_p=fault_p, pagesize3_p=pagesize3_p,
                            unaligned_p=unaligned_p, bogus_p=bogus_p, bogus_tag_fn=self._bogus_tag)
        self.ats = self.loop.add(AtsResponder(AtsPorts.from_manifest(dut, self.man, rng=rng),
                                              self.core))
        self.holds = [self.loop.add(HoldChecker(dut, "resp", RESP_FIELDS)),
                      self.loop.add(HoldChecker(dut, "ats_req", tuple(f("ats_req"))))]
        self.h = {n: getattr(dut, n) for n in ("req_valid", "req_ready", "inval_valid",
                                               "inval_ready", "resp_valid", "resp_ready",
                                               "ats_req_valid", "ats_req_ready",
                                               "ats_resp_valid", "ats_resp_ready", "invalDone")}
        self.perf = {c: getattr(dut, f"perf_{c}") for c in COUNTERS}
        self._ats_reqs, self._ats_resps = [], []
        self.ats.on_request.append(lambda r, c: self._ats_reqs.append(r))
        self.ats.on_response.append(lambda r, c: self._ats_resps.append(r))
        self.loop.post_sample.append(self._on_cycle)

        self.pipe: deque = deque()          # (respond cycle, kind, data, accept cycle)
        self.pending_reqs = 0
        self.pending_invals = 0
        self.sent_cycle = {}                # slot number -> cycle of its last ats_req handshake
        self.outstanding = {}               # request tag -> request txn (not yet answered)
        self.free_tags = deque(range(1 << self.p.tagBits))
        self.responses = []                 # (cycle, resp dict) when keep_responses
        self.keep_responses = True
        self.outcomes = {}                  # request tag -> RequestOutcome (last)
        self.completions = []               # (cycle, AtsRecord, CompletionOutcome)
        self.inval_outcomes = []
        self.done_cycles = []               # (cycle, inval id)
        self.accept_cycles = {"req": [], "inval": [], "comp": []}
        self.resp_cycles = []
        self.ats_sent_log = []              # (cycle, AtsReq)
        self.stats = {k: 0 for k in ("req", "resp", "inval", "comp", "done", "src0", "src1",
                                     "src2", "fault")}
        self.ptb_full_slack = ptb_full_slack
        self.req_ready_when_full = 0

    # ------------------------------------------------------------------ setup
    async def start(self, reset_cycles=5):
        cocotb.start_soon(Clock(self.dut.clock, 10, unit="ns").start())
        self.loop.start()
        await self.loop.reset(reset_cycles)

    def _bogus_tag(self, rng, outstanding):
        """A tag the model shows not outstanding (free, unsent, completed, out of range)."""
        m = self.model
        cands = []
        for t in range(1 << self.p.atsTagBits):
            if t in outstanding:
                continue
            s = m.slots[t] if t < self.p.slots else None
            if t >= self.p.slots or s is None or not s.sent or s.completed:
                cands.append(t)
        return rng.choice(cands) if cands else None

    # --------------------------------------------------------------- stimulus
    def alloc_tag(self) -> int | None:
        return self.free_tags.popleft() if self.free_tags else None

    def send_req(self, sid, page, write=0, tag=None) -> dict:
        if tag is None:
            tag = self.alloc_tag()
            if tag is None:
                raise TbError("no free request tag")
        txn = dict(tag=tag, sid=sid, iova=page, write=write)
        self.outstanding[tag] = txn
        return self.req.send(txn)

    def make_req(self, sid, page, write=0) -> dict | None:
        """For generators: a request with a free tag (None when every tag is in use)."""
        tag = self.alloc_tag()
        if tag is None:
            return None
        txn = dict(tag=tag, sid=sid, iova=page, write=write)
        self.outstanding[tag] = txn
        return txn

    def send_inval(self, kind, sid=0, iova=0, sizeLog2=12) -> dict:
        return self.inval.send(dict(kind=kind, sid=sid, iova=iova, sizeLog2=sizeLog2))

    # ------------------------------------------------------------- scoreboard
    def _err(self, cycle, msg):
        raise TbError(f"[{self.config}] cycle {cycle}: {msg}")

    def _room(self):
        m = self.model
        n = self.pending_reqs
        return (m.free_demand_slots() - n, m.free_waiters() - n,
                self.p.respQueue - len(m.hitq) - n)

    def _on_cycle(self, c):
        if self.loop.in_reset:
            return
        m, h = self.model, self.h
        # 1. readiness (state before this cycle's events)
        req_v, req_r = int(h["req_valid"].value), int(h["req_ready"].value)
        if req_r and self.p.respQueue - len(m.hitq) - self.pending_reqs < 1:
            self._err(c, f"req_ready high with {len(m.hitq)} hits queued and "
                         f"{self.pending_reqs} requests in flight (respQueue {self.p.respQueue})")
        if int(h["inval_ready"].value) and len(m.invals) + self.pending_invals >= self.p.invalPending:
            self._err(c, f"inval_ready high with {len(m.invals)} + {self.pending_invals} "
                         f"invalidations pending (invalPending {self.p.invalPending})")
        # 2. invalDone
        if int(h["invalDone"].value):
            try:
                iid = m.inval_done()
            except DevTlbModelError as e:
                self._err(c, f"invalDone: {e}")
            self.done_cycles.append((c, iid))
            self.stats["done"] += 1
        # 5 (collected now, acted below): acceptances
        acc_i = self.inval.accepted
        acc_c = self._ats_resps
        acc_r = self.req.accepted
        n = (acc_i is not None) + len(acc_c) + (acc_r is not None)
        if n > 1:
            self._err(c, f"{n} operations accepted in one cycle (inval {acc_i}, completion "
                         f"{[a.resp for a in acc_c]}, request {acc_r})")
        rc = c + self.L - 1
        if acc_i is not None:
            self.pipe.append((rc, "inval", acc_i, c))
            self.pending_invals += 1
            self.accept_cycles["inval"].append(c)
            self.stats["inval"] += 1
        for a in acc_c:
            self.pipe.append((rc, "comp", a, c))
            self.accept_cycles["comp"].append(c)
            self.stats["comp"] += 1
        self._ats_resps = []
        if acc_r is not None:
            self.pipe.append((rc, "req", acc_r, c))
            self.pending_reqs += 1
            self.accept_cycles["req"].append(c)
            self.stats["req"] += 1
        # 3. operations acting in this cycle
        while self.pipe and self.pipe[0][0] <= c:
            _, kind, data, ac = self.pipe.popleft()
            try:
                self._act(c, kind, data, ac)
            except DevTlbModelError as e:
                self._err(c, f"{kind} accepted at {ac}: {e}")
        # the prefetch issue stage (model Q27) acts before this cycle's handshakes
        m.flush_prefetch(c)
        # 4. handshakes of outputs
        r = self.respmon.item
        if r is not None:
            try:
                exp = m.expect_response(r["tag"], r["source"], cycle=c)
            except DevTlbModelError as e:
                self._err(c, f"resp {r}: {e}")
            if exp.as_dict() != r:
                txn = self.outstanding.get(r["tag"])
                self._err(c, f"resp {r} for request {txn}: model expects {exp.as_dict()}")
            txn = self.outstanding.pop(r["tag"], None)
            self.free_tags.append(r["tag"])
            self.stats["resp"] += 1
            self.stats[f"src{r['source']}"] += 1
            self.stats["fault"] += r["fault"]
            self.resp_cycles.append(c)
            if self.keep_responses:
                self.responses.append((c, dict(r, _req=txn)))
        for a in self._ats_reqs:
            try:
                got = m.ats_sent(a.tag, a.sid, a.iova, a.prefetch)
            except DevTlbModelError as e:
                self._err(c, f"ats_req: {e}")
            self.sent_cycle[a.tag] = c
            self.ats_sent_log.append((c, got))
        self._ats_reqs = []
        # 6. per-cycle counters
        resp_stall = int(h["resp_valid"].value) and not int(h["resp_ready"].value)
        ats_stall = int(h["ats_req_valid"].value) and not int(h["ats_req_ready"].value)
        m.tick(req_valid=bool(req_v), resp_stall=bool(resp_stall), ats_stall=bool(ats_stall))

    def _act(self, c, kind, data, ac):
        m = self.model
        if kind == "req":
            self.pending_reqs -= 1
            out = m.request(data["tag"], data["sid"], data["iova"], data["write"], strict=True, cycle=c)
            if out.kind == "alloc" and out.slot is None:
                raise DevTlbModelError("request allocated without a free slot")
            self.outcomes[data["tag"]] = out
        elif kind == "inval":
            self.pending_invals -= 1
            self.inval_outcomes.append((c, m.inval(data["kind"], data["sid"], data["iova"],
                                                   data["sizeLog2"])))
        else:
            f = data.resp
            t = f["tag"]
            s = m.slots[t] if t < self.p.slots else None
            unsent = s is not None and s.sent and self.sent_cycle.get(t, -1) >= ac   # Q2
            if unsent:
                s.sent = False
            out = m.completion(t, f["ppn"], f["perm_r"], f["perm_w"], f["pageSize"], f["fault"],
                               cycle=c)
            if unsent:
                s.sent = True
            if data.seq < 0 and out.kind == "completed":
                # a bogus completion named a slot that became outstanding while it was
                # presented: for the DUT it answered that request, so the IOMMU's own
                # answer of the tag is withdrawn (it would be a second completion)
                self.core.pending = [a for a in self.core.pending if a.tag != t]
            self.completions.append((c, data, out))

    # ---------------------------------------------------------------- helpers
    def quiet(self) -> bool:
        return (not self.pipe and not self.outstanding and self.model.idle and self.core.idle
                and self.req.idle and self.inval.idle and not self.model.pending_ats())

    async def drain(self, timeout=20000, what="quiet end"):
        """Wait until every request is answered, every invalidation done, the IOMMU idle."""
        def why():
            m = self.model
            return (f"outstanding requests {sorted(self.outstanding)[:16]}, pipe {len(self.pipe)}, "
                    f"model slots {[s.idx for s in m.slots if s is not None]}, hitq {len(m.hitq)}, "
                    f"invals {[m.inval_conditions(i.id) for i in m.invals]}, "
                    f"ats pending {m.pending_ats()}, core cur {self.core.cur}, core pending "
                    f"{self.core.pending}, slots {[(s.idx, s.sent, s.completed, s.stale, s.waiters) for s in m.slots if s is not None]}, "
                    f"ats_resp_ready {self.h['ats_resp_ready'].value}, req_ready "
                    f"{self.h['req_ready'].value}, inval_ready {self.h['inval_ready'].value}")
        try:
            await self.loop.wait_held(self.quiet, 3, timeout, what)   # counters lag a cycle
        except TbError as e:
            raise TbError(f"[{self.config}] {e}: {why()}") from None

    def check_counters(self, where="end"):
        m = self.model
        bad = []
        for name, hdl in self.perf.items():
            got, exp = int(hdl.value), m.counters[name]
            if name == "ptbFullCycles":
                slack = self.ptb_full_slack
                if slack is None:
                    slack = (self.L + 2) * (self.stats["req"] + self.stats["comp"]) + 8
                if not exp - slack <= got <= exp + slack:
                    bad.append(f"{name}: DUT {got}, model {exp} (tolerance {slack})")
            elif got != exp:
                bad.append(f"{name}: DUT {got}, model {exp}")
        if bad:
            raise TbError(f"[{self.config}] counters at {where}:\n  " + "\n  ".join(bad))

    def check_holds(self):
        v = [x for hc in self.holds for x in hc.violations]
        if v:
            raise TbError(f"[{self.config}] hold rule: " + "; ".join(v[:5]))

    async def finish(self, timeout=20000):
        await self.drain(timeout)
        self.check_holds()
        self.check_counters()
        self.log.info(f"[{self.config}/{self.name}] {self.stats}; counters "
                      f"{ {k: v for k, v in self.model.counters.items() if v} }")
