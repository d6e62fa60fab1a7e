"""A cocotb memory responder for the common memory port (../shared/spec/README.md):

    mem_req  (DUT -> tb, Decoupled): id, addr, write, wdata, wmask
    mem_resp (tb -> DUT, Decoupled): id, rdata, error

Why: every block that walks tables or writes logs (NestedWalker, PmlLogger, DevTlb) talks to
memory through this port; the testbench needs one responder that is both a correct memory and
an adversarial one: random latency, several requests outstanding and answered out of order,
random back-pressure on ``mem_req_ready``, injectable bus errors, and a complete access log for
the scoreboards (every access with its cycles, id, address, data, mask and error).

A CycleLoop component (``xlat_tb.cycle``): ``drive`` presents at most one response per cycle
(held, unchanged, while ``mem_resp_ready`` is low: a response is never lost or duplicated) and
the request ready; ``sample`` (ReadOnly) takes the accepted request and the accepted response.

Memory semantics: the store is a ``models.walker.SparseMemory`` (shared with the reference
model's type).  A read returns the word as it is when the request is accepted.  A write changes
memory when its response is accepted (``write_visible="response"``, the default) or when the
request is accepted (``"request"``); either way a read issued after a write's response sees the
write.  An access answered with ``error`` does not change memory and returns random rdata.
Responses with the same id leave in request order (as AXI); different ids are reordered.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from models.walker import SparseMemory

from .backpressure import Never
from .cycle import TbError
from .drivers import _Out, _handle


@dataclass
class MemAccess:
    """One access in the log."""
    seq: int
    req_cycle: int
    id: int
    addr: int
    write: int
    wdata: int
    wmask: int
    error: int = 0
    rdata: int = 0
    old: int = 0                 # writes: the word before the write (when applied)
    resp_cycle: int | None = None
    due: int = 0
    code: int = 0                # the AXI response (xlat_tb.axi): OKAY 0, SLVERR 2, DECERR 3

    def __repr__(self):
        k = f"W {self.wdata:#x}/{self.wmask:#04x}" if self.write else f"R -> {self.rdata:#x}"
        e = " ERR" if self.error else ""
        return (f"<#{self.seq} id={self.id} {self.addr:#x} {k}{e} req@{self.req_cycle} "
                f"resp@{self.resp_cycle}>")


def is_error(m, a: MemAccess) -> bool:
    """Whether memory ``m`` (MemoryResponder or xlat_tb.axi.AxiMemPort: its ``errors_enabled``,
    ``error_addrs``, ``error_fn``, ``error_p``, ``rng``) answers access ``a`` with a bus error."""
    if not m.errors_enabled:
        return False
    kind = "write" if a.write else "read"
    if a.addr in m.error_addrs or (a.addr, kind) in m.error_addrs:
        return True
    if m.error_fn is not None and m.error_fn(a):
        return True
    return m.error_p > 0 and m.rng.random() < m.error_p


class MemoryResponder:
    """Memory behind ``<req>_*`` / ``<resp>_*``.

    latency: (min, max) cycles from request acceptance to the earliest response cycle.
    max_outstanding: requests accepted and not yet answered; ``mem_req_ready`` is low when full.
    req_ready: a back-pressure pattern for ``mem_req_ready`` (xlat_tb.backpressure).
    reorder: answer eligible responses in random order (different ids only).
    Bus errors: ``error_addrs`` (set of addr, or (addr, 'read'/'write')), ``error_p`` (a
    probability per access), ``error_fn(access) -> bool``; ``errors_enabled`` switches all off.
    Checks (TbError): ``addr`` 8-byte aligned (``check_align``), reads with wmask 0
    (``check_read_wmask``), at most ``max_per_id`` accesses outstanding per id, addr below
    2^``addr_bits`` of the port.
    """

    def __init__(self, dut, *, mem: SparseMemory | None = None, rng=None, req: str = "mem_req",
                 resp: str = "mem_resp", fields_req: dict | None = None,
                 fields_resp: dict | None = None, latency=(1, 6), max_outstanding: int = 16,
                 req_ready=None, reorder: bool = True, error_addrs=None, error_p: float = 0.0,
                 error_fn=None, write_visible: str = "response", max_per_id: int | None = None,
                 check_align: bool = True, check_read_wmask: bool = True, name: str = "mem"):
        self.dut, self.name = dut, name
        self.mem = mem if mem is not None else SparseMemory()
        self.mem.journal = True
        self.rng = rng or random.Random(0)
        self.latency = latency
        self.max_outstanding = max_outstanding
        self.req_pattern = req_ready or Never()
        self.reorder = reorder
        self.error_addrs = set(error_addrs or ())
        self.error_p = error_p
        self.error_fn = error_fn
        self.errors_enabled = True
        if write_visible not in ("response", "request"):
            raise ValueError(write_visible)
        self.write_visible = write_visible
        self.max_per_id = max_per_id
        self.check_align, self.check_read_wmask = check_align, check_read_wmask

        fr = fields_req or {"id": 4, "addr": 64, "write": 1, "wdata": 64, "wmask": 8}
        fs = fields_resp or {"id": 4, "rdata": 64, "error": 1}
        self.addr_bits = fr["addr"]
        self.req_valid = _handle(dut, f"{req}_valid")
        self.req_ready = _Out(_handle(dut, f"{req}_ready"), 1, f"{req}_ready")
        self.req_bits = {f: _handle(dut, f"{req}_bits_{f}") for f in fr}
        self.resp_valid = _Out(_handle(dut, f"{resp}_valid"), 1, f"{resp}_valid")
        self.resp_ready = _handle(dut, f"{resp}_ready")
        self.resp_bits = {f: _Out(_handle(dut, f"{resp}_bits_{f}"), w, f"{resp}_bits_{f}")
                          for f, w in fs.items()}
        self.rdata_mask = (1 << fs.get("rdata", 64)) - 1
        self.loop = None
        self.on_request = []          # callbacks(access, cycle) at request acceptance
        self.on_response = []         # callbacks(access, cycle) at response acceptance
        self.log: list[MemAccess] = []
        self.bogus_sent = 0
        self.reset_state()

    # ------------------------------------------------------------------ state
    def reset_state(self):
        self.pending: list[MemAccess] = []    # accepted, not yet answered (request order)
        self.cur: MemAccess | None = None     # response presented, not yet accepted
        self.ready_now = 0
        self.bogus: list[dict] = []
        self.resp_stall_cycles = 0

    @property
    def outstanding(self) -> int:
        return len(self.pending) + (1 if self.cur is not None else 0)

    @property
    def idle(self) -> bool:
        return self.outstanding == 0 and not self.bogus

    def outstanding_ids(self) -> set:
        s = {a.id for a in self.pending}
        if self.cur is not None and self.cur.seq >= 0:
            s.add(self.cur.id)
        return s

    def inject_response(self, id: int, rdata: int = 0, error: int = 0):
        """Send a response nobody asked for (the DUT must drop and count it)."""
        self.bogus.append(dict(id=id, rdata=rdata, error=error))

    def reads(self, id: int | None = None) -> list[MemAccess]:
        return [a for a in self.log if not a.write and (id is None or a.id == id)]

    def writes(self, id: int | None = None) -> list[MemAccess]:
        return [a for a in self.log if a.write and (id is None or a.id == id)]

    # ------------------------------------------------------------------ errors
    def _is_error(self, a: MemAccess) -> bool:
        return is_error(self, a)

    # ------------------------------------------------------------------ CycleLoop
    def drive(self, cycle: int):
        if self.loop is not None and self.loop.in_reset:
            self.req_ready.set(0)
            self.resp_valid.set(0)
            self.ready_now = 0
            return
        full = len(self.pending) >= self.max_outstanding
        self.ready_now = 0 if full or self.req_pattern.idle() else 1
        self.req_ready.set(self.ready_now)
        if self.cur is None:
            self.cur = self._pick(cycle)
            if self.cur is not None:
                a = self.cur
                b = self.resp_bits
                b["id"].set(a.id)
                if "rdata" in b:
                    b["rdata"].set(a.rdata & self.rdata_mask)
                if "error" in b:
                    b["error"].set(a.error)
                self.resp_valid.set(1)
            else:
                self.resp_valid.set(0)

    def _pick(self, cycle: int):
        if self.bogus:
            d = self.bogus.pop(0)
            return MemAccess(-1, cycle, d["id"], 0, 0, 0, 0, d["error"], d["rdata"])
        first_of_id = {}
        for a in self.pending:                      # request order: oldest per id first
            if a.id not in first_of_id:
                first_of_id[a.id] = a
        ready = [a for a in first_of_id.values() if a.due <= cycle]
        if not ready:
            return None
        a = self.rng.choice(ready) if self.reorder else min(ready, key=lambda x: x.seq)
        self.pending.remove(a)
        return a

    def sample(self, cycle: int):
        if self.loop is not None and self.loop.in_reset:
            return
        # response first: a request in the same cycle may reuse the id just answered
        if self.cur is not None:
            if int(self.resp_ready.value):
                a, self.cur = self.cur, None
                a.resp_cycle = cycle
                if a.seq < 0:
                    self.bogus_sent += 1
                else:
                    if a.write and not a.error and self.write_visible == "response":
                        a.old = self.mem.write(a.addr, a.wdata, a.wmask)
                    for cb in self.on_response:
                        cb(a, cycle)
            else:
                self.resp_stall_cycles += 1
        if self.ready_now and int(self.req_valid.value):
            self._accept(cycle)

    def _accept(self, cycle: int):
        v = {}
        for f, h in self.req_bits.items():
            try:
                v[f] = int(h.value)
            except ValueError:
                raise TbError(f"{self.name}: {f} is {h.value} during a request") from None
        a = MemAccess(len(self.log), cycle, v.get("id", 0), v["addr"], v.get("write", 0),
                      v.get("wdata", 0), v.get("wmask", 0))
        if self.check_align and a.addr % 8:
            raise TbError(f"{self.name}: unaligned address {a.addr:#x} in {a}")
        if self.check_read_wmask and not a.write and a.wmask:
            raise TbError(f"{self.name}: read with wmask {a.wmask:#x} (reads drive 0): {a}")
        if self.max_per_id is not None:
            n = sum(1 for p in self.pending if p.id == a.id) + \
                (1 if self.cur is not None and self.cur.id == a.id and self.cur.seq >= 0 else 0)
            if n >= self.max_per_id:
                raise TbError(f"{self.name}: id {a.id} already has {n} access(es) outstanding "
                              f"(at most {self.max_per_id}); new {a}")
        lo, hi = self.latency
        a.due = cycle + self.rng.randint(lo, hi)
        a.error = int(self._is_error(a))
        if a.write:
            if not a.error and self.write_visible == "request":
                a.old = self.mem.write(a.addr, a.wdata, a.wmask)
            elif not a.error:
                a.old = self.mem.read(a.addr)
        else:
            a.rdata = self.rng.getrandbits(64) if a.error else self.mem.read(a.addr)
        self.log.append(a)
        self.pending.append(a)
        for cb in self.on_request:
            cb(a, cycle)
