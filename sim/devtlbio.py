"""DevTlb harness files (format in sim/README.md, "DevTlb harness files"): the workload in,
statistics JSON and the port-transaction log out; the HyperSIO timing in cycles; and the replay
of a logged run on the reference model tb/models/devtlb.py.

    devtlbio.write_workload(w, "w.bin")            # a sim/workloads/devtlb.py DevTlbWorkload
    st = devtlbio.run(exe, "w.bin", "s.json", log="l.bin", **devtlbio.Timing().harness_args())
    devtlbio.check_against_model(devtlbio.read_log("l.bin"), manifest)   # {"checked", "mismatches"}
"""
from __future__ import annotations

import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[1] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from harness_build import run_harness  # noqa: E402
from models.devtlb import COUNTERS, DevTlbModel, DevTlbModelError, DevTlbParams  # noqa: E402

MAGIC = b"XLATDT01"
LOG_DTYPE = np.dtype([("cycle", "<u8"), ("kind", "<u4"), ("x", "<u4"), ("y", "<u8"), ("z", "<u8")])
assert LOG_DTYPE.itemsize == 32
LOG_REQ, LOG_COMP, LOG_RESP, LOG_ATS, LOG_PERF = 0, 1, 2, 3, 7


@dataclass(frozen=True)
class Timing:
    """HyperSIO's timing model (spec "Evaluation"), and the clock the cycles stand for."""
    clock_ghz: float = 2.0          # 0.5 ns a cycle: the RTL's 4-cycle lookup is the 2 ns DevTLB hit
    pcie_rtt_ns: float = 900.0      # device -> IOMMU -> device
    dram_ns: float = 50.0
    dram_accesses: int = 2          # the IOMMU's walk: guest leaf + host leaf (upper levels cached)
    link_gbps: float = 200.0
    packet_bytes: int = 1542
    window: int = 64                # packets between their first translation's offer and transmitted

    @property
    def cycle_ps(self) -> int:
        return round(1000 / self.clock_ghz)

    @property
    def ats_ns(self) -> float:
        return self.pcie_rtt_ns + self.dram_accesses * self.dram_ns

    @property
    def ats_cycles(self) -> int:
        return round(self.ats_ns * self.clock_ghz)

    @property
    def packet_ps(self) -> int:
        return round(self.packet_bytes * 8 / self.link_gbps * 1000)

    def harness_args(self) -> dict:
        return dict(latency=self.ats_cycles, cycle_ps=self.cycle_ps, packet_ps=self.packet_ps,
                    window=self.window)


