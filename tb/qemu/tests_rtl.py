"""The NestedWalker RTL on the QEMU cross-check's cases (docs/qemu-crosscheck.md).

XLAT_QEMU_CASES names the rtl_cases.json that ``qemu.crosscheck.run`` wrote: the memory image
QEMU ran on, and per case the walker request (its ``mode``: 1 stage 1 only, 2 stage 2 only, 3
both; its privilege flags) and QEMU's outcome.  The cases of the modes in XLAT_QEMU_MODES
(default: all three) run one at a time, in QEMU's order, under the walker environment's
scoreboard (every field against the reference model, accesses, A/D writes); each response
becomes the ISA's outcome (the value loaded at the PA in the same memory, the store's PA, or
the trap) and, through QEMU 7.2's documented deviations (``rv_modes.qemu72``), must equal what
QEMU reported.  XLAT_QEMU_RTL_CASES limits the number of cases of each mode (the first ones in
QEMU's order; xlat_tb.regression: 270 in make test, all under make soak).  A physical address
outside QEMU's RAM answers with a bus error, as a PTE read there is an access fault for the
ISA.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from types import SimpleNamespace

import cocotb

from models.ptformats import CMD_WRITE
from models.walker import SparseMemory, WalkRequest, WalkerConfig
from walker.walker_env import WalkerEnv
from xlat_tb.cycle import TbError
from xlat_tb.seed import rng as seeded_rng

from .rv_machine import in_ram
from .rv_modes import MODES, outcome, qemu72, qemu72_mxr_walk, scratch, translate


@cocotb.test()
async def test_qemu_crosscheck(dut):
    data = json.loads(open(os.environ["XLAT_QEMU_CASES"]).read())
    modes = os.environ.get("XLAT_QEMU_MODES", ",".join(MODES)).split(",")
    limit = os.environ.get("XLAT_QEMU_RTL_CASES", "").strip()
    taken = Counter()
    cases = []
    for c in data["cases"]:
        if c["mode"] in modes and (not limit or taken[c["mode"]] < int(limit)):
            taken[c["mode"]] += 1
            cases.append(c)
    image = {a: v for a, v in data["image"]}
    env = WalkerEnv(dut, rng=seeded_rng("qemu"), name="qemu", mem=SparseMemory(image)).start()
    if env.cfg != WalkerConfig(**data["config"]):
        raise TbError(f"the cases were laid out for {data['config']}, the RTL is {env.cfg}")
    if not env.man.has("req_bits_mode"):
        raise TbError("this walker has no req.mode")
    env.mem.error_fn = lambda a: not in_ram(a.addr)
    await env.reset()
    model_mem = SparseMemory(image)            # the model's walks, for the deviation rules
    model_mem.error_fn = lambda addr, kind: not in_ram(addr)
    counts, bad = {m: Counter() for m in modes}, []
    for k, c in enumerate(cases):
        req = WalkRequest(**c["req"])         # mode and flags: the case's (rv_machine.request)
        req.id = k % env.id_count
        w = await env.do_walk(req)
        rtl = outcome(w.resp, req.cmd, req.gva, env.memory.read, in_ram)
        res = translate(model_mem, env.cfg, c["mode"], req)
        qview = scratch(model_mem)
        q = qemu72_mxr_walk(qview, env.cfg, c["mode"], req, c["op"])
        mxr = None if q is None else (outcome(q.resp, req.cmd, req.gva, qview.read, in_ram), q)
        case = SimpleNamespace(mode=c["mode"], va=req.gva, cmd=req.cmd, op=c["op"],
                               satp=c["satp"])
        want, rules = qemu72(case, res, rtl, env.cfg.gpaBits, mxr)
        q = tuple(c["qemu"])
        n = counts[c["mode"]]
        n["compared"] += 1
        if c["deviation"]:
            # the RTL follows the model (the scoreboard checked it); QEMU, the ISA (checked by
            # the model case): the documented deviation must still be one
            n[c["deviation"]] += 1
            if rtl == tuple(c["isa"]):
                bad.append(f"case {c['index']} ({c['kind']}): the RTL no longer deviates from "
                           f"the ISA as docs/qemu-crosscheck.md {c['deviation']} says: {rtl}")
            continue
        n["traps"] += rtl[0] == "trap"
        n.update(r for r in rules if want != rtl)
        if want != q:
            bad.append(f"case {c['index']} ({c['mode']}, {c['kind']}, {c['op']}, "
                       f"cmd {'store' if req.cmd == CMD_WRITE else 'load'}, va {req.gva:#x}): "
                       f"RTL {rtl} -> QEMU 7.2 would report {want} (rules {rules}), QEMU "
                       f"reported {q}")
    await env.finish()
    dut._log.info(f"[xlat] QEMU cross-check on the RTL ({env.config}, modes {modes}): "
                  f"{ {m: dict(n) for m, n in counts.items()} }, {len(bad)} mismatches")
    if bad:
        raise TbError(f"{len(bad)} of {len(cases)} cases differ from QEMU:\n  " +
                      "\n  ".join(bad[:20]))
