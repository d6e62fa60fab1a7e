"""XlatMmu cocotb environment: request / fence / CSR sources, response monitor, the memory
responder (xlat_tb.memory) on the page-table builder's memory (xlat_tb.pagetables), and the
expected answer of a request from the walker's reference model (models.walker) run on a copy
of that memory: docs/xlat-mmu.md is the contract.

The directed tests state which level must answer (the MMU serves one request at a time, so the
level follows from the accesses before and the docs' decided points) and take every translation
and fault from the walker's model and the tables; those of a decided point of the composition
(M7, the hit check with MXR) also serve each request on the composed model (tb/models/xlat_mmu.py,
``model_request``) and compare its answer, source and counters (``counters_differ``). The random
test (tests_random.py) checks everything against the composed model.
"""

from __future__ import annotations

import os

from cocotb.clock import Clock

from models.privcheck import FLAGS as PRIV_FLAGS
from models.ptformats import MODE_S1
from models.xlat_mmu import Request
from models.walker import F_ADDR, F_BUS, F_GUEST, F_HOST, F_NONE, F_RSVD, WalkerConfig, WalkRequest, walk
from xlat_tb.cycle import CycleLoop, TbError
from xlat_tb.drivers import DecoupledSource, ReadyDriver
from xlat_tb.manifest import load_manifest
from xlat_tb.memory import MemoryResponder
from xlat_tb.monitors import DecoupledMonitor, ValidMonitor

# MmuFault / MmuSource / FenceKind (docs/xlat-mmu.md "Ports")
FAULT_NONE, FAULT_PAGE, FAULT_GUEST_PAGE, FAULT_ACCESS, FAULT_RESERVED = 0, 1, 2, 3, 4
SRC_L1, SRC_L2, SRC_WALK = 0, 1, 2
(SFENCE_ALL, SFENCE_ASID, SFENCE_VA, SFENCE_VA_ASID, HVVMA_ALL, HVVMA_ASID, HVVMA_VA,
 HVVMA_VA_ASID, GVMA_ALL, GVMA_VMID, GVMA_GPA_VMID, FENCE_CCID, FENCE_PAGE_CCID) = range(13)
CSR_CTRL, CSR_COUNTERS = 0x8000, 0x8100

RESP_FIELDS = ("id", "pa", "pageSize", "fault", "faultStage", "faultGpa", "source")
PS_1G = 2
# the model's counters no model counts exactly (PmlLogger's stall cycles: timing)
TIMING_COUNTERS = {"pml_stallCycles"}


def fault_of(walk_fault: int, stage: int) -> int:
    """The response's fault kind for a walker fault (docs/xlat-mmu.md, decided: fault 5 of a
    guest address is a page fault, of a GPA a guest-page fault)."""
    return {F_NONE: FAULT_NONE, F_GUEST: FAULT_PAGE, F_HOST: FAULT_GUEST_PAGE, F_BUS: FAULT_ACCESS,
            F_RSVD: FAULT_RESERVED,
            F_ADDR: FAULT_PAGE if stage == 0 else FAULT_GUEST_PAGE}[walk_fault]


