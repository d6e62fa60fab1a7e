"""PmlLogger cocotb environment: dirty / csr sources, exit / guestIrq back-pressure and monitors,
the memory responder (xlat_tb.memory) for the write-only memory port, and a scoreboard against
the co-simulation model (models.pml) -- docs/pml-logger.md is the contract.

Every cycle, in the ReadOnly phase, the scoreboard takes what happened in this order (the order
the DUT's registers see it):

1. a write first presented on ``mem_req`` (a presented request is committed: Decoupled rule):
   it must be one of the model's eligible writes -- the head event of some context, part by
   part, PML part first, at ADDR + 8 * INDEX of that buffer now, data = GPA / sign-extended
   GVA, wmask 0xFF, an id not outstanding, fewer than 2^idBits outstanding; the index
   decrements.  So each buffer receives exactly the model's sequence, in acceptance order;
2. a CSR read applying this cycle: accepted on ``csr_req`` in the cycle before (the DUT's CSR
   input stage) and answered on ``csr_resp`` now (the model's registers now; STATUS may lag
   the eager model by ``status_lag`` cycles: it must equal a value the model's STATUS had in
   that window);
3. ``exit`` / ``guestIrq`` transfers: each must be one the model raised and not yet delivered
   (reason 62, vector = IRQ_VECTOR at the raise), or a re-raise the model merged into one
   taken within its ``merge_slack``;
4. a ``mem_resp`` (writeError / logged counters, unknown id = badMemResps);
5. a ``dirty`` event accepted (ignored / deduped / queued, the queue never beyond queueDepth);
6. a CSR write applying this cycle (accepted the cycle before; no write may be presented in
   the next two cycles: the doc's "no write is loaded in the cycle a CSR write applies, nor in
   the next one").

This is the order of docs/pml-logger.md, "Same-cycle inputs" (a CSR access's cycle is the one
it applies in): an accepted event sees the
registers and the dedup filter before a same-cycle CSR write (its new filter entry survives a
same-cycle PML_INDEX write: the model spares the entry filled in this cycle), a write error
survives a same-cycle ACK of writeError (the model keeps it in either order), and an exit
taken in the cycle of an ACK is delivered before the ACK's re-raise.

Also checked: every ``csr_resp`` exactly one cycle after its request (in the cycle it applies); ``dirty_ready`` low only
while the event's context queue is full (within ``stall_slack`` cycles of the model);
``mem_req`` / ``exit`` / ``guestIrq`` hold valid and bits while ready is low; at the end every
``perf_*`` counter, and every raised exit / interrupt delivered.
"""

from __future__ import annotations

import os
from collections import deque

import cocotb
from cocotb.clock import Clock

from models.pml import (COUNTERS, CTRL_EPML, CTRL_PML, EXIT_REASON, GUEST, PART_NAMES, PML,
                        ModelError, PmlModel, PmlOptions, PmlParams)
from models.walker import SparseMemory
from xlat_tb.backpressure import Never
from xlat_tb.coverage import Coverage
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.manifest import load_manifest
from xlat_tb.memory import MemoryResponder

DIRTY_FIELDS = ("gpa", "gva", "vmid", "asid")
POISON = 0xDEAD_BEEF_0BAD_F00D


def _fmt(d: dict) -> str:
    return "{" + ", ".join(f"{k}={v:#x}" if isinstance(v, int) and v > 9 else f"{k}={v}"
                           for k, v in d.items() if not k.startswith("_")) + "}"


class HoldChecker:
    """A DUT output channel must keep valid and bits while ready is low (spec README)."""

    def __init__(self, dut, prefix: str, fields):
        self.prefix = prefix
        self.v = getattr(dut, f"{prefix}_valid")
        self.r = getattr(dut, f"{prefix}_ready")
        self.b = [getattr(dut, f"{prefix}_bits_{f}") for f in fields]
        self.held = None
        self.loop = None
        self.violations = []

    def reset_state(self):
        self.held = None

    def sample(self, cycle):
        if self.loop is not None and self.loop.in_reset:
            self.held = None
            return
        v = int(self.v.value)
        if self.held is not None:
            bits = tuple(int(h.value) for h in self.b) if v else None
            if not v or bits != self.held:
                self.violations.append(
                    f"cycle {cycle}: {self.prefix} changed while ready was low: was "
                    f"{self.held}, now valid={v} bits={bits}")
        if v and not int(self.r.value):
            self.held = tuple(int(h.value) for h in self.b)
        else:
            self.held = None


