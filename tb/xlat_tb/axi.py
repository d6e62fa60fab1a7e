"""The `*_axi` tops in the testbenches (docs/packaging.md, "AXI"): the block's own environment
runs unchanged on the AXI top, with the memory behind a cocotbext-axi AXI4 slave and the CSR
traffic through cocotbext-axi's AxiLiteMaster.

Why this shape: every scoreboard of the block (walker_env, pml_env) checks the block at its
memory and CSR ports, cycle by cycle. On the AXI top those ports are inside the wrapper
(instance ``block``, ``manifest["axi"]["instance"]``), still visible to the simulator, so the
environment keeps observing them there, while the stimulus and the memory go through the
wrapper's AXI ports. Each wrapper channel is then checked end to end against the port it wraps:

* ``AxiMemPort`` (in place of ``xlat_tb.memory.MemoryResponder``): cocotbext-axi's channel
  models (AW, W, AR sinks; B, R sources) with a pause generator on each, serving the
  testbench's ``SparseMemory`` with a random latency per access, responses out of order across
  ids (in order per id and direction, the AXI rule), SLVERR or DECERR for injected errors.
  Every AXI request must be the memory-port request the block made (id, address, data,
  ``wstrb`` = ``wmask``, one 8-byte INCR beat), every memory-port response the AXI response
  the memory gave (id, data, ``error`` = SLVERR/DECERR). The log, ``on_request`` /
  ``on_response`` (at the memory port's handshakes, as MemoryResponder's) and the error knobs
  are MemoryResponder's. A write changes memory when the block takes its response
  (MemoryResponder's default ``write_visible="response"``).
* ``AxiLiteCsr`` (in place of the ``csr_req`` DecoupledSource): each access through
  AxiLiteMaster, one at a time; ``accepted`` is the access the block's ``csr_req`` takes this
  cycle, so the environment's CSR checks stay as they are; the AXI-Lite answer must equal the
  block's ``csr_resp`` (data, ``error`` = SLVERR). Every access it makes has full strobes or a
  misaligned address, so each reaches ``csr_req`` (the wrapper's one refusal, a partial write
  to an aligned register, is axi/tests_pml.py's).
"""

from __future__ import annotations

import logging
import random
from collections import deque
from dataclasses import replace

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiBus, AxiLiteBus, AxiLiteMaster, AxiResp
from cocotbext.axi.axi_channels import AxiARSink, AxiAWSink, AxiBSource, AxiRSource, AxiWSink

from models.walker import SparseMemory

from .cycle import TbError
from .manifest import Manifest, Port
from .memory import MemAccess, is_error
from .monitors import DecoupledMonitor, ValidMonitor

OKAY, SLVERR, DECERR = int(AxiResp.OKAY), int(AxiResp.SLVERR), int(AxiResp.DECERR)


def axi_info(man: Manifest) -> dict | None:
    """The manifest's ``axi`` entry (None: a plain top)."""
    return man.raw.get("axi")


def inner_view(man: Manifest) -> Manifest:
    """The AXI top's manifest with the wrapped block's memory and CSR ports added back (their
    widths from the ``axi`` entry, directions as the block has them), so that an environment
    written for the block finds every port it checks; they are read on the instance
    (``inner(dut, man)``), the rest on the top."""
    ax = axi_info(man)
    ports = dict(man.ports)

    def add(name, direction, width):
        ports[name] = Port(name, direction, width)
    if ax.get("memory"):
        i, a = ax["idBits"], ax["addrBits"]
        for n, d, w in (("mem_req_valid", "output", 1), ("mem_req_ready", "input", 1),
                        ("mem_req_bits_id", "output", i), ("mem_req_bits_addr", "output", a),
                        ("mem_req_bits_write", "output", 1), ("mem_req_bits_wdata", "output", 64),
                        ("mem_req_bits_wmask", "output", 8), ("mem_resp_valid", "input", 1),
                        ("mem_resp_ready", "output", 1), ("mem_resp_bits_id", "input", i),
                        ("mem_resp_bits_rdata", "input", 64), ("mem_resp_bits_error", "input", 1)):
            add(n, d, w)
    if ax["registers"] == "csr":
        for n, d, w in (("csr_req_valid", "input", 1), ("csr_req_ready", "output", 1),
                        ("csr_req_bits_addr", "input", ax["liteAddrBits"]),
                        ("csr_req_bits_write", "input", 1), ("csr_req_bits_wdata", "input", 64),
                        ("csr_resp_valid", "output", 1), ("csr_resp_bits_rdata", "output", 64),
                        ("csr_resp_bits_error", "output", 1)):
            add(n, d, w)
    return replace(man, ports=ports)


