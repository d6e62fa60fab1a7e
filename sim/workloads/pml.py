"""PmlLogger workloads: bursts of dirty events for N active VM contexts (deterministic by seed).

A dirty event is the walker's report that a host leaf's D bit went 0 -> 1. The stream comes in
bursts (a guest phase that writes many new pages, e.g. a copy or a page-cache fill): `burst`
events back to back, one a cycle, then `gap` idle cycles; each event belongs to one of the
active contexts (uniformly at random, so the contexts' buffers fill at different times). Pages:

- a new page with probability 1 - `repeat`: a random 4 KiB page of the context's own 16 GiB of
  guest-physical memory, with a random guest-virtual page and the asid of one of two guest
  processes (the tracked one, asid 1, with probability `tracked`);
- with probability `repeat`, a page among the context's last `recent` new pages: the same page
  reported again before the hypervisor drained the log (two walkers' concurrent walks of one
  page both finding D clear, or a re-walk before the D update landed). PML logs it twice; the
  dedup filter exists to drop it.

Modes: `pml` (CTRL.pml: every event owes one PML entry) and `epml` (CTRL.pml | CTRL.epml,
TRACK_ASID 1: events of the tracked process owe a guest entry too).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MODES = ("pml", "epml")
CTRL = {"pml": 1, "epml": 3}
TRACKED_ASID, OTHER_ASID = 1, 2
BUFFER_BASE = 1 << 32          # host-physical: ctx c's PML buffer at BASE + c*0x2000, guest +0x1000
CTX_GPA_PAGES = 1 << 22        # 16 GiB of guest-physical pages per context


@dataclass
class PmlWorkload:
    name: str
    mode: str
    active: int
    ctx: dict                  # per configured context: ctrl, pmlAddr, gpmlAddr, trackAsid, irqVector
    ev: dict                   # per event: gpa, gva (page numbers), vmid, asid, arrive (cycle)
    facts: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.ev["gpa"])


def bursts(active: int, n: int, seed: int = 1, mode: str = "pml", *, burst=(128, 512),
           gap=(256, 1024), repeat: float = 0.25, recent: int = 16, tracked: float = 0.5,
           vector: int = 0x40, name: str | None = None) -> PmlWorkload:
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: one of {MODES}")
    rng = np.random.default_rng([seed, active, MODES.index(mode)])
    ctx = {"ctrl": [CTRL[mode]] * active,
           "pmlAddr": [BUFFER_BASE + 0x2000 * c for c in range(active)],
           "gpmlAddr": [BUFFER_BASE + 0x2000 * c + 0x1000 for c in range(active)],
           "trackAsid": [TRACKED_ASID] * active, "irqVector": [vector + c for c in range(active)]}
    # arrival cycles: bursts of back-to-back events separated by gaps
    arrive = np.empty(n, dtype=np.uint64)
    t, i = 0, 0
    while i < n:
        k = min(n - i, int(rng.integers(burst[0], burst[1] + 1)))
        arrive[i:i + k] = t + np.arange(k, dtype=np.uint64)
        t += k + int(rng.integers(gap[0], gap[1] + 1))
        i += k
    vmid = rng.integers(0, active, n).astype(np.uint32)
    gpa = np.empty(n, dtype=np.uint64)
    gva = np.empty(n, dtype=np.uint64)
    asid = np.empty(n, dtype=np.uint32)
    hist = [[] for _ in range(active)]      # recent new pages: (gpa, gva, asid)
    rep = rng.random(n) < repeat
    new_gpa = rng.integers(0, CTX_GPA_PAGES, n)
    new_gva = rng.integers(0x1000, 1 << 33, n)     # user half of a 45-bit VA page space
    new_asid = np.where(rng.random(n) < tracked, TRACKED_ASID, OTHER_ASID)
    pick = rng.random(n)
    repeats = 0
    for j in range(n):
        c = int(vmid[j])
        h = hist[c]
        if rep[j] and h:
            g, v, a = h[int(pick[j] * len(h))]
            repeats += 1
        else:
            g, v, a = c * CTX_GPA_PAGES + int(new_gpa[j]), int(new_gva[j]), int(new_asid[j])
            h.append((g, v, a))
            if len(h) > recent:
                h.pop(0)
        gpa[j], gva[j], asid[j] = g, v, a
    ev = {"gpa": gpa, "gva": gva, "vmid": vmid, "asid": asid, "arrive": arrive}
    facts = {"events": n, "active": active, "mode": mode, "repeat_fraction": repeats / max(1, n),
             "tracked_fraction": float(np.mean(asid == TRACKED_ASID)) if n else 0.0,
             "offered_cycles": int(arrive[-1]) + 1 if n else 0,
             "offered_per_cycle": n / (int(arrive[-1]) + 1) if n else 0.0,
             "burst": list(burst), "gap": list(gap), "repeat": repeat, "recent": recent}
    return PmlWorkload(name or f"{mode}_c{active}", mode, active, ctx, ev, facts)