class DirtyObserver:
    """Passive stand-in for the dirty DecoupledSource when another block drives ``dirty``
    (the same attributes the scoreboard reads)."""

    def __init__(self, dut, prefix: str, fields: dict):
        self.v = getattr(dut, f"{prefix}_valid")
        self.r = getattr(dut, f"{prefix}_ready")
        self.b = {f: getattr(dut, f"{prefix}_bits_{f}") for f in fields}
        self.loop = None
        self.on_accept = []
        self.reset_state()

    def reset_state(self):
        self.cur = self.accepted = None
        self.valid_now = self.ready_now = 0
        self.count = 0

    @property
    def idle(self) -> bool:
        return self.cur is None

    def sample(self, cycle):
        self.accepted = None
        if self.loop is not None and self.loop.in_reset:
            self.cur = None
            return
        self.valid_now = int(self.v.value)
        self.ready_now = int(self.r.value)
        self.cur = {f: int(h.value) for f, h in self.b.items()} if self.valid_now else None
        if self.valid_now and self.ready_now:
            self.accepted = dict(self.cur, _cycle=cycle)
            self.count += 1
            for cb in self.on_accept:
                cb(self.accepted, cycle)


class PmlEnv:
    def __init__(self, dut, *, rng, name="test", latency=(1, 4), max_outstanding=32,
                 dirty_gaps=None, csr_gaps=None, exit_ready=None, irq_ready=None,
                 mem_req_ready=None, reorder=True, options: PmlOptions | None = None,
                 status_lag: int = 12, stall_slack: int = 3, prefix: str = "",
                 manifest=None, mem: SparseMemory | None = None, loop=None):
        self.dut, self.rng, self.name = dut, rng, name
        self.man = manifest if manifest is not None else load_manifest(os.environ["XLAT_MANIFEST"])
        self.axi = self.man.raw.get("axi")      # an AXI top (xlat_tb.axi): the block inside
        if self.axi:
            from xlat_tb.axi import AxiLiteCsr, AxiMemPort, inner, inner_view
            self.man = inner_view(self.man)
        self.config = self.man.config
        self.p = PmlParams.from_dict(self.man.params)
        self.staged = bool(self.p.inputStage or self.p.dedupEntries > 0)
        self._dec_ctx = None            # context of the queued event accepted last cycle
        regs = self.man.raw.get("registers")
        stride = int(self.man.derived.get("stride", 0x80))
        self.model = PmlModel(self.p, regs, options, stride)
        self.R = self.model.regs
        self.pre = prefix
        self.log = dut._log
        self.status_lag, self.stall_slack = status_lag, stall_slack
        self._check_ports()
        P = prefix
        self.own_loop = loop is None
        self.loop = CycleLoop(dut.clock, dut.reset) if loop is None else loop
        dfields = {f: self.man.width(f"{P}dirty_bits_{f}") for f in DIRTY_FIELDS}
        if self._has_dirty_input():
            self.dirty = self.loop.add(DecoupledSource(dut, P + "dirty", dfields, rng=rng,
                                                       gaps=dirty_gaps or Never()))
        else:   # another block drives dirty (integration): observe the handshake
            self.dirty = self.loop.add(DirtyObserver(dut, P + "dirty", dfields))
        # the block's memory and CSR ports: on the top, or inside an AXI top (observed there)
        blk = inner(dut, self.man) if self.axi else dut
        if self.axi:
            self.csr = self.loop.add(AxiLiteCsr(dut, blk, rng=rng))
        else:
            self.csr = self.loop.add(DecoupledSource(dut, P + "csr_req",
                                                     self._fields(P + "csr_req"), rng=rng,
                                                     gaps=csr_gaps or Never()))
        self.exit_ready = self.loop.add(ReadyDriver(dut, P + "exit", pattern=exit_ready or Never()))
        self.irq_ready = self.loop.add(ReadyDriver(dut, P + "guestIrq",
                                                   pattern=irq_ready or Never()))
        self.memory = mem if mem is not None else SparseMemory()
        if self.axi:
            self.mem = self.loop.add(AxiMemPort(
                dut, blk, mem=self.memory, rng=rng, fields_req=self._fields("mem_req"),
                latency=latency, max_per_id=1))
        else:
            self.mem = self.loop.add(MemoryResponder(
                dut, mem=self.memory, rng=rng, req=P + "mem_req", resp=P + "mem_resp",
                fields_req=self._fields(P + "mem_req"), fields_resp=self._fields(P + "mem_resp"),
                latency=latency, max_outstanding=max_outstanding,
                req_ready=mem_req_ready or Never(), reorder=reorder, max_per_id=1))
        self.holds = [self.loop.add(HoldChecker(dut, P + "exit", ("vmid", "reason"))),
                      self.loop.add(HoldChecker(dut, P + "guestIrq", ("vmid", "vector")))]
        self.h_csr_resp_v = getattr(blk, P + "csr_resp_valid")
        self.h_csr_resp = (getattr(blk, P + "csr_resp_bits_rdata"),
                           getattr(blk, P + "csr_resp_bits_error"))
        self.h_mreq_v = getattr(blk, P + "mem_req_valid")
        self.h_mreq = {f: getattr(blk, f"{P}mem_req_bits_{f}")
                       for f in ("id", "addr", "write", "wdata", "wmask")}
        self.h_exit = [getattr(dut, P + n) for n in ("exit_valid", "exit_bits_vmid",
                                                     "exit_bits_reason")]
        self.h_irq = [getattr(dut, P + n) for n in ("guestIrq_valid", "guestIrq_bits_vmid",
                                                    "guestIrq_bits_vector")]
        self.dbg = None
        if self.man.has(P + "dbg_pmlIndex_0"):
            self.dbg = [tuple(getattr(dut, f"{P}dbg_{n}_{c}") for n in (
                "pmlIndex", "gpmlIndex", "pmlAddr", "gpmlAddr", "queueCount"))
                for c in range(self.p.contexts)]
        self._fired, self._resps = [], []
        self.mem.on_request.append(lambda a, c: self._fired.append(a))
        self.mem.on_response.append(lambda a, c: self._resps.append(a))
        self.loop.post_sample.append(self._on_cycle)

        self.presented = None           # (cycle, fields) of the write on mem_req, not yet taken
        self.csr_staged = None          # the CSR access accepted last cycle (applies now)
        self.csr_expect = None          # (cycle, txn, (rdata set, error)) of the staged access
        self.csr_write_cycle = -10
        self.stalls = 0                 # cycles dirty_valid && !dirty_ready
        self.exits_seen = 0
        self.irqs_seen = 0
        self.writes_presented = 0
        self.write_cycles = []          # cycles a write was presented (throughput tests)
        self.keep_write_cycles = False
        self.on_exit = []               # hooks(vmid, cycle)
        self.on_irq = []
        self.max_outstanding_seen = 0
        self.cov = Coverage(f"{self.config}/{name}")
        self._errors: list[str] = []
        self.m_queued = self.m_ignored = 0
        self.trace = os.environ.get("XLAT_PML_TRACE", "") not in ("", "0")

    # ------------------------------------------------------------------ set-up
    def _has_dirty_input(self) -> bool:
        return self.man.has(self.pre + "dirty_valid") and \
            self.man.ports[self.pre + "dirty_valid"].direction == "input"

    def _fields(self, prefix: str) -> dict:
        return self.man.channel_fields(prefix)

    def _check_ports(self):
        P, p = self.pre, self.p
        need = {f"{P}dirty_bits_gpa": p.paBits - 12, f"{P}dirty_bits_gva": p.vaBits - 12,
                f"{P}dirty_bits_vmid": p.vmidBits, f"{P}dirty_bits_asid": p.asidBits,
                f"{P}csr_req_bits_addr": 16, f"{P}csr_req_bits_write": 1,
                f"{P}csr_req_bits_wdata": 64, f"{P}csr_resp_bits_rdata": 64,
                f"{P}csr_resp_bits_error": 1, f"{P}mem_req_bits_id": p.idBits,
                f"{P}mem_req_bits_addr": p.paBits, f"{P}mem_req_bits_wdata": 64,
                f"{P}mem_req_bits_wmask": 8, f"{P}mem_resp_bits_id": p.idBits,
                f"{P}mem_resp_bits_error": 1, f"{P}exit_bits_vmid": p.vmidBits,
                f"{P}exit_bits_reason": 16, f"{P}guestIrq_bits_vmid": p.vmidBits,
                f"{P}guestIrq_bits_vector": p.irqVectorBits}
        need.update({f"{P}perf_{c}": 32 for c in COUNTERS})
        missing = [n for n in need if not self.man.has(n)]
        if missing:
            raise TbError(f"{self.config}: manifest lacks ports {missing}")
        bad = {n: (self.man.width(n), w) for n, w in need.items() if self.man.width(n) != w}
        if bad:
            raise TbError(f"{self.config}: port widths differ from the doc (have, doc): {bad}")

    def start(self):
        if self.own_loop:
            Clock(self.dut.clock, 10, unit="ns").start()
            self.loop.start()
        return self

    async def reset(self, cycles: int = 4):
        await self.loop.reset(cycles)
        got = self.read_counters()
        nz = {k: v for k, v in got.items() if v}
        if nz:
            raise TbError(f"counters not 0 after reset: {nz}")

    # ------------------------------------------------------------------ errors
    def _err(self, msg: str):
        m = self.model
        ctxs = "; ".join(f"ctx{c.idx}: ctrl={c.ctrl} idx={c.index[0]:#x}/{c.index[1]:#x} "
                         f"st={c.status} q={len(c.queue)}" for c in m.ctx[:8])
        raise TbError(f"[{self.config}/{self.name} cycle {self.loop.cycle}] {msg}\n  model: "
                      f"{ctxs}\n  outstanding: {list(m.outstanding.values())[:8]}")

    # ------------------------------------------------------------------ per cycle
    def _on_cycle(self, cycle: int):
        m = self.model
        m.now = cycle
        try:
            self._step(cycle)
        except ModelError as e:
            self._err(str(e))

    def _step(self, cycle: int):
        m = self.model
        # 1. a write presented on mem_req for the first time
        v = int(self.h_mreq_v.value)
        if self.presented is not None and not v:
            self._err(f"mem_req withdrawn while ready was low (presented at cycle "
                      f"{self.presented[0]}: {_fmt(self.presented[1])})")
        if v and self.presented is None:
            f = {k: int(h.value) for k, h in self.h_mreq.items()}
            if not f["write"]:
                self._err(f"mem_req read {_fmt(f)}: the logger only writes")
            if cycle - self.csr_write_cycle in (1, 2):
                self._err(f"write {_fmt(f)} presented {cycle - self.csr_write_cycle} "
                          f"cycle(s) after a CSR write was applied (doc: no write is loaded "
                          f"in the cycle a CSR write applies, nor in the next one)")
            self.presented = (cycle, f)
            w = m.write(f["addr"], f["wdata"], f["id"], f["wmask"], presented=cycle)
            if self.trace:
                self.log.info("write %s", w)
            self.writes_presented += 1
            if self.keep_write_cycles:
                self.write_cycles.append(cycle)
            n = len(m.outstanding)
            if n > self.max_outstanding_seen:
                self.max_outstanding_seen = n
            self.cov.hit(f"write.{PART_NAMES[w.part]}")
            if w.index == 0:
                self.cov.hit(f"write.{PART_NAMES[w.part]}.index0")
        for a in self._fired:
            if self.presented is None:
                self._err(f"memory took {a} but no write was presented")
            f = self.presented[1]
            if (a.id, a.addr, a.write, a.wdata, a.wmask) != (f["id"], f["addr"], f["write"],
                                                             f["wdata"], f["wmask"]):
                self._err(f"mem_req changed while ready was low: presented {_fmt(f)} at cycle "
                          f"{self.presented[0]}, taken as {a}")
            if cycle > self.presented[0]:
                self.cov.hit("mem_req.held")
            self.presented = None
        self._fired.clear()
        if self.dbg is not None:
            self._check_dbg(cycle)
        # 2. the CSR access accepted last cycle applies now (the CSR input stage): its
        # csr_resp is this cycle's (one cycle after the request); a read returns the
        # registers now; a write is applied at step 6
        rv = int(self.h_csr_resp_v.value)
        t, self.csr_staged = self.csr_staged, self.csr.accepted
        if t is not None and not rv:
            self._err(f"no csr_resp one cycle after the request {_fmt(t)}")
        if t is None and rv:
            self._err("csr_resp valid without a request in the cycle before")
        if t is not None and not t["write"]:
            self._csr(t, cycle)
            self._csr_check()
        # 3. exits / guest interrupts taken
        ev_, vm_, rs_ = self.h_exit
        if int(ev_.value) and self.exit_ready.ready_now:
            vmid, reason = int(vm_.value), int(rs_.value)
            m.take_exit(vmid, reason)
            self.exits_seen += 1
            self.cov.hit("exit")
            for h in self.on_exit:
                h(vmid, cycle)
        iv, ivm, ivec = self.h_irq
        if int(iv.value) and self.irq_ready.ready_now:
            vmid, vec = int(ivm.value), int(ivec.value)
            m.take_irq(vmid, vec)
            self.irqs_seen += 1
            self.cov.hit("guestIrq")
            for h in self.on_irq:
                h(vmid, cycle)
        # 4. memory responses
        for a in self._resps:
            m.response(a.id, a.error)
            if a.error:
                self.cov.hit("mem.writeError")
        self._resps.clear()
        for _ in range(self.mem.bogus_sent - getattr(self, "_bogus_seen", 0)):
            m.response(-1, 0)                           # counted as badMemResps
        self._bogus_seen = self.mem.bogus_sent
        # 5. dirty
        d = self.dirty
        if d is not None:
            if d.valid_now and not d.ready_now:
                self.stalls += 1
                vm = d.cur["vmid"] if d.cur is not None else -1
                if not m.recently_full(vm, self.stall_slack):
                    self._err(f"dirty_ready low for {_fmt(d.cur)} but the model's queue of "
                              f"context {vm} holds {m.occupancy(vm)} < queueDepth "
                              f"{self.p.queueDepth} (doc: low only when the event's own "
                              f"context queue is full)")
                self.cov.hit("dirty.stall")
            ev = d.accepted
            self._dec_ctx = None
            if ev is not None:
                kind, e = m.accept(ev["vmid"], ev["gpa"], ev["gva"], ev["asid"])
                if kind == "queued":
                    self._dec_ctx = ev["vmid"]
                if self.trace:
                    self.log.info("event %s -> %s (q %d)", e, kind, m.occupancy(ev["vmid"]))
                ev["_kind"], ev["_event"] = kind, e
                self.cov.hit(f"event.{kind}")
        # 6. CSR write (requested last cycle)
        if t is not None and t["write"]:
            if not self._csr(t, cycle):        # (a bad address changes nothing)
                self.csr_write_cycle = cycle
            self._csr_check()
        for hc in self.holds:
            if hc.violations:
                self._err(hc.violations[0])

    def _check_dbg(self, cycle: int):
        """formalPorts: the index / address registers equal the model's every cycle (both
        change only with a presented write or a CSR write of an earlier cycle), and each queue
        holds at least what the model's does (the model leaves eagerly)."""
        m = self.model
        for c, (pi, gi, pa, ga, qc) in enumerate(self.dbg):
            mc = m.ctx[c]
            got = (int(pi.value), int(gi.value), int(pa.value) << 12, int(ga.value) << 12)
            exp = (mc.index[PML], mc.index[GUEST], m.buffer_base(c, PML),
                   m.buffer_base(c, GUEST))
            if got != exp:
                self._err(f"dbg ports of ctx{c} (pmlIndex, gpmlIndex, pmlAddr, gpmlAddr) = "
                          f"{tuple(hex(x) for x in got)}, model {tuple(hex(x) for x in exp)}")
            # with the decide stage (inputStage, or the filter), the event accepted last cycle
            # is in the model's queue but enters the RTL's queue only this cycle
            held = int(self.staged and self._dec_ctx == c)
            if int(qc.value) + held < len(mc.queue):
                self._err(f"dbg_queueCount_{c} = {int(qc.value)} (+{held} in the decide stage) "
                          f"< the model's {len(mc.queue)} queued events")

    def _regname(self, addr: int) -> str:
        d = self.model.decode(addr)
        return f"ctx{d[0]}.{d[1].name}" if d else f"bad {addr:#x}"

    def _csr(self, t: dict, cycle: int):
        m = self.model
        d = m.decode(t["addr"])
        rdata, err = m.csr(t["addr"], t["write"], t["wdata"])
        allowed = {rdata}
        if d is not None and not t["write"] and d[1].name == "STATUS":
            allowed = m.status_values(d[0], cycle - self.status_lag, cycle)
        self.csr_expect = (cycle, t, (allowed, err))
        if self.trace:
            self.log.info("csr %s %s %#x -> %s err %d", self._regname(t["addr"]),
                          "W" if t["write"] else "R", t["wdata"], allowed, err)
        self.cov.hit("csr.bad" if err else f"csr.{'w' if t['write'] else 'r'}."
                     f"{d[1].name if d else '?'}")
        return err

    def _csr_check(self):
        """The staged access's csr_resp (this cycle) against the model's answer."""
        exp, self.csr_expect = self.csr_expect, None
        rdata, error = int(self.h_csr_resp[0].value), int(self.h_csr_resp[1].value)
        allowed, eerr = exp[2]
        txn = exp[1]
        ok = rdata in allowed
        if not ok and len(allowed) > 1:
            # STATUS: each bit on its own may lag the eager model (bits set and cleared
            # in one model cycle can show in either order in the DUT)
            ok = all(((rdata >> b) & 1) in {(v >> b) & 1 for v in allowed}
                     for b in range(64))
        if error != eerr or not ok:
            self._err(f"csr_resp to {_fmt(txn)} ({self._regname(txn['addr'])}): rdata "
                      f"{rdata:#x} error {error}; model: rdata "
                      f"{' or '.join(hex(x) for x in sorted(allowed))} error {eerr}")
        txn["_rdata"], txn["_error"], txn["_done"] = rdata, error, True

    # ------------------------------------------------------------------ API: CSRs
    def addr(self, ctx: int, name: str) -> int:
        return self.R.addr(ctx, name)

    def csr_send(self, addr: int, write: int, wdata: int = 0) -> dict:
        return self.csr.send(dict(addr=addr, write=write, wdata=wdata))

    async def csr_op(self, addr: int, write: int, wdata: int = 0, timeout: int = 5000):
        t = self.csr_send(addr, write, wdata)
        await self.loop.wait_until(lambda: t.get("_done"), timeout,
                                   f"csr_resp to {_fmt(t)}")
        return t["_rdata"], t["_error"]

    async def read(self, ctx: int, name: str) -> int:
        v, e = await self.csr_op(self.addr(ctx, name), 0)
        if e:
            self._err(f"read of ctx{ctx}.{name} answered error")
        return v

    async def write(self, ctx: int, name: str, value: int):
        _, e = await self.csr_op(self.addr(ctx, name), 1, value)
        if e:
            self._err(f"write of ctx{ctx}.{name} answered error")

    async def setup_ctx(self, ctx: int, *, pml_addr=None, pml_index=None, gpml_addr=None,
                        gpml_index=None, track_asid=None, irq_vector=None, ctrl=None):
        for name, v in (("PML_ADDR", pml_addr), ("PML_INDEX", pml_index),
                        ("GPML_ADDR", gpml_addr), ("GPML_INDEX", gpml_index),
                        ("TRACK_ASID", track_asid), ("IRQ_VECTOR", irq_vector),
                        ("CTRL", ctrl)):
            if v is not None:
                await self.write(ctx, name, v)

    # ------------------------------------------------------------------ API: events
    def event(self, vmid: int, gpa: int, gva: int = 0, asid: int = 0) -> dict:
        return self.dirty.send(dict(gpa=gpa, gva=gva, vmid=vmid, asid=asid))

    @property
    def quiet(self) -> bool:
        """Nothing left that the DUT could still do by itself: inputs idle, no write
        outstanding, every raised exit delivered, and every queued head held (index out of
        range) or no queue at all."""
        m = self.model
        if not (self.dirty is None or self.dirty.idle) or not self.csr.idle:
            return False
        if self.csr_staged is not None or m.outstanding or self.presented is not None:
            return False
        if m.pending_exits or m.pending_irqs or not self.mem.idle:
            return False
        for x in m.maybe_exits:         # a merged re-raise the DUT offers after all
            v, vm = (self.h_exit if x.kind == PML else self.h_irq)[:2]
            if int(v.value) and int(vm.value) == x.vmid:
                return False
        return not m.eligible()

    async def settle(self, timeout: int = 20000, extra: int = 4):
        """Until the logger has been quiet for ``extra`` consecutive cycles: the perf counters
        are registers that count a CSR access the cycle after its response, when the model
        already has (a background reader's bad access answering in the last cycle of a fixed
        wait left them one behind: seed 794177666)."""
        await self.loop.wait_held(lambda: self.quiet, extra, timeout, "the logger quiet")

    def read_counters(self) -> dict:
        return {c: int(getattr(self.dut, f"{self.pre}perf_{c}").value) for c in COUNTERS}

    def expected_counters(self) -> dict:
        exp = dict(self.model.counters)
        exp["stallCycles"] = self.stalls
        return exp

    async def check_counters(self, settle: bool = True):
        if settle:
            await self.settle()
        got = self.read_counters()
        exp = self.expected_counters()
        diff = {k: (got[k], exp[k]) for k in COUNTERS if got[k] != exp[k]}
        if diff:
            self._err("perf counters differ (dut, model): " +
                      ", ".join(f"{k}: {a} != {b}" for k, (a, b) in diff.items()))
        return got

    async def finish(self, counters: bool = True):
        if counters:
            await self.check_counters()
            if self.axi:
                self.mem.check_counters(self.dut)
                self.csr.check_counters(self.dut)
        self.loop.check()
        m = self.model
        if m.pending_exits or m.pending_irqs:
            self._err(f"raised but never delivered: exits {[x.vmid for x in m.pending_exits]}, "
                      f"guest interrupts {[x.vmid for x in m.pending_irqs]}")

    # ------------------------------------------------------------------ buffers
    def buffer_words(self, ctx: int, part: int, hi: int, lo: int = 0) -> list[int]:
        """Memory words of the buffer from index ``hi`` down to ``lo`` (log order)."""
        base = self.model.buffer_base(ctx, part)
        return [self.memory.read(base + 8 * i) for i in range(hi, lo - 1, -1)]

    def poison(self, ctx: int, part: int, entries: int | None = None):
        base = self.model.buffer_base(ctx, part)
        for i in range(entries or self.p.entries):
            self.memory.write(base + 8 * i, POISON)


