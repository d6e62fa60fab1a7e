"""PerforatedL2Tlb workloads: random access over a 2 GiB footprint (1024 2 MiB regions of one
address space, asid 1), a fraction of the regions fragmented with holes, the page tables built
by the testbenches' builder for perforated pages (tb/xlat_tb/perforated_tables.py,
``FragScenario``: the same tables tb/perforated and the model tests trust). Deterministic by
seed.

- ``mode="perforated"``: every fragmented region is a perforated 2 MiB page (PD leaf with the
  perforated bit and the exact coarse filter, hole bitmap, shadow entry, hole table): what
  ``perforated_default`` runs;
- ``mode="splintered"``: the same regions as 512 ordinary PTEs each (the OS without perforated
  pages): what ``perforated_off``, the splintered baseline, runs. Data frames come from an
  allocator seeded by the scenario only, so every page translates the same in both modes;
- the **ideal**: no fragmented region (``frac = 0``), every region one 2 MiB page, on
  ``perforated_default``.

Holes: ``holes`` per fragmented region, ``clustered`` (consecutive from a random start: one or
two filter bits) or ``dispersed`` (spread evenly: every filter bit once holes >= 8),
``allocated`` (each hole has its own frame) or unallocated (the hole PTE is not present: the OS
allocates lazily; a request for it faults).

Requests: ``requests`` pages drawn uniformly (with replacement) from the 1024 regions x 512
pages, reads (cmd 0), user 1. Every request carries what the builder's records say it must get
(``PerforatedMachine.expect``, computed from the records, never through the reference model):
fault, ppn, pageSize, permissions, and the page's kind, from which the harness counts the
counters a port cannot show (filter skips, bitmap lookups, holes, fills).
"""
from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_TB = Path(__file__).resolve().parents[2] / "tb"
if str(_TB) not in sys.path:
    sys.path.insert(0, str(_TB))
from xlat_tb.perforated_tables import FragScenario  # noqa: E402

REGIONS = 1024                 # 2 GiB of 2 MiB regions
# info bits per request (sim/harness/perforated.cpp, INFO_*)
INFO_PERFORATED = 1            # the page's region is a perforated 2 MiB page (perforated mode)
INFO_FILTER = 2                # ... and the page's filter bit is 1
INFO_HOLE = 4                  # ... and its bitmap bit is set: the page is decided a hole
INFO_LARGE = 8                 # a walk for the page reads a PD leaf (2 MiB or perforated): fills2m
INFO_LEAF4K = 16               # a walk (or hole resolution) for it ends on a present 4 KiB leaf: fills4k
INFO_FAULT = 32                # the builder says: fault 1 (unallocated hole)
INFO_PAGE2M = 64               # pageSize 1 expected (an ordinary 2 MiB page)
INFO_W, INFO_U, INFO_X = 128, 256, 512   # expected permissions


@dataclass
class Workload:
    name: str
    mode: str
    frac: float
    holes: int
    layout: str
    allocated: bool
    words: dict                # the memory image {byte address: word}
    bitmap_base: int
    req: dict                  # vpn (u64), asid (u32), root (u64), cmd (u8), user (u8)
    info: np.ndarray           # u16 per request (INFO_*)
    exp_ppn: np.ndarray        # u64 per request (0 for a fault)
    fragmented: int            # fragmented regions
    hole_pages: int            # holes in all


def name_of(frac: float, holes: int, layout: str, allocated: bool) -> str:
    if frac == 0:
        return "ideal"
    return f"f{frac * 100:g}_h{holes}_{layout[:4]}_{'alloc' if allocated else 'unalloc'}"


def random_access(requests: int, *, frac: float, holes: int = 8, layout: str = "dispersed",
                  allocated: bool = True, mode: str = "perforated", seed: int = 1,
                  regions: int = REGIONS, pa_bits: int = 52, sweep: bool = False) -> Workload:
    """``requests`` pages uniform over the footprint; with ``sweep`` they follow one pass over every
    64-page chunk (``FragScenario.sweep_vpns``, its own random stream, so the uniform part is the
    same with or without it)."""
    sc = FragScenario.build(seed, mode=mode, regions=regions, frac=frac, holes=holes,
                            layout=layout, allocated=allocated, pa_bits=pa_bits)
    m, asid = sc.machine, sc.asid
    sp = m.space(asid)
    rng = random.Random(f"perfeval:{seed}:{requests}")
    vpns = sc.random_vpns(rng, requests)
    if sweep:
        vpns = sc.sweep_vpns(random.Random(f"perfsweep:{seed}")) + vpns
    requests = len(vpns)
    info = np.zeros(requests, dtype=np.uint16)
    exp = np.zeros(requests, dtype=np.uint64)
    perforated = mode == "perforated"
    for k, vpn in enumerate(vpns):
        e = m.expect(asid, vpn, 0, 1)
        rec = sp.large.get(vpn >> 9)
        f = 0
        if rec is not None and rec.perforated and perforated:
            f |= INFO_PERFORATED
            if (rec.filt >> ((vpn & 511) // 64)) & 1:
                f |= INFO_FILTER
            if e.hole:
                f |= INFO_HOLE
        if rec is not None and (perforated or not rec.perforated):
            f |= INFO_LARGE
        if e.fault:
            f |= INFO_FAULT
        else:
            exp[k] = e.ppn
            splintered = rec is not None and rec.perforated and not perforated
            if not e.large or splintered:       # a hole's PTE, or one of the 512 PTEs
                f |= INFO_LEAF4K
            if e.pageSize == 1:
                f |= INFO_PAGE2M
            w, u, x = e.perm
            f |= INFO_W * w | INFO_U * u | INFO_X * x
        info[k] = f
    n = requests
    req = {"vpn": np.asarray(vpns, dtype=np.uint64), "asid": np.full(n, asid, np.uint32),
           "root": np.full(n, sp.root, np.uint64), "cmd": np.zeros(n, np.uint8),
           "user": np.ones(n, np.uint8)}
    return Workload(name_of(frac, holes, layout, allocated), mode, frac, holes, layout, allocated,
                    dict(m.mem.words), m.bitmap_base, req, info, exp, len(sc.fragmented),
                    len(sc.hole_vpns()))