def inner(dut, man: Manifest):
    """The wrapped block's instance inside the AXI top."""
    return getattr(dut, axi_info(man)["instance"])


def lite_master(dut, prefix: str, rng, pause_p: float) -> AxiLiteMaster:
    """cocotbext-axi's AxiLiteMaster on ``<prefix>_*`` with a pause generator on each channel
    (its per-access INFO lines off: thousands in a random run)."""
    m = AxiLiteMaster(AxiLiteBus.from_prefix(dut, prefix), dut.clock, dut.reset)
    for ch in (m.write_if.aw_channel, m.write_if.w_channel, m.write_if.b_channel,
               m.read_if.ar_channel, m.read_if.r_channel):
        ch.set_pause_generator(pauses(rng, pause_p))
    m.write_if.log.setLevel(logging.WARNING)
    m.read_if.log.setLevel(logging.WARNING)
    return m


def pauses(rng: random.Random, p: float):
    """A cocotbext-axi pause generator: each cycle paused with probability ``p``."""
    while True:
        yield rng.random() < p


class AxiMemPort:
    """The memory behind ``m_axi_*`` (see the module text); a CycleLoop component."""

    def __init__(self, dut, block, *, mem, rng, fields_req, latency=(1, 6), pause_p=0.3,
                 decerr_p=0.5, max_per_id=None, error_addrs=None, error_p=0.0, error_fn=None,
                 prefix="m_axi", name="m_axi"):
        self.dut, self.name = dut, name
        # its own stream, seeded from the environment's without drawing from it
        self.rng = random.Random(hash(rng.getstate()))
        self.mem = mem if mem is not None else SparseMemory()
        self.mem.journal = True
        self.latency, self.decerr_p, self.max_per_id = latency, decerr_p, max_per_id
        self.error_addrs, self.error_p, self.error_fn = set(error_addrs or ()), error_p, error_fn
        self.errors_enabled = True
        self.addr_bits = fields_req["addr"]
        bus = AxiBus.from_prefix(dut, prefix)
        clk, rst = dut.clock, dut.reset
        self.aw = AxiAWSink(bus.write.aw, clk, rst)
        self.w = AxiWSink(bus.write.w, clk, rst)
        self.b = AxiBSource(bus.write.b, clk, rst)
        self.ar = AxiARSink(bus.read.ar, clk, rst)
        self.r = AxiRSource(bus.read.r, clk, rst)
        for ch in (self.aw, self.w, self.b, self.ar, self.r):
            ch.set_pause_generator(pauses(rng, pause_p))
        self.req_mon = DecoupledMonitor(block, "mem_req", fields_req)
        self.resp_mon = DecoupledMonitor(block, "mem_resp", {"id": fields_req["id"], "rdata": 64,
                                                               "error": 1})
        self.loop = None
        self.on_request, self.on_response = [], []
        self.log: list[MemAccess] = []
        self.bogus_sent = 0                  # inject_response's, taken by the block
        self.bogus_taken: list[MemAccess] = []
        self.cur = None                      # MemoryResponder's presented response: none here
        self.resp_codes = {OKAY: 0, SLVERR: 0, DECERR: 0}
        # hold[write]: answers of that direction wait (directed tests line up an R and a B)
        self.hold = {0: False, 1: False}
        self.held = {0: 0, 1: 0}             # answers due and waiting on hold
        self.h_rb = [getattr(dut, f"{prefix}_{n}") for n in ("rvalid", "bvalid", "rready", "bready")]
        self.h_resp_ready = getattr(block, "mem_resp_ready")
        self.h_req = [getattr(block, "mem_req_ready")]
        self.h_issue = [getattr(dut, f"{prefix}_{n}") for n in
                        ("arvalid", "arready", "awvalid", "awready", "wvalid", "wready")]
        self.reset_state()
        cocotb.start_soon(self._reads())
        cocotb.start_soon(self._writes())

    def reset_state(self):
        self.waiting = {0: deque(), 1: deque()}   # accepted on mem_req, not yet seen on AXI
        self.queues = {}                          # (write, id) -> accesses in AXI order
        self.sent: list[MemAccess] = []           # AXI response sent, not yet on mem_resp
        self.outstanding = 0
        self.b_first = False                      # the adapter's R / B order (docs/packaging.md)
        self.conflicts: list[str] = []            # winner ("R" / "B") of each R + B cycle
        # the adapter's skid queue as the rule sees it: taken on mem_req, not yet issued on AXI
        # (a write is issued when both its AW and its W have been taken), head first
        self.skid: deque[int] = deque()
        self.skid_aw = self.skid_w = False

    @property
    def idle(self) -> bool:
        return self.outstanding == 0

    def set_pause(self, p: float):
        for ch in (self.aw, self.w, self.b, self.ar, self.r):
            ch.clear_pause_generator()
            ch.pause = False              # (clearing the generator keeps its last value)
            if p:
                ch.set_pause_generator(pauses(self.rng, p))

    def reads(self, id: int | None = None) -> list[MemAccess]:
        return [a for a in self.log if not a.write and (id is None or a.id == id)]

    def writes(self, id: int | None = None) -> list[MemAccess]:
        return [a for a in self.log if a.write and (id is None or a.id == id)]

    def _fail(self, msg: str):
        err = TbError(f"{self.name}: {msg}")
        if self.loop is not None and self.loop.error is None:
            self.loop.error = err
        raise err

    def inject_response(self, id: int, rdata: int = 0, error: int = 0):
        """An R nobody asked for (MemoryResponder's bogus response; on AXI a slave's protocol
        error): the adapter passes it on, the block drops and counts it."""
        a = MemAccess(-1, self.loop.cycle if self.loop else 0, id, 0, 0, 0, 0, error=error,
                      rdata=rdata, code=SLVERR if error else OKAY)
        a.bogus = True
        self.sent.append(a)
        t = self.r._transaction_obj()
        t.rid, t.rdata, t.rresp, t.rlast = id, rdata, a.code, 1
        self.r.send_nowait(t)

    # ------------------------------------------------------------------ the memory port
    def sample(self, cycle: int):
        if self.loop is not None and self.loop.in_reset:
            return
        self._check_order()
        self._check_skid()
        self.req_mon.sample(cycle)
        self.resp_mon.sample(cycle)
        q, r = self.req_mon.item, self.resp_mon.item
        if r is not None:
            self._took_response(r, cycle)
        if q is not None:
            self.skid.append(q["write"])
            self._took_request(q, cycle)

    def _check_order(self):
        """R and B valid in one cycle (the block ready): the one that waited at the last such
        cycle goes first, R at the first after reset (docs/packaging.md, "AXI")."""
        rv, bv, rr, br = (int(h.value) for h in self.h_rb)
        if not (rv and bv and int(self.h_resp_ready.value)):
            return
        take_r = not self.b_first
        if (rr, br) != (int(take_r), int(not take_r)):
            self._fail(f"R and B both valid: rready {rr} bready {br}, the order says "
                       f"{'R' if take_r else 'B'} (conflicts so far {self.conflicts})")
        self.b_first = take_r
        self.conflicts.append("R" if take_r else "B")

    def _check_skid(self):
        """The block's ``mem_req_ready`` is "fewer than two requests taken and not yet issued on
        AXI", from the state before this cycle (docs/packaging.md, "AXI": a registered skid, no
        AXI ``ready`` in the block's request path); then this cycle's AXI handshakes (the cycle's
        new request is added by ``sample``)."""
        ready = int(self.h_req[0].value)
        arv, arr, awv, awr, wv, wr = (int(h.value) for h in self.h_issue)
        if ready != int(len(self.skid) < 2):
            self._fail(f"mem_req_ready {ready} with {len(self.skid)} request(s) in the skid queue")
        if self.skid and not self.skid[0] and arv and arr:
            self.skid.popleft()
        elif self.skid and self.skid[0]:
            self.skid_aw |= bool(awv and awr)
            self.skid_w |= bool(wv and wr)
            if self.skid_aw and self.skid_w:
                self.skid.popleft()
                self.skid_aw = self.skid_w = False

    def _took_request(self, q: dict, cycle: int):
        a = MemAccess(len(self.log), cycle, q["id"], q["addr"], q["write"], q["wdata"], q["wmask"])
        if a.addr % 8:
            self._fail(f"unaligned address in {a}")
        if not a.write and a.wmask:
            self._fail(f"read with wmask {a.wmask:#x}: {a}")
        if self.max_per_id is not None:
            n = sum(1 for x in self.log[-64:] if x.id == a.id and x.resp_cycle is None)
            if n >= self.max_per_id:
                self._fail(f"id {a.id} already has {n} access(es) outstanding; new {a}")
        self.log.append(a)
        self.waiting[a.write].append(a)
        self.outstanding += 1
        for cb in self.on_request:
            cb(a, cycle)

    def _took_response(self, r: dict, cycle: int):
        a = next((x for x in self.sent if x.id == r["id"]), None)
        if a is None:
            self._fail(f"mem_resp id {r['id']} with no AXI response sent for it")
        self.sent.remove(a)
        if getattr(a, "bogus", False):
            self.bogus_sent += 1
            self.bogus_taken.append(a)
            return
        if r["error"] != int(a.code != OKAY):
            self._fail(f"mem_resp error {r['error']} for {a} answered {a.code} on AXI")
        if not a.write and not a.error and r["rdata"] != a.rdata:
            self._fail(f"mem_resp rdata {r['rdata']:#x} for {a}")
        if a.write and not a.error:
            a.old = self.mem.write(a.addr, a.wdata, a.wmask)
        a.resp_cycle = cycle
        self.outstanding -= 1
        for cb in self.on_response:
            cb(a, cycle)

    # ------------------------------------------------------------------ the AXI side
    def _match(self, write: int, id: int, addr: int, beat) -> MemAccess:
        kind = "AW" if write else "AR"
        a = next((x for x in self.waiting[write] if x.id == id), None)
        if a is None or a.addr != addr:
            self._fail(f"{kind} id {id} addr {addr:#x}: the memory port requested {a}")
        self.waiting[write].remove(a)
        p = "aw" if write else "ar"
        got = tuple(int(getattr(beat, p + f)) for f in ("len", "size", "burst"))
        if got != (0, 3, 1):
            self._fail(f"{kind} of {a}: len/size/burst {got}, not one 8-byte INCR beat (0, 3, 1)")
        a.error = int(is_error(self, a))
        a.code = OKAY if not a.error else DECERR if self.rng.random() < self.decerr_p else SLVERR
        self.queues.setdefault((write, id), deque()).append(a)
        return a

    async def _reads(self):
        while True:
            ar = await self.ar.recv()
            a = self._match(0, int(ar.arid), int(ar.araddr), ar)
            a.rdata = self.rng.getrandbits(64) if a.error else self.mem.read(a.addr)
            cocotb.start_soon(self._answer(a))

    async def _writes(self):
        while True:
            aw = await self.aw.recv()
            w = await self.w.recv()
            a = self._match(1, int(aw.awid), int(aw.awaddr), aw)
            if (int(w.wdata), int(w.wstrb), int(w.wlast)) != (a.wdata, a.wmask, 1):
                self._fail(f"W of {a}: wdata {int(w.wdata):#x} wstrb {int(w.wstrb):#04x} "
                           f"wlast {int(w.wlast)}")
            cocotb.start_soon(self._answer(a))

    async def _answer(self, a: MemAccess):
        await ClockCycles(self.dut.clock, self.rng.randint(*self.latency))
        q = self.queues[(a.write, a.id)]
        while q[0] is not a:                       # same id and direction: in request order
            await RisingEdge(self.dut.clock)
        if self.hold[a.write]:
            self.held[a.write] += 1
            while self.hold[a.write]:
                await RisingEdge(self.dut.clock)
            self.held[a.write] -= 1
        q.popleft()
        self.sent.append(a)
        self.resp_codes[a.code] += 1
        if a.write:
            t = self.b._transaction_obj()
            t.bid, t.bresp = a.id, a.code
            await self.b.send(t)
        else:
            t = self.r._transaction_obj()
            t.rid, t.rdata, t.rresp, t.rlast = a.id, a.rdata, a.code, 1
            await self.r.send(t)

    def check_counters(self, dut, prefix: str = ""):
        """The wrapper's memory counters against the responses the block took."""
        taken = [a for a in self.log if a.resp_cycle is not None] + self.bogus_taken
        exp = {"axiSlvErrs": sum(a.code == SLVERR for a in taken),
               "axiDecErrs": sum(a.code == DECERR for a in taken), "axiNoLast": 0}
        got = {k: int(getattr(dut, f"{prefix}perf_{k}").value) for k in exp}
        if got != exp:
            self._fail(f"wrapper counters (dut) {got} != (responses taken) {exp}")
        return got


