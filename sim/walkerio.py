"""NestedWalker harness files (format in sim/README.md, "NestedWalker harness input"):
memory image and request trace in, statistics JSON and response log out; plus the check of
a run's responses against the reference model tb/models/walker.py.

    walkerio.write_memory(words, "m.bin")          # {byte address: 64-bit word}
    walkerio.write_trace(requests, "t.bin")        # dict of arrays gva, asid, vmid, gRoot, hRoot, cmd, user
    st = walkerio.run(exe, "m.bin", "t.bin", "s.json", log="r.bin", latency=100)
    log = walkerio.read_log("r.bin")               # numpy records, one per response
    walkerio.check_against_model(words, requests, log, params, n=200)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[1] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from harness_build import run_harness  # noqa: E402
from memimage import MEM_MAGIC, write_memory  # noqa: E402,F401  (shared with perforatedio)
from models.walker import SparseMemory, WalkRequest, WalkerConfig, walk  # noqa: E402

TRACE_MAGIC = b"XLATWT01"
REQ_FIELDS = ("gva", "asid", "vmid", "gRoot", "hRoot", "cmd", "user")
REQ_DTYPES = {"gva": "<u8", "asid": "<u4", "vmid": "<u4", "gRoot": "<u8", "hRoot": "<u8",
              "cmd": "u1", "user": "u1"}
LOG_DTYPE = np.dtype([
    ("index", "<u4"), ("fault", "u1"), ("faultLevel", "u1"), ("faultStage", "u1"),
    ("pageSize", "u1"), ("guestPageSize", "u1"), ("hostPageSize", "u1"), ("perm", "u1"),
    ("memReads", "u1"), ("memWrites", "u1"), ("pad", "u1", 3), ("ppn", "<u8"),
    ("faultGpa", "<u8"), ("latency", "<u4"), ("pad3", "<u4")])
assert LOG_DTYPE.itemsize == 40


def write_trace(req: dict, path) -> int:
    """Little-endian: "XLATWT01", u64 n, then per field an array of n: u64 gva, u32 asid,
    u32 vmid, u64 gRoot, u64 hRoot, u8 cmd, u8 user."""
    n = len(req["gva"])
    with open(path, "wb") as f:
        f.write(TRACE_MAGIC)
        f.write(np.uint64(n).tobytes())
        for k in REQ_FIELDS:
            a = np.asarray(req[k], dtype=np.uint64 if REQ_DTYPES[k].endswith("8") else np.int64)
            if len(a) != n:
                raise ValueError(f"trace field {k}: {len(a)} rows, gva has {n}")
            f.write(a.astype(REQ_DTYPES[k]).tobytes())
    return n


def read_log(path) -> np.ndarray:
    return np.fromfile(path, dtype=LOG_DTYPE)


def run(exe, mem, trace, out, *, log=None, latency=100, jitter=0, warmup=0, label="",
        inflight=None, resp_ready=None, dirty_ready=None, mem_req_ready=None, seed=None,
        exact_idle=False, timeout=None) -> dict:
    """Run the harness once; returns its statistics (raises with the harness's stderr on a
    failure, including exit status 3: counters or protocol disagree)."""
    cmd = [str(exe), "--mem", str(mem), "--trace", str(trace), "--out", str(out),
           "--latency", str(latency), "--jitter", str(jitter), "--warmup", str(warmup)]
    if label:
        cmd += ["--label", label]
    if log:
        cmd += ["--log", str(log)]
    for flag, v in (("--inflight", inflight), ("--resp-ready", resp_ready),
                    ("--dirty-ready", dirty_ready), ("--mem-req-ready", mem_req_ready),
                    ("--seed", seed)):
        if v is not None:
            cmd += [flag, str(v)]
    if exact_idle:
        cmd.append("--exact-idle")
    return run_harness(cmd, out, "walker", timeout)


# ----------------------------------------------------------------------------- model check
PERM_BITS = ("perm_r", "perm_w", "perm_x", "perm_u")
CHECK_FIELDS = ("fault", "faultLevel", "faultStage", "faultGpa", "ppn", "pageSize",
                "guestPageSize", "hostPageSize", "perm")


def model_results(words: dict, req: dict, params: dict, indices) -> dict:
    """index -> the reference model's WalkResult for trace requests ``indices`` (ascending),
    walked one after another on a copy of the initial memory (A/D write-backs applied in
    that order, as a single cache-less walker would)."""
    cfg = WalkerConfig.from_params(params)
    mem = SparseMemory(words)
    out = {}
    for i in sorted(indices):
        r = WalkRequest(id=0, **{k: int(req[k][i]) for k in REQ_FIELDS})
        out[i] = walk(mem, cfg, r)
    return out


def check_against_model(words: dict, req: dict, log: np.ndarray, params: dict, n: int = 200,
                        exact_counts: bool = False) -> dict:
    """Compare the first ``n`` responses (in response order) with the reference model.

    The translation and fault fields (ppn, sizes, permissions, fault, stage, level, faultGpa)
    do not depend on the order walks run in (A/D state never changes a translation in
    hardware mode, and with adUpdate = fault nothing is written), so each response is compared
    with the model walking the requests 0..max(index) in trace order. ``exact_counts``
    (baseline: no caches, one walker, so the RTL walks in trace order too) also compares
    memReads / memWrites. Returns {"checked", "mismatches": [...]}."""
    rows = log[:n]
    need = set(int(x) for x in rows["index"])
    upto = max(need) + 1 if need else 0
    res = model_results(words, req, params, range(upto))
    bad = []
    for row in rows:
        i = int(row["index"])
        e = res[i].resp
        perm = e["perm_r"] | e["perm_w"] << 1 | e["perm_x"] << 2 | e["perm_u"] << 3
        exp = dict(e, perm=perm)
        fields = CHECK_FIELDS + (("memReads", "memWrites") if exact_counts else ())
        diff = {f: (int(row[f]), int(exp[f])) for f in fields if int(row[f]) != int(exp[f])}
        if diff:
            bad.append({"index": i, "gva": hex(int(req["gva"][i])), "diff": diff,
                        "model_reason": res[i].fault_reason})
    return {"checked": len(rows), "mismatches": bad}
