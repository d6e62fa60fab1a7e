"""The QEMU cross-check of RISC-V translation, end to end (docs/qemu-crosscheck.md):
lay out the machine (rv_machine), run the model on every case in order, run QEMU once on the
same memory image and cases, compare one for one.

    python -m qemu.crosscheck walker_rv39 [--seed N] [--per-mode N]     (from tb/)

``run(config)`` returns a ``Report`` (counts per mode, mismatches) and writes
build/qemu/<config>/: xcheck.elf, blob.bin, qemu.log and rtl_cases.json (the image, the
cases of the modes the RTL runs, QEMU's outcome of each) for the RTL comparison
(tb/qemu/tests_rtl.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path

from models.walker import WalkerConfig
from xlat_tb import qemu
from xlat_tb.paths import BUILD

from .rv_machine import MODEL_DEVIATIONS, RAM_MIB, RvMachine, build, in_ram
from .rv_modes import (DEVIATIONS, MODES, d1, outcome, qemu72, qemu72_mxr_walk, qemu_outcome,
                       scratch, translate)

CONFIGS = {"walker_rv39": WalkerConfig("sv39", "sv39x4", "hardware", 52),
           "walker_rv48": WalkerConfig("sv48", "sv48x4", "hardware", 52)}


@dataclass
class Report:
    config: str
    tools: dict
    counts: dict = field(default_factory=dict)     # mode -> Counter(compared, faults, ...)
    mismatches: list = field(default_factory=list)
    ad_words: int = 0                               # page-table words the cases changed
    seconds: dict = field(default_factory=dict)

    def table(self) -> str:
        lines = [f"{self.config}: QEMU {self.tools.get(qemu.QEMU)}, "
                 f"mode: compared, addresses, traps, QEMU = ISA, QEMU deviations D1-D5, "
                 f"model deviation M1, mismatches"]
        for mode in MODES:
            c = self.counts.get(mode, Counter())
            dev = " ".join(f"{c[d]:4d}" for d in DEVIATIONS)
            lines.append(f"  {mode:7s} {c['compared']:6d} {c['addresses']:6d} {c['traps']:6d} "
                         f"{c['isa']:6d}  {dev}  {c['M1']:4d}  {c['mismatches']:4d}")
        lines.append(f"  page-table words with A/D set by the cases: {self.ad_words}, "
                     f"compared with QEMU's memory")
        return "\n".join(lines)


def stub_pages(elf: Path) -> tuple:
    out = subprocess.run(["riscv64-unknown-elf-nm", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    sym = {p[2]: int(p[0], 16) for p in (l.split() for l in out.splitlines()) if len(p) == 3}
    return sym["stub_s"], sym["stub_u"]


def model_run(m: RvMachine) -> list:
    """The model on every case in order, on one memory that the walks' A/D writes change as
    QEMU's do; -> [(ISA outcome, probe PA, model outcome, the walk giving the ISA outcome,
    QEMU 7.2's MXR walk (D5): (outcome, walk) or None)], and ``m.final``: {pa: value} of the
    image's words the walks changed (A/D).  The two outcomes differ only on the cases of
    MODEL_DEVIATIONS (M1: the model's host check of a guest page-table read is a write's; the
    ISA's is a load's, which the model's ``adUpdate = fault`` walk does: those paths have every
    A/D bit set, so it writes nothing).  Each walk runs on a scratch view; the A/D writes kept
    are those of the walk QEMU makes: none for D1 (QEMU does not walk), D5's walk where its
    outcome differs from the ISA's, else the model's."""
    mem = m.mem.copy()
    mem.error_fn = lambda addr, kind: not in_ram(addr)
    as_load = replace(m.cfg, adUpdate="fault")
    out = []
    for c in m.cases:
        req = m.request(c)
        view = scratch(mem)
        res = translate(view, m.cfg, c.mode, req)
        o = outcome(res.resp, c.cmd, c.va, view.read, in_ram)
        isa = o
        if c.kind in MODEL_DEVIATIONS:
            res = translate(mem, as_load, c.mode, req)
            isa = outcome(res.resp, c.cmd, c.va, mem.read, in_ram)
        qview = scratch(mem)
        q = qemu72_mxr_walk(qview, m.cfg, c.mode, req, c.op)
        mxr = None if q is None else (outcome(q.resp, c.cmd, c.va, qview.read, in_ram), q)
        d5 = mxr is not None and mxr[0] != isa
        if not d1(c, m.cfg.gpaBits):
            for a, v in (qview if d5 else view).local.items():
                mem.write(a, v)
        probe = mxr[0] if d5 else isa          # where QEMU stores, if it does
        out.append((isa, probe[1] & ~7 if probe[0] == "store" else 0, o, res, mxr))
    m.final = {a: mem.read(a) for a, v in m.mem.words.items() if mem.read(a) != v}
    return out


def run(config: str, *, seed: int = 1, per_mode: int = 2000, fault_rounds: int = 3,
        out_dir: Path | None = None, rtl_modes=MODES) -> Report:
    cfg = CONFIGS[config]
    out_dir = out_dir or BUILD / "qemu" / config
    rep = Report(config, qemu.check_tools())
    t0 = time.monotonic()
    elf = qemu.build_program(BUILD / "qemu")
    m = build(cfg, seed, code=stub_pages(elf), per_mode=per_mode, fault_rounds=fault_rounds)
    rep.seconds["build"] = time.monotonic() - t0
    t0 = time.monotonic()
    expect = model_run(m)
    rep.seconds["model"] = time.monotonic() - t0
    out_dir.mkdir(parents=True, exist_ok=True)
    blob = out_dir / "blob.bin"
    qemu.write_blob(blob, m.image(), m.qemu_cases([e[1] for e in expect]))
    t0 = time.monotonic()
    recs, changed = qemu.run_qemu(elf, blob, len(m.cases), ram_mib=RAM_MIB,
                                  log=out_dir / "qemu.log")
    rep.seconds["qemu"] = time.monotonic() - t0
    got = []
    addrs = defaultdict(set)
    for i, (c, (isa, probe, model, res, mxr), rec) in enumerate(zip(m.cases, expect, recs)):
        q = qemu_outcome(c.cmd, probe, c.store_value(i), rec)
        want, rules = qemu72(c, res, isa, m.cfg.gpaBits, mxr)
        got.append(q)
        n = rep.counts.setdefault(c.mode, Counter())
        n["compared"] += 1
        addrs[c.mode].add((c.vmid, c.asid, c.va))
        n["traps"] += isa[0] == "trap"
        n["isa"] += q == isa
        if model != isa:
            n[MODEL_DEVIATIONS[c.kind]] += 1
        for r in rules:
            if want != isa:
                n[r] += 1
        if q != want:
            n["mismatches"] += 1
            rep.mismatches.append(dict(index=i, mode=c.mode, kind=c.kind, op=c.op, user=c.user,
                                       satp=c.satp != 0, va=hex(c.va), isa=_show(isa),
                                       qemu72=_show(want), qemu=_show(q), rules=rules))
    for mode in addrs:
        rep.counts[mode]["addresses"] = len(addrs[mode])
    # the A/D bits both set, word for word (the stores restore their data words)
    rep.ad_words = len(m.final)
    for a in sorted(set(m.final) | set(changed)):
        if m.final.get(a) != changed.get(a):
            rep.mismatches.append(dict(word=hex(a), image=hex(m.mem.read(a)),
                                       model=hex(m.final.get(a, m.mem.read(a))),
                                       qemu=hex(changed.get(a, m.mem.read(a)))))
    kinds = Counter((c.mode, c.kind) for c in m.cases)
    rep.kinds = {f"{a}/{b}": v for (a, b), v in sorted(kinds.items())}
    _write_rtl_cases(out_dir / "rtl_cases.json", m, got, [e[0] for e in expect], rtl_modes)
    return rep


def _show(o: tuple) -> str:
    return "(" + ", ".join(hex(x) if isinstance(x, int) else str(x) for x in o) + ")"


def _write_rtl_cases(path: Path, m: RvMachine, got: list, isa: list, modes) -> None:
    cases = []
    for i, (c, q, o) in enumerate(zip(m.cases, got, isa)):
        if c.mode in modes:
            cases.append(dict(index=i, mode=c.mode, kind=c.kind, op=c.op, satp=c.satp,
                              req=m.request(c).fields(), qemu=list(q), isa=list(o),
                              deviation=MODEL_DEVIATIONS.get(c.kind)))
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(dict(config=m.cfg.__dict__, image=m.image(), cases=cases)))
    tmp.replace(path)              # atomic: a simulation never reads half a file


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", choices=sorted(CONFIGS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-mode", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    rep = run(a.config, seed=a.seed, per_mode=a.per_mode, fault_rounds=a.rounds)
    print(rep.table())
    print("seconds:", {k: round(v, 1) for k, v in rep.seconds.items()})
    for mm in rep.mismatches[:40]:
        print(mm)
    return 1 if rep.mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