class AxiLiteCsr:
    """The CSR accesses of an environment through ``s_axil_*`` (see the module text); a
    CycleLoop component with DecoupledSource's ``send`` / ``idle`` / ``accepted``."""

    def __init__(self, dut, block, *, rng, pause_p=0.3, prefix="s_axil", name="s_axil"):
        self.dut, self.name = dut, name
        self.master = lite_master(dut, prefix, rng, pause_p)
        self.mon = DecoupledMonitor(block, "csr_req", {"addr": 16, "write": 1, "wdata": 64})
        self.resp_mon = ValidMonitor(block, "csr_resp", ("rdata", "error"))
        self.h_order = [getattr(dut, f"{prefix}_{n}") for n in ("awvalid", "wvalid", "arvalid",
                                                                 "awready", "arready")]
        self.read_first = True               # the slave's write / read order (docs/packaging.md)
        self.conflicts: list[str] = []       # winner ("R" / "W") of each cycle both were valid
        self.foreign: list[dict] = []        # accesses a test makes on ``master`` directly
        self.foreign_order: list[dict] = []  # ... in the order csr_req took them
        self.on_accept = []                  # DecoupledSource's callbacks(txn, cycle)
        self.loop = None
        self.queue: deque[dict] = deque()
        self.inflight: dict | None = None
        self.accepted: dict | None = None
        self.slverr = 0                      # every SLVERR answer
        self._worker = None

    def reset_state(self):
        self.accepted = self.accepted_last = None
        self.read_first = True

    def set_pause(self, p: float):
        m = self.master
        for ch in (m.write_if.aw_channel, m.write_if.w_channel, m.write_if.b_channel,
                   m.read_if.ar_channel, m.read_if.r_channel):
            ch.clear_pause_generator()
            ch.pause = False              # (clearing the generator keeps its last value)
            if p:
                ch.set_pause_generator(pauses(random.Random(0), p))

    def send(self, txn: dict) -> dict:
        self.queue.append(txn)
        if self._worker is None or self._worker.done():
            self._worker = cocotb.start_soon(self._run())
        return txn

    @property
    def idle(self) -> bool:
        return not self.queue and self.inflight is None

    def _fail(self, msg: str):
        err = TbError(f"{self.name}: {msg}")
        if self.loop is not None and self.loop.error is None:
            self.loop.error = err
        raise err

    def sample(self, cycle: int):
        self.accepted = None
        if self.loop is not None and self.loop.in_reset:
            return
        self._check_order()
        self.resp_mon.sample(cycle)
        r = self.resp_mon.item
        if r is not None:                   # the port's answer to the access it took
            t = self.accepted_last
            if t is None:
                self._fail(f"csr_resp {r} with no access taken")
            t["_port"] = (r["rdata"], r["error"])
            self.accepted_last = None
        self.mon.sample(cycle)
        got = self.mon.item
        if got is None:
            return
        t = self.inflight
        if t is None or t.get("_inner"):
            t = next((x for x in self.foreign if self._is(got, x)), None)
            if t is None:
                self._fail(f"csr_req took {got} with no AXI-Lite access in flight")
            self.foreign.remove(t)
            self.foreign_order.append(t)
        elif not self._is(got, t):
            self._fail(f"csr_req took {got} for the AXI-Lite access {t}")
        t["_inner"] = True
        self.accepted = self.accepted_last = t
        for cb in self.on_accept:
            cb(t, cycle)

    @staticmethod
    def _is(got: dict, t: dict) -> bool:
        """Whether csr_req's ``got`` is the AXI-Lite access ``t`` (a misaligned write's bytes
        sit in their byte lanes)."""
        off = t["addr"] % 8
        lanes = (t.get("wdata", 0) << 8 * off) & ((1 << 64) - 1)
        return (got["addr"], got["write"]) == (t["addr"], t["write"]) and \
            (not t["write"] or got["wdata"] == lanes)

    def _check_order(self):
        """AW + W and AR valid in one idle cycle: they alternate, the read first after reset."""
        awv, wv, arv, awr, arr = (int(h.value) for h in self.h_order)
        if not (awv and wv and arv and (awr or arr)):
            return
        want_r = self.read_first
        if (arr, awr) != (int(want_r), int(not want_r)):
            self._fail(f"write and read both valid: awready {awr} arready {arr}, the order "
                       f"says {'R' if want_r else 'W'} (so far {self.conflicts})")
        self.read_first = not want_r
        self.conflicts.append("R" if want_r else "W")

    async def _run(self):
        while self.queue:
            t = self.inflight = self.queue.popleft()
            t.setdefault("wdata", 0)
            if t["write"]:
                r = await self.master.write(t["addr"], t["wdata"].to_bytes(8, "little")[:8 - t["addr"] % 8])
                data = None
            else:
                # one beat: a misaligned access stops at its word's end (AxiLiteMaster would
                # split 8 bytes into two), so the port answers exactly one access
                r = await self.master.read(t["addr"], 8 - t["addr"] % 8)
                data = int.from_bytes(r.data, "little")
            resp = int(r.resp)
            # every access reaches the port (full strobes, or misaligned: the port's to refuse)
            if not t.get("_inner"):
                self._fail(f"{t} answered {resp} but never reached csr_req")
            if "_port" not in t:
                self._fail(f"{t} answered {resp} on AXI-Lite before csr_resp")
            rdata, error = t["_port"]           # (the environment checks them with its model)
            if resp != (SLVERR if error else OKAY):
                self._fail(f"{t}: AXI-Lite answer {resp}, csr_resp error {error}")
            if data is not None and data != rdata >> 8 * (t["addr"] % 8):
                self._fail(f"{t}: AXI-Lite rdata {data:#x}, csr_resp rdata {rdata:#x}")
            self.slverr += resp == SLVERR
            self.inflight = None

    def check_counters(self, dut, prefix: str = ""):
        got = int(getattr(dut, f"{prefix}perf_axilErrors").value)
        if got != self.slverr:
            self._fail(f"perf_axilErrors {got} != SLVERR answers {self.slverr}")
        return got


