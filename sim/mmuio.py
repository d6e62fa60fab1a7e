"""XlatMmu harness files (sim/harness/mmu.cpp; formats in sim/README.md, "XlatMmu harness
files"), running the harness, and the replay of its responses on the composed reference model
tb/models/xlat_mmu.py (``check_against_model``) and that model with BabelFish sharing on
(``model_figures``: the RTL fills every entry private, docs/xlat-mmu.md decided 9)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[1] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from harness_build import run_harness  # noqa: E402
from memimage import write_memory  # noqa: E402
from models.walker import SparseMemory  # noqa: E402
from models.xlat_mmu import CONFIGS, SRC_L1, SRC_L2, SRC_WALK, MmuPolicy, Request, XlatMmuModel  # noqa: E402
from workloads.mmu import FLAGS  # noqa: E402

TRACE_MAGIC = b"XLATMT01"
# the trace's arrays, in file order, with their types
TRACE_FIELDS = (("va", "<u8"), ("s1Root", "<u8"), ("s2Root", "<u8"), ("asid", "<u4"), ("vmid", "<u4"),
                ("ccid", "<u4"), ("cmd", "u1"), ("priv", "u1"), ("mode", "u1"), ("pcIdx", "u1"),
                ("pcIdxValid", "u1"), ("flags", "u1"))
LOG_DTYPE = np.dtype([("index", "<u4"), ("source", "u1"), ("fault", "u1"), ("faultStage", "u1"),
                      ("pageSize", "u1"), ("pa", "<u8"), ("faultGpa", "<u8"), ("latency", "<u4"),
                      ("memReads", "<u2"), ("adWrites", "<u2")])
assert LOG_DTYPE.itemsize == 32
RESP_FIELDS = ("source", "fault", "faultStage", "pageSize", "pa", "faultGpa")


def write_trace(req: dict, pml_base: int, path) -> None:
    n = len(req["va"])
    with open(path, "wb") as f:
        f.write(TRACE_MAGIC)
        f.write(np.array([n, pml_base], dtype="<u8").tobytes())
        for name, dt in TRACE_FIELDS:
            a = np.asarray(req[name])
            if len(a) != n:
                raise ValueError(f"trace field {name}: {len(a)} rows, not {n}")
            f.write(a.astype(dt).tobytes())


def write_workload(w, mem_path, trace_path) -> None:
    write_memory(w.words, mem_path)
    write_trace(w.req, w.pml_base, trace_path)


def pml_mask(w, contexts: int) -> int:
    """PML on in every context a VM of the workload uses (PmlLogger's context = the vmid)."""
    return sum(1 << v for v in w.vms if v < contexts)


def run(exe, mem, trace, out, *, log=None, latency=100, jitter=0, warmup=0, pml_mask=0,
        pml_service=0, ctrl=3, exact_idle=False, label="", timeout=None) -> dict:
    cmd = [exe, "--mem", mem, "--trace", trace, "--out", out, "--latency", latency, "--jitter", jitter,
           "--warmup", warmup, "--pml-mask", pml_mask, "--pml-service", pml_service, "--ctrl", ctrl]
    if log:
        cmd += ["--log", log]
    if exact_idle:
        cmd.append("--exact-idle")
    if label:
        cmd += ["--label", label]
    return run_harness(cmd, out, "XlatMmu", timeout=timeout)


def read_log(path) -> np.ndarray:
    return np.fromfile(path, dtype=LOG_DTYPE)


def requests(w, limit: int | None = None):
    """The composed model's Requests of the workload's first ``limit`` rows (the id is not
    compared: the harness checks each response's id against its request's)."""
    q = w.req
    n = len(w) if limit is None else min(limit, len(w))
    for i in range(n):
        f = int(q["flags"][i])
        yield Request(id=0, va=int(q["va"][i]), cmd=int(q["cmd"][i]), priv=int(q["priv"][i]),
                      mode=int(q["mode"][i]), asid=int(q["asid"][i]), vmid=int(q["vmid"][i]),
                      ccid=int(q["ccid"][i]), pcIdx=int(q["pcIdx"][i]), pcIdxValid=int(q["pcIdxValid"][i]),
                      s1Root=int(q["s1Root"][i]), s2Root=int(q["s2Root"][i]),
                      **{k: f >> b & 1 for b, k in enumerate(FLAGS)})


def _model(w, sharing: bool, ctrl: int) -> XlatMmuModel:
    policy = MmuPolicy.rtl()
    if sharing:
        from dataclasses import replace
        policy = replace(policy, sharing=True)
    params = CONFIGS[w.config](sharing=policy.sharing)
    m = XlatMmuModel(params, mem=SparseMemory(dict(w.words)), policy=policy)
    m.csr(0x8000, 1, ctrl)
    return m


def check_against_model(w, log: np.ndarray, rtl_counters: dict | None = None, *, ctrl: int = 3,
                        limit: int = 0) -> dict:
    """Replay the first ``limit`` requests (0: all) on the composed model with the RTL's policy
    (``MmuPolicy.rtl()``: every fill private) and compare every response field, the level that
    answered included (exact: the MMU serves one request at a time, docs/xlat-mmu.md M1).
    PmlLogger is left disabled in the model: its log changes no answer (the harness checks its
    writes against the RTL's counters). When the log covers the whole run, every mmu_*, l1_* and
    l2_* counter of the model must equal the RTL's (``rtl_counters``: the harness's perf and CSR
    counters by name)."""
    n = len(w) if not limit else min(limit, len(w))
    if len(log) < n:
        return dict(checked=0, mismatches=[f"log has {len(log)} responses, expected {n}"])
    m = _model(w, False, ctrl)
    bad = []
    for i, req in enumerate(requests(w, n)):
        r = m.request(req)
        got = log[i]
        exp = dict(source=r.source, fault=r.fault, faultStage=r.faultStage, pageSize=r.pageSize, pa=r.ppn,
                   faultGpa=r.faultGpa)
        have = {k: int(got[k]) for k in RESP_FIELDS}
        if int(got["index"]) != i or have != exp:
            bad.append(f"response {i} ({req}): RTL {have}, model {exp}")
            if len(bad) >= 10:
                break
    counters = {}
    if n == len(w) and rtl_counters is not None and not bad:
        for k, v in m.counters().items():
            if k.startswith(("mmu_", "l1_", "l2_")):
                name = k[4:] if k.startswith("mmu_") else k
                if name in rtl_counters:
                    counters[k] = v
                    if rtl_counters[name] != v:
                        bad.append(f"counter {k}: RTL {rtl_counters[name]}, model {v}")
    return dict(checked=n, mismatches=bad, counters_compared=len(counters))


def model_figures(w, *, sharing: bool, ctrl: int = 3, warmup: int = 0) -> dict:
    """Misses per level of the composed model on the workload (the model's policy; ``sharing``
    True: M5, a walk fill of a process with pcIdxValid 0 shared in its ccid group), in the
    window after ``warmup`` requests."""
    m = _model(w, sharing, ctrl)
    at = None
    for i, req in enumerate(requests(w)):
        if i == warmup:
            at = dict(m.sources)
        m.request(req)
    at = at or {SRC_L1: 0, SRC_L2: 0, SRC_WALK: 0}
    d = {k: m.sources[k] - at[k] for k in (SRC_L1, SRC_L2, SRC_WALK)}
    req = sum(d.values())
    c = m.counters()
    return dict(requests=req, l1Hits=d[SRC_L1], l2Hits=d[SRC_L2], walks=d[SRC_WALK],
                l1MissesPer1000=1000 * (req - d[SRC_L1]) / max(req, 1),
                l2MissesPer1000=1000 * d[SRC_WALK] / max(req, 1),
                l1CrossHits=c.get("l1_crossHits", 0), l2CrossHits=c.get("l2_crossHits", 0))