def write_workload(w, path) -> int:
    """Little-endian: "XLATDT01", u64 packets, u64 reqsPerPacket, then per request (packet-major)
    u32 sid[n], u64 iova[n] (4 KiB page), u8 write[n], u8 size[n] (page size of its mapping:
    0 4 KiB, 1 2 MiB, 2 1 GiB)."""
    n = len(w.req["sid"])
    if n % w.reqs:
        raise ValueError(f"{n} requests is not a whole number of {w.reqs}-request packets")
    with open(path, "wb") as f:
        f.write(MAGIC)
        f.write(np.uint64(n // w.reqs).tobytes())
        f.write(np.uint64(w.reqs).tobytes())
        for k, dt in (("sid", "<u4"), ("iova", "<u8"), ("write", "u1"), ("size", "u1")):
            a = np.asarray(w.req[k])
            if len(a) != n:
                raise ValueError(f"request field {k}: {len(a)} rows, sid has {n}")
            f.write(a.astype(dt).tobytes())
    return n


def read_log(path) -> np.ndarray:
    return np.fromfile(path, dtype=LOG_DTYPE)


def run(exe, work, out, *, log=None, log_requests=None, latency=2000, jitter=0, window=64,
        packet_ps=61680, cycle_ps=500, warmup=0, seed=None, exact_idle=False, label="",
        timeout=None) -> dict:
    """Run the harness once; returns its statistics (raises with the harness's stderr on a
    failure, including exit status 3: counters or protocol disagree)."""
    cmd = [str(exe), "--work", str(work), "--out", str(out), "--latency", str(latency),
           "--jitter", str(jitter), "--window", str(window), "--packet-ps", str(packet_ps),
           "--cycle-ps", str(cycle_ps), "--warmup", str(warmup)]
    if log:
        cmd += ["--log", str(log)]
        if log_requests is not None:
            cmd += ["--log-requests", str(log_requests)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if label:
        cmd += ["--label", label]
    if exact_idle:
        cmd.append("--exact-idle")
    return run_harness(cmd, out, "devtlb", timeout=timeout)


def model_params(man: dict) -> DevTlbParams:
    """The model's parameters from a manifest (as tb/devtlb/dt_env.py: the RTL writes 0 for
    'default' and gives the values it derived)."""
    return DevTlbParams.from_manifest(man["params"], man.get("derived", {}))


def check_against_model(log: np.ndarray, man: dict, max_mismatches: int = 20, warmup_requests: int = 0) -> dict:
    """Replay a transaction log on tb/models/devtlb.py as the cocotb scoreboard
    (tb/devtlb/dt_env.py) does: every accepted request and completion acts in its respond cycle
    (acceptance + latency - 1), in acceptance order; then each cycle's resp handshake must be
    the model's (hit queue head for source 0/1, an answerable waiter for source 2; every field
    compared) and each ats_req handshake the head of the model's demand / prefetch queue. When
    the log covers the whole run (it ends with the counters), every perf_* counter must equal
    the model's (perf_ptbFullCycles: the harness offers a request only with req_ready, so the
    RTL's is 0; the model's is not compared). Returns {"checked", "cycles", "mismatches",
    "counters_checked", "prefetch"}.

    ``prefetch``: what the model says about the prefetches whose slot was allocated after the
    first ``warmup_requests`` requests (and completed in the log): ``completed``; ``merged``, those
    a demand request joined while in flight (a late prefetch: the request waits less than a full
    round trip and needs no ATS request of its own); ``pb_hit``, those whose PB entry a request
    hit; ``used`` (either); and, over the requests after the warm-up, ``requests``,
    ``devtlb_misses`` (requests that missed the DevTLB), ``pb_hits``, ``merged_into_prefetch``."""
    p = model_params(man)
    m = DevTlbModel(p)
    L = p.latency
    pipe: deque = deque()
    sent_cycle: dict = {}
    mism: list[str] = []
    checked = 0

    pf = dict(completed=0, merged=0, pb_hit=0, used=0, requests=0, devtlb_misses=0, pb_hits=0,
              merged_into_prefetch=0)
    slot_use: dict = {}           # prefetch slot serial -> set of uses ("merge", "pb"), counted ones
    entry_of: dict = {}           # id(PB entry) -> serial of the prefetch slot that filled it
    nreq = 0
    # requests whose prefetches the model's issue stage has not acted yet (Q27): their outcome's
    # ``ats`` gains the prefetch slots when it does
    pf_outs: deque = deque()

    def note_prefetches():
        while pf_outs and pf_outs[0][0] is not m.pending_trigger:
            o, warm = pf_outs.popleft()
            for a in o.ats:               # prefetch slots this request's trigger allocated
                if a.prefetch and warm:
                    slot_use[m.slots[a.tag].serial] = set()

    def act_until(c):
        nonlocal nreq
        while pipe and pipe[0][0] <= c:
            rc, kind, data, ac = pipe.popleft()
            m.flush_prefetch(rc - 1)      # a trigger's issue stage before the cycle's operation
            note_prefetches()
            if kind == "req":
                pb_before = list(m.pb) if p.prefetch else []
                out = m.request(*data, strict=True, cycle=rc)
                if out.kind == "alloc" and out.slot is None:
                    raise DevTlbModelError(f"request {data} accepted at {ac} allocated without a free slot")
                nreq += 1
                warm = nreq > warmup_requests
                if p.prefetch:
                    pf_outs.append((out, warm))
                    note_prefetches()
                    if warm:
                        pf["requests"] += 1
                        pf["devtlb_misses"] += out.kind != "hit"
                        pf["pb_hits"] += out.kind == "pbhit"
                    if out.kind == "merge" and m.slots[out.slot].prefetch:
                        pf["merged_into_prefetch"] += warm
                        u = slot_use.get(m.slots[out.slot].serial)
                        if u is not None:
                            u.add("merge")
                    elif out.kind == "pbhit":
                        u = slot_use.get(entry_of.get(id(pb_before[out.way]), (None, None))[1])
                        if u is not None:
                            u.add("pb")
            else:
                t, ppn, pr, pw, ps, fault = data
                s = m.slots[t] if t < p.slots else None
                unsent = s is not None and s.sent and sent_cycle.get(t, -1) >= ac
                if unsent:
                    s.sent = False
                serial = s.serial if s is not None else None
                pb_ids = {id(e) for e in m.pb} if p.prefetch else set()
                out = m.completion(t, ppn, pr, pw, ps, fault)
                note_prefetches()
                if unsent:
                    s.sent = True
                if serial in slot_use and out.kind == "completed":
                    pf["completed"] += 1
                    slot_use[serial].add("done")
                for e in (m.pb if p.prefetch else []):   # the entry this completion installed
                    if e is not None and id(e) not in pb_ids:   # (kept alive: ids are not reused)
                        entry_of[id(e)] = (e, serial if serial in slot_use else None)
        m.flush_prefetch(c)               # the issue stage acts before this cycle's handshakes
        note_prefetches()

    perf = {}
    for r in log:
        c, kind, x, y, z = int(r["cycle"]), int(r["kind"]), int(r["x"]), int(r["y"]), int(r["z"])
        if kind == LOG_PERF:
            perf[x] = y
            continue
        try:
            if kind == LOG_REQ:
                pipe.append((c + L - 1, "req", (x & 0xFFFF, y, z, x >> 16 & 1), c))
            elif kind == LOG_COMP:
                pipe.append((c + L - 1, "comp", (x & 0xFF, y, x >> 8 & 1, x >> 9 & 1, x >> 10 & 3, x >> 12 & 1), c))
            elif kind == LOG_RESP:
                act_until(c)
                got = dict(tag=x & 0xFF, ppn=y, perm_r=x >> 8 & 1, perm_w=x >> 9 & 1, fault=x >> 10 & 1,
                           source=x >> 11 & 3)
                exp = m.expect_response(got["tag"], got["source"], cycle=c).as_dict()
                if exp != got:
                    mism.append(f"cycle {c}: resp {got}, model {exp}")
            elif kind == LOG_ATS:
                act_until(c)
                m.ats_sent(x & 0xFFFF, y, z, x >> 16 & 1)
                sent_cycle[x & 0xFFFF] = c
            checked += 1
        except DevTlbModelError as e:
            mism.append(f"cycle {c}: kind {kind} ({x:#x}, {y:#x}, {z:#x}): {e}")
        if len(mism) >= max_mismatches:
            break
    counters_checked = 0
    if perf and len(mism) < max_mismatches:
        act_until(1 << 62)
        names = [pp["name"][len("perf_"):] for pp in man["ports"] if pp["name"].startswith("perf_")]
        for i, v in perf.items():
            name = names[i]
            if name == "ptbFullCycles" or name not in COUNTERS:
                continue
            counters_checked += 1
            if m.counters[name] != v:
                mism.append(f"counter {name}: RTL {v}, model {m.counters[name]}")
    for u in slot_use.values():
        if "done" in u:
            pf["merged"] += "merge" in u
            pf["pb_hit"] += "pb" in u
            pf["used"] += bool(u & {"merge", "pb"})
    return {"checked": checked, "cycles": int(log["cycle"].max()) if len(log) else 0,
            "mismatches": mism, "counters_checked": counters_checked, "prefetch": pf}