class CounterRegs:
    """The read-only counter registers of an AXI top without a CSR port (``s_axil_*``,
    ``manifest["axi"]["counters"]``: name -> offset), read through AxiLiteMaster."""

    def __init__(self, dut, man: Manifest, rng, *, pause_p=0.3, prefix="s_axil"):
        self.dut, self.offsets = dut, axi_info(man)["counters"]
        self.master = lite_master(dut, prefix, rng, pause_p)
        self.slverr = 0

    async def read(self, name: str) -> tuple[int, int]:
        r = await self.master.read(self.offsets[name], 8)
        self.slverr += int(r.resp) == SLVERR
        return int.from_bytes(r.data, "little"), int(r.resp)

    async def refused(self) -> list[tuple[str, int]]:
        """The three accesses docs/packaging.md says are refused: past the last counter, a
        write, misaligned; returns (what, resp) of each."""
        end = 8 * len(self.offsets)
        out = [("unmapped", int((await self.master.read(end, 8)).resp)),
               ("write", int((await self.master.write(0, bytes(8))).resp)),
               ("misaligned", int((await self.master.read(4, 4)).resp))]
        self.slverr += sum(r == SLVERR for _, r in out)
        return out

    async def check(self):
        """Every counter register against its ``perf_*`` port (the block quiet, so they hold),
        the refused accesses SLVERR, and ``perf_axilErrors`` counting them."""
        for name in self.offsets:
            if name == "axilErrors":
                continue              # moves with the refused accesses below
            v, resp = await self.read(name)
            port = int(getattr(self.dut, f"perf_{name}").value)
            if resp != OKAY or v != port:
                raise TbError(f"s_axil counter {name}: {v} (resp {resp}), perf_{name} {port}")
        bad = [(w, r) for w, r in await self.refused() if r != SLVERR]
        if bad:
            raise TbError(f"s_axil accesses not refused with SLVERR: {bad}")
        await ClockCycles(self.dut.clock, 3)          # the counter's registered event
        got = int(self.dut.perf_axilErrors.value)
        v, _ = await self.read("axilErrors")
        if got != self.slverr or v != got:
            raise TbError(f"perf_axilErrors {got} (register {v}), SLVERR answers {self.slverr}")


def counter_regs(dut, man: Manifest, rng) -> CounterRegs | None:
    """CounterRegs for an AXI top whose AXI-Lite slave holds the counters, else None."""
    return CounterRegs(dut, man, rng) if axi_info(man)["registers"] == "counters" else None
