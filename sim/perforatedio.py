"""PerforatedL2Tlb harness files (format in sim/README.md, "PerforatedL2Tlb harness files"):
memory image (sim/memimage.py, shared with the walker's harness) and request trace in,
statistics JSON and handshake log out; plus the replay of a run's log on the reference model
tb/models/perforated.py.

    from workloads import perforated as wl
    w = wl.random_access(20000, frac=0.1, holes=8, layout="dispersed")
    perforatedio.write_workload(w, "m.bin", "t.bin")
    st = perforatedio.run(exe, "m.bin", "t.bin", "s.json", log="l.bin", log_responses=2000)
    perforatedio.check_against_model(perforatedio.read_log("l.bin"), w, params)
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[1] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from harness_build import run_harness  # noqa: E402
from memimage import write_memory  # noqa: E402
from models.perforated import (COUNTERS, RESP_FIELDS, PerforatedModel,  # noqa: E402
                               PerforatedModelError, PerforatedParams, Req)

TRACE_MAGIC = b"XLATPT01"
LOG_DTYPE = np.dtype([("cycle", "<u8"), ("kind", "<u4"), ("x", "<u4"), ("y", "<u8"), ("z", "<u8")])
assert LOG_DTYPE.itemsize == 32
L_REQ, L_MEMREQ, L_MEMRESP, L_RESP, L_COUNTER = 0, 1, 2, 3, 7


def write_trace(w, path) -> int:
    """Little-endian: "XLATPT01", u64 n, u64 bitmapBase, then per field an array of n: u64 vpn,
    u32 asid, u64 root, u8 cmd, u8 user, u16 info (workloads.perforated INFO_*), u64 expPpn."""
    r = w.req
    n = len(r["vpn"])
    with open(path, "wb") as f:
        f.write(TRACE_MAGIC)
        f.write(np.uint64(n).tobytes())
        f.write(np.uint64(w.bitmap_base).tobytes())
        for k, dt in (("vpn", "<u8"), ("asid", "<u4"), ("root", "<u8"), ("cmd", "u1"), ("user", "u1")):
            a = np.asarray(r[k])
            if len(a) != n:
                raise ValueError(f"trace field {k}: {len(a)} rows, vpn has {n}")
            f.write(a.astype(dt).tobytes())
        f.write(np.asarray(w.info).astype("<u2").tobytes())
        f.write(np.asarray(w.exp_ppn).astype("<u8").tobytes())
    return n


def write_workload(w, mem_path, trace_path) -> None:
    write_memory(w.words, mem_path)
    write_trace(w, trace_path)


def read_log(path) -> np.ndarray:
    return np.fromfile(path, dtype=LOG_DTYPE)


def run(exe, mem, trace, out, *, log=None, log_responses=None, latency=100, jitter=0, warmup=0,
        label="", inflight=None, seed=None, exact_idle=False, timeout=None) -> dict:
    """Run the harness once; returns its statistics (raises with the harness's stderr on a
    failure, including exit status 3: counters, responses or protocol disagree)."""
    cmd = [exe, "--mem", mem, "--trace", trace, "--out", out, "--latency", latency,
           "--jitter", jitter, "--warmup", warmup]
    if label:
        cmd += ["--label", label]
    if log:
        cmd += ["--log", log]
        if log_responses is not None:
            cmd += ["--log-responses", log_responses]
    for flag, v in (("--inflight", inflight), ("--seed", seed)):
        if v is not None:
            cmd += [flag, v]
    if exact_idle:
        cmd.append("--exact-idle")
    return run_harness(cmd, out, "perforated", timeout)


def perf_names(params_or_manifest: dict) -> list:
    """The perf_* ports in the manifest's order (the order of the log's counter records)."""
    return [p["name"][len("perf_"):] for p in params_or_manifest["ports"] if p["name"].startswith("perf_")]


def check_against_model(log: np.ndarray, w, man: dict, max_report: int = 5) -> dict:
    """Replay the logged handshakes on tb/models/perforated.py in the cocotb scoreboard's order
    (tb/perforated/pf_env.py: per cycle the `resp` handshake, then the operation (`mem_resp` or
    `req`), then the `mem_req` handshake) and compare every response, every field (source and
    memReads included), and every `mem_req` address (the model raises on a wrong one). When the
    log covers the whole run (counter records present), every counter the model keeps must equal
    the RTL's. Returns {"checked", "mismatches": [...], "counters_checked"}."""
    params = PerforatedParams.from_dict(man["params"])
    m = PerforatedModel(params, bitmap_base=int(w.bitmap_base))
    r = w.req
    bad, checked = [], 0
    counters = {}
    names = perf_names(man)
    for rec in log:
        kind, x, y = int(rec["kind"]), int(rec["x"]), int(rec["y"])
        try:
            if kind == L_RESP:
                want = m.pop_response()
                got = dict(id=x & 0xFF, fault=(x >> 8) & 7, source=(x >> 12) & 7,
                           memReads=(x >> 16) & 15, pageSize=(x >> 20) & 3, perm_r=(x >> 24) & 1,
                           perm_w=(x >> 25) & 1, perm_x=(x >> 26) & 1, perm_u=(x >> 27) & 1, ppn=y)
                exp = want.fields()
                diff = {k: (got[k], exp[k]) for k in RESP_FIELDS if got[k] != exp[k]}
                checked += 1
                if diff:
                    bad.append(f"cycle {int(rec['cycle'])} request {int(rec['z'])}: (rtl, model) {diff} "
                               f"({want.reason}; reads {[(q.kind, hex(q.addr)) for q in want.reads]})")
            elif kind == L_REQ:
                i = x
                m.request(Req(id=y, vpn=int(r["vpn"][i]), asid=int(r["asid"][i]),
                              root=int(r["root"][i]), cmd=int(r["cmd"][i]), user=int(r["user"][i])))
            elif kind == L_MEMRESP:
                m.mem_response(x, y, False)
            elif kind == L_MEMREQ:
                m.mem_request(x, y)
            elif kind == L_COUNTER:
                counters[names[x]] = y
        except PerforatedModelError as e:
            bad.append(f"cycle {int(rec['cycle'])}: {e}")
        if len(bad) > max_report:
            break
    if counters:
        for c in COUNTERS:
            if c in counters and counters[c] != m.ctr[c]:
                bad.append(f"counter {c}: rtl {counters[c]} model {m.ctr[c]}")
    return {"checked": checked, "mismatches": bad, "counters_checked": bool(counters)}