class MmuEnv:
    def __init__(self, dut, *, rng, name="test", mem=None, latency=(1, 4)):
        self.dut, self.rng, self.name = dut, rng, name
        self.man = load_manifest(os.environ["XLAT_MANIFEST"])
        self.axi = self.man.raw.get("axi")      # an AXI top (xlat_tb.axi): the block inside
        if self.axi:
            from xlat_tb.axi import AxiLiteCsr, AxiMemPort, inner, inner_view
            self.man = inner_view(self.man)
        self.config = self.man.config
        self.p = dict(self.man.params)
        self.cfg = WalkerConfig.from_params(self.p)
        self.log = dut._log
        self.loop = CycleLoop(dut.clock, dut.reset)
        self.req = self.loop.add(DecoupledSource(dut, "req", self.man.channel_fields("req"), rng=rng))
        self.fence = self.loop.add(DecoupledSource(dut, "fence", self.man.channel_fields("fence"), rng=rng))
        blk = inner(dut, self.man) if self.axi else dut     # the memory and CSR ports
        if self.axi:
            self.csr = self.loop.add(AxiLiteCsr(dut, blk, rng=rng))
        else:
            self.csr = self.loop.add(DecoupledSource(dut, "csr_req", self.man.channel_fields("csr_req"), rng=rng))
        self.resp_ready = self.loop.add(ReadyDriver(dut, "resp"))
        self.exit_ready = self.loop.add(ReadyDriver(dut, "exit"))
        self.irq_ready = self.loop.add(ReadyDriver(dut, "guestIrq"))
        self.memory = mem
        if self.axi:
            self.mem = self.loop.add(AxiMemPort(
                dut, blk, mem=mem, rng=rng, fields_req=self.man.channel_fields("mem_req"),
                latency=latency))
        else:
            self.mem = self.loop.add(MemoryResponder(
                dut, mem=mem, rng=rng, fields_req=self.man.channel_fields("mem_req"),
                fields_resp=self.man.channel_fields("mem_resp"), latency=latency, max_outstanding=8))
        self.resp_mon = self.loop.add(DecoupledMonitor(dut, "resp", RESP_FIELDS))
        self.csr_mon = self.loop.add(ValidMonitor(blk, "csr_resp", ("rdata", "error")))
        self.resps, self.csr_resps, self.fence_done = [], [], 0
        self.resp_mon.callbacks.append(lambda item, c: self.resps.append(item))
        self.csr_mon.callbacks.append(lambda item, c: self.csr_resps.append(item))
        self.loop.post_sample.append(self._on_cycle)
        self.next_id = 0

    def _on_cycle(self, cycle):
        if not self.loop.in_reset and int(self.dut.fenceDone.value):
            self.fence_done += 1

    def start(self):
        Clock(self.dut.clock, 10, unit="ns").start()
        self.loop.start()
        return self

    async def reset(self, cycles: int = 4):
        await self.loop.reset(cycles)

    # ------------------------------------------------------------------ requests
    def mmu_req(self, w: WalkRequest, *, ccid: int = 0) -> dict:
        """The MMU request of the walk request ``w`` (the builder's): roots, privilege, flags."""
        r = dict(va=w.gva, cmd=w.cmd, priv=w.user, mode=w.mode, asid=w.asid, vmid=w.vmid, ccid=ccid,
                 s1Root=w.gRoot, s2Root=w.hRoot)
        r.update({f"flags_{f}": getattr(w, f"flags_{f}") for f in PRIV_FLAGS})
        return r

    def expected(self, req: dict) -> dict:
        """The answer the walk of ``req`` gives on the memory as it is now (the model on a copy:
        it sets A/D as the walker will), as response fields (pa, pageSize, fault, faultStage,
        faultGpa). Stage-1-only walks carry vmid 0 (docs/xlat-mmu.md "Fences")."""
        w = WalkRequest(gva=req["va"], asid=req["asid"], vmid=0 if req["mode"] == MODE_S1 else req["vmid"],
                        gRoot=req["s1Root"], hRoot=req["s2Root"], cmd=req["cmd"], user=req["priv"],
                        mode=req["mode"], **{f"flags_{f}": req.get(f"flags_{f}", 0) for f in PRIV_FLAGS})
        res = walk(self.memory.copy(), self.cfg, w).resp
        fault = fault_of(res["fault"], res["faultStage"])
        if fault:
            return dict(pa=0, pageSize=0, fault=fault, faultStage=res["faultStage"], faultGpa=res["faultGpa"])
        # a 512 GiB leaf (the walker's 3) is used as its 1 GiB parts (docs/xlat-mmu.md M7)
        return dict(pa=res["ppn"], pageSize=min(res["pageSize"], PS_1G), fault=0, faultStage=0,
                    faultGpa=0)

    async def translate(self, req: dict, timeout: int = 4000) -> dict:
        """Send one request and wait for its response (the MMU serves one at a time)."""
        req = dict(req)
        req["id"] = self.next_id
        self.next_id = (self.next_id + 1) % (1 << int(self.p["idBits"]))
        n = len(self.resps)
        self.req.send(req)
        await self.loop.wait_until(lambda: len(self.resps) > n, timeout, f"the response to {req}")
        r = self.resps[n]
        if r["id"] != req["id"]:
            raise TbError(f"response id {r['id']} for request id {req['id']}")
        return r

    async def check(self, req: dict, source: int, what: str) -> dict:
        """Translate ``req``; the response must be the walk's answer (computed before it is sent)
        from ``source``."""
        exp = self.expected(req)
        r = await self.translate(req)
        got = {k: r[k] for k in exp}
        if got != exp or r["source"] != source:
            raise TbError(f"{what}: request {req}\n  got {r}\n  expected {exp} from source {source}")
        return r

    async def do_fence(self, kind: int, *, va: int = 0, asid: int = 0, vmid: int = 0, ccid: int = 0,
                       timeout: int = 2000):
        n = self.fence_done
        vpn = (va >> 12) & ((1 << int(self.man.derived["vpnBits"])) - 1)
        self.fence.send(dict(kind=kind, vpn=vpn, asid=asid, vmid=vmid, ccid=ccid))
        await self.loop.wait_until(lambda: self.fence_done > n, timeout, f"fenceDone of fence kind {kind}")
        if self.fence_done != n + 1:
            raise TbError(f"fence kind {kind}: {self.fence_done - n} fenceDone pulses")

    async def csr_access(self, addr: int, write: int = 0, wdata: int = 0) -> dict:
        n = len(self.csr_resps)
        self.csr.send(dict(addr=addr, write=write, wdata=wdata))
        await self.loop.wait_until(lambda: len(self.csr_resps) > n, 50, f"the CSR response of {addr:#x}")
        return self.csr_resps[n]

    def counter(self, name: str) -> int:
        return int(getattr(self.dut, f"perf_{name}").value)

    async def counters_differ(self, model) -> tuple[list, int]:
        """The composed model's counters (``XlatMmuModel.counters()``) against the RTL's: the
        MMU's own on its perf_* ports, every other one the CSR map has (BabelFishTlb's,
        PmlLogger's) read through the CSR port, timing counters left out. Returns ([(name,
        RTL, model)] that differ, how many were read through the CSR port)."""
        bad, compared = [], 0
        regmap = {r["name"]: r["offset"] for r in self.man.raw["registers"]}
        for k, v in model.counters().items():
            if k.startswith("mmu_"):
                got = self.counter(k[4:])
            elif k in TIMING_COUNTERS or f"PERF_{k}" not in regmap:
                continue
            else:
                r = await self.csr_access(regmap[f"PERF_{k}"])
                compared += 1
                got = None if r["error"] else r["rdata"]
            if got != v:
                bad.append((k, got, v))
        if self.axi:        # the wrappers' counters, once the last AXI-Lite answer is in
            await self.loop.wait_until(lambda: self.csr.idle, 1000, "the AXI-Lite slave idle")
            await self.loop.cycles(3)
            self.mem.check_counters(self.dut)
            self.csr.check_counters(self.dut)
        return bad, compared

    async def settle(self, cycles: int = 3):
        await self.loop.cycles(cycles)


def model_request(req: dict):
    """The composed model's Request of a request of the `req` channel (a dict of its fields)."""
    return Request(**{k: req.get(k, 0) for k in ("id", "va", "cmd", "priv", "mode", "asid", "vmid",
                                                   "ccid", "pcIdx", "pcIdxValid", "s1Root", "s2Root")},
                   **{f: req.get(f"flags_{f}", 0) for f in PRIV_FLAGS})
