"""PmlLogger harness files (format in sim/README.md, "PmlLogger harness files"): the workload
in, statistics JSON, per-event records and the port-transaction log out; the figures derived
from the event records; and the check of a logged prefix against the reference model
tb/models/pml.py.

    pmlio.write_workload(w, "w.bin")               # a sim/workloads/pml.py PmlWorkload
    st = pmlio.run(exe, "w.bin", "s.json", events="e.bin", log="l.bin", log_cycles=20000)
    fig = pmlio.figures(pmlio.read_events("e.bin"), st)
    pmlio.check_against_model(pmlio.read_log("l.bin"), manifest)   # {"checked", "mismatches"}
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
from models.pml import COUNTERS, ModelError, PmlModel  # noqa: E402

MAGIC = b"XLATPE01"
CTX_FIELDS = (("ctrl", "<u4"), ("pmlAddr", "<u8"), ("gpmlAddr", "<u8"), ("trackAsid", "<u4"),
              ("irqVector", "<u4"))
EV_FIELDS = (("gpa", "<u8"), ("gva", "<u8"), ("vmid", "<u4"), ("asid", "<u4"), ("arrive", "<u8"))
EVENT_DTYPE = np.dtype([("offered", "<u8"), ("accepted", "<u8"), ("written", "<u8"),
                        ("vmid", "<u4"), ("parts", "u1"), ("deduped", "u1"), ("ignored", "u1"),
                        ("pad", "u1")])
LOG_DTYPE = np.dtype([("cycle", "<u8"), ("kind", "<u4"), ("x", "<u4"), ("y", "<u8"), ("z", "<u8")])
assert EVENT_DTYPE.itemsize == 32 and LOG_DTYPE.itemsize == 32
LOG_WRITE, LOG_CSR, LOG_RESP, LOG_EVENT, LOG_EXIT, LOG_IRQ, LOG_STALL, LOG_PERF = range(8)


def write_workload(w, path) -> int:
    """Little-endian: "XLATPE01", u64 nctx, per-context arrays (u32 ctrl, u64 pmlAddr,
    u64 gpmlAddr, u32 trackAsid, u32 irqVector), u64 n, per-event arrays (u64 gpa, u64 gva,
    u32 vmid, u32 asid, u64 arrive)."""
    nctx = len(w.ctx["ctrl"])
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(np.uint64(nctx).tobytes())
        for k, dt in CTX_FIELDS:
            f.write(np.asarray(w.ctx[k], dtype=np.uint64).astype(dt).tobytes())
        f.write(np.uint64(w.n).tobytes())
        for k, dt in EV_FIELDS:
            a = np.asarray(w.ev[k])
            if len(a) != w.n:
                raise ValueError(f"event field {k}: {len(a)} rows, gpa has {w.n}")
            f.write(a.astype(dt).tobytes())
    return w.n


def read_events(path) -> np.ndarray:
    return np.fromfile(path, dtype=EVENT_DTYPE)


def read_log(path) -> np.ndarray:
    return np.fromfile(path, dtype=LOG_DTYPE)


def run(exe, work, out, *, events=None, log=None, log_cycles=0, latency=10, jitter=0,
        exit_service=2000, irq_service=500, seed=None, exact_idle=False, label="",
        timeout=None) -> dict:
    """Run the harness once; returns its statistics (raises with the harness's stderr on a
    failure, including exit status 3: counters or protocol disagree)."""
    cmd = [str(exe), "--work", str(work), "--out", str(out), "--latency", str(latency),
           "--jitter", str(jitter), "--exit-service", str(exit_service),
           "--irq-service", str(irq_service)]
    if events:
        cmd += ["--events", str(events)]
    if log:
        cmd += ["--log", str(log), "--log-cycles", str(log_cycles)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if label:
        cmd += ["--label", label]
    if exact_idle:
        cmd.append("--exact-idle")
    return run_harness(cmd, out, "pml", timeout)


# ----------------------------------------------------------------------------- figures
def _dist(x: np.ndarray) -> dict:
    if not len(x):
        return {"mean": 0.0, "p99": 0.0, "max": 0}
    return {"mean": float(x.mean()), "p99": float(np.percentile(x, 99, method="nearest")),
            "max": int(x.max())}


def busy_cycles(start: np.ndarray, end: np.ndarray) -> int:
    """Cycles covered by the union of the closed intervals [start, end] (start ascending)."""
    if not len(start):
        return 0
    reach = np.maximum.accumulate(end.astype(np.int64))
    s = start.astype(np.int64)
    # a new run of overlapping intervals starts where an interval begins after all before it end
    new = np.ones(len(s), dtype=bool)
    new[1:] = s[1:] > reach[:-1]
    idx = np.flatnonzero(new)
    run_end = np.append(reach[idx[1:] - 1], reach[-1])
    return int(np.sum(run_end - s[idx] + 1))


def figures(ev: np.ndarray, st: dict) -> dict:
    """The evaluation's figures of one run from its event records and statistics:

    - entries per cycle: log writes / busy cycles, a cycle being busy while some event is
      between its first cycle on `dirty` and its last part's write (or its acceptance, for an
      event with nothing to write): the sustained logging rate under the bursts, exits and
      software service included;
    - exits / guest interrupts per million dirty events (every event offered);
    - waits from the first cycle on `dirty` to acceptance and to the last part's write;
    - the fraction of events the dedup filter dropped."""
    n = len(ev)
    off = ev["offered"].astype(np.int64)
    acc = ev["accepted"].astype(np.int64)
    wr = ev["written"].astype(np.int64)
    logged = wr > 0
    end = np.where(logged, wr, acc)
    busy = busy_cycles(off, end)
    writes = int(st["writes"])
    return {
        "events": n, "writes": writes, "busy_cycles": busy,
        "entries_per_cycle": writes / busy if busy else 0.0,
        "events_per_cycle": n / busy if busy else 0.0,
        "exits_per_M": 1e6 * st["exits"] / max(1, n),
        "irqs_per_M": 1e6 * st["guestIrqs"] / max(1, n),
        "wait_accept": _dist(acc - off),
        "wait_write": _dist((wr - off)[logged]),
        "filtered": int(ev["deduped"].sum()) / max(1, n),
        "stall_fraction": st["stallCycles"] / busy if busy else 0.0,
    }


# ----------------------------------------------------------------------------- model check
def check_against_model(log: np.ndarray, man: dict, status_lag: int = 12,
                        stall_slack: int = 3) -> dict:
    """Replay the logged transactions on the reference model tb/models/pml.py, cycle by cycle,
    in the order of tb/pml/pml_env.py's scoreboard, except that a CSR write is applied before
    the same cycle's accepted event: the RTL's order (an event accepted in the cycle software
    writes PML_INDEX stays in the dedup filter: AssocCache's fill beats the same-cycle forget;
    for every other register the two orders give the same state).

    Checked: each write is one the model allows (the head event of its context, part by part,
    at ADDR + 8 * INDEX, the right data, a free id), each CSR read's data (STATUS within
    ``status_lag`` cycles of the eager model), each exit / guest interrupt is one the model
    raised, `dirty_ready` low only while the model's queue of that context is full (within
    ``stall_slack`` cycles), and at the end of the prefix every perf_* counter against the
    model's (exits and guest interrupts: raised minus not yet delivered; stallCycles: the
    logged stalls). Stops at the first mismatch (the model's state is unreliable after it).
    Returns {"checked": transactions replayed, "cycles", "mismatches": [...]}."""
    regs = man.get("registers")
    stride = int(man.get("derived", {}).get("stride", 0x80))
    m = PmlModel(man["params"], regs, None, stride)
    perf_names = [p["name"][len("perf_"):] for p in man["ports"] if p["name"].startswith("perf_")]
    rank = {LOG_WRITE: 0, LOG_CSR: 1, LOG_RESP: 2, LOG_EVENT: 4, LOG_STALL: 4, LOG_EXIT: 5,
            LOG_IRQ: 5, LOG_PERF: 6}      # a CSR write: 3
    kinds, xs = log["kind"].astype(int), log["x"].astype(int)
    ranks = np.array([3 if k == LOG_CSR and x >> 16 & 1 else rank[k] for k, x in zip(kinds, xs)])
    # a CSR access applies (and is answered) in the cycle after its request (the CSR input
    # stage, docs/pml-logger.md "Pipeline timing"): the harness logs it at the request
    cycles = log["cycle"].astype(np.int64) + (kinds == LOG_CSR)
    recs = np.lexsort((np.arange(len(log)), ranks, cycles))
    stalls, checked, perf = 0, 0, {}
    bad: list = []
    last = 0
    try:
        for i in recs:
            r = log[i]
            k, cyc, x, y, z = int(r["kind"]), int(cycles[i]), int(r["x"]), int(r["y"]), int(r["z"])
            m.now = cyc
            last = cyc
            if k == LOG_WRITE:
                m.write(y, z, x, presented=cyc)
            elif k == LOG_CSR:
                addr, write, err = x & 0xFFFF, x >> 16 & 1, x >> 17 & 1
                d = m.decode(addr)
                rdata, eerr = m.csr(addr, write, y)
                if err != eerr:
                    raise ModelError(f"csr {addr:#x} write={write}: error {err}, model {eerr}")
                if not write:
                    allowed = {rdata}
                    if d is not None and d[1].name == "STATUS":
                        allowed = m.status_values(d[0], cyc - status_lag, cyc)
                        ok = z in allowed or all(((z >> b) & 1) in {(v >> b) & 1 for v in allowed}
                                                 for b in range(8))
                    else:
                        ok = z in allowed
                    if not ok:
                        raise ModelError(f"csr read {addr:#x}: rdata {z:#x}, model "
                                         f"{' or '.join(hex(v) for v in sorted(allowed))}")
            elif k == LOG_RESP:
                m.response(x & 0xFFFF, x >> 16 & 1)
            elif k == LOG_EVENT:
                m.accept(x & 0xFFFF, y, z, x >> 16)
            elif k == LOG_STALL:
                stalls += 1
                if not m.recently_full(x, stall_slack):
                    raise ModelError(f"dirty_ready low for an event of context {x}, whose queue "
                                     f"holds {m.occupancy(x)} < queueDepth in the model")
            elif k == LOG_EXIT:
                m.take_exit(x, y)
            elif k == LOG_IRQ:
                m.take_irq(x, y)
            elif k == LOG_PERF:
                perf[perf_names[x]] = y
                continue
            checked += 1
    except ModelError as e:
        bad.append(f"cycle {last}: {e}")
    if not bad and perf:
        exp = dict(m.counters)
        exp["stallCycles"] = stalls
        exp["exits"] -= len(m.pending_exits)
        exp["guestIrqs"] -= len(m.pending_irqs)
        diff = {c: (perf[c], exp[c]) for c in COUNTERS if c in perf and perf[c] != exp[c]}
        if diff:
            bad.append(f"perf counters at cycle {last} (rtl, model): {diff}")
    return {"checked": checked, "cycles": last, "mismatches": bad}