# ----------------------------------------------------------------------------- software
class SoftwareAgent:
    """The hypervisor / guest side: owns every buffer, and on each exit (guest interrupt)
    drains that buffer the way the doc's protocol says -- wait for the buffer's writes to be
    answered, read INDEX (out of range) and STATUS (full bit set), read the buffer from the
    memory model and check it, poison it, maybe move it, write INDEX, write ACK.

    Independently of the scoreboard it checks end to end that every part queued for a buffer
    appears exactly once in that buffer's memory, in acceptance order (``expect`` FIFOs fed
    from the model's event classification), except entries whose write the memory answered
    with an error (the buffer slot keeps its poison and the event is not retried).
    """

    def __init__(self, env: PmlEnv, rng, *, move_p: float = 0.0, short_p: float = 0.0,
                 auto: bool = True):
        self.env, self.rng = env, rng
        self.m = env.model
        C = env.p.contexts
        self.expect = {(c, p): deque() for c in range(C) for p in (PML, GUEST)}
        self.start = {(c, p): None for c in range(C) for p in (PML, GUEST)}
        self.rounds = {(c, p): {} for c in range(C) for p in (PML, GUEST)}  # index -> Write
        self.drained = {(c, p): 0 for c in range(C) for p in (PML, GUEST)}
        self.lost = 0                  # entries lost to write errors (seen as poison)
        self.work: deque = deque()
        self.busy = False
        self.auto = auto
        self.move_p, self.short_p = move_p, short_p
        self.moved = False
        self.handled = 0
        self.used_pages: set = set()
        self.reserve = None
        self._task = None
        self.m.on_event.append(self._on_event)
        self.m.on_write.append(self._on_write)
        self.m.on_drop.append(self._on_drop)
        env.on_exit.append(lambda v, c: self.work.append((v, PML)))
        env.on_irq.append(lambda v, c: self.work.append((v, GUEST)))

    # -- bookkeeping
    def _on_event(self, ev, kind):
        if kind not in ("queued",):
            return
        for part in (PML, GUEST):
            if ev.parts[part] == "pending":
                self.expect[(ev.vmid, part)].append((ev.seq, self.m.entry_data(ev, part)))

    def _on_drop(self, ev, part):
        q = self.expect[(ev.vmid, part)]
        for i, (seq, _) in enumerate(q):
            if seq == ev.seq:
                del q[i]
                return

    def _on_write(self, w):
        self.rounds[w.buffer][w.index] = w

    @property
    def idle(self) -> bool:
        return not self.work and not self.busy

    def new_page(self) -> int:
        """A fresh 4 KiB buffer page (``self.reserve(addr) -> bool`` may veto it, e.g. to
        keep buffers away from page tables)."""
        top = 1 << self.env.p.paBits
        while True:
            a = self.rng.randrange(1 << 20, top, 0x1000)
            if a not in self.used_pages and (self.reserve is None or self.reserve(a)):
                self.used_pages.add(a)
                return a

    def start_index(self) -> int:
        E = self.env.p.entries
        if self.short_p and self.rng.random() < self.short_p:
            return self.rng.randrange(E)
        return E - 1

    # -- configuration
    async def configure(self, ctx: int, *, ctrl: int, track_asid: int = 0, vector: int = 0,
                        pml_start: int | None = None, gpml_start: int | None = None):
        env = self.env
        pa, ga = self.new_page(), self.new_page()
        ps = self.start_index() if pml_start is None else pml_start
        gs = self.start_index() if gpml_start is None else gpml_start
        await env.setup_ctx(ctx, pml_addr=pa, pml_index=ps, gpml_addr=ga, gpml_index=gs,
                            track_asid=track_asid, irq_vector=vector)
        self.start[(ctx, PML)], self.start[(ctx, GUEST)] = ps, gs
        env.poison(ctx, PML)
        env.poison(ctx, GUEST)
        await env.write(ctx, "CTRL", ctrl)

    # -- draining
    async def drain(self, ctx: int, part: int, *, full: bool, restart: bool = True,
                    ack: bool = True):
        env, m = self.env, self.m
        key = (ctx, part)
        idx_name = "PML_INDEX" if part == PML else "GPML_INDEX"
        addr_name = "PML_ADDR" if part == PML else "GPML_ADDR"
        bit = 1 if part == PML else 2
        # this drain serves every exit / interrupt of this buffer raised before it
        self.work = deque(w for w in self.work if w != key)
        await env.loop.wait_until(lambda: m.outstanding_for(ctx, part) == 0, 20000,
                                  f"the writes of ctx{ctx}.{PART_NAMES[part]} to be answered")
        idx = await env.read(ctx, idx_name)
        st = await env.read(ctx, "STATUS")
        s = self.start[key]
        E = env.p.entries
        if full:
            if idx < E:
                env._err(f"ctx{ctx}.{PART_NAMES[part]}: exit / interrupt taken but INDEX is "
                         f"{idx:#x} (in range)")
            if not st & bit:
                env._err(f"ctx{ctx}.{PART_NAMES[part]}: exit / interrupt taken but STATUS "
                         f"{st:#x} lacks bit {bit}")
        n = 0 if s is None or s >= E else (s + 1 if idx >= E else s - idx)
        if n:
            words = env.buffer_words(ctx, part, s, s - n + 1)
            rnd = self.rounds[key]
            for k, word in enumerate(words):
                i = s - k
                if not self.expect[key]:
                    env._err(f"ctx{ctx}.{PART_NAMES[part]}[{i}] = {word:#x}: no event owed "
                             f"to this buffer (duplicate or invented entry)")
                seq, data = self.expect[key].popleft()
                w = rnd.get(i)
                if word == POISON:
                    if w is None or not w.error:
                        env._err(f"ctx{ctx}.{PART_NAMES[part]}[{i}] never written (event "
                                 f"#{seq}, {data:#x} lost); write there: {w}")
                    self.lost += 1
                    env.cov.hit("agent.poison_after_error")
                elif word != data:
                    env._err(f"ctx{ctx}.{PART_NAMES[part]}[{i}] = {word:#x}, expected event "
                             f"#{seq}'s {data:#x} (acceptance order)")
            self.drained[key] += n
        self.rounds[key] = {}
        env.poison(ctx, part)
        if not restart:
            return idx, st
        # the first restart always moves (agent.move_buffer is a required bin: at 10% per
        # exit a short run could miss it), later ones with probability move_p
        if self.move_p and (not self.moved or self.rng.random() < self.move_p):
            self.moved = True
            await env.write(ctx, addr_name, self.new_page())
            env.poison(ctx, part)
            env.cov.hit("agent.move_buffer")
        ns = self.start_index()
        await env.write(ctx, idx_name, ns)
        self.start[key] = ns
        if ack:
            await env.write(ctx, "ACK", bit | (4 if st & 4 else 0))
        self.handled += 1
        return idx, st

    async def _run(self):
        try:
            while True:
                if self.auto and self.work:
                    self.busy = True
                    ctx, part = self.work.popleft()
                    await self.drain(ctx, part, full=True)
                    self.busy = False
                else:
                    await self.env.loop.cycles(1)
        except BaseException as e:
            if not isinstance(e, (GeneratorExit,)) and self.env.loop.error is None \
                    and type(e).__name__ != "CancelledError":
                self.env.loop.error = e
            raise

    def start_task(self):
        self._task = cocotb.start_soon(self._run())
        return self

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def quiesce(self, timeout: int = 50000):
        env = self.env
        for _ in range(3):
            await env.loop.wait_until(lambda: env.quiet and self.idle, timeout,
                                      "the logger and the software to go quiet")
            await env.loop.cycles(4)
            if env.quiet and self.idle:
                return
        env._err("never quiet")

    async def final_check(self):
        """Quiesce, read every buffer's partial content, and check that nothing is owed."""
        await self.quiesce()
        env = self.env
        for c in range(env.p.contexts):
            for part in (PML, GUEST):
                if self.start[(c, part)] is None:
                    continue
                await self.drain(c, part, full=False, restart=False)
                q = self.expect[(c, part)]
                held = sum(1 for e in self.m.ctx[c].queue if e.pending(part))
                if len(q) != held:
                    env._err(f"ctx{c}.{PART_NAMES[part]}: {len(q)} entries owed after the final "
                             f"drain, {held} held in the queue: lost entries "
                             f"{[hex(d) for _, d in list(q)[:8]]}")
